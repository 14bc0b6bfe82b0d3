"""`triton-sre lint --release`: the component table (every entry sourced, versions that parse) and each
upgrade check on real artifacts written here: ONNX files as protobuf bytes (checked against protobuf's own
encoder), conda-pack-shaped tar archives, a stub binary naming its libpython, TensorRT plans."""

from __future__ import annotations

import io
import json
import re
import tarfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.diagnosis.releases import server_version_of_release
from triton_sre.lint import components
from triton_sre.lint.onnxheader import OnnxHeaderError, read_header
from triton_sre.lint.upgrade import STUB, env_python, stub_python

IO = (
    'input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'
    'output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'
)


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
    page_only = {name: row for name, row in table.releases.items() if "/releases/tag/" in row.source}
    for name, row in table.releases.items():
        if name in page_only:  # no branch read: the release page's server version, nothing else
            assert row.source.endswith(f"/tag/v{server_version_of_release(name)}.0") and row.triton, name
            assert not (row.onnxruntime or row.openvino or row.python or row.tensorrt), name
            assert row.builds_tensorflow is None, name
            continue
        assert f"/blob/r{name}/" in row.source, name  # never a neighbour's build.py
        assert isinstance(row.builds_tensorflow, bool), name
        if row.notes:
            assert f"/blob/r{name}/" in row.notes, name
        if row.python:
            assert re.fullmatch(r"3\.\d+", row.python) and (row.python_source or row.notes), name
        for version in (row.onnxruntime, row.tensorrt, row.triton, row.tensorrt_windows):
            assert version is None or re.fullmatch(r"\d+(\.\d+)+", version), (name, version)
    assert table.releases["24.12"].python == "3.12" and table.releases["24.05"].python == "3.10"
    assert table.releases["25.03"].builds_tensorflow is False and table.releases["25.02"].builds_tensorflow
    assert table.onnxruntime_support_source.startswith("https://github.com/microsoft/onnxruntime/")
    assert sorted(page_only) == ["26.09", "26.10", "26.11"] and table.releases["26.11"].triton == "2.75.0"


def test_tensorrt_entries_name_their_own_releases_page() -> None:
    table = components.table()
    known = {name: row for name, row in table.releases.items() if row.tensorrt}
    assert {"21.06", "21.07", "21.08", "21.09", "21.10", "21.11", "21.12", "24.12", "25.01"} <= set(known)
    for name, row in known.items():
        assert row.tensorrt and re.fullmatch(r"\d+(\.\d+){2,3}", row.tensorrt), name
        if row.tensorrt_source:  # NVIDIA's page of this release (21.06: of 21.06.1), never a neighbour's
            yy, mm = name.split(".")
            assert row.tensorrt_source.startswith("https://docs.nvidia.com/deeplearning/"), name
            assert re.search(rf"/rel_{yy}-{mm}(-1)?\.html$", row.tensorrt_source), name
        else:
            assert row.notes and f"/blob/r{name}/" in row.notes, name
    assert table.releases["21.12"].tensorrt == "8.2.1.8" and table.releases["21.07"].tensorrt == "8.0.1.6"
    assert "21.06.1" in (table.releases["21.06"].tensorrt_note or "")
    assert "x64" in (table.releases["21.10"].tensorrt_note or "")
    assert not table.releases["22.01"].tensorrt and not table.releases["25.02"].tensorrt


def test_windows_tensorrt_pins_are_their_own_branchs_and_not_the_linux_images() -> None:
    table = components.table()
    pinned = {name: row for name, row in table.releases.items() if row.tensorrt_windows}
    for name, row in pinned.items():  # Dockerfile.win10.min's ARG TENSORRT_VERSION= of the release itself
        assert row.tensorrt_windows_source == (
            f"https://github.com/triton-inference-server/server/blob/r{name}/Dockerfile.win10.min"
        ), name
    # quoted from the branches: 24.02-24.05 declare the argument without a value, 26.04 has no such file
    assert table.releases["21.06"].tensorrt_windows == "7.2.2.3"
    assert table.releases["22.11"].tensorrt_windows == "8.5.1.7"
    assert table.releases["24.06"].tensorrt_windows == "10.0.1.6"
    assert table.releases["26.03"].tensorrt_windows == "10.8.0.43"
    assert not {"24.02", "24.03", "24.04", "24.05", "26.04", "26.08"} & set(pinned)
    assert len(pinned) == 54
    # why the pin is never the Linux image's: where both are known they differ in 5 of 9 releases
    both = {n: r for n, r in pinned.items() if r.tensorrt and r.tensorrt_windows}
    differ = {n for n, r in both.items() if not (r.tensorrt or "").startswith(r.tensorrt_windows or "-")}
    assert len(both) == 9 and differ == {"21.06", "21.07", "21.09", "21.12", "25.01"}
    assert table.releases["25.01"].tensorrt == "10.8.0.43" != table.releases["25.01"].tensorrt_windows


