"""The `caffe` command: `caffe train|test|time|device_query|plot [flags]`, with Caffe's (gflags) flags.

Flags may be spelled `-solver x`, `--solver x`, `-solver=x` or `--solver=x`, and may come anywhere.
Errors in the input are logged with the file or field at fault and give exit status 1.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from caffe_core import CAFFE_VERSION
from caffe_core.errors import CaffeError
from caffe_core.logs import init_log

log = logging.getLogger("caffe.tool")

# Each command's module is imported only when run, so `caffe train` never loads plotting libraries.
COMMANDS = {
    "train": ("caffe_core.tools.caffe_cli_train", "train"),
    "test": ("caffe_core.tools.caffe_cli_score", "test"),
    "time": ("caffe_core.tools.caffe_cli_time", "time_net"),
    "device_query": ("caffe_core.tools.caffe_cli_device", "device_query"),
    "plot": ("caffe_core.tools.plot_log", "plot_command"),
}
VALUE_FLAGS = ("gpu", "solver", "model", "phase", "level", "stage", "snapshot", "weights", "iterations",
               "sigint_effect", "sighup_effect", "minloglevel")
BOOL_FLAGS = ("stop_on_nan", "logtostderr", "alsologtostderr")
USAGE = """caffe <command> <args>

commands:
  train           train or finetune a model
  test            score a model
  device_query    show GPU diagnostic information
  time            benchmark model execution time
  plot            draw loss, test outputs and learning rate of a training log: plot LOG OUT.png"""


class CliError(CaffeError):
    """A command line that names no command, an unknown one, or contradictory flags."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse would exit(2) with its own format
        raise CliError(f"{message}\nusage: {USAGE}")


def _parse_bool(text: str) -> bool:
    lowered = text.lower()
    if lowered in ("1", "true", "yes", "t", "y"):
        return True
    if lowered in ("0", "false", "no", "f", "n"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got '{text}'")


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command's flags (gflags are global: any flag is accepted with any command)."""
    parser = _Parser(prog="caffe", usage=USAGE, add_help=True, allow_abbrev=False)
    parser.add_argument("command", nargs="?", help="train, test, time, device_query or plot")
    parser.add_argument("paths", nargs="*", help="for plot: the training log and the output image")
    parser.add_argument("--gpu", default="", help="comma-separated device ids, or 'all'; CPU when empty")
    parser.add_argument("--solver", default="", help="the solver prototxt")
    parser.add_argument("--model", default="", help="the net prototxt (test, time)")
    parser.add_argument("--phase", default="", help="TRAIN or TEST, for time")
    parser.add_argument("--level", type=int, default=0, help="the NetState level")
    parser.add_argument("--stage", default="", help="comma-separated NetState stages")
    parser.add_argument("--snapshot", default="", help="a .solverstate[.h5] to resume training from")
    parser.add_argument("--weights", default="", help="weights to finetune from (comma list) or to test")
    parser.add_argument("--iterations", type=int, default=50, help="test/time iterations")
    parser.add_argument("--sigint_effect", default="stop", help="on SIGINT: stop, snapshot or none")
    parser.add_argument("--sighup_effect", default="snapshot", help="on SIGHUP: stop, snapshot or none")
    parser.add_argument("--minloglevel", type=int, default=0, help="0 INFO, 1 WARNING, 2 ERROR")
    parser.add_argument("--version", action="version", version=f"caffe version {CAFFE_VERSION}",
                        help="print the Caffe version this reproduces and exit")
    for flag, help_text in (("stop_on_nan", "stop training when the loss becomes NaN or infinite"),
                            ("logtostderr", "accepted for glog compatibility (logs always go to stderr)"),
                            ("alsologtostderr", "accepted for glog compatibility")):
        parser.add_argument(f"--{flag}", type=_parse_bool, nargs="?", const=True, default=False,
                            help=help_text)
    return parser


def normalize_flags(argv: Sequence[str]) -> list[str]:
    """Rewrites gflags' single-dash spellings (`-solver x`, `-solver=x`) to argparse's double dash."""
    known = set(VALUE_FLAGS) | set(BOOL_FLAGS) | {"version"}
    result = []
    for arg in argv:
        name = arg[1:].split("=", 1)[0]
        if arg.startswith("-") and not arg.startswith("--") and name in known:
            arg = "-" + arg
        result.append(arg)
    return result


def _command(name: str) -> Callable[[argparse.Namespace], int]:
    module_name, function_name = COMMANDS[name]
    return getattr(importlib.import_module(module_name), function_name)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs one caffe command; returns the process exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(normalize_flags(argv))
    except CliError as err:
        print(f"caffe: {err}", file=sys.stderr)
        return 1
    init_log({0: logging.INFO, 1: logging.WARNING, 2: logging.ERROR}.get(args.minloglevel, logging.FATAL))
    if args.command not in COMMANDS:
        what = f"Unknown action: {args.command}" if args.command else "No command given"
        print(f"caffe: {what}\nusage: {USAGE}", file=sys.stderr)
        return 1
    if args.paths and args.command != "plot":
        print(f"caffe: unexpected arguments {' '.join(args.paths)} for '{args.command}' (flags need a "
              f"leading dash)\nusage: {USAGE}", file=sys.stderr)
        return 1
    try:
        return _command(args.command)(args)
    except CaffeError as err:
        log.error("%s", err)
        return 1


if __name__ == "__main__":
    sys.exit(main())
