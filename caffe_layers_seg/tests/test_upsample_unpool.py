"""Upsample[unpool]: SegNet's own tests (forward square, setup, from Pooling, gradient), its output-size
rules (upsample_h/w, scale, scale_h/w, pad_out, fixed at the first reshape), refusals and CPU/GPU parity."""

import numpy as np
import pytest

from caffe_core import registry
from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.layers import build_layer
from caffe_layers_seg.upsample_unpool import UnpoolUpsampleLayer


def up_text(params: str = "") -> str:
    """An Upsample layer with values and mask bottoms and this upsample_param text."""
    return f"name: 'up' type: 'Upsample' bottom: 'x' bottom: 'mask' top: 'y' upsample_param {{ {params} }}"


def run(run_layer, values, mask, params=""):
    """The layer and its top after setup and forward."""
    return run_layer(up_text(params), [values, mask])


def fill_mask(shape, scale_h, scale_w):
    """SegNet's FillBottomMask: each value goes to the top-left of its scale_h x scale_w block."""
    num, channels, height, width = shape
    rows, cols = np.divmod(np.arange(height * width), width)
    index = (rows * scale_h) * (width * scale_w) + cols * scale_w
    return np.broadcast_to(index.reshape(height, width), shape).astype(np.float32)


def test_two_bottoms_choose_unpool():
    assert isinstance(build_layer(up_text()), UnpoolUpsampleLayer)
    assert registry.layer_class_for(build_layer(up_text()).layer_param) is UnpoolUpsampleLayer


def test_forward_square(run_layer, blob_of):
    """SegNet's TestForwardSquare."""
    values = blob_of(np.broadcast_to(np.array([[1, 2], [9, 4]], np.float32), (4, 3, 2, 2)))
    mask = blob_of(np.broadcast_to(np.array([[2, 5], [12, 14]], np.float32), (4, 3, 2, 2)))
    _, top = run(run_layer, values, mask, "scale: 2")
    want = [[0, 0, 1, 0], [0, 2, 0, 0], [0, 0, 0, 0], [9, 0, 4, 0]]
    assert top.shape == (4, 3, 4, 4)
    np.testing.assert_array_equal(top.cpu_data(), np.broadcast_to(want, top.shape))


@pytest.mark.parametrize(("params", "size"), [
    ("scale_h: 2 scale_w: 3", (4, 6)),  # SegNet's TestSetup
    ("", (4, 4)),  # scale defaults to 2
    ("scale: 3", (6, 6)),
    ("scale: 2 pad_out_h: true", (3, 4)),
    ("scale_h: 2 scale_w: 2 pad_out_w: true", (4, 3)),
    ("scale: 2 upsample_h: 5 upsample_w: 3", (5, 3)),  # upsample_h/w win, as in SegNet's inference nets
    ("upsample_h: 4", (4, 4)),  # upsample_h alone is ignored: the scale rule applies
])
def test_output_size_rules(run_layer, gaussian, params, size):
    _, top = run(run_layer, gaussian((2, 3, 2, 2)), Blob((2, 3, 2, 2)), params)
    assert top.shape == (2, 3, *size)


def test_scale_size_is_fixed_at_the_first_reshape(run_layer, gaussian):
    layer, top = run(run_layer, gaussian((1, 1, 2, 2)), Blob((1, 1, 2, 2)), "scale: 2")
    layer.reshape([gaussian((1, 1, 3, 3)), Blob((1, 1, 3, 3))], [top])
    assert top.shape == (1, 1, 4, 4)


@pytest.mark.requires_layer_types("Pooling")
@pytest.mark.parametrize(("shape", "size"), [((2, 3, 4, 4), (4, 4)), ((2, 3, 5, 4), (5, 4))])
def test_forward_from_pool(make_layer, run_layer, gaussian, shape, size):
    """SegNet's TestForwardFromPool and TestForwardFromPoolOddShape: each max goes back to its place."""
    image = gaussian(shape)
    pool = make_layer("name: 'p' type: 'Pooling' pooling_param { pool: MAX kernel_size: 2 stride: 2 }")
    values, mask = Blob(), Blob()
    pool.setup([image], [values, mask])
    pool.forward([image], [values, mask])
    _, top = run(run_layer, values, mask, f"upsample_h: {size[0]} upsample_w: {size[1]}")
    y, x = top.cpu_data(), image.cpu_data()
    kept = y != 0
    np.testing.assert_array_equal(y[kept], x[kept])
    assert (~kept).sum() == x.size - values.count


