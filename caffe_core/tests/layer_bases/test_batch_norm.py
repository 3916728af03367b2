"""BatchNormLayerBase: batch_norm_param, the stored statistics, their scale factor and running update."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.device import CPU
from caffe_core.errors import LayerSetupError
from caffe_core.layer_bases.batch_norm import BatchNormLayerBase
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text


class Statistics(BatchNormLayerBase):
    type = "TestBatchNorm"

    def layer_setup(self, bottom, top):
        self.read_batch_norm_param(bottom)
        self.create_statistics()


def batch_norm(text="", phase=caffe_pb2.TRAIN):
    param = parse_text(f'name: "bn" type: "TestBatchNorm" batch_norm_param {{ {text} }}',
                       caffe_pb2.LayerParameter())
    param.phase = phase
    return Statistics(param)


def set_up(layer, shape=(2, 3, 4)):
    bottom, top = Blob(shape), Blob()
    layer.setup([bottom], [top])
    return bottom, top


@pytest.mark.parametrize(("text", "phase", "expected"), [
    ("", caffe_pb2.TRAIN, False), ("", caffe_pb2.TEST, True),
    ("use_global_stats: true", caffe_pb2.TRAIN, True), ("use_global_stats: false", caffe_pb2.TEST, False)])
def test_global_statistics_default_to_test(text, phase, expected):
    layer = batch_norm(text, phase)
    set_up(layer)
    assert layer.use_global_stats is expected


def test_parameters_are_float32():
    layer = batch_norm("eps: 0.1 moving_average_fraction: 0.9")
    set_up(layer)
    assert (layer.eps, layer.moving_average_fraction) == (np.float32(0.1), np.float32(0.9))
    assert isinstance(layer.eps, np.float32)


@pytest.mark.parametrize(("shape", "channels"), [((2, 3, 4), 3), ((5,), 1), ((2, 7), 7)])
def test_statistics_are_zeroed_per_channel(shape, channels):
    layer = batch_norm()
    set_up(layer, shape)
    assert [blob.shape for blob in layer.blobs] == [(channels,), (channels,), (1,)]
    assert not any(blob.cpu_data().any() for blob in layer.blobs)


def test_stored_statistics_are_kept():
    layer = batch_norm()
    layer.blobs = [Blob((3,))]
    set_up(layer)
    assert len(layer.blobs) == 1


@pytest.mark.parametrize(("scale", "factor"), [(2.0, 0.5), (0.0, 0.0)])
def test_stored_statistics_divide_by_the_scale_factor(scale, factor):
    layer = batch_norm()
    set_up(layer)
    layer.blobs[0].mutable_cpu_data()[...] = [2, 4, 6]
    layer.blobs[1].mutable_cpu_data()[...] = [8, 10, 12]
    layer.blobs[2].mutable_cpu_data()[...] = scale
    mean, variance = layer.stored_statistics(CPU)
    np.testing.assert_array_equal(mean, np.float32([2, 4, 6]) * np.float32(factor))
    np.testing.assert_array_equal(variance, np.float32([8, 10, 12]) * np.float32(factor))


def test_running_update():
    layer = batch_norm("moving_average_fraction: 0.5")
    set_up(layer)
    layer.blobs[0].mutable_cpu_data()[...] = [2, 2, 2]
    layer.blobs[1].mutable_cpu_data()[...] = [4, 4, 4]
    layer.blobs[2].mutable_cpu_data()[...] = 3
    mean, variance = np.float32([1, 2, 3]), np.float32([3, 6, 9])
    layer.update_running_statistics(CPU, mean, variance, 4)
    np.testing.assert_array_equal(layer.blobs[2].cpu_data(), [2.5])
    np.testing.assert_array_equal(layer.blobs[0].cpu_data(), [2, 3, 4])
    np.testing.assert_array_equal(layer.blobs[1].cpu_data(), np.float32(4) / np.float32(3) * variance + 2)
    layer.update_running_statistics(CPU, mean, variance, 1)
    np.testing.assert_array_equal(layer.blobs[2].cpu_data(), [2.25])


def test_the_channel_count_may_not_change():
    layer = batch_norm()
    bottom, top = set_up(layer, (2, 3, 4))
    layer.reshape([Blob((5, 3, 2))], [top])
    assert top.shape == (5, 3, 2)
    message = r"'bn'.*bottom has 4 channels \(shape \[2, 4\]\); the layer was set up for 3"
    with pytest.raises(LayerSetupError, match=message):
        layer.reshape([Blob((2, 4))], [top])
