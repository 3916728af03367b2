"""`caffe test`: every batch's outputs, the mean loss and the mean outputs with their loss weights."""

from __future__ import annotations

from .conftest import glog_messages, run_caffe


def test_test_command(capsys, case_dir):
    status, err = run_caffe(capsys, "test", "-model", "net.prototxt", "-weights", "init.caffemodel",
                       "-iterations", "2")
    messages = glog_messages(err)
    assert status == 0 and "Running for 2 iterations." in messages
    assert any(m.startswith("Memory required for data with optimize_memory: ") for m in messages)
    batch = [m for m in messages if m.startswith("Batch 0, loss = ")]
    loss = float(batch[0].rsplit("= ", 1)[1])
    assert f"Loss: {loss:g}" in messages and f"loss = {loss:g} (* 1 = {loss:g} loss)" in messages
