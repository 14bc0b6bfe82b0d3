"""A log that ends mid-load (issue 20): the loads it starts and never shows the outcome of.

The cut is made on a real Triton 2.51 capture (tests/data/logs/real/, every format it was captured in),
so the start and outcome lines are the server's own: a cut after the ``loading:`` lines names exactly the
models whose outcome comes later, and the whole log names none.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from triton_sre.cli import main
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.diagnosis.progress import MAX_TRACKED, LoadProgress
from triton_sre.diagnosis.render import to_markdown, to_text

REAL = Path(__file__).parent / "data" / "logs" / "real"
CAPTURES = ["default-exit-false.log", "iso8601-exit-false.log", "verbose-exit-false.log"]


def _report(text: str):  # type: ignore[no-untyped-def]
    return diagnose_events(parse_text(text))


def _cut_after_loading(text: str) -> tuple[str, list[str]]:
    """The capture up to its last ``loading:`` line before any outcome of those models, and the models
    started by then whose outcome is not in the cut (read with this test's own regex)."""
    lines = text.splitlines(keepends=True)
    started: list[str] = []
    end = 0
    for i, line in enumerate(lines):
        m = re.search(r'"?loading: (\S+):(\d+)"?\s*$', line)
        if m:
            started.append(f"{m[1]}:{m[2]}")
            end = i + 1
        elif started and ("successfully loaded" in line or "failed to load '" in line):
            break
    cut = "".join(lines[:end])
    return cut, started


@pytest.mark.parametrize("name", CAPTURES)
def test_a_real_log_cut_mid_load_names_the_open_loads(name: str) -> None:
    text = (REAL / name).read_text()
    cut, started = _cut_after_loading(text)
    assert started, name
    report = _report(cut)
    assert report.still_loading == tuple(started)
    assert _report(text).still_loading == ()  # the whole log shows every outcome


def test_a_model_with_a_finding_is_not_open() -> None:
    text = (REAL / "default-exit-false.log").read_text().splitlines(keepends=True)
    # the first failure line is in, the later loads are not finished
    upto = next(i for i, line in enumerate(text) if "loading: bk_typo:1" in line) + 1
    report = _report("".join(text[:upto]))
    named = {f.model for f in report.findings}
    assert {"bk_onnx", "bk_pytorch", "bk_trt"} <= named
    assert report.still_loading == ("bk_typo:1",)


@pytest.mark.parametrize(
    ("outcome", "still"),
    [
        ("I0117 10:10:21.000000 1 model_lifecycle.cc:693] successfully loaded 'nonhist' version 1", ()),
        ("I0117 10:10:21.000000 1 model_lifecycle.cc:818] successfully loaded 'nonhist'", ()),
        ("I0117 10:10:21.000000 1 model_lifecycle.cc:777] failed to load 'nonhist'", ()),
        ("I0117 10:10:21.000000 1 model_lifecycle.cc:612] successfully unloaded 'nonhist' version 1", ()),
        ("I0117 10:10:21.000000 1 model_lifecycle.cc:818] successfully loaded 'other'", ("nonhist:1",)),
    ],
)
def test_outcome_wordings_of_older_and_newer_releases(outcome: str, still: tuple[str, ...]) -> None:
    start = "I0117 10:10:20.044072 1 model_lifecycle.cc:459] loading: nonhist:1\n"
    assert _report(start + outcome + "\n").still_loading == still


def test_the_status_table_row_is_an_outcome() -> None:
    text = (
        "I0117 10:10:20.044072 1 model_lifecycle.cc:459] loading: nonhist:1\n"
        "I0117 10:10:22.000000 1 server.cc:674] \n"
        "+---------+---------+--------+\n| Model   | Version | Status |\n+---------+---------+--------+\n"
        "| nonhist | 1       | READY  |\n+---------+---------+--------+\n"
    )
    assert _report(text).still_loading == ()


def test_text_and_markdown_say_the_outcome_is_missing() -> None:
    cut, started = _cut_after_loading((REAL / "default-exit-false.log").read_text())
    report = _report(cut)
    for rendered in (to_text(report), to_markdown(report)):
        assert "No load failure found." in rendered or report.findings
        assert f"({', '.join(started[:10])}" in rendered
        assert "after the end of this log" in rendered


def test_json_lists_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "cut.log"
    log.write_text("I0117 10:10:20.044072 1 model_lifecycle.cc:459] loading: nonhist:1\n")
    code = main(["triage", "--format", "json", str(log)])
    doc = json.loads(capsys.readouterr().out)
    assert (code, doc["findings"], doc["still_loading"]) == (0, [], ["nonhist:1"])


def test_tracking_is_bounded() -> None:
    progress = LoadProgress()
    for i in range(MAX_TRACKED + 50):
        progress.note(parse_text(f"I0117 10:10:20.044072 1 model_lifecycle.cc:459] loading: m{i}:1\n")[0])
    assert len(progress.still_loading()) == MAX_TRACKED
