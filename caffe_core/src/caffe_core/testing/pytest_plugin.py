"""The pytest plugin for layer packs (entry point `pytest11: caffe`): fixtures for testing layers.

Installed with caffe-core, so a pack's tests get, with no conftest of their own:

- every test starts in CPU mode with Caffe's test seed 1701 (as Caffe's test harness does); with
  `--caffe-mode=gpu` every test starts in GPU mode instead (on a device, or on the cupy stand-in when
  CAFFE_GPU_STANDIN=1), except those marked `cpu_mode`, which assert behaviour of CPU mode itself;
- `make_layer(text, phase=TRAIN)`: a layer built from LayerParameter text through the layer factory;
- `blob_of(array)`: a float32 blob holding a copy of the array; `gaussian(shape, seed, std)`: random one;
- `golden_case(name)`: the folder `golden/<name>` beside the test file (or in a parent folder);
- `gpu_matches_cpu(text, bottoms, ...)`: asserts a layer's forward and backward agree in CPU and GPU
  mode (skips, saying why, when GPU mode cannot start: no cupy and device, and no stand-in);
- `device_mode`: runs a test once on the CPU and once in GPU mode (the GPU run skips without one);
- `gpu_mode`: GPU mode for one test (on a device or the stand-in; skips when neither exists);
- `gpu_standin`: GPU mode on the cupy stand-in for one test (the stand-in module is the fixture's value);
- `without_gpu`: GPU mode made unavailable for one test (the stand-in switched off), to test the errors;
- `prefer_provider(type, "distribution[variant]")`: chooses a type's provider for the test only (as
  `caffe_core.registry.prefer_provider` does for a session);
- `host_threads(count)`: `count` host threads for the rest of the test, splitting passes of any size, so
  a test can compare a layer's split passes with its one-thread ones;
- `@pytest.mark.gpu`: a test that runs GPU mode (on a device or the stand-in), skipped when neither exists;
  `@pytest.mark.cuda`: a test that needs a real CUDA device (a kernel against its xp reference), skipped
  on the stand-in;
- `@pytest.mark.requires_layer_types("Pooling", ...)`: skips a test, naming the type, when no installed
  distribution provides one of the types (an installed pack that fails to import still fails the test).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from caffe_core import host_threads as host_threads_module
from caffe_core import registry, runtime
from caffe_core.blob import Blob
from caffe_core.device import STANDIN_SWITCH, gpu_backend, standin_enabled
from caffe_core.errors import DeviceError
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_core.testing.layers import blob_from, build_layer
from caffe_core.testing.parity import gpu_mismatches


def pytest_addoption(parser: pytest.Parser) -> None:
    """Adds --caffe-mode: the mode every test starts in."""
    parser.addoption("--caffe-mode", choices=("cpu", "gpu"), default="cpu",
                     help="start every test in this Caffe mode (gpu: on a device, or on the cupy stand-in "
                          "with CAFFE_GPU_STANDIN=1)")


@pytest.fixture(autouse=True)
def _caffe_mode_and_seed(request: pytest.FixtureRequest) -> Iterator[None]:
    runtime.set_mode_cpu()
    runtime.set_random_seed(1701)
    wants_gpu = request.config.getoption("--caffe-mode") == "gpu"
    if wants_gpu and request.node.get_closest_marker("cpu_mode") is None:
        runtime.set_mode_gpu()
    yield
    runtime.set_mode_cpu()


@pytest.fixture
def make_layer() -> Callable[..., Layer]:
    """`make_layer(text, phase=TRAIN)`: a layer built from LayerParameter text through the registry."""
    return build_layer


@pytest.fixture
def blob_of() -> Callable[[np.ndarray | list], Blob]:
    """`blob_of(array)`: a float32 blob holding the array."""
    return blob_from


@pytest.fixture
def gaussian() -> Callable[..., Blob]:
    """`gaussian(shape, seed=1701, std=1.0)`: a blob of Gaussian values, as Caffe's test fixtures fill."""

    def make(shape: Sequence[int], seed: int = 1701, std: float = 1.0) -> Blob:
        return blob_from(np.random.default_rng(seed).normal(0.0, std, tuple(shape)))

    return make


@pytest.fixture
def golden_case(request: pytest.FixtureRequest) -> Callable[[str], Path]:
    """`golden_case(name)`: the case folder `golden/<name>` beside the test file or in a parent folder."""

    def find(name: str) -> Path:
        for folder in (request.path.parent, *request.path.parents):
            candidate = folder / "golden" / name
            if (candidate / "case.json").exists():
                return candidate
            if folder == request.config.rootpath:
                break
        raise FileNotFoundError(f"no golden case '{name}' in a golden/ folder above {request.path}")

    return find


