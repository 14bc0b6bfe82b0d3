"""The bot against the REAL Alertmanager's silences: a silence added with amtool is shown on the
group's line of `/triton status` (who, until when, the comment; a secret in the comment redacted)
and in the group's thread when it starts and ends; an Alertmanager that is down, slow or answers
garbage still gets a status answer that says silences could not be read, counted on the bot's
metric. The status command's Alertmanager is placed behind a fault proxy."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import requests
from binaries import binary
from faultproxy import GARBAGE, HANG, STATUS_500, FaultProxy
from test_bot_alertmanager import (
    SIGNING_SECRET,
    SLACK_TOKEN,
    WEBHOOK_TOKEN,
    Alertmanager,
    new_case,
    posts,
    unavailable_alert,
    wait_until,
)

from triton_sre import conventions as c
from triton_sre.bot.command import Bot, resolve_bot_settings
from triton_sre.bot.config import BotSettings
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.bot.receiver import slack_signature
from triton_sre.cli import build_parser
from triton_sre.stack.processes import free_ports

SECRET_IN_COMMENT = "xoxb-" + uuid.uuid4().hex


def silence_bot(workdir: Path, bot_port: int, standin: SlackStandin, alertmanager_url: str) -> Bot:
    """A bot (not started) on `bot_port` posting to `standin`, reading Alertmanager's silences every 0.5 s."""
    settings = BotSettings(
        channel="#triton-alerts",
        listen=f"127.0.0.1:{bot_port}",
        alertmanager_url=alertmanager_url,
        retry_base_seconds=0.2,
        retry_max_seconds=1.0,
    )
    bot = Bot(settings, workdir / "outbox.sqlite3", WEBHOOK_TOKEN, SLACK_TOKEN, standin.url, SIGNING_SECRET)
    assert bot.worker.silences is not None
    bot.worker.silences.poll_seconds = 0.5
    return bot


@contextmanager
def reading_bot(
    workdir: Path, prepare: Callable[[Bot], None] = lambda bot: None, **alertmanager: Any
) -> Iterator[dict[str, Any]]:
    """A Slack stand-in and a real Alertmanager (`alertmanager`: its options) notifying a `silence_bot`
    that reads it, prepared by `prepare` before it starts: {"bot", "am", "standin"}, stopped after."""
    (bot_port,) = free_ports(1)
    with SlackStandin(token=SLACK_TOKEN) as standin:
        am = Alertmanager(
            workdir / "am", f"http://127.0.0.1:{bot_port}", "http://127.0.0.1:9", **alertmanager
        )
        bot = silence_bot(workdir, bot_port, standin, am.url)
        prepare(bot)
        bot.start()
        try:
            yield {"bot": bot, "am": am, "standin": standin}
        finally:
            bot.stop()
            am.stop()


@pytest.fixture(scope="module")
def silence_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    workdir = tmp_path_factory.mktemp("bot-silences")
    (bot_port,) = free_ports(1)
    with SlackStandin(token=SLACK_TOKEN) as standin:
        am = Alertmanager(workdir / "am", f"http://127.0.0.1:{bot_port}", "http://127.0.0.1:9")
        proxy = FaultProxy(am.url).__enter__()
        bot = silence_bot(workdir, bot_port, standin, proxy.url)
        assert bot.worker.silences is not None
        bot.worker.silences.url = am.url  # the delivery loop's reads do not pass the fault proxy
        bot.start()
        try:
            yield {"bot": bot, "am": am, "proxy": proxy, "standin": standin}
        finally:
            bot.stop()
            proxy.__exit__(None, None, None)
            am.stop()


def status(bot: Bot) -> tuple[str, float]:
    body = urlencode({"command": c.SLASH_COMMAND, "text": "status", "user_id": "U1"}).encode()
    ts = str(int(time.time()))
    headers = {
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": slack_signature(SIGNING_SECRET, ts, body),
        "Content-Type": "application/x-www-form-urlencoded",
    }
    started = time.monotonic()
    answer = requests.post(f"{bot.url}{c.PATH_BOT_SLACK_COMMANDS}", data=body, headers=headers, timeout=10)
    assert answer.status_code == 200
    return answer.json()["text"], time.monotonic() - started