@pytest.mark.parametrize(("scale_h", "scale_w"), [(2, 2), (2, 3), (3, 2), (3, 3)])
def test_gradient(make_layer, gaussian, blob_of, scale_h, scale_w):
    """SegNet's TestGradient: checker (1e-4, 1e-2), bottom 0 only."""
    layer = make_layer(up_text(f"scale_h: {scale_h} scale_w: {scale_w}"))
    bottoms = [gaussian((2, 3, 2, 2)), blob_of(fill_mask((2, 3, 2, 2), scale_h, scale_w))]
    GradientChecker(1e-4, 1e-2).check_gradient_exhaustive(layer, bottoms, [Blob()], check_bottom=0)


def test_backward_gathers_even_for_duplicates(run_layer, blob_of):
    """SegNet's backward reads the top diff at each mask position, also for values that were overwritten."""
    values = blob_of(np.array([1, 2, 3, 4], np.float32).reshape(1, 1, 2, 2))
    mask = blob_of(np.array([0, 0, 5, 15], np.float32).reshape(1, 1, 2, 2))
    layer, top = run(run_layer, values, mask)
    assert top.cpu_data().ravel()[[0, 5, 15]].tolist() == [2, 3, 4]
    top.mutable_cpu_diff()[...] = np.arange(16).reshape(top.shape)
    layer.backward([top], [True, False], [values, mask])
    assert values.cpu_diff().ravel().tolist() == [0, 0, 5, 15]


@pytest.mark.parametrize(("params", "message"), [
    ("scale: 2 scale_h: 2 scale_w: 2", "upsample_h and upsample_w, else"),
    ("scale_h: 2", "upsample_h and upsample_w, else"),
    ("scale: 1", "scale must be greater than 1"),
    ("scale_h: 2 scale_w: 1", "scale_w must be greater than 1"),
    ("upsample_h: 1 upsample_w: 4", "upsample_h must be greater than 1"),
    ("scale: 3 pad_out_h: true", "pad_out_h needs scale_h 2"),
    ("scale_h: 2 scale_w: 3 pad_out_w: true", "pad_out_w needs scale_w 2"),
])
def test_refuses_bad_settings(run_layer, gaussian, params, message):
    with pytest.raises(LayerSetupError, match=message):
        run(run_layer, gaussian((1, 1, 2, 2)), Blob((1, 1, 2, 2)), params)


def test_refuses_mismatched_bottoms(run_layer, gaussian):
    with pytest.raises(LayerSetupError, match="mask shape"):
        run(run_layer, gaussian((1, 1, 2, 2)), Blob((1, 1, 2, 3)))
    with pytest.raises(LayerSetupError, match=r"bottom 0 must have 4 axes, got shape \[1, 2, 2\]"):
        run(run_layer, gaussian((1, 2, 2)), Blob((1, 2, 2)))


@pytest.mark.parametrize("position", [16, -1])
def test_refuses_mask_positions_outside_the_top(run_layer, gaussian, blob_of, position):
    mask = blob_of(np.array([0, 1, 2, position], np.float32).reshape(1, 1, 2, 2))
    with pytest.raises(LayerSetupError, match=f"upsample top index {position} out of range"):
        run(run_layer, gaussian((1, 1, 2, 2)), mask)


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu, gaussian):
    mask = fill_mask((2, 3, 2, 2), 2, 3)
    gpu_matches_cpu(up_text("scale_h: 2 scale_w: 3"), [gaussian((2, 3, 2, 2)).cpu_data(), mask],
                    propagate_down=[True, False])
