"""Shared helpers for caffe_layers_std's tests: layers from prototxt text, blobs from arrays, golden cases."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable

import numpy as np
import pytest

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.errors import DeviceError
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_core.testing.golden import check_layer_case
from caffe_core.testing.layers import blob_from, build_layer

GOLDEN_DIR = os.path.join(os.path.dirname(__file__), "golden")


@pytest.fixture(autouse=True)
def _cpu_mode_and_seed():
    runtime.set_mode_cpu()
    runtime.set_random_seed(1701)
    yield
    runtime.set_mode_cpu()


def golden_path(case: str) -> str:
    """The folder of a golden case copied under tests/golden."""
    return os.path.join(GOLDEN_DIR, case)


def _run_layer(text: str, bottoms: list[np.ndarray], phase: int,
               propagate_down: list[bool] | None) -> dict[str, np.ndarray]:
    """Sets up, runs forward and backward (random top diffs) in the current mode; returns every result."""
    runtime.set_random_seed(1701)
    layer = build_layer(text, phase)
    bottom = [blob_from(a) for a in bottoms]
    top = [Blob() for _ in layer.layer_param.top] or [Blob()]
    layer.setup(bottom, top)
    for blob in layer.blobs:
        blob.mutable_cpu_diff()[...] = 0
    runtime.set_random_seed(1701)
    layer.forward(bottom, top)
    rng = np.random.default_rng(7)
    for blob in top:
        blob.mutable_cpu_diff()[...] = rng.standard_normal(blob.shape)
    layer.backward(top, [True] * len(bottom) if propagate_down is None else propagate_down, bottom)
    results = {f"top {i}": b.cpu_data().copy() for i, b in enumerate(top)}
    results.update({f"bottom diff {i}": b.cpu_diff().copy() for i, b in enumerate(bottom)})
    results.update({f"param diff {i}": b.cpu_diff().copy() for i, b in enumerate(layer.blobs)})
    return results


def check_gpu_matches_cpu(text: str, bottoms: list[np.ndarray], phase: int = caffe_pb2.TRAIN,
                          rtol: float = 1e-5, atol: float = 1e-6,
                          propagate_down: list[bool] | None = None) -> None:
    """Runs a layer's forward and backward on the CPU and on the GPU and asserts they agree."""
    pytest.importorskip("cupy")
    try:
        runtime.set_mode_gpu()
    except DeviceError as err:
        pytest.skip(f"no usable GPU: {err}")
    try:
        on_gpu = _run_layer(text, bottoms, phase, propagate_down)
    finally:
        runtime.set_mode_cpu()
    on_cpu = _run_layer(text, bottoms, phase, propagate_down)
    for key, expected in on_cpu.items():
        np.testing.assert_allclose(on_gpu[key], expected, rtol=rtol, atol=atol, err_msg=key)


@pytest.fixture(params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def device_mode(request: pytest.FixtureRequest) -> str:
    """Runs the test once on the CPU and once (when cupy and a device exist) in GPU mode."""
    if request.param == "gpu":
        pytest.importorskip("cupy")
        try:
            runtime.set_mode_gpu()
        except DeviceError as err:
            pytest.skip(str(err))
    return request.param


@pytest.fixture
def gpu_matches_cpu() -> Callable[..., None]:
    """`gpu_matches_cpu(text, bottom_arrays, phase=TRAIN)`: asserts CPU and GPU agree (skips without one)."""
    return check_gpu_matches_cpu


@pytest.fixture
def make_layer() -> Callable[..., Layer]:
    """`make_layer(text, phase=TRAIN)`: a layer built from LayerParameter text through the registry."""
    return build_layer


@pytest.fixture
def blob_of() -> Callable[[np.ndarray | list], Blob]:
    """`blob_of(array)`: a float32 blob holding the array."""
    return blob_from


@pytest.fixture
def golden_case() -> Callable[[str], str]:
    """`golden_case(name)`: the path of tests/golden/<name>."""
    return golden_path


@pytest.fixture
def golden_bit_exact(tmp_path) -> Callable[..., list[str]]:
    """`golden_bit_exact(case, inexact=())`: a golden case's mismatches, blobs but `inexact` bit-exact."""

    def check(case: str, inexact: tuple[str, ...] = ()) -> list[str]:
        copy = tmp_path / case
        shutil.copytree(golden_path(case), copy)
        with open(copy / "case.json") as f:
            cfg = json.load(f)
        tolerance = (cfg.get("rtol", 1e-4), cfg.get("atol", 1e-5))
        cfg.update(rtol=0.0, atol=0.0, tol_overrides={key: tolerance for key in inexact})
        with open(copy / "case.json", "w") as f:
            json.dump(cfg, f)
        return check_layer_case(copy)

    return check
