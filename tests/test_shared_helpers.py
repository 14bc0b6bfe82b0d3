"""The shared small mechanisms (issue 15): the PromQL quoter and the log tail."""

from __future__ import annotations

from pathlib import Path

from triton_sre.logtail import tail
from triton_sre.promql import escape, q


def test_q_escapes_backslash_quote_and_newline() -> None:
    assert q('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'
    assert q("plain") == '"plain"'
    assert escape('x"') == 'x\\"'


def test_tail_returns_the_last_lines_without_reading_them_all_into_a_list(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text("".join(f"line {i}\n" for i in range(1000)))
    assert tail(log, 3) == "line 997\nline 998\nline 999"
    assert tail(log).count("\n") == 39  # the default: 40 lines


def test_tail_of_an_unreadable_log_says_so(tmp_path: Path) -> None:
    text = tail(tmp_path / "missing.log")
    assert text.startswith("<log ") and "unreadable" in text
