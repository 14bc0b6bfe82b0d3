"""The exporter on a fleet-sized repository index: each distinct UNAVAILABLE reason is diagnosed once
while the index keeps showing it, not at every poll.

The diagnosis memo (diagnosis/repeats.py) keeps 2,048 texts of at most 2,048 characters; an index with
more distinct reasons, or one long Python traceback as a reason, was classified again at every poll
(3,334 distinct reasons made each poll of a 10,000-model index take 35 s; bench/RESULTS.md)."""

from __future__ import annotations

from collections import Counter

from client_double import PollClient

from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.diagnosis.engine import diagnose_reason
from triton_sre.diagnosis.repeats import MAX_TEXT_CHARS
from triton_sre.exporter.derive import ReasonMemo
from triton_sre.exporter.service import Exporter


class IndexClient(PollClient):
    """A Triton answering only its repository index (metrics and statistics are empty)."""

    def __init__(self, index: list[dict[str, str]]) -> None:
        self.index = index

    def metrics(self) -> bytes:
        return b""

    def repository_index(self) -> list[dict[str, str]]:
        return self.index

    def all_stats(self) -> list[object]:
        return []

    def model_config(self, name: str) -> dict[str, object]:
        return {"name": name}


def fleet_index(models: int, first: int = 0) -> list[dict[str, str]]:
    """`models` UNAVAILABLE models, each with a reason of its own (longer than the diagnosis memo keeps
    for one in ten), and as many READY ones."""
    rows = []
    for m in range(first, first + models):
        reason = f"Internal: ModuleNotFoundError: No module named 'pkg_{m}'"
        if m % 10 == 0:
            reason += " " + "traceback frame " * (MAX_TEXT_CHARS // 16 + 1)
        rows.append({"name": f"down_{m}", "version": "1", "state": c.STATE_UNAVAILABLE, "reason": reason})
        rows.append({"name": f"up_{m}", "version": "1", "state": c.STATE_READY, "reason": ""})
    return rows


def test_each_distinct_reason_is_diagnosed_once_across_polls() -> None:
    asked: Counter[str] = Counter()

    def diagnose(reason: str) -> str:
        asked[reason] += 1
        return diagnose_reason(reason) if len(asked) <= 3 else c.RUNBOOK_PYTHON_MODULE_MISSING

    models = 300  # the real diagnosis for the first few only: the count is what is tested
    client = IndexClient(fleet_index(models))
    clock = iter(range(0, 10**6, 15)).__next__
    exporter = Exporter(
        ExporterSettings(triton_url="http://stub:8000", interval=15, window=60), client, clock, diagnose
    )
    for _ in range(3):
        assert exporter.poll_once() is not None
    assert len(asked) == models and set(asked.values()) == {1}
    states = [s for s in exporter.derivation.states if s.state == c.STATE_UNAVAILABLE]
    assert len(states) == models
    assert {s.runbook for s in states} == {c.RUNBOOK_PYTHON_MODULE_MISSING}

    # a model that recovers is forgotten; a new failure is diagnosed once; the rest are not asked again
    client.index = fleet_index(models - 1, first=1) + fleet_index(1, first=models)
    asked.clear()
    exporter.poll_once()
    assert list(asked) == [client.index[-2]["reason"]]


def test_reason_memo_forgets_what_the_last_poll_did_not_show() -> None:
    calls: list[str] = []
    memo = ReasonMemo(lambda r: calls.append(r) or r.upper())
    memo.next_poll()
    assert [memo("a"), memo("b"), memo("a")] == ["A", "B", "A"]
    memo.next_poll()
    assert memo("b") == "B"
    memo.next_poll()  # "a" was not asked in the last poll: gone
    memo.next_poll()
    assert memo("a") == "A" and memo("b") == "B"
    assert calls == ["a", "b", "a", "b"]
