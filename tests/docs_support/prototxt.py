"""Checking a ```prototxt block: it must parse as the message it is (a net, a solver or one layer)."""

from __future__ import annotations

import re

from google.protobuf import message as pb_message

from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text

TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|#[^\n]*|[A-Za-z_][\w.]*|[{}<>:\[\]]|[^\s]')
SOLVER_KEYS = {"base_lr", "net", "train_net", "solver_type", "type"}


def top_level_fields(text: str) -> list[tuple[str, int, int]]:
    """(name, start, end) of each top-level field; a message field's start and end enclose its body."""
    tokens = [t for t in TOKEN.finditer(text) if not t.group().startswith(("#", '"', "'"))]
    fields, depth, opened = [], 0, None
    for index, token in enumerate(tokens):
        value = token.group()
        following = tokens[index + 1].group() if index + 1 < len(tokens) else ""
        if depth == 0 and re.match(r"[A-Za-z_]", value) and following in (":", "{", "<"):
            brace = following if following != ":" else (tokens[index + 2].group() if index + 2 < len(tokens)
                                                         else "")
            fields.append([value, token.start(), token.end()])
            opened = len(fields) - 1 if brace in ("{", "<") else None
        if value in ("{", "<"):
            if depth == 0 and opened is not None:
                fields[opened][1] = token.end()
            depth += 1
        elif value in ("}", ">"):
            depth -= 1
            if depth == 0 and opened is not None:
                fields[opened][2] = token.start()
                opened = None
    return [(name, start, end) for name, start, end in fields]


def parse_prototxt(text: str, source: str) -> pb_message.Message:
    """Parses the block as one `layer { ... }` (a LayerParameter), a solver or a net, by its fields."""
    fields = top_level_fields(text)
    names = [name for name, _, _ in fields]
    if names == ["layer"]:
        _, start, end = fields[0]
        # Blanking all but the body keeps the lines and columns that parse errors name.
        body = re.sub(r"[^\n]", " ", text[:start]) + text[start:end]
        return parse_text(body, caffe_pb2.LayerParameter(), source)
    if SOLVER_KEYS & set(names):
        return parse_text(text, caffe_pb2.SolverParameter(), source)
    return parse_text(text, caffe_pb2.NetParameter(), source)
