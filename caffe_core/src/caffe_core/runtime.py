"""Process-wide state, as Caffe's `Caffe` singleton: CPU/GPU mode, device id and the random stream."""

from __future__ import annotations

from caffe_core.device import CPU, GPU, Side, gpu_backend
from caffe_core.errors import DeviceError
from caffe_core.rng.caffe_stream import CaffeStream

CPU_MODE = "cpu"
GPU_MODE = "gpu"

_mode = CPU_MODE
_device_id = 0
_rng = CaffeStream()
_seed: int | None = None


def mode() -> str:
    """Returns the current mode, "cpu" or "gpu"."""
    return _mode


def current_side() -> Side:
    """The side layers and solvers compute on in the current mode."""
    return GPU if _mode == GPU_MODE else CPU


def set_mode_cpu() -> None:
    """Runs layers on the host with numpy."""
    global _mode
    _mode = CPU_MODE


def set_mode_gpu() -> None:
    """Runs layers on the device with cupy; fails clearly without cupy or a GPU."""
    global _mode
    gpu_backend(_device_id)
    _mode = GPU_MODE


def set_device(device_id: int) -> None:
    """Selects the CUDA device used in GPU mode."""
    global _device_id
    if device_id < 0:
        raise DeviceError(f"device id must be >= 0, got {device_id}")
    _device_id = int(device_id)
    if _mode == GPU_MODE:
        gpu_backend(_device_id)


def device_id() -> int:
    """Returns the CUDA device id chosen by set_device (0 by default)."""
    return _device_id


def set_random_seed(seed: int) -> None:
    """Re-seeds Caffe's stream (a boost mt19937), which every filler, Dropout and data layer draws from."""
    global _rng, _seed
    _seed = int(seed)
    _rng = CaffeStream(_seed)
    if _mode == GPU_MODE:
        gpu_backend(_device_id).seed(_seed)


def rng() -> CaffeStream:
    """Caffe's random stream of this process (unseeded: seeded from the OS, as Caffe)."""
    return _rng


def random_seed() -> int | None:
    """Returns the last seed given to set_random_seed, or None."""
    return _seed


_solver_count = 1
_solver_rank = 0
_multiprocess = False


def solver_count() -> int:
    """How many solvers train together (1 unless set), as Caffe::solver_count."""
    return _solver_count


def set_solver_count(count: int) -> None:
    """Sets how many solvers train together."""
    global _solver_count
    if count < 1:
        raise ValueError(f"solver count must be >= 1, got {count}")
    _solver_count = int(count)


def solver_rank() -> int:
    """This process's solver rank (0 is the root solver)."""
    return _solver_rank


def set_solver_rank(rank: int) -> None:
    """Sets this process's solver rank."""
    global _solver_rank
    if rank < 0:
        raise ValueError(f"solver rank must be >= 0, got {rank}")
    _solver_rank = int(rank)


def root_solver() -> bool:
    """Whether this process is the root solver (rank 0): it alone tests, displays and snapshots."""
    return _solver_rank == 0


def multiprocess() -> bool:
    """Whether this process is one of several training together."""
    return _multiprocess


def set_multiprocess(value: bool) -> None:
    """Marks this process as one of several training together."""
    global _multiprocess
    _multiprocess = bool(value)
