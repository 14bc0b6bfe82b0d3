"""A pasted line's triage loads only what it needs, with the same answers (tidy36).

- `level_inventory` parses nothing at import; `is_serving_wording` (asked about every failure line) parses
  only the entries that set ``wording_decides``, the same entries the whole parse gives.
- `scan` classifies a small chunk of glog lines in Python (`_Scanner.glog_lines_of`) exactly as the numpy
  pass does (`vectorised_lines_of`), so a pasted failed-load line never imports numpy.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from triton_sre import conventions as c
from triton_sre.diagnosis import level_inventory
from triton_sre.diagnosis.level_inventory import ENTRIES, LevelInventoryError, _entries_marked, _text
from triton_sre.diagnosis.lineshape import MAX_LINE_CHARS
from triton_sre.diagnosis.scan import NEEDLES, SMALL_BYTES, _Scanner

REAL = Path(__file__).parent / "data" / "logs" / "real"
FAILED_LOAD = next(
    line
    for path in sorted(REAL.glob("*.log"))
    for line in path.read_text(errors="replace").splitlines()
    if "failed to load 'bk_onnx' version 1" in line
)


# ---------------------------------------------------------------------------- the level inventory
def test_the_marked_entries_are_the_whole_parses() -> None:
    marked = _entries_marked(_text(), "wording_decides")
    assert marked == tuple(e for e in ENTRIES if e.wording_decides)
    assert len(marked) >= 4


def test_the_marked_entries_of_another_layout_fall_back_to_the_whole_parse() -> None:
    # The same document, its list written in flow style (valid YAML, no `- ` lines to cut at).
    doc = yaml.safe_load(_text())
    flow = yaml.safe_dump(doc, default_flow_style=True, width=1 << 20)
    assert "\n- " not in flow
    assert _entries_marked(flow, "wording_decides") == tuple(e for e in ENTRIES if e.wording_decides)


def test_a_bad_marked_entry_is_refused_by_the_quick_parse_too() -> None:
    bad = _text().replace("  wording_decides: true\n", "  wording_decides: true\n  colour: red\n", 1)
    with pytest.raises(LevelInventoryError, match="unknown \\['colour'\\]"):
        _entries_marked(bad, "wording_decides")


def test_entries_is_read_through_the_module() -> None:
    assert level_inventory.ENTRIES is ENTRIES and len(ENTRIES) > 400
    with pytest.raises(AttributeError):
        _ = level_inventory.NO_SUCH_NAME


def test_a_pasted_failed_load_line_loads_neither_numpy_nor_the_whole_level_inventory(tmp_path: Path) -> None:
    log = tmp_path / "pasted.log"
    log.write_text(FAILED_LOAD + "\n")
    code = (
        "import json, sys\n"
        "from triton_sre.cli import main\n"
        "from triton_sre.diagnosis import level_inventory as li\n"
        f"rc = main(['triage', '--format', 'json', {str(log)!r}])\n"
        "seen = [rc, 'numpy' in sys.modules, li._entries.cache_info().currsize]\n"
        "print(json.dumps(seen), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    rc, numpy_loaded, whole_parses = json.loads(proc.stderr.strip().splitlines()[-1])
    assert rc == 1 and c.RUNBOOK_BACKEND_NOT_FOUND in proc.stdout
    assert (numpy_loaded, whole_parses) == (False, 0)


# ---------------------------------------------------------------------------- the scan of a small chunk
_PIECES = (
    FAILED_LOAD.encode(),
    b'I1207 02:58:08.400000 20714 server.cc:1] "Started GRPCInferenceService at 0.0.0.0:8001"',
    b"W1207 02:58:08.400000 20714 model.cc:9] a warning",
    b"F1207 02:58:08.400000 20714 x.cc:1] fatal",
    b"I1207 02:58:08.400000 20714 pb_stub.cc:1] " + NEEDLES[0],
    *(b"I1207 02:58:08.400000 20714 a.cc:1] x " + needle for needle in NEEDLES),
    "E1207 02:58:08.400000 20714 a.cc:1] curled \u2019quote\u2019".encode(),
    b"I1207 02:58:08.400000 20714 long.cc:1] " + b"y" * (MAX_LINE_CHARS + 10),
    b"I1",
)
_ISO = b"2026-12-07T02:58:08.400000000Z "
_NOT_GLOG = (b"", b"E", b"Traceback (most recent call last):", _ISO + _PIECES[0], b"[pod/t/c] " + _PIECES[2])


def _both(chunks: list[bytes], tail: tuple[int, str] | None) -> tuple[object, object]:
    quick, slow = _Scanner(), _Scanner()
    quick.tail_owner = slow.tail_owner = tail
    got_quick, got_slow = [], []
    for data in chunks:
        got = quick.glog_lines_of(data, len(data))
        assert got is not None
        got_quick.append((got, quick.tail_owner, quick.base_line))
        got_slow.append((list(slow.vectorised_lines_of(data, len(data))), slow.tail_owner, slow.base_line))
    return got_quick, got_slow


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=12), min_size=1, max_size=4),
    st.sampled_from([None, (3, "I1207 before")]),
)
def test_a_small_glog_chunk_is_kept_as_the_vectorised_pass_keeps_it(
    chunks: list[list[bytes]], tail: tuple[int, str] | None
) -> None:
    quick, slow = _both([b"\n".join(lines) + b"\n" for lines in chunks], tail)
    assert quick == slow


@pytest.mark.parametrize("odd", _NOT_GLOG)
def test_a_chunk_with_any_other_line_is_left_to_the_vectorised_pass(odd: bytes) -> None:
    data = _PIECES[0] + b"\n" + odd + b"\n"
    assert _Scanner().glog_lines_of(data, len(data)) is None
    assert len(data) < SMALL_BYTES
