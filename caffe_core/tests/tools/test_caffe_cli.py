"""The `caffe` command line: flag spellings, flag rules, usage errors (exit 1) and a clean glog log file."""

from __future__ import annotations

import subprocess
import sys

import pytest

from caffe_core.tools import caffe_cli
from caffe_core.tools.caffe_cli import normalize_flags

from .conftest import GLOG, run_caffe


@pytest.mark.parametrize("argv", [["-solver", "s.prototxt"], ["-solver=s.prototxt"], ["--solver=s.prototxt"],
                                  ["--solver", "s.prototxt"]])
def test_flag_spellings(argv):
    args = caffe_cli.build_parser().parse_args(normalize_flags(["train", *argv, "-gpu=", "-level", "2"]))
    assert (args.command, args.solver, args.gpu, args.level) == ("train", "s.prototxt", "", 2)


def test_bool_flag_spellings():
    parse = caffe_cli.build_parser().parse_args
    assert parse(normalize_flags(["train", "-stop_on_nan"])).stop_on_nan is True
    assert parse(normalize_flags(["train", "--stop_on_nan=false"])).stop_on_nan is False


@pytest.mark.parametrize(("argv", "message"), [
    ([], "No command given"),
    (["fly"], "Unknown action: fly"),
    (["train"], "Need a solver definition to train"),
    (["train", "-solver", "s.prototxt", "-snapshot", "a.solverstate", "-weights", "w.caffemodel"],
     "Give a snapshot to resume training or weights to finetune but not both"),
    (["train", "-solver", "s.prototxt", "-sigint_effect", "explode"], 'Invalid signal effect "explode"'),
    (["train", "-solver", "absent.prototxt"], "absent.prototxt: file not found"),
    (["test", "-model", "m.prototxt"], "Need model weights to score"),
    (["test", "-weights", "w.caffemodel"], "Need a model definition to score"),
    (["time"], "Need a model definition to time"),
    (["device_query"], "Need a device ID to query"),
    (["train", "--bogus_flag=1"], "unrecognized arguments: --bogus_flag=1"),
    (["train", "solver.prototxt"], "flags need a leading dash"),
])
def test_usage_errors_exit_1(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    status, err = run_caffe(capsys, *argv)
    assert status == 1 and message in err


def test_console_script_writes_a_clean_log_file(case_dir):
    with open("train.log", "w") as log_file:
        status = subprocess.run([sys.executable, "-m", "caffe_core.tools.caffe_cli", "train",
                                 "-solver", "solver.prototxt"], stderr=log_file, check=False).returncode
    lines = open("train.log").read().splitlines()
    assert status == 0 and any(GLOG.match(line) for line in lines)
    assert not any("iter/s]" in line or "\r" in line for line in lines)


@pytest.mark.parametrize("flag", ["--version", "-version"])
def test_version_prints_the_caffe_release_and_exits_0(flag, capsys):
    with pytest.raises(SystemExit) as exit_status:
        caffe_cli.main([flag])
    assert exit_status.value.code == 0
    assert capsys.readouterr().out == "caffe version 1.0.0\n"


def test_single_dash_flag_whose_value_holds_an_equals_sign():
    # gflags splits `-flag=value` at the first '=', so the value may itself contain '='.
    assert normalize_flags(["-weights=a=b.caffemodel"]) == ["--weights=a=b.caffemodel"]
