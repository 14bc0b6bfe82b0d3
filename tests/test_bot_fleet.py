"""The bot on a fleet-sized Alertmanager group: hundreds of alerts in one notification.

The message shows MAX_ALERTS_SHOWN of them; the facts (Prometheus figures) were asked for every alert of
the group, so a group of 400 SLO alerts made ~2,000 queries under one 10 s budget, and the shown alerts
lost their figures once the budget ran out on alerts no one would see."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from triton_sre import conventions as c
from triton_sre.bot.config import BotSettings
from triton_sre.bot.enrich import MAX_ALERTS_SHOWN, shown_alerts
from triton_sre.bot.outbox import Outbox
from triton_sre.bot.payload import parse_group
from triton_sre.bot.slack import SlackDelivery
from triton_sre.bot.slack_limits import MAX_BLOCKS, validate_blocks
from triton_sre.bot.worker import Worker


class CountingPrometheus:
    """Answers every query with one sample and counts the queries (the worker's only Prometheus calls)."""

    def __init__(self) -> None:
        self.queries: list[str] = []

    @contextlib.contextmanager
    def budgeted(self, seconds: float) -> Iterator[CountingPrometheus]:
        yield self

    @contextlib.contextmanager
    def heeding(self) -> Iterator[list[tuple[str, str]]]:
        yield []  # (no answer of this double carries Prometheus' warnings)

    def instant(self, expr: str, at: float | None = None) -> float:
        self.queries.append(expr)
        return 0.5

    def vector(self, expr: str, at: float | None = None) -> list[tuple[dict[str, str], float]]:
        self.queries.append(expr)
        return [({c.LABEL_MODEL: "m"}, 1.0)]


def fleet_payload(alerts: int, resolved_every: int = 0, description: str = "") -> dict[str, Any]:
    """An Alertmanager webhook body of `alerts` latency-SLO burn alerts (each also a scaling alert),
    one model each; every `resolved_every`-th resolved."""
    raw = []
    for i in range(alerts):
        labels = {
            "alertname": c.ALERT_SLO_LATENCY_BUDGET_BURN,
            c.L_SLO: "latency",
            c.L_WINDOW: "1h",
            c.LABEL_MODEL: f"model-{i:05d}",
            c.L_SEVERITY: c.SEVERITY_PAGE,
        }
        resolved = resolved_every and i % resolved_every == 0
        summary = f"model-{i:05d} burns its latency budget " + "x" * 200
        raw.append(
            {
                "status": c.AM_STATUS_RESOLVED if resolved else c.AM_STATUS_FIRING,
                "labels": labels,
                "annotations": {"summary": summary, "description": description},
                "fingerprint": f"f{i:05d}",
                "startsAt": "2026-12-04T10:00:00Z",
            }
        )
    return {
        "version": "4",
        "groupKey": "{}:{alertname}",
        "status": c.AM_STATUS_FIRING,
        "receiver": "bot",
        "commonLabels": {"alertname": c.ALERT_SLO_LATENCY_BUDGET_BURN},
        "externalURL": "http://am:9093",
        "alerts": raw,
    }


def fleet_group(alerts: int, resolved_every: int = 0) -> Any:
    return parse_group(fleet_payload(alerts, resolved_every))


def _worker(tmp_path: Path) -> tuple[Worker, CountingPrometheus]:
    worker = Worker(
        BotSettings(channel="#c", prometheus_url="http://127.0.0.1:9"),
        Outbox(tmp_path / "o.sqlite3"),
        SlackDelivery("xoxb-unused"),
        {},
    )
    prom = CountingPrometheus()
    worker.prometheus = prom  # type: ignore[assignment]
    return worker, prom


def test_facts_are_asked_for_the_shown_alerts_only(tmp_path: Path) -> None:
    worker, prom = _worker(tmp_path)
    worker.facts(fleet_group(MAX_ALERTS_SHOWN))
    per_message = len(prom.queries)
    assert per_message > 0
    prom.queries.clear()
    big = fleet_group(400, resolved_every=3)
    facts = worker.facts(big)
    assert len(prom.queries) == per_message  # the same queries as for a group of 8, not 50 times them
    shown = {a.fingerprint for a in shown_alerts(big)}
    assert set(facts.burn_rates) == shown and set(facts.latency_now) == shown
    assert all(a.status == c.AM_STATUS_FIRING for a in shown_alerts(big))  # firing ones first


def test_a_fleet_group_message_stays_in_slacks_limits_and_counts_the_rest(tmp_path: Path) -> None:
    worker, _ = _worker(tmp_path)
    group = fleet_group(600)
    model = worker_message(worker, group)
    blocks = worker.renderer.blocks(model.context())
    assert len(blocks) <= MAX_BLOCKS and validate_blocks(blocks) is None
    assert model.hidden_alerts == 600 - MAX_ALERTS_SHOWN
    assert f"{600 - MAX_ALERTS_SHOWN} more alert(s)" in json.dumps(blocks)
    assert model.firing == 600
    assert all(view.burn_rate is not None for view in model.alerts)


def worker_message(worker: Worker, group: Any) -> Any:
    from triton_sre.bot.enrich import enrich

    return enrich(group, worker.facts(group), worker.links)
