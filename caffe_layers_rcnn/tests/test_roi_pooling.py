"""ROIPooling against loop ports of caffe-fast-rcnn's CPU forward and GPU backward kernel, and with
zhaoweicai/cascade-rcnn's pad_ratio against that fork's golden case and a gradient check."""

import math

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.schema_extensions import get_param_block
from caffe_core.testing import GradientChecker, to_host
from caffe_core.testing.golden import check_layer_case
from caffe_core.testing.wire import field_bytes, wire_fields

LOWEST = np.float32(np.finfo(np.float32).min)
# The rois of caffe-fast-rcnn's test_roi_pooling_layer.cpp (features 4 x 3 x 12 x 8).
FORK_ROIS = [[0, 1, 1, 6, 6], [2, 6, 2, 7, 11], [1, 3, 1, 5, 10], [0, 3, 3, 3, 3]]


def layer_text(pooled_h=6, pooled_w=6, spatial_scale=None, pad_ratio=None):
    scale = f" spatial_scale: {spatial_scale}" if spatial_scale is not None else ""
    pad = f" pad_ratio: {pad_ratio}" if pad_ratio is not None else ""
    return (f'name: "roi" type: "ROIPooling" bottom: "x" bottom: "rois" top: "y" '
            f"roi_pooling_param {{ pooled_h: {pooled_h} pooled_w: {pooled_w}{scale}{pad} }}")


def padded(rois, pad_ratio):
    """cascade-rcnn's roi enlargement, in float32: (x2 - x1 + 1) * pad_ratio off each side (likewise y)."""
    rois = np.asarray(rois, dtype=np.float32).copy()
    ratio = np.float32(pad_ratio)
    pad_w = (rois[:, 3] - rois[:, 1] + np.float32(1)) * ratio
    pad_h = (rois[:, 4] - rois[:, 2] + np.float32(1)) * ratio
    rois[:, 1], rois[:, 3] = rois[:, 1] - pad_w, rois[:, 3] + pad_w
    rois[:, 2], rois[:, 4] = rois[:, 2] - pad_h, rois[:, 4] + pad_h
    return rois


def c_round(value):
    return int(math.copysign(math.floor(abs(value) + 0.5), value))


def roi_corners(roi, scale):
    return [c_round(float(np.float32(v) * np.float32(scale))) for v in roi[1:5]]


def reference_forward(x, rois, pooled_h, pooled_w, scale):
    """The fork's Forward_cpu, loop for loop."""
    _, channels, height, width = x.shape
    top = np.full((len(rois), channels, pooled_h, pooled_w), LOWEST, dtype=np.float32)
    argmax = np.full(top.shape, -1)
    for n, roi in enumerate(rois):
        batch = int(np.float32(roi[0]))
        start_w, start_h, end_w, end_h = roi_corners(roi, scale)
        bin_h = np.float32(max(end_h - start_h + 1, 1)) / np.float32(pooled_h)
        bin_w = np.float32(max(end_w - start_w + 1, 1)) / np.float32(pooled_w)
        for c in range(channels):
            for ph in range(pooled_h):
                for pw in range(pooled_w):
                    hstart = min(max(int(math.floor(np.float32(ph) * bin_h)) + start_h, 0), height)
                    hend = min(max(int(math.ceil(np.float32(ph + 1) * bin_h)) + start_h, 0), height)
                    wstart = min(max(int(math.floor(np.float32(pw) * bin_w)) + start_w, 0), width)
                    wend = min(max(int(math.ceil(np.float32(pw + 1) * bin_w)) + start_w, 0), width)
                    if hend <= hstart or wend <= wstart:
                        top[n, c, ph, pw] = 0
                    for h in range(hstart, hend):
                        for w in range(wstart, wend):
                            if x[batch, c, h, w] > top[n, c, ph, pw]:
                                top[n, c, ph, pw] = x[batch, c, h, w]
                                argmax[n, c, ph, pw] = h * width + w
    return top, argmax


