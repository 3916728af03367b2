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
