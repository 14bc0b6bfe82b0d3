"""`triton-sre lint --release`: the component table (every entry sourced, versions that parse) and each
upgrade check on real artifacts written here: ONNX files as protobuf bytes (checked against protobuf's own
encoder), conda-pack-shaped tar archives, a stub binary naming its libpython, TensorRT plans."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest

from triton_sre.lint import components
from triton_sre.lint.onnxheader import OnnxHeaderError, read_header

# --- protobuf wire format, written by hand -------------------------------------------------------------


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def tag(number: int, wire: int) -> bytes:
    return varint(number << 3 | wire)


def length_delimited(number: int, payload: bytes) -> bytes:
    return tag(number, 2) + varint(len(payload)) + payload


def onnx_model(ir: int, opsets: dict[str, int], graph: bytes = b"\x0a\x01g") -> bytes:
    """A ModelProto: ir_version (1), producer_name (2), graph (7), opset_import (8) in field order."""
    body = tag(1, 0) + varint(ir) + length_delimited(2, b"pytorch") + length_delimited(7, graph)
    for domain, version in opsets.items():
        body += length_delimited(8, length_delimited(1, domain.encode()) + tag(2, 0) + varint(version))
    return body


def protobuf_model(ir: int, opsets: dict[str, int], graph: bytes) -> bytes:
    """The same fields serialized by protobuf itself, from a ModelProto subset declared here."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    f = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="onnx_subset.proto", package="subset", syntax="proto2")
    opset = proto.message_type.add(name="OperatorSetIdProto")
    opset.field.add(name="domain", number=1, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
    opset.field.add(name="version", number=2, type=f.TYPE_INT64, label=f.LABEL_OPTIONAL)
    model = proto.message_type.add(name="ModelProto")
    model.field.add(name="ir_version", number=1, type=f.TYPE_INT64, label=f.LABEL_OPTIONAL)
    model.field.add(name="producer_name", number=2, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
    model.field.add(name="graph", number=7, type=f.TYPE_BYTES, label=f.LABEL_OPTIONAL)
    model.field.add(
        name="opset_import",
        number=8,
        type=f.TYPE_MESSAGE,
        label=f.LABEL_REPEATED,
        type_name=".subset.OperatorSetIdProto",
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("subset.ModelProto"))
    msg = cls(ir_version=ir, producer_name="pytorch", graph=graph)
    for domain, version in opsets.items():
        msg.opset_import.add(domain=domain, version=version)
    return msg.SerializeToString()


class CountingReader(io.BytesIO):
    read_bytes = 0

    def read(self, size: int | None = -1) -> bytes:  # type: ignore[override]
        data = super().read(size)
        self.read_bytes += len(data)
        return data


def header_of(data: bytes) -> Any:
    return read_header(io.BytesIO(data), len(data))


def test_hand_written_bytes_are_protobufs_own() -> None:
    opsets = {"": 17, "com.microsoft": 1}
    assert onnx_model(8, opsets, b"\x0a\x01g") == protobuf_model(8, opsets, b"\x0a\x01g")


def test_header_reads_ir_and_opsets_and_skips_the_graph_unread() -> None:
    graph = bytes(5_000_000)
    data = onnx_model(10, {"": 21, "ai.onnx.ml": 5, "com.microsoft": 1}, graph)
    stream = CountingReader(data)
    header = read_header(stream, len(data))
    assert header.ir_version == 10 and header.default_opset == 21
    assert header.opsets == {"": 21, "ai.onnx.ml": 5, "com.microsoft": 1}
    assert stream.read_bytes < 200  # the 5 MB graph was seeked over, not read
    assert header_of(onnx_model(7, {"ai.onnx": 12})).default_opset == 12


@pytest.mark.parametrize(
    "data",
    [
        onnx_model(8, {"": 17})[:-1],  # cut inside the last opset import
        tag(7, 2) + varint(1000) + b"short",  # a graph longer than the file
        b"\xff" * 12,  # an endless varint
        tag(3, 3),  # a group: no ModelProto field is one
    ],
)
def test_header_refuses_what_is_not_a_model(data: bytes) -> None:
    with pytest.raises(OnnxHeaderError):
        header_of(data)


# --- the component table -------------------------------------------------------------------------------


def test_every_release_is_read_from_its_own_branch() -> None:
    table = components.table()
    assert len(table.releases) >= 60
    for name, row in table.releases.items():
        assert f"/blob/r{name}/" in row.source, name  # never a neighbour's build.py
        if row.notes:
            assert f"/blob/r{name}/" in row.notes, name
        if row.python:
            assert re.fullmatch(r"3\.\d+", row.python) and (row.python_source or row.notes), name
        for version in (row.onnxruntime, row.tensorrt, row.triton):
            assert version is None or re.fullmatch(r"\d+(\.\d+)+", version), (name, version)
    assert table.releases["24.12"].python == "3.12" and table.releases["24.05"].python == "3.10"
    assert table.releases["25.03"].builds_tensorflow is False and table.releases["25.02"].builds_tensorflow
    assert table.onnxruntime_support_source.startswith("https://github.com/microsoft/onnxruntime/")


def test_onnx_runtime_support_covers_every_release_up_to_ort_1_20() -> None:
    table = components.table()
    for name, row in table.releases.items():
        minor = tuple(int(p) for p in (row.onnxruntime or "0.0").split(".")[:2])
        if row.onnxruntime and minor <= (1, 20):
            assert table.ort_support(row.onnxruntime) is not None, name
    assert table.ort_support("1.17.3") == components.OrtSupport(opset=20, ir_version=9)
    assert table.ort_support("1.24.4") is None  # not in ONNX Runtime's table: no check


@pytest.mark.parametrize(
    ("row", "error"),
    [
        ('    python: "3.10"\n', "python without python_source"),
        ('    tensorrt: "10.7.0.23"\n', "tensorrt without notes"),
        ('    onnxruntime: "latest"\n', "onnxruntime must be a version"),
        ('    cuda: "12.4"\n', "unknown field"),
    ],
)
def test_table_rows_are_validated(row: str, error: str) -> None:
    text = 'releases:\n  "24.05":\n    builds_tensorflow: true\n    source: https://x/r24.05/build.py\n' + row
    with pytest.raises(ValueError, match=error):
        components.parse_table(text)
    with pytest.raises(ValueError, match="no source"):
        components.parse_table('releases:\n  "24.05":\n    builds_tensorflow: true\n')
