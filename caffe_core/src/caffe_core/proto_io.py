"""Reading and writing Caffe's files: text prototxt and binary protobuf, with clear errors.

Binary files are written atomically (to a temporary file beside the target, then renamed), so an
interrupted write never leaves a truncated model or snapshot behind.
"""

from __future__ import annotations

import difflib
import logging
import os
import re
import tempfile
from typing import TypeVar

from google.protobuf import message as pb_message
from google.protobuf import text_format

from caffe_core.errors import ModelFileError, PrototxtError
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import declare_all
from caffe_core.text_rewrite import UnknownBlock, restore_pack_block_names, rewrite_for_protobuf

M = TypeVar("M", bound=pb_message.Message)
log = logging.getLogger("caffe.prototxt")

# Set to 1 to drop parameter blocks no installed pack declares, with a warning, instead of refusing them.
LENIENT_ENV = "CAFFE_LENIENT_PARAMS"
_lenient: bool | None = None


def set_lenient_params(lenient: bool | None) -> None:
    """Whether reading drops unknown parameter blocks with a warning (None: as CAFFE_LENIENT_PARAMS says)."""
    global _lenient
    _lenient = lenient


def lenient_params() -> bool:
    """Whether unknown parameter blocks are dropped with a warning rather than refused."""
    if _lenient is not None:
        return _lenient
    return os.environ.get(LENIENT_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def parse_text(text: str, message: M, source: str = "<string>") -> M:
    """Parses Caffe text format into message; errors say source:line:column and what was wrong."""
    prepared, unknown = rewrite_for_protobuf(text, message.DESCRIPTOR, source)
    try:
        text_format.Merge(prepared, message, allow_unknown_extension=False)
    except text_format.ParseError as err:
        line, column = err.GetLine(), err.GetColumn()
        detail = str(err)
        if line is not None and detail.startswith(f"{line}:"):
            detail = detail.split(" : ", 1)[-1]
        if detail.startswith("'") and "': " in detail:
            # protobuf quotes the whole offending line first; the position already says where it is.
            detail = detail[detail.rfind("': ") + 3:]
        if line is not None and column is not None and prepared is not text:
            column = _column_in_original(text, prepared, line, column)
        where = f"{source}:{line}:{column}" if line is not None else source
        hint = _unknown_field_hint(detail)
        if hint:
            detail = detail.rstrip(".") + hint
        raise PrototxtError(f"{where}: {detail} (parsing a {message.DESCRIPTOR.name})") from None
    if unknown:
        _unknown_blocks(unknown, source)
    return message


def _unknown_blocks(unknown: list[UnknownBlock], source: str) -> None:
    """Refuses parameter blocks no installed pack declares (they would change what a layer computes
    unseen), naming the pack that declares each; in lenient mode, drops them with a warning."""
    from caffe_core.pack_index import install_hint

    if lenient_params():
        for block in unknown:
            log.warning("%s:%d: ignoring parameter block '%s' of %s: no installed layer pack declares it%s",
                        source, block.line, block.name, block.layer_label,
                        install_hint("param_blocks", block.name))
        return
    first = unknown[0]
    more = "" if len(unknown) == 1 else f" (and {len(unknown) - 1} more: " + ", ".join(
        sorted({b.name for b in unknown[1:]})) + ")"
    raise PrototxtError(
        f"{source}:{first.line}:{first.column}: {first.layer_label} has a parameter block '{first.name}' "
        f"that no installed layer pack declares{install_hint('param_blocks', first.name)}{more}. Install "
        f"the pack that declares it, or set {LENIENT_ENV}=1 (caffe_core.proto_io.set_lenient_params(True)) "
        f"to drop such blocks with a warning")


def _unknown_field_hint(detail: str) -> str:
    """For a field Caffe's own message lacks: the closest real field, or where a fork's field comes from."""
    found = re.search(r'Message type "caffe_core\.(\w+)" has no field named "(\w+)"', detail)
    if found is None or found.group(1) not in caffe_pb2.DESCRIPTOR.message_types_by_name:
        return ""
    message_name, field_name = found.groups()
    fields = caffe_pb2.DESCRIPTOR.message_types_by_name[message_name].fields_by_name
    close = difflib.get_close_matches(field_name, list(fields), n=1, cutoff=0.75)
    if close:
        return f"; did you mean '{close[0]}'?"
    from caffe_core.pack_index import install_hint

    key = f"{message_name}.{field_name}"
    return (f"; BVLC Caffe's {message_name} has no such field: '{field_name}' comes from a Caffe fork, "
            f"and a layer pack adds it{install_hint('fields', key)} (install the pack that provides "
            f"'{key}'; caffe-packs lists what the installed packs add)")


def _column_in_original(original: str, prepared: str, line: int, column: int) -> int:
    """Maps a 1-based column of the prepared text back to the user's text (rewrites change lengths)."""
    before, after = original.split("\n")[line - 1], prepared.split("\n")[line - 1]
    index = column - 1
    for a, b, size in difflib.SequenceMatcher(None, after, before, autojunk=False).get_matching_blocks():
        if a <= index < a + size:
            return b + index - a + 1
        if index < a:
            return b + 1
    return column


def read_text_file(path: str | os.PathLike, message: M) -> M:
    """Reads a text-format file into message."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise PrototxtError(f"{path}: file not found") from None
    except (OSError, UnicodeDecodeError) as err:
        raise PrototxtError(f"{path}: cannot read as text: {err}") from None
    return parse_text(text, message, path)


def to_text(message: pb_message.Message) -> str:
    """Caffe text format of a message (pack parameter blocks under their plain names)."""
    return restore_pack_block_names(text_format.MessageToString(message))


def write_text_file(path: str | os.PathLike, message: pb_message.Message) -> None:
    """Writes a message as text, atomically."""
    write_bytes_atomically(path, to_text(message).encode("utf-8"))


def parse_binary(data: bytes, message: M, source: str = "<bytes>") -> M:
    """Parses binary protobuf; a truncated or corrupt buffer gives a ModelFileError naming the source."""
    declare_all()
    try:
        message.ParseFromString(data)
    except pb_message.DecodeError as err:
        raise ModelFileError(
            f"{source}: not a valid binary {message.DESCRIPTOR.name} (truncated or corrupt file?): {err}"
        ) from None
    return message


def read_binary_file(path: str | os.PathLike, message: M) -> M:
    """Reads a binary protobuf file into message."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise ModelFileError(f"{path}: file not found") from None
    except OSError as err:
        raise ModelFileError(f"{path}: cannot read: {err}") from None
    if not data:
        raise ModelFileError(f"{path}: file is empty")
    return parse_binary(data, message, path)


def write_binary_file(path: str | os.PathLike, message: pb_message.Message) -> None:
    """Writes a message in binary, atomically."""
    write_bytes_atomically(path, message.SerializeToString())


def write_bytes_atomically(path: str | os.PathLike, data: bytes) -> None:
    """Writes bytes to a temporary file beside path, syncs it, then renames it over path."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix="-" + os.path.basename(path), dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
