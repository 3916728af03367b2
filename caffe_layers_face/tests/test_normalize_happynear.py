"""Normalize[happynear]: L2 and L1 forward by hand (the fork's epsilon per mode, its 4-axis top), the norm
top, bp_norm, fix_gradient (GPU code only), gradient checks, and which Normalize a net gets when
caffe-layers-ssd is installed too."""

from importlib import metadata

import numpy as np
import pytest

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.testing import GradientChecker

L2 = 'name: "n" type: "Normalize" bottom: "x" top: "y" normalize_param { normalize_type: "L2" }'
L1 = 'name: "n" type: "Normalize" bottom: "x" top: "y" normalize_param { normalize_type: "L1" }'
X = np.array([[3.0, 4.0, 0.0], [1.0, -2.0, 2.0]], dtype=np.float32)


def run(make_layer, blob_of, text, x, tops=1):
    layer = make_layer(text)
    bottom, top = [blob_of(x)], [Blob() for _ in range(tops)]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    return layer, bottom, top


def test_l2_by_hand_with_the_forks_epsilon(make_layer, blob_of):
    # ||(3, 4, 0)|| = sqrt(25 + eps), ||(1, -2, 2)|| = sqrt(9 + eps); eps 1e-6 (CPU code), 1e-12 (GPU code).
    _, _, top = run(make_layer, blob_of, L2, X, tops=2)
    eps = 1e-12 if runtime.mode() == runtime.GPU_MODE else 1e-6
    norms = np.sqrt(np.array([25.0, 9.0]) + eps)
    assert top[0].shape == (2, 3, 1, 1) and top[1].shape == (2, 1, 1, 1)
    np.testing.assert_allclose(top[1].cpu_data().ravel(), norms, rtol=1e-7)
    np.testing.assert_allclose(top[0].cpu_data().reshape(2, 3), X / norms[:, None], rtol=1e-6)


def test_l1_by_hand(make_layer, blob_of):
    # sum |x| + 1e-6 in both of the fork's codes: 7 and 5.
    _, _, top = run(make_layer, blob_of, L1, X, tops=2)
    np.testing.assert_allclose(top[1].cpu_data().ravel(), [7 + 1e-6, 5 + 1e-6], rtol=1e-7)
    np.testing.assert_allclose(top[0].cpu_data().reshape(2, 3), X / np.array([[7.0], [5.0]]), rtol=1e-6)