@pytest.fixture
def gpu_matches_cpu() -> Callable[..., None]:
    """`gpu_matches_cpu(text, bottoms, phase=TRAIN, rtol=1e-5, atol=1e-6, propagate_down=None)`."""

    def check(text: str, bottoms: Sequence[np.ndarray], phase: caffe_pb2.Phase = caffe_pb2.TRAIN,
              rtol: float = 1e-5, atol: float = 1e-6, propagate_down: Sequence[bool] | None = None) -> None:
        try:
            problems = gpu_mismatches(text, bottoms, phase, rtol, atol, propagate_down)
        except DeviceError as err:
            pytest.skip(f"no usable GPU: {err}")
        assert problems == []

    return check


@pytest.fixture(params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def device_mode(request: pytest.FixtureRequest) -> str:
    """Runs the test once on the CPU and once in GPU mode (on a device or on the stand-in)."""
    if request.param == "cpu":
        runtime.set_mode_cpu()
    else:
        try:
            runtime.set_mode_gpu()
        except DeviceError as err:
            pytest.skip(str(err))
    return request.param


@pytest.fixture
def without_gpu(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """GPU mode unavailable for the test: the stand-in switched off (skips where a CUDA device exists)."""
    if not cuda_device_problem():
        pytest.skip("a CUDA device is present, so GPU mode can start")
    runtime.set_mode_cpu()
    monkeypatch.delenv(STANDIN_SWITCH, raising=False)
    gpu_backend.cache_clear()
    yield
    gpu_backend.cache_clear()


@pytest.fixture
def prefer_provider() -> Iterator[Callable[[str, str], None]]:
    """`prefer_provider(type, distribution)` for the test; the choices made before it come back after it."""
    before = dict(registry._preferred)
    yield registry.prefer_provider
    registry._preferred.clear()
    registry._preferred.update(before)
    registry.layer_class.cache_clear()


@pytest.fixture
def host_threads(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[int], None]]:
    """Sets the number of host threads for the test; passes of any size are split between them."""
    monkeypatch.setattr(host_threads_module, "MIN_VALUES_PER_THREAD", 1)

    def use(count: int) -> None:
        monkeypatch.setenv("CAFFE_HOST_THREADS", str(count))
        host_threads_module.thread_count.cache_clear()

    yield use
    monkeypatch.undo()
    host_threads_module.thread_count.cache_clear()


@pytest.fixture
def gpu_mode() -> None:
    """GPU mode for the test (on a device, or on the stand-in when switched on); skips when neither exists."""
    try:
        runtime.set_mode_gpu()
    except DeviceError as err:
        pytest.skip(str(err))


@pytest.fixture
def gpu_standin(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """GPU mode on the cupy stand-in for one test, whatever the switch says; gives the stand-in module."""
    from caffe_core import cupy_standin

    monkeypatch.setenv(STANDIN_SWITCH, "1")
    gpu_backend.cache_clear()
    runtime.set_mode_gpu()
    yield cupy_standin
    runtime.set_mode_cpu()
    gpu_backend.cache_clear()


def pytest_configure(config: pytest.Config) -> None:
    """Declares the plugin's markers."""
    config.addinivalue_line("markers", "gpu: runs GPU mode, on a CUDA device or on the cupy stand-in "
                                       "(CAFFE_GPU_STANDIN=1); skipped (and reported) when neither exists")
    config.addinivalue_line("markers", "cuda: needs a real CUDA device and cupy; skipped (and reported) on "
                                       "the stand-in and without a device")
    config.addinivalue_line("markers", "cpu_mode: asserts CPU-mode behaviour, so starts in CPU mode even "
                                       "under --caffe-mode=gpu")
    config.addinivalue_line("markers", "requires_layer_types(*types): skipped when no installed distribution "
                                       "provides one of these layer types")


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skips tests whose required layer types no installed distribution provides, and CUDA-only tests."""
    if item.get_closest_marker("cuda") is not None:
        reason = cuda_unavailable()
        if reason:
            pytest.skip(reason)
    for marker in item.iter_markers("requires_layer_types"):
        missing = [name for name in marker.args if name not in registry.layer_types()]
        if missing:
            pytest.skip(f"needs layer type(s) {', '.join(missing)}: no installed pack provides them")


def cuda_unavailable() -> str:
    """Why a real CUDA device cannot be used here ("" when one can)."""
    if standin_enabled():
        return "needs a real CUDA device: CAFFE_GPU_STANDIN=1 selects the CPU stand-in"
    return cuda_device_problem()


def cuda_device_problem() -> str:
    """Why cupy cannot drive a CUDA device here, whatever the stand-in switch says ("" when it can)."""
    try:
        import cupy
    except ImportError:
        return "needs a real CUDA device: cupy is not installed"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as err:  # cupy raises its own CUDA error types when no driver is present
        return f"needs a real CUDA device: CUDA reports {err}"
    return "" if count > 0 else "needs a real CUDA device: none present"
