"""PSROIPooling against loop ports of R-FCN's forward and backward kernels."""

import math

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.schema_extensions import get_param_block
from caffe_core.testing import GradientChecker
from caffe_core.testing.wire import field_bytes, wire_fields

ROIS = [[0, 1, 1, 6, 6], [1, 0.4, 2.5, 7.6, 11], [0, 3, 3, 3, 3], [1, -4, -4, 20, 30], [0, 9, 2, 4, 1]]


def layer_text(spatial_scale=1.0, output_dim=2, group_size=3):
    return (f'name: "ps" type: "PSROIPooling" bottom: "x" bottom: "rois" top: "y" psroi_pooling_param {{ '
            f"spatial_scale: {spatial_scale} output_dim: {output_dim} group_size: {group_size} }}")


def c_round(value):
    return math.copysign(math.floor(abs(value) + 0.5), value)


def kernel_bins(roi, scale, g, height, width):
    """Yields (ph, pw, hstart, hend, wstart, wend) as the fork's kernel computes them in float32."""
    scale = np.float32(scale)
    start_w = np.float32(c_round(float(np.float32(roi[1])))) * scale
    start_h = np.float32(c_round(float(np.float32(roi[2])))) * scale
    end_w = np.float32(c_round(float(np.float32(roi[3]))) + 1.0) * scale
    end_h = np.float32(c_round(float(np.float32(roi[4]))) + 1.0) * scale
    bin_h = max(end_h - start_h, np.float32(0.1)) / np.float32(g)
    bin_w = max(end_w - start_w, np.float32(0.1)) / np.float32(g)
    for ph in range(g):
        for pw in range(g):
            hstart = min(max(math.floor(np.float32(ph) * bin_h + start_h), 0), height)
            hend = min(max(math.ceil(np.float32(ph + 1) * bin_h + start_h), 0), height)
            wstart = min(max(math.floor(np.float32(pw) * bin_w + start_w), 0), width)
            wend = min(max(math.ceil(np.float32(pw + 1) * bin_w + start_w), 0), width)
            yield ph, pw, hstart, hend, wstart, wend


def reference(x, rois, scale, output_dim, g, top_diff):
    """Forward and (atomic-add) backward of R-FCN's kernels, loop for loop."""
    _, _, height, width = x.shape
    top = np.zeros((len(rois), output_dim, g, g), dtype=np.float32)
    diff = np.zeros(x.shape, dtype=np.float32)
    for n, roi in enumerate(rois):
        batch = int(np.float32(roi[0]))
        for ph, pw, hstart, hend, wstart, wend in kernel_bins(roi, scale, g, height, width):
            area = np.float32((hend - hstart) * (wend - wstart))
            empty = hend <= hstart or wend <= wstart
            for ctop in range(output_dim):
                c = (ctop * g + ph) * g + pw
                total = np.float32(0)
                for h in range(hstart, hend):
                    for w in range(wstart, wend):
                        total += x[batch, c, h, w]
                top[n, ctop, ph, pw] = 0 if empty else total / area
                share = np.float32(0) if empty else top_diff[n, ctop, ph, pw] / area
                diff[batch, c, hstart:hend, wstart:wend] += share
    return top, diff


@pytest.mark.parametrize(("scale", "output_dim", "group_size"), [(1.0, 2, 3), (0.5, 3, 2), (0.0625, 1, 1),
                                                                  (0.7, 2, 4)])
def test_forward_and_backward_match_the_fork(make_layer, blob_of, scale, output_dim, group_size):
    x = np.random.default_rng(1).normal(size=(2, output_dim * group_size ** 2, 9, 8)).astype(np.float32)
    rois = np.array(ROIS, dtype=np.float32)
    layer = make_layer(layer_text(scale, output_dim, group_size))
    bottom, top = [blob_of(x), blob_of(rois)], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    top_diff = np.random.default_rng(2).normal(size=top[0].shape).astype(np.float32)
    want_top, want_diff = reference(x, rois, scale, output_dim, group_size, top_diff)
    assert top[0].shape == (len(rois), output_dim, group_size, group_size)
    np.testing.assert_allclose(top[0].cpu_data(), want_top, rtol=1e-5, atol=1e-6)
    top[0].mutable_cpu_diff()[...] = top_diff
    bottom[1].mutable_cpu_diff()[...] = 9
    layer.backward(top, [True, False], bottom)
    np.testing.assert_allclose(bottom[0].cpu_diff(), want_diff, rtol=1e-5, atol=1e-6)
    assert not bottom[1].cpu_diff().any()


