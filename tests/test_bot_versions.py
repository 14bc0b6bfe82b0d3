"""The SLO page names the failing version with its error ratio and Triton's failure reasons, the healthy
versions, and a version that became READY just before its first failure (journey25: ranker v2 loaded
by model control, KeyError on every request; the page said none of it). A real Prometheus scrapes two
clusters' crafted series: east's v2 loads, then fails; west's v2 serves well all along."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from live_prometheus import Prom, serve_text, start_prometheus, stop_prometheus, wait_ready

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.bot.config import BotSettings
from triton_sre.bot.enrich import SLO_ALERTS, Facts, Links, enrich
from triton_sre.bot.outbox import Outbox
from triton_sre.bot.payload import parse_group
from triton_sre.bot.slack import Renderer, SlackDelivery
from triton_sre.bot.versions import VersionFigures, version_facts, version_lines
from triton_sre.bot.worker import Worker
from triton_sre.prom import Prometheus
from triton_sre.slo import default_spec
from triton_sre.stack.processes import free_port

MODEL, EAST, WEST, WINDOW = "ranker", "east", "west", "1m"
# east's v2: READY, then failing every request. 4 s apart, not 2: an alert fired half-way read "no v2 yet"
# once on a loaded machine, its READY scrape late
LOAD_AFTER_S, FAIL_AFTER_S = 6.0, 10.0
OLD_TRITON = "old"  # a cluster whose Triton (before 24.07) has no reason label
STARTED: dict[str, float] = {}  # cluster -> its first scrape (Unix time)


def _state_lines(labels: list[tuple[str, str]], ready: bool) -> list[str]:
    lines = []
    for state in c.MODEL_STATES:
        on = state == (c.STATE_READY if ready else c.STATE_UNAVAILABLE)
        lines.append(f"{pq.selector(c.M_MODEL_STATE, pq.equal([*labels, (c.L_STATE, state)]))} {int(on)}")
    return lines


def _exposition(cluster: str, started: dict[str, float]) -> str:
    # the clock starts at the cluster's first scrape: Prometheus then holds the time before the load
    elapsed = time.time() - started.setdefault(cluster, time.time())
    lines = []
    for version in ("1", "2"):
        labels = [(c.LABEL_MODEL, MODEL), (c.LABEL_VERSION, version)]
        late = cluster != WEST and version == "2"  # loaded after start, then failing
        lines += _state_lines(labels, not late or elapsed >= LOAD_AFTER_S)
        failing = max(0.0, elapsed - FAIL_AFTER_S) * 5 if late else 0.0
        ok = 0.0 if late else elapsed * 10
        lines.append(f"{pq.selector(c.NV_REQUEST_SUCCESS, pq.equal(labels))} {ok:.1f}")
        if cluster == OLD_TRITON:
            lines.append(f"{pq.selector(c.NV_REQUEST_FAILURE, pq.equal(labels))} {failing:.1f}")
            continue
        for reason in c.FAILURE_REASONS:
            n = failing if reason == c.FAILURE_REASON_BACKEND else 0.0
            lines.append(
                f"{pq.selector(c.NV_REQUEST_FAILURE, pq.equal([*labels, (c.LABEL_REASON, reason)]))} {n}"
            )
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prom]:
    with versions_store(tmp_path_factory.mktemp("versions-store"), STARTED) as prom:
        yield prom


@contextmanager
def versions_store(work: Path, started: dict[str, float]) -> Iterator[Prom]:
    """A real Prometheus scraping the clusters' series, their clocks in `started` (one dict per store: a
    second store on the first's dict would begin with east's v2 loaded already)."""
    servers = {
        name: serve_text(lambda name=name: _exposition(name, started)) for name in (EAST, WEST, OLD_TRITON)
    }
    targets = [
        {"targets": [f"127.0.0.1:{s.server_address[1]}"], "labels": {c.LABEL_CLUSTER: name}}
        for name, s in servers.items()
    ]
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "900ms"},
        "scrape_configs": [{"job_name": c.DEFAULT_TRITON_JOB, "static_configs": targets}],
    }
    port = free_port()
    running = start_prometheus(work, config, port)
    try:
        prom = wait_ready(running[0], work, port)
        failed = f"{c.NV_REQUEST_FAILURE}{{{c.LABEL_CLUSTER}={pq.q(EAST)}}} > 0"
        deadline = time.monotonic() + 60
        # east's v2 has failed for a few scrapes
        while len(prom.query(f"count_over_time(({failed})[1m:1s]) >= 5")) < 1:
            assert time.monotonic() < deadline, (work / "prometheus.log").read_text()
            time.sleep(1)
        yield prom
    finally:
        stop_prometheus(*running)
        for s in servers.values():
            s.shutdown()
            s.server_close()


def rfc3339(when: float) -> str:
    return datetime.fromtimestamp(when, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def slo_alert(cluster: str, starts: float | None = None, window: str = WINDOW) -> dict[str, Any]:
    slo = default_spec().slos[0].name
    return {
        "status": "firing",
        "labels": {
            "alertname": c.ALERT_SLO_ERROR_BUDGET_BURN,
            c.LABEL_MODEL: MODEL,
            c.L_SLO: slo,
            c.L_WINDOW: window,
            c.LABEL_CLUSTER: cluster,
        },
        "annotations": {"summary": "burning"},
        "fingerprint": f"fp-{cluster}",
        "startsAt": rfc3339(time.time() if starts is None else starts),
    }


def slo_group(cluster: str, starts: float | None = None, window: str = WINDOW) -> Any:
    """A webhook's group of one SLO burn alert of `MODEL` in `cluster`, fingerprint `fp-<cluster>`."""
    return parse_group(
        {
            "version": "4",
            "groupKey": f"{{}}:{cluster}",
            "status": "firing",
            "receiver": "bot",
            "groupLabels": {},
            "commonLabels": {},
            "commonAnnotations": {},
            "externalURL": "http://am:9093",
            "alerts": [slo_alert(cluster, starts, window)],
        }
    )


