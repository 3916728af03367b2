"""Fixtures for the `caffe` command tests: a golden solver case in a scratch folder, and a clean logger."""

from __future__ import annotations

import logging
import pathlib
import shutil

import pytest

from caffe_core import registry

CASES = pathlib.Path(__file__).parent.parent / "golden" / "solvers"
NEEDED = ("Input", "Convolution", "ReLU", "InnerProduct", "SoftmaxWithLoss")


@pytest.fixture(autouse=True)
def restore_caffe_logger():
    """The command installs a glog handler on the `caffe` logger; put the logger back afterwards."""
    logger = logging.getLogger("caffe")
    saved = (list(logger.handlers), logger.propagate, logger.level)
    yield
    logger.handlers[:] = saved[0]
    logger.propagate, logger.level = saved[1], saved[2]


@pytest.fixture
def case_dir(tmp_path, monkeypatch) -> pathlib.Path:
    """The sgd_momentum golden case (a small conv net) copied to tmp_path, which becomes the cwd."""
    for type_name in NEEDED:
        try:
            registry.layer_class(type_name)
        except Exception as err:
            pytest.skip(f"layer type {type_name} is not available yet: {type(err).__name__}")
    work = tmp_path / "case"
    shutil.copytree(CASES / "sgd_momentum", work)
    for name in ("snap_iter_10.caffemodel", "snap_iter_10.solverstate", "caffe.log"):
        (work / name).unlink()
    monkeypatch.chdir(work)
    return work
