"""Fixtures and helpers for the `caffe` command tests: a golden solver case in a scratch folder, a clean
logger, running the command and reading its glog lines."""

from __future__ import annotations

import logging
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from caffe_core import proto_io
from caffe_core.proto import caffe_pb2
from caffe_core.testing.layers import require_layer_types
from caffe_core.tools.caffe_cli import main

CASES = pathlib.Path(__file__).parent.parent / "golden" / "solvers"
UPGRADE_FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "upgrade" / "fixtures"
NEEDED = ("Input", "Convolution", "ReLU", "InnerProduct", "SoftmaxWithLoss")
SOLVER = ("-solver", "solver.prototxt")
GLOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [\w.]+:\d+\] ")


def run_caffe(capsys, *argv: str) -> tuple[int, str]:
    """Runs `caffe argv...` in-process; returns the exit status and what it wrote to stderr."""
    status = main(list(argv))
    return status, capsys.readouterr().err


def glog_messages(err: str) -> list[str]:
    """The messages of the glog-formatted lines of stderr, without their prefix."""
    return [GLOG.sub("", line) for line in err.splitlines() if GLOG.match(line)]


def snapshot_files() -> list[str]:
    """The snapshot files in the working directory, sorted."""
    return sorted(f for f in os.listdir() if f.startswith(("snap_", "resumed_")))


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
    require_layer_types(*NEEDED)
    work = tmp_path / "case"
    shutil.copytree(CASES / "sgd_momentum", work)
    for name in ("snap_iter_10.caffemodel", "snap_iter_10.solverstate", "caffe.log"):
        (work / name).unlink()
    monkeypatch.chdir(work)
    return work


GLOG_LINE = re.compile(r"^([IWEF])\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ \S+:\d+\] (.*)$")


def run_console_script(tool: str, *args) -> tuple[int, list[tuple[str, str]]]:
    """Runs an installed console script; returns its exit code and its (level, message) log lines."""
    done = subprocess.run([str(pathlib.Path(sys.executable).parent / tool), *map(str, args)],
                          capture_output=True, text=True, timeout=60)
    lines = []
    for line in done.stderr.splitlines():
        match = GLOG_LINE.match(line)
        assert match, f"not a glog line: {line!r}"
        lines.append((match.group(1), match.group(2)))
    return done.returncode, lines


def read_net_text(path) -> caffe_pb2.NetParameter:
    """A net prototxt as a NetParameter, without upgrading it."""
    return proto_io.read_text_file(path, caffe_pb2.NetParameter())
