"""After the fix, the 6h tier's page kept its paging text for half an hour (journey25: its 30m window
averages the outage; 5m burn 0, the alert's value 169x): the page now says when the 5m window went
clean under the tier's threshold. A real Prometheus scrapes two clusters' recorded SLO ratios: east's
5m burn falls to 0 a few seconds in (the fix), west's keeps burning."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from live_prometheus import Prom, serve_text, start_prometheus, stop_prometheus, wait_ready
from test_bot_versions import MODEL, facts_worker, slo_group

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.bot.enrich import SLO_ALERTS, enrich
from triton_sre.bot.recovery import CLEAN_WINDOW, recovery_facts, tier_threshold
from triton_sre.prom import Prometheus
from triton_sre.slo import default_spec
from triton_sre.stack.processes import free_port

EAST, WEST = "east", "west"
LONG, SHORT = c.BURN_TIERS[1][0], c.BURN_TIERS[1][1]  # the 6h tier and its 30m window
FIX_AFTER_S = 5.0
SLO = default_spec().slos[0]
STARTED: dict[str, float] = {}


def _exposition(cluster: str) -> str:
    elapsed = time.time() - STARTED.setdefault(cluster, time.time())
    burning = cluster == WEST or elapsed < FIX_AFTER_S
    ratio = 50 * (1 - SLO.objective) if burning else 0.0  # 50x, the outage; 0 after the fix
    labels = pq.equal([(c.L_SLO, SLO.name), (c.LABEL_MODEL, MODEL)])
    lines = [f"{pq.selector(c.rec_slo_errors(CLEAN_WINDOW), labels)} {ratio}"]
    lines.append(f"{pq.selector(c.rec_slo_errors(SHORT), labels)} {50 * (1 - SLO.objective)}")
    return "\n".join(lines) + "\n"


def _objective() -> str:
    return f"{pq.selector(c.REC_SLO_OBJECTIVE, pq.equal([(c.L_SLO, SLO.name)]))} {SLO.objective}\n"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prom]:
    work = tmp_path_factory.mktemp("recovery-store")
    servers = {name: serve_text(lambda name=name: _exposition(name)) for name in (EAST, WEST)}
    objective = serve_text(_objective)
    targets: list[dict[str, Any]] = [
        {"targets": [f"127.0.0.1:{s.server_address[1]}"], "labels": {c.LABEL_CLUSTER: name}}
        for name, s in servers.items()
    ]
    targets.append({"targets": [f"127.0.0.1:{objective.server_address[1]}"]})
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "900ms"},
        "scrape_configs": [{"job_name": "recorded", "static_configs": targets}],
    }
    port = free_port()
    running = start_prometheus(work, config, port)
    try:
        prom = wait_ready(running[0], work, port)
        clean = f"{c.rec_slo_errors(CLEAN_WINDOW)}{{{c.LABEL_CLUSTER}={pq.q(EAST)}}} == 0"
        deadline = time.monotonic() + 60
        while len(prom.query(f"count_over_time(({clean})[1m:1s]) >= 3")) < 1:  # clean for 3 scrapes
            assert time.monotonic() < deadline, (work / "prometheus.log").read_text()
            time.sleep(1)
        yield prom
    finally:
        stop_prometheus(*running)
        for s in (*servers.values(), objective):
            s.shutdown()
            s.server_close()


def _group(cluster: str) -> Any:
    return slo_group(cluster, STARTED[EAST], LONG)


def test_the_tiers_threshold_is_the_rules_burn_factor() -> None:
    assert tier_threshold(default_spec(), SLO.name, LONG) == (6.0, SHORT)  # 5% of 30d in 6h
    assert tier_threshold(default_spec(), "no-such-slo", LONG) is None


def test_the_6h_page_says_the_5m_window_is_clean_since_the_fix(store: Prom, tmp_path: Path) -> None:
    worker = facts_worker(store.url, tmp_path)
    group = _group(EAST)
    model = enrich(group, worker.facts(group), worker.links, c.LABEL_CLUSTER).context()
    blocks = json.dumps(worker.renderer.blocks(model))
    found = re.search(
        rf":seedling: \*Recovering:\* {CLEAN_WINDOW} window clean since (\d\d):(\d\d):(\d\d) UTC "
        rf"\(burn 0\.0x, under this {LONG} tier's 6x\): the fix holds; the alert resolves when its "
        rf"{SHORT} window is under 6x too",
        blocks,
    )
    assert found, blocks
    fixed = datetime.fromtimestamp(STARTED[EAST] + FIX_AFTER_S, timezone.utc)
    said = fixed.replace(hour=int(found[1]), minute=int(found[2]), second=int(found[3]), microsecond=0)
    # the subquery's 6 s steps over a 6h window, and a scrape a second
    assert -8 <= (said - fixed).total_seconds() <= 8, (said, fixed)


def test_a_model_still_burning_gets_no_recovery_line(store: Prom) -> None:
    group = _group(WEST)
    spec = default_spec()
    assert (
        recovery_facts(Prometheus(store.url), group.alerts, SLO_ALERTS, spec, c.LABEL_CLUSTER, time.time())
        == {}
    )
    # east on the same store does
    east = _group(EAST)
    assert list(
        recovery_facts(Prometheus(store.url), east.alerts, SLO_ALERTS, spec, c.LABEL_CLUSTER, time.time())
    )
