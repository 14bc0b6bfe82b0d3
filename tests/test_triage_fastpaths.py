"""The triage fast paths give exactly what the slow paths give.

- Repeated messages (a crash-looping server) are classified once (`repeats.py`): findings,
  unmatched templates and every count are the same as with the memo off.
- Prefixed logs (`docker logs -t`, `kubectl logs --timestamps`, `kubectl logs --prefix`,
  `docker compose logs`) are stripped in the vectorised scan (`scan.py`): the same findings and
  line numbers as the unprefixed log.

Every log here is a real Triton 2.51 capture from ``tests/data/logs/real/`` (how they are made:
``tests/test_diagnosis_realtriton.py``), repeated or prefixed the way a crash loop or a log
collector does it.
"""

from __future__ import annotations

import gzip
import io
import re
from pathlib import Path

import pytest
from diag29_faults import FLAGS
from diag31_faults import FAULTS, WARNED
from hypothesis import given, settings
from hypothesis import strategies as st
from normal_operation_capture import CAPTURES as NORMAL_OPERATION
from runtime_faults import STARTUP

from triton_sre.diagnosis import repeats
from triton_sre.diagnosis.api import diagnose_stream as triage_stream
from triton_sre.diagnosis.engine import Report, diagnose_events
from triton_sre.diagnosis.lineshape import peel_collector_prefix
from triton_sre.diagnosis.logparse import parse, parse_text
from triton_sre.diagnosis.scan import scan_lines

REAL = sorted((Path(__file__).parent / "data" / "logs" / "real").glob("*.log"))
_GLOG_TIME = re.compile(rb"^([IWEF]\d{4}) \d\d:\d\d:\d\d", re.M)


def _triage(data: bytes) -> Report:
    return triage_stream(io.BytesIO(data), {})


def _slow(data: bytes) -> Report:
    with repeats.disabled():
        return triage_stream(io.BytesIO(data), {})


def crash_loop(capture: bytes, cycles: int) -> bytes:
    """The capture written ``cycles`` times, each restart a minute later (as a restart loop does)."""
    out = []
    for n in range(cycles):
        stamp = f"17:{n % 60:02d}:{n % 59:02d}".encode()
        out.append(_GLOG_TIME.sub(lambda m, s=stamp: m.group(1) + b" " + s, capture))
    return b"".join(out)


# ---------------------------------------------------------------------------- repeated messages
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_crash_loop_same_report_as_slow_path(path: Path) -> None:
    data = crash_loop(path.read_bytes(), 6)
    fast = _triage(data)
    assert fast == _slow(data)
    assert fast.events > 0


def test_memo_eviction_keeps_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """A memo far smaller than the number of distinct messages still gives the same report."""
    monkeypatch.setattr(repeats, "MAX_ENTRIES", 3)
    monkeypatch.setattr(repeats, "MAX_TEXT_CHARS", 120)
    data = crash_loop((Path(__file__).parent / "data/logs/real/default-exit-false.log").read_bytes(), 3)
    assert _triage(data) == _slow(data)


_REAL_LINES = [
    line
    for path in REAL
    for line in path.read_bytes().splitlines(keepends=True)
    if not line.startswith(b"#")
]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(range(len(_REAL_LINES))), min_size=1, max_size=40),
    st.integers(min_value=1, max_value=30),
)
def test_random_repeats_same_report_as_slow_path(picks: list[int], cycles: int) -> None:
    block = b"".join(_REAL_LINES[i] for i in picks)
    data = crash_loop(block, cycles)
    assert _triage(data) == _slow(data)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(range(len(_REAL_LINES))), max_size=20),
    st.lists(st.text(alphabet="abc 0123'/:.x", min_size=1, max_size=30), min_size=1, max_size=4),
    st.integers(min_value=1, max_value=20),
)
def test_unexplained_errors_counted_as_in_slow_path(picks: list[int], texts: list[str], cycles: int) -> None:
    """Error lines no rule explains are grouped by template with a count: the same counts."""
    odd = [f'E1129 17:00:00.000001 1 odd.cc:{k}] "{t}"\n'.encode() for k, t in enumerate(texts)]
    block = b"".join(_REAL_LINES[i] for i in picks) + b"".join(odd)
    data = crash_loop(block, cycles)
    fast = _triage(data)
    assert fast == _slow(data)
    if not picks:  # otherwise a raw line after an odd one continues it (a traceback) and may explain it
        assert sum(u.count for u in fast.unmatched) == cycles * len(odd)


