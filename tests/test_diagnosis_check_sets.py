"""Three blind check sets scored the way tests/test_diagnosis_qa_server_logs.py scores Triton's QA texts: the
load and start failures the backends' own tests expect (tests/data/qa_backend_logs/), the error texts
documentation explains (tests/data/doc_statements/), and the load and repository failures core's own unit
tests assert (tests/data/qa_core_tests/). All three were labelled from their sources and the runbook
pages' Meaning before any scoring; the first score and every later one are in each folder's README. The
floors are the figures measured at the commit that set them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from accuracy import qa_text

from triton_sre.diagnosis.catalog import load_catalog
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

DATA = Path(__file__).parent / "data"
SETS = {"qa_backend_logs": 25, "doc_statements": 31, "qa_core_tests": 11}
FLOORS = {
    ("qa_backend_logs", "wrapped"): 20,
    ("qa_backend_logs", "raw"): 14,
    ("doc_statements", "wrapped"): 19,
    ("doc_statements", "raw"): 20,
    ("qa_core_tests", "wrapped"): 2,
    ("qa_core_tests", "raw"): 2,
}


def cases(name: str) -> list[dict[str, Any]]:
    return yaml.safe_load((DATA / name / "cases.yaml").read_text())["cases"]


@pytest.mark.parametrize("name", list(SETS))
def test_each_set_is_labelled_with_pages(name: str) -> None:
    labelled = cases(name)
    assert len(labelled) == SETS[name]
    assert {c["runbook"] for c in labelled} <= set(load_catalog(None).titles)


@pytest.mark.parametrize(("name", "how"), list(FLOORS))
def test_the_set_maps_to_its_labels(name: str, how: str) -> None:
    labelled = cases(name)
    got = []
    for case in labelled:
        findings = diagnose_events(parse_text(qa_text(case, how))).findings
        got.append(findings[0].runbook if findings else None)
    right = sum(g == c["runbook"] for g, c in zip(got, labelled, strict=True))
    print(name, how, f"{right}/{len(labelled)}")  # for the notes
    assert right >= FLOORS[(name, how)]
