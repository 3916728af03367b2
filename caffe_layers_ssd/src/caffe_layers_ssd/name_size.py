"""The SSD fork's name-size files: "name height width" entries, read as its `infile >> name >> ...` loop."""

from __future__ import annotations

import os
import re

_SPACE = re.compile(r"\s*")
_WORD = re.compile(r"\S+")
_INTEGER = re.compile(r"[+-]?\d+")


def read_name_sizes(path: str | os.PathLike) -> list[tuple[str, int, int]]:
    """Every (name, height, width) entry, whitespace-separated, as a C++ stream reads them."""
    # As `infile >> name >> height >> width`: reading stops at the first entry whose height or width does not
    # start with an integer, and an integer ends at its last digit ("300x" gives 300, then "x" is a name).
    with open(path) as f:
        text = f.read()
    entries: list[tuple[str, int, int]] = []
    position = 0
    while True:
        name = _WORD.match(text, _skip_space(text, position))
        if name is None:
            break
        position = name.end()
        numbers = []
        for _ in range(2):
            number = _INTEGER.match(text, _skip_space(text, position))
            if number is None:
                return entries
            numbers.append(int(number.group()))
            position = number.end()
        entries.append((name.group(), numbers[0], numbers[1]))
    return entries


def _skip_space(text: str, position: int) -> int:
    """The position past the whitespace (if any) at `position`."""
    space = _SPACE.match(text, position)
    assert space is not None  # \s* matches the empty string too
    return space.end()
