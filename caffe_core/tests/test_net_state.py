"""NetStateRule: phase, min_level, max_level, stage and not_stage each decide, as Caffe's StateMeetsRule."""


import pytest

from caffe_core.net_state import filter_net, state_meets_rule
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text


def state(text):
    return parse_text(text, caffe_pb2.NetState())


def rule(text):
    return parse_text(text, caffe_pb2.NetStateRule())


@pytest.mark.parametrize(("state_text", "rule_text", "meets"), [
    ("phase: TEST", "phase: TEST", True),
    ("phase: TRAIN", "phase: TEST", False),
    ("level: 2", "min_level: 2", True),
    ("level: 1", "min_level: 2", False),
    ("level: 2", "max_level: 2", True),
    ("level: 3", "max_level: 2", False),
    ("stage: 'a' stage: 'b'", "stage: 'a' stage: 'b'", True),
    ("stage: 'a'", "stage: 'a' stage: 'b'", False),
    ("stage: 'a'", "not_stage: 'b'", True),
    ("stage: 'a' stage: 'b'", "not_stage: 'b'", False),
    ("level: 1 stage: 'deploy'", "min_level: 0 max_level: 1 not_stage: 'train'", True),
])
def test_each_condition_of_a_rule_decides(state_text, rule_text, meets):
    assert state_meets_rule(state(state_text), rule(rule_text), "layer") is meets


def test_include_and_exclude_rules_keep_the_layers_the_state_selects():
    net = parse_text("""
        state { level: 3 stage: "deploy" }
        layer { name: "low" type: "Input" include { max_level: 2 } }
        layer { name: "not_deploy" type: "Input" include { not_stage: "deploy" } }
        layer { name: "kept" type: "Input" exclude { not_stage: "deploy" } }
        layer { name: "high" type: "Input" exclude { min_level: 4 } }
    """, caffe_pb2.NetParameter())
    assert [layer.name for layer in filter_net(net).layer] == ["kept", "high"]


# Caffe's StateMeetsRule logs why a rule fails, in these words (its "above the min_level" included).
@pytest.mark.parametrize(("state_text", "rule_text", "message"), [
    ("phase: TRAIN", "phase: TEST",
     "The NetState phase (0) differed from the phase (1) specified by a rule in layer conv1"),
    ("level: 1", "min_level: 2",
     "The NetState level (1) is above the min_level (2) specified by a rule in layer conv1"),
    ("level: 3", "max_level: 2",
     "The NetState level (3) is above the max_level (2) specified by a rule in layer conv1"),
    ("stage: 'a'", "stage: 'a' stage: 'b'",
     "The NetState did not contain stage 'b' specified by a rule in layer conv1"),
    ("stage: 'a' stage: 'b'", "not_stage: 'b'",
     "The NetState contained a not_stage 'b' specified by a rule in layer conv1"),
])
def test_a_failed_rule_logs_caffes_reason(caffe_log, state_text, rule_text, message):
    assert state_meets_rule(state(state_text), rule(rule_text), "conv1") is False
    assert [r.getMessage() for r in caffe_log.records] == [message]


def test_filtering_names_the_layer_whose_rule_failed(caffe_log):
    net = parse_text("""
        state { phase: TRAIN }
        layer { name: "test_only" type: "Input" include { phase: TEST } }
        layer { name: "not_in_train" type: "Input" exclude { phase: TEST } }
    """, caffe_pb2.NetParameter())
    assert [layer.name for layer in filter_net(net).layer] == ["not_in_train"]
    assert [r.getMessage().rsplit(" ", 1)[1] for r in caffe_log.records] == ["test_only", "not_in_train"]
