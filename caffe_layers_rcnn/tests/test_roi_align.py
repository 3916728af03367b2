"""ROIAlign against zhaoweicai/cascade-rcnn's golden cases and loop ports of its forward/backward kernels."""

import math

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.schema_extensions import get_param_block
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case
from caffe_core.testing.wire import wire_fields

F32 = np.float32


def layer_text(pooled_h=3, pooled_w=3, spatial_scale=0.5, pad_ratio=None):
    pad = f" pad_ratio: {pad_ratio}" if pad_ratio is not None else ""
    return (f'name: "align" type: "ROIAlign" bottom: "x" bottom: "rois" top: "y" roi_pooling_param '
            f"{{ pooled_h: {pooled_h} pooled_w: {pooled_w} spatial_scale: {spatial_scale}{pad} }}")


def sample(roi, ph, pw, pooled_h, pooled_w, scale, pad_ratio, height, width):
    """One grid point of the fork's kernel, scalar by scalar in float32: None (0) or (taps, weights)."""
    x1, y1, x2, y2 = (F32(v) for v in roi[1:5])
    pad_w = (x2 - x1 + F32(1)) * F32(pad_ratio)
    pad_h = (y2 - y1 + F32(1)) * F32(pad_ratio)
    start_w = (x1 - pad_w) * F32(scale) - F32(0.5)
    start_h = (y1 - pad_h) * F32(scale) - F32(0.5)
    end_w = (x2 + pad_w) * F32(scale) - F32(0.5)
    end_h = (y2 + pad_h) * F32(scale) - F32(0.5)
    roi_h, roi_w = end_h - start_h, end_w - start_w
    if roi_h <= 0 or roi_w <= 0:
        return None
    hf = start_h + F32(ph) * (roi_h / F32(pooled_h))
    wf = start_w + F32(pw) * (roi_w / F32(pooled_w))
    if hf < -0.5 or hf > height - 0.5 or wf < -0.5 or wf > width - 0.5:
        return None
    hfloor, wfloor = math.floor(hf), math.floor(wf)
    hceil, wceil = hfloor + 1, wfloor + 1
    hf = min(max(hf, F32(0)), F32(height - 1))
    wf = min(max(wf, F32(0)), F32(width - 1))
    hfloor, wfloor = min(max(hfloor, 0), height - 1), min(max(wfloor, 0), width - 1)
    hceil, wceil = min(max(hceil, 0), height - 1), min(max(wceil, 0), width - 1)
    lh, lw = hf - F32(hfloor), wf - F32(wfloor)
    hh, hw = F32(1) - lh, F32(1) - lw
    taps = [(hfloor, wfloor), (hfloor, wceil), (hceil, wfloor), (hceil, wceil)]
    return taps, [hw * hh, lw * hh, hw * lh, lw * lh]


def reference_forward(x, rois, pooled_h, pooled_w, scale, pad_ratio):
    """The fork's ROIAlignForward, element by element."""
    _, channels, height, width = x.shape
    top = np.zeros((len(rois), channels, pooled_h + 1, pooled_w + 1), dtype=np.float32)
    for n, roi in enumerate(rois):
        for c in range(channels):
            for ph in range(pooled_h + 1):
                for pw in range(pooled_w + 1):
                    point = sample(roi, ph, pw, pooled_h, pooled_w, scale, pad_ratio, height, width)
                    if point is None:
                        continue
                    plane = x[int(roi[0]), c]
                    value = F32(0)
                    for (h, w), weight in zip(*point, strict=True):
                        value = value + weight * plane[h, w]
                    top[n, c, ph, pw] = value
    return top


def reference_backward(x_shape, rois, top_diff, pooled_h, pooled_w, scale, pad_ratio):
    """The fork's ROIAlignBackward kernel: each grid point adds weight x top diff to its four taps."""
    _, channels, height, width = x_shape
    diff = np.zeros(x_shape, dtype=np.float32)
    for n, roi in enumerate(rois):
        for c in range(channels):
            for ph in range(pooled_h + 1):
                for pw in range(pooled_w + 1):
                    point = sample(roi, ph, pw, pooled_h, pooled_w, scale, pad_ratio, height, width)
                    if point is None:
                        continue
                    for (h, w), weight in zip(*point, strict=True):
                        diff[int(roi[0]), c, h, w] += weight * top_diff[n, c, ph, pw]
    return diff


def run(make_layer, blob_of, text, x, rois):
    layer = make_layer(text)
    bottom, top = [blob_of(x), blob_of(rois)], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    return layer, bottom, top


# Inside, covering the map, fractional, partly outside, beyond the right/bottom edge, inverted, one pixel.
ROIS = [[0, 2, 2, 9, 7], [1, -3, -2, 20, 16], [0, 1.3, 4.6, 7.2, 9.9], [1, -8, -6, 4, 3], [0, 10, 6, 24, 19],
        [1, 9, 9, 3, 3], [0, 5, 5, 5, 5]]


@pytest.mark.parametrize("case", ["cascade_roialign", "cascade_roialign_pad_ratio"])
def test_golden(golden_case, case):
    # The fork's CPU forward: features (2, 3, 7, 9), 6 rois, pooled 3 x 3 (a 4 x 4 grid), pad_ratio 0 / 0.25.
    assert check_layer_case(golden_case(case)) == []


@pytest.mark.parametrize(("pooled", "scale", "pad_ratio"), [((3, 3), 0.5, None), ((2, 4), 0.5, 0.25),
                                                            ((1, 1), 1.0, None), ((4, 2), 0.25, -0.2)])
