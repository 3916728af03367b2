"""The upgrades Caffe applies when it reads a net or solver, in Caffe's order.

`upgrade_net_as_needed` runs each step whose `needs` says the file uses the old form, logging what it
did, exactly as Caffe's UpgradeNetAsNeeded does.
"""

from __future__ import annotations

import logging

from caffe_core.proto import caffe_pb2
from caffe_core.upgrade import batch_norm, input_fields

log = logging.getLogger("caffe.upgrade")

NET_STEPS = (input_fields, batch_norm)


def net_needs_upgrade(param: caffe_pb2.NetParameter) -> bool:
    """Whether any upgrade step applies to a net."""
    return any(step.needs(param) for step in NET_STEPS)


def upgrade_net_as_needed(param: caffe_pb2.NetParameter, source: str = "<net>") -> bool:
    """Upgrades a net in place; returns True when anything changed."""
    changed = False
    for step in NET_STEPS:
        if step.needs(param):
            log.info("Attempting to upgrade %s in %s", step.WHAT, source)
            step.upgrade(param)
            log.info("Successfully upgraded %s in %s", step.WHAT, source)
            changed = True
    return changed
