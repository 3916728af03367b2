"""BN[pspnet]: the golden case, batch / stored / frozen forwards against references (TSN's own tests among
them), the backward (gradient check in TRAIN, the fork's formulas in TEST and frozen), the two conventions
for blob 3 with the numbers they are stored under, lr pins, refusals and CPU/GPU parity."""

import numpy as np
import pytest
from google.protobuf.unknown_fields import UnknownFieldSet

from caffe_core import proto_io
from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError, ModelFileError
from caffe_core.net import Net
from caffe_core.net_files import read_net_binary
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import has_param_block
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import build_case_net, check_layer_case
from caffe_layers_seg import wire
from caffe_layers_seg.bn_pspnet import INVERSE_STD, PSPNET_BN_NUMBER, VARIANCE, PSPNetBNLayer
from caffe_layers_seg.params import BNParameter

FILLERS = "slope_filler { type: 'constant' value: 1 } bias_filler { type: 'constant' value: 0 }"


def bn_text(extra: str = "") -> str:
    """A BN layer named 'bn' with unit slope, zero bias and more bn_param text."""
    return f"name: 'bn' type: 'BN' bottom: 'x' top: 'y' bn_param {{ {FILLERS} {extra} }}"


def run(run_layer, bottom, extra="", phase=caffe_pb2.TRAIN, setup=None):
    """A BN layer set up and run forward on `bottom` (setup(layer) runs between setup and forward)."""
    return run_layer(bn_text(extra), [bottom], phase, setup)


def set_blobs(layer, slope, bias, mean, statistic):
    """Writes the four blobs from per-channel values."""
    for blob, values in zip(layer.blobs, (slope, bias, mean, statistic), strict=True):
        blob.mutable_cpu_data()[...] = np.asarray(values, np.float32).reshape(blob.shape)


def test_golden(golden_case):
    assert check_layer_case(golden_case("bn_test_phase")) == []


def test_fresh_layer_holds_variances_in_pspnet_blobs(run_layer, gaussian):
    layer, top = run(run_layer, gaussian((2, 3, 4, 5)))
    assert isinstance(layer, PSPNetBNLayer) and layer.statistics == VARIANCE
    assert [b.shape for b in layer.blobs] == [(1, 3, 1, 1)] * 4
    frozen, _ = run(run_layer, gaussian((2, 3, 4, 5)), "frozen: true")
    assert frozen.blobs[3].cpu_data().ravel().tolist() == [1, 1, 1]


