"""What Caffe's three upgrade tools share: argument check, reading the input, and exit codes.

Like Caffe's tools: a wrong argument count logs the usage and exits 1; an input that does not parse
logs why and exits 2; a missing input or an unwritable output is fatal (logged, exit 1); otherwise
the exit code is 1 when an upgrade step met fields it could not carry over, else 0.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from google.protobuf import message as pb_message

from caffe_core import proto_io
from caffe_core.errors import CaffeError, ModelFileError, PrototxtError
from caffe_core.logs import init_log
from caffe_core.proto import caffe_pb2
from caffe_core.upgrade import net_needs_upgrade, upgrade_net_as_needed

log = logging.getLogger("caffe.tools")

EXIT_USAGE = 1
EXIT_PARSE = 2
EXIT_FATAL = 1
EXIT_STATUS = ("exit status: 0 when written, 2 when the input does not parse (nothing is written), 1 on "
               "a wrong command line, a missing input, an unwritable output, or net fields an upgrade step "
               "could not carry over")


class InputMissingError(CaffeError):
    """The input file of an upgrade tool does not exist (fatal in Caffe's tools)."""


class _UsageError(CaffeError):
    """A command line that is not exactly (input, output)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # Caffe's tools log the usage and exit 1, not argparse's 2
        raise _UsageError(message)


def tool_parser(usage: str, description: str, source_help: str, target_help: str) -> argparse.ArgumentParser:
    """The command line of an upgrade tool, `usage` being `prog input_name output_name`."""
    prog, source_name, target_name = usage.split()
    parser = _Parser(prog=prog, usage=usage, description=description, epilog=EXIT_STATUS, allow_abbrev=False)
    parser.add_argument("source", metavar=source_name, help=source_help)
    parser.add_argument("target", metavar=target_name, help=target_help)
    return parser


def run_tool(argv: Sequence[str] | None, parser: argparse.ArgumentParser,
             body: Callable[[str, str], int]) -> int:
    """Starts glog-style logging, parses (input, output) and runs body on them; returns the exit code."""
    init_log()
    try:
        args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    except _UsageError:
        log.error("Usage: %s", parser.usage)
        return EXIT_USAGE
    try:
        return body(args.source, args.target)
    except (CaffeError, OSError) as err:
        log.critical("%s", err)
        return EXIT_FATAL


def read_text_input(path: str, message: pb_message.Message) -> bool:
    """Parses a text input into message; logs the parse error and Caffe's line and returns False."""
    _require(path)
    try:
        proto_io.read_text_file(path, message)
    except PrototxtError as err:
        log.error("%s", err)
        log.error("Failed to parse input text file as %s: %s", message.DESCRIPTOR.name, path)
        return False
    return True


def read_binary_input(path: str, message: pb_message.Message) -> bool:
    """Parses a binary input into message; logs the parse error and Caffe's line and returns False."""
    _require(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
        proto_io.parse_binary(data, message, path)
    except (OSError, ModelFileError) as err:
        log.error("%s", err)
        log.error("Failed to parse input binary file as %s: %s", message.DESCRIPTOR.name, path)
        return False
    return True


def upgrade_net_file(source: str, target: str, binary: bool) -> int:
    """Reads a net (text or binary), upgrades it as Caffe's tools do and writes it in the same form."""
    net = caffe_pb2.NetParameter()
    read = read_binary_input if binary else read_text_input
    if not read(source, net):
        return EXIT_PARSE
    success = True
    if net_needs_upgrade(net):
        success = upgrade_net_as_needed(net, source)
        if not success:
            log.error("Encountered error(s) while upgrading prototxt; see details above.")
    else:
        log.error("File already in latest proto format: %s", source)
    (proto_io.write_binary_file if binary else proto_io.write_text_file)(target, net)
    log.info("Wrote upgraded NetParameter %s proto to %s", "binary" if binary else "text", target)
    return 0 if success else 1


def _require(path: str) -> None:
    if not os.path.isfile(path):
        raise InputMissingError(f"File not found: {path}")
