"""The bot's per-cluster answers on VictoriaMetrics: `/triton rollout <model> [cluster]` and the SLO
page's versions line, on a real VictoriaMetrics that vmagent remote-writes two clusters' series to
(the stand-ins of tests/test_fleet_rollouts.py and tests/test_bot_versions.py, scraped every 1 s,
each target labelled with its cluster). The same answers as on Prometheus are expected.
(`/triton status` reads the outbox and Alertmanager only, no store.)
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import test_bot_versions as versions
import test_fleet_rollouts as rollouts
from live_prometheus import serve_text
from test_bot_delivery import TOKEN
from victoria import Victoria, victoria_metrics, vmagent

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.bot.config import BotSettings
from triton_sre.bot.enrich import SLO_ALERTS, enrich
from triton_sre.bot.outbox import Outbox
from triton_sre.bot.receiver import BotServer
from triton_sre.bot.versions import version_facts
from triton_sre.prom import Prometheus
from triton_sre.rollout.instant import default_step, sample_spacing

MODEL, EAST, WEST = rollouts.MODEL, rollouts.EAST, rollouts.WEST


def _scraped_store(
    work: Path, clusters: tuple[str, ...], body: Callable[[str], str], ready: str, least: int
) -> Iterator[Victoria]:
    """A VictoriaMetrics that vmagent writes each cluster's stand-in to, once `ready` has `least` rows."""
    servers = {name: serve_text(lambda name=name: body(name)) for name in clusters}
    targets = [
        {"targets": [f"127.0.0.1:{s.server_address[1]}"], "labels": {c.LABEL_CLUSTER: name}}
        for name, s in servers.items()
    ]
    scrape = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "900ms"},
        "scrape_configs": [{"job_name": c.DEFAULT_TRITON_JOB, "static_configs": targets}],
    }
    try:
        with victoria_metrics(work / "vm") as vm, vmagent(work / "agent", scrape, f"{vm.url}/api/v1/write"):
            deadline = time.monotonic() + 90
            while len(vm.query(ready, time.time())) < least:
                assert time.monotonic() < deadline, ready
                time.sleep(1)
            yield vm
    finally:
        for s in servers.values():
            s.shutdown()
            s.server_close()


@pytest.fixture(scope="module")
def rollout_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Victoria]:
    started = time.time()
    success = pq.selector(c.NV_REQUEST_SUCCESS, [(c.LABEL_JOB, "=", c.DEFAULT_TRITON_JOB)])
    full = f"count_over_time({success}[{rollouts.WINDOW_S}s]) >= {rollouts.WINDOW_S - 2}"
    yield from _scraped_store(
        tmp_path_factory.mktemp("vm-rollouts"),
        (EAST, WEST),
        lambda name: rollouts._exposition(name, started),
        full,
        len(rollouts.PODS),
    )


@pytest.fixture(scope="module")
def versions_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Victoria]:
    started: dict[str, float] = {}
    failed = f"{c.NV_REQUEST_FAILURE}{{{c.LABEL_CLUSTER}={pq.q(EAST)}}} > 0"
    yield from _scraped_store(
        tmp_path_factory.mktemp("vm-versions"),
        (EAST, WEST, versions.OLD_TRITON),
        lambda name: versions._exposition(name, started),
        f"count_over_time(({failed})[1m:1s]) >= 5",
        1,
    )


def test_the_rollout_answer_judges_each_cluster_on_its_own_on_victoria_metrics(
    rollout_store: Victoria,
) -> None:
    rollouts.assert_judged_per_cluster(rollout_store.url)
    # no configuration to read: the default step comes from the samples' own spacing, 1 s -> 3 s
    prom = Prometheus(rollout_store.url)
    assert prom.scrape_interval(c.DEFAULT_TRITON_JOB) is None
    matchers = [(c.LABEL_JOB, "=", c.DEFAULT_TRITON_JOB), (c.LABEL_MODEL, "=", MODEL)]
    assert sample_spacing(prom, matchers) == pytest.approx(1.0, abs=0.05)
    assert default_step(prom, c.DEFAULT_TRITON_JOB, rollouts.WINDOW_S, matchers) == pytest.approx(
        3.0, abs=0.15
    )


def test_the_slash_command_takes_a_cluster_on_victoria_metrics(
    rollout_store: Victoria, tmp_path: Path
) -> None:
    settings = BotSettings(
        channel="#c", listen="127.0.0.1:0", prometheus_url=rollout_store.url, spec=rollouts.fleet_spec()
    )
    server = BotServer(settings, Outbox(tmp_path / "outbox.sqlite3"), TOKEN).start()
    try:
        east, west = (server.command(f"rollout {MODEL} {name}") for name in (EAST, WEST))
    finally:
        server.stop()
    assert east.startswith(f"{MODEL} v2 in {EAST} vs {MODEL} v1 in {EAST}: {c.ROLLOUT_PASS.upper()}"), east
    assert WEST not in east
    assert west.startswith(f"{MODEL}: fewer than two versions served requests in {c.LABEL_CLUSTER} {WEST} ")


def _version_lines(store: Victoria, cluster: str) -> list[str]:
    group = versions.slo_group(cluster)
    found = version_facts(Prometheus(store.url), group.alerts, SLO_ALERTS, c.LABEL_CLUSTER)
    return found.get(f"fp-{cluster}", [])


def test_the_versions_line_on_victoria_metrics(versions_store: Victoria) -> None:
    versions.assert_east_lines(_version_lines(versions_store, EAST))
    assert _version_lines(versions_store, WEST) == []
    old = _version_lines(versions_store, versions.OLD_TRITON)
    assert old and re.fullmatch(
        rf"{MODEL} over {versions.WINDOW}: v2 100\.0% failed \([\d,]+ of [\d,]+\) · healthy: v1", old[0]
    ), old


def test_the_workers_slo_page_on_victoria_metrics(versions_store: Victoria, tmp_path: Path) -> None:
    worker = versions.facts_worker(versions_store.url, tmp_path)
    group = versions.slo_group(EAST)
    model = enrich(group, worker.facts(group), worker.links, c.LABEL_CLUSTER).context()
    blocks = json.dumps(worker.renderer.blocks(model))
    assert f", when it fired:* {MODEL} over {versions.WINDOW}: v2 100.0% failed" in blocks
    assert f", when it fired:* {MODEL} v2 became READY" in blocks
