"""Markdown that triage, lint and report write holds text whoever names a model controls: it stays one
field (no new cell, row or heading), carries no live HTML tag, and cannot end its code block early."""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from triton_sre import mdtext
from triton_sre.cli import main

EVIL = "m|x<img src=x onerror=alert(1)>"


def _triage_markdown(tmp_path: Path, lines: list[str]) -> str:
    log = tmp_path / "evil.log"
    log.write_text("\n".join(lines) + "\n")
    out = io.StringIO()
    with redirect_stdout(out):
        main(["triage", str(log), "--format", "markdown"])
    return out.getvalue()


def test_a_model_name_with_html_and_pipes_stays_one_inert_cell(tmp_path: Path) -> None:
    md = _triage_markdown(
        tmp_path,
        [
            "I1205 10:00:00.000000 1 model_lifecycle.cc:1] loading: other<script>x</script>:1",
            f"E1205 10:00:00.100000 1 model_lifecycle.cc:2] failed to load '{EVIL}' version 1: "
            "Invalid argument: unable to find ``` and <b>bold</b>",
        ],
    )
    outside = []
    fenced_by = None
    for line in md.splitlines():
        if fenced_by is None and line.startswith("```"):
            fenced_by = line
        elif fenced_by is not None and line == fenced_by:
            fenced_by = None
        elif fenced_by is None:
            outside.append(line)
    assert fenced_by is None  # every fence closed by its own marks
    prose = "\n".join(outside)
    assert "<img" not in prose and "<script" not in prose
    row = next(line for line in outside if line.startswith("| 1 |"))
    assert row.count(" | ") == 4  # five cells: the name's pipe is escaped
    # the evidence keeps the line as Triton wrote it, inside a fence longer than its backticks
    assert any(line.startswith("````") for line in md.splitlines())
    assert f"'{EVIL}'" in md


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("a|b", "a\\|b"),
        ("x<y & z", "x&lt;y &amp; z"),
        ("two\nlines", "two\\nlines"),
        ("\x1b[31mred", "\\x1b[31mred"),
    ],
)
def test_inline_text(value: str, want: str) -> None:
    assert mdtext.text(value) == want


@pytest.mark.parametrize(
    ("value", "want"), [("a", "`a`"), ("a`b", "``a`b``"), ("`x", "`` `x ``"), ("a``b", "```a``b```")]
)
def test_code_span_is_not_ended_by_its_own_backticks(value: str, want: str) -> None:
    assert mdtext.code(value) == want


def test_fence_outgrows_the_longest_backtick_run() -> None:
    assert mdtext.fence(["plain"]) == "```"
    assert mdtext.fence(["a ``` b", "`````"]) == "``````"
