"""Caffe's random streams, draw for draw, against cases computed by BVLC Caffe (tests/golden/rng).

The same seed gives Caffe's filler draws (every filler type, in net order, weight before bias), Dropout
masks over three forwards, a Data layer's crops and mirrors over three batches (the transformer's stream
seeded from the main stream when the layer is set up), and LeNet's random init, first losses and test
accuracy under a solver's random_seed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import caffe

GOLDEN = Path(__file__).resolve().parent / "golden" / "rng"
REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.requires_layer_types("Convolution", "Deconvolution", "InnerProduct", "PReLU",
                                              "Dropout", "Data", "SoftmaxWithLoss", "Accuracy")


@pytest.fixture
def case(request, tmp_path, monkeypatch):
    """A copy of the named case, as the working directory, and its case.json."""
    work = tmp_path / request.param
    shutil.copytree(GOLDEN / request.param, work)
    monkeypatch.chdir(work)
    return json.loads((work / "case.json").read_text())


@pytest.mark.parametrize("case", ["fillers_seed1701"], indirect=True)
def test_every_filler_draws_caffes_numbers(case):
    stored = np.load("blobs.npz")
    caffe.set_random_seed(case["seed"])
    net = caffe.Net("net.prototxt", caffe.TEST)
    for key in stored.files:
        _, layer, index = key.split("/")
        np.testing.assert_allclose(net.params[layer][int(index)].data, stored[key], rtol=1e-5, atol=1e-7,
                                   err_msg=key)


@pytest.mark.parametrize("case", ["dropout_seed5", "transform_seed1701_crop24"], indirect=True)
def test_dropout_masks_and_data_crops_and_mirrors_are_caffes(case):
    stored = np.load("blobs.npz")
    caffe.set_random_seed(case["seed"])
    net = caffe.Net("net.prototxt", caffe.TRAIN)
    for forward in range(case["forwards"]):
        if "input/x" in stored.files:
            net.blobs["x"].data[...] = stored["input/x"]
        net.forward()
        for key in stored.files:
            if key.startswith("top/") and key.endswith(f"/{forward}"):
                np.testing.assert_allclose(net.blobs[key.split("/")[1]].data, stored[key], rtol=1e-6,
                                           atol=1e-7, err_msg=key)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["lenet_scratch_seed1701"], indirect=True)
def test_lenet_from_a_random_init_follows_caffes_run(case):
    from caffe_layers_data.tools.convert_mnist_data import convert

    data = REPO / "examples" / "mnist" / "data"
    convert(str(data / "train-images-idx3-ubyte.gz"), str(data / "train-labels-idx1-ubyte.gz"),
            "mnist_train_lmdb", "lmdb")
    convert(str(data / "t10k-images-idx3-ubyte.gz"), str(data / "t10k-labels-idx1-ubyte.gz"),
            "mnist_test_lmdb", "lmdb")
    trajectory = np.load("trajectory.npz")
    solver = caffe.get_solver("solver.prototxt")
    for key in trajectory.files:
        if key.startswith("params/iter_0/"):
            _, _, layer, index = key.split("/")
            np.testing.assert_allclose(solver.net.params[layer][int(index)].data, trajectory[key], rtol=1e-5,
                                       atol=1e-7, err_msg=key)
    losses = []
    for _ in range(case["iterations"]):
        solver.step(1)
        losses.append(float(solver.net.blobs["loss"].data))
    # Rounding that depends on the CPU's BLAS kernel grows about 1e5-fold in 100 iterations: the first 10
    # losses are compared tightly, the next 10 more loosely, the rest through the test accuracy.
    np.testing.assert_allclose(losses[:10], trajectory["loss"][:10], rtol=1e-4)
    np.testing.assert_allclose(losses[10:20], trajectory["loss"][10:20], rtol=1e-3)
    accuracy = np.mean([solver.test_nets[0].forward()["accuracy"] for _ in range(10)])
    assert accuracy == pytest.approx(case["test_accuracy_after"], abs=0.01)


def test_the_main_job_with_a_seed_starts_from_caffes_random_init(mnist_workdir, tmp_path, monkeypatch):
    from caffe_core.solvers.factory import create_solver

    monkeypatch.chdir(mnist_workdir.root)
    solver = create_solver(mnist_workdir.job.seeded_solver(1701, tmp_path))
    trajectory = np.load(GOLDEN / "lenet_scratch_seed1701" / "trajectory.npz")
    for key in trajectory.files:
        if key.startswith("params/iter_0/"):
            _, _, layer, index = key.split("/")
            np.testing.assert_allclose(solver.net.layer_by_name(layer).blobs[int(index)].cpu_data(),
                                       trajectory[key], rtol=1e-5, atol=1e-7, err_msg=key)
