"""Triage reads a text log holding runs of NUL bytes (a copytruncate rotation's leading hole, a block a
crash left) as the text around them, and still refuses binary input and a stream of NULs only
(`diagnosis/holes.py`)."""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis import holes
from triton_sre.diagnosis.api import DiagnosisError, diagnose_log
from triton_sre.diagnosis.catalog import load_catalog
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse
from triton_sre.diagnosis.report import Report
from triton_sre.diagnosis.scan import LogInputError, scan_lines

REAL = Path(__file__).parent / "data" / "logs" / "real"
BROKEN = REAL / "verbose-exit-false.log"
MB = 1024 * 1024


def _triage(path: Path) -> Report:
    catalog = load_catalog()
    return diagnose_log(str(path), catalog.titles, catalog.remediations)


def _cli(argv: list[str], stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    cmd = [sys.executable, "-m", "triton_sre.cli", "triage", "--format", "json", *argv]
    return subprocess.run(cmd, input=stdin, capture_output=True, timeout=120)


def _with_holes(text: bytes, cuts: list[int], size: int) -> bytes:
    """``text`` with a run of ``size`` NUL bytes inserted at each offset of ``cuts``."""
    out, last = [], 0
    for cut in sorted(cuts):
        out += [text[last:cut], bytes(size)]
        last = cut
    return b"".join([*out, text[last:]])


@pytest.fixture(scope="module")
def plain() -> Report:
    report = _triage(BROKEN)
    assert report.findings  # a failing log: findings to compare
    return report


def test_a_leading_hole_of_3_mb_gives_the_findings_of_the_log_alone(tmp_path: Path, plain: Report) -> None:
    written = tmp_path / "written.log"  # the hole written as NULs (a file system without sparse files)
    written.write_bytes(bytes(3 * MB) + BROKEN.read_bytes())
    sparse = tmp_path / "sparse.log"  # the hole as copytruncate leaves it: the writer seeks past the end
    with sparse.open("wb") as out:
        out.seek(3 * MB)
        out.write(BROKEN.read_bytes())
    assert sparse.stat().st_size == written.stat().st_size
    assert _triage(written) == plain
    assert _triage(sparse) == plain


@pytest.mark.parametrize("chunk", [4096, 65536])
def test_nul_runs_anywhere_read_as_the_text_without_them(chunk: int) -> None:
    """Runs at line starts, mid-line and across chunk boundaries: the findings, evidence and line numbers of
    the log without its NULs (a hole holds no newline, so line numbers stay the file's own)."""
    text = BROKEN.read_bytes()
    starts = [i + 1 for i, byte in enumerate(text) if byte == 10][::97]
    cuts = [*starts, 10, chunk - 3, 5 * chunk + 1, len(text) // 2 + 7, len(text) - 1]
    holey = _with_holes(text, cuts, 3 * chunk + 5)
    want = diagnose_events(parse(scan_lines(io.BytesIO(text), chunk_bytes=chunk)))
    got = diagnose_events(parse(scan_lines(io.BytesIO(holey), chunk_bytes=chunk)))
    # `events` counts the lines the scanner passed on, which depends on where its chunks end (the text
    # between two holes fills a chunk differently); users never see it.
    assert replace(got, events=0) == replace(want, events=0)
    assert want.findings and all(e.line > 1 for f in want.findings for e in f.evidence)


def test_nul_blocks_in_the_middle_and_gzip_give_the_findings_of_the_log_alone(
    tmp_path: Path, plain: Report
) -> None:
    text = BROKEN.read_bytes()
    lines = text.splitlines(keepends=True)
    at_line = sum(len(line) for line in lines[: len(lines) // 3])  # a crash's block between two lines
    holey = _with_holes(text, [at_line, 2 * at_line], 5 * MB + 3)
    mid = tmp_path / "mid.log"
    mid.write_bytes(holey)
    assert _triage(mid) == plain
    packed = tmp_path / "rotated.log.gz"  # logrotate's compress of a log with a leading hole
    packed.write_bytes(gzip.compress(bytes(3 * MB) + holey, compresslevel=1))
    assert _triage(packed) == plain


class _Zeros(io.RawIOBase):
    """/dev/zero: NUL bytes for ever; counts what was read."""

    def __init__(self) -> None:
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        buffer[:] = bytes(len(buffer))
        self.read_bytes += len(buffer)
        return len(buffer)


def test_an_endless_stream_of_nuls_is_refused_after_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(holes, "MAX_LEADING_HOLE", 16 * MB)
    zeros = _Zeros()
    with pytest.raises(LogInputError, match="are all NUL bytes: not a text log") as caught:
        list(scan_lines(zeros, chunk_bytes=MB))  # type: ignore[arg-type]
    assert 16 * MB <= zeros.read_bytes <= 17 * MB
    assert f"{16 * MB:,}" in str(caught.value)
    assert "tr -d" in str(caught.value)  # says how to read a longer hole


def test_a_hole_longer_than_the_bound_is_refused_and_one_shorter_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(holes, "MAX_LEADING_HOLE", 4 * MB)
    text = BROKEN.read_bytes()
    assert list(scan_lines(io.BytesIO(bytes(3 * MB) + text), chunk_bytes=MB))
    with pytest.raises(LogInputError, match="all NUL bytes"):
        list(scan_lines(io.BytesIO(bytes(5 * MB) + text), chunk_bytes=MB))


@pytest.mark.parametrize(
    "data",
    [
        os.urandom(256 * 1024),
        bytes(2 * MB) + os.urandom(256 * 1024),  # a hole, then random bytes
        b"".join(os.urandom(64) + bytes(64) for _ in range(2048)),  # random between NUL runs
        b"\x7fELF\x02\x01\x01\x00" + bytes(56) + os.urandom(4096),
        b"\x89PNG\r\n\x1a\n" + os.urandom(8192),
        gzip.compress(os.urandom(4096))[10:],  # deflate data whose gzip header is gone
    ],
    ids=["urandom", "hole-then-urandom", "urandom-between-nul-runs", "elf", "png", "headless-gzip"],
)
def test_binary_input_is_still_refused(data: bytes) -> None:
    with pytest.raises(LogInputError, match="it looks binary"):
        list(scan_lines(io.BytesIO(data)))


def test_text_that_is_not_utf8_is_still_read() -> None:
    """A Latin-1 word, terminal colours, a backspace and a stray control byte are text, not binary."""
    text = BROKEN.read_bytes().replace(b"failed", b"\x1b[31mfail\xe9d\x1f\x1b[0m\b", 40)
    assert list(scan_lines(io.BytesIO(bytes(MB) + text)))


def test_a_log_without_nuls_is_read_in_any_encoding() -> None:
    """A log in GBK (a Chinese Windows console's encoding) is mostly bytes that are not UTF-8; with no NUL in
    it, it is read as before, never judged binary."""
    notes = "模型加载失败，请检查配置文件和模型路径。".encode("gbk") * 400
    lines = list(scan_lines(io.BytesIO(notes + b"\n" + BROKEN.read_bytes())))
    alone = list(scan_lines(io.BytesIO(b"x\n" + BROKEN.read_bytes())))
    assert len(lines) > 1 and [n for n, _ in lines] == [n for n, _ in alone] and lines[1:] == alone[1:]


def test_only_nuls_is_an_input_error_also_when_the_file_is_all_hole(tmp_path: Path) -> None:
    with pytest.raises(LogInputError, match=f"only NUL bytes \\({3 * MB:,} of them\\)"):
        list(scan_lines(io.BytesIO(bytes(3 * MB))))
    sparse = tmp_path / "all-hole.log"
    with sparse.open("wb") as out:
        out.truncate(10 * MB)
    with pytest.raises(DiagnosisError, match=f"only NUL bytes \\({10 * MB:,} of them\\)"):
        _triage(sparse)


def test_cli_exit_codes(tmp_path: Path) -> None:
    text = BROKEN.read_bytes()
    plain = _cli([str(BROKEN)])
    assert plain.returncode == c.EXIT_FAILURE
    holey = _cli(["-"], stdin=bytes(3 * MB) + _with_holes(text, [len(text) // 2], 100_000))
    assert holey.returncode == c.EXIT_FAILURE, holey.stderr
    assert json.loads(holey.stdout) == json.loads(plain.stdout)
    healthy = b"I1129 16:55:22.806754 25410 model_lifecycle.cc:839] \"successfully loaded 'ok_model'\"\n"
    assert _cli(["-"], stdin=bytes(MB) + healthy).returncode == c.EXIT_OK
    zeros = _cli(["-"], stdin=bytes(8 * MB))
    assert zeros.returncode == c.EXIT_USAGE
    assert b"only NUL bytes" in zeros.stderr and b"Traceback" not in zeros.stderr
    noise = _cli(["-"], stdin=os.urandom(MB))
    assert noise.returncode == c.EXIT_USAGE and b"it looks binary" in noise.stderr


def test_cli_on_dev_zero_ends_with_an_error() -> None:
    """The real /dev/zero on stdin: refused at the 1 GiB bound, not a hang (about a second here)."""
    with open("/dev/zero", "rb") as zero:
        cmd = [sys.executable, "-m", "triton_sre.cli", "triage", "-"]
        proc = subprocess.run(cmd, stdin=zero, capture_output=True, timeout=60)
    assert proc.returncode == c.EXIT_USAGE
    assert f"the first {holes.MAX_LEADING_HOLE:,} bytes".encode() in proc.stderr
