"""Phase/level/stage filtering of a net's layers by their include/exclude rules, as Caffe's FilterNet."""

from __future__ import annotations

import logging

from caffe_core.errors import NetBuildError
from caffe_core.proto import caffe_pb2

log = logging.getLogger("caffe.net")


def state_meets_rule(state: caffe_pb2.NetState, rule: caffe_pb2.NetStateRule, layer_name: str) -> bool:
    """Whether a NetState satisfies one rule: phase, level bounds, all stages and no not_stage."""
    if rule.HasField("phase") and rule.phase != state.phase:
        log.info("The NetState phase (%d) differed from the phase (%d) specified by a rule in layer %s",
                 state.phase, rule.phase, layer_name)
        return False
    if rule.HasField("min_level") and state.level < rule.min_level:
        log.info("The NetState level (%d) is above the min_level (%d) specified by a rule in layer %s",
                 state.level, rule.min_level, layer_name)
        return False
    if rule.HasField("max_level") and state.level > rule.max_level:
        log.info("The NetState level (%d) is above the max_level (%d) specified by a rule in layer %s",
                 state.level, rule.max_level, layer_name)
        return False
    stages = set(state.stage)
    for stage in rule.stage:
        if stage not in stages:
            log.info("The NetState did not contain stage '%s' specified by a rule in layer %s",
                     stage, layer_name)
            return False
    for stage in rule.not_stage:
        if stage in stages:
            log.info("The NetState contained a not_stage '%s' specified by a rule in layer %s",
                     stage, layer_name)
            return False
    return True


def filter_net(param: caffe_pb2.NetParameter) -> caffe_pb2.NetParameter:
    """A copy of the net holding only the layers its state includes."""
    filtered = caffe_pb2.NetParameter()
    filtered.CopyFrom(param)
    del filtered.layer[:]
    for layer in param.layer:
        if layer.include and layer.exclude:
            raise NetBuildError(f"layer '{layer.name}': specify either include rules or exclude rules; "
                                f"not both")
        included = not layer.include
        if included:
            included = not any(state_meets_rule(param.state, r, layer.name) for r in layer.exclude)
        else:
            included = any(state_meets_rule(param.state, r, layer.name) for r in layer.include)
        if included:
            filtered.layer.add().CopyFrom(layer)
    return filtered
