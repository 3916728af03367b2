"""`caffe device_query`: the properties of each --gpu device, as Caffe::DeviceQuery prints them."""

from __future__ import annotations

import argparse
import logging

from caffe_core.tools.caffe_cli_common import parse_gpus, require

log = logging.getLogger("caffe.tool")


def _yes_no(value: object) -> str:
    return "Yes" if value else "No"


def device_query(args: argparse.Namespace) -> int:
    """Logs id, compute capability, name, memory and limits of every requested device."""
    require(args.gpu, "Need a device ID to query (--gpu).")
    from caffe_core.device import gpu_backend

    log.info("Querying GPUs %s", args.gpu)
    for device_id in parse_gpus(args.gpu):
        runtime_api = gpu_backend(device_id).xp.cuda.runtime
        p = runtime_api.getDeviceProperties(device_id)
        name = p["name"].decode() if isinstance(p["name"], bytes) else p["name"]
        rows = [
            ("Device id", device_id), ("Major revision number", p["major"]),
            ("Minor revision number", p["minor"]), ("Name", name),
            ("Total global memory", p["totalGlobalMem"]),
            ("Total shared memory per block", p["sharedMemPerBlock"]),
            ("Total registers per block", p["regsPerBlock"]), ("Warp size", p["warpSize"]),
            ("Maximum memory pitch", p["memPitch"]), ("Maximum threads per block", p["maxThreadsPerBlock"]),
            ("Maximum dimension of block", ", ".join(str(v) for v in p["maxThreadsDim"])),
            ("Maximum dimension of grid", ", ".join(str(v) for v in p["maxGridSize"])),
            ("Clock rate", p["clockRate"]), ("Total constant memory", p["totalConstMem"]),
            ("Texture alignment", p["textureAlignment"]),
            ("Concurrent copy and execution", _yes_no(p.get("deviceOverlap", p.get("asyncEngineCount")))),
            ("Number of multiprocessors", p["multiProcessorCount"]),
            ("Kernel execution timeout", _yes_no(p["kernelExecTimeoutEnabled"])),
        ]
        for label, value in rows:
            log.info("%-31s%s", label + ":", value)
    return 0
