"""Blob: shapes, capacity reuse, sharing, arithmetic and (legacy) serialisation."""

import numpy as np
import pytest

from caffe_core.blob import BLOB_DATA_FIELD, MAX_BLOB_AXES, Blob, _append_packed_floats, proto_shape
from caffe_core.device import CPU, GPU
from caffe_core.proto import caffe_pb2
from caffe_core.synced_memory import Head

from .conftest import CountingDevice


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


def test_default_blob_memory_is_empty_float32_on_the_given_backend():
    device = CountingDevice()
    blob = Blob(backend=device)
    for memory in (blob.data_memory, blob.diff_memory):
        assert memory.count == 0 and memory.dtype == np.float32 and memory.backend is device
    blob.reshape((2, 3))
    assert blob.data_memory.backend is device and blob.diff_memory.backend is device
    assert blob.data_memory.count == 6 and blob.diff_memory.count == 6


def test_reshape_takes_pycaffe_dims_and_caffes_limits():
    blob = Blob()
    blob.reshape(5)
    assert blob.shape == (5,)
    blob.reshape(np.int64(4))
    assert blob.shape == (4,)
    blob.reshape(2, 3)
    assert blob.shape == (2, 3)
    # Caffe's Reshape: CHECK_LE(shape.size(), kMaxBlobAxes) and CHECK_GE(shape[i], 0): 32 axes and 0 are fine.
    assert Blob((1,) * MAX_BLOB_AXES).num_axes == MAX_BLOB_AXES
    empty = Blob((2, 0, 3))
    assert empty.count == 0 and empty.data.shape == (2, 0, 3)


def test_reshape_like_takes_the_other_shape():
    blob = Blob((4,))
    blob.reshape_like(Blob((2, 3, 1)))
    assert blob.shape == (2, 3, 1) and blob.count == 6


def test_count_between_bounds_as_caffes_count():
    blob = Blob((2, 3, 4, 5))
    assert blob.count_between(0) == 120
    assert blob.count_between(0, 0) == 1 and blob.count_between(4, 4) == 1
    assert blob.count_between(1, 4) == 60
    for start, end in ((2, 1), (-1, 2), (0, 5), (5, 5)):
        with pytest.raises(ValueError, match=rf"axis range \[{start}, {end}\) is outside a 4-axis blob"):
            blob.count_between(start, end)


def test_canonical_axis_index_accepts_minus_num_axes_and_refuses_beyond():
    blob = Blob((2, 3, 4))
    assert [blob.canonical_axis_index(a) for a in (-3, -2, -1, 0, 2)] == [0, 1, 2, 0, 2]
    assert blob.shape_at(-3) == 2
    with pytest.raises(ValueError, match=r"axis -4 out of range for a 3-axis blob of shape \(2, 3, 4\)"):
        blob.canonical_axis_index(-4)


def test_legacy_shape_counts_negative_indices_from_the_end():
    # Caffe's LegacyShape: 1 when index >= num_axes or index < -num_axes, else shape(index).
    blob = Blob((7, 3))
    assert [blob.legacy_shape(i) for i in (-4, -3, -2, -1)] == [1, 1, 7, 3]
    assert (Blob(()).num, Blob(()).channels, Blob(()).height, Blob(()).width) == (1, 1, 1, 1)
    assert Blob((2, 3, 4, 5)).legacy_shape(-4) == 2


def test_legacy_accessors_refuse_more_than_four_axes():
    blob = Blob((1, 2, 3, 4, 5))
    for accessor in ("num", "channels", "height", "width"):
        with pytest.raises(ValueError, match=r"at most 4 axes; the blob has shape \(1, 2, 3, 4, 5\)"):
            getattr(blob, accessor)


def test_offset_is_caffes_row_major_index():
    blob = Blob((2, 3, 4, 5))
    # Caffe: ((n * channels() + c) * height() + h) * width() + w; missing trailing indices count as 0.
    assert blob.offset(1, 2, 3, 4) == ((1 * 3 + 2) * 4 + 3) * 5 + 4 == 119
    assert blob.offset(1, 2) == 100
    assert blob.offset(1) == 60
    assert blob.offset() == 0
    assert Blob((6,)).offset(5) == 5
    flat = blob.data.reshape(-1)
    flat[...] = np.arange(120)
    assert blob.data[1, 0, 2, 3] == blob.offset(1, 0, 2, 3)


