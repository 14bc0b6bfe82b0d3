"""The gameday's Timeline over many faults: each poll's work grows with that poll's answers, not
with everything seen since the start, and the result is the one the full re-reading gave."""

from __future__ import annotations

import json
import random
import types
from typing import Any

import pytest
import requests

from triton_sre import conventions as c
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.gameday import observer
from triton_sre.gameday.observer import Intervals, SeenAlert, StandinRecord, Timeline, post_from_call


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


def _post(standin: SlackStandin, i: int) -> None:
    section = {"type": "section", "text": {"type": "mrkdwn", "text": f"*Alert:* A{i}\n*Model:* m{i}"}}
    params = {"channel": "C1", "text": f"FIRING [page] A{i}", "blocks": [section]}
    status, body, _ = standin.handle("chat.postMessage", params, f"Bearer {standin.token}")
    assert status == 200 and body["ok"], body


def test_each_poll_reads_only_what_is_new(monkeypatch: pytest.MonkeyPatch) -> None:
    """500 polls of a real stand-in, each with one call more in its record: every call crosses HTTP
    once and is serialised once, and every alert is ended once (were 125,000 calls sent and
    serialised; every alert ever seen walked at each poll)."""
    dumps = {"n": 0}

    def counted_dumps(value: Any, **kwargs: Any) -> str:
        dumps["n"] += bool(kwargs.get("sort_keys"))  # a call's key, not a post's blocks as text
        return json.dumps(value, **kwargs)

    ended = {"n": 0}
    gone = Intervals.gone

    def counted_gone(self: Intervals, now: float) -> None:
        ended["n"] += 1
        gone(self, now)

    monkeypatch.setattr(observer, "json", types.SimpleNamespace(dumps=counted_dumps))
    monkeypatch.setattr(Intervals, "gone", counted_gone)
    timeline = Timeline()
    polls, sent = 500, 0
    with SlackStandin() as standin, requests.Session() as session:
        record = StandinRecord(standin.url.removesuffix("/api/"), session)
        for poll in range(polls):
            timeline.update_alertmanager([SeenAlert("A", ((c.LABEL_MODEL, f"m{poll}"),))], float(poll))
            _post(standin, poll)
            calls = record.new_calls()
            sent += len(calls)
            timeline.add_calls(calls)
    assert sent == polls
    assert len(timeline.posts) == polls
    assert dumps["n"] == polls
    assert ended["n"] == polls - 1
    assert sum(spans.active for spans in timeline.alertmanager.values()) == 1


def test_a_record_started_again_is_read_from_its_start() -> None:
    """A reset or a restarted stand-in starts an empty record under a new id: its calls are read
    from the first, none skipped because the old record was longer."""
    with SlackStandin() as standin, requests.Session() as session:
        base = standin.url.removesuffix("/api/")
        record = StandinRecord(base, session)
        for i in range(5):
            _post(standin, i)
        assert len(record.new_calls()) == 5
        assert record.new_calls() == []
        standin.reset()
        _post(standin, 100)
        again = record.new_calls()
        assert [call["params"]["text"] for call in again] == ["FIRING [page] A100"]
        port = standin.port
    with SlackStandin(port=port) as restarted:  # a new process on the same port: a new record
        _post(restarted, 200)
        _post(restarted, 201)
        with requests.Session() as session:
            record.session = session
            texts = [call["params"]["text"] for call in record.new_calls()]
    assert texts == ["FIRING [page] A200", "FIRING [page] A201"]


@pytest.mark.parametrize("since", ["-1", "x", "1.5", "9" * 40])
def test_since_must_be_a_count(since: str) -> None:
    with SlackStandin() as standin:
        answer = requests.get(
            f"{standin.url.removesuffix('/api/')}/_standin/calls", params={"since": since}, timeout=5
        )
    assert answer.status_code == 400
    assert "since" in answer.json()["error"]