def test_forward_and_backward_match_the_forks_kernels(make_layer, blob_of, pooled, scale, pad_ratio):
    x = np.random.default_rng(3).normal(0, 5, (2, 3, 8, 11)).astype(np.float32)
    rois = np.array(ROIS, dtype=np.float32)
    layer, bottom, top = run(make_layer, blob_of, layer_text(*pooled, scale, pad_ratio), x, rois)
    ratio = pad_ratio or 0
    assert top[0].shape == (len(rois), 3, pooled[0] + 1, pooled[1] + 1)
    np.testing.assert_allclose(top[0].cpu_data(), reference_forward(x, rois, *pooled, scale, ratio),
                               rtol=1e-6, atol=1e-6)
    top_diff = np.random.default_rng(4).normal(size=top[0].shape).astype(np.float32)
    top[0].mutable_cpu_diff()[...] = top_diff
    bottom[0].mutable_cpu_diff()[...] = 7  # overwritten, not accumulated
    layer.backward(top, [True, False], bottom)
    np.testing.assert_allclose(bottom[0].cpu_diff(),
                               reference_backward(x.shape, rois, top_diff, *pooled, scale, ratio),
                               rtol=1e-5, atol=1e-5)


def test_hand_example(make_layer, blob_of):
    # A 4 x 4 plane of v = 4h + w (linear, so bilinear samples are exact); ROI (0.5, 0.5)-(2.5, 2.5) at
    # scale 1: start 0, end 2, one bin: the corners (0, 0), (0, 2), (2, 0), (2, 2).
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    _, _, top = run(make_layer, blob_of, layer_text(1, 1, 1.0), x, [[0, 0.5, 0.5, 2.5, 2.5]])
    np.testing.assert_array_equal(top[0].cpu_data()[0, 0], [[0, 2], [8, 10]])
    # Two bins: the grid adds the midpoints, (1, 1) = 5 in the middle.
    _, _, top = run(make_layer, blob_of, layer_text(2, 2, 1.0), x, [[0, 0.5, 0.5, 2.5, 2.5]])
    np.testing.assert_array_equal(top[0].cpu_data()[0, 0], [[0, 1, 2], [4, 5, 6], [8, 9, 10]])
    # An inverted ROI gives zeros; columns 3 (the last) and 9 (beyond 3.5, so 0) of rows 0 and 2.
    _, _, top = run(make_layer, blob_of, layer_text(1, 1, 1.0), x, [[0, 3, 3, 1, 1], [0, 3.5, 0.5, 9.5, 2.5]])
    np.testing.assert_array_equal(top[0].cpu_data()[0, 0], [[0, 0], [0, 0]])
    np.testing.assert_array_equal(top[0].cpu_data()[1, 0], [[3, 0], [11, 0]])


def test_gradient_exhaustive(make_layer, gaussian, blob_of):
    # Linear in the features: Caffe's usual GradientChecker(1e-2, 1e-2) settings hold.
    layer = make_layer(layer_text(2, 2, 0.5, 0.1))
    rois = blob_of([[0, 1, 1, 7, 5], [1, -2, 0, 5, 9], [0, 3.3, 2.2, 6.1, 8.7], [1, 6, 6, 2, 2]])
    bottom = [gaussian((2, 2, 5, 4), std=1), rois]
    GradientChecker(1e-2, 1e-2).check_gradient_exhaustive(layer, bottom, [Blob()], check_bottom=0)


def test_no_rois(make_layer, blob_of):
    layer = make_layer(layer_text(2, 2))
    bottom, top = [blob_of(np.ones((1, 2, 3, 3))), Blob((0, 5))], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    assert top[0].shape == (0, 2, 3, 3)
    layer.backward(top, [True, False], bottom)
    assert not bottom[0].cpu_diff().any()


def test_bad_batch_index_is_refused_at_forward(make_layer, blob_of):
    layer = make_layer(layer_text(2, 2))
    bottom, top = [blob_of(np.ones((1, 1, 3, 3))), blob_of([[1, 0, 0, 2, 2]])], [Blob()]
    layer.setup(bottom, top)
    with pytest.raises(ValueError, match=r"align.*ROIAlign.*batch index"):
        layer.forward(bottom, top)


@pytest.mark.parametrize(("params", "field"), [("pooled_w: 2", "pooled_h"), ("pooled_h: 2", "pooled_w"),
                                               ("", "pooled_h")])
def test_refuses_missing_pooled_sizes(make_layer, blob_of, params, field):
    text = f'name: "align" type: "ROIAlign" roi_pooling_param {{ {params} }}'
    with pytest.raises(LayerSetupError, match=rf"align.*ROIAlign.*roi_pooling_param.{field}"):
        make_layer(text).setup([blob_of(np.ones((1, 1, 3, 3))), blob_of([[0, 0, 0, 1, 1]])], [Blob()])


@pytest.mark.parametrize(("features", "rois", "words"), [((1, 3, 3), (1, 5), "4 axes"),
                                                        ((1, 1, 3, 3), (2, 4), "5 values")])
def test_refuses_bad_bottoms(make_layer, blob_of, features, rois, words):
    with pytest.raises(LayerSetupError, match=words):
        make_layer(layer_text(2, 2)).setup([blob_of(np.ones(features)), blob_of(np.zeros(rois))], [Blob()])


def test_reads_roi_pooling_param_with_pad_ratio_at_field_4():
    param = parse_text(layer_text(7, 7, 0.25, 0.1), caffe_pb2.LayerParameter())
    block = get_param_block(param, "roi_pooling_param")
    assert (block.pooled_h, block.spatial_scale, block.pad_ratio) == (7, 0.25, pytest.approx(0.1))
    assert wire_fields(wire_fields(param.SerializeToString())[8266711][0]).keys() == {1, 2, 3, 4}