def test_share_diff_and_set_data_memory_refuse_wrong_counts():
    a = Blob((2, 3))
    with pytest.raises(ValueError, match="share_diff needs equal counts, got 5 and 6"):
        Blob((5,)).share_diff(a)
    with pytest.raises(ValueError, match="set_data_memory needs at least 6 values, got 4"):
        a.set_data_memory(Blob((4,)).data_memory)


def test_gpu_accessors_view_the_device_copy_in_the_blob_shape():
    device = CountingDevice()
    blob = Blob((2, 3), backend=device)
    blob.data[...] = np.arange(6).reshape(2, 3)
    blob.diff[...] = 1
    np.testing.assert_array_equal(blob.gpu_data(), np.arange(6).reshape(2, 3))
    assert blob.gpu_diff().shape == (2, 3) and device.to_device == 2
    blob.mutable_gpu_data()[0, 0] = 9
    blob.mutable_gpu_diff()[1, 2] = 4
    assert blob.data_memory.head is Head.HEAD_AT_GPU and blob.diff_memory.head is Head.HEAD_AT_GPU
    assert not blob.host_data_current()
    assert blob.cpu_data()[0, 0] == 9 and blob.cpu_diff()[1, 2] == 4


def test_side_accessors_go_to_the_device_for_the_gpu_side():
    device = CountingDevice()
    blob = Blob((3,), backend=device)
    blob.data[...] = [1, 2, 3]
    blob.diff[...] = [4, 5, 6]
    np.testing.assert_array_equal(blob.data_on(GPU), [1, 2, 3])
    np.testing.assert_array_equal(blob.diff_on(GPU), [4, 5, 6])
    assert blob.data_memory.head is Head.SYNCED and blob.diff_memory.head is Head.SYNCED
    blob.mutable_data_on(GPU)[...] = 0
    blob.mutable_diff_on(GPU)[...] = 0
    assert blob.data_memory.head is Head.HEAD_AT_GPU and blob.diff_memory.head is Head.HEAD_AT_GPU
    blob.mutable_data_on(CPU)
    blob.mutable_diff_on(CPU)
    assert blob.data_memory.head is Head.HEAD_AT_CPU and blob.diff_memory.head is Head.HEAD_AT_CPU


def test_update_runs_where_caffes_update_does():
    # Caffe's Blob::Update switches on the data head: on the device when the data is there, else on the host.
    device = CountingDevice()
    blob = Blob((2,), backend=device)
    blob.mutable_gpu_data()[...] = [5, 7]
    blob.mutable_gpu_diff()[...] = [1, 2]
    blob.update()
    assert device.to_host == 0 and blob.data_memory.head is Head.HEAD_AT_GPU
    np.testing.assert_array_equal(blob.gpu_data(), [4, 5])

    synced = Blob((2,), backend=device)
    synced.data[...] = [3, 3]
    synced.gpu_data()
    synced.mutable_gpu_diff()[...] = [1, -1]
    synced.update()
    assert synced.data_memory.head is Head.HEAD_AT_GPU and synced.diff_memory.head is Head.HEAD_AT_GPU
    np.testing.assert_array_equal(synced.cpu_data(), [2, 4])

    on_host = Blob((2,), backend=device)
    on_host.data[...] = [3, 3]
    on_host.mutable_gpu_diff()[...] = [2, 1]
    on_host.update()
    assert on_host.data_memory.head is Head.HEAD_AT_CPU
    np.testing.assert_array_equal(on_host.data, [1, 2])


def test_reductions_and_scaling_use_the_device_copy_when_it_is_current():
    device = CountingDevice()
    blob = Blob((3,), backend=device)
    blob.mutable_gpu_data()[...] = [1, -2, 2]
    blob.mutable_gpu_diff()[...] = [-3, 0, 4]
    assert blob.asum_data() == 5 and blob.sumsq_data() == 9
    assert blob.asum_diff() == 7 and blob.sumsq_diff() == 25
    blob.scale_data(2)
    blob.scale_diff(-1)
    assert device.to_host == 0
    assert blob.data_memory.head is Head.HEAD_AT_GPU and blob.diff_memory.head is Head.HEAD_AT_GPU
    np.testing.assert_array_equal(blob.cpu_data(), [2, -4, 4])
    np.testing.assert_array_equal(blob.cpu_diff(), [3, 0, -4])


