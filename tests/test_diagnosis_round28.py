"""Round 28 of issue 20 (2026-12-03): hostile shapes, and what heldout40/41 taught.

- Hostile shapes (bench/bench_triage_hostile.py measures them): a hard-wrapped paste is rejoined only up
  to the length the scanner keeps of one line; a template's quoted value stops at its closing quote; a
  default instance name is resolved by one lookup. The tests here pin the behaviour, not the speed.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.inventory import template_regex
from triton_sre.diagnosis.lineshape import MAX_LINE_CHARS
from triton_sre.diagnosis.logparse import parse_text


def test_a_rejoined_hard_wrapped_line_is_cut_where_a_long_line_is() -> None:
    head = (
        "E1203 10:00:00.000000 1 model_lifecycle.cc:626] failed to load 'm' version 1: Internal: " + "x" * 32
    )
    assert len(head) == 120
    rest = ["y" * 120] * 2000  # 240,000 characters of one line, hard-wrapped at 120
    after = "I1203 10:00:01.000000 1 server.cc:1] next"
    events = list(parse_text("\n".join([head, *rest, "z", after]) + "\n"))
    assert len(events) == 2
    assert len(events[0].message) == MAX_LINE_CHARS  # as much as the scanner keeps of one line
    assert events[0].message.startswith("failed to load 'm'") and events[0].message.endswith("y")
    assert events[1].message == "next"


def test_a_quoted_template_value_stops_at_its_closing_quote() -> None:
    pattern = template_regex("failed to load '<model>', no version is available")
    line = "failed to load 'a' " * 50 + "failed to load 'b', no version is available"
    m = pattern.search(line)
    assert m is not None and m.group(0) == "failed to load 'b', no version is available"
    assert pattern.search("failed to load 'a' and 'b', no version is available") is None


def test_a_line_repeating_a_templates_start_still_finds_the_cause_after_it() -> None:
    line = (
        "E1203 10:00:00.000000 1 model_lifecycle.cc:626] failed to load 'm' version 1: "
        + "model 'x' " * 2000
        + "no version is available"
    )
    findings = diagnose_events(parse_text(line + "\n")).findings
    assert [f.model for f in findings] == ["m"]
    text = "E1203 10:00:00.000000 1 model_lifecycle.cc:626] failed to load 'm', no version is available"
    findings = diagnose_events(parse_text(("model '" * 3000) + "\n" + text + "\n")).findings
    assert [f.runbook for f in findings] == [c.RUNBOOK_VERSION_DIR_INVALID]
