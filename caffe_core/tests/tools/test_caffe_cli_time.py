"""`caffe time`: the benchmark's per-layer and total lines, and a bad --phase."""

from __future__ import annotations

import re

from .conftest import glog_messages, run_caffe


def test_time_command(capsys, case_dir):
    status, err = run_caffe(capsys, "time", "-model", "net.prototxt", "-iterations", "3", "-phase", "TRAIN")
    messages = glog_messages(err)
    assert status == 0 and "*** Benchmark begins ***" in messages and messages[-1] == "*** Benchmark ends ***"
    assert "Iteration: 3 forward-backward time: " in "\n".join(messages)
    for name in ("data", "conv", "relu", "ip", "loss"):
        assert any(re.fullmatch(rf" *{name}\tforward: [\d.e-]+ ms\.", m) for m in messages)
        assert any(re.fullmatch(rf" *{name}\tbackward: [\d.e-]+ ms\.", m) for m in messages)
    assert any(m.startswith("Average Forward-Backward: ") for m in messages)
    assert run_caffe(capsys, "time", "-model", "net.prototxt", "-phase", "VAL")[0] == 1


def test_time_logs_caffes_warm_up_and_average_lines_and_times_every_backward(capsys, case_dir):
    status, err = run_caffe(capsys, "time", "-model", "net.prototxt", "-iterations", "2")
    messages = glog_messages(err)
    assert status == 0
    assert messages.index("Performing Forward") < messages.index("Performing Backward")
    for label in ("Average Forward pass", "Average Backward pass"):
        assert any(re.fullmatch(rf"{label}: [\d.e-]+ ms\.", m) for m in messages)
    # Every layer's backward is run (and so takes some time), as Caffe's loop over the layers does.
    backward = [float(m.split(": ")[1].split()[0]) for m in messages if "\tbackward: " in m]
    assert len(backward) >= 5 and all(ms > 0 for ms in backward)


def test_time_refuses_non_positive_iterations_naming_the_flag(capsys, case_dir):
    status, err = run_caffe(capsys, "time", "-model", "net.prototxt", "-iterations", "0")
    assert status == 1 and "--iterations must be > 0" in err