def reference_backward(x_shape, rois, argmax, top_diff, scale):
    """The fork's ROIPoolBackward kernel: each bottom element gathers over ROIs and feasible bins."""
    num, channels, height, width = x_shape
    pooled_h, pooled_w = top_diff.shape[2:]
    diff = np.zeros(x_shape, dtype=np.float32)
    for n in range(num):
        for c in range(channels):
            for h in range(height):
                for w in range(width):
                    gradient = np.float32(0)
                    for r, roi in enumerate(rois):
                        if int(np.float32(roi[0])) != n:
                            continue
                        start_w, start_h, end_w, end_h = roi_corners(roi, scale)
                        if not (start_w <= w <= end_w and start_h <= h <= end_h):
                            continue
                        bin_h = np.float32(max(end_h - start_h + 1, 1)) / np.float32(pooled_h)
                        bin_w = np.float32(max(end_w - start_w + 1, 1)) / np.float32(pooled_w)
                        ph_lo = min(max(math.floor(np.float32(h - start_h) / bin_h), 0), pooled_h)
                        ph_hi = min(max(math.ceil(np.float32(h - start_h + 1) / bin_h), 0), pooled_h)
                        pw_lo = min(max(math.floor(np.float32(w - start_w) / bin_w), 0), pooled_w)
                        pw_hi = min(max(math.ceil(np.float32(w - start_w + 1) / bin_w), 0), pooled_w)
                        for ph in range(ph_lo, ph_hi):
                            for pw in range(pw_lo, pw_hi):
                                if argmax[r, c, ph, pw] == h * width + w:
                                    gradient += top_diff[r, c, ph, pw]
                    diff[n, c, h, w] = gradient
    return diff


def run(make_layer, blob_of, text, x, rois):
    layer = make_layer(text)
    bottom, top = [blob_of(x), blob_of(rois)], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    return layer, bottom, top


@pytest.mark.parametrize(("pooled", "scale"), [((6, 6), None), ((3, 2), None), ((2, 5), 0.5), ((4, 4), 0.37)])
def test_forward_and_backward_match_the_fork(make_layer, blob_of, pooled, scale):
    x = np.random.default_rng(3).normal(0, 10, (4, 3, 12, 8)).astype(np.float32)
    # Beyond the fork's rois: fractional corners past the map, a malformed ROI and one outside the map.
    extra = [[3, 2.5, 1.4, 30, 18], [1, 7, 9, 2, 3], [2, -5, -6, -1, -2]]
    rois = np.array(FORK_ROIS + extra, dtype=np.float32)
    scale_value = 1.0 if scale is None else scale
    layer, bottom, top = run(make_layer, blob_of, layer_text(*pooled, scale), x, rois)
    want, argmax = reference_forward(x, rois, *pooled, scale_value)
    assert top[0].shape == (len(rois), 3, *pooled)
    np.testing.assert_array_equal(top[0].cpu_data(), want)
    np.testing.assert_array_equal(to_host(layer.argmax), argmax)
    top_diff = np.random.default_rng(4).normal(size=top[0].shape).astype(np.float32)
    top[0].mutable_cpu_diff()[...] = top_diff
    layer.backward(top, [True, False], bottom)
    np.testing.assert_allclose(bottom[0].cpu_diff(), reference_backward(x.shape, rois, argmax, top_diff,
                                                                         scale_value), rtol=1e-6, atol=1e-6)


def test_hand_example(make_layer, blob_of):
    # One 4 x 4 plane, ROI (0, 0)-(3, 3) into 2 x 2 bins of 2 x 2; a second ROI outside the map gives 0s.
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    layer, bottom, top = run(make_layer, blob_of, layer_text(2, 2), x, [[0, 0, 0, 3, 3], [0, 10, 10, 12, 12]])
    np.testing.assert_array_equal(top[0].cpu_data()[0, 0], [[5, 7], [13, 15]])
    np.testing.assert_array_equal(top[0].cpu_data()[1, 0], [[0, 0], [0, 0]])
    top[0].mutable_cpu_diff()[...] = 1
    layer.backward(top, [True, False], bottom)
    expected = np.zeros((4, 4), dtype=np.float32)
    expected[[1, 1, 3, 3], [1, 3, 1, 3]] = 1
    np.testing.assert_array_equal(bottom[0].cpu_diff()[0, 0], expected)


def test_ties_choose_the_first_in_scan_order_and_overlaps_accumulate(make_layer, blob_of):
    x = np.zeros((1, 1, 2, 2), dtype=np.float32)
    layer, bottom, top = run(make_layer, blob_of, layer_text(1, 1), x, [[0, 0, 0, 1, 1], [0, 0, 0, 1, 1]])
    np.testing.assert_array_equal(to_host(layer.argmax).ravel(), [0, 0])
    top[0].mutable_cpu_diff()[...] = [[[[0.25]]], [[[0.5]]]]
    layer.backward(top, [True, False], bottom)
    np.testing.assert_array_equal(bottom[0].cpu_diff()[0, 0], [[0.75, 0], [0, 0]])


def test_all_lowest_values_keep_minus_flt_max_and_no_argmax(make_layer, blob_of):
    x = np.full((1, 1, 2, 2), -np.inf, dtype=np.float32)
    layer, _, top = run(make_layer, blob_of, layer_text(1, 1), x, [[0, 0, 0, 1, 1]])
    assert top[0].cpu_data().ravel()[0] == LOWEST
    assert to_host(layer.argmax).ravel()[0] == -1


