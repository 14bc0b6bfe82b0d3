"""The gameday's scorecard: results in, text / JSON / Markdown out. Pure."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from triton_sre import conventions as c
from triton_sre.gameday.runner import Result
from triton_sre.redact import printable

FORMATS = ("text", "json", "markdown")


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _yes(flag: bool) -> str:
    return "yes" if flag else "NO"


def passed(results: Sequence[Result], meta: Mapping[str, Any]) -> bool:
    """Every scenario ran and passed: a stack that never came up or an interrupt is no pass."""
    return (
        bool(results)
        and all(r.passed for r in results)
        and not meta.get("error")
        and not meta.get("interrupted")
    )


def exit_code(results: Sequence[Result], meta: Mapping[str, Any], expected: int) -> int:
    """0 when every one of the `expected` scenarios ran and the scorecard says passed, else 1: the
    exit code and the scorecard's `passed` never disagree (an interrupt after the last one is no pass).
    Interrupted: 128 + the signal (130 for Ctrl-C, 143 for SIGTERM), as a shell reports a command a
    signal stopped and as every other command's Ctrl-C, so a script tells a game day cut short from one
    that found a fault."""
    if meta.get("interrupted"):
        signum = meta.get("signal")
        return 128 + signum if isinstance(signum, int) else c.EXIT_INTERRUPTED
    return c.EXIT_OK if len(results) == expected and passed(results, meta) else c.EXIT_FAILURE


def as_json(results: Sequence[Result], meta: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "scenarios": [r.as_json() for r in results],
        "passed": passed(results, meta),
        **meta,
    }


def _rows(results: Sequence[Result]) -> list[list[str]]:
    """The table's cells for a terminal or Markdown: text from Prometheus, Alertmanager, Slack and
    scenario files shown escaped (`printable`)."""
    rows = []
    for r in results:
        runbook = r.runbook or "-"
        if r.diagnosis_runbook and r.diagnosis_runbook != r.runbook:
            runbook = f"{runbook} / bot: {r.diagnosis_runbook}"
        row = [
            r.name,
            _yes(r.detected),
            _s(r.seconds_to_alert),
            _s(r.seconds_to_alertmanager),
            _s(r.seconds_to_notify),
            r.alert or "-",
            runbook + ("" if r.diagnosed_right else f" (expected {r.expected_runbook})"),
            _yes(r.restored),
            _s(r.seconds_to_restore),
            "; ".join(r.lost) or "none",
        ]
        rows.append([printable(cell) for cell in row])
    return rows


HEADER = [
    "scenario",
    "detected",
    "alert s",
    "AM s",
    "Slack s",
    "alert",
    "runbook",
    "restored",
    "restore s",
    "lost",
]


def _notes(results: Sequence[Result], meta: Mapping[str, Any]) -> list[str]:
    lines = [f"Timings: {meta.get('timings', '-')}"]
    if meta.get("load"):
        end = f"; at the end {meta['load_at_end']}" if meta.get("load_at_end") else ""
        lines.append(f"Machine: {meta['load']}{end}")
    if meta.get("total_seconds") is not None:
        lines.append(f"Total: {meta['total_seconds']:.0f} s for {len(results)} scenario(s)")
    for r in results:
        if r.error:
            lines.append(f"{r.name}: error: {r.error}")
    if meta.get("error"):
        lines.append(f"Error: {meta['error']}")
    if meta.get("interrupted"):
        lines.append("Interrupted: the scenarios after the running one did not run.")
    failed = [r.name for r in results if not r.passed]
    if failed:
        lines.append(f"FAILED: {', '.join(failed)}")
    elif passed(results, meta):
        lines.append("All scenarios passed.")
    elif not results:
        lines.append("No scenario ran.")
    return [printable(line) for line in lines]


def as_text(results: Sequence[Result], meta: Mapping[str, Any]) -> str:
    rows = [HEADER, *_rows(results)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
    return "\n".join([*lines, "", *_notes(results, meta)]) + "\n"


def as_markdown(results: Sequence[Result], meta: Mapping[str, Any]) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = [
        "| " + " | ".join(HEADER) + " |",
        "|" + "|".join("---" for _ in HEADER) + "|",
        *("| " + " | ".join(cell(x) for x in row) + " |" for row in _rows(results)),
        "",
        *(f"- {cell(note)}" for note in _notes(results, meta)),
        "",
        "Injected:",
        "",
        *(f"- `{printable(r.name)}`: {cell(printable(r.injects))}" for r in results),
    ]
    return "\n".join(lines) + "\n"


def render(results: Sequence[Result], meta: Mapping[str, Any], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(as_json(results, meta), indent=2) + "\n"
    if fmt == "markdown":
        return as_markdown(results, meta)
    return as_text(results, meta)
