"""Delivery edge cases against the Slack stand-in: blocks Slack refuses, routing by label, a
deleted message, a restart of the in-process bot on the same outbox, the stand-in's own CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import requests

from triton_sre import conventions as c
from triton_sre.bot.command import Bot
from triton_sre.bot.config import BotSettings, Route
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.stack.processes import free_ports

TOKEN = "am-" + uuid.uuid4().hex
SLACK_TOKEN = "xoxb-" + uuid.uuid4().hex


def notification(case: str, status: str = "firing", **labels: str) -> dict[str, Any]:
    all_labels = {"alertname": c.ALERT_EXPORTER_DOWN, "case": case, "severity": c.SEVERITY_TICKET, **labels}
    return {
        "version": "4",
        "groupKey": f"{{}}:{{case={case}}}",
        "status": status,
        "receiver": "bot",
        "groupLabels": {"case": case},
        "commonLabels": all_labels,
        "commonAnnotations": {},
        "externalURL": "",
        "alerts": [
            {
                "status": status,
                "labels": all_labels,
                "annotations": {"summary": f"exporter down {case}"},
                "fingerprint": case,
                "startsAt": "2026-11-29T10:00:00Z",
            }
        ],
    }


def send(bot: Bot, body: dict[str, Any]) -> None:
    answer = requests.post(
        f"{bot.url}{c.PATH_BOT_ALERTMANAGER}",
        json=body,
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=5,
    )
    assert answer.status_code == 200


def ok_posts(standin: SlackStandin, case: str) -> list[Any]:
    return [x for x in standin.calls("chat.postMessage", ok_only=True) if case in json.dumps(x.params)]


def test_refused_blocks_fall_back_to_text(tmp_path: Path) -> None:
    (tmp_path / "message.json.j2").write_text(
        '[{"type": "no_such_block_type", "text": {{ title | tojson }}}]'
    )
    with SlackStandin(token=SLACK_TOKEN) as standin:
        settings = BotSettings(channel="#c", listen="127.0.0.1:0", templates_dir=str(tmp_path))
        with Bot(settings, tmp_path / "o.sqlite3", TOKEN, SLACK_TOKEN, standin.url) as bot:
            case = uuid.uuid4().hex[:8]
            send(bot, notification(case))
            assert standin.wait_for(lambda: bool(ok_posts(standin, case)), 10)
            calls = standin.calls("chat.postMessage")
            assert calls[0].response["error"] == "invalid_blocks"
            assert "blocks" not in calls[1].params and calls[1].ok


def test_routing_by_label_and_message_deleted_in_slack(tmp_path: Path) -> None:
    with SlackStandin(token=SLACK_TOKEN) as standin:
        settings = BotSettings(
            channel="#default",
            listen="127.0.0.1:0",
            routes=(Route("#ml-team", {"team": "ml"}), Route("#tickets", {"severity": c.SEVERITY_TICKET})),
        )
        with Bot(settings, tmp_path / "o.sqlite3", TOKEN, SLACK_TOKEN, standin.url) as bot:
            ml, other = uuid.uuid4().hex[:8], uuid.uuid4().hex[:8]
            send(bot, notification(ml, team="ml"))
            send(bot, notification(other))
            assert standin.wait_for(lambda: bool(ok_posts(standin, ml) and ok_posts(standin, other)), 10)
            assert ok_posts(standin, ml)[0].params["channel"] == "#ml-team"
            assert ok_posts(standin, other)[0].params["channel"] == "#tickets"
            # Someone deleted the message in Slack: the resolution is posted as a new message.
            key = notification(other)["groupKey"]
            assert standin.wait_for(lambda: bot.outbox.message(key) is not None, 5)
            ref = bot.outbox.message(key)
            assert ref is not None
            with standin._lock:
                del standin._messages[(ref.channel, ref.ts)]
            send(bot, notification(other, status="resolved"))
            assert standin.wait_for(lambda: len(ok_posts(standin, other)) == 2, 10)
            assert "RESOLVED" in json.dumps(ok_posts(standin, other)[1].params)


def test_restart_on_the_same_outbox_edits_instead_of_reposting(tmp_path: Path) -> None:
    with SlackStandin(token=SLACK_TOKEN) as standin:
        settings = BotSettings(channel="#c", listen="127.0.0.1:0")
        case = uuid.uuid4().hex[:8]
        with Bot(settings, tmp_path / "o.sqlite3", TOKEN, SLACK_TOKEN, standin.url) as bot:
            send(bot, notification(case))
            assert standin.wait_for(lambda: bool(ok_posts(standin, case)), 10)
        with Bot(settings, tmp_path / "o.sqlite3", TOKEN, SLACK_TOKEN, standin.url) as bot:
            send(bot, notification(case))  # a repeat after the restart: nothing
            send(bot, notification(case, status="resolved"))
            assert standin.wait_for(lambda: bool(standin.calls("chat.update", ok_only=True)), 10)
        assert len([p for p in ok_posts(standin, case) if not p.params.get("thread_ts")]) == 1


def test_standin_runs_as_a_module_and_prints_posts() -> None:
    (port,) = free_ports(1)
    proc = subprocess.Popen(
        [sys.executable, "-m", "triton_sre.bot.dev_slack_standin", "--port", str(port),
         "--token", "xoxb-cli"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert f"127.0.0.1:{port}/api/" in proc.stdout.readline()
        answer = requests.post(
            f"http://127.0.0.1:{port}/api/chat.postMessage",
            headers={"Authorization": "Bearer xoxb-cli"},
            json={
                "channel": "#c",
                "text": "hello from the test",
                "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "block text"}}],
            },
            timeout=5,
        ).json()
        assert answer["ok"]
        seen = [proc.stdout.readline() for _ in range(3)]
        assert (
            "chat.postMessage #c" in seen[0] and "hello from the test" in seen[1] and "block text" in seen[2]
        )
        calls = requests.get(f"http://127.0.0.1:{port}/_standin/calls", timeout=5).json()
        assert calls[0]["method"] == "chat.postMessage"
    finally:
        proc.terminate()
        proc.wait(10)


def test_unreachable_triton_degrades_to_the_exporters_diagnosis(tmp_path: Path) -> None:
    (closed,) = free_ports(1)
    with SlackStandin(token=SLACK_TOKEN) as standin:
        settings = BotSettings(channel="#c", listen="127.0.0.1:0", triton_url=f"http://127.0.0.1:{closed}")
        with Bot(settings, tmp_path / "o.sqlite3", TOKEN, SLACK_TOKEN, standin.url) as bot:
            case = uuid.uuid4().hex[:8]
            body = notification(
                case, alertname=c.ALERT_MODEL_UNAVAILABLE, model="m", runbook=c.RUNBOOK_PYTHON_MODULE_MISSING
            )
            send(bot, body)
            assert standin.wait_for(lambda: bool(ok_posts(standin, case)), 15)
            shown = json.dumps(ok_posts(standin, case)[0].params)
            assert "Live diagnosis unavailable" in shown and f"127.0.0.1:{closed}" in shown
            assert c.RUNBOOK_PYTHON_MODULE_MISSING in shown and "exporter" in shown


def test_diagnosis_from_a_triton_log_file(tmp_path: Path, triton: Any) -> None:
    from triton_sre.demo import BROKEN_MISSING_MODULE

    with SlackStandin(token=SLACK_TOKEN) as standin:
        settings = BotSettings(channel="#c", listen="127.0.0.1:0", log_file=str(triton.log_path))
        with Bot(settings, tmp_path / "o.sqlite3", TOKEN, SLACK_TOKEN, standin.url) as bot:
            case = uuid.uuid4().hex[:8]
            body = notification(
                case,
                alertname=c.ALERT_MODEL_UNAVAILABLE,
                model=BROKEN_MISSING_MODULE,
                runbook=c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
            )
            send(bot, body)
            assert standin.wait_for(lambda: bool(ok_posts(standin, case)), 15)
            shown = json.dumps(ok_posts(standin, case)[0].params)
            assert c.RUNBOOK_PYTHON_MODULE_MISSING in shown and f"log {triton.log_path.name}" in shown


def test_standin_is_served_by_the_shared_http_handler() -> None:
    """Like the exporter and the bot (httpserve.SafeHandler): another method is 405 with Allow,
    not http.server's 501, and is never recorded as a Slack call."""
    with SlackStandin() as standin:
        for method in ("PUT", "DELETE", "PROPFIND"):
            answer = requests.request(method, f"{standin.url}chat.postMessage", timeout=5)
            assert answer.status_code == 405, method
            assert answer.headers["Allow"] == "GET, POST"
        assert standin.calls() == []


