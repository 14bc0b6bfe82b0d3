"""Triton's own configuration-failure messages (server `qa/L0_model_config`, labelled blind; see
tests/data/qa_model_config/README.md) in three of core's wrappings: the top-1 runbook against the
label, never an empty answer. The floors are the figures measured at the commit that set them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from triton_sre.diagnosis.catalog import load_catalog
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "qa_model_config" / "cases.yaml").read_text()
)["cases"]
STAMP = "E1203 10:00:00.000000 1"
WRAPPINGS = {
    "lifecycle": lambda m, msg: (
        f"{STAMP} model_lifecycle.cc:654] \"failed to load '{m}' version 1: Invalid argument: {msg}\""
    ),
    "poll": lambda m, msg: (
        f"{STAMP} model_repository_manager.cc:1509] Poll failed for model directory '{m}': {msg}"
    ),
    "status": lambda m, msg: f"{STAMP} model_repository_manager.cc:749] Invalid argument: {msg}",
}
# measured at the commit that added the second reading of model_config_utils.cc (README.md)
FLOORS = {"lifecycle": 198, "poll": 198, "status": 198}


def top1(line: str) -> str | None:
    report = diagnose_events(parse_text(line + "\n"))
    return report.findings[0].runbook if report.findings else None


def test_the_cases_are_whole_and_labelled_with_pages() -> None:
    pages = set(load_catalog(None).titles)
    assert len(CASES) == 213
    assert {c["runbook"] for c in CASES} <= pages
    assert len({(c["case"], c["file"]) for c in CASES}) == len(CASES)


@pytest.mark.parametrize("wrapping", list(WRAPPINGS))
def test_triton_config_failures_map_to_their_runbook(wrapping: str) -> None:
    wrap = WRAPPINGS[wrapping]
    got = {(c["case"], c["file"]): top1(wrap(c["model"], c["message"])) for c in CASES}
    assert None not in got.values()  # every one is a failure with a finding
    right = sum(got[(c["case"], c["file"])] == c["runbook"] for c in CASES)
    misses = [
        (c["case"], c["runbook"], got[(c["case"], c["file"])])
        for c in CASES
        if got[(c["case"], c["file"])] != c["runbook"]
    ]
    print(wrapping, f"{right}/{len(CASES)}", misses)  # for the notes
    assert right >= FLOORS[wrapping], misses
