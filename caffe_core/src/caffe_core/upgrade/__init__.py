"""The upgrades Caffe applies when it reads a net or solver, in Caffe's order.

`upgrade_net_as_needed` runs each step whose `needs` says the net uses the old form, logging what it
did with Caffe's own messages, exactly as Caffe's UpgradeNetAsNeeded does: V0 -> V1 layers, data
transformation fields, V1 -> V2 layers, input fields -> Input layer, BatchNorm param specs.
"""

from __future__ import annotations

import dataclasses
import logging
from types import ModuleType

from caffe_core.proto import caffe_pb2
from caffe_core.upgrade import batch_norm, data_transform, input_fields, v0_to_v1, v1_to_v2

log = logging.getLogger("caffe.upgrade")

NET_STEPS = (v0_to_v1, data_transform, v1_to_v2, input_fields, batch_norm)


@dataclasses.dataclass(frozen=True)
class StepMessages:
    """What Caffe logs around one upgrade step (`attempt` takes the file name)."""

    attempt: str
    success: str
    failure: str | None = None
    note: str | None = None


_DEPRECATED = "Attempting to upgrade input file specified using deprecated "
_UPGRADED = "Successfully upgraded file specified using deprecated "

MESSAGES: dict[ModuleType, StepMessages] = {
    v0_to_v1: StepMessages(
        attempt=_DEPRECATED + "V0LayerParameter: %s",
        success=_UPGRADED + "V0LayerParameter",
        failure="Warning: had one or more problems upgrading V0NetParameter to NetParameter (see above); "
                "continuing anyway.",
        note="Note that future Caffe releases will not support V0NetParameter; use "
             "./build/tools/upgrade_net_proto_text for prototxt and ./build/tools/upgrade_net_proto_binary "
             "for model weights upgrade this and any other net protos to the new format."),
    data_transform: StepMessages(
        attempt=_DEPRECATED + "transformation parameters: %s",
        success=_UPGRADED + "data transformation parameters.",
        note="Note that future Caffe releases will only support transform_param messages for "
             "transformation fields."),
    v1_to_v2: StepMessages(
        attempt=_DEPRECATED + "V1LayerParameter: %s",
        success=_UPGRADED + "V1LayerParameter",
        failure="Warning: had one or more problems upgrading V1LayerParameter (see above); "
                "continuing anyway."),
    input_fields: StepMessages(
        attempt=_DEPRECATED + "input fields: %s",
        success=_UPGRADED + "input fields.",
        note="Note that future Caffe releases will only support input layers and not input fields."),
    batch_norm: StepMessages(
        attempt="Attempting to upgrade batch norm layers using deprecated params: %s",
        success="Successfully upgraded batch norm layers using deprecated params."),
}


def net_needs_upgrade(param: caffe_pb2.NetParameter) -> bool:
    """Whether any upgrade step applies to a net (Caffe's NetNeedsUpgrade)."""
    return any(step.needs(param) for step in NET_STEPS)


def upgrade_net_as_needed(param: caffe_pb2.NetParameter, source: str = "<net>") -> bool:
    """Upgrades a net in place; False when a step met fields it could not carry over (Caffe goes on)."""
    success = True
    for step in NET_STEPS:
        if not step.needs(param):
            continue
        messages = MESSAGES[step]
        log.info(messages.attempt, source)
        if step.upgrade(param) is not False:  # steps that cannot fail return None
            log.info(messages.success)
        else:
            success = False
            log.error(messages.failure)
        if messages.note:
            log.warning(messages.note)
    return success
