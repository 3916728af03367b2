"""`caffe device_query`: Caffe's DeviceQuery lines for each --gpu device (a stand-in CUDA runtime here)."""

from __future__ import annotations

import types

from caffe_core import device

from .conftest import glog_messages, run_caffe

PROPERTIES = {
    "name": b"Fake GPU", "major": 9, "minor": 0, "totalGlobalMem": 1024, "sharedMemPerBlock": 48,
    "regsPerBlock": 65536, "warpSize": 32, "memPitch": 2147483647, "maxThreadsPerBlock": 1024,
    "maxThreadsDim": (1024, 1024, 64), "maxGridSize": (2147483647, 65535, 65535), "clockRate": 1980000,
    "totalConstMem": 65536, "textureAlignment": 512, "deviceOverlap": 1, "multiProcessorCount": 132,
    "kernelExecTimeoutEnabled": 0,
}


def test_device_query_logs_caffes_lines_for_each_device(capsys, monkeypatch):
    runtime = types.SimpleNamespace(getDeviceProperties=lambda device_id: PROPERTIES)
    backend = types.SimpleNamespace(xp=types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime)))
    monkeypatch.setattr(device, "gpu_backend", lambda device_id: backend)
    status, err = run_caffe(capsys, "device_query", "-gpu", "0,1")
    messages = glog_messages(err)
    assert status == 0 and messages[0] == "Querying GPUs 0,1"
    assert messages[1:4] == ["Device id:                     0", "Major revision number:         9",
                             "Minor revision number:         0"]
    assert "Name:                          Fake GPU" in messages
    assert "Maximum dimension of block:    1024, 1024, 64" in messages
    assert "Concurrent copy and execution: Yes" in messages
    assert messages[-1] == "Kernel execution timeout:      No"
    assert messages.count("Number of multiprocessors:     132") == 2
    assert "Device id:                     1" in messages
