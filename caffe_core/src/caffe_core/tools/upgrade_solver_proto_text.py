"""`upgrade_solver_proto_text IN OUT`: rewrites a solver prototxt that uses the deprecated
`solver_type` enum with the `type` string."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from caffe_core import proto_io
from caffe_core.proto import caffe_pb2
from caffe_core.tools.upgrade_common import EXIT_PARSE, read_text_input, run_tool, tool_parser
from caffe_core.upgrade import solver_type

log = logging.getLogger("caffe.tools")

USAGE = "upgrade_solver_proto_text old_solver_proto_file_in solver_proto_file_out"


def build_parser() -> argparse.ArgumentParser:
    """The command line: the file to upgrade and the one to write."""
    return tool_parser(USAGE, "Rewrites a solver prototxt that uses the deprecated solver_type enum with the "
                              "type string.",
                       "the solver prototxt to upgrade", "the upgraded solver prototxt to write")


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the tool; returns Caffe's exit code."""
    return run_tool(argv, build_parser(), _upgrade)


def _upgrade(source: str, target: str) -> int:
    solver = caffe_pb2.SolverParameter()
    if not read_text_input(source, solver):
        return EXIT_PARSE
    if solver_type.needs(solver):
        solver_type.upgrade_solver_as_needed(solver, source)
    else:
        log.error("File already in latest proto format: %s", source)
    proto_io.write_text_file(target, solver)
    log.info("Wrote upgraded SolverParameter text proto to %s", target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
