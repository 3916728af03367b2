"""caffe.parallel: solver count/rank, the multiprocess flag, and NCCL (not available yet)."""

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


def test_nccl_is_not_available_yet():
    assert caffe.has_nccl() is False
    with pytest.raises(CaffeError, match="multi-process/NCCL training is not available yet"):
        caffe.NCCL(None, b"")
    with pytest.raises(CaffeError, match="not available yet"):
        caffe.NCCL.new_uid()
