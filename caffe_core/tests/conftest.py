"""What the core's test folders share: the caffe log captured, a copy-counting device, a tiny model, and small
test layers with which the net tests build their nets."""

import logging

import numpy as np
import pytest

import caffe
from caffe_core import proto_io, registry
from caffe_core.blob import Blob
from caffe_core.layer import Layer
from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.testing.layers import require_layer_types

TINY_IP_NET = """
name: "tiny"
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 3 dim: 4 dim: 4 } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
        inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.1 }
                              bias_filler { type: "constant" value: 0.25 } } }
"""


class CountingDevice:
    """A stand-in device backend: numpy arrays as 'device' memory, counting every copy."""

    xp = np

    def __init__(self):
        self.to_device = 0
        self.to_host = 0

    def zeros(self, count, dtype):
        return np.zeros(count, dtype=dtype)

    def copy_to_device(self, host, device):
        self.to_device += 1
        device[...] = host

    def copy_to_host(self, device, host):
        self.to_host += 1
        host[...] = device

    def seed(self, seed):
        pass


@pytest.fixture
def caffe_log(caplog) -> pytest.LogCaptureFixture:
    """Captures the caffe loggers at INFO (they do not propagate once init_log has run)."""
    logger = logging.getLogger("caffe")
    before = logger.propagate
    logger.propagate = True
    caplog.set_level(logging.INFO, logger="caffe")
    yield caplog
    logger.propagate = before


@pytest.fixture
def model(tmp_path):
    """(prototxt, caffemodel) of a TEST net: a 2 x 3 x 4 x 4 input into a 3-output InnerProduct."""
    require_layer_types("InnerProduct")
    model_file = tmp_path / "tiny.prototxt"
    model_file.write_text(TINY_IP_NET)
    weights_file = tmp_path / "tiny.caffemodel"
    caffe.Net(str(model_file), caffe.TEST).save(str(weights_file))
    return str(model_file), str(weights_file)


class ScaleByParam(Layer):
    """Test layer: top = w * bottom with one learnable scalar w (initialised to 2)."""

    type = "TestScale"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def layer_setup(self, bottom, top):
        if not self.blobs:
            self.blobs.append(Blob((1,)))
            self.blobs[0].data[...] = 2

    def reshape(self, bottom, top):
        top[0].reshape_like(bottom[0])

    def forward_on(self, side, bottom, top):
        top[0].mutable_data_on(side)[...] = self.blobs[0].data_on(side) * bottom[0].data_on(side)

    def backward_on(self, side, top, propagate_down, bottom):
        if self.param_propagate_down(0):
            self.blobs[0].mutable_diff_on(side)[...] += (top[0].diff_on(side) * bottom[0].data_on(side)).sum()
        if propagate_down[0]:
            bottom[0].mutable_diff_on(side)[...] = self.blobs[0].data_on(side) * top[0].diff_on(side)


class SumLoss(Layer):
    """Test loss: the sum of all bottoms, loss_weight 1 by default."""

    type = "TestSumLoss"
    min_bottom_blobs = 1
    exact_num_top_blobs = 1

    def layer_setup(self, bottom, top):
        if not self.layer_param.loss_weight:
            self.layer_param.loss_weight.append(1.0)

    def reshape(self, bottom, top):
        top[0].reshape(())

    def forward_cpu(self, bottom, top):
        top[0].mutable_cpu_data()[...] = sum(float(b.cpu_data().sum()) for b in bottom)

    def backward_cpu(self, top, propagate_down, bottom):
        for b, down in zip(bottom, propagate_down, strict=True):
            if down:
                b.mutable_cpu_diff()[...] = top[0].cpu_diff()

    def allow_force_backward(self, bottom_index):
        return bottom_index == 0


class LossWithAux(SumLoss):
    """Test loss with a second output top whose diff backward ignores, as Caffe's softmax losses."""

    type = "TestLossWithAux"
    exact_num_top_blobs = 2
    backward_ignores_tops = (1,)

    def layer_setup(self, bottom, top):
        self.layer_param.loss_weight.extend([1.0, 0.0])

    def reshape(self, bottom, top):
        top[0].reshape(())
        top[1].reshape_like(bottom[0])


NET_TEST_LAYERS = (ScaleByParam, SumLoss, LossWithAux)
# A 2 x 3 input "x", the first layer of the net tests' nets.
INPUT = 'layer { name: "data" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 } } }\n'


@pytest.fixture
def net_test_layers():
    """Registers TestScale, TestSumLoss and TestLossWithAux for one test."""
    for cls in NET_TEST_LAYERS:
        registry.register_layer(cls.type, cls)
    yield
    for cls in NET_TEST_LAYERS:
        registry.unregister_layer(cls.type)


def build(text: str, phase=caffe_pb2.TEST, **kwargs) -> Net:
    """A Net of a prototxt text, in TEST phase unless told."""
    return Net(proto_io.parse_text(text, caffe_pb2.NetParameter()), phase=phase, **kwargs)
