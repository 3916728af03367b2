"""Fillers: the statistics Caffe's test_filler.cpp checks, and their refusals."""

import numpy as np
import pytest

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.errors import CaffeError
from caffe_core.fillers import filler_types, get_filler
from caffe_core.fillers.base import fan_in_out
from caffe_core.proto import caffe_pb2


def fill(shape, **fields):
    blob = Blob(shape)
    get_filler(caffe_pb2.FillerParameter(**fields)).fill(blob)
    return blob.data


def test_all_seven_caffe_fillers_are_registered():
    assert {"constant", "uniform", "gaussian", "positive_unitball", "xavier", "msra", "bilinear"} <= set(
        filler_types())


def test_constant():
    assert np.all(fill((2, 3, 4, 5), type="constant", value=10.0) == 10.0)


def test_uniform_stays_in_range():
    data = fill((2, 3, 4, 5), type="uniform", min=1.0, max=2.0)
    assert data.min() >= 1.0 and data.max() <= 2.0 and data.std() > 0.1


def test_gaussian_moments():
    runtime.set_random_seed(3)
    data = fill((100, 100), type="gaussian", mean=10.0, std=0.1)
    assert abs(data.mean() - 10.0) < 0.01 and abs(data.std() - 0.1) < 0.01


def test_sparse_gaussian_keeps_expected_fraction():
    runtime.set_random_seed(3)
    data = fill((100, 200), type="gaussian", std=1.0, sparse=20)
    assert abs((data != 0).mean() - 20 / 100) < 0.02


def test_positive_unitball_rows_sum_to_one():
    data = fill((4, 3, 2, 5), type="positive_unitball")
    np.testing.assert_allclose(data.reshape(4, -1).sum(axis=1), 1.0, rtol=1e-5)
    assert data.min() >= 0


@pytest.mark.parametrize("norm, n", [(caffe_pb2.FillerParameter.FAN_IN, 3 * 4 * 5),
                                     (caffe_pb2.FillerParameter.FAN_OUT, 100 * 4 * 5),
                                     (caffe_pb2.FillerParameter.AVERAGE, (60 + 2000) / 2)])
def test_xavier_scale_follows_variance_norm(norm, n):
    data = fill((100, 3, 4, 5), type="xavier", variance_norm=norm)
    scale = np.sqrt(3.0 / n)
    assert data.max() <= scale and data.min() >= -scale
    assert abs(data.std() - scale / np.sqrt(3)) < 0.05 * scale


@pytest.mark.parametrize("norm, n", [(caffe_pb2.FillerParameter.FAN_IN, 3 * 4 * 5),
                                     (caffe_pb2.FillerParameter.FAN_OUT, 100 * 4 * 5)])
def test_msra_std_follows_variance_norm(norm, n):
    data = fill((100, 3, 4, 5), type="msra", variance_norm=norm)
    assert abs(data.std() - np.sqrt(2.0 / n)) < 0.05 * np.sqrt(2.0 / n)


def test_bilinear_kernel_of_size_4():
    data = fill((1, 1, 4, 4), type="bilinear")
    ramp = np.array([0.25, 0.75, 0.75, 0.25])
    np.testing.assert_allclose(data[0, 0], np.outer(ramp, ramp))


def test_bilinear_refuses_non_square():
    with pytest.raises(CaffeError, match="square"):
        fill((1, 1, 3, 4), type="bilinear")


def test_sparse_only_for_gaussian():
    with pytest.raises(CaffeError, match="sparse"):
        get_filler(caffe_pb2.FillerParameter(type="uniform", sparse=3))


def test_unknown_filler_suggests_the_closest():
    with pytest.raises(CaffeError, match="did you mean 'xavier'"):
        get_filler(caffe_pb2.FillerParameter(type="xavir"))


def test_a_plugin_adds_a_filler():
    from types import SimpleNamespace

    from caffe_core import plugins
    from caffe_core.fillers.base import Filler
    from caffe_core.hookspecs import hookimpl

    class CountingFiller(Filler):
        def fill(self, blob):
            blob.mutable_cpu_data()[...] = np.arange(blob.count).reshape(blob.shape)

    plugin = SimpleNamespace(caffe_fillers=hookimpl(lambda: {"counting": CountingFiller}))
    plugins.register_plugin(plugin, name="test-counting-filler")
    try:
        np.testing.assert_array_equal(fill((2, 2), type="counting"), [[0, 1], [2, 3]])
    finally:
        plugins.unregister_plugin(plugin)
    assert "counting" not in filler_types()


def seeded_fill(seed, shape, **fields):
    runtime.set_random_seed(seed)
    return fill(shape, **fields)


def seeded_stream(seed):
    runtime.set_random_seed(seed)
    return runtime.rng()


FAN_IN, FAN_OUT, AVERAGE = (caffe_pb2.FillerParameter.FAN_IN, caffe_pb2.FillerParameter.FAN_OUT,
                            caffe_pb2.FillerParameter.AVERAGE)


@pytest.mark.parametrize("shape, fan_in, fan_out", [((10, 3, 4, 5), 60, 200), ((4, 6), 6, 4), ((5,), 1, 5),
                                                    ((), 1, 1)])
