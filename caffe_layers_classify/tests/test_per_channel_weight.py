"""PerChannelWeight: loads per-channel weights; lets a dense weight past the shape check to refuse it."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import ModelFileError
from caffe_core.proto import caffe_pb2
from caffe_layers_classify.per_channel_weight import PerChannelWeight, dense_weight_message


def proto(shape, legacy=False) -> caffe_pb2.BlobProto:
    """A stored blob of `shape` holding 0, 1, 2, ... (legacy: in num/channels/height/width)."""
    stored = caffe_pb2.BlobProto()
    if legacy:
        stored.num, stored.channels, stored.height, stored.width = shape
    else:
        stored.shape.dim.extend(shape)
    stored.data.extend(range(int(np.prod(shape))))
    return stored


def weight(outputs=4, channels=2) -> PerChannelWeight:
    return PerChannelWeight(Blob((outputs, 1, 3, 3)), "layer 'dw'", channels)


def test_keeps_the_source_values():
    source = Blob((2, 1, 2, 2))
    source.mutable_cpu_data()[...] = np.arange(8).reshape(2, 1, 2, 2)
    kept = PerChannelWeight(source, "layer 'dw'", 2)
    assert kept.shape == (2, 1, 2, 2) and kept.dense_shape == (2, 2, 2, 2)
    np.testing.assert_array_equal(kept.cpu_data(), source.cpu_data())


@pytest.mark.parametrize("legacy", [False, True])
def test_per_channel_weight_loads(legacy):
    blob = weight()
    assert blob.shape_equals(proto((4, 1, 3, 3), legacy))
    blob.from_proto(proto((4, 1, 3, 3), legacy), reshape=False)
    np.testing.assert_array_equal(blob.cpu_data().ravel(), np.arange(36))


@pytest.mark.parametrize("legacy", [False, True])
def test_dense_weight_passes_the_shape_check_and_is_refused(legacy):
    blob = weight()
    assert blob.shape_equals(proto((4, 2, 3, 3), legacy))
    with pytest.raises(ModelFileError, match=r"^layer 'dw': the stored weight has shape \[4, 2, 3, 3\]"):
        blob.from_proto(proto((4, 2, 3, 3), legacy), reshape=False)


@pytest.mark.parametrize("shape", [(4, 3, 3, 3), (2, 1, 3, 3), (4, 1, 2, 2), (36,)])
def test_other_shapes_fail_the_shape_check(shape):
    assert not weight().shape_equals(proto(shape))


def test_one_channel_dense_and_per_channel_are_the_same_blob():
    blob = weight(outputs=3, channels=1)
    assert not blob.is_dense(proto((3, 1, 3, 3)))
    blob.from_proto(proto((3, 1, 3, 3)), reshape=False)
    assert blob.cpu_data()[2, 0, 2, 2] == 26


def test_message_names_shapes_both_fork_paths_and_the_fixes():
    message = dense_weight_message((8, 4, 3, 3), (8, 1, 3, 3))
    for part in ("[8, 4, 3, 3]", "shape [8, 1, 3, 3]", "on the CPU an ordinary convolution over all 4 input",
                 "W[0] read as shape [4, 1, 3, 3]", "type to Convolution"):
        assert part in message
