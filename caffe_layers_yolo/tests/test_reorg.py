"""Reorg: darknet's index map (checked against the fork's reorg_cpu written as its loops), forward and
reverse, shapes, refusals, the true inverse permutation as backward (gradient-checked), GPU mode."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker


def fork_reorg(x, shape, stride, forward):
    """The fork's reorg_cpu (bottom dims w, h, c, batch) as its four nested loops, on flat buffers."""
    batch, c, h, w = shape
    out_c = c // (stride * stride)
    out = np.zeros(x.size, dtype=x.dtype)
    for b in range(batch):
        for k in range(c):
            for j in range(h):
                for i in range(w):
                    in_index = i + w * (j + h * (k + c * b))
                    c2, offset = k % out_c, k // out_c
                    w2, h2 = i * stride + offset % stride, j * stride + offset // stride
                    out_index = w2 + w * stride * (h2 + h * stride * (c2 + out_c * b))
                    if forward:
                        out[out_index] = x[in_index]
                    else:
                        out[in_index] = x[out_index]
    return out


def layer_text(stride=2, reverse=None):
    reverse_text = "" if reverse is None else f" reverse: {str(reverse).lower()}"
    head = 'name: "reorg" type: "Reorg" bottom: "x" top: "y"'
    return f"{head} reorg_param {{ stride: {stride}{reverse_text} }}"


def run(make_layer, blob_of, text, x):
    layer = make_layer(text)
    bottom, top = [blob_of(x)], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    return layer, bottom, top


def test_by_hand_four_channels_stride_two(make_layer, blob_of):
    # C = 4, s = 2: C / s^2 = 1 plane; the buffer 0..15 read as one 4 x 4 plane X (H s x W s = 4 x 4 for
    # a 2 x 2 bottom). Top channel k = dy * 2 + dx holds X[2 j + dy, 2 i + dx]: the 2 x 2 subsampled grids.
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 2, 2)
    _, _, top = run(make_layer, blob_of, layer_text(), x)
    plane = np.arange(16).reshape(4, 4)
    expected = np.stack([plane[0::2, 0::2], plane[0::2, 1::2], plane[1::2, 0::2], plane[1::2, 1::2]])
    # Y (1, 4, 2, 2) is then the top buffer, whose shape is (1, 16, 1, 1).
    assert top[0].shape == (1, 16, 1, 1)
    np.testing.assert_array_equal(top[0].cpu_data().ravel(), expected.ravel())


@pytest.mark.parametrize(("shape", "stride"), [((2, 8, 4, 6), 2), ((1, 18, 3, 6), 3), ((2, 3, 2, 2), 1),
                                               ((1, 32, 4, 4), 2)])
def test_forward_is_the_forks_loop(make_layer, blob_of, shape, stride):
    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    _, _, top = run(make_layer, blob_of, layer_text(stride), x)
    n, c, h, w = shape
    assert top[0].shape == (n, c * stride * stride, h // stride, w // stride)
    np.testing.assert_array_equal(top[0].cpu_data().ravel(), fork_reorg(x.ravel(), shape, stride, False))


@pytest.mark.parametrize(("shape", "stride"), [((2, 8, 4, 6), 2), ((1, 18, 3, 5), 3)])
def test_reverse_is_the_forks_loop(make_layer, blob_of, shape, stride):
    x = np.random.default_rng(1).normal(size=shape).astype(np.float32)
    _, _, top = run(make_layer, blob_of, layer_text(stride, reverse=True), x)
    n, c, h, w = shape
    assert top[0].shape == (n, c // (stride * stride), h * stride, w * stride)
    np.testing.assert_array_equal(top[0].cpu_data().ravel(), fork_reorg(x.ravel(), shape, stride, True))


def test_yolov2_passthrough_shape(make_layer, blob_of):
    # darknet19: conv21 (1, 64, 26, 26) -> (1, 256, 13, 13).
    _, _, top = run(make_layer, blob_of, layer_text(), np.zeros((1, 64, 26, 26)))
    assert top[0].shape == (1, 256, 13, 13)


@pytest.mark.parametrize("reverse", [False, True])
def test_backward_is_the_inverse_permutation(make_layer, blob_of, reverse):
    # The fork's backward writes zeros (it reads a private blob's never-written diff); ours sends each top
    # diff back to the bottom element the forward read it from.
    x = np.arange(2 * 8 * 4 * 2, dtype=np.float32).reshape(2, 8, 4, 2)
    layer, bottom, top = run(make_layer, blob_of, layer_text(2, reverse), x)
    top[0].mutable_cpu_diff()[...] = top[0].cpu_data()
    layer.backward(top, [True], bottom)
    np.testing.assert_array_equal(bottom[0].cpu_diff(), x)


@pytest.mark.parametrize("reverse", [False, True])
def test_gradient(make_layer, gaussian, reverse):
    layer = make_layer(layer_text(2, reverse))
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(layer, [gaussian((2, 8, 4, 2))], [Blob()])


def test_propagate_down_false_leaves_the_diff(make_layer, blob_of):
    layer, bottom, top = run(make_layer, blob_of, layer_text(), np.ones((1, 4, 2, 2)))
    bottom[0].mutable_cpu_diff()[...] = 5
    layer.backward(top, [False], bottom)
    assert (bottom[0].cpu_diff() == 5).all()


@pytest.mark.parametrize(("text", "shape", "message"), [
    ('name: "reorg" type: "Reorg" bottom: "x" top: "y"', (1, 4, 2, 2), "reorg_param.stride must be given"),
    (layer_text(2), (1, 6, 4, 4), "multiple of reorg_param.stride\\^2"),
    (layer_text(2), (1, 8, 3, 4), "multiples of reorg_param.stride"),
    (layer_text(0), (1, 8, 4, 4), "stride must be positive"),
])
def test_refusals_name_the_field(make_layer, blob_of, text, shape, message):
    with pytest.raises(LayerSetupError, match=message):
        run(make_layer, blob_of, text, np.zeros(shape))


def test_in_place_is_refused(make_layer, blob_of):
    layer = make_layer('name: "reorg" type: "Reorg" bottom: "x" top: "x" reorg_param { stride: 2 }')
    blob = blob_of(np.zeros((1, 4, 2, 2)))
    with pytest.raises(LayerSetupError, match="in place"):
        layer.setup([blob], [blob])


def test_follows_a_reshaped_bottom(make_layer, blob_of):
    # The fork fixes the top shape at setup; here a new input size gives the matching top.
    layer, bottom, top = run(make_layer, blob_of, layer_text(), np.zeros((1, 4, 2, 2)))
    bottom[0].reshape((2, 8, 4, 6))
    x = np.random.default_rng(3).normal(size=(2, 8, 4, 6)).astype(np.float32)
    bottom[0].mutable_cpu_data()[...] = x
    layer.reshape(bottom, top)
    layer.forward(bottom, top)
    np.testing.assert_array_equal(top[0].cpu_data().ravel(), fork_reorg(x.ravel(), x.shape, 2, False))


@pytest.mark.gpu
@pytest.mark.parametrize("reverse", [False, True])
def test_gpu_matches_cpu(gpu_matches_cpu, reverse):
    x = np.random.default_rng(4).normal(size=(2, 8, 4, 6)).astype(np.float32)
    gpu_matches_cpu(layer_text(2, reverse), [x], rtol=0, atol=0)