def test_fan_in_and_fan_out_are_caffes(shape, fan_in, fan_out):
    # Caffe: fan_in = count / shape(0), fan_out = count / shape(1), or count for a blob of one axis. A blob of
    # no axes (whose shape(0) Caffe refuses) counts n = 1 here.
    blob = Blob(shape)
    assert fan_in_out(blob, FAN_IN) == fan_in and fan_in_out(blob, FAN_OUT) == fan_out
    assert fan_in_out(blob, AVERAGE) == np.float32((fan_in + fan_out) / 2)


def test_an_empty_blob_is_refused_and_a_single_value_is_filled():
    with pytest.raises(CaffeError, match="^cannot fill an empty blob$"):
        fill((0, 3), type="xavier")
    # One value: n = 1, so xavier draws from U(-sqrt(3), sqrt(3)).
    data = seeded_fill(5, (1, 1), type="xavier")
    np.testing.assert_array_equal(data, seeded_stream(5).uniform((1, 1), -np.sqrt(np.float32(3)),
                                                                 np.sqrt(np.float32(3))))


@pytest.mark.parametrize("norm, n", [(FAN_IN, 12), (FAN_OUT, 8), (AVERAGE, 10)])
def test_xavier_draws_uniform_within_sqrt_3_over_n(norm, n):
    data = seeded_fill(7, (2, 3, 2, 2), type="xavier", variance_norm=norm)
    scale = np.sqrt(np.float32(3) / np.float32(n))
    np.testing.assert_array_equal(data, seeded_stream(7).uniform((2, 3, 2, 2), -scale, scale))


@pytest.mark.parametrize("norm, n", [(FAN_IN, 12), (FAN_OUT, 8), (AVERAGE, 10)])
def test_msra_draws_a_zero_mean_gaussian_of_std_sqrt_2_over_n(norm, n):
    data = seeded_fill(7, (2, 3, 2, 2), type="msra", variance_norm=norm)
    std = np.sqrt(np.float32(2) / np.float32(n))
    np.testing.assert_array_equal(data, seeded_stream(7).gaussian((2, 3, 2, 2), 0.0, std))


def test_positive_unitball_divides_each_row_of_uniform_draws_by_its_sum():
    data = seeded_fill(11, (3, 2, 2), type="positive_unitball")
    draws = seeded_stream(11).uniform((3, 4), 0.0, 1.0)
    np.testing.assert_allclose(data.reshape(3, 4), draws / draws.sum(axis=1, keepdims=True), rtol=1e-6)
    # A blob without axes is one row of one value.
    assert fill((), type="positive_unitball") == 1.0


@pytest.mark.parametrize("width, ramp", [(3, [0.5, 1, 0.5]), (5, [1 / 3, 2 / 3, 1, 2 / 3, 1 / 3]),
                                         (4, [0.25, 0.75, 0.75, 0.25])])
def test_bilinear_kernels_follow_caffes_formula_in_every_slice(width, ramp):
    # Caffe: f = ceil(k / 2), c = (k - 1) / (2f), weight(x, y) = (1 - |x/f - c|) (1 - |y/f - c|).
    data = fill((2, 3, width, width), type="bilinear")
    expected = np.broadcast_to(np.outer(ramp, ramp), (2, 3, width, width))
    np.testing.assert_allclose(data, expected, rtol=1e-6)


def test_bilinear_refuses_a_blob_that_is_not_4d():
    with pytest.raises(CaffeError, match=r"bilinear filler needs a 4-D blob, got shape \(3, 3\)$"):
        fill((3, 3), type="bilinear")


def test_sparse_gaussian_masks_the_gaussian_draws_with_bernoulli_draws():
    # sparse 2 of shape[0] 4: each value kept with probability 2/4, the mask drawn after the values.
    data = seeded_fill(13, (4, 5), type="gaussian", mean=1.0, std=2.0, sparse=2)
    stream = seeded_stream(13)
    values = stream.gaussian((4, 5), 1.0, 2.0)
    np.testing.assert_array_equal(data, values * stream.bernoulli((4, 5), 0.5))
    assert 0 < (data != 0).sum() < 20


def test_sparse_zero_zeroes_everything_and_minus_one_is_dense():
    assert not fill((4, 5), type="gaussian", sparse=0).any()
    assert fill((4, 5), type="gaussian", sparse=-1).all()
    # sparse needs an axis to count outputs along; one axis is enough.
    assert fill((4,), type="gaussian", sparse=4).all()
    with pytest.raises(CaffeError, match="^gaussian filler: sparse needs a blob with at least one axis$"):
        fill((), type="gaussian", sparse=0)


def test_sparse_below_minus_one_is_refused():
    with pytest.raises(CaffeError, match="^gaussian filler: sparse must be >= -1, got -2$"):
        fill((4, 5), type="gaussian", sparse=-2)


def test_an_unknown_filler_with_no_close_name_lists_the_known_ones():
    with pytest.raises(CaffeError) as error:
        get_filler(caffe_pb2.FillerParameter(type="qqqqqqqq"))
    known = ", ".join(sorted(filler_types()))
    assert str(error.value) == f"Unknown filler type 'qqqqqqqq' (known: {known})"
    # Packs may add fillers (caffe-layers-face: gaussian_unitball); BVLC's seven are always there.
    assert {"bilinear", "constant", "gaussian", "msra", "positive_unitball", "uniform", "xavier"} <= set(
        filler_types())