def test_train_forward_uses_batch_statistics_and_updates_moving_variance(run_layer, gaussian):
    bottom = gaussian((2, 3, 4, 5))
    slope, bias = [0.5, 2.0, -1.0], [0.1, 0.2, 0.3]
    layer, top = run(run_layer, bottom, "momentum: 0.8 eps: 0.01",
                     setup=lambda lay: set_blobs(lay, slope, bias, [1, 2, 3], [4, 5, 6]))
    x = bottom.cpu_data().astype(np.float64)
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    want = ((x - mean[:, None, None]) / np.sqrt(var[:, None, None] + 0.01) * np.array(slope)[:, None, None]
            + np.array(bias)[:, None, None])
    np.testing.assert_allclose(top.cpu_data(), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(layer.blobs[2].cpu_data().ravel(), 0.2 * mean + 0.8 * np.array([1, 2, 3]),
                               rtol=1e-5)
    np.testing.assert_allclose(layer.blobs[3].cpu_data().ravel(), 0.2 * var + 0.8 * np.array([4, 5, 6]),
                               rtol=1e-5)


def test_train_forward_with_inverse_std_updates_moving_inverse_std(run_layer, gaussian):
    bottom = gaussian((2, 3, 4, 5))

    def inverse(layer):
        layer.statistics = INVERSE_STD
        set_blobs(layer, [1] * 3, [0] * 3, [0] * 3, [1, 2, 3])

    layer, top = run(run_layer, bottom, "eps: 0.01", setup=inverse)
    x = bottom.cpu_data().astype(np.float64)
    inv = 1 / np.sqrt(x.var(axis=(0, 2, 3)) + 0.01)
    np.testing.assert_allclose(layer.blobs[3].cpu_data().ravel(), 0.1 * inv + 0.9 * np.array([1, 2, 3]),
                               rtol=1e-5)
    centred = x - x.mean(axis=(0, 2, 3))[:, None, None]
    np.testing.assert_allclose(top.cpu_data(), centred * inv[:, None, None], rtol=1e-4, atol=1e-5)


def test_tsn_forward_gives_zero_mean_unit_variance(run_layer, gaussian):
    """TSN's TestForward: eps 0, slope 1, bias 0."""
    _, top = run(run_layer, gaussian((5, 2, 3, 4)), "eps: 0 frozen: false")
    y = top.cpu_data()
    np.testing.assert_allclose(y.mean(axis=(0, 2, 3)), 0, atol=1e-3)
    np.testing.assert_allclose((y * y).mean(axis=(0, 2, 3)), 1, atol=1e-3)


def frozen_stats(layer):
    """TSN's frozen tests: running mean c and variance c + 1 for channel c."""
    set_blobs(layer, [1, 1], [0, 0], [0, 1], [1, 2])


def test_tsn_frozen_forward_and_backward(run_layer, gaussian):
    """TSN's TestForwardFrozen and TestBackwardFrozen: y = (x - c) / sqrt(c + 1), dx = dy / sqrt(c + 1)."""
    bottom = gaussian((5, 2, 3, 4))
    layer, top = run(run_layer, bottom, "eps: 0 frozen: true", setup=frozen_stats)
    c = np.arange(2)[:, None, None]
    np.testing.assert_allclose(top.cpu_data(), (bottom.cpu_data() - c) / np.sqrt(c + 1), atol=1e-3)
    top.mutable_cpu_diff()[...] = np.arange(top.count).reshape(top.shape)
    layer.backward([top], [True], [bottom])
    np.testing.assert_allclose(bottom.cpu_diff(), top.cpu_diff() / np.sqrt(c + 1), rtol=1e-6)
    assert not layer.blobs[0].cpu_diff().any() and not layer.blobs[1].cpu_diff().any()


@pytest.mark.parametrize("phase", [caffe_pb2.TRAIN, caffe_pb2.TEST])
def test_frozen_uses_the_moving_statistics_in_every_phase(run_layer, gaussian, phase):
    bottom = gaussian((2, 2, 3, 3))
    layer, top = run(run_layer, bottom, "frozen: true eps: 0.5", phase, setup=frozen_stats)
    c = np.arange(2)[:, None, None]
    np.testing.assert_allclose(top.cpu_data(), (bottom.cpu_data() - c) / np.sqrt(c + 1.5), rtol=1e-5)
    assert layer.blobs[2].cpu_data().ravel().tolist() == [0, 1]


@pytest.mark.parametrize("statistics", [VARIANCE, INVERSE_STD])
def test_test_phase_forward_and_the_forks_backward(run_layer, gaussian, statistics):
    """TEST uses the stored statistics; the backward (not frozen) is still the batch formula with them."""
    bottom = gaussian((2, 3, 3, 2))
    slope, bias, mean, stat = [0.5, 2.0, -1.0], [0.1, 0.2, 0.3], [0.2, -0.1, 0.4], [0.5, 2.0, 4.0]

    def stored(layer):
        layer.statistics = statistics
        set_blobs(layer, slope, bias, mean, stat)

    layer, top = run(run_layer, bottom, "eps: 0.1", caffe_pb2.TEST, setup=stored)
    per = lambda v: np.array(v, np.float64)[:, None, None]  # noqa: E731
    inv = per(stat) if statistics == INVERSE_STD else (per(stat) + 0.1) ** -0.5
    x_hat = (bottom.cpu_data() - per(mean)) * inv
    np.testing.assert_allclose(top.cpu_data(), x_hat * per(slope) + per(bias), rtol=1e-5, atol=1e-6)
    dy = np.random.default_rng(3).normal(size=top.shape)
    top.mutable_cpu_diff()[...] = dy
    layer.backward([top], [True], [bottom])
    g = dy * per(slope)
    m = 2 * 3 * 2
    want = (g - g.sum(axis=(0, 2, 3))[:, None, None] / m
            - x_hat * (g * x_hat).sum(axis=(0, 2, 3))[:, None, None] / m) * inv
    np.testing.assert_allclose(bottom.cpu_diff(), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(layer.blobs[0].cpu_diff().ravel(), (dy * x_hat).sum(axis=(0, 2, 3)), rtol=1e-4)
    np.testing.assert_allclose(layer.blobs[1].cpu_diff().ravel(), dy.sum(axis=(0, 2, 3)), rtol=1e-4)


def test_gradient_train(make_layer, gaussian):
    """TSN's TestBackward checker (1e-2, 1e-4) with eps 0, on a smaller bottom."""
    layer = make_layer(bn_text("eps: 0"))
    GradientChecker(1e-2, 1e-4).check_gradient_exhaustive(layer, [gaussian((3, 2, 2, 3))], [Blob()])


def test_param_diffs_accumulate(run_layer, gaussian):
    bottom = gaussian((2, 3, 2, 2))
    layer, top = run(run_layer, bottom)
    top.mutable_cpu_diff()[...] = 1
    layer.backward([top], [True], [bottom])
    once = layer.blobs[1].cpu_diff().copy()
    layer.backward([top], [True], [bottom])
    np.testing.assert_allclose(layer.blobs[1].cpu_diff(), 2 * once)


def test_in_place_matches(make_layer, run_layer, gaussian):
    bottom = gaussian((2, 3, 2, 2))
    _, top = run(run_layer, bottom)
    layer = make_layer(bn_text())
    shared = gaussian((2, 3, 2, 2))
    layer.setup([shared], [shared])
    layer.forward([shared], [shared])
    np.testing.assert_array_equal(shared.cpu_data(), top.cpu_data())


def test_lr_mult_of_the_statistics_is_pinned_to_zero(make_layer, run_layer, gaussian):
    layer, _ = run(run_layer, gaussian((1, 2, 2, 2)))
    assert [(p.lr_mult, p.decay_mult) for p in layer.layer_param.param] == [(1, 1), (1, 1), (0, 0), (0, 0)]
    specs = "param { lr_mult: 2 } param { lr_mult: 1 } param { lr_mult: 5 }"
    text = bn_text().replace("bn_param", f"{specs} bn_param")
    layer = make_layer(text.replace("bn_param {", "bn_param { frozen: true"))
    layer.setup([gaussian((1, 2, 2, 2))], [Blob()])
    assert [p.lr_mult for p in layer.layer_param.param] == [0, 0, 0, 0]


# ----- the statistics conventions and their field numbers -----
NET = """
name: 'n'
layer { name: 'in' type: 'Input' top: 'x' input_param { shape { dim: 2 dim: 3 dim: 2 dim: 2 } } }
layer { name: 'bn' type: 'BN' bottom: 'x' top: 'y' bn_param { eps: 0.25 } }
"""


def one_bn_net() -> Net:
    """A net with one BN layer (eps 0.25) in TEST phase."""
    return Net(proto_io.parse_text(NET, caffe_pb2.NetParameter()), phase=caffe_pb2.TEST)


def stored_layer(shape, number=None) -> caffe_pb2.LayerParameter:
    """A stored BN layer 'bn' with slope 1, bias 0, mean 0 and statistic 4, its bn_param at `number`."""
    layer = caffe_pb2.LayerParameter(name="bn", type="BN")
    for value in (1, 0, 0, 4):
        blob = layer.blobs.add()
        blob.shape.dim.extend(shape)
        blob.data.extend([value] * 3)
    if number is not None:
        block = caffe_pb2.FillerParameter(type="constant").SerializeToString()
        layer.MergeFromString(wire.length_delimited(number, wire.length_delimited(1, block)))
    return layer


def load(net: Net, layer: caffe_pb2.LayerParameter, tmp_path) -> np.ndarray:
    """Copies a stored layer into the net from a .caffemodel file and returns y for x = 1."""
    path = tmp_path / "stored.caffemodel"
    path.write_bytes(caffe_pb2.NetParameter(name="n", layer=[layer]).SerializeToString())
    net.copy_trained_layers_from(path)
    net.blob_by_name("x").data[...] = 1
    net.forward()
    return net.blob_by_name("y").data.copy()


@pytest.mark.parametrize(("number", "shape", "statistics", "y"), [
    (1111, (1, 3), INVERSE_STD, 4.0),  # inisis: blob 3 is the inverse std
    (PSPNET_BN_NUMBER, (1, 3, 1, 1), VARIANCE, 1 / np.sqrt(4.25)),  # PSPNet
    (137, (1, 3), VARIANCE, 1 / np.sqrt(4.25)),  # TSN (embed_param's number in BVLC)
])
def test_stored_layer_decides_the_convention(tmp_path, number, shape, statistics, y):
    net = one_bn_net()
    np.testing.assert_allclose(load(net, stored_layer(shape, number), tmp_path), y, rtol=1e-6)
    layer = net.layer_by_name("bn")
    assert layer.statistics == statistics
    assert [b.shape for b in layer.blobs] == [shape] * 4


def test_stored_layer_without_a_block_keeps_the_convention(tmp_path):
    net = one_bn_net()
    load(net, stored_layer((1, 3)), tmp_path)
    assert net.layer_by_name("bn").statistics == VARIANCE


def test_golden_file_is_read_as_inverse_std_and_saved_back_at_1111(golden_case, tmp_path):
    net, _ = build_case_net(golden_case("bn_test_phase"))
    layer = net.layer_by_name("bn")
    assert layer.statistics == INVERSE_STD and layer.blobs[0].shape == (1, 3)
    saved = layer.to_proto()
    numbers = [n for n, _, _ in wire.top_level_fields(saved.SerializeToString())]
    assert 1111 in numbers and PSPNET_BN_NUMBER not in numbers
    path = tmp_path / "again.caffemodel"
    net.save(path)
    again, _ = build_case_net(golden_case("bn_test_phase"))
    again.layer_by_name("bn").statistics = VARIANCE
    again.copy_trained_layers_from(path)
    assert again.layer_by_name("bn").statistics == INVERSE_STD


def test_variance_layer_is_saved_at_pspnet_number_and_reloads(tmp_path):
    net = one_bn_net()
    layer = net.layer_by_name("bn")
    layer.blobs[3].mutable_cpu_data()[...] = 2
    saved = layer.to_proto()
    numbers = [n for n, _, _ in wire.top_level_fields(saved.SerializeToString())]
    assert PSPNET_BN_NUMBER in numbers and 1111 not in numbers
    assert not has_param_block(saved, "bn_param")
    path = tmp_path / "variance.caffemodel"
    net.save(path)
    stored = read_net_binary(path).layer[1]
    block = [f for f in wire.top_level_fields(stored.SerializeToString()) if f[0] == PSPNET_BN_NUMBER]
    assert len(block) == 1
    reloaded = one_bn_net()
    reloaded.layer_by_name("bn").statistics = INVERSE_STD
    reloaded.copy_trained_layers_from(path)
    assert reloaded.layer_by_name("bn").statistics == VARIANCE
    np.testing.assert_array_equal(reloaded.layer_by_name("bn").blobs[3].cpu_data(), 2)


def test_saved_block_keeps_its_fields_at_pspnet_number():
    saved = one_bn_net().layer_by_name("bn").to_proto()
    (field,) = [f for f in UnknownFieldSet(saved) if f.field_number == PSPNET_BN_NUMBER]
    assert BNParameter.FromString(field.data).eps == pytest.approx(0.25)


def net_from_stored(layer: caffe_pb2.LayerParameter) -> Net:
    """The one-BN net with its BN layer (and blobs) taken from a stored layer."""
    param = proto_io.parse_text(NET, caffe_pb2.NetParameter())
    param.layer[1].CopyFrom(layer)
    param.layer[1].bottom.append("x")
    param.layer[1].top.append("y")
    return Net(param, phase=caffe_pb2.TEST)


def test_net_built_from_a_stored_layer_takes_its_convention():
    assert net_from_stored(stored_layer((1, 3), 1111)).layer_by_name("bn").statistics == INVERSE_STD
    assert net_from_stored(stored_layer((1, 3), 137)).layer_by_name("bn").statistics == VARIANCE


def test_net_built_from_a_stored_layer_takes_the_other_forks_file(tmp_path):
    net = net_from_stored(stored_layer((1, 3), 1111))
    y = load(net, stored_layer((1, 3, 1, 1), PSPNET_BN_NUMBER), tmp_path)
    np.testing.assert_allclose(y, 1 / np.sqrt(4 + 1e-5), rtol=1e-6)
    assert net.layer_by_name("bn").statistics == VARIANCE
    assert net.layer_by_name("bn").blobs[0].shape == (1, 3, 1, 1)


def test_stored_shape_must_hold_the_channels(tmp_path):
    with pytest.raises(ModelFileError, match="shape mismatch"):
        load(one_bn_net(), stored_layer((3, 1)), tmp_path)


# ----- refusals -----
def test_refuses_a_wrong_blob_count(make_layer, gaussian):
    param = proto_io.parse_text(bn_text(), caffe_pb2.LayerParameter())
    for _ in range(3):
        param.blobs.add().shape.dim.extend([1, 2])
    layer = PSPNetBNLayer(param)
    with pytest.raises(LayerSetupError, match="expects 4 blobs"):
        layer.setup([gaussian((1, 2, 2, 2))], [Blob()])


def test_refuses_a_channel_change(run_layer, gaussian):
    layer, top = run(run_layer, gaussian((1, 2, 2, 2)))
    with pytest.raises(LayerSetupError, match="blob 0 holds 2 values but the bottom has 3 channels"):
        layer.reshape([gaussian((1, 3, 2, 2))], [top])


def test_refuses_five_axes(run_layer, gaussian):
    with pytest.raises(LayerSetupError, match="at most 4 axes"):
        run(run_layer, gaussian((1, 2, 2, 2, 2)))


@pytest.mark.gpu
@pytest.mark.parametrize(("extra", "phase"), [("", caffe_pb2.TRAIN), ("", caffe_pb2.TEST),
                                              ("frozen: true", caffe_pb2.TRAIN)])
def test_gpu_matches_cpu(gpu_matches_cpu, gaussian, extra, phase):
    gpu_matches_cpu(bn_text(extra), [gaussian((2, 3, 4, 5)).cpu_data()], phase=phase, rtol=1e-4, atol=1e-5)
