"""Module-level pycaffe functions: exports, solver count/rank, NCCL (not available yet), Timer."""

import time

import pytest

import caffe
from caffe import net_spec, parallel
from caffe_core.errors import CaffeError


def test_exports_match_pycaffe():
    for name in ("Net", "NetSpec", "layers", "params", "to_proto", "io", "Classifier", "Detector", "Timer",
                 "NCCL", "has_nccl", "solver_count", "set_solver_count", "solver_rank", "set_solver_rank",
                 "set_multiprocess", "TRAIN", "TEST"):
        assert hasattr(caffe, name), name
    assert caffe.layers is net_spec.layers and caffe.io.load_image is not None


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


def test_timer_measures_and_reading_stops_it(caplog):
    timer = caffe.Timer()
    assert timer.ms == 0.0
    assert "Timer has never been run" in caplog.text
    timer.start()
    time.sleep(0.01)
    first = timer.ms
    time.sleep(0.01)
    assert first >= 9.0 and timer.ms == first
