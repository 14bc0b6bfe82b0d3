"""`triton-sre triage`: exit codes, output formats, gzip/stdin, input errors, live server."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from expectations import BROKEN_IN_INDEX, BROKEN_RUNBOOKS

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.diagnosis.catalog import load_catalog

REAL = Path(__file__).parent / "data" / "logs" / "real"
BROKEN_LOG = REAL / "default-exit-false.log"
_GZ = gzip.compress(
    "".join(f"I1129 00:00:00.{i:06d} 1 a.cc:1] line {i * 7919}\n" for i in range(5000)).encode()
)
_DAMAGED_GZ = _GZ[:40] + bytes(200) + _GZ[240:]
_XZ = lzma.compress(BROKEN_LOG.read_bytes())
_BZ2 = bz2.compress(BROKEN_LOG.read_bytes())
HEALTHY_LOG = """I1129 16:55:19.967457 25410 cuda_memory_manager.cc:117] "CUDA memory pool disabled"
E1129 16:55:19.967591 25410 server.cc:241] "CudaDriverHelper has not been initialized."
I1129 16:55:22.806754 25410 model_lifecycle.cc:839] "successfully loaded 'ok_model'"
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["triage", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_shape_and_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--format", "json", str(BROKEN_LOG))
    assert code == 1
    doc = json.loads(out)
    assert set(doc) == {"release", "server_version", "findings", "unmatched", "still_loading"}
    first = doc["findings"][0]
    assert set(first) == {
        "model",
        "version",
        "runbook",
        "title",
        "severity",
        "evidence",
        "remediation",
        "runbook_url",
        "message",
        "release_advice",
    }
    assert first["runbook_url"] == f"runbooks/{first['runbook']}.md"
    assert first["title"] != first["runbook"]  # titles come from the catalog
    assert all(set(e) == {"line", "text"} for f in doc["findings"] for e in f["evidence"])
    assert doc["unmatched"] == []


def test_every_finding_shows_its_runbooks_remediation_from_the_front_matter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog = load_catalog()
    code, out, _ = run(capsys, "--format", "json", str(BROKEN_LOG))
    every = json.loads(out)["findings"]
    # an ensemble that failed because a step did says to fix that step first instead
    findings = [f for f in every if not f["remediation"].startswith("Fix '")]
    assert code == 1 and len(findings) >= 2
    for f in findings:
        assert f["remediation"] == catalog[f["runbook"]].remediation, f
    _, text, _ = run(capsys, str(BROKEN_LOG))
    assert all(f"fix: {catalog[f['runbook']].remediation}" in text for f in findings)
    # the front matter is the one source: a catalog with another line shows that line
    pages = tmp_path / "runbooks"
    pages.mkdir()
    for rid in catalog:
        page = catalog[rid].path.read_text(encoding="utf-8")
        line = f"remediation: {json.dumps(catalog[rid].remediation, ensure_ascii=False)}"
        ours = page.replace(line, f'remediation: "Fix {rid} here."')
        assert ours != page, rid
        (pages / f"{rid}.md").write_text(ours, encoding="utf-8")
    _, out, _ = run(capsys, "--format", "json", "--runbooks", str(pages), str(BROKEN_LOG))
    shown = [f["remediation"] for f in json.loads(out)["findings"]]
    assert shown == [f["remediation"] if f not in findings else f"Fix {f['runbook']} here." for f in every]


def test_healthy_log_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "ok.log"
    log.write_text(HEALTHY_LOG)
    code, out, _ = run(capsys, str(log))
    assert code == 0 and "No load failure found" in out


def test_text_and_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(BROKEN_LOG), "--runbook-base-url", "https://wiki.example.com/rb/")
    assert code == 1
    assert "CRITICAL" in out and "\033[" not in out  # no colour when stdout is not a TTY
    assert f"https://wiki.example.com/rb/{c.RUNBOOK_PYTHON_MODULE_MISSING}.md" in out
    code, out, _ = run(capsys, "--format", "markdown", str(BROKEN_LOG))
    assert code == 1 and out.startswith("### Triton triage") and "| # | severity |" in out


def test_gzip_and_stdin(tmp_path: Path) -> None:
    gz = tmp_path / "log.txt"  # gzip is recognised by content, not by name
    gz.write_bytes(gzip.compress(BROKEN_LOG.read_bytes()))
    cmd = [sys.executable, "-m", "triton_sre.cli", "triage", "--format", "json"]
    by_file = subprocess.run([*cmd, str(gz)], capture_output=True, text=True, timeout=60)
    by_stdin = subprocess.run([*cmd, "-"], input=gz.read_bytes(), capture_output=True, timeout=60)
    assert by_file.returncode == 1 and by_stdin.returncode == 1
    assert json.loads(by_file.stdout) == json.loads(by_stdin.stdout)
    assert by_file.stderr == ""  # no progress output when stderr is not a TTY


