"""```console blocks: the `$ ` commands, run with bash, except `pip install` and `nox`, which are checked.

`pip install` would change the environment the tests run in, and `nox` sessions are what runs these tests:
for those, every local path a pip command names must exist (in the working folder or the repository) with
the extras it asks for declared, and every session a nox command names must exist in noxfile.py.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

PROMPT = "$ "
SEPARATORS = {"&&", "||", ";", "&"}
OPERATOR_CHARS = set("();<>|&")
PIP_VALUE_OPTIONS = {"-c", "--constraint", "-i", "--index-url", "--extra-index-url", "-f", "--find-links",
                     "-t", "--target", "--prefix", "--root", "--upgrade-strategy", "--python-version",
                     "--platform", "--only-binary", "--no-binary", "-C", "--config-settings"}
NOX_SESSION_OPTIONS = {"-s", "--session", "--sessions", "-e"}
REQUIREMENT = re.compile(r"^(?P<path>[^\[\]]+?)(?:\[(?P<extras>[^\]]*)\])?$")
TIMEOUT_S = 240
OUTPUT_TAIL = 4000


class CommandError(AssertionError):
    """A console command that failed, or a pip or nox command naming what does not exist."""


@dataclasses.dataclass(frozen=True)
class Command:
    """One `$ ` command of a console block (continuation lines joined) and its line in the page."""

    text: str
    line: int


def commands(code: str, first_line: int) -> list[Command]:
    """The `$ ` commands of a console block whose first line is first_line; the other lines are output."""
    found, pending = [], None
    for offset, line in enumerate(code.splitlines()):
        if pending is not None:
            pending = Command(pending.text[:-1] + line.rstrip(), pending.line)
        elif line.startswith(PROMPT):
            pending = Command(line[len(PROMPT):].rstrip(), first_line + offset)
        if pending is not None and not pending.text.endswith("\\"):
            found.append(pending)
            pending = None
    if pending is not None:
        found.append(pending)
    return found


def _segments(text: str, where: str) -> list[list[str]]:
    """The simple commands of a command list (split at &&, ||, ; and &), as shell words."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    segments: list[list[str]] = [[]]
    try:
        for word in lexer:
            if word in SEPARATORS:
                segments.append([])
            else:
                segments[-1].append(word)
    except ValueError as err:
        raise CommandError(f"{where}: cannot read `{text}` as shell words: {err}") from err
    return [words for words in segments if words]


def _join(words: list[str]) -> str:
    """Shell words back as a command; operators (`|`, `>`, ...) stay unquoted."""
    return " ".join(word if set(word) <= OPERATOR_CHARS else shlex.quote(word) for word in words)


def _program(words: list[str]) -> list[str]:
    """The words from the program on: environment assignments dropped, `python -m X` read as X."""
    while words and re.match(r"^[A-Za-z_]\w*=", words[0]):
        words = words[1:]
    if len(words) > 2 and re.match(r"^python[\d.]*$", Path(words[0]).name) and words[1] == "-m":
        words = words[2:]
    return words


def _is_pip_install(words: list[str]) -> bool:
    return len(words) > 1 and re.match(r"^pip[\d.]*$", Path(words[0]).name) is not None \
        and words[1] == "install"


def _normalise(extra: str) -> str:
    return re.sub(r"[-_.]+", "-", extra.strip()).lower()


def _declared_extras(project: Path) -> set[str]:
    pyproject = project / "pyproject.toml"
    if not pyproject.is_file():
        return set()
    with open(pyproject, "rb") as f:
        extras = tomllib.load(f).get("project", {}).get("optional-dependencies", {})
    return {_normalise(name) for name in extras}


