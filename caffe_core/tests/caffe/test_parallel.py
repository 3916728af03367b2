"""caffe.parallel: solver count/rank, the multiprocess flag, and where caffe.NCCL can work.

NCCL over MPI ranks is tested end to end in tests/test_data_parallel_mpi.py.
"""

import importlib.util

import pytest

import caffe
from caffe import parallel
from caffe_core.errors import CaffeError


@pytest.fixture
def restore_parallel_state():
    saved = (parallel.solver_count(), parallel.solver_rank(), parallel.multiprocess())
    yield
    caffe.set_solver_count(saved[0])
    caffe.set_solver_rank(saved[1])
    caffe.set_multiprocess(saved[2])


def test_solver_count_rank_and_multiprocess(restore_parallel_state):
    assert (caffe.solver_count(), caffe.solver_rank()) == (1, 0)
    caffe.set_solver_count(4)
    caffe.set_solver_rank(3)
    caffe.set_multiprocess(True)
    assert (caffe.solver_count(), caffe.solver_rank(), parallel.multiprocess()) == (4, 3, True)
    with pytest.raises(ValueError, match="solver count must be >= 1"):
        caffe.set_solver_count(0)
    with pytest.raises(ValueError, match="solver rank must be >= 0"):
        caffe.set_solver_rank(-1)


def test_has_nccl_says_whether_mpi_or_nccl_is_installed():
    assert caffe.has_nccl() is (importlib.util.find_spec("mpi4py") is not None
                                or importlib.util.find_spec("cupy") is not None)


@pytest.mark.cpu_mode
def test_nccl_outside_mpiexec_without_a_gpu_says_how_to_start_the_ranks(monkeypatch):
    for name in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(CaffeError, match="needs the ranks started by mpiexec"):
        caffe.NCCL(None, caffe.NCCL.new_uid())
