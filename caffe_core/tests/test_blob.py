"""Blob: shapes, capacity reuse, sharing, arithmetic and (legacy) serialisation."""

import numpy as np
import pytest

from caffe_core.blob import MAX_BLOB_AXES, Blob, proto_shape
from caffe_core.proto import caffe_pb2


def test_default_blob_is_empty():
    blob = Blob()
    assert blob.shape == () and blob.count == 0


def test_shape_count_and_axes():
    blob = Blob((2, 3, 4, 5))
    assert blob.count == 120
    assert blob.count_between(1, 3) == 12
    assert blob.count_between(2) == 20
    assert blob.canonical_axis_index(-1) == 3
    assert blob.shape_at(-3) == 3
    assert (blob.num, blob.channels, blob.height, blob.width) == (2, 3, 4, 5)
    with pytest.raises(ValueError, match="axis 4 out of range"):
        blob.canonical_axis_index(4)


def test_legacy_accessors_pad_with_ones():
    blob = Blob((7, 3))
    assert (blob.num, blob.channels, blob.height, blob.width) == (7, 3, 1, 1)


def test_zero_axis_blob_has_one_element():
    blob = Blob(())
    assert blob.count == 1 and blob.data.shape == ()


def test_too_many_axes_and_negative_dims_are_refused():
    with pytest.raises(ValueError, match="at most 32"):
        Blob((1,) * (MAX_BLOB_AXES + 1))
    with pytest.raises(ValueError, match="negative"):
        Blob((2, -1))


def test_reshape_reuses_capacity_and_keeps_memory():
    blob = Blob((4, 5))
    memory = blob.data_memory
    blob.data[...] = 1
    blob.reshape((2, 5))
    assert blob.data_memory is memory
    assert blob.data.shape == (2, 5) and blob.data.sum() == 10
    blob.reshape((5, 5))
    assert blob.data_memory is not memory


def test_data_is_a_writable_view():
    blob = Blob((2, 2))
    view = blob.data
    view[0, 1] = 7
    assert blob.cpu_data()[0, 1] == 7


def test_lazy_allocation_is_zero_filled():
    blob = Blob((3,))
    assert blob.data_memory.head.name == "UNINITIALIZED"
    assert np.all(blob.diff == 0)


def test_update_subtracts_diff():
    blob = Blob((3,))
    blob.data[...] = [1, 2, 3]
    blob.diff[...] = [0.5, 0.5, 1]
    blob.update()
    np.testing.assert_array_equal(blob.data, [0.5, 1.5, 2])


def test_asum_sumsq_and_scale():
    blob = Blob((4,))
    blob.data[...] = [1, -2, 3, -4]
    blob.diff[...] = [-1, 1, -1, 1]
    assert blob.asum_data() == 10 and blob.sumsq_data() == 30
    assert blob.asum_diff() == 4 and blob.sumsq_diff() == 4
    blob.scale_data(0.5)
    blob.scale_diff(-2)
    np.testing.assert_array_equal(blob.data, [0.5, -1, 1.5, -2])
    np.testing.assert_array_equal(blob.diff, [2, -2, 2, -2])


def test_share_data_and_diff():
    a, b = Blob((2, 3)), Blob((6,))
    b.share_data(a)
    b.share_diff(a)
    a.data[...] = 5
    a.diff[...] = 2
    assert b.data.sum() == 30 and b.diff.sum() == 12
    with pytest.raises(ValueError, match="equal counts"):
        Blob((5,)).share_data(a)


def test_proto_round_trip_with_diff():
    blob = Blob((2, 3))
    blob.data[...] = np.arange(6).reshape(2, 3)
    blob.diff[...] = -np.arange(6).reshape(2, 3)
    proto = blob.to_proto(write_diff=True)
    assert list(proto.shape.dim) == [2, 3]
    other = Blob()
    other.from_proto(caffe_pb2.BlobProto.FromString(proto.SerializeToString()))
    np.testing.assert_array_equal(other.data, blob.data)
    np.testing.assert_array_equal(other.diff, blob.diff)


def test_legacy_4d_proto_matches_trailing_axes():
    proto = caffe_pb2.BlobProto(num=1, channels=1, height=3, width=4)
    proto.data.extend(range(12))
    assert proto_shape(proto) == (1, 1, 3, 4)
    assert Blob((3, 4)).shape_equals(proto)
    assert not Blob((4, 3)).shape_equals(proto)
    bias = caffe_pb2.BlobProto(num=1, channels=1, height=1, width=4)
    assert Blob((4,)).shape_equals(bias)
    weights = Blob((3, 4))
    weights.from_proto(proto, reshape=False)
    assert weights.data[2, 3] == 11


def test_double_data_and_double_diff_are_preferred():
    # Caffe's Blob::FromProto reads double_data/double_diff when they are present.
    proto = caffe_pb2.BlobProto()
    proto.shape.dim.append(2)
    proto.double_data.extend([0.25, 0.5])
    proto.diff.extend([9.0, 9.0])
    proto.double_diff.extend([-1.5, 2.0])
    blob = Blob()
    blob.from_proto(proto)
    np.testing.assert_array_equal(blob.data, [0.25, 0.5])
    np.testing.assert_array_equal(blob.diff, [-1.5, 2.0])


def test_double_diff_alone_is_read():
    proto = caffe_pb2.BlobProto()
    proto.shape.dim.append(3)
    proto.data.extend([1.0, 2.0, 3.0])
    proto.double_diff.extend([0.5, 0.25, 0.125])
    blob = Blob()
    blob.from_proto(proto)
    np.testing.assert_array_equal(blob.diff, [0.5, 0.25, 0.125])


def test_from_proto_without_reshape_reports_mismatch():
    proto = Blob((2, 2)).to_proto()
    with pytest.raises(ValueError, match="shape mismatch"):
        Blob((4,)).from_proto(proto, reshape=False)
