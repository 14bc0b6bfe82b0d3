"""The gameday's Timeline over many faults: each poll's work grows with that poll's answers, not
with everything seen since the start, and the result is the one the full re-reading gave."""

from __future__ import annotations

import json
import random
import types
from typing import Any

import pytest

from triton_sre import conventions as c
from triton_sre.gameday import observer
from triton_sre.gameday.observer import Intervals, SeenAlert, Timeline, post_from_call


def _call(i: int, model: str, at: float) -> dict[str, Any]:
    return {
        "at": at,
        "method": "chat.postMessage",
        "params": {"text": f"FIRING [page] A{i}", "blocks": f"*Alert:* A{i} *Model:* {model}"},
        "response": {"ok": True, "ts": f"{i}.0"},
    }


class _Reference:
    """The Timeline as it was: every alert ever seen walked at each poll, the whole record at each read."""

    def __init__(self) -> None:
        self.table: dict[SeenAlert, Intervals] = {}
        self.keys: set[str] = set()
        self.posts: list[Any] = []

    def update(self, seen: list[SeenAlert], now: float) -> None:
        keys = set()
        for a in seen:
            keys.add(a)
            self.table.setdefault(a, Intervals()).seen(now)
        for key, spans in self.table.items():
            if key not in keys:
                spans.gone(now)

    def add_calls(self, calls: list[dict[str, Any]]) -> None:
        for call in calls:
            key = json.dumps(call, sort_keys=True, default=str)
            if key not in self.keys:
                self.keys.add(key)
                post = post_from_call(call)
                if post is not None:
                    self.posts.append(post)
        self.posts.sort(key=lambda p: p.at)


@pytest.mark.parametrize("seed", range(5))
def test_the_timeline_is_the_one_a_full_reread_gives(seed: int) -> None:
    rng = random.Random(seed)
    alerts = [SeenAlert("A", ((c.LABEL_MODEL, f"m{i}"),)) for i in range(30)]
    timeline, reference = Timeline(), _Reference()
    record: list[dict[str, Any]] = []
    for poll in range(300):
        now = float(poll)
        seen = rng.sample(alerts, rng.randrange(0, 8))
        timeline.update_prometheus(seen, now)
        reference.update(seen, now)
        roll = rng.random()
        if roll < 0.3:
            record.append(_call(poll, f"m{poll % 7}", now - rng.random()))  # out of order at times
        elif roll < 0.33:
            record = []  # the stand-in restarted: its record starts empty
        elif roll < 0.36 and record:
            record.append(dict(record[-1]))  # a call recorded twice: one post
        answer = json.loads(json.dumps(record))  # a fresh decoding each read, as from HTTP
        timeline.add_calls(answer)
        reference.add_calls(answer)
    assert {k: v.spans for k, v in timeline.prometheus.items()} == {
        k: v.spans for k, v in reference.table.items()
    }
    assert timeline.posts == reference.posts
    assert len(timeline.posts) > 20


def test_each_poll_reads_only_what_is_new(monkeypatch: pytest.MonkeyPatch) -> None:
    """2,000 polls, each seeing one alert of its own and a record one call longer: every call is
    serialised once and every alert ended once (were 2 million of each)."""
    dumps = {"n": 0}

    def counted_dumps(value: Any, **kwargs: Any) -> str:
        dumps["n"] += 1
        return json.dumps(value, **kwargs)

    ended = {"n": 0}
    gone = Intervals.gone

    def counted_gone(self: Intervals, now: float) -> None:
        ended["n"] += 1
        gone(self, now)

    monkeypatch.setattr(observer, "json", types.SimpleNamespace(dumps=counted_dumps))
    monkeypatch.setattr(Intervals, "gone", counted_gone)
    timeline = Timeline()
    record: list[dict[str, Any]] = []
    polls = 2000
    for poll in range(polls):
        timeline.update_alertmanager([SeenAlert("A", ((c.LABEL_MODEL, f"m{poll}"),))], float(poll))
        record.append(_call(poll, f"m{poll}", float(poll)))
        timeline.add_calls(list(record))
    assert len(timeline.posts) == polls
    assert dumps["n"] == polls
    assert ended["n"] == polls - 1
    assert sum(spans.active for spans in timeline.alertmanager.values()) == 1