def test_credentials_in_an_alerts_urls_never_reach_slack(tmp_path: Path) -> None:
    # A sender's generatorURL (the "Source" button) or an annotation may carry user:password@ or ?token=.
    case = "secret-" + uuid.uuid4().hex[:8]
    body = notification(case)
    body["alerts"][0]["generatorURL"] = "http://admin:hunter2@prom:9090/graph?token=abc123&g0.expr=up&g0.tab=1"
    body["alerts"][0]["annotations"]["description"] = "see http://ops:pa55@wiki/x?api_key=k3y"
    with SlackStandin(token=SLACK_TOKEN) as standin:
        settings = BotSettings(channel="#alerts")
        with Bot(settings, tmp_path / "o.sqlite3", TOKEN, SLACK_TOKEN, standin.url) as bot:
            send(bot, body)
            assert standin.wait_for(lambda: bool(ok_posts(standin, case)), 10)
            posted = json.dumps(ok_posts(standin, case)[0].params)
    for secret in ("hunter2", "abc123", "pa55", "k3y"):
        assert secret not in posted
    assert "g0.expr=up" in posted  # the link still leads to the expression


def test_a_server_down_alert_says_why_from_the_triton_log(tmp_path: Path) -> None:
    # The server is gone, so nothing live answers: the log's own server-wide finding (here its crash) is the
    # message's diagnosis, quoted with the line that decided it.
    log_file = tmp_path / "triton.log"
    log_file.write_text(
        'I1203 09:12:41.412870 1 model_lifecycle.cc:472] "loading: detector:1"\n'
        "Signal (11) received.\n"
        " 0# 0x000055D1C4E4E8A9 in tritonserver\n"
    )
    with SlackStandin(token=SLACK_TOKEN) as standin:
        settings = BotSettings(channel="#c", listen="127.0.0.1:0", log_file=str(log_file))
        with Bot(settings, tmp_path / "o.sqlite3", TOKEN, SLACK_TOKEN, standin.url) as bot:
            case = uuid.uuid4().hex[:8]
            send(bot, notification(case, alertname=c.ALERT_SERVER_DOWN))
            assert standin.wait_for(lambda: bool(ok_posts(standin, case)), 15)
            shown = json.dumps(ok_posts(standin, case)[0].params)
            assert c.RUNBOOK_SERVER_CRASHED in shown and "log triton.log" in shown
            assert "Signal (11) received." in shown
            # ... and an alert of another kind does not read the log
            other = uuid.uuid4().hex[:8]
            send(bot, notification(other))
            assert standin.wait_for(lambda: bool(ok_posts(standin, other)), 15)
            assert c.RUNBOOK_SERVER_CRASHED not in json.dumps(ok_posts(standin, other)[0].params)