def _lines(store: Prom, cluster: str) -> list[str]:
    group = slo_group(cluster)
    found = version_facts(Prometheus(store.url), group.alerts, SLO_ALERTS, c.LABEL_CLUSTER)
    return found.get(f"fp-{cluster}", [])


def facts_worker(prometheus_url: str, tmp_path: Path) -> Worker:
    """A worker that only reads facts from `prometheus_url` (no Slack call is made)."""
    return Worker(
        BotSettings(channel="#c", prometheus_url=prometheus_url, chart=False),
        Outbox(tmp_path / "o.sqlite3"),
        SlackDelivery("xoxb-unused"),
        {},
    )


def test_the_page_names_the_failing_version_its_reason_and_its_load_before_the_first_failure(
    store: Prom,
) -> None:
    assert_east_lines(_lines(store, EAST))


def assert_east_lines(lines: list[str]) -> None:
    """east's version lines: v2 failing with BACKEND, READY about 4 s (a scrape either way) before its
    first failure."""
    assert len(lines) == 2, lines
    assert re.fullmatch(
        rf"{MODEL} over {WINDOW}: v2 100\.0% failed \([\d,]+ of [\d,]+\), "
        rf"{c.FAILURE_REASON_BACKEND} 100% · healthy: v1",
        lines[0],
    ), lines[0]
    loaded = re.fullmatch(rf"{MODEL} v2 became READY (\d+) s before its first failure", lines[1])
    gap = FAIL_AFTER_S - LOAD_AFTER_S
    assert loaded and gap - 1 <= int(loaded[1]) <= gap + 1, lines[1]


def test_each_cluster_is_read_on_its_own(store: Prom) -> None:
    # west's v2 served well all along: nothing failed, nothing loaded within the window
    assert _lines(store, WEST) == []


def test_a_triton_without_the_reason_label_gets_no_reason(store: Prom) -> None:
    lines = _lines(store, OLD_TRITON)
    assert lines and re.fullmatch(
        rf"{MODEL} over {WINDOW}: v2 100\.0% failed \([\d,]+ of [\d,]+\) · healthy: v1", lines[0]
    )
    assert "unknown" not in " ".join(lines).lower()


def test_the_workers_page_carries_them(store: Prom, tmp_path: Path) -> None:
    worker = facts_worker(store.url, tmp_path)
    group = slo_group(EAST)
    model = enrich(group, worker.facts(group), worker.links, c.LABEL_CLUSTER).context()
    blocks = json.dumps(worker.renderer.blocks(model))
    assert f", when it fired:* {MODEL} over {WINDOW}: v2 100.0% failed" in blocks
    assert f", when it fired:* {MODEL} v2 became READY" in blocks


def test_the_lines_are_the_state_when_the_alert_fired_not_when_the_bot_posts(
    store: Prom, tmp_path: Path
) -> None:
    """A delivery delayed past the alert's start (outbox retries, group_wait) showed what Prometheus
    held at posting time. Fired between east's v2 load and its first failure, the page shows the load
    and no failure yet, and says which time the lines are for."""
    fired = STARTED[EAST] + (LOAD_AFTER_S + FAIL_AFTER_S) / 2 + 0.5
    assert time.time() - fired > 5  # Prometheus holds failures of v2 since: "now" would name them
    group = slo_group(EAST, fired)
    assert _lines(store, EAST)[0].startswith(f"{MODEL} over {WINDOW}: v2 100.0% failed")
    lines = version_facts(Prometheus(store.url), group.alerts, SLO_ALERTS, c.LABEL_CLUSTER)[f"fp-{EAST}"]
    assert lines == [f"{MODEL} v2 became READY within the window"], lines
    worker = facts_worker(store.url, tmp_path)
    model = enrich(group, worker.facts(group), worker.links, c.LABEL_CLUSTER).context()
    blocks = json.dumps(worker.renderer.blocks(model))
    at = datetime.fromtimestamp(fired, timezone.utc).strftime("%H:%M:%S UTC")
    assert f"*Versions at {at}, when it fired:* {MODEL} v2 became READY within the window" in blocks


def test_the_slack_message_carries_the_version_lines(tmp_path: Path) -> None:
    group = slo_group(EAST)
    facts = Facts(versions={f"fp-{EAST}": ["ranker over 1h: v2 100.0% failed (6,826 of 6,826)"]})
    model = enrich(group, facts, Links(), c.LABEL_CLUSTER).context()
    blocks = json.dumps(Renderer(None).blocks(model))
    assert "*Versions:* ranker over 1h: v2 100.0% failed (6,826 of 6,826)" in blocks


def test_the_lines_put_the_worst_version_first_and_skip_a_version_ready_all_window() -> None:
    figures = {
        "1": VersionFigures(succeeded=90, failed={"": 10}, ready_since=100.0),
        "2": VersionFigures(succeeded=0, failed={"": 50}, ready_since=100.0, first_failure=130.0),
        "3": VersionFigures(succeeded=40, ready_since=160.0, first_failure=None),
    }
    lines = version_lines(MODEL, "1h", figures, states_since=100.0, res=1)
    assert lines == [
        f"{MODEL} over 1h: v2 100.0% failed (50 of 50) · v1 10.0% failed (10 of 100) · healthy: v3",
        f"{MODEL} v3 became READY within the window",
    ]
