"""Caffe's debug_info lines after each layer's forward and backward."""

import logging

import pytest

from caffe_core.proto import caffe_pb2

from .conftest import INPUT, build

pytestmark = pytest.mark.usefixtures("net_test_layers")


def test_debug_info_logs_caffes_forward_and_backward_lines(caplog):
    """Caffe's ForwardDebugInfo names a param by its ParamSpec name (else its index); BackwardDebugInfo skips
    bottoms that need no backward and params that do not propagate down (lr_mult 0)."""
    text = "debug_info: true\n" + INPUT + """
    layer { name: "b" type: "TestScale" bottom: "x" top: "y" param { name: "wb" } }
    layer { name: "a" type: "TestScale" bottom: "y" top: "z" param { lr_mult: 0 } }
    layer { name: "loss" type: "TestSumLoss" bottom: "x" bottom: "z" top: "loss" }
    """
    net = build(text, caffe_pb2.TRAIN)
    net.blob_by_name("x").data[...] = 1
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="caffe"):
        # x = 1, y = 2x = 2, z = 2y = 4, loss = sum(x) + sum(z) = 6 + 24
        assert net.forward() == 30
        net.clear_param_diffs()
        net.backward()
    assert [r.getMessage() for r in caplog.records if "ward] " in r.getMessage()] == [
        "    [Forward] Layer data, top blob x data: 1",
        "    [Forward] Layer x_data_0_split, top blob x_data_0_split_0 data: 1",
        "    [Forward] Layer x_data_0_split, top blob x_data_0_split_1 data: 1",
        "    [Forward] Layer b, top blob y data: 2",
        "    [Forward] Layer b, param blob wb data: 2",
        "    [Forward] Layer a, top blob z data: 4",
        "    [Forward] Layer a, param blob 0 data: 2",
        "    [Forward] Layer loss, top blob loss data: 30",
        "    [Backward] Layer loss, bottom blob z diff: 1",
        "    [Backward] Layer a, bottom blob y diff: 2",
        # d loss / d wb = sum(dy * x) = sum(2 * 1) over 6 values
        "    [Backward] Layer b, param blob 0 diff: 12",
    ]