def test_crash_loop_gzip_same_report() -> None:
    data = crash_loop((Path(__file__).parent / "data/logs/real/verbose-exit-true.log").read_bytes(), 4)
    with gzip.GzipFile(fileobj=io.BytesIO(gzip.compress(data)), mode="rb") as stream:
        assert triage_stream(stream, {}) == _slow(data)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- collector prefixes
def _stamp(k: int) -> bytes:
    # RFC3339Nano as docker and the kubelet write it: the fraction's trailing zeros trimmed.
    frac = f"{(k * 7_654_321) % 1_000_000_000:09d}".rstrip("0")
    return f"2026-11-29T16:{k // 60 % 60:02d}:{k % 60:02d}{'.' + frac if frac else ''}Z ".encode()


PREFIXES = {
    "docker-t": _stamp,  # also kubectl logs --timestamps
    "kubectl-prefix": lambda k: b"[pod/triton-7d9c5b-x2x/triton] ",
    "kubectl-prefix-t": lambda k: b"[pod/triton-7d9c5b-x2x/triton] " + _stamp(k),
    "compose": lambda k: b"triton-1  | ",
    "compose-t": lambda k: b"triton_server_1  | " + _stamp(k),
    "compose-long-name": lambda k: b"tritonserver-inference-gpu-a100-7  | ",
    "kubectl-prefix-long-name": lambda k: b"[pod/tritonserver-inference-7d9c5b8f4-x2x9z/tritonserver-gpu] ",
}


def prefixed(data: bytes, style: str) -> bytes:
    prefix = PREFIXES[style]
    return b"".join(prefix(k) + line for k, line in enumerate(data.splitlines(keepends=True)))


def _scanned(data: bytes, chunk: int) -> Report:
    return diagnose_events(parse(scan_lines(io.BytesIO(data), chunk_bytes=chunk)))


def test_the_scanner_keeps_cores_closing_failure_logged_at_info() -> None:
    """2.51 logs ``failed to load '<model>'`` at ``I`` (model_lifecycle.cc); the line reader names the model
    from it when its E line is cut off, so the scanner must keep it in a chunk of log lines too (hypothesis
    found a chunk that dropped it)."""
    filler = b'I1129 17:06:12.130160 10326 cuda_memory_manager.cc:117] "CUDA memory pool disabled"\n' * 200
    closing = b'I1129 17:06:12.168971 10328 model_lifecycle.cc:777] "failed to load \'bk_onnx\'"\n'
    data = filler + closing + filler
    plain = diagnose_events(parse_text(data.decode()))
    assert [f.model for f in plain.findings] == ["bk_onnx"]
    for chunk in (4096, 1 << 22):
        assert _same(_scanned(data, chunk), plain)
    # ... and as a web page's source holds it (quotes as character references: ASCII, so the chunk is not
    # passed whole as a re-typed one is)
    for quote in (b"&#x27;", b"&#39;", b"&apos;"):
        escaped = filler + closing.replace(b"'", quote).replace(b'"', b"&quot;") + filler
        assert [f.model for f in diagnose_events(parse_text(escaped.decode())).findings] == ["bk_onnx"]
        for chunk in (4096, 1 << 22):
            assert _same(_scanned(escaped, chunk), plain), quote


def _same(a: Report, b: Report) -> bool:
    """Same findings (evidence lines and texts), unmatched templates and counts.

    ``events`` is left out: it counts the lines the scanner passed on, and a chunk that is mostly
    raw lines passes all of its lines, so it depends on where chunk boundaries fall.
    """
    return (a.findings, a.unmatched, a.harmless_lines) == (b.findings, b.unmatched, b.harmless_lines)


@pytest.mark.parametrize("style", sorted(PREFIXES))
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_prefixed_capture_same_report_as_plain(path: Path, style: str) -> None:
    data = path.read_bytes()
    for chunk in (512, 1 << 22):
        want = _scanned(data, chunk)
        got = _scanned(prefixed(data, style), chunk)
        assert _same(got, want), chunk
        assert got == want or chunk < len(data)
    # (a setting 2.51 accepts leaves a healthy capture, runtime_faults.STARTUP: it must stay without one)
    healthy = {f"startup-{name}.log" for name, (_kw, _prep, rb, _about) in STARTUP.items() if rb is None}
    healthy |= {f"diag29-flag-{name}.log" for name, (_flags, rb) in FLAGS.items() if rb is None}
    healthy |= {f"diag31-{name}.log" for name, (_kw, _prep, rb, _about) in FAULTS.items() if rb is None}
    healthy -= {f"diag31-{name}.log" for name in WARNED}  # served with a dropped setting: a warning finding
    healthy |= set(NORMAL_OPERATION)  # a healthy server given bad requests, a cancel, an unload, a stop
    assert bool(want.findings) == (path.name not in healthy), "every real capture of a failure has findings"