def test_no_rois(make_layer, blob_of):
    layer = make_layer(layer_text(2, 2))
    bottom, top = [blob_of(np.ones((1, 2, 3, 3))), Blob((0, 5))], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    assert top[0].shape == (0, 2, 2, 2)
    layer.backward(top, [True, False], bottom)
    assert not bottom[0].cpu_diff().any()


def test_bad_batch_index_is_refused_at_forward(make_layer, blob_of):
    layer = make_layer(layer_text(2, 2))
    bottom, top = [blob_of(np.ones((1, 1, 3, 3))), blob_of([[1, 0, 0, 2, 2]])], [Blob()]
    layer.setup(bottom, top)
    with pytest.raises(ValueError, match="batch index"):
        layer.forward(bottom, top)


def test_gradient_exhaustive_with_the_forks_checker(make_layer, gaussian, blob_of):
    # caffe-fast-rcnn's test: GradientChecker(1e-4, 1e-2), std-10 features, bottom 0 (smaller, to be fast).
    layer = make_layer(layer_text(2, 2))
    bottom = [gaussian((2, 2, 5, 4), std=10), blob_of([[0, 1, 1, 3, 3], [1, 0, 2, 2, 4], [0, 3, 3, 3, 3]])]
    GradientChecker(1e-4, 1e-2).check_gradient_exhaustive(layer, bottom, [Blob()], check_bottom=0)


@pytest.mark.parametrize(("text", "field"), [
    ('type: "ROIPooling" roi_pooling_param { pooled_w: 6 }', "pooled_h"),
    ('type: "ROIPooling" roi_pooling_param { pooled_h: 6 }', "pooled_w"),
    ('type: "ROIPooling"', "pooled_h"),
])
def test_refuses_missing_pooled_sizes(make_layer, blob_of, text, field):
    with pytest.raises(LayerSetupError, match=f"roi_pooling_param.{field}"):
        make_layer(text).setup([blob_of(np.ones((1, 1, 3, 3))), blob_of([[0, 0, 0, 1, 1]])], [Blob()])


@pytest.mark.parametrize(("features", "rois", "words"), [
    ((1, 3, 3), (1, 5), "4 axes"),
    ((1, 1, 3, 3), (2, 4), "5 values"),
])
def test_refuses_bad_bottoms(make_layer, blob_of, features, rois, words):
    with pytest.raises(LayerSetupError, match=words):
        make_layer(layer_text(2, 2)).setup([blob_of(np.ones(features)), blob_of(np.zeros(rois))], [Blob()])


def test_rois_of_shape_r_5_1_1_are_accepted(make_layer, blob_of):
    layer, _, top = run(make_layer, blob_of, layer_text(2, 2), np.ones((1, 1, 4, 4)), np.zeros((3, 5, 1, 1)))
    assert top[0].shape == (3, 1, 2, 2)


def test_param_block_text_and_wire_number():
    param = parse_text(layer_text(7, 5, 0.0625), caffe_pb2.LayerParameter())
    block = get_param_block(param, "roi_pooling_param")
    assert (block.pooled_h, block.pooled_w, block.spatial_scale) == (7, 5, 0.0625)
    data = param.SerializeToString()
    fields = wire_fields(data)
    assert wire_fields(fields[8266711][0]).keys() == {1, 2, 3}
    back = caffe_pb2.LayerParameter.FromString(data)
    assert get_param_block(back, "roi_pooling_param").pooled_w == 5


def test_defaults():
    block = get_param_block(caffe_pb2.LayerParameter(), "roi_pooling_param")
    assert (block.pooled_h, block.pooled_w, block.spatial_scale) == (0, 0, 1.0)


def test_fork_number_parses_back():
    # The fork's bytes: LayerParameter field 8266711 holding pooled_h = 3 (field 1, varint).
    param = caffe_pb2.LayerParameter.FromString(field_bytes(8266711, bytes([0x08, 3])))
    assert get_param_block(param, "roi_pooling_param").pooled_h == 3


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    x = np.random.default_rng(5).normal(0, 10, (4, 3, 12, 8))
    rois = np.array(FORK_ROIS + [[3, 2.5, 1.4, 30, 18]], dtype=np.float32)
    gpu_matches_cpu(layer_text(6, 6, 0.5), [x, rois], propagate_down=[True, False])


def test_golden_cascade_pad_ratio(golden_case):
    # zhaoweicai/cascade-rcnn's CPU forward: pad_ratio 0.2, pooled 2 x 3, spatial_scale 0.5.
    assert check_layer_case(golden_case("cascade_roipooling_pad_ratio")) == []