def test_hand_example(make_layer, blob_of):
    # group 2, one output channel: bin (i, j) of ROI (0, 0)-(3, 3) averages channel 2 i + j over 2 x 2.
    x = np.stack([np.full((4, 4), 10.0 * (k + 1)) for k in range(4)])[None].astype(np.float32)
    x[0, 0, 0, 0] = 14
    layer = make_layer(layer_text(1.0, 1, 2))
    bottom, top = [blob_of(x), blob_of([[0, 0, 0, 3, 3]])], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    np.testing.assert_allclose(top[0].cpu_data()[0, 0], [[11, 20], [30, 40]])
    top[0].mutable_cpu_diff()[...] = 4
    layer.backward(top, [True, False], bottom)
    expected = np.zeros((4, 4, 4), dtype=np.float32)
    expected[0, :2, :2] = expected[1, :2, 2:] = expected[2, 2:, :2] = expected[3, 2:, 2:] = 1
    np.testing.assert_array_equal(bottom[0].cpu_diff()[0], expected)


def test_gradient(make_layer, gaussian, blob_of):
    layer = make_layer(layer_text(0.5, 2, 2))
    bottom = [gaussian((1, 8, 4, 4)), blob_of([[0, 0, 0, 7, 5], [0, 2, 1, 5, 5], [0, 20, 20, 30, 30]])]
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(layer, bottom, [Blob()], check_bottom=0)


@pytest.mark.parametrize(("block", "words"), [
    ("output_dim: 2 group_size: 3", "must set spatial_scale"),
    ("spatial_scale: 1 group_size: 3", "must set output_dim"),
    ("spatial_scale: 1 output_dim: 2", "must set group_size"),
    ("spatial_scale: 1 output_dim: 0 group_size: 3", "psroi_pooling_param.output_dim must be > 0"),
    ("spatial_scale: 1 output_dim: 2 group_size: -1", "psroi_pooling_param.group_size must be > 0"),
    ("spatial_scale: 1 output_dim: 3 group_size: 3", "output_dim \\* group_size\\^2 = 3 \\* 3\\^2 = 27"),
])
def test_refusals(make_layer, blob_of, block, words):
    text = f'type: "PSROIPooling" psroi_pooling_param {{ {block} }}'
    with pytest.raises(LayerSetupError, match=words):
        make_layer(text).setup([blob_of(np.ones((1, 18, 4, 4))), blob_of([[0, 0, 0, 1, 1]])], [Blob()])


def test_refuses_a_missing_block(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="spatial_scale, output_dim, group_size"):
        make_layer('type: "PSROIPooling"').setup([blob_of(np.ones((1, 1, 4, 4))), blob_of([[0, 0, 0, 1, 1]])],
                                                 [Blob()])


def test_refuses_bad_rois(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="5 values"):
        make_layer(layer_text()).setup([blob_of(np.ones((1, 18, 4, 4))), blob_of(np.zeros((2, 4)))], [Blob()])


def test_param_block_text_and_wire_number():
    param = parse_text(layer_text(0.0625, 21, 7), caffe_pb2.LayerParameter())
    block = get_param_block(param, "psroi_pooling_param")
    assert (block.spatial_scale, block.output_dim, block.group_size) == (0.0625, 21, 7)
    data = param.SerializeToString()
    assert wire_fields(wire_fields(data)[10001][0]).keys() == {1, 2, 3}
    assert get_param_block(caffe_pb2.LayerParameter.FromString(data), "psroi_pooling_param").group_size == 7
    assert not get_param_block(caffe_pb2.LayerParameter(), "psroi_pooling_param").HasField("output_dim")
    fork = field_bytes(10001, bytes([0x10, 5, 0x18, 3]))
    block = get_param_block(caffe_pb2.LayerParameter.FromString(fork), "psroi_pooling_param")
    assert (block.output_dim, block.group_size) == (5, 3)


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    x = np.random.default_rng(3).normal(size=(2, 18, 9, 8))
    gpu_matches_cpu(layer_text(1.0, 2, 3), [x, np.array(ROIS)], propagate_down=[True, False])