def test_pytorch_is_the_ngc_build_of_the_releases_own_month() -> None:
    table = components.table()
    known = {name: row for name, row in table.releases.items() if row.pytorch}
    assert set(known) == {
        *("24.03", "24.05", "24.07", "24.10", "24.11"),
        *("25.01", "25.03", "25.04", "25.05", "25.06", "25.10", "25.12"),
    }
    for name, row in known.items():
        yy, mm = name.split(".")
        assert row.pytorch_source and "/docs/introduction/compatibility.md" in row.pytorch_source, name
        # the build string as the source writes it, suffixed with this release's own NGC month
        assert f"written {row.pytorch}.nv{yy}.{int(mm)} " in (row.pytorch_note or ""), name
    assert table.releases["24.07"].pytorch == "2.4.0a0+3bcc3cddb5"
    assert table.releases["25.12"].pytorch == "2.10.0a0+b4e4ee81d3"
    assert table.releases["24.08"].pytorch is None  # no .nv24.8 build in the source: not its neighbour's


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
        ('    tensorrt: "10.7.0.23"\n', "tensorrt without notes or tensorrt_source"),
        ('    tensorrt: "8.2.1.8"\n    tensorrt_source: http://x/rel_21-12.html\n', "must be an https URL"),
        ('    tensorrt_note: ""\n', "tensorrt_note must be a non-empty string"),
        ('    onnxruntime: "latest"\n', "onnxruntime must be a version"),
        ('    cuda: "12.4"\n', "unknown field"),
        ('    tensorrt_windows: "10.0.1.6"\n', "tensorrt_windows without tensorrt_windows_source"),
        ('    pytorch: "2.4.0a0+3bcc3cddb5"\n', "pytorch without pytorch_source"),
        ('    pytorch: "2.4.0a0+3bcc3cddb5.nv24.7"\n', "pytorch must be a PyTorch build string"),
    ],
)
def test_table_rows_are_validated(row: str, error: str) -> None:
    text = 'releases:\n  "24.05":\n    builds_tensorflow: true\n    source: https://x/r24.05/build.py\n' + row
    with pytest.raises(ValueError, match=error):
        components.parse_table(text)
    with pytest.raises(ValueError, match="no source"):
        components.parse_table('releases:\n  "24.05":\n    builds_tensorflow: true\n')


# --- the checks through the CLI ------------------------------------------------------------------------


