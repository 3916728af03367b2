"""Helpers for the pycaffe facade's tests: layer-type skips, net files, and the tiny InnerProduct model."""

import numpy as np
import pytest

import caffe
from caffe_core.testing.layers import require_layer_types


def require_layers(*types: str) -> None:
    """Skips the calling test when no installed pack provides a type; a broken installed pack fails it."""
    require_layer_types(*types)


def write_net(tmp_path, net_param, name: str = "net.prototxt"):
    """Writes a NetParameter as a prototxt file and returns its path."""
    path = tmp_path / name
    path.write_text(str(net_param))
    return str(path)


TINY_IP_NET = """
name: "tiny"
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 3 dim: 4 dim: 4 } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
        inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.1 }
                              bias_filler { type: "constant" value: 0.25 } } }
"""
MEAN = np.array([10.0, 20.0, 30.0])


@pytest.fixture
def model(tmp_path):
    """(prototxt, caffemodel) of a TEST net: a 2 x 3 x 4 x 4 input into a 3-output InnerProduct."""
    require_layers("InnerProduct")
    model_file = tmp_path / "tiny.prototxt"
    model_file.write_text(TINY_IP_NET)
    weights_file = tmp_path / "tiny.caffemodel"
    caffe.Net(str(model_file), caffe.TEST).save(str(weights_file))
    return str(model_file), str(weights_file)


def tiny_ip_scores(net, caffe_in):
    """The InnerProduct outputs of the tiny net for preprocessed inputs, computed in float64."""
    weight, bias = (b.data.astype(np.float64) for b in net.params["ip"])
    return caffe_in.reshape(len(caffe_in), -1) @ weight.T + bias
