"""After the fix, the 6h tier's page kept its paging text for half an hour (journey25: its 30m window
averages the outage; 5m burn 0, the alert's value 169x): the page now says when the 5m window went
clean under the tier's threshold. A real Prometheus scrapes two clusters' recorded SLO ratios: east's
5m burn falls to 0 a few seconds in (the fix), west's keeps burning."""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from live_prometheus import Prom, serve_text, start_prometheus, stop_prometheus, wait_ready
from test_bot_versions import MODEL, facts_worker, slo_alert, slo_group

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.bot.config import BotSettings
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.bot.enrich import SLO_ALERTS, enrich
from triton_sre.bot.outbox import Outbox
from triton_sre.bot.recovery import CLEAN_WINDOW, recovery_facts, tier_threshold
from triton_sre.bot.recovery_watch import READ_SECONDS, RECOVERING_TEXT, REFRESH_KEY
from triton_sre.bot.silence_watch import queue_resolution
from triton_sre.bot.slack import SlackDelivery
from triton_sre.bot.worker import Worker
from triton_sre.prom import Prometheus
from triton_sre.slo import default_spec
from triton_sre.stack.processes import free_port

EAST, WEST, NORTH = "east", "west", "north"
LONG, SHORT = c.BURN_TIERS[1][0], c.BURN_TIERS[1][1]  # the 6h tier and its 30m window
FIX_AFTER_S = 8.0  # longer than the 6h subquery's 6 s step: a 5 s burn can fall between two (1 run of 4 here)
NORTH_FIX_AFTER_S = 25.0  # north is fixed while its page is posted: the refresh draws the line
SLO = default_spec().slos[0]
STARTED: dict[str, float] = {}


def _exposition(cluster: str) -> str:
    elapsed = time.time() - STARTED.setdefault(cluster, time.time())
    burning = cluster == WEST or elapsed < (NORTH_FIX_AFTER_S if cluster == NORTH else FIX_AFTER_S)
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
    servers = {name: serve_text(lambda name=name: _exposition(name)) for name in (EAST, WEST, NORTH)}
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


def _steps(worker: Worker, until: Any, seconds: float, what: str) -> Any:
    deadline = time.monotonic() + seconds
    while not (found := until()):
        assert time.monotonic() < deadline, f"no {what} within {seconds} s"
        worker.step()
        time.sleep(0.2)
    return found


def _posted_page(
    standin: SlackStandin, prometheus_url: str, tmp_path: Path, starts: float
) -> tuple[Worker, str]:
    """A worker delivering to `standin` that posted north's 6h page (startsAt `starts`): it and its ts."""
    worker = Worker(
        BotSettings(channel="#c", prometheus_url=prometheus_url, chart=False),
        Outbox(tmp_path / "o.sqlite3"),
        SlackDelivery("xoxb-test", standin.url),
        {},
    )
    assert worker.recovery is not None
    payload = {
        "version": "4",
        "groupKey": "{}:north",
        "status": "firing",
        "receiver": "bot",
        "groupLabels": {},
        "commonLabels": {},
        "alerts": [slo_alert(NORTH, starts, LONG)],
    }
    worker.outbox.enqueue("{}:north", payload)
    posted = _steps(worker, lambda: standin.calls("chat.postMessage", ok_only=True), 30, "page")[0]
    return worker, posted.response["ts"]


