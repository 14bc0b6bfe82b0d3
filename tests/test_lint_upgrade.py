"""`triton-sre lint --release`: the component table (every entry sourced, versions that parse) and each
upgrade check on real artifacts written here: ONNX files as protobuf bytes (checked against protobuf's own
encoder), conda-pack-shaped tar archives, a stub binary naming its libpython, TensorRT plans."""

from __future__ import annotations

import re

import pytest

from triton_sre.lint import components

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
