"""A group holding two SLOs' pages of one model: the delivery loop's recovery read judged the group's
first SLO alone, so a fix of the other SLO never reached the message, and a first SLO recovering said
"Recovering" for the whole group while the other burned. A real Prometheus scrapes crafted recorded
ratios: south's first SLO is fixed a few seconds in, its second keeps burning."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live_prometheus import Prom, serve_text, start_prometheus, stop_prometheus, wait_ready
from test_bot_recovery import LONG, _steps
from test_bot_versions import MODEL, slo_alert

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.bot.config import BotSettings
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.bot.outbox import Outbox
from triton_sre.bot.recovery import CLEAN_WINDOW
from triton_sre.bot.recovery_watch import RECOVERING_TEXT
from triton_sre.bot.slack import SlackDelivery
from triton_sre.bot.worker import Worker
from triton_sre.slo import default_spec
from triton_sre.stack.processes import free_port

SOUTH = "south"
FIXED, BURNING = default_spec().slos[0], default_spec().slos[1]  # availability fixed, latency burning
FIX_AFTER_S = 15.0  # the page is posted before: the loop's read draws the line
STARTED: list[float] = []


def _exposition() -> str:
    if not STARTED:
        STARTED.append(time.time())
    lines = []
    for slo in (FIXED, BURNING):
        burning = slo is BURNING or time.time() - STARTED[0] < FIX_AFTER_S
        labels = pq.equal([(c.L_SLO, slo.name), (c.LABEL_MODEL, MODEL)])
        lines.append(
            f"{pq.selector(c.rec_slo_errors(CLEAN_WINDOW), labels)} {50 * (1 - slo.objective) * burning}"
        )
        objective = pq.selector(c.REC_SLO_OBJECTIVE, pq.equal([(c.L_SLO, slo.name)]))
        lines.append(f"{objective} {slo.objective}")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prom]:
    work = tmp_path_factory.mktemp("recovery-slos-store")
    server = serve_text(_exposition)
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "900ms"},
        "scrape_configs": [
            {
                "job_name": "recorded",
                "static_configs": [
                    {"targets": [f"127.0.0.1:{server.server_address[1]}"], "labels": {c.LABEL_CLUSTER: SOUTH}}
                ],
            }
        ],
    }
    running = start_prometheus(work, config, port := free_port())
    try:
        prom = wait_ready(running[0], work, port)
        deadline = time.monotonic() + 60
        while len(prom.query(c.rec_slo_errors(CLEAN_WINDOW))) < 2:
            assert time.monotonic() < deadline, (work / "prometheus.log").read_text()
            time.sleep(0.5)
        yield prom
    finally:
        stop_prometheus(*running)
        server.shutdown()
        server.server_close()


def _alert(slo: str) -> dict[str, Any]:
    alert = slo_alert(SOUTH, STARTED[0], LONG)
    return {**alert, "labels": {**alert["labels"], c.L_SLO: slo}, "fingerprint": f"fp-{slo}"}


def _worker(store: Prom, tmp_path: Path, standin: SlackStandin) -> Worker:
    worker = Worker(
        BotSettings(channel="#c", prometheus_url=store.url, chart=False),
        Outbox(tmp_path / "o.sqlite3"),
        SlackDelivery("xoxb-test", standin.url),
        {},
    )
    assert worker.recovery is not None
    worker.recovery.poll_seconds = 1.0
    return worker


def _payload() -> dict[str, Any]:
    return {
        "version": "4",
        "groupKey": "{}:south",
        "status": "firing",
        "receiver": "bot",
        "groupLabels": {},
        "commonLabels": {},
        "alerts": [_alert(BURNING.name), _alert(FIXED.name)],  # the burning SLO first
    }


def test_a_group_of_two_slos_recovers_only_when_both_do_and_names_the_one_burning(
    store: Prom, tmp_path: Path
) -> None:
    with SlackStandin(token="xoxb-test") as standin:
        worker = _worker(store, tmp_path, standin)
        worker.outbox.enqueue("{}:south", _payload())
        posted = _steps(worker, lambda: standin.calls("chat.postMessage", ok_only=True), 30, "page")[0]
        ts = posted.response["ts"]

        def shown() -> str:
            return json.dumps(standin.message("#c", ts))

        assert "Recovering" not in shown(), "posted after the fix: the test proves nothing"
        assert time.time() < STARTED[0] + FIX_AFTER_S
        _steps(worker, lambda: "Recovering" in shown(), FIX_AFTER_S + 30, "the fixed SLO's recovery line")
        sections = [b["text"]["text"] for b in standin.message("#c", ts)["blocks"] if "text" in b]
        recovering = [s for s in sections if ":seedling: *Recovering:*" in s]
        assert len(recovering) == 1, sections  # the fixed SLO's page alone
        burning = f"SLO {BURNING.name} of {MODEL} in cluster {SOUTH} ({LONG} tier)"  # named as the title
        assert f"this group still burns: {burning}" in recovering[0]
        replies = [
            str(p.params.get("text"))
            for p in standin.calls("chat.postMessage", ok_only=True)
            if p.params.get("thread_ts") == ts
        ]
        assert not any(RECOVERING_TEXT in r for r in replies), replies  # not the whole group
        assert any("Partly recovering" in r and burning in r for r in replies), replies
        worker.stop()


def test_a_restarted_bot_does_not_render_a_recovering_page_again(store: Prom, tmp_path: Path) -> None:
    """What each message showed recovering was held in memory: a restarted bot rendered every
    recovering page once more (an edit, a thread reply, an `updated` counted) although nothing changed."""
    time.sleep(max(0.0, STARTED[0] + FIX_AFTER_S + 3 - time.time()))  # the fixed SLO's 5m burn is 0
    with SlackStandin(token="xoxb-test") as standin:
        worker = _worker(store, tmp_path, standin)
        worker.outbox.enqueue("{}:south2", {**_payload(), "groupKey": "{}:south2"})
        ts = _steps(worker, lambda: standin.calls("chat.postMessage", ok_only=True), 30, "page")[0].response[
            "ts"
        ]
        assert "Recovering" in json.dumps(standin.message("#c", ts))  # posted after the fix: drawn at once
        worker.stop()
        worker.outbox.close()
        worker = _worker(store, tmp_path, standin)  # the restart, on the same outbox
        assert worker.recovery is not None
        calls = len(standin.calls("chat.update")), len(standin.calls("chat.postMessage"))

        def reads() -> float:
            found = worker.metrics.registry.get_sample_value(
                c.M_BOT_PROMETHEUS_READS, {c.L_OUTCOME: c.BOT_OUTCOME_OK}
            )
            return found or 0.0

        _steps(worker, lambda: reads() >= 6, 20, "three passes of the recovery read")
        for _ in range(3):
            worker.step()
        assert (len(standin.calls("chat.update")), len(standin.calls("chat.postMessage"))) == calls
        updated = worker.metrics.registry.get_sample_value(
            c.M_BOT_ACTIONS, {c.L_ACTION: c.BOT_ACTION_UPDATED}
        )
        assert not updated
        worker.stop()
        worker.outbox.close()
        with sqlite3.connect(tmp_path / "o.sqlite3") as db:  # a record that does not decode
            assert db.execute("UPDATE recovery_shown SET fingerprints = '[not json'").rowcount == 1
        worker = _worker(store, tmp_path, standin)
        _steps(worker, lambda: len(standin.calls("chat.update")) > calls[0], 20, "the page rendered again")
        assert worker.metrics.registry.get_sample_value(c.M_BOT_SILENCE_STATE_ERRORS) == 1
        worker.stop()
