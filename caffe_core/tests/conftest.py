"""What the core's test folders share: the caffe log captured, a copy-counting device, a tiny model."""

import logging

import numpy as np
import pytest

import caffe
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
