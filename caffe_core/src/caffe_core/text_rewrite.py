"""Prepares Caffe text-format files for the protobuf parser.

Real prototxt files carry things protobuf's parser cannot take as they are:
- parameter blocks declared by packs (`zzz_param { }`), which protobuf spells `[pkg.zzz_param] { }`;
- parameter blocks of Caffe forks that no installed pack declares (`prior_box_param { }`): they are
  blanked so protobuf reports the file's other errors first, and listed for the reader, which refuses them
  (or, when the user asks for leniency, drops them with a warning);
- fields packs add to Caffe's own messages: extensions (`dropout_param { scale_train: false }`), spelled
  `[pkg.scale_train]`, and aliases rewritten into Caffe's fields (`ceil_mode: true` -> `round_mode: CEIL`).
Everything else is passed through untouched, so protobuf reports real errors at their line and column
(an unknown field of Caffe's own messages included: it changes what a BVLC layer computes, so it is
never dropped). Dropped text is blanked, not removed, so later line and column numbers stay right.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from google.protobuf import descriptor

from caffe_core.descriptor_types import MessageDescriptor
from caffe_core.errors import PrototxtError
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import FieldAlias

_TOKEN = re.compile(
    r"""(?P<space>\s+)|(?P<comment>\#[^\n]*)|(?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
    r"""|(?P<word>[\w.+-]+)|(?P<punct>.)""",
    re.DOTALL,
)
_LAYER_MESSAGES = ("LayerParameter", "V1LayerParameter")


@dataclasses.dataclass
class UnknownBlock:
    """A `*_param` block of a layer that no installed pack declares: where it is and whose it is."""

    name: str
    line: int
    column: int
    layer: dict[str, str]

    @property
    def layer_label(self) -> str:
        """`layer 'conv1' (type Normalize)`, with what the file says of the layer."""
        name, kind = self.layer.get("name"), self.layer.get("type")
        label = f"layer '{name}'" if name is not None else "a layer"
        return f"{label} (type {kind})" if kind is not None else label


class _Tokens:
    def __init__(self, text: str) -> None:
        self.items = [(m.lastgroup, m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)
                      if m.lastgroup not in ("space", "comment")]
        self.pos = 0

    def peek(self) -> tuple[str | None, str, int, int] | None:
        return self.items[self.pos] if self.pos < len(self.items) else None

    def next(self) -> tuple[str | None, str, int, int]:
        item = self.items[self.pos]
        self.pos += 1
        return item