def test_asum_of_an_empty_blob_is_zero():
    assert Blob().asum_data() == 0.0 and Blob().asum_diff() == 0.0
    assert Blob((0, 3)).asum_data() == 0.0 and Blob((0, 3)).asum_diff() == 0.0


def test_empty_proto_is_a_zero_axis_shape():
    proto = caffe_pb2.BlobProto()
    assert proto_shape(proto) == ()
    assert Blob(()).shape_equals(proto)
    assert not Blob((1,)).shape_equals(proto)


def test_any_legacy_field_makes_a_legacy_4d_shape():
    # Caffe reads num/channels/height/width as soon as one of them is set; unset ones are 0.
    assert proto_shape(caffe_pb2.BlobProto(channels=2)) == (0, 2, 0, 0)
    assert proto_shape(caffe_pb2.BlobProto(height=3)) == (0, 0, 3, 0)
    assert proto_shape(caffe_pb2.BlobProto(width=4)) == (0, 0, 0, 4)
    assert not Blob((3, 4)).shape_equals(caffe_pb2.BlobProto(height=3, width=4))
    assert Blob((0, 0, 3, 4)).shape_equals(caffe_pb2.BlobProto(height=3, width=4))
    assert Blob((0, 2, 0, 0)).shape_equals(caffe_pb2.BlobProto(channels=2))


def test_legacy_proto_matches_four_axes_but_never_five():
    legacy = caffe_pb2.BlobProto(num=1, channels=1, height=3, width=4)
    assert Blob((1, 1, 3, 4)).shape_equals(legacy)
    assert not Blob((1, 1, 1, 3, 4)).shape_equals(legacy)
    with pytest.raises(ValueError, match="shape mismatch"):
        Blob((1, 1, 1, 3, 4)).from_proto(legacy, reshape=False)


def test_from_proto_reads_a_diff_stored_without_data():
    proto = caffe_pb2.BlobProto()
    proto.shape.dim.extend([2])
    proto.diff.extend([1.5, -2.5])
    blob = Blob()
    blob.from_proto(proto)
    np.testing.assert_array_equal(blob.data, [0, 0])
    np.testing.assert_array_equal(blob.diff, [1.5, -2.5])


def test_from_proto_refuses_a_value_count_that_does_not_fit_the_shape():
    proto = caffe_pb2.BlobProto()
    proto.shape.dim.extend([2, 2])
    proto.data.extend([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"stored blob holds 3 values but its shape \(2, 2\) needs 4"):
        Blob().from_proto(proto)


def test_to_proto_writes_no_diff_by_default():
    blob = Blob((2,))
    blob.data[...] = [1, 2]
    blob.diff[...] = [3, 4]
    proto = blob.to_proto()
    assert list(proto.data) == [1, 2] and len(proto.diff) == 0


def test_packed_floats_are_written_as_float32_whatever_the_input_dtype():
    proto = caffe_pb2.BlobProto()
    _append_packed_floats(proto, BLOB_DATA_FIELD, np.array([0.5, -2.0, 3.25], dtype=np.float64))
    assert list(proto.data) == [0.5, -2.0, 3.25]


@pytest.mark.parametrize("index", [4, 5, -5])
def test_legacy_shape_refuses_an_index_outside_caffes_four_axes(index):
    with pytest.raises(ValueError, match=rf"legacy axis index {index} is outside \[-4, 4\)"):
        Blob((2, 3)).legacy_shape(index)


@pytest.mark.parametrize(("indices", "message"), [
    ((0, 0, 0, 0, 0), r"5 indices for a blob of 4 axes"),
    ((3, 0), r"index 3 of axis 0 is outside \[0, 2\]"),
    ((0, -1), r"index -1 of axis 1 is outside \[0, 3\]"),
])
def test_offset_checks_its_indices_as_caffe_does(indices, message):
    with pytest.raises(ValueError, match=message):
        Blob((2, 3, 4, 5)).offset(*indices)
    assert Blob((2, 3, 4, 5)).offset(2) == 120
