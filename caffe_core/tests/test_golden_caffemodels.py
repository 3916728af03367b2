"""Every .caffemodel written by BVLC Caffe loads, with every param equal to the values Caffe stored."""

import pathlib

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.net_files import read_net_binary

GOLDEN = pathlib.Path(__file__).parent / "golden"
LAYER_MODELS = sorted((GOLDEN / "caffemodels").glob("*.npz"))
SOLVER_CASES = ["adadelta", "adagrad", "adam", "nesterov", "rmsprop", "sgd_lr_exp", "sgd_lr_fixed",
                "sgd_lr_inv", "sgd_lr_multistep", "sgd_lr_poly", "sgd_lr_sigmoid", "sgd_lr_step",
                "sgd_momentum"]


def loaded_params(path: pathlib.Path) -> dict[str, np.ndarray]:
    param = read_net_binary(path)
    out = {}
    for layer in param.layer:
        for i, stored in enumerate(layer.blobs):
            blob = Blob()
            blob.from_proto(stored)
            out[f"{layer.name}/{i}"] = blob.data.copy()
    return out


@pytest.mark.parametrize("expected", LAYER_MODELS, ids=lambda p: p.stem)
def test_layer_case_caffemodel(expected):
    got = loaded_params(expected.with_suffix(".caffemodel"))
    want = np.load(expected)
    assert sorted(got) == sorted(k.removeprefix("param/") for k in want.files)
    for key in want.files:
        np.testing.assert_array_equal(got[key.removeprefix("param/")].reshape(want[key].shape), want[key])


@pytest.mark.parametrize("case", SOLVER_CASES)
@pytest.mark.parametrize("model, iteration", [("init.caffemodel", 0), ("snap_iter_10.caffemodel", 10)])
def test_solver_case_caffemodel(case, model, iteration):
    folder = GOLDEN / "solvers" / case
    got = loaded_params(folder / model)
    trajectory = np.load(folder / "trajectory.npz")
    prefix = f"params/iter_{iteration}/"
    keys = [k for k in trajectory.files if k.startswith(prefix)]
    assert sorted(got) == sorted(k.removeprefix(prefix) for k in keys)
    for key in keys:
        np.testing.assert_array_equal(got[key.removeprefix(prefix)], trajectory[key])


def test_mnist_initial_weights_have_lenet_shapes():
    got = loaded_params(GOLDEN / "caffemodels" / "mnist_lenet_init.caffemodel")
    assert {k: v.shape for k, v in got.items()} == {
        "conv1/0": (20, 1, 5, 5), "conv1/1": (20,), "conv2/0": (50, 20, 5, 5), "conv2/1": (50,),
        "ip1/0": (500, 800), "ip1/1": (500,), "ip2/0": (10, 500), "ip2/1": (10,),
    }
    assert np.all(got["conv1/1"] == 0) and got["ip1/0"].std() > 0