@pytest.mark.parametrize("pack", [bz2.compress, lzma.compress], ids=["bz2", "xz"])
def test_bzip2_and_xz_read_as_the_log(tmp_path: Path, pack: Callable[[bytes], bytes]) -> None:
    """A rotated or CI-archived log (`.bz2`, `.xz`), known by its magic bytes: the plain log's report."""
    packed = tmp_path / "log.txt"
    packed.write_bytes(pack(BROKEN_LOG.read_bytes()))
    cmd = [sys.executable, "-m", "triton_sre.cli", "triage", "--format", "json"]
    want = subprocess.run([*cmd, str(BROKEN_LOG)], capture_output=True, text=True, timeout=60)
    got = subprocess.run([*cmd, str(packed)], capture_output=True, text=True, timeout=60)
    assert want.returncode == got.returncode == 1, got.stderr
    assert json.loads(got.stdout) == json.loads(want.stdout)


@pytest.mark.parametrize(
    ("encoding", "crlf", "packed"),
    [
        ("utf-16", True, False),
        ("utf-16-le", False, False),
        ("utf-16-be", False, True),
        ("utf-16", False, True),
    ],
    ids=["bom-crlf", "le-no-bom", "be-no-bom-gz", "bom-gz"],
)
def test_a_utf16_log_reads_as_its_utf8_text(tmp_path: Path, encoding: str, crlf: bool, packed: bool) -> None:
    """Windows PowerShell 5 saves `docker logs triton > triton.log` as UTF-16 with CRLF: the same
    findings, line numbers and evidence as the UTF-8 log, never "it looks binary"."""
    text = BROKEN_LOG.read_text() + "E1129 00:00:01.000000 1 a.cc:1] failed: 模型 \U0001f680 é\n"
    data = (text.replace("\n", "\r\n") if crlf else text).encode(encoding)
    wide = tmp_path / "wide.log"
    wide.write_bytes(gzip.compress(data) if packed else data)
    narrow = tmp_path / "narrow.log"
    narrow.write_text(text)
    cmd = [sys.executable, "-m", "triton_sre.cli", "triage", "--format", "json"]
    want = subprocess.run([*cmd, str(narrow)], capture_output=True, text=True, timeout=60)
    got = subprocess.run([*cmd, "-"], input=wide.read_bytes(), capture_output=True, timeout=60)
    assert want.returncode == got.returncode == 1, got.stderr
    assert json.loads(got.stdout) == json.loads(want.stdout)
    assert json.loads(got.stdout)["findings"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (_DAMAGED_GZ, "corrupt gzip data"),  # a cut is diagnosed as far as it decodes: test_triage_cut_logs
        (_XZ[:20] + bytes(200) + _XZ[220:], "corrupt xz data"),
        (_BZ2[:20] + bytes(200) + _BZ2[220:], "corrupt bzip2 data"),
        (lzma.compress(b""), "empty once decompressed (xz data"),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00" * 50, "binary"),
        (b"\x28\xb5\x2f\xfd" + b"\x00" * 40, "zstd -dc"),  # zstd: not in the standard library
        (b"PK\x03\x04" + b"\x00" * 40, "zip archive"),
    ],
)
def test_input_errors_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    bad = tmp_path / "bad"
    bad.write_bytes(content)
    code, out, err = run(capsys, str(bad))
    assert code == 2 and out == ""
    assert message in err and str(bad) in err


def test_unreadable_paths_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, str(tmp_path / "missing.log"))
    assert code == 2 and "cannot read" in err
    code, _, err = run(capsys, str(tmp_path))
    assert code == 2 and "cannot read" in err


def test_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["triage", "--format", "yaml", str(BROKEN_LOG)])
    assert exit_.value.code == 2


def test_unreachable_server_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--triton-url", "http://127.0.0.1:9")
    assert code == 2 and "repository index" in err


def test_live_server_diagnosis(triton, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--triton-url", triton.http_url, "--format", "json")
    assert code == 1
    data = json.loads(out)
    assert (data["release"], data["server_version"]) == ("24.10", "2.51")  # GET /v2 of the real 2.51.0
    found = {f["model"]: f["runbook"] for f in data["findings"]}
    assert found == {m: BROKEN_RUNBOOKS[m] for m in BROKEN_IN_INDEX}
    assert all(rb in c.LOAD_FAILURE_RUNBOOKS for rb in found.values())


def test_demo_repository_log_diagnoses_every_broken_model(triton, capsys: pytest.CaptureFixture[str]) -> None:
    """The sample repository's log: every broken model, including the one absent from the index."""
    code, out, _ = run(capsys, "--format", "json", str(triton.log_path))
    assert code == 1
    found = {f["model"]: f["runbook"] for f in json.loads(out)["findings"] if f["severity"] == "critical"}
    assert found == BROKEN_RUNBOOKS