def test_prefixed_lines_reach_the_parser_stripped() -> None:
    """The vectorised path, not the line-by-line fallback: Triton's own text, original line numbers."""
    capture = (Path(__file__).parent / "data/logs/real/verbose-exit-true.log").read_bytes()
    # A busy server: the capture's own verbose I lines written many times around its failures.
    info = [line for line in capture.splitlines(keepends=True) if line.startswith(b"I1129")]
    data = capture + b"".join(info) * 20 + capture
    plain = list(scan_lines(io.BytesIO(data)))
    for style in PREFIXES:
        assert list(scan_lines(io.BytesIO(prefixed(data, style)))) == plain, style
    # The plain verbose log keeps a small fraction of its lines (the point of the scan).
    assert len(plain) < data.count(b"\n") // 2


def test_iso8601_log_behind_a_timestamp_keeps_its_own_timestamp() -> None:
    line = b"2026-11-29T16:56:40Z E 26992 model_lifecycle.cc:642] \"failed to load 'm' version 2: x\"\n"
    for style in PREFIXES:
        ((_n, text),) = list(scan_lines(io.BytesIO(prefixed(line, style))))
        assert text == line.decode().rstrip("\n"), style


def test_mixed_and_stopping_prefixes_crlf_truncated_gzip() -> None:
    data = (Path(__file__).parent / "data/logs/real/default-exit-false.log").read_bytes()
    lines = data.splitlines(keepends=True)
    styles = sorted(PREFIXES)
    # Every line its own style (several containers' logs merged), then none from the middle on.
    mixed = b"".join(
        (PREFIXES[styles[k % len(styles)]](k) if k < len(lines) // 2 else b"") + line
        for k, line in enumerate(lines)
    )
    want = _scanned(data, 1 << 22)
    for chunk in (512, 4096, 1 << 22):
        assert _same(_scanned(mixed, chunk), want)
    assert _scanned(mixed, 1 << 22) == want
    # compose writes an empty line as "NAME  |" with or without the space.
    bare = prefixed(data, "compose").replace(b"triton-1  | \n", b"triton-1  |\n")
    assert bare.count(b"|\n") > 3
    assert _scanned(bare, 1 << 22) == _scanned(prefixed(data, "compose"), 1 << 22) == want
    crlf = data.replace(b"\n", b"\r\n")
    assert _same(_scanned(prefixed(crlf, "docker-t"), 4096), _scanned(crlf, 4096))
    cut = data[: data.rindex(b"failed to load") + 20]  # the last line cut off mid-message
    assert not cut.endswith(b"\n")
    assert _same(_scanned(prefixed(cut, "compose"), 4096), _scanned(cut, 4096))
    packed = gzip.compress(prefixed(data, "kubectl-prefix-t"))
    with gzip.GzipFile(fileobj=io.BytesIO(packed), mode="rb") as stream:
        assert triage_stream(stream, {}) == want  # type: ignore[arg-type]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(range(len(_REAL_LINES))), st.sampled_from([None, *sorted(PREFIXES)])),
        min_size=1,
        max_size=50,
    ),
    st.sampled_from([64, 4096, 1 << 22]),
)
def test_random_prefixes_same_report_as_plain(picks: list[tuple[int, str | None]], chunk: int) -> None:
    plain = b"".join(_REAL_LINES[i] for i, _ in picks)
    mixed = b"".join((PREFIXES[s](k) if s else b"") + _REAL_LINES[i] for k, (i, s) in enumerate(picks))
    assert _same(_scanned(mixed, chunk), _scanned(plain, chunk))


def test_a_chunk_of_only_raw_lines_keeps_the_log_line_it_continues() -> None:
    """Found by the property above: with small chunks, a prefixed raw line alone in its chunk took
    the "not Triton's format" path, which dropped the previous chunk's last log line (its owner)."""
    picks = [(0, None)] * 4 + [(1, None), (1169, "compose-long-name")]
    plain = b"".join(_REAL_LINES[i] for i, _ in picks)
    mixed = b"".join((PREFIXES[s](k) if s else b"") + _REAL_LINES[i] for k, (i, s) in enumerate(picks))
    lines = list(scan_lines(io.BytesIO(mixed), chunk_bytes=64))
    assert [n for n, _ in lines][-2:] == [5, 6]
    # (that path hands the parser whole lines, prefixes on: the parser peels them, as it does a paste's)
    assert [(n, peel_collector_prefix(text)) for n, text in lines] == list(
        scan_lines(io.BytesIO(plain), chunk_bytes=64)
    )
    assert _same(_scanned(mixed, 64), _scanned(plain, 64))
