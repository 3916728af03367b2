"""`upgrade_net_proto_text IN OUT`: rewrites a net prototxt of any old format in the current one."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from caffe_core.tools.upgrade_common import run_tool, upgrade_net_file

USAGE = "upgrade_net_proto_text v0_net_proto_file_in net_proto_file_out"


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the tool; returns Caffe's exit code."""
    return run_tool(argv, USAGE, lambda source, target: upgrade_net_file(source, target, binary=False))


if __name__ == "__main__":
    sys.exit(main())
