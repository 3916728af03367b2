"""Net definitions and trained nets read from files, upgraded from older formats as Caffe upgrades them."""

from __future__ import annotations

import os

from caffe_core import proto_io
from caffe_core.proto import caffe_pb2
from caffe_core.upgrade import upgrade_net_as_needed


def read_net_param(path: str | os.PathLike) -> caffe_pb2.NetParameter:
    """Reads a text net definition and applies Caffe's upgrades."""
    param = proto_io.read_text_file(path, caffe_pb2.NetParameter())
    upgrade_net_as_needed(param, os.fspath(path))
    return param


def read_net_binary(path: str | os.PathLike) -> caffe_pb2.NetParameter:
    """Reads a binary net (.caffemodel) and applies Caffe's upgrades."""
    param = proto_io.read_binary_file(path, caffe_pb2.NetParameter())
    upgrade_net_as_needed(param, os.fspath(path))
    return param