def test_normalises_across_channels_at_each_position(make_layer, blob_of, gaussian):
    x = gaussian((2, 4, 3, 5)).cpu_data()
    _, _, top = run(make_layer, blob_of, L2, x)
    expected = x / np.sqrt((x.astype(np.float64) ** 2).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(top[0].cpu_data(), expected, rtol=1e-5)


def test_default_type_is_l2(make_layer, blob_of):
    _, _, top = run(make_layer, blob_of, 'name: "n" type: "Normalize" normalize_param { bp_norm: false }', X)
    np.testing.assert_allclose(top[0].cpu_data().reshape(2, 3)[0], [0.6, 0.8, 0.0], rtol=1e-6)


def test_in_place_as_in_the_fork(make_layer, blob_of):
    layer = make_layer(L2)
    blob = blob_of(X)
    layer.setup([blob], [blob])
    layer.forward([blob], [blob])
    np.testing.assert_allclose(blob.cpu_data().reshape(2, 3)[0], [0.6, 0.8, 0.0], rtol=1e-6)
    blob.mutable_cpu_diff()[...] = np.array([1.0, 0, 0, 0, 0, 0], np.float32).reshape(blob.shape)
    layer.backward([blob], [True], [blob])
    # (dy - y <y, dy>) / ||x||: ((1, 0, 0) - 0.6 (0.6, 0.8, 0)) / 5.
    np.testing.assert_allclose(blob.cpu_diff().reshape(2, 3)[0], [0.64 / 5, -0.48 / 5, 0.0], atol=1e-7)


def test_refuses_an_unknown_type(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="normalize_type is 'L3'"):
        run(make_layer, blob_of, 'name: "n" type: "Normalize" normalize_param { normalize_type: "L3" }', X)


@pytest.mark.parametrize("text", [L2, L1])
def test_gradient(make_layer, gaussian, text):
    bottom = [gaussian((2, 4, 2, 3))]
    GradientChecker(1e-3, 1e-2, 1701).check_gradient_exhaustive(make_layer(text), bottom, [Blob()])


@pytest.mark.parametrize("kind", ["L2", "L1"])
def test_gradient_through_the_norm_top_with_bp_norm(make_layer, gaussian, kind):
    text = f'name: "n" type: "Normalize" normalize_param {{ normalize_type: "{kind}" bp_norm: true }}'
    bottom = [gaussian((2, 3, 2, 2))]
    GradientChecker(1e-3, 1e-2, 1701).check_gradient_exhaustive(make_layer(text), bottom, [Blob(), Blob()])


def test_without_bp_norm_the_norm_top_gets_no_gradient(make_layer, blob_of):
    layer, bottom, top = run(make_layer, blob_of, L2, X, tops=2)
    top[0].mutable_cpu_diff()[...] = 0
    top[1].mutable_cpu_diff()[...] = 1
    layer.backward(top, [True], bottom)
    assert not bottom[0].cpu_diff().any()


def backward_one(make_layer, blob_of, text):
    layer, bottom, top = run(make_layer, blob_of, text, X[:1])
    top[0].mutable_cpu_diff()[...] = np.array([1.0, 0.0, 0.0], np.float32).reshape(top[0].shape)
    layer.backward(top, [True], bottom)
    return bottom[0].cpu_diff().ravel()


FIX = 'name: "n" type: "Normalize" normalize_param { fix_gradient: true }'


@pytest.mark.cpu_mode
def test_fix_gradient_is_ignored_by_the_forks_cpu_code(make_layer, blob_of):
    np.testing.assert_allclose(backward_one(make_layer, blob_of, FIX), [0.64 / 5, -0.48 / 5, 0.0], atol=1e-7)


@pytest.mark.gpu
def test_fix_gradient_skips_the_division_in_the_forks_gpu_code(make_layer, blob_of, gpu_standin):
    np.testing.assert_allclose(backward_one(make_layer, blob_of, FIX), [0.64, -0.48, 0.0], atol=1e-6)
    np.testing.assert_allclose(backward_one(make_layer, blob_of, L2), [0.64 / 5, -0.48 / 5, 0.0], atol=1e-7)


def ssd_installed() -> bool:
    try:
        metadata.distribution("caffe-layers-ssd")
    except metadata.PackageNotFoundError:
        return False
    return True


needs_ssd = pytest.mark.skipif(not ssd_installed(), reason="caffe-layers-ssd is not installed")


def test_normalize_param_builds_happynears(make_layer):
    assert type(make_layer(L2)).__name__ == "HappynearNormalizeLayer"


@needs_ssd
def test_norm_param_still_builds_ssds_normalize(make_layer):
    layer = make_layer('name: "n" type: "Normalize" norm_param { across_spatial: false }')
    assert type(layer).__module__ == "caffe_layers_ssd.normalize"


NET = """
layer {{ name: "data" type: "Input" top: "data" input_param {{ shape {{ dim: 2 dim: 3 dim: 2 dim: 2 }} }} }}
{extra}
layer {{ name: "norm" type: "Normalize" bottom: "data" top: "norm" }}
"""


@needs_ssd
def test_a_blockless_normalize_follows_the_net(tmp_path):
    # AM-Softmax's nets write `type: "Normalize"` with no block: in a net holding a happynear-only layer
    # (Flip here) it is happynear's; alone, SSD's (whose prototxts always carry norm_param) keeps it.
    flip = 'layer { name: "flip" type: "Flip" bottom: "data" top: "flipped" }'
    cases = ((flip, "caffe_layers_face.normalize_happynear"), ("", "caffe_layers_ssd.normalize"))
    for extra, module in cases:
        path = tmp_path / "net.prototxt"
        path.write_text(NET.format(extra=extra))
        net = Net(str(path), phase=caffe_pb2.TEST)
        assert type(net.layers[net.layer_names.index("norm")]).__module__ == module


def test_accepts_by_block():
    from caffe_layers_face.normalize_happynear import HappynearNormalizeLayer

    def param(text):
        return parse_text(text, caffe_pb2.LayerParameter())

    assert HappynearNormalizeLayer.accepts_in_net(param(L2), ()) is True
    ssd = param('name: "n" type: "Normalize" norm_param { eps: 1e-10 }') if ssd_installed() else None
    if ssd is not None:
        assert HappynearNormalizeLayer.accepts_in_net(ssd, [param(L2)]) is False
    assert HappynearNormalizeLayer.accepts_in_net(param('name: "n" type: "Normalize"'), ()) is False
