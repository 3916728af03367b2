"""pycaffe's `caffe.proto.caffe_pb2`: BVLC's message names (NetParameter, SolverParameter, ...)."""

from caffe_core.proto.caffe_pb2 import *  # noqa: F403
from caffe_core.proto.caffe_pb2 import DESCRIPTOR, TEST, TRAIN  # noqa: F401
