"""DenseBlock (caffe_ocr): blob layout and lr_mult, the forward against the fork's loops written out in
float64 (TEST: stored statistics, divided by a non-zero factor; TRAIN: the cuDNN path's batch statistics and
running update), dropout, gradients (plain and bottleneck, TRAIN and TEST), GPU mode, refusals."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.testing import GradientChecker

FILLERS = ('Filter_Filler { type: "gaussian" std: 0.5 } '
           'BN_Scaler_Filler { type: "uniform" min: 0.5 max: 1.5 } '
           'BN_Bias_Filler { type: "uniform" min: -0.3 max: 0.3 }')
# BN biases well above the normalised values (small filters keep the new channels small, for TEST's stored
# statistics) keep every ReLU on: the gradient checks' steps then cross no kink inside the block.
ACTIVE = ('BN_Scaler_Filler { type: "uniform" min: 0.5 max: 1 } BN_Bias_Filler { type: "constant" value: 4 } '
          'Filter_Filler { type: "gaussian" std: %s }')


def block_text(transitions: int, growth: int, extra: str = "", fillers: str = FILLERS) -> str:
    return (f'name: "db" type: "DenseBlock" denseblock_param {{ numTransition: {transitions} '
            f'growthRate: {growth} {fillers} {extra} }}')


def fork_conv(x, w):
    """convolution_Fwd: out[n, o, h, w] = sum w[o, c, kx, ky] x[n, c, h + K/2 - kx, w + K/2 - ky], zero
    outside."""
    num, channels, height, width = x.shape
    out_channels, _, kh, kw = w.shape
    out = np.zeros((num, out_channels, height, width))
    for n in range(num):
        for o in range(out_channels):
            for h in range(height):
                for v in range(width):
                    for c in range(channels):
                        for fx in range(kh):
                            for fy in range(kw):
                                lx, ly = h + kh // 2 - fx, v + kw // 2 - fy
                                if 0 <= lx < height and 0 <= ly < width:
                                    out[n, o, h, v] += w[o, c, fx, fy] * x[n, c, lx, ly]
    return out


def fork_bn(x, scale, bias, mean, var):
    denom = 1.0 / np.sqrt(var.reshape(1, -1, 1, 1) + 1e-5)
    return scale.reshape(1, -1, 1, 1) * (denom * (x - mean.reshape(1, -1, 1, 1))) + bias.reshape(1, -1, 1, 1)


def fork_forward(x, blobs, transitions, use_bc, train):
    """Forward, transition by transition: TEST with the stored statistics over the factor (raw when the factor
    is 0), TRAIN with the batch mean and biased variance. Returns the top and the batch statistics."""
    b = [np.asarray(blob.cpu_data(), np.float64) for blob in blobs]
    t_count = transitions
    factor = b[-1][0]
    merged = x.astype(np.float64)
    stats = []

    def bn(v, scale, bias, mean, var):
        if train:
            batch_mean = v.mean(axis=(0, 2, 3))
            batch_var = ((v - batch_mean.reshape(1, -1, 1, 1)) ** 2).mean(axis=(0, 2, 3))
            stats.append((batch_mean, batch_var))
            return fork_bn(v, scale, bias, batch_mean, batch_var)
        divide = 1.0 if factor == 0 else 1.0 / factor
        return fork_bn(v, scale, bias, mean * divide, var * divide)

    for t in range(t_count):
        norm = [b[k * t_count + t] for k in range(1, 5)]
        y = np.maximum(bn(merged, *norm), 0)
        if use_bc:
            z = fork_conv(y, b[5 * t_count + t])
            y = np.maximum(bn(z, b[6 * t_count + t], b[7 * t_count + t], b[8 * t_count + t],
                              b[9 * t_count + t]), 0)
        merged = np.concatenate([merged, fork_conv(y, b[t])], axis=1)
    return merged, stats


def set_up(make_layer, blob_of, text, x, phase=caffe_pb2.TRAIN):
    layer = make_layer(text, phase=phase)
    bottom, top = [blob_of(x)], [Blob()]
    layer.setup(bottom, top)
    return layer, bottom, top


@pytest.mark.parametrize(("use_bc", "count"), [(False, 11), (True, 21)])
def test_blob_layout_and_lr_mult(make_layer, blob_of, use_bc, count):
    text = block_text(2, 3, f"use_BC: {str(use_bc).lower()}")
    layer, _, top = set_up(make_layer, blob_of, text, np.zeros((1, 4, 3, 3), np.float32))
    shapes = [b.shape for b in layer.blobs]
    assert len(shapes) == count and top[0].shape == (1, 10, 3, 3)
    conv_in = [12, 12] if use_bc else [4, 7]
    assert shapes[:2] == [(3, conv_in[0], 3, 3), (3, conv_in[1], 3, 3)]
    assert shapes[2:10] == [(1, 4, 1, 1), (1, 7, 1, 1)] * 4
    if use_bc:
        assert shapes[10:12] == [(12, 4, 1, 1), (12, 7, 1, 1)]
        assert shapes[12:20] == [(1, 12, 1, 1)] * 8
    assert shapes[-1] == (1,)
    statistics = set(range(6, 10)) | ({16, 17, 18, 19} if use_bc else set()) | {count - 1}
    assert [p.lr_mult for p in layer.layer_param.param] == [0 if i in statistics else 1 for i in range(count)]
    assert all(np.all(layer.blobs[i].cpu_data() == 0) for i in (6, 7, count - 1))
    assert all(np.all(layer.blobs[i].cpu_data() == 1) for i in (8, 9))


@pytest.mark.parametrize("use_bc", [False, True])
@pytest.mark.parametrize("factor", [0.0, 2.5])
def test_test_phase_forward_matches_the_forks_loops(make_layer, blob_of, use_bc, factor):
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (2, 3, 3, 4)).astype(np.float32)
    text = block_text(2, 2, f"use_BC: {str(use_bc).lower()}")
    layer, bottom, top = set_up(make_layer, blob_of, text, x, caffe_pb2.TEST)
    means, variances = [6, 7] + ([16, 17] if use_bc else []), [8, 9] + ([18, 19] if use_bc else [])
    for index in means:
        layer.blobs[index].mutable_cpu_data()[...] = rng.uniform(-0.3, 0.3, layer.blobs[index].shape)
    for index in variances:
        layer.blobs[index].mutable_cpu_data()[...] = rng.uniform(0.5, 1.5, layer.blobs[index].shape)
    layer.blobs[-1].mutable_cpu_data()[...] = factor
    layer.forward(bottom, top)
    expected, _ = fork_forward(x, layer.blobs, 2, use_bc, train=False)
    np.testing.assert_allclose(top[0].cpu_data(), expected, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("use_bc", [False, True])
def test_train_phase_normalises_by_the_batch_and_updates_the_running_statistics(make_layer, blob_of, use_bc):
    x = np.random.default_rng(2).uniform(-1, 1, (2, 3, 3, 2)).astype(np.float32)
    text = block_text(2, 2, f"use_BC: {str(use_bc).lower()} moving_average_fraction: 0.25")
    layer, bottom, top = set_up(make_layer, blob_of, text, x)
    layer.forward(bottom, top)
    expected, stats = fork_forward(x, layer.blobs, 2, use_bc, train=True)
    np.testing.assert_allclose(top[0].cpu_data(), expected, rtol=2e-5, atol=2e-5)
    # running = 0.25 batch + 0.75 running, from mean 0 and variance 1; the variance's batch value unbiased.
    m = 2 * 3 * 2
    means = [3 * 2, 3 * 2 + 1] + ([8 * 2, 8 * 2 + 1] if use_bc else [])
    order = [0, 2, 1, 3] if use_bc else [0, 1]
    for index, k in zip(means, order, strict=True):
        batch_mean, batch_var = stats[k]
        np.testing.assert_allclose(layer.blobs[index].cpu_data().ravel(), 0.25 * batch_mean, rtol=1e-5,
                                   atol=1e-7)
        np.testing.assert_allclose(layer.blobs[index + 2].cpu_data().ravel(),
                                   0.25 * batch_var * m / (m - 1) + 0.75, rtol=1e-5)
    assert layer.blobs[-1].cpu_data()[0] == 0


def test_dropout_masks_the_new_channels_in_train_only(make_layer, blob_of):
    x = np.random.default_rng(3).uniform(-1, 1, (2, 3, 4, 4)).astype(np.float32)
    text = block_text(1, 4, "use_dropout: true dropout_amount: 0.5")
    layer, bottom, top = set_up(make_layer, blob_of, text, x)
    layer.forward(bottom, top)
    new = top[0].cpu_data()[:, 3:]
    expected, _ = fork_forward(x, layer.blobs, 1, False, train=True)
    kept = new != 0
    assert 0.2 < kept.mean() < 0.8
    np.testing.assert_allclose(new[kept], 2 * expected[:, 3:][kept], rtol=2e-5, atol=2e-5)
    np.testing.assert_array_equal(top[0].cpu_data()[:, :3], x)
    test_layer, bottom, top = set_up(make_layer, blob_of, text, x, caffe_pb2.TEST)
    test_layer.forward(bottom, top)
    assert np.all(top[0].cpu_data()[:, 3:] != 0)


@pytest.mark.parametrize("extra", ["", "use_BC: true", "use_dropout: true dropout_amount: 0.3"])
def test_gradient_train(make_layer, blob_of, extra):
    x = blob_of(np.random.default_rng(4).uniform(-1, 1, (2, 3, 3, 2)))
    layer = make_layer(block_text(2, 2, extra, ACTIVE % 0.2))
    GradientChecker(1e-2, 1e-2).check_gradient(layer, [x], [Blob()], -1)


def test_gradient_test_phase(make_layer, blob_of):
    # TEST normalises by the stored statistics, which have no gradient (the checker would step them too):
    # central differences of sum(top * r) for the bottom and the learned blobs.
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (2, 3, 3, 2)).astype(np.float32)
    text = block_text(2, 2, "use_BC: true", ACTIVE % 0.05)
    layer, bottom, top = set_up(make_layer, blob_of, text, x, caffe_pb2.TEST)
    weights = rng.normal(size=top[0].shape).astype(np.float32)
    layer.forward(bottom, top)
    top[0].mutable_cpu_diff()[...] = weights
    layer.backward(top, [True], bottom)
    learned = [0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15]
    for blob in [bottom[0], *(layer.blobs[i] for i in learned)]:
        analytic = blob.cpu_diff().copy().ravel()
        for index in range(blob.count):
            values = []
            for step in (1e-2, -1e-2):
                original = blob.cpu_data().ravel()[index]
                blob.mutable_cpu_data().reshape(-1)[index] = original + step
                layer.forward(bottom, top)
                values.append(float((top[0].cpu_data().astype(np.float64) * weights).sum()))
                blob.mutable_cpu_data().reshape(-1)[index] = original
            estimate = (values[0] - values[1]) / 2e-2
            assert abs(analytic[index] - estimate) <= 1e-2 * max(1.0, abs(estimate))


def test_relu_blocks_the_gradient_where_the_normalised_values_are_negative(make_layer, blob_of):
    # BN biases of -10 switch every ReLU off: nothing reaches the filters, the input keeps only its own
    # channels' top diff.
    x = np.random.default_rng(6).uniform(-1, 1, (2, 3, 3, 3)).astype(np.float32)
    fillers = ('Filter_Filler { type: "gaussian" std: 0.5 } BN_Scaler_Filler { type: "constant" value: 1 } '
               'BN_Bias_Filler { type: "constant" value: -10 }')
    layer, bottom, top = set_up(make_layer, blob_of, block_text(2, 2, "", fillers), x)
    layer.forward(bottom, top)
    top[0].mutable_cpu_diff()[...] = np.random.default_rng(7).normal(size=top[0].shape)
    layer.backward(top, [True], bottom)
    np.testing.assert_array_equal(layer.blobs[0].cpu_diff(), 0)
    np.testing.assert_allclose(bottom[0].cpu_diff(), top[0].cpu_diff()[:, :3], atol=1e-6)


def test_backward_accumulates_param_diffs(make_layer, blob_of):
    x = np.random.default_rng(8).uniform(-1, 1, (2, 3, 3, 3)).astype(np.float32)
    layer, bottom, top = set_up(make_layer, blob_of, block_text(2, 2, "use_BC: true"), x)
    layer.forward(bottom, top)
    top[0].mutable_cpu_diff()[...] = 1
    layer.backward(top, [True], bottom)
    once = [b.cpu_diff().copy() for b in layer.blobs]
    layer.backward(top, [True], bottom)
    for blob, diff in zip(layer.blobs, once, strict=True):
        np.testing.assert_allclose(blob.cpu_diff(), 2 * diff, rtol=1e-5, atol=1e-7)


@pytest.mark.gpu
@pytest.mark.parametrize("phase", [caffe_pb2.TRAIN, caffe_pb2.TEST])
def test_gpu_matches_cpu(gpu_matches_cpu, phase):
    x = np.random.default_rng(9).uniform(-1, 1, (2, 3, 4, 3))
    gpu_matches_cpu(block_text(2, 2, "use_BC: true"), [x], phase=phase, rtol=1e-4, atol=1e-5,
                    propagate_down=[True])


@pytest.mark.parametrize(("extra", "message"), [
    ("numTransition: 0", "must be positive"),
    ("use_dropout: true dropout_amount: 1", r"dropout_amount must be in \[0, 1\)"),
])
def test_refusals(make_layer, blob_of, extra, message):
    with pytest.raises(LayerSetupError, match=message):
        set_up(make_layer, blob_of, f'name: "db" type: "DenseBlock" denseblock_param {{ {extra} }}',
               np.zeros((1, 2, 3, 3), np.float32))


def test_refuses_statistics_with_a_learning_rate(make_layer, blob_of):
    params = "param { } " * 6 + "param { lr_mult: 1 }"
    with pytest.raises(LayerSetupError, match="param 6 .* must stay 0"):
        set_up(make_layer, blob_of, block_text(2, 2) + " " + params, np.zeros((1, 2, 3, 3), np.float32))


def test_refuses_other_bottom_channels_after_setup(make_layer, blob_of):
    layer, _, top = set_up(make_layer, blob_of, block_text(1, 2), np.zeros((1, 2, 3, 3), np.float32))
    with pytest.raises(LayerSetupError, match="set up for 2"):
        layer.reshape([blob_of(np.zeros((1, 3, 3, 3), np.float32))], top)


def test_refuses_stored_blobs_of_other_shapes(make_layer, blob_of):
    layer = make_layer(block_text(1, 2))
    layer.blobs = [Blob((2, 3, 3, 3))] + [Blob((1, 3, 1, 1))] * 4 + [Blob((1,))]
    with pytest.raises(LayerSetupError, match="expected 6 blobs"):
        layer.setup([blob_of(np.zeros((1, 2, 3, 3), np.float32))], [Blob()])


def test_refuses_to_run_in_place(make_layer, blob_of):
    blob = blob_of(np.zeros((1, 2, 3, 3), np.float32))
    with pytest.raises(LayerSetupError, match="in place"):
        make_layer(block_text(1, 2)).setup([blob], [blob])
