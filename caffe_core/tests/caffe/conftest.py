"""Helpers for the pycaffe facade's tests: layer-type skips, net files, the tiny model's expected scores."""

import numpy as np

from caffe_core.testing.layers import require_layer_types


def require_layers(*types: str) -> None:
    """Skips the calling test when no installed pack provides a type; a broken installed pack fails it."""
    require_layer_types(*types)


def write_net(tmp_path, net_param, name: str = "net.prototxt"):
    """Writes a NetParameter as a prototxt file and returns its path."""
    path = tmp_path / name
    path.write_text(str(net_param))
    return str(path)


MEAN = np.array([10.0, 20.0, 30.0])


def tiny_ip_scores(net, caffe_in):
    """The InnerProduct outputs of the tiny net for preprocessed inputs, computed in float64."""
    weight, bias = (b.data.astype(np.float64) for b in net.params["ip"])
    return caffe_in.reshape(len(caffe_in), -1) @ weight.T + bias
