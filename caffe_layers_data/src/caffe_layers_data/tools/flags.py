"""gflags-style command lines: `--flag=value`, `-flag=value`, `--flag value`, `--noflag`, `--flag=false`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

TRUE_WORDS = {"true", "t", "yes", "y", "1"}
FALSE_WORDS = {"false", "f", "no", "n", "0"}


def normalise_argv(argv: Sequence[str], bool_flags: Sequence[str]) -> list[str]:
    """Rewrites gflags spellings into argparse ones (`--no-flag` for false booleans)."""
    out = []
    for arg in argv:
        # A negative number is a flag's value (`--resize_width -12`), not a flag.
        if arg.startswith("-") and not arg.startswith("--") and len(arg) > 2 and arg[1].isalpha():
            arg = "-" + arg
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            if name in bool_flags and eq:
                if value.lower() not in TRUE_WORDS | FALSE_WORDS:
                    raise SystemExit(f"error: --{name} expects true or false, got {value!r}")
                arg = f"--{name}" if value.lower() in TRUE_WORDS else f"--no-{name}"
            elif name.startswith("no") and name[2:] in bool_flags and not eq:
                arg = f"--no-{name[2:]}"
        out.append(arg)
    return out


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None, bool_flags: Sequence[str]
          ) -> argparse.Namespace:
    """Parses a gflags-style command line with an argparse parser."""
    return parser.parse_args(normalise_argv(sys.argv[1:] if argv is None else argv, bool_flags))
