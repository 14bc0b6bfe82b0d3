"""One notification's Prometheus queries, each asked once (bot/passmemo.py, branch botq34).

Before, the facts of an alert group asked every query once per shown alert: the scaling signal's
`deployment:triton_autoscale_desired_replicas:ceil` and `job:triton_serving_replicas:count` (no alert
label in them) eight times in a group of eight, a model's budget left and latency now once per window
of its burn alerts. The Prometheus here is a real one holding backfilled series
(tests/backfilled_prometheus.py) behind a proxy that counts each query it forwards (tests/faultproxy.py).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from backfilled_prometheus import Series, backfilled
from faultproxy import FaultProxy

from triton_sre import conventions as c
from triton_sre.bot import worker as worker_module
from triton_sre.bot.config import BotSettings
from triton_sre.bot.enrich import enrich
from triton_sre.bot.outbox import Outbox
from triton_sre.bot.passmemo import PassMemo
from triton_sre.bot.payload import parse_group
from triton_sre.bot.slack import SlackDelivery
from triton_sre.bot.worker import Worker
from triton_sre.prom import PromError, Prometheus

MODEL = "ranker"
SCRAPE_S = 15.0
HISTORY_S = 1200.0
WINDOWS = ("1h", "6h")  # one model's latency burn in two windows: one group, two alerts


def _held(name: str, labels: dict[str, str], value: float, stamps: list[float]) -> Series:
    return name, labels, [(t, value) for t in stamps]


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FaultProxy]:
    """A real Prometheus holding the recorded series a latency burn message reads, behind a proxy."""
    start = time.time() - HISTORY_S
    stamps = [start + SCRAPE_S * i for i in range(int(HISTORY_S / SCRAPE_S) + 1)]
    slo = {c.L_SLO: "latency", c.LABEL_MODEL: MODEL}
    series = [
        _held(c.REC_SLO_OBJECTIVE, {c.L_SLO: "latency"}, 0.99, stamps),
        _held(c.REC_SLO_BUDGET_REMAINING, slo, 0.42, stamps),
        _held(
            c.rec_latency_quantile(c.REC_LEVEL_MODEL, c.LATENCY_REQUEST),
            {c.LABEL_MODEL: MODEL, c.LABEL_VERSION: "1", c.LABEL_QUANTILE: "0.99"},
            0.35,
            stamps,
        ),
        _held(
            c.REC_AUTOSCALE_DESIRED, {c.L_DEPLOYMENT: "triton", c.LABEL_JOB: c.DEFAULT_TRITON_JOB}, 5, stamps
        ),
        _held(c.REC_SERVING_REPLICAS, {c.LABEL_JOB: c.DEFAULT_TRITON_JOB}, 2, stamps),
        *(_held(c.rec_slo_errors(w), slo, 0.2, stamps) for w in (*WINDOWS, "5m")),
    ]
    with backfilled(tmp_path_factory.mktemp("prom"), series) as prom, FaultProxy(prom.url) as forwarding:
        yield forwarding


def _group(now: float) -> Any:
    alerts = [
        {
            "status": c.AM_STATUS_FIRING,
            "labels": {
                "alertname": c.ALERT_SLO_LATENCY_BUDGET_BURN,
                c.L_SLO: "latency",
                c.L_WINDOW: window,
                c.LABEL_MODEL: MODEL,
                c.L_SEVERITY: c.SEVERITY_PAGE,
            },
            "annotations": {
                "summary": f"{MODEL} burns its latency budget over {window}",
                c.ANNOTATION_THRESHOLD_SECONDS: "0.25",
            },
            "fingerprint": f"f-{window}",
            "startsAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 300)),
        }
        for window in WINDOWS
    ]
    return parse_group(
        {
            "version": "4",
            "groupKey": "{}:{alertname}",
            "status": c.AM_STATUS_FIRING,
            "receiver": "bot",
            "commonLabels": {"alertname": c.ALERT_SLO_LATENCY_BUDGET_BURN, c.LABEL_MODEL: MODEL},
            "externalURL": "http://am:9093",
            "alerts": alerts,
        }
    )


def _asked(proxy: FaultProxy) -> Counter[tuple[str, str]]:
    """(query, time) -> times the proxy forwarded it."""
    found: Counter[tuple[str, str]] = Counter()
    for path, times in proxy.requests.items():
        params = parse_qs(urlsplit(path).query)
        if "query" in params:
            found[(params["query"][0], params.get("time", [""])[0])] += times
    return found


def _message(proxy: FaultProxy, tmp_path: Path, now: float) -> tuple[str, Counter[tuple[str, str]]]:
    """The group's rendered blocks (JSON, sorted keys) and the queries its facts asked."""
    worker = Worker(
        BotSettings(channel="#c", prometheus_url=proxy.url),
        Outbox(tmp_path / f"{len(list(tmp_path.iterdir()))}.sqlite3"),
        SlackDelivery("xoxb-unused"),
        {},
        clock=lambda: now,
    )
    proxy.requests.clear()
    group = _group(now)
    blocks = worker.renderer.blocks(enrich(group, worker.facts(group), worker.links).context())
    return json.dumps(blocks, sort_keys=True), _asked(proxy)


