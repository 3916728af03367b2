"""Backward analysis: which layers and bottoms need backward, force_backward, tops whose diff is ignored."""

import logging

import pytest

from caffe_core.proto import caffe_pb2

from .conftest import INPUT, build

pytestmark = pytest.mark.usefixtures("net_test_layers")


def test_backward_analysis_and_loss_weights(caplog):
    text = INPUT + """
    layer { name: "frozen" type: "TestScale" bottom: "x" top: "a" param { lr_mult: 0 } }
    layer { name: "learn" type: "TestScale" bottom: "a" top: "b" }
    layer { name: "side" type: "TestScale" bottom: "x" top: "c" }
    layer { name: "loss" type: "TestSumLoss" bottom: "b" top: "loss" }
    """
    with caplog.at_level(logging.INFO, logger="caffe"):
        net = build(text)
    need = {layer.name: layer.need_backward for layer in net.graph.layers}
    assert need == {"data": False, "x_data_0_split": False, "frozen": False, "learn": True, "side": False,
                    "loss": True}
    assert net.blob_loss_weights[net.blob_names.index("loss")] == 1.0
    assert "learn needs backward computation." in caplog.text
    assert "side does not need backward computation." in caplog.text
    assert "This network produces output c" in caplog.text
    assert [net.blob_names[i] for i in net.output_blob_indices] == ["c", "loss"]
    assert "Top shape: 2 3 (6)" in caplog.text and "Top shape: (1)" in caplog.text
    assert "Memory required for data: " in caplog.text


def test_propagate_down_false_stops_backward():
    text = INPUT + """
    layer { name: "s" type: "TestScale" bottom: "x" top: "y" }
    layer { name: "t" type: "TestScale" bottom: "y" top: "z" propagate_down: false }
    layer { name: "loss" type: "TestSumLoss" bottom: "z" top: "loss" }
    """
    net = build(text)
    assert net.bottom_need_backward[net.layer_names.index("t")] == [False]
    assert not net.graph.layers[net.layer_names.index("s")].need_backward


def test_force_backward_respects_allow_force_backward():
    text = INPUT + """
    layer { name: "y" type: "Input" top: "label" input_param { shape { dim: 2 } } }
    layer { name: "loss" type: "TestSumLoss" bottom: "x" bottom: "label" top: "loss" }
    force_backward: true
    """
    net = build(text)
    assert net.bottom_need_backward[net.layer_names.index("loss")] == [True, False]


def test_a_top_whose_diff_backward_ignores_is_warned_about_once_when_a_layer_back_propagates_into_it(caplog):
    text = INPUT + """
    layer { name: "s1" type: "TestScale" bottom: "x" top: "y" }
    layer { name: "loss" type: "TestLossWithAux" bottom: "y" top: "loss" top: "aux" }
    layer { name: "s2" type: "TestScale" bottom: "aux" top: "z" }
    layer { name: "s3" type: "TestScale" bottom: "aux" top: "w" }
    layer { name: "l2" type: "TestSumLoss" bottom: "z" bottom: "w" top: "l2" }
    """
    with caplog.at_level(logging.WARNING, logger="caffe.net"):
        build(text, phase=caffe_pb2.TRAIN)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["Layer 'loss' (TestLossWithAux): its top 'aux' feeds 's2', 's3', which "
                        "back-propagate into it, but as in Caffe the backward of 'loss' ignores that top's "
                        "diff: no gradient flows through it"]


def test_an_ignored_top_that_only_feeds_outputs_is_not_warned_about(caplog):
    text = INPUT + """
    layer { name: "s1" type: "TestScale" bottom: "x" top: "y" }
    layer { name: "loss" type: "TestLossWithAux" bottom: "y" top: "loss" top: "aux" }
    """
    with caplog.at_level(logging.WARNING, logger="caffe.net"):
        build(text, phase=caffe_pb2.TRAIN)
    assert not [r for r in caplog.records if r.levelno == logging.WARNING]