def seed(root: Path, files: dict[str, bytes | str]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def cfg(name: str, backend: str, extra: str = "") -> str:
    return f'name: "{name}"\n{backend}\nmax_batch_size: 8\n{IO}{extra}'


def lint(repo: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["lint", "--format", "json", "--target", "cpu", str(repo), *args])
    return code, (json.loads(out.getvalue()) if out.getvalue() else {}), err.getvalue()


def findings(body: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(f["model"], f["runbook"], f["severity"]) for f in body["findings"]]


def conda_pack(path: Path, python: str) -> None:
    """A conda-pack-shaped archive: bin/python, lib/python3.X/site-packages/<pkg>."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as archive:
        for name in ("bin/python", f"lib/python{python}/site-packages/numpy/__init__.py"):
            data = b"x"
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


def test_onnx_model_newer_than_the_releases_onnx_runtime(tmp_path: Path) -> None:
    repo = seed(
        tmp_path,
        {
            "new/config.pbtxt": cfg("new", 'backend: "onnxruntime"'),
            "new/1/model.onnx": onnx_model(10, {"": 21, "com.microsoft": 1}),
            "old/config.pbtxt": cfg("old", 'backend: "onnxruntime"'),
            "old/1/model.onnx": onnx_model(8, {"": 17, "com.microsoft": 99}),  # other domains don't count
        },
    )
    code, body, _ = lint(repo, "--release", "24.03")  # ONNX Runtime 1.17.2: opset 20, IR 9
    assert code == 1
    assert findings(body) == [("new", c.RUNBOOK_LIBRARY_VERSION_MISMATCH, c.IMPACT_CRITICAL)]
    text = body["findings"][0]["evidence"][0]["text"]
    assert "IR version 10 (max 9) and opset 21 (max 20) are newer than ONNX Runtime 1.17.2" in text
    assert body["findings"][0]["file"] == "new/1/model.onnx" and body["findings"][0]["version"] == "1"
    clean = {**body, "findings": [], "release": "24.05", "server_version": "2.46"}
    assert lint(repo, "--release", "24.05")[:2] == (0, clean)  # ONNX Runtime 1.18
    assert lint(repo)[1]["findings"] == []  # no --release: no upgrade check


ENV_IN_MODEL_DIR = (
    'parameters: { key: "EXECUTION_ENV_PATH", '
    'value: { string_value: "$$TRITON_MODEL_DIRECTORY/env.tar.gz" } }\n'
)
"""A Python model's EXECUTION_ENV_PATH: the conda-pack archive env.tar.gz in its own directory."""


def test_python_environment_for_another_python(tmp_path: Path) -> None:
    repo = seed(
        tmp_path,
        {
            "py/config.pbtxt": cfg("py", 'backend: "python"', ENV_IN_MODEL_DIR),
            "py/1/model.py": "class TritonPythonModel:\n    pass\n",
        },
    )
    conda_pack(repo / "py" / "env.tar.gz", "3.8")
    assert env_python(repo / "py" / "env.tar.gz") == "3.8"
    code, body, _ = lint(repo, "--release", "24.05")  # Python 3.10
    assert code == 1 and findings(body) == [("py", c.RUNBOOK_PYTHON_MODULE_MISSING, c.IMPACT_CRITICAL)]
    assert "Python 3.8 environment" in body["findings"][0]["evidence"][0]["text"]
    assert (
        body["findings"][0]["file"] == "py/config.pbtxt" and body["findings"][0]["line"] == 6
    )  # the parameters line
    assert lint(repo, "--release", "23.01")[1]["findings"] == []  # Ubuntu 20.04: Python 3.8
    # an unpacked environment folder (here outside the repository, by absolute path) is read the same way
    unpacked = tmp_path.parent / f"{tmp_path.name}-env"
    (unpacked / "lib" / "python3.12").mkdir(parents=True)
    config = (
        (repo / "py" / "config.pbtxt")
        .read_text()
        .replace("$$TRITON_MODEL_DIRECTORY/env.tar.gz", str(unpacked))
    )
    (repo / "py" / "config.pbtxt").write_text(config)
    (repo / "py" / "env.tar.gz").unlink()
    assert findings(lint(repo, "--release", "24.05")[1]) == [
        ("py", c.RUNBOOK_PYTHON_MODULE_MISSING, c.IMPACT_CRITICAL)
    ]
    assert lint(repo, "--release", "25.01")[1]["findings"] == []


def test_custom_stub_linked_to_another_python(tmp_path: Path) -> None:
    repo = seed(
        tmp_path,
        {
            "py/config.pbtxt": cfg("py", 'backend: "python"'),
            "py/1/model.py": "class TritonPythonModel:\n    pass\n",
            f"py/{STUB}": b"\x7fELF" + bytes(3 << 20) + b"libpython3.8.so.1.0\x00",  # past the first chunk
        },
    )
    assert stub_python(repo / "py" / STUB) == "3.8"
    code, body, _ = lint(repo, "--release", "24.05")
    assert code == 1
    assert findings(body) == [("py", c.RUNBOOK_PYTHON_SHARED_LIBRARY_MISSING, c.IMPACT_CRITICAL)]
    assert body["findings"][0]["file"] == f"py/{STUB}"
    assert lint(repo, "--release", "22.05")[1]["findings"] == []


def test_tensorrt_plans_across_a_tensorrt_change(tmp_path: Path) -> None:
    repo = seed(
        tmp_path,
        {
            "trt/config.pbtxt": cfg("trt", 'platform: "tensorrt_plan"'),
            "trt/1/model.plan": b"ftrt" + bytes(64),
            "trt/2/model.plan": b"ftrt" + bytes(64),
        },
    )
    code, body, _ = lint(repo, "--release", "25.01", "--from-release", "24.12")  # TensorRT 10.7 -> 10.8
    assert code == 1
    assert findings(body) == [("trt", c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE, c.IMPACT_CRITICAL)] * 2
    assert [f["file"] for f in body["findings"]] == ["trt/1/model.plan", "trt/2/model.plan"]
    assert "10.7.0.23" in body["findings"][0]["evidence"][0]["text"]
    code, body, _ = lint(repo, "--release", "25.01")  # no starting point: a note naming the target's TensorRT
    assert code == 0 and findings(body) == [("trt", c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE, c.IMPACT_INFO)]
    assert "10.8.0.43" in body["findings"][0]["evidence"][0]["text"]
    assert lint(repo, "--release", "24.12", "--from-release", "24.12")[1]["findings"] == []
    # a release whose TensorRT the table does not know: one warning per model to compare the two, no error
    code, body, _ = lint(repo, "--release", "24.05", "--from-release", "24.12")
    assert code == 0 and findings(body) == [("trt", c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE, c.IMPACT_WARNING)]
    assert "24.05" in body["findings"][0]["evidence"][0]["text"]
    assert "24.12" not in body["findings"][0]["evidence"][0]["text"].split(":")[0]
    code, body, _ = lint(repo, "--release", "24.05")  # the note without a version
    assert code == 0 and findings(body) == [("trt", c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE, c.IMPACT_INFO)]
    assert "Windows" not in body["findings"][0]["evidence"][0]["text"]  # 24.05's Windows build pins none
    # an unknown Linux TensorRT: the Windows build's pin is quoted as the Windows build's, still a warning
    code, body, _ = lint(repo, "--release", "24.06", "--from-release", "24.12")
    assert code == 0 and findings(body) == [("trt", c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE, c.IMPACT_WARNING)]
    text = body["findings"][0]["evidence"][0]["text"]
    assert "its Windows build pins TensorRT 10.0.1.6 for 24.06, not necessarily the Linux image's" in text
    assert "10.7.0.23" not in text  # 24.12's Linux TensorRT is known: its Windows pin is not quoted
    code, body, _ = lint(repo, "--release", "25.03", "--from-release", "24.06")
    assert (
        code == 0
        and "their Windows builds pin TensorRT 10.0.1.6 for 24.06 and TensorRT 10.8.0.43 for 25.03"
        in (body["findings"][0]["evidence"][0]["text"])
    )
    code, body, _ = lint(repo, "--release", "24.06")
    assert code == 0 and findings(body) == [("trt", c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE, c.IMPACT_INFO)]
    assert "Windows build pins TensorRT 10.0.1.6" in body["findings"][0]["evidence"][0]["text"]
    # 21.x from NVIDIA's pages: 8.0.1.6 (21.08) -> 8.2.1.8 (21.12) is a change; 21.09's "8.0.3" (three
    # places) is not read as a change from 21.10's 8.0.3.4, nor are 21.07 and 21.08 (both 8.0.1.6)
    code, body, _ = lint(repo, "--release", "21.12", "--from-release", "21.08")
    assert code == 1 and len(body["findings"]) == 2
    assert "TensorRT 8.0.1.6 (21.08)" in body["findings"][0]["evidence"][0]["text"]
    assert lint(repo, "--release", "21.10", "--from-release", "21.09")[1]["findings"] == []
    assert lint(repo, "--release", "21.08", "--from-release", "21.07")[1]["findings"] == []
    assert lint(repo, "--release", "21.09", "--from-release", "21.11")[1]["findings"] == []
    assert len(lint(repo, "--release", "21.12", "--from-release", "21.09")[1]["findings"]) == 2


def test_tensorflow_model_on_a_release_without_the_backend(tmp_path: Path) -> None:
    repo = seed(
        tmp_path,
        {
            "tf/config.pbtxt": cfg("tf", 'platform: "tensorflow_savedmodel"'),
            "tf/1/model.savedmodel/saved_model.pb": b"\x08\x01",
        },
    )
    code, body, _ = lint(repo, "--release", "25.03")
    assert code == 1 and findings(body) == [("tf", c.RUNBOOK_BACKEND_NOT_FOUND, c.IMPACT_CRITICAL)]
    assert lint(repo, "--release", "25.02")[1]["findings"] == []


def test_a_release_read_from_its_page_only_says_what_it_did_not_check(tmp_path: Path) -> None:
    repo = seed(
        tmp_path,
        {
            "py/config.pbtxt": cfg("py", 'backend: "python"', ENV_IN_MODEL_DIR),
            "py/1/model.py": "",
            "bare/config.pbtxt": cfg("bare", 'backend: "python"'),  # nothing the check would read
            "bare/1/model.py": "",
            "onnx/config.pbtxt": cfg("onnx", 'backend: "onnxruntime"'),
            "onnx/1/model.onnx": onnx_model(10, {"": 21}),
            "tf/config.pbtxt": cfg("tf", 'platform: "tensorflow_savedmodel"'),
            "tf/1/model.savedmodel/saved_model.pb": b"\x08\x01",
        },
    )
    conda_pack(repo / "py" / "env.tar.gz", "3.8")
    code, body, err = lint(repo, "--release", "26.10")  # 2.74.0: its branch is not in the source read
    assert code == 0, err
    assert body["release"] == "26.10" and body["server_version"] == "2.74"
    assert sorted(findings(body)) == [
        ("onnx", c.RUNBOOK_LIBRARY_VERSION_MISMATCH, c.IMPACT_INFO),
        ("py", c.RUNBOOK_PYTHON_MODULE_MISSING, c.IMPACT_INFO),
        ("tf", c.RUNBOOK_BACKEND_NOT_FOUND, c.IMPACT_INFO),
    ]
    texts = {f["model"]: f["evidence"][0]["text"] for f in body["findings"]}
    assert "does not know the ONNX Runtime of 26.10" in texts["onnx"] and "not checked" in texts["onnx"]
    assert "does not know the TensorFlow backend of 26.10" in texts["tf"]
    # a release whose branch says it cannot build TensorFlow still gets the error, not the note
    on_26_08 = findings(lint(repo, "--release", "26.08")[1])
    assert ("tf", c.RUNBOOK_BACKEND_NOT_FOUND, c.IMPACT_CRITICAL) in on_26_08


def test_unknown_release_is_a_usage_error_naming_the_known_ones(tmp_path: Path) -> None:
    repo = seed(tmp_path, {"py/config.pbtxt": cfg("py", 'backend: "python"'), "py/1/model.py": ""})
    code, _, err = lint(repo, "--release", "19.01")
    assert code == c.EXIT_USAGE and "19.01" in err and "24.05" in err and "26.08" in err
    code, _, err = lint(repo, "--from-release", "24.05")
    assert code == c.EXIT_USAGE and "--from-release needs --release" in err


def test_the_output_names_the_release_it_checked_against(tmp_path: Path) -> None:
    """`lint --release 25.01 --from-release 24.10` on a clean repository said "no problem found" without
    naming a release, and its JSON had "release": null (journey23): the operator could not tell the
    upgrade checks had run. The JSON names the target, its server and the source; the text says it."""
    repo = seed(tmp_path, {"py/config.pbtxt": cfg("py", 'backend: "python"'), "py/1/model.py": ""})
    code, body, _ = lint(repo, "--release", "25.01", "--from-release", "24.10")
    assert code == c.EXIT_OK and body["findings"] == []
    assert (body["release"], body["server_version"], body["from_release"]) == ("25.01", "2.54", "24.10")
    plain = lint(repo)[1]
    assert (plain["release"], plain["server_version"], plain["from_release"]) == (None, None, None)
    for fmt in ("text", "markdown"):
        out = io.StringIO()
        with redirect_stdout(out):
            main(["lint", "--format", fmt, str(repo), "--release", "25.01", "--from-release", "24.10"])
        assert "against release 25.01 (tritonserver 2.54), upgrading from 24.10" in out.getvalue()
    broken = seed(tmp_path / "b", {"py/config.pbtxt": cfg("py", 'backend: "pyhton"'), "py/1/model.py": ""})
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["lint", str(broken), "--release", "25.01"]) == c.EXIT_FAILURE
    assert out.getvalue().startswith("Checked against release 25.01 (tritonserver 2.54).\n")