def group_line(text: str, case: str) -> str:
    lines = [line for line in text.splitlines() if case in line]
    assert len(lines) == 1, text
    return lines[0]


def open_group(stack: dict[str, Any]) -> tuple[str, str]:
    """A new firing group through the real Alertmanager: its testcase label and its message's ts."""
    case = new_case()
    labels, annotations = unavailable_alert(case, model=f"m{case}")
    stack["am"].post(labels, annotations)
    ts = wait_until(lambda: posts(stack["standin"], case), 15, "the group's message")[0].response["ts"]
    # The stand-in has the message before the bot has read Slack's answer and recorded the group as open:
    # /triton status lists only recorded groups (a loaded machine showed the gap).
    outbox = stack["bot"].outbox
    wait_until(
        lambda: any(a.get("model") == labels["model"] for ref in outbox.open_messages() for a in ref.alerts),
        15,
        "the group recorded as open",
    )
    return case, ts


def reads(bot: Bot, outcome: str) -> float:
    value = bot.metrics.registry.get_sample_value(c.M_BOT_ALERTMANAGER_READS, {c.L_OUTCOME: outcome})
    return value or 0.0


def amtool_silence(am_url: str, *args: str) -> str:
    """`amtool silence <args>` against the Alertmanager at `am_url`; its output (a new silence's id)."""
    done = subprocess.run(
        [binary("amtool"), f"--alertmanager.url={am_url}", "silence", *args],
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_status_shows_an_amtool_silence(silence_stack: dict[str, Any]) -> None:
    bot: Bot = silence_stack["bot"]
    am: Alertmanager = silence_stack["am"]
    case, _ = open_group(silence_stack)
    text, _ = status(bot)
    assert "silenced" not in group_line(text, case)

    amtool_silence(
        am.url,
        "add",
        "--author=alice",
        "--duration=1h",
        f"--comment=rolling back, see {SECRET_IN_COMMENT}",
        f"testcase={case}",
    )
    text = wait_until(lambda: "silenced" in (t := status(bot)[0]) and t, 10, "the silence in the answer")
    line = group_line(text, case)
    until = time.strftime("%H:%M UTC", time.gmtime(time.time() + 3600))
    assert "*silenced* by alice" in line, line
    assert "rolling back, see" in line
    assert SECRET_IN_COMMENT not in text
    # the minute may turn between the silence and this line
    earlier = time.strftime("%H:%M UTC", time.gmtime(time.time() + 3600 - 60))
    assert f"until {until}" in line or f"until {earlier}" in line, line
    assert reads(bot, c.BOT_OUTCOME_OK) >= 1


def test_silence_start_and_end_are_replied_in_the_groups_thread(silence_stack: dict[str, Any]) -> None:
    am: Alertmanager = silence_stack["am"]
    standin: SlackStandin = silence_stack["standin"]
    case, ts = open_group(silence_stack)

    def replies(word: str) -> list[str]:
        return [
            str(p.params.get("text"))
            for p in standin.calls("chat.postMessage", ok_only=True)
            if p.params.get("thread_ts") == ts and word in str(p.params.get("text"))
        ]

    added = amtool_silence(
        am.url, "add", "--author=bob", "--duration=2h", "--comment=on it", f"testcase={case}"
    )
    started = wait_until(lambda: replies("Silenced in Alertmanager"), 10, "the silence's thread reply")
    assert "by bob until" in started[0] and '"on it"' in started[0], started
    amtool_silence(am.url, "expire", added)
    wait_until(lambda: replies("The silence ended"), 10, "the end's thread reply")
    time.sleep(1.2)  # two more polls: nothing is announced twice
    assert len(replies("Silenced in Alertmanager")) == 1 and len(replies("The silence ended")) == 1


@pytest.mark.parametrize(
    ("fault", "outcome"),
    [
        (STATUS_500, c.BOT_OUTCOME_HTTP_ERROR),
        (GARBAGE, c.BOT_OUTCOME_INVALID_RESPONSE),
        (HANG, c.BOT_OUTCOME_NETWORK),
    ],
)
def test_status_answers_when_alertmanager_fails(
    silence_stack: dict[str, Any], fault: str, outcome: str
) -> None:
    bot: Bot = silence_stack["bot"]
    proxy: FaultProxy = silence_stack["proxy"]
    case, _ = open_group(silence_stack)
    before = reads(bot, outcome)
    proxy.set_fault("/api/v2/", fault)
    try:
        text, seconds = status(bot)
    finally:
        proxy.set_fault("/api/v2/", None)
    assert seconds < 3.0  # Slack's window
    assert "Silences could not be read from Alertmanager" in text
    assert case in text  # the groups are still listed
    assert reads(bot, outcome) == before + 1


def test_status_answers_when_alertmanager_is_down(silence_stack: dict[str, Any]) -> None:
    bot: Bot = silence_stack["bot"]
    (closed,) = free_ports(1)
    shown = bot.server.settings
    before = reads(bot, c.BOT_OUTCOME_NETWORK)
    case, _ = open_group(silence_stack)
    bot.server.settings = replace(shown, alertmanager_url=f"http://127.0.0.1:{closed}")
    try:
        text, _ = status(bot)
    finally:
        bot.server.settings = shown
    assert "Silences could not be read from Alertmanager (Connection refused)" in text
    assert case in text  # the groups are still listed
    assert reads(bot, c.BOT_OUTCOME_NETWORK) == before + 1


def test_silences_are_read_from_the_api_url_when_given(silence_stack: dict[str, Any]) -> None:
    """The compose stack's button URL is the browser's localhost:9093; the bot reads the API URL."""
    am: Alertmanager = silence_stack["am"]
    (closed,) = free_ports(1)
    argv = ["bot", "--channel", "#c", f"--alertmanager-url=http://127.0.0.1:{closed}"]
    settings = resolve_bot_settings(build_parser().parse_args([*argv, f"--alertmanager-api-url={am.url}"]))
    assert settings.alertmanager_url == f"http://127.0.0.1:{closed}"  # the button keeps its address
    assert settings.silences_url == am.url
    assert resolve_bot_settings(build_parser().parse_args(argv)).silences_url == settings.alertmanager_url
    bot: Bot = silence_stack["bot"]
    shown = bot.server.settings
    bot.server.settings = replace(
        shown, alertmanager_url=settings.alertmanager_url, alertmanager_api_url=am.url
    )
    try:
        text, _ = status(bot)
    finally:
        bot.server.settings = shown
    assert not text.startswith("*0 ")  # groups are open: the silences were read
    assert "could not be read" not in text and "not shown" not in text


def header_and_text(standin: SlackStandin, ts: str) -> tuple[str, str]:
    """The message's header as Slack shows it now, and all its blocks' text."""
    shown = standin.message("#triton-alerts", ts)
    assert shown is not None
    header = next(b["text"]["text"] for b in shown["blocks"] if b.get("type") == "header")
    return header, json.dumps(shown["blocks"])


def test_the_message_itself_says_silenced_and_goes_back_to_firing(silence_stack: dict[str, Any]) -> None:
    """The thread was the only place saying the group was silenced: the message kept FIRING."""
    am: Alertmanager = silence_stack["am"]
    standin: SlackStandin = silence_stack["standin"]
    case, ts = open_group(silence_stack)
    header, _ = header_and_text(standin, ts)
    assert "FIRING" in header
    added = amtool_silence(
        am.url,
        "add",
        "--author=carol",
        "--duration=2h",
        f"--comment=fixing, {SECRET_IN_COMMENT}",
        f"testcase={case}",
    )
    wait_until(lambda: "SILENCED" in header_and_text(standin, ts)[0], 10, "the message edited to SILENCED")
    header, body = header_and_text(standin, ts)
    assert "FIRING" not in header
    assert "*Silenced* in Alertmanager by carol until" in body and "fixing, " in body
    assert SECRET_IN_COMMENT not in body
    assert standin.message("#triton-alerts", ts)["text"].startswith("SILENCED")
    amtool_silence(am.url, "expire", added)
    wait_until(lambda: "FIRING" in header_and_text(standin, ts)[0], 10, "the message back to FIRING")
    _, body = header_and_text(standin, ts)
    assert "Silenced" not in body and "carol" not in body
    assert case in body  # the alert's own lines are back as rendered


def test_a_restarted_bot_does_not_announce_a_silence_in_force_again(tmp_path: Path) -> None:
    """What was announced was held in memory: each restart announced the same silence once more. A
    stored record that does not decode is a log line and a metric, and one announcement again."""
    (bot_port,) = free_ports(1)
    outbox = tmp_path / "outbox.sqlite3"
    with SlackStandin(token=SLACK_TOKEN) as standin:
        am = Alertmanager(tmp_path / "am", f"http://127.0.0.1:{bot_port}", "http://127.0.0.1:9")
        settings = BotSettings(
            channel="#triton-alerts", listen=f"127.0.0.1:{bot_port}", alertmanager_url=am.url
        )
        bots: list[Bot] = []

        def start() -> Bot:
            bot = Bot(settings, outbox, WEBHOOK_TOKEN, SLACK_TOKEN, standin.url, SIGNING_SECRET)
            assert bot.worker.silences is not None
            bot.worker.silences.poll_seconds = 0.3
            bots.append(bot.start())
            return bot

        def announced() -> int:
            return sum(
                "Silenced in Alertmanager" in str(p.params.get("text"))
                for p in standin.calls("chat.postMessage", ok_only=True)
                if p.params.get("thread_ts") == ts
            )

        try:
            bot = start()
            case, ts = open_group({"am": am, "standin": standin, "bot": bot})
            amtool_silence(
                am.url, "add", "--author=dan", "--duration=1h", "--comment=restart test", f"testcase={case}"
            )
            wait_until(lambda: announced() == 1, 10, "the silence announced")
            bot.stop()
            bot = start()
            wait_until(lambda: reads(bot, c.BOT_OUTCOME_OK) >= 3, 10, "three reads after the restart")
            assert announced() == 1
            bot.stop()
            with sqlite3.connect(outbox) as db:
                assert db.execute("UPDATE silence_announced SET ids = '[not json'").rowcount == 1
            bot = start()
            wait_until(lambda: announced() == 2, 10, "the silence announced once more")
            errors = bot.metrics.registry.get_sample_value(c.M_BOT_SILENCE_STATE_ERRORS)
            assert errors == 1
            wait_until(lambda: reads(bot, c.BOT_OUTCOME_OK) >= 4, 10, "more reads")
            assert announced() == 2  # stored again: announced once
        finally:
            for bot in bots:
                bot.stop()
            am.stop()


def test_a_notification_delivered_while_the_silence_holds_keeps_silenced(
    silence_stack: dict[str, Any],
) -> None:
    """A notification Alertmanager sent before the silence and the outbox delivered after it (a retry),
    here with a second alert of the group that the same silence holds: the edit keeps SILENCED and the
    note, and the next reads do not take the silence for ended."""
    am: Alertmanager = silence_stack["am"]
    standin: SlackStandin = silence_stack["standin"]
    bot: Bot = silence_stack["bot"]
    case, ts = open_group(silence_stack)
    amtool_silence(am.url, "add", "--author=erin", "--duration=1h", "--comment=on it", f"testcase={case}")
    wait_until(lambda: "SILENCED" in header_and_text(standin, ts)[0], 10, "the message edited to SILENCED")
    labels, annotations = unavailable_alert(case, model=f"m{case}", instance="triton-b:8003")
    am.post(labels, annotations)  # held by the silence in Alertmanager: it sends nothing

    def second() -> dict[str, Any] | None:
        listed = requests.get(f"{am.url}/api/v2/alerts", params={"filter": f"testcase={case}"}, timeout=5)
        return next((a for a in listed.json() if a["labels"]["instance"] == "triton-b:8003"), None)

    held = wait_until(second, 10, "the second alert in Alertmanager")
    assert held["status"]["state"] == "suppressed" and held["status"]["silencedBy"]
    ref = bot.outbox.message(next(m.group_key for m in bot.outbox.open_messages() if case in m.group_key))
    assert ref is not None
    with sqlite3.connect(bot.outbox.path) as db:
        (sent,) = db.execute(
            "SELECT payload FROM notifications WHERE group_key = ? ORDER BY id LIMIT 1", (ref.group_key,)
        ).fetchone()
    payload = json.loads(sent)
    payload["alerts"].append(
        {
            **payload["alerts"][0],
            "labels": held["labels"],
            "fingerprint": held["fingerprint"],
            "startsAt": held["startsAt"],
        }
    )
    answer = requests.post(
        f"{bot.url}{c.PATH_BOT_ALERTMANAGER}",
        data=json.dumps(payload),
        headers={"Authorization": f"Bearer {WEBHOOK_TOKEN}"},
        timeout=5,
    )
    assert answer.status_code == 200, answer.text
    wait_until(lambda: "triton-b" in header_and_text(standin, ts)[1], 10, "the message edited with 2 alerts")
    started = reads(bot, c.BOT_OUTCOME_OK)
    header, body = header_and_text(standin, ts)
    assert "SILENCED" in header and "FIRING" not in header
    assert "*Silenced* in Alertmanager by erin until" in body
    wait_until(lambda: reads(bot, c.BOT_OUTCOME_OK) >= started + 3, 10, "three more reads")
    header, body = header_and_text(standin, ts)
    assert "SILENCED" in header and "*Silenced* in Alertmanager by erin" in body
    replies = [
        str(p.params.get("text"))
        for p in standin.calls("chat.postMessage", ok_only=True)
        if p.params.get("thread_ts") == ts
    ]
    assert not any("silence ended" in r for r in replies), replies


def test_an_alert_resolving_under_its_silence_is_drawn_resolved(silence_stack: dict[str, Any]) -> None:
    """Alertmanager mutes a resolved alert its silence still matches (MuteStage does not look at the
    state), then deletes it from the group: no notification ever comes, and the message said SILENCED
    (then FIRING, "the silence ended") for an alert long resolved."""
    am: Alertmanager = silence_stack["am"]
    standin: SlackStandin = silence_stack["standin"]
    bot: Bot = silence_stack["bot"]
    assert bot.worker.silences is not None
    bot.worker.silences.gone_after_seconds = 1.0  # 150 s by default: Prometheus re-sends every minute
    case, ts = open_group(silence_stack)
    amtool_silence(am.url, "add", "--author=fay", "--duration=1h", "--comment=fixing", f"testcase={case}")
    wait_until(lambda: "SILENCED" in header_and_text(standin, ts)[0], 10, "the message edited to SILENCED")
    received = len(bot.outbox.notifications(case))
    labels, annotations = unavailable_alert(case, model=f"m{case}")
    am.post(labels, annotations, resolved=True)
    wait_until(lambda: "SILENCED" not in header_and_text(standin, ts)[0], 15, "the message drawn resolved")
    assert "RESOLVED" in header_and_text(standin, ts)[0].upper()
    # Alertmanager itself sent nothing (1 s group_interval: it had every chance); the one more stored is
    # the resolution the bot queued
    assert len(bot.outbox.notifications(case)) == received + 1
    _, body = header_and_text(standin, ts)
    assert "Silenced" not in body
    replies = [
        str(p.params.get("text"))
        for p in standin.calls("chat.postMessage", ok_only=True)
        if p.params.get("thread_ts") == ts
    ]
    assert not any("silence ended" in r for r in replies), replies
    assert any("resolved while silenced" in r for r in replies), replies