def test_a_posted_page_gets_its_recovery_line_without_a_notification(store: Prom, tmp_path: Path) -> None:
    """The line was read only when a notification came: the 6h page fixed while posted said nothing of
    it until its group changed. The loop reads the 5m burn of posted SLO pages and renders them again."""
    with SlackStandin(token="xoxb-test") as standin:
        worker, ts = _posted_page(standin, store.url, tmp_path, STARTED[NORTH])
        assert worker.recovery is not None
        worker.recovery.poll_seconds = 1.0

        def shown() -> str:
            return json.dumps(standin.message("#c", ts))

        assert "Recovering" not in shown(), "north was posted after its fix: the test proves nothing"
        assert time.time() < STARTED[NORTH] + NORTH_FIX_AFTER_S
        _steps(worker, lambda: "Recovering" in shown(), NORTH_FIX_AFTER_S + 30, "recovery line")
        assert re.search(rf"{CLEAN_WINDOW} window clean since \d\d:\d\d:\d\d UTC", shown())
        replies = [
            str(p.params.get("text"))
            for p in standin.calls("chat.postMessage", ok_only=True)
            if p.params.get("thread_ts") == ts
        ]
        assert any("Recovering" in r for r in replies), replies
        reads = worker.metrics.registry.get_sample_value(
            c.M_BOT_PROMETHEUS_READS, {c.L_OUTCOME: c.BOT_OUTCOME_OK}
        )
        assert reads and reads >= 1
        updates = len(standin.calls("chat.update", ok_only=True))
        for _ in range(10):  # more passes, nothing changed: the message is left alone
            worker.step()
            time.sleep(0.25)
        assert len(standin.calls("chat.update", ok_only=True)) == updates
        worker.stop()


def test_a_down_prometheus_leaves_the_page_as_it_was_and_is_counted(tmp_path: Path) -> None:
    with SlackStandin(token="xoxb-test") as standin:
        worker, _ = _posted_page(standin, f"http://127.0.0.1:{free_port()}", tmp_path, time.time())
        assert worker.recovery is not None
        before = len(worker.outbox.notifications("north"))

        def errors() -> float:
            found = worker.metrics.registry.get_sample_value(
                c.M_BOT_PROMETHEUS_READS, {c.L_OUTCOME: c.BOT_OUTCOME_ERROR}
            )
            return found or 0.0

        counted = errors()
        worker.recovery.poll(time.time() + 60)
        assert errors() == counted + 1
        assert len(worker.outbox.notifications("north")) == before
        worker.stop()


def test_a_resolution_drawn_under_a_silence_is_no_recovery_refresh(tmp_path: Path) -> None:
    """The silence watch resolves a group from its last stored notification, which may be a recovery
    refresh: the resolution's thread reply said "Recovering" instead of "Resolved"."""
    with SlackStandin(token="xoxb-test") as standin:
        worker, _ = _posted_page(standin, f"http://127.0.0.1:{free_port()}", tmp_path, time.time())
        ref = worker.outbox.message("{}:north")
        assert ref is not None and worker.recovery is not None
        stored = worker.outbox.last_payload(ref.group_key)
        assert stored is not None
        worker.outbox.enqueue(ref.group_key, {**stored, REFRESH_KEY: RECOVERING_TEXT})
        worker.step()
        assert queue_resolution(worker.outbox, ref.group_key, None, time.time())
        queued = worker.outbox.last_payload(ref.group_key)
        assert queued is not None and queued["status"] == c.AM_STATUS_RESOLVED
        assert REFRESH_KEY not in queued
        worker.step()
        replies = [str(p.params.get("text")) for p in standin.calls("chat.postMessage", ok_only=True)]
        assert "Resolved" in replies[-1] and "Recovering" in replies[-2], replies
        worker.stop()


def test_a_hanging_prometheus_holds_one_pass_for_its_read_budget(tmp_path: Path) -> None:
    """Each group's query had the client's own timeout: a Prometheus that accepts and never answers
    held the delivery loop that long per posted SLO group."""
    with socket.socket() as silent, SlackStandin(token="xoxb-test") as standin:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)  # connections complete in the backlog; nothing is ever answered
        worker, _ = _posted_page(
            standin, f"http://127.0.0.1:{silent.getsockname()[1]}", tmp_path, time.time()
        )
        assert worker.recovery is not None
        stored, ref = worker.outbox.last_payload("{}:north"), worker.outbox.message("{}:north")
        assert stored is not None and ref is not None
        for n in range(3):  # three more posted SLO pages: 4 queries of 5 s each without the budget
            key = f"{{}}:north{n}"
            nid = worker.outbox.enqueue(key, {**stored, "groupKey": key})
            worker.outbox.save_message(key, "#c", f"1.{n}", c.AM_STATUS_FIRING, "d", ref.alerts, nid)
        started = time.monotonic()
        worker.recovery.poll(time.time() + 60)
        took = time.monotonic() - started
        assert took < READ_SECONDS + 1.5, took
        worker.stop()