def _check_local_requirement(requirement: str, cwd: Path, repo: Path, where: str) -> None:
    match = REQUIREMENT.match(requirement)
    if match is None:
        raise CommandError(f"{where}: cannot read the pip requirement {requirement!r}")
    roots = [root / match["path"] for root in (cwd, repo)]
    path = next((p for p in roots if p.exists()), None)
    if path is None:
        raise CommandError(f"{where}: pip install names {match['path']}, which exists neither in the working "
                           f"folder nor in the repository")
    wanted = {_normalise(extra) for extra in (match["extras"] or "").split(",") if extra.strip()}
    missing = wanted - _declared_extras(path)
    if missing:
        raise CommandError(f"{where}: {match['path']} declares no extra {', '.join(sorted(missing))} in its "
                           f"pyproject.toml")


def check_pip_install(words: list[str], cwd: Path, repo: Path, where: str) -> None:
    """Checks the local paths (and their extras) and requirement files a `pip install` names."""
    arguments = iter(words[2:])
    for word in arguments:
        if word in ("-r", "--requirement"):
            file = next(arguments, "")
            if not any((root / file).is_file() for root in (cwd, repo)):
                raise CommandError(f"{where}: pip install -r names {file!r}, which does not exist")
        elif word in ("-e", "--editable"):
            _check_local_requirement(next(arguments, ""), cwd, repo, where)
        elif word in PIP_VALUE_OPTIONS:
            next(arguments, None)
        elif not word.startswith("-") and "://" not in word and (word.startswith((".", "~")) or "/" in word):
            _check_local_requirement(os.path.expanduser(word), cwd, repo, where)


def nox_sessions(noxfile: Path) -> set[str]:
    """The session names noxfile.py defines (a session's function name, or its `name=`)."""
    names = set()
    for node in ast.walk(ast.parse(noxfile.read_text())):
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if ast.unparse(target) in ("nox.session", "session"):
                keywords = decorator.keywords if isinstance(decorator, ast.Call) else []
                named = [k.value.value for k in keywords
                         if k.arg == "name" and isinstance(k.value, ast.Constant)]
                names.add(named[0] if named else node.name)
    return names


def check_nox(words: list[str], repo: Path, where: str) -> None:
    """Checks that every session a nox command names (`-s a b`, `--session a`) exists in noxfile.py."""
    known, named, selecting = nox_sessions(repo / "noxfile.py"), [], False
    for word in words[1:]:
        if word == "--":
            break
        if word.startswith("-"):
            option, _, value = word.partition("=")
            selecting = option in NOX_SESSION_OPTIONS
            if selecting and value:
                named.append(value)
        elif selecting:
            named.append(word)
    for name in named:
        base = re.sub(r"-\d+(\.\d+)*$", "", name.split("(", 1)[0])
        if base not in known:
            raise CommandError(f"{where}: nox session {name!r} is not in noxfile.py (sessions: "
                               f"{', '.join(sorted(known))})")


def _environment() -> dict[str, str]:
    """This interpreter's scripts (caffe, python, ...) first on PATH, and no display for plots."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["MPLBACKEND"] = "Agg"
    return env


def run_command(command: Command, cwd: Path, repo: Path, source: str) -> None:
    """Runs the command with bash in cwd, after checking (and leaving out) its pip install and nox parts."""
    where = f"{source}:{command.line}"
    segments = _segments(command.text, where)
    kept = []
    for words in segments:
        program = _program(words)
        if _is_pip_install(program):
            check_pip_install(program, cwd, repo, where)
        elif program and Path(program[0]).name == "nox":
            check_nox(program, repo, where)
        else:
            kept.append(words)
    if not kept:
        return
    text = command.text if len(kept) == len(segments) else " && ".join(_join(words) for words in kept)
    try:
        done = subprocess.run(["bash", "-c", text], cwd=cwd, env=_environment(), capture_output=True,
                              text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as err:
        raise CommandError(f"{where}: `{text}` ran past {TIMEOUT_S} s") from err
    if done.returncode != 0:
        output = (done.stdout + done.stderr)[-OUTPUT_TAIL:]
        raise CommandError(f"{where}: `{text}` exited with status {done.returncode}:\n{output}")
