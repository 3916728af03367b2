"""Fillers: the statistics Caffe's test_filler.cpp checks, and their refusals."""

import numpy as np
import pytest

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.errors import CaffeError
from caffe_core.fillers import filler_types, get_filler
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
        plugins.plugin_manager().unregister(plugin)
        plugins.refresh()
    assert "counting" not in filler_types()
