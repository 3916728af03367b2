"""The `caffe` package exports what pycaffe's did."""

import logging

import pytest

import caffe
from caffe import net_spec


def test_exports_match_pycaffe():
    for name in ("Net", "NetSpec", "layers", "params", "to_proto", "io", "Classifier", "Detector", "Timer",
                 "NCCL", "has_nccl", "solver_count", "set_solver_count", "solver_rank", "set_solver_rank",
                 "set_multiprocess", "TRAIN", "TEST"):
        assert hasattr(caffe, name), name
    assert caffe.layers is net_spec.layers and caffe.io.load_image is not None


@pytest.mark.parametrize(("level", "expected"), [(0, logging.INFO), (1, logging.WARNING), (2, logging.ERROR),
                                                 (3, logging.CRITICAL)])
def test_init_log_takes_glogs_minloglevel(level, expected):
    logger = logging.getLogger("caffe")
    saved = (list(logger.handlers), logger.propagate, logger.level)
    try:
        caffe.init_log(level)
        assert logger.level == expected
    finally:
        logger.handlers[:] = saved[0]
        logger.propagate, logger.level = saved[1], saved[2]