class _Rewriter:
    def __init__(self, text: str, blocks: Callable[[], dict[str, descriptor.FieldDescriptor]],
                 fields: Callable[[], dict[tuple[str, str], descriptor.FieldDescriptor | FieldAlias]],
                 source: str) -> None:
        self.text = text
        self.tokens = _Tokens(text)
        self.blocks = blocks
        self.fields = fields
        self.source = source
        self.edits: list[tuple[int, int, str]] = []
        self.unknown: list[UnknownBlock] = []
        self.layers: list[dict[str, str]] = []

    def run(self, message: MessageDescriptor) -> str:
        try:
            self._fields(message, closer=None)
        except (IndexError, _Malformed):
            return self.text  # leave malformed text to protobuf, which reports it precisely
        out, last = [], 0
        for start, end, replacement in sorted(self.edits):
            out.append(self.text[last:start])
            out.append(replacement)
            last = end
        out.append(self.text[last:])
        return "".join(out)

    def _line_of(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1

    def _column_of(self, offset: int) -> int:
        return offset - self.text.rfind("\n", 0, offset)

    def _fields(self, message: MessageDescriptor | None, closer: str | None) -> None:
        if message is not None and message.name in _LAYER_MESSAGES:
            self.layers.append({})
            try:
                self._field_list(message, closer)
            finally:
                self.layers.pop()
        else:
            self._field_list(message, closer)

    def _field_list(self, message: MessageDescriptor | None, closer: str | None) -> None:
        while True:
            tok = self.tokens.peek()
            if tok is None:
                if closer is not None:
                    raise _Malformed
                return
            kind, value, start, _ = tok
            if closer is not None and value == closer:
                self.tokens.next()
                return
            if value == "[":  # an extension name written out in full
                while self.tokens.next()[1] != "]":
                    pass
                self._value(None)
                continue
            if kind != "word":
                raise _Malformed
            self.tokens.next()
            self._field(message, value, start)

    def _field(self, message: MessageDescriptor | None, name: str, start: int) -> None:
        field = message.fields_by_name.get(name) if message is not None else None
        if field is None and message is not None and message.name in _LAYER_MESSAGES \
                and name.endswith("_param"):
            blocks = self.blocks()
            if name in blocks:
                self.edits.append((start, start + len(name), f"[{blocks[name].full_name}]"))
                self._value(blocks[name].message_type)
                return
            end = self._value(None)
            line, column = self._line_of(start), self._column_of(start)
            self.unknown.append(UnknownBlock(name, line, column, self.layers[-1]))
            self.edits.append((start, end, re.sub(r"[^\n]", " ", self.text[start:end])))
            return
        if message is not None and message.name in _LAYER_MESSAGES and name in ("name", "type"):
            first = self.tokens.pos
            self._value(None)
            values = [value for kind, value, _, _ in self.tokens.items[first:self.tokens.pos]
                      if kind in ("string", "word")]
            if values:
                self.layers[-1][name] = values[0].strip("\"'")
            return
        if field is None and message is not None and message.file.name == caffe_pb2.DESCRIPTOR.name:
            added = self.fields().get((message.name, name))
            if isinstance(added, FieldAlias):
                self._alias(message, name, added, start)
                return
            if added is not None:
                self.edits.append((start, start + len(name), f"[{added.full_name}]"))
                self._value(added.message_type)
                return
        sub = field.message_type if field is not None else None
        self._value(sub)

    def _alias(self, message: MessageDescriptor, name: str, alias: FieldAlias, start: int) -> None:
        """Replaces `name: value` by the Caffe fields the alias gives for that value."""
        if self.tokens.next()[1] != ":":
            raise _Malformed
        _, value, _, end = self.tokens.next()
        replacement = alias.replacement(value)
        if replacement is None:
            raise PrototxtError(f"{self.source}:{self._line_of(start)}:{self._column_of(start)}: "
                                f"{message.name}.{name} takes "
                                f"{' or '.join(alias.rewrites)}, got '{value}'")
        self.edits.append((start, end, replacement))

    def _value(self, sub: MessageDescriptor | None) -> int:
        """Consumes a field's value (after its name) and returns the offset where it ends."""
        tok = self.tokens.peek()
        if tok is not None and tok[1] == ":":
            self.tokens.next()
            tok = self.tokens.peek()
        if tok is None:
            raise _Malformed
        if tok[1] in ("{", "<"):
            self.tokens.next()
            self._fields(sub, "}" if tok[1] == "{" else ">")
            return self.tokens.items[self.tokens.pos - 1][3]
        if tok[1] == "[":
            self.tokens.next()
            while True:
                tok = self.tokens.peek()
                if tok is None:
                    raise _Malformed
                if tok[1] == "]":
                    return self.tokens.next()[3]
                self._value(sub)
                if (following := self.tokens.peek()) is not None and following[1] == ",":
                    self.tokens.next()
        kind, _, _, end = self.tokens.next()
        if kind == "string":
            while (following := self.tokens.peek()) is not None and following[0] == "string":
                end = self.tokens.next()[3]
        elif kind != "word":
            raise _Malformed
        following = self.tokens.peek()
        if following is not None and following[1] in (",", ";"):
            end = self.tokens.next()[3]
        return end


class _Malformed(Exception):
    pass


def rewrite_for_protobuf(text: str, message: MessageDescriptor,
                         source: str = "<string>") -> tuple[str, list[UnknownBlock]]:
    """Text that protobuf's parser accepts, with pack blocks and fields translated, and the blocks no
    installed pack declares (blanked in that text)."""
    from caffe_core.schema_extensions import message_fields, param_blocks

    added = {field for _, field in message_fields()}
    if not re.search(r"_param\b", text) and not any(name in text for name in added):
        return text, []
    rewriter = _Rewriter(text, param_blocks, message_fields, source)
    return rewriter.run(message), rewriter.unknown


def restore_pack_block_names(text: str) -> str:
    """Turns protobuf's `[caffe_core.ext.zzz_param]` back into Caffe's plain `zzz_param`."""
    from caffe_core.schema_extensions import EXTENSION_PACKAGE

    return re.sub(r"^(\s*)\[" + re.escape(EXTENSION_PACKAGE) + r"\.(?:\w+\.)*(\w+)\]", r"\1\2", text,
                  flags=re.M)
