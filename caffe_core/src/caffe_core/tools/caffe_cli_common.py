"""What several `caffe` commands share: device selection from --gpu, stages, phases and score logging."""

from __future__ import annotations

import argparse
import logging

import numpy as np

from caffe_core import runtime
from caffe_core.errors import CaffeError
from caffe_core.net import Net
from caffe_core.proto import caffe_pb2

log = logging.getLogger("caffe.tool")


def parse_gpus(flag: str) -> list[int]:
    """Device ids from --gpu: empty for CPU, 'all' for every device, or a comma list."""
    if not flag:
        return []
    if flag == "all":
        from caffe_core.device import gpu_backend

        count = gpu_backend(0).xp.cuda.runtime.getDeviceCount()
        return list(range(count))
    try:
        return [int(item) for item in flag.split(",")]
    except ValueError:
        raise CaffeError(f"--gpu must be 'all' or a comma-separated list of device ids, "
                         f"got '{flag}'") from None


def use_devices(gpus: list[int], what: str) -> None:
    """Selects CPU mode, or GPU mode on the first device (several devices need NCCL, which we lack)."""
    if not gpus:
        log.info("Use CPU.")
        runtime.set_mode_cpu()
        return
    if len(gpus) > 1:
        raise CaffeError(f"{what} runs on one GPU; pass one device id to --gpu ({gpus} given)")
    log.info("Use GPU with device ID %d", gpus[0])
    runtime.set_device(gpus[0])
    runtime.set_mode_gpu()


def stages_of(args: argparse.Namespace) -> list[str]:
    """The --stage flag as a list."""
    return [s for s in args.stage.split(",") if s] if args.stage else []


def phase_of(args: argparse.Namespace, default: caffe_pb2.Phase) -> caffe_pb2.Phase:
    """The --phase flag (TRAIN or TEST), or the default."""
    if not args.phase:
        return default
    if args.phase not in ("TRAIN", "TEST"):
        raise CaffeError(f"Unknown phase: {args.phase} (--phase must be TRAIN or TEST)")
    return caffe_pb2.TRAIN if args.phase == "TRAIN" else caffe_pb2.TEST


def require(value: str, message: str) -> None:
    """Raises a CaffeError with message when a required flag is empty."""
    if not value:
        raise CaffeError(message)


def require_positive(value: int, flag: str) -> None:
    """Raises a CaffeError naming the flag when value is not > 0."""
    if value <= 0:
        raise CaffeError(f"--{flag} must be > 0, got {value}")


def output_scores(net: Net) -> list[tuple[str, float, float]]:
    """(name, value, loss weight) of every element of every output blob, in Caffe's order."""
    scores: list[tuple[str, float, float]] = []
    for blob_id in net.output_blob_indices:
        name = net.blob_names[blob_id]
        weight = float(np.float32(net.blob_loss_weights[blob_id]))
        scores.extend((name, float(v), weight) for v in net.blobs[blob_id].cpu_data().ravel())
    return scores