def test_a_query_two_alerts_share_is_asked_once_and_the_message_is_unchanged(
    proxy: FaultProxy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = time.time()
    memoized, asked = _message(proxy, tmp_path, now)
    assert asked, "the facts asked Prometheus nothing"
    twice = {query: n for query, n in asked.items() if n > 1}
    assert not twice, f"asked more than once in one notification: {twice}"
    for shared in (c.REC_AUTOSCALE_DESIRED, c.REC_SERVING_REPLICAS, c.REC_SLO_BUDGET_REMAINING):
        assert any(query.startswith(shared) for query, _ in asked), (shared, asked)
    # the figures came from Prometheus: budget, latency now and the replicas asked for
    figures = (
        "*Burn rate now:* 20.0x",
        "*Error budget left:* 42.0%",
        "350 ms (SLO on p99) vs threshold 250 ms",
        "5 replicas of triton (2 serving)",
    )
    assert all(memoized.count(figure) == len(WINDOWS) for figure in figures), memoized

    monkeypatch.setattr(worker_module, "PassMemo", lambda prometheus: prometheus)  # every query per alert
    unmemoized, each = _message(proxy, tmp_path, now)
    assert memoized == unmemoized  # byte for byte
    assert sum(each.values()) > sum(asked.values()) and set(each) == set(asked)
    assert each[(c.REC_AUTOSCALE_DESIRED, "")] == len(WINDOWS)


def test_a_failed_query_fails_again_from_the_memo_and_answers_are_copies(proxy: FaultProxy) -> None:
    memo = PassMemo(Prometheus(proxy.url))
    proxy.requests.clear()
    first = memo.vector(c.REC_AUTOSCALE_DESIRED)
    first[0][0][c.L_DEPLOYMENT] = "changed by a reader"
    assert memo.vector(c.REC_AUTOSCALE_DESIRED)[0][0][c.L_DEPLOYMENT] == "triton"
    assert memo.instant(c.REC_SERVING_REPLICAS) == 2.0 and memo.instant(c.REC_SERVING_REPLICAS) == 2.0
    at = time.time() - 60
    assert memo.instant(c.REC_SERVING_REPLICAS, at) == 2.0  # another evaluation time: asked
    bad = "sum(" + c.REC_SERVING_REPLICAS  # Prometheus answers 400: a parse error
    for _ in range(2):
        with pytest.raises(PromError, match="parse error"):
            memo.instant(bad)
    asked = _asked(proxy)
    assert asked[(c.REC_AUTOSCALE_DESIRED, "")] == 1 and asked[(c.REC_SERVING_REPLICAS, "")] == 1
    assert asked[(c.REC_SERVING_REPLICAS, f"{at:.3f}")] == 1 and asked[(bad, "")] == 1
