"""The real-log corpus (tests/data/logs/tune, heldout): load it and score the engine's top-1 on it."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

LOGS = Path(__file__).parent / "data" / "logs"
SPLITS = ("tune", "heldout")
SEEN_BEFORE_SPLIT = frozenset({"server-3098", "server-7262"})
"""Held-out logs read before the split (see tests/data/logs/SPLIT.md)."""
ALREADY_FIXTURES = frozenset(
    {"server-3383", "server-3645", "server-3798", "server-4346", "server-4824", "server-8001"}
)
"""Held-out logs from issues tests/data/logs/gpu/ already quoted before this corpus (not 'never seen')."""

_HEAD = re.compile(r"^# (source|expect|note): (.*)$")


@dataclass(frozen=True)
class Case:
    name: str
    split: str
    source: str
    expect: str
    text: str


def split_of(source: str) -> str:
    """The split rule: sha256 of the source URL, even -> heldout."""
    return "heldout" if int(hashlib.sha256(source.encode()).hexdigest(), 16) % 2 == 0 else "tune"


def load(split: str) -> list[Case]:
    cases = []
    for path in sorted((LOGS / split).glob("*.log")):
        text = path.read_text()
        meta: dict[str, str] = {}
        for line in text.splitlines():
            m = _HEAD.match(line)
            if not m:
                break
            meta[m.group(1)] = m.group(2).strip()
        cases.append(Case(path.stem, split, meta.get("source", ""), meta.get("expect", ""), text))
    return cases


def case_text(name: str, *splits: str) -> str:
    """The text of corpus log ``name`` (header comments included, as `load` and the scoring read it), from
    the first of ``splits`` that holds it."""
    for split in splits:
        path = LOGS / split / f"{name}.log"
        if path.is_file():
            return path.read_text()
    raise FileNotFoundError(f"{name}.log is in none of {', '.join(splits)}")


@dataclass(frozen=True)
class Score:
    cases: int
    hits: int
    misses: tuple[tuple[str, str, str], ...]
    """(name, expected, got) for every miss."""

    @property
    def top1(self) -> float:
        return self.hits / self.cases if self.cases else 0.0


def top1(case: Case) -> str:
    findings = diagnose_events(parse_text(case.text)).findings
    return findings[0].runbook if findings else "(no finding)"


HEALTHY = "healthy"
"""The label of a log in which every model loaded: it must get no critical finding."""


def has_failure(case: Case) -> bool:
    return diagnose_events(parse_text(case.text)).has_failure


def score(cases: list[Case]) -> Score:
    misses = []
    for case in cases:
        got = top1(case)
        if got != case.expect:
            misses.append((case.name, case.expect, got))
    return Score(len(cases), len(cases) - len(misses), tuple(misses))


def qa_text(case: dict[str, object], how: str) -> str:
    """A check set's case (tests/data/qa_*/, doc_statements/ cases.yaml) as a log: "wrapped" puts a text
    with a model inside core's failed-to-load line, a server-wide one stays its own line; "raw" is the text
    alone."""
    if case["model"] and how == "wrapped":
        return (
            f"E1203 10:00:00.000000 1 model_lifecycle.cc:654] \"failed to load '{case['model']}' version 1: "
            f'Invalid argument: {case["message"]}"\n'
        )
    return f"{case['message']}\n"
