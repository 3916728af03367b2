"""The Filler base class."""

from __future__ import annotations

import numpy as np

from caffe_core.blob import Blob
from caffe_core.errors import CaffeError
from caffe_core.proto import caffe_pb2


class Filler:
    """Fills a blob's data from a FillerParameter; only the gaussian filler accepts `sparse`."""

    supports_sparse = False

    def __init__(self, param: caffe_pb2.FillerParameter) -> None:
        self.param = param
        if not self.supports_sparse and param.sparse != -1:
            raise CaffeError(f"filler '{param.type}' does not support sparse (got sparse: {param.sparse})")

    def fill(self, blob: Blob) -> None:
        """Writes values into blob's data."""
        raise NotImplementedError


def fan_in_out(blob: Blob, variance_norm: int) -> np.float32:
    """Caffe's n for xavier/msra, in float: fan_in = count/num, fan_out = count/channels (integer
    divisions), or their average."""
    if blob.count == 0:
        raise CaffeError("cannot fill an empty blob")
    fan_in = blob.count // blob.shape_at(0) if blob.num_axes else blob.count
    fan_out = blob.count // blob.shape_at(1) if blob.num_axes > 1 else blob.count
    if variance_norm == caffe_pb2.FillerParameter.AVERAGE:
        return np.float32(np.float32(fan_in + fan_out) / np.float32(2))
    if variance_norm == caffe_pb2.FillerParameter.FAN_OUT:
        return np.float32(fan_out)
    return np.float32(fan_in)
