"""CPU against GPU parity: one layer's forward and backward run in both modes must agree."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.proto import caffe_pb2
from caffe_core.testing.layers import blob_from, build_layer


def run_layer(text: str, bottoms: Sequence[np.ndarray], phase: caffe_pb2.Phase = caffe_pb2.TRAIN,
              propagate_down: Sequence[bool] | None = None, seed: int = 1701) -> dict[str, np.ndarray]:
    """Sets a layer up and runs forward and backward (seeded random top diffs) in the current mode."""
    runtime.set_random_seed(seed)
    layer = build_layer(text, phase)
    bottom = [blob_from(a) for a in bottoms]
    top = [Blob() for _ in layer.layer_param.top] or [Blob()]
    layer.setup(bottom, top)
    for blob in layer.blobs:
        blob.mutable_cpu_diff()[...] = 0
    runtime.set_random_seed(seed)
    layer.forward(bottom, top)
    rng = np.random.default_rng(seed)
    for blob in top:
        blob.mutable_cpu_diff()[...] = rng.standard_normal(blob.shape)
    layer.backward(top, [True] * len(bottom) if propagate_down is None else list(propagate_down), bottom)
    results = {f"top {i}": b.cpu_data().copy() for i, b in enumerate(top)}
    results.update({f"bottom diff {i}": b.cpu_diff().copy() for i, b in enumerate(bottom)})
    results.update({f"param diff {i}": b.cpu_diff().copy() for i, b in enumerate(layer.blobs)})
    return results


def gpu_mismatches(text: str, bottoms: Sequence[np.ndarray], phase: caffe_pb2.Phase = caffe_pb2.TRAIN,
                   rtol: float = 1e-5, atol: float = 1e-6,
                   propagate_down: Sequence[bool] | None = None) -> list[str]:
    """Runs a layer on the CPU and in GPU mode (raises DeviceError without one); lists what differs."""
    runtime.set_mode_gpu()
    try:
        on_gpu = run_layer(text, bottoms, phase, propagate_down)
    finally:
        runtime.set_mode_cpu()
    on_cpu = run_layer(text, bottoms, phase, propagate_down)
    problems = []
    for key, expected in on_cpu.items():
        got = on_gpu[key]
        if got.shape != expected.shape or not np.allclose(got, expected, rtol=rtol, atol=atol):
            worst = np.max(np.abs(got - expected)) if got.shape == expected.shape else "shape"
            problems.append(f"{key}: GPU differs from CPU (max difference {worst})")
    return problems
