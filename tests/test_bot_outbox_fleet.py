"""The outbox under an alert storm (fleet34): `next_due` reads the pending groups as it goes instead of every
pending row at each call (a storm's drain was quadratic: each delivery grouped every notification still
waiting). The same notification is picked, the same older ones superseded and the same earliest time given
as by the grouping of every pending row, across pages of pending rows and with retries scheduled ahead."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from triton_sre.bot import outbox as ob
from triton_sre.bot.outbox import Outbox


class EveryRow(Outbox):
    """The grouping `next_due` did before: every pending row read, grouped, then the groups visited."""

    def _pending_groups(self) -> Iterator[list[int]]:
        groups: dict[str, list[int]] = {}
        for nid, group_key in self._db.execute(
            "SELECT id, group_key FROM notifications WHERE state = ? ORDER BY id", (ob.STATE_PENDING,)
        ).fetchall():
            if nid not in self._finished:
                groups.setdefault(group_key, []).append(nid)
        yield from list(groups.values())


def rows(box: Outbox) -> list[tuple[Any, ...]]:
    return [
        (n["id"], n["group_key"], n["state"], n["attempts"], n["last_error"]) for n in box.notifications()
    ]


@pytest.mark.parametrize(("seed", "page"), [(1, 256), (2, 3), (3, 7)])
def test_next_due_picks_as_the_grouping_of_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, page: int
) -> None:
    monkeypatch.setattr(ob, "_PAGE", page)  # groups spread over many pages of pending rows
    rng = random.Random(seed)
    boxes = [Outbox(tmp_path / "lazy.sqlite3"), EveryRow(tmp_path / "eager.sqlite3")]
    for box in boxes:
        box._db.execute("PRAGMA synchronous=OFF")  # the same answers; the test needs no fsync
    groups = [f'{{}}:{{alertname="A{g}"}}' for g in range(120)]
    now = 1_000.0
    picked: list[list[Any]] = [[], []]
    for _ in range(900):
        step = rng.random()
        if step < 0.55:  # a notification of a group, often one that is still pending (superseded later)
            group, payload = rng.choice(groups), {"n": rng.random()}
            for box in boxes:
                box.enqueue(group, payload, now=now)
        else:
            at = now + rng.choice([0.0, 5.0, 50.0])
            for box, seen in zip(boxes, picked, strict=True):
                due, earliest = box.next_due(now=at, horizon=3600.0)
                seen.append(
                    (
                        None if due is None else (due.id, due.group_key, due.attempts, due.next_attempt),
                        earliest,
                    )
                )
                if due is None:
                    continue
                outcome = (due.id * 7919 + seed) % 10  # the same in both boxes when they picked the same
                if outcome < 6:
                    box.mark_done(due.id)
                elif outcome < 9:
                    box.retry_later(due.id, at + 30.0, "slack 503")
                else:
                    box.mark_failed(due.id, "channel_not_found")
            now += 1.0
    assert picked[0] == picked[1]
    assert rows(boxes[0]) == rows(boxes[1])
    states = {r[2] for r in rows(boxes[0])}
    assert {ob.STATE_DONE, ob.STATE_SUPERSEDED, ob.STATE_PENDING, ob.STATE_FAILED} <= states


def test_a_group_spread_over_pages_is_one_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ob, "_PAGE", 4)
    box = Outbox(tmp_path / "o.sqlite3")
    ids = [box.enqueue(f"g{i % 3}" if i < 9 else "late", {"i": i}, now=0.0) for i in range(12)]
    ids.append(box.enqueue("g0", {"i": 12}, now=0.0))  # g0's latest, three pages after its first
    box.retry_later(ids[-1], 500.0, "busy")  # g0 not due: g1 is picked, g0's older ones superseded
    due, _ = box.next_due(now=10.0, horizon=3600.0)
    assert due is not None and due.group_key == "g1" and due.payload == {"i": 7}
    states = {n["id"]: n["state"] for n in box.notifications()}
    assert [states[i] for i in ids[0:9:3]] == [ob.STATE_SUPERSEDED] * 3  # g0's 0, 3, 6
    assert states[ids[-1]] == ob.STATE_PENDING
    box.mark_done(due.id)
    due, _ = box.next_due(now=10.0, horizon=3600.0)
    assert due is not None and due.group_key == "g2"
    box.mark_done(due.id)
    due, _ = box.next_due(now=10.0, horizon=3600.0)
    assert due is not None and due.group_key == "late" and due.payload == {"i": 11}  # 9, 10 superseded
    box.mark_done(due.id)
    assert box.next_due(now=10.0, horizon=3600.0) == (None, 500.0)
