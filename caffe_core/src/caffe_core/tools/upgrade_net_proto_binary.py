"""`upgrade_net_proto_binary IN OUT`: rewrites a binary net (.caffemodel) of any old format in the
current one."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from caffe_core.tools.upgrade_common import run_tool, tool_parser, upgrade_net_file

USAGE = "upgrade_net_proto_binary v0_net_proto_file_in net_proto_file_out"


def build_parser() -> argparse.ArgumentParser:
    """The command line: the file to upgrade and the one to write."""
    return tool_parser(USAGE, "Rewrites a binary net (.caffemodel) of any old format in the current one.",
                       "the binary net (.caffemodel) to upgrade", "the upgraded binary net to write")


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the tool; returns Caffe's exit code."""
    return run_tool(argv, build_parser(),
                    lambda source, target: upgrade_net_file(source, target, binary=True))


if __name__ == "__main__":
    sys.exit(main())
