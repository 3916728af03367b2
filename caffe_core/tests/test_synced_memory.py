"""SyncedMemory: Caffe's head states, replayed with a stand-in device that counts transfers."""

import numpy as np
import pytest

from caffe_core.synced_memory import Head, SyncedMemory

from .conftest import CountingDevice


def test_tutorial_sequence_copies_exactly_where_caffe_does():
    device = CountingDevice()
    mem = SyncedMemory(8, backend=device)
    mem.mutable_cpu_data()[...] = np.arange(8)
    assert mem.head is Head.HEAD_AT_CPU
    steps = [
        (mem.gpu_data, (1, 0), Head.SYNCED),            # data copied cpu->gpu
        (mem.cpu_data, (1, 0), Head.SYNCED),            # both up to date: nothing copied
        (mem.mutable_gpu_data, (1, 0), Head.HEAD_AT_GPU),  # nothing copied
        (mem.mutable_gpu_data, (1, 0), Head.HEAD_AT_GPU),  # still on the gpu: nothing copied
        (mem.cpu_data, (1, 1), Head.SYNCED),            # gpu side modified: copied gpu->cpu
        (mem.gpu_data, (1, 1), Head.SYNCED),            # both up to date
        (mem.mutable_cpu_data, (1, 1), Head.HEAD_AT_CPU),  # still no copy
        (mem.mutable_gpu_data, (2, 1), Head.HEAD_AT_GPU),  # copied cpu->gpu
        (mem.mutable_cpu_data, (2, 2), Head.HEAD_AT_CPU),  # copied gpu->cpu
    ]
    for call, (to_device, to_host), head in steps:
        call()
        assert (device.to_device, device.to_host) == (to_device, to_host), call.__name__
        assert mem.head is head, call.__name__
    np.testing.assert_array_equal(mem.cpu_data(), np.arange(8))


def test_allocation_is_lazy_and_zeroed():
    device = CountingDevice()
    mem = SyncedMemory(4, backend=device)
    assert mem.head is Head.UNINITIALIZED
    assert np.all(mem.gpu_data() == 0)
    assert mem.head is Head.HEAD_AT_GPU and device.to_device == 0
    assert np.all(mem.cpu_data() == 0)
    assert device.to_host == 1


def test_device_writes_reach_the_host():
    mem = SyncedMemory(3, backend=CountingDevice())
    mem.mutable_gpu_data()[...] = [1, 2, 3]
    np.testing.assert_array_equal(mem.cpu_data(), [1, 2, 3])


def test_set_cpu_data_adopts_an_array():
    mem = SyncedMemory(4, backend=CountingDevice())
    external = np.full(4, 2, dtype=np.float32)
    mem.set_cpu_data(external)
    assert mem.cpu_data() is not None and mem.cpu_data().sum() == 8
    with pytest.raises(ValueError, match="4"):
        mem.set_cpu_data(np.zeros(3, dtype=np.float32))


def test_version_changes_with_every_write_access_and_no_read():
    first, second = SyncedMemory(4, backend=CountingDevice()), SyncedMemory(4, backend=CountingDevice())
    assert first.version != second.version
    seen = {first.version, second.version}
    for write in (first.mutable_cpu_data, first.mutable_gpu_data,
                  lambda: first.set_cpu_data(np.zeros(4, np.float32))):
        write()
        assert first.version not in seen
        seen.add(first.version)
    before = first.version
    first.cpu_data()
    first.gpu_data()
    assert first.version == before
