"""`upgrade_net_proto_text IN OUT`: rewrites a net prototxt of any old format in the current one."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

from caffe_core import proto_io
from caffe_core.proto import caffe_pb2
from caffe_core.tools.upgrade_common import (
    EXIT_PARSE,
    EXIT_USAGE,
    read_text_input,
    run_fatal_guarded,
    tool_arguments,
)
from caffe_core.upgrade import net_needs_upgrade, upgrade_net_as_needed

log = logging.getLogger("caffe.tools")

USAGE = "upgrade_net_proto_text v0_net_proto_file_in net_proto_file_out"


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the tool; returns Caffe's exit code."""
    paths = tool_arguments(argv, USAGE)
    if paths is None:
        return EXIT_USAGE
    return run_fatal_guarded(lambda: _upgrade(*paths))


def _upgrade(source: str, target: str) -> int:
    net = caffe_pb2.NetParameter()
    if not read_text_input(source, net):
        return EXIT_PARSE
    success = True
    if net_needs_upgrade(net):
        success = upgrade_net_as_needed(net, source)
        if not success:
            log.error("Encountered error(s) while upgrading prototxt; see details above.")
    else:
        log.error("File already in latest proto format: %s", source)
    proto_io.write_text_file(target, net)
    log.info("Wrote upgraded NetParameter text proto to %s", target)
    return 0 if success else 1


if __name__ == "__main__":
    sys.exit(main())
