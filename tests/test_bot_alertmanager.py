"""The incident bot end to end: the REAL Alertmanager (Debian's prometheus-alertmanager) posts its
webhook to the bot, the bot talks to the Slack stand-in, the diagnosis comes from the real Triton.

One Alertmanager serves the module: it groups by alertname, model and testcase (each test uses its
own testcase label, so each test has its own group) and routes ``bot="subprocess"`` alerts to a
`triton-sre bot` subprocess (the kill-and-restart test), everything else to an in-process bot.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from binaries import binary, stop
from expectations import BROKEN_CAUSES
from rendered_alerts import as_old_rules_rendered, rendered_burn_alert

from triton_sre import conventions as c
from triton_sre.bot.command import Bot
from triton_sre.bot.config import BotSettings
from triton_sre.bot.dev_slack_standin import Call, SlackStandin
from triton_sre.bot.slack_limits import validate_blocks
from triton_sre.demo import BROKEN_MISSING_MODULE
from triton_sre.diagnosis.catalog import load_catalog
from triton_sre.stack.processes import free_ports

WEBHOOK_TOKEN = "am-webhook-" + uuid.uuid4().hex
SLACK_TOKEN = "xoxb-" + uuid.uuid4().hex
SIGNING_SECRET = "signing-" + uuid.uuid4().hex
CHANNEL = "#triton-alerts"
RUNBOOK_BASE = "https://runbooks.example.com/triton/"
GROUP_WAIT = "1s"
GROUP_INTERVAL = "1s"
REPEAT_INTERVAL = "2s"


def wait_until(predicate: Callable[[], Any], timeout: float = 15.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


class Alertmanager:
    def __init__(
        self,
        workdir: Path,
        main_url: str,
        subprocess_url: str,
        routes: Sequence[dict[str, Any]] = (),
        inhibit_rules: Sequence[dict[str, Any]] = (),
        repeat_interval: str = REPEAT_INTERVAL,
    ) -> None:
        """`routes` go before the subprocess route (deploy's severity routes); `inhibit_rules` as given."""
        self.port, self.cluster_port = free_ports(2)
        self.url = f"http://127.0.0.1:{self.port}"
        auth = {"authorization": {"type": "Bearer", "credentials": WEBHOOK_TOKEN}}
        config = {
            "route": {
                "receiver": "bot",
                "group_by": ["alertname", "model", "testcase"],
                "group_wait": GROUP_WAIT,
                "group_interval": GROUP_INTERVAL,
                "repeat_interval": repeat_interval,
                "routes": [*routes, {"matchers": ['bot="subprocess"'], "receiver": "bot-subprocess"}],
            },
            "receivers": [
                {
                    "name": "bot",
                    "webhook_configs": [
                        {
                            "url": f"{main_url}{c.PATH_BOT_ALERTMANAGER}",
                            "send_resolved": True,
                            "http_config": auth,
                        }
                    ],
                },
                {
                    "name": "bot-subprocess",
                    "webhook_configs": [
                        {
                            "url": f"{subprocess_url}{c.PATH_BOT_ALERTMANAGER}",
                            "send_resolved": True,
                            "http_config": auth,
                        }
                    ],
                },
            ],
            "inhibit_rules": list(inhibit_rules),
        }
        workdir.mkdir(parents=True, exist_ok=True)
        self.config = workdir / "alertmanager.yml"
        self.config.write_text(yaml.safe_dump(config))
        self.log = (workdir / "alertmanager.log").open("wb")
        self.proc = subprocess.Popen(
            [
                binary("prometheus-alertmanager"),
                f"--config.file={self.config}",
                f"--storage.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--cluster.listen-address=",
                "--log.level=warn",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        wait_until(self._ready, 20, "Alertmanager ready")

    def _ready(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(
                f"alertmanager exited {self.proc.returncode}: {Path(self.log.name).read_text()}"
            )
        try:
            return requests.get(f"{self.url}/-/ready", timeout=1).status_code == 200
        except requests.RequestException:
            return False

    def post(self, labels: dict[str, str], annotations: dict[str, str], resolved: bool = False) -> None:
        self.post_together((labels, annotations), resolved=resolved)

    def post_together(self, *alerts: tuple[dict[str, str], dict[str, str]], resolved: bool = False) -> None:
        """The alerts in one request, as Prometheus sends an evaluation's alerts: two requests can straddle
        GROUP_WAIT on a loaded machine, and the group's first notification then carries the first alone."""
        now = datetime.now(timezone.utc)
        body: list[dict[str, Any]] = []
        for labels, notes in alerts:
            alert: dict[str, Any] = {
                "labels": labels,
                "annotations": notes,
                "generatorURL": "http://prometheus.invalid/graph?g0.expr=triton_sre_model_unavailable%3D%3D1",
                "startsAt": (now - timedelta(minutes=3)).isoformat(),
            }
            if resolved:
                alert["endsAt"] = now.isoformat()
            body.append(alert)
        answer = requests.post(f"{self.url}/api/v2/alerts", json=body, timeout=5)
        assert answer.status_code == 200, answer.text

    def stop(self) -> None:
        stop(self.proc, 10)
        self.log.close()


@pytest.fixture(scope="module")
def standin() -> Iterator[SlackStandin]:
    with SlackStandin(token=SLACK_TOKEN) as server:
        yield server


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory, standin: SlackStandin, triton: Any
) -> Iterator[dict[str, Any]]:
    workdir = tmp_path_factory.mktemp("bot-am")
    settings = BotSettings(
        channel=CHANNEL,
        listen="127.0.0.1:0",
        runbook_base_url=RUNBOOK_BASE,
        triton_url=triton.http_url,
        grafana_url="https://grafana.example.com",
        retry_base_seconds=0.2,
        retry_max_seconds=1.0,
    )
    bot = Bot(settings, workdir / "outbox.sqlite3", WEBHOOK_TOKEN, SLACK_TOKEN, standin.url, SIGNING_SECRET)
    bot.start()
    (subprocess_port,) = free_ports(1)
    am = Alertmanager(workdir / "am", bot.url, f"http://127.0.0.1:{subprocess_port}")
    try:
        yield {"bot": bot, "am": am, "subprocess_port": subprocess_port, "workdir": workdir}
    finally:
        am.stop()
        bot.stop()


def new_case() -> str:
    return "t" + uuid.uuid4().hex[:10]


def posts(standin: SlackStandin, token: str, *, ok_only: bool = True, top_level: bool = True) -> list[Call]:
    return [
        call
        for call in standin.calls("chat.postMessage", ok_only=ok_only)
        if token in json.dumps(call.params) and (not top_level or not call.params.get("thread_ts"))
    ]


def unavailable_alert(
    case: str, model: str = BROKEN_MISSING_MODULE, **extra: str
) -> tuple[dict[str, str], dict[str, str]]:
    labels = {
        "alertname": c.ALERT_MODEL_UNAVAILABLE,
        "model": model,
        "version": "1",
        "severity": c.SEVERITY_PAGE,
        "runbook": c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
        "job": c.DEFAULT_EXPORTER_JOB,
        "instance": "triton-a:8003",
        "testcase": case,
        **extra,
    }
    annotations = {
        "summary": f"Model {model} version 1 is UNAVAILABLE ({case})",
        "description": f"Triton reports model {model} version 1 UNAVAILABLE: it failed to load.",
        "runbook_url": f"runbooks/{c.RUNBOOK_UNKNOWN_LOAD_FAILURE}.md",
    }
    return labels, annotations


def test_firing_repeat_resolve_one_message_updated_in_place(
    stack: dict[str, Any], standin: SlackStandin
) -> None:
    bot: Bot = stack["bot"]
    case = new_case()
    labels, annotations = unavailable_alert(case)
    stack["am"].post(labels, annotations)

    first = wait_until(lambda: posts(standin, case), 15, "the first message")
    assert len(first) == 1
    call = first[0]
    shown = json.dumps(call.params)
    assert call.params["channel"] == CHANNEL
    assert BROKEN_MISSING_MODULE in shown
    # The live diagnosis (real Triton's index), not the exporter's fallback label, picked the runbook.
    assert f"{RUNBOOK_BASE}{c.RUNBOOK_PYTHON_MODULE_MISSING}.md" in shown
    assert (
        BROKEN_CAUSES[BROKEN_MISSING_MODULE].replace("'", "\\u0027") in shown
        or BROKEN_CAUSES[BROKEN_MISSING_MODULE] in shown
    )
    assert f"live {stack['bot'].settings.triton_url}" in shown
    # the one-line fix is the runbook's front matter
    assert f"*Fix:* {load_catalog()[c.RUNBOOK_PYTHON_MODULE_MISSING].remediation}" in shown
    buttons = [e for b in call.params["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert buttons[0]["url"] == f"{RUNBOOK_BASE}{c.RUNBOOK_PYTHON_MODULE_MISSING}.md"
    assert any("/#/silences/new?filter=" in b["url"] and case in b["url"] for b in buttons)
    assert validate_blocks(call.params["blocks"]) is None
    ts = call.response["ts"]

    # Alertmanager repeats the unchanged group every repeat_interval: no second post, no edit.
    wait_until(lambda: len(bot.outbox.notifications(case)) >= 2, 15, "an Alertmanager repeat")
    settled = lambda: all(n["state"] != c.BOT_OUTBOX_PENDING for n in bot.outbox.notifications(case))  # noqa: E731
    wait_until(settled, 5, "repeat handled")
    assert len(posts(standin, case)) == 1
    assert not [u for u in standin.calls("chat.update") if u.params.get("ts") == ts]

    stack["am"].post(labels, annotations, resolved=True)
    updates = wait_until(
        lambda: [u for u in standin.calls("chat.update", ok_only=True) if u.params.get("ts") == ts],
        15,
        "the update",
    )
    assert len(updates) == 1
    assert "RESOLVED" in json.dumps(updates[0].params["blocks"])
    replies = wait_until(
        lambda: [
            p for p in standin.calls("chat.postMessage", ok_only=True) if p.params.get("thread_ts") == ts
        ],
        5,
        "the thread reply",
    )
    assert "Resolved" in replies[0].params["text"]
    assert standin.message(CHANNEL, ts)["edits"] == 1  # type: ignore[index]
    assert len(posts(standin, case)) == 1


def test_slo_burn_rate_from_its_annotation_and_from_old_rules_text(
    stack: dict[str, Any], standin: SlackStandin
) -> None:
    """The bot has no Prometheus here: the burn rate shown is the one the alert carries, as the
    generated rule renders it (`burn_rate`), or for rules generated before that annotation, as
    their description says it."""
    labels, annotations = rendered_burn_alert()
    shown = f"*Burn rate when it fired:* {annotations[c.ANNOTATION_BURN_RATE]}x"
    fix = load_catalog()[c.ALERT_RUNBOOKS[c.ALERT_SLO_ERROR_BUDGET_BURN]].remediation
    for rendered in (annotations, as_old_rules_rendered(annotations)):
        case = new_case()
        stack["am"].post({**labels, "testcase": case}, rendered)
        post = wait_until(lambda case=case: posts(standin, case), 15, "the SLO page")[0]
        assert shown in json.dumps(post.params["blocks"]), post.params["blocks"]
        assert f"*Fix:* {fix}" in json.dumps(post.params["blocks"])  # its runbook's front matter
        assert validate_blocks(post.params["blocks"]) is None


def test_update_in_place_when_a_second_alert_joins(stack: dict[str, Any], standin: SlackStandin) -> None:
    case = new_case()
    labels, annotations = unavailable_alert(case)
    stack["am"].post(labels, annotations)
    ts = wait_until(lambda: posts(standin, case), 15, "the first message")[0].response["ts"]
    labels2 = {**labels, "version": "2"}
    stack["am"].post(labels2, {**annotations, "summary": f"second version ({case})"})
    update = wait_until(
        lambda: [u for u in standin.calls("chat.update", ok_only=True) if u.params.get("ts") == ts],
        15,
        "the update",
    )
    assert "2 firing" in json.dumps(update[0].params["blocks"])
    reply = wait_until(
        lambda: [
            p for p in standin.calls("chat.postMessage", ok_only=True) if p.params.get("thread_ts") == ts
        ],
        5,
        "the thread reply",
    )
    assert "Now firing" in reply[0].params["text"]
    assert len(posts(standin, case)) == 1


def test_rate_limited_then_ok_posts_exactly_once(stack: dict[str, Any], standin: SlackStandin) -> None:
    case = new_case()
    standin.fail_next(1, status=429, retry_after=1, methods=("chat.postMessage",))
    labels, annotations = unavailable_alert(case, model="text_echo")
    stack["am"].post(labels, annotations)
    wait_until(lambda: posts(standin, case), 15, "the message after the 429")
    time.sleep(1.5)  # room for a wrong second post
    attempts = posts(standin, case, ok_only=False)
    assert [a.status for a in attempts] == [429, 200]
    assert attempts[1].at - attempts[0].at >= 0.9, "Retry-After was not honoured"
    assert len(posts(standin, case)) == 1


def test_server_errors_are_retried(stack: dict[str, Any], standin: SlackStandin) -> None:
    case = new_case()
    standin.fail_next(2, status=503, methods=("chat.postMessage",))
    labels, annotations = unavailable_alert(case, model="vector_scale")
    stack["am"].post(labels, annotations)
    wait_until(lambda: posts(standin, case), 15, "the message after two 503s")
    assert [a.status for a in posts(standin, case, ok_only=False)] == [503, 503, 200]


def test_slack_down_for_a_while_then_delivered(stack: dict[str, Any], standin: SlackStandin) -> None:
    bot: Bot = stack["bot"]
    case = new_case()
    standin.go_down()
    try:
        labels, annotations = unavailable_alert(case, model="slow_model")
        stack["am"].post(labels, annotations)
        wait_until(
            lambda: any(n["attempts"] >= 2 for n in bot.outbox.notifications(case)),
            15,
            "failed delivery attempts",
        )
        assert not posts(standin, case, ok_only=False)
    finally:
        standin.come_up()
    wait_until(lambda: posts(standin, case), 10, "delivery after Slack came back")
    time.sleep(1.0)
    assert len(posts(standin, case)) == 1


def _start_subprocess_bot(
    port: int, outbox: Path, api_url: str, log: Path, triton_url: str
) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        c.ENV_BOT_TOKEN: WEBHOOK_TOKEN,
        c.ENV_SLACK_BOT_TOKEN: SLACK_TOKEN,
        c.ENV_SLACK_SIGNING_SECRET: SIGNING_SECRET,
        c.ENV_SLACK_API_URL: api_url,
    }
    config = outbox.parent / "bot.yaml"
    config.write_text(yaml.safe_dump({"bot": {"retry_base_seconds": 0.2, "retry_max_seconds": 0.5}}))
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "triton_sre.cli",
                "--log-level",
                "debug",
                "bot",
                "--listen",
                f"127.0.0.1:{port}",
                "--channel",
                CHANNEL,
                "--outbox",
                str(outbox),
                "--config",
                str(config),
                "--triton-url",
                triton_url,
                "--runbook-base-url",
                RUNBOOK_BASE,
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )

    def healthy() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"bot exited {proc.returncode}: {log.read_text()[-3000:]}")
        try:
            return requests.get(f"http://127.0.0.1:{port}{c.PATH_HEALTHZ}", timeout=1).status_code == 200
        except requests.RequestException:
            return False

    wait_until(healthy, 20, "the bot subprocess")
    return proc


def test_bot_killed_with_outbox_items_and_restarted_delivers_once(stack: dict[str, Any], triton: Any) -> None:
    port = stack["subprocess_port"]
    workdir: Path = stack["workdir"] / "subprocess"
    workdir.mkdir()
    outbox, log = workdir / "outbox.sqlite3", workdir / "bot.log"
    (slack_port,) = free_ports(1)
    slack = SlackStandin(token=SLACK_TOKEN, port=slack_port)  # not started: Slack is down
    procs = [_start_subprocess_bot(port, outbox, slack.url, log, triton.http_url)]
    try:
        case = new_case()
        labels, annotations = unavailable_alert(case, bot="subprocess")
        stack["am"].post(labels, annotations)

        def pending() -> int:
            return int(
                requests.get(f"http://127.0.0.1:{port}{c.PATH_HEALTHZ}", timeout=2)
                .json()["outbox"]
                .get(c.BOT_OUTBOX_PENDING, 0)
            )

        wait_until(lambda: pending() >= 1, 15, "a notification waiting in the outbox")
        procs[0].send_signal(signal.SIGKILL)
        procs[0].wait(10)
        procs.append(_start_subprocess_bot(port, outbox, slack.url, log, triton.http_url))
        slack.start()
        wait_until(lambda: posts(slack, case), 15, "delivery after the restart")
        # Alertmanager keeps repeating; the restarted bot knows the group's message: no second post.
        time.sleep(REPEAT_SECONDS + 1.5)
        assert len(posts(slack, case)) == 1
        text = json.dumps(posts(slack, case)[0].params)
        assert f"{RUNBOOK_BASE}{c.RUNBOOK_PYTHON_MODULE_MISSING}.md" in text
        procs[-1].terminate()  # SIGTERM: a clean stop
        assert procs[-1].wait(10) == 0
    finally:
        for proc in procs:
            if proc.poll() is None:
                stop(proc, 10)
        slack.stop()
    logged = log.read_text()
    assert "bot listening" in logged
    for secret in (WEBHOOK_TOKEN, SLACK_TOKEN, SIGNING_SECRET):
        assert secret not in logged


REPEAT_SECONDS = 2.0


def test_queue_and_latency_messages_say_how_many_replicas_the_signal_asks_for(
    standin: SlackStandin, live: dict[str, Any], tmp_path: Path
) -> None:
    """The session's real Prometheus evaluates the generated autoscaling rules (shipped slos.yaml)
    on the real Triton, idle now; the real Alertmanager sends a queue alert and a latency burn to a
    bot that reads that Prometheus: each message says how many replicas the signal asks for (the
    warm floor, the formula's 0 clamped) and how many serve. An alert of another job gets no line."""
    spec = live["spec"]
    (entry,) = spec.autoscaling
    job = spec.triton_job
    desired = f'{c.REC_AUTOSCALE_DESIRED}{{job="{job}", deployment="{entry.deployment}"}}'
    asked = live["prom"].wait_for(f"{desired} == {entry.min_replicas}")
    serving = live["prom"].wait_for(f'{c.REC_SERVING_REPLICAS}{{job="{job}"}} == 1')
    assert asked and serving
    line = (
        f"*Scaling:* the scaling signal asks for {entry.min_replicas} replicas "
        f"of {entry.deployment} (1 serving)"
    )
    settings = BotSettings(channel=CHANNEL, listen="127.0.0.1:0", prometheus_url=live["prom"].url)
    bot = Bot(settings, tmp_path / "outbox.sqlite3", WEBHOOK_TOKEN, SLACK_TOKEN, standin.url, SIGNING_SECRET)
    bot.start()
    am = Alertmanager(tmp_path / "am", bot.url, bot.url)
    try:
        queue = {
            "alertname": c.ALERT_QUEUE_TIME_HIGH,
            "job": job,
            "instance": "triton-0:8002",
            "model": "slow_model",
            "version": "1",
            "severity": c.SEVERITY_TICKET,
        }
        latency = {
            "alertname": c.ALERT_SLO_LATENCY_BUDGET_BURN,
            "slo": "latency",
            "window": "5m",
            "model": "slow_model",
            "severity": c.SEVERITY_PAGE,
        }
        cases = {new_case(): queue, new_case(): latency, new_case(): {**queue, "job": "other-triton"}}
        for case, labels in cases.items():
            am.post({**labels, "testcase": case}, {"summary": f"{labels['alertname']} ({case})"})
        shown = {
            case: json.dumps(wait_until(lambda case=case: posts(standin, case), 15, case)[0].params["blocks"])
            for case in cases
        }
        mine, burn, other = shown.values()
        assert line in mine and line in burn, (mine, burn)
        assert "*Scaling:*" not in other  # job other-triton has no autoscaling entry
    finally:
        am.stop()
        bot.stop()