@pytest.mark.parametrize("pad_ratio", [0.2, 0.5, -0.1])
def test_pad_ratio_pools_the_enlarged_roi(make_layer, blob_of, pad_ratio):
    # Forward and backward with pad_ratio are exactly the pad_ratio-0 layer on the enlarged rois
    # (cascade-rcnn's kernels compute the corners as round((x1 - pad_w) * scale) and so on, then proceed as
    # caffe-fast-rcnn).
    x = np.random.default_rng(7).normal(0, 10, (4, 3, 12, 8)).astype(np.float32)
    rois = np.array(FORK_ROIS + [[3, 2.5, 1.4, 30, 18], [1, 7, 9, 2, 3]], dtype=np.float32)
    layer, bottom, top = run(make_layer, blob_of, layer_text(3, 2, 0.5, pad_ratio), x, rois)
    want, argmax = reference_forward(x, padded(rois, pad_ratio), 3, 2, 0.5)
    np.testing.assert_array_equal(top[0].cpu_data(), want)
    np.testing.assert_array_equal(to_host(layer.argmax), argmax)
    top_diff = np.random.default_rng(8).normal(size=top[0].shape).astype(np.float32)
    top[0].mutable_cpu_diff()[...] = top_diff
    layer.backward(top, [True, False], bottom)
    want_diff = reference_backward(x.shape, padded(rois, pad_ratio), argmax, top_diff, 0.5)
    np.testing.assert_allclose(bottom[0].cpu_diff(), want_diff, rtol=1e-6, atol=1e-6)


def test_pad_ratio_hand_example(make_layer, blob_of):
    # ROI (1, 1)-(2, 2) of a 4 x 4 plane, pad_ratio 0.5: 1 pixel a side, so (0, 0)-(3, 3) pools into 1 x 1.
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    _, _, top = run(make_layer, blob_of, layer_text(1, 1, None, 0.5), x, [[0, 1, 1, 2, 2]])
    assert top[0].cpu_data().ravel().tolist() == [15]
    _, _, top = run(make_layer, blob_of, layer_text(1, 1), x, [[0, 1, 1, 2, 2]])
    assert top[0].cpu_data().ravel().tolist() == [10]


def test_gradient_exhaustive_with_pad_ratio(make_layer, gaussian, blob_of):
    layer = make_layer(layer_text(2, 2, 0.5, 0.25))
    bottom = [gaussian((2, 2, 5, 4), std=10), blob_of([[0, 2, 2, 5, 5], [1, 0, 3, 4, 7], [0, 6, 6, 6, 6]])]
    GradientChecker(1e-4, 1e-2).check_gradient_exhaustive(layer, bottom, [Blob()], check_bottom=0)


def test_pad_ratio_is_field_4_of_the_block():
    param = parse_text(layer_text(2, 2, None, 0.25), caffe_pb2.LayerParameter())
    assert get_param_block(param, "roi_pooling_param").pad_ratio == 0.25
    block = wire_fields(param.SerializeToString())[8266711][0]
    assert wire_fields(block).keys() == {1, 2, 4}


@pytest.mark.requires_layer_types("Convolution")
def test_golden_fork_written_weights(golden_case):
    # A .caffemodel saved by cascade-rcnn's pycaffe: roi_pooling_param at 147 (BVLC's swish_param), conv
    # weights.
    assert check_layer_case(golden_case("cascade_fork_weights")) == []


@pytest.mark.requires_layer_types("Convolution")
def test_a_cascade_files_pooling_settings_are_decoded_and_differences_logged(golden_case, caplog):
    from caffe_core.net import Net
    from caffe_core.net_files import read_net_binary
    from caffe_layers_rcnn.roi_pooling import cascade_stored_pooling

    folder = golden_case("cascade_fork_weights")
    stored = {lp.name: lp for lp in read_net_binary(folder / "weights.caffemodel").layer}
    pool = cascade_stored_pooling(stored["pool"])
    settings = (pool.pooled_h, pool.pooled_w, pool.spatial_scale, pool.pad_ratio)
    assert settings == (2, 3, 0.5, pytest.approx(0.2))
    assert cascade_stored_pooling(stored["conv"]) is None
    text = (folder / "net.prototxt").read_text().replace("pad_ratio: 0.2", "pad_ratio: 0.3")
    net = Net(parse_text(text, caffe_pb2.NetParameter()), phase=caffe_pb2.TEST)
    with caplog.at_level("INFO", logger="caffe.net"):
        net.copy_trained_layers_from(folder / "weights.caffemodel")
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and warnings[0].startswith("layer 'pool' (type ROIPooling)")
    assert "pad_ratio 0.2 (file) vs 0.3 (net)" in warnings[0] and "147" in warnings[0]
    assert any("align" in r.getMessage() and "agrees" in r.getMessage() for r in caplog.records)
