"""The triage fast paths give exactly what the slow paths give.

- Repeated messages (a crash-looping server) are classified once (`repeats.py`): findings,
  unmatched templates and every count are the same as with the memo off.
- Prefixed logs (`docker logs -t`, `kubectl logs --timestamps`, `kubectl logs --prefix`,
  `docker compose logs`) are stripped in the vectorised scan (`scan.py`): the same findings and
  line numbers as the unprefixed log.

Every log here is a real Triton 2.51 capture from ``tests/data/logs/real/`` (sources in
``tests/corpus.py``), repeated or prefixed the way a crash loop or a log collector does it.
"""

from __future__ import annotations

import gzip
import io
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from triton_sre.diagnosis import repeats
from triton_sre.diagnosis.command import triage_stream
from triton_sre.diagnosis.engine import Report

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


def test_crash_loop_gzip_same_report() -> None:
    data = crash_loop((Path(__file__).parent / "data/logs/real/verbose-exit-true.log").read_bytes(), 4)
    with gzip.GzipFile(fileobj=io.BytesIO(gzip.compress(data)), mode="rb") as stream:
        assert triage_stream(stream, {}) == _slow(data)  # type: ignore[arg-type]
