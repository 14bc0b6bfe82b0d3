"""An ONNX file's IR version and opset imports, read from the ModelProto wire format without the graph.

A ModelProto is a protobuf message: ``ir_version`` is field 1 (varint), ``graph`` field 7 and
``opset_import`` field 8 (OperatorSetIdProto: ``domain`` field 1, ``version`` field 2). Fields are read in
the order they are written; every other field, the graph above all, is skipped by its length with a seek,
so a multi-gigabyte model costs a few small reads and no memory. No onnx or protobuf runtime is needed.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import BinaryIO

__all__ = ["DEFAULT_DOMAINS", "OnnxHeader", "OnnxHeaderError", "read_header"]

DEFAULT_DOMAINS = ("", "ai.onnx")
"""The default operator domain, written as the empty string or its name."""
_IR_VERSION, _OPSET_IMPORT = 1, 8
_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5
_MAX_OPSET_BYTES = 4096
"""An OperatorSetIdProto is a domain name and a number; a longer one is not an opset import."""


class OnnxHeaderError(ValueError):
    """The file is not a readable ModelProto (truncated, or another format)."""


@dataclass(frozen=True, slots=True)
class OnnxHeader:
    ir_version: int | None
    opsets: dict[str, int] = field(default_factory=dict)
    """domain -> version (the default domain as ``""``)."""

    @property
    def default_opset(self) -> int | None:
        found = [self.opsets[d] for d in DEFAULT_DOMAINS if d in self.opsets]
        return max(found) if found else None


def _varint(stream: BinaryIO) -> int | None:
    """The next varint, or None at a clean end of the stream."""
    result = shift = 0
    while True:
        byte = stream.read(1)
        if not byte:
            if shift:
                raise OnnxHeaderError("truncated varint")
            return None
        result |= (byte[0] & 0x7F) << shift
        if not byte[0] & 0x80:
            return result
        shift += 7
        if shift > 63:
            raise OnnxHeaderError("varint longer than 10 bytes")


def _skip(stream: BinaryIO, wire: int, size: int) -> None:
    if wire == _VARINT:
        if _varint(stream) is None:
            raise OnnxHeaderError("truncated varint")
        return
    length = {_I64: 8, _I32: 4}.get(wire)
    if length is None:
        if wire != _LEN:
            raise OnnxHeaderError(f"wire type {wire} is not in a ModelProto")
        length = _varint(stream)
        if length is None:
            raise OnnxHeaderError("truncated length")
    end = stream.tell() + length
    if end > size:
        raise OnnxHeaderError("a field runs past the end of the file")
    stream.seek(end)


def _opset(data: bytes) -> tuple[str, int]:
    """OperatorSetIdProto bytes -> (domain, version)."""
    stream, domain, version = io.BytesIO(data), "", 0
    while (key := _varint(stream)) is not None:
        number, wire = key >> 3, key & 7
        if number == 1 and wire == _LEN:
            length = _varint(stream) or 0
            domain = stream.read(length).decode("utf-8", "replace")
        elif number == 2 and wire == _VARINT:
            version = _varint(stream) or 0
        else:
            _skip(stream, wire, len(data))
    return domain, version


def read_header(stream: BinaryIO, size: int) -> OnnxHeader:
    """IR version and opset imports of the ModelProto in ``stream`` (``size`` bytes, seekable)."""
    ir_version: int | None = None
    opsets: dict[str, int] = {}
    while (key := _varint(stream)) is not None:
        number, wire = key >> 3, key & 7
        if number == 0:
            raise OnnxHeaderError("field number 0")
        if number == _IR_VERSION and wire == _VARINT:
            ir_version = _varint(stream)
        elif number == _OPSET_IMPORT and wire == _LEN:
            length = _varint(stream)
            if length is None or length > _MAX_OPSET_BYTES:
                raise OnnxHeaderError("opset_import is not an OperatorSetIdProto")
            data = stream.read(length)
            if len(data) != length:
                raise OnnxHeaderError("truncated opset_import")
            domain, version = _opset(data)
            opsets[domain] = max(version, opsets.get(domain, 0))
        else:
            _skip(stream, wire, size)
    return OnnxHeader(ir_version, opsets)
