"""The code blocks of a Markdown page: its fenced blocks (with their markers) and any indented ones."""

from __future__ import annotations

import dataclasses
import re

FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
SKIP_MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*skip:\s*(?P<reason>.*?)\s*-->\s*$")
PUBLIC_MODELS_MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*public-models\s*-->\s*$")
ANY_MARKER = re.compile(r"<!--\s*docs-test")
CONTAINER = re.compile(r"^\s*(?:[-*+]|\d+[.)]|!!!\+?|\?\?\?\+?|===)(?:\s|$)")
CODE_INDENT = 4


class PageError(AssertionError):
    """A page that breaks the rules of its code blocks; the message names the page and line."""


@dataclasses.dataclass(frozen=True)
class Block:
    """A fenced code block: its language, its text (the fence's indentation removed), where it is, the reason
    of its skip marker, and whether a public-models marker says it reads the public models (as models/)."""

    language: str
    code: str
    line: int
    skip_reason: str | None = None
    reads_public_models: bool = False


def _width(line: str) -> int:
    expanded = line.expandtabs(CODE_INDENT)
    return len(expanded) - len(expanded.lstrip(" "))


def _fences(lines: list[str], source: str) -> list[tuple[int, int, re.Match]]:
    """(opening index, closing index, opening match) of every fenced block."""
    fences, index = [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        char, length = opening["fence"][0], len(opening["fence"])
        closing = re.compile(rf"^ *{re.escape(char)}{{{length},}}\s*$")
        end = next((i for i in range(index + 1, len(lines)) if closing.match(lines[i])), None)
        if end is None:
            raise PageError(f"{source}:{index + 1}: code fence never closed")
        fences.append((index, end, opening))
        index = end + 1
    return fences


def _marker(lines: list[str], fence_index: int, source: str) -> tuple[str | None, bool, int | None]:
    """The marker before the fence (blank lines allowed): its skip reason, whether it is a public-models
    marker, and its index."""
    index = fence_index - 1
    while index >= 0 and not lines[index].strip():
        index -= 1
    if index < 0:
        return None, False, None
    if PUBLIC_MODELS_MARKER.match(lines[index]):
        return None, True, index
    marker = SKIP_MARKER.match(lines[index])
    if marker is None:
        return None, False, None
    if not marker["reason"]:
        raise PageError(f"{source}:{index + 1}: a docs-test skip marker must give its reason")
    return marker["reason"], False, index


def _dedent(line: str, indent: int) -> str:
    return line[indent:] if len(line) - len(line.lstrip(" ")) >= indent else line.lstrip(" ")


def fenced_blocks(text: str, source: str) -> list[Block]:
    """Every fenced block of the page in order; fails on a marker that marks no block."""
    lines = text.splitlines()
    fences = _fences(lines, source)
    blocks, used_markers = [], set()
    for start, end, opening in fences:
        reason, reads_public_models, marker = _marker(lines, start, source)
        used_markers.add(marker)
        language = opening["info"].strip().lstrip("{.").split(" ")[0].rstrip("}")
        body = [_dedent(line, len(opening["indent"])) for line in lines[start + 1:end]]
        blocks.append(Block(language, "\n".join(body) + "\n", start + 1, reason, reads_public_models))
    inside = {i for start, end, _ in fences for i in range(start, end + 1)}
    for index, line in enumerate(lines):
        if index not in inside and index not in used_markers and ANY_MARKER.search(line):
            raise PageError(f"{source}:{index + 1}: docs-test marker is not "
                            "`<!-- docs-test: skip: REASON -->` or `<!-- docs-test: public-models -->` "
                            "directly before a fenced block")
    return blocks


def _is_indented_code(lines: list[str], index: int, fence_lines: set[int]) -> bool:
    """Whether the line opens an indented code block: it follows a blank line and is indented 4 columns
    more than the list item or admonition it belongs to (or 4 at the top level)."""
    width = _width(lines[index])
    if width < CODE_INDENT or (index > 0 and lines[index - 1].strip()):
        return False
    limit = width
    for previous in range(index - 1, -1, -1):
        line = lines[previous]
        if not line.strip() or (previous in fence_lines and not FENCE.match(line)):
            continue
        indent = _width(line)
        if indent >= limit:
            continue
        if CONTAINER.match(line):
            return width >= indent + 2 * CODE_INDENT
        if indent == 0:
            return True
        limit = indent
    return True


def indented_code_lines(text: str, source: str) -> list[int]:
    """The line numbers where an indented (not fenced) code block starts."""
    lines = text.splitlines()
    fence_lines = {i for start, end, _ in _fences(lines, source) for i in range(start, end + 1)}
    found, in_code = [], False
    for index, line in enumerate(lines):
        if in_code and (not line.strip() or _width(line) >= CODE_INDENT):
            continue
        in_code = index not in fence_lines and _is_indented_code(lines, index, fence_lines)
        if in_code:
            found.append(index + 1)
    return found
