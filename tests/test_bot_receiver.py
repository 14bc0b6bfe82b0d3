"""The bot's HTTP side: webhook authentication and input limits, Slack slash-command signatures,
and that no secret ever reaches the logs. An in-process bot talks to the Slack stand-in."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import requests

from triton_sre import conventions as c
from triton_sre.bot.command import Bot, read_bearer_token
from triton_sre.bot.config import BotSettings
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.bot.receiver import slack_signature, verify_slack_request
from triton_sre.checks import ConfigError
from triton_sre.demo import BROKEN_MISSING_MODULE
from triton_sre.redact import install_redaction

WEBHOOK_TOKEN = "am-" + uuid.uuid4().hex
SLACK_TOKEN = "xoxb-" + uuid.uuid4().hex
SIGNING_SECRET = "sig-" + uuid.uuid4().hex
MAX_BODY = 64 * 1024


@pytest.fixture(scope="module")
def standin() -> Iterator[SlackStandin]:
    with SlackStandin(token=SLACK_TOKEN) as server:
        yield server


def _running_bot(
    tmp_path_factory: pytest.TempPathFactory, standin: SlackStandin, triton_url: str | None
) -> Bot:
    settings = BotSettings(
        channel="#t",
        listen="127.0.0.1:0",
        max_body_bytes=MAX_BODY,
        triton_url=triton_url,
        runbook_base_url="https://runbooks.example.com/",
        retry_base_seconds=0.1,
        retry_max_seconds=0.5,
    )
    path = tmp_path_factory.mktemp("bot-recv") / "outbox.sqlite3"
    return Bot(settings, path, WEBHOOK_TOKEN, SLACK_TOKEN, standin.url, SIGNING_SECRET)


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory, standin: SlackStandin) -> Iterator[Bot]:
    """The bot without a Triton: authentication, limits and logging need none, so these
    security tests stay in the quick subset (``-m 'not triton and not server and not slow'``)."""
    with _running_bot(tmp_path_factory, standin, None) as running:
        yield running


@pytest.fixture(scope="module")
def diagnosing_bot(
    tmp_path_factory: pytest.TempPathFactory, standin: SlackStandin, triton: Any
) -> Iterator[Bot]:
    """The bot with live diagnosis against the shared real Triton (a ``triton`` test)."""
    with _running_bot(tmp_path_factory, standin, triton.http_url) as running:
        yield running


def notification(case: str, n_alerts: int = 1) -> dict[str, Any]:
    alerts = [
        {
            "status": "firing",
            "labels": {
                "alertname": c.ALERT_SERVER_DOWN,
                "instance": f"triton-{i}:8002",
                "severity": "page",
                "case": case,
            },
            "annotations": {
                "summary": f"Triton triton-{i} is down ({case})",
                "runbook_url": "runbooks/triton-server-down.md",
            },
            "startsAt": "2026-11-29T17:00:00Z",
            "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "",
            "fingerprint": f"{case}{i:04d}",
        }
        for i in range(n_alerts)
    ]
    return {
        "version": "4",
        "groupKey": f'{{}}:{{case="{case}"}}',
        "truncatedAlerts": 0,
        "status": "firing",
        "receiver": "bot",
        "groupLabels": {"case": case},
        "commonLabels": {"alertname": c.ALERT_SERVER_DOWN, "severity": "page", "case": case},
        "commonAnnotations": {},
        "externalURL": "http://alertmanager.example.com:9093",
        "alerts": alerts,
        "someFieldFromTheFuture": {"x": 1},
    }


def total(bot: Bot) -> int:
    return sum(bot.outbox.counts().values())


def post(bot: Bot, body: bytes | str, token: str | None = WEBHOOK_TOKEN, **headers: str) -> requests.Response:
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return requests.post(f"{bot.url}{c.PATH_BOT_ALERTMANAGER}", data=body, headers=headers, timeout=5)


def test_accepts_a_notification_and_posts_it(bot: Bot, standin: SlackStandin) -> None:
    case = uuid.uuid4().hex[:8]
    answer = post(bot, json.dumps(notification(case)))
    assert answer.status_code == 200, answer.text
    assert answer.json()["status"] == "queued"
    assert standin.wait_for(
        lambda: any(case in json.dumps(x.params) for x in standin.calls("chat.postMessage")), 10
    )


# Fixed ids: the token is random per process, and pytest-xdist's workers must collect the same names.
@pytest.mark.parametrize(
    "token", [None, "", "wrong-token", WEBHOOK_TOKEN + "x"], ids=["none", "empty", "wrong", "longer"]
)
def test_missing_or_wrong_bearer_is_401(bot: Bot, token: str | None) -> None:
    before = total(bot)
    answer = post(bot, json.dumps(notification("auth")), token=token)
    assert answer.status_code == 401
    assert answer.headers.get("WWW-Authenticate") == "Bearer"
    assert total(bot) == before


def test_other_auth_schemes_are_401(bot: Bot) -> None:
    answer = requests.post(
        f"{bot.url}{c.PATH_BOT_ALERTMANAGER}", data=b"{}", auth=("user", WEBHOOK_TOKEN), timeout=5
    )
    assert answer.status_code == 401


def test_oversized_body_is_413_and_the_bot_keeps_serving(bot: Bot) -> None:
    big = json.dumps(notification("big", n_alerts=400))
    assert len(big) > MAX_BODY
    assert post(bot, big).status_code == 413
    assert requests.get(f"{bot.url}{c.PATH_HEALTHZ}", timeout=5).status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"\xff\xfe\x00",
        b"[]",
        b'{"alerts": "nope"}',
        b'"string"',
        b"",
        b'{"alerts": [1]}',
        b"[" * 50000,
    ],
)
def test_malformed_body_is_400(bot: Bot, body: bytes) -> None:
    before = total(bot)
    answer = post(bot, body)
    assert answer.status_code == 400, answer.text
    assert total(bot) == before


def test_unknown_paths_and_health(bot: Bot) -> None:
    assert requests.get(f"{bot.url}/nope", timeout=5).status_code == 404
    health = requests.get(f"{bot.url}{c.PATH_HEALTHZ}", timeout=5)
    assert health.status_code == 200 and "outbox" in health.json()


def slash(
    bot: Bot,
    text: str,
    *,
    secret: str = SIGNING_SECRET,
    age: float = 0,
    signature: str | None = None,
    timestamp: str | None = None,
    timeout: float = 5,
) -> requests.Response:
    body = urlencode({"command": c.SLASH_COMMAND, "text": text, "user_id": "U1", "channel_id": "C1"}).encode()
    ts = timestamp if timestamp is not None else str(int(time.time() - age))
    headers = {
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": signature if signature is not None else slack_signature(secret, ts, body),
        "Content-Type": "application/x-www-form-urlencoded",
    }
    return requests.post(f"{bot.url}{c.PATH_BOT_SLACK_COMMANDS}", data=body, headers=headers, timeout=timeout)


def test_slash_command_status(bot: Bot) -> None:
    answer = slash(bot, "status")
    assert answer.status_code == 200
    assert "alert group(s) firing" in answer.json()["text"]


def test_slash_command_diagnose_answers_within_3_seconds(diagnosing_bot: Bot) -> None:
    bot = diagnosing_bot
    started = time.monotonic()
    answer = slash(bot, f"diagnose {BROKEN_MISSING_MODULE}")
    assert time.monotonic() - started < 3.0
    assert answer.status_code == 200
    text = answer.json()["text"]
    assert c.RUNBOOK_PYTHON_MODULE_MISSING in text and BROKEN_MISSING_MODULE in text
    assert f"https://runbooks.example.com/{c.RUNBOOK_PYTHON_MODULE_MISSING}.md" in text
    assert "does not know" in slash(bot, "diagnose no_such_model").json()["text"]
    assert "Usage" in slash(bot, "help").json()["text"]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"secret": "forged-secret"},
        {"age": 330},  # well outside the 300 s window: the boundary is test_signature_verification_window's
        {"age": -330},
        {"signature": ""},
        {"signature": "v0=" + "0" * 64},
        {"timestamp": "not-a-number"},
    ],
)
def test_forged_or_stale_slack_signature_is_401(bot: Bot, kwargs: dict[str, Any]) -> None:
    assert slash(bot, "status", **kwargs).status_code == 401


def test_signature_verification_window() -> None:
    body = b"text=status"
    now = 1_800_000_000
    sig = slack_signature("s", str(now), body)
    assert verify_slack_request("s", str(now), sig, body, now=now + 299)
    assert not verify_slack_request("s", str(now), sig, body, now=now + 301)
    assert not verify_slack_request("s", str(now), sig, body + b"x", now=now)
    assert not verify_slack_request("", str(now), sig, body, now=now)


def test_bearer_token_sources(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("from-file\n")
    assert read_bearer_token(str(token_file), {c.ENV_BOT_TOKEN: "from-env"}) == "from-file"
    assert read_bearer_token(None, {c.ENV_BOT_TOKEN: "from-env"}) == "from-env"
    with pytest.raises(ConfigError, match=c.ENV_BOT_TOKEN):
        read_bearer_token(None, {})
    (tmp_path / "empty").write_text("")
    with pytest.raises(ConfigError, match="empty"):
        read_bearer_token(str(tmp_path / "empty"), {})


def test_secrets_never_logged(bot: Bot, standin: SlackStandin, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    case = uuid.uuid4().hex[:8]
    standin.fail_next(1, status=429, retry_after=0.2, methods=("chat.postMessage",))
    assert post(bot, json.dumps(notification(case))).status_code == 200
    post(bot, json.dumps(notification(case + "x")), token="wrong")
    slash(bot, "status", secret="forged")
    slash(bot, "status")
    assert standin.wait_for(
        lambda: any(case in json.dumps(x.params) for x in standin.calls("chat.postMessage", ok_only=True)), 10
    )
    text = caplog.text
    assert "rate limited" in text  # the retry was logged...
    for secret in (WEBHOOK_TOKEN, SLACK_TOKEN, SIGNING_SECRET):
        assert secret not in text  # ...and no secret was


def test_standin_rejects_wrong_token(standin: SlackStandin) -> None:
    from slack_sdk import WebClient
    from slack_sdk.errors import SlackApiError

    with pytest.raises(SlackApiError) as raised:
        WebClient(token="xoxb-wrong", base_url=standin.url).chat_postMessage(channel="#t", text="x")
    assert raised.value.response["error"] == "invalid_auth"


def test_cli_refuses_to_start_without_secrets_or_with_bad_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from triton_sre.cli import main

    for name in (c.ENV_BOT_TOKEN, c.ENV_SLACK_BOT_TOKEN, c.ENV_SLACK_SIGNING_SECRET):
        monkeypatch.delenv(name, raising=False)
    outbox = str(tmp_path / "o.sqlite3")
    assert main(["bot", "--channel", "#c", "--outbox", outbox, "--listen", "127.0.0.1:0"]) == 2
    assert c.ENV_BOT_TOKEN in capsys.readouterr().err
    monkeypatch.setenv(c.ENV_BOT_TOKEN, WEBHOOK_TOKEN)
    assert main(["bot", "--channel", "#c", "--outbox", outbox, "--listen", "127.0.0.1:0"]) == 2
    assert c.ENV_SLACK_BOT_TOKEN in capsys.readouterr().err
    monkeypatch.setenv(c.ENV_SLACK_BOT_TOKEN, SLACK_TOKEN)
    assert main(["bot", "--outbox", outbox, "--listen", "127.0.0.1:0"]) == 2
    assert "no channel" in capsys.readouterr().err
    bad = tmp_path / "bot.yaml"
    bad.write_text("bot:\n  routes: {}\n")
    assert main(["bot", "--config", str(bad), "--outbox", outbox]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "bot.routes" in err
    assert WEBHOOK_TOKEN not in err and SLACK_TOKEN not in err


def test_metrics_count_notifications_slack_calls_and_the_outbox(bot: Bot, standin: SlackStandin) -> None:
    case = uuid.uuid4().hex[:8]
    standin.fail_next(1, status=429, retry_after=0.1, methods=("chat.postMessage",))
    assert post(bot, json.dumps(notification(case))).status_code == 200
    assert standin.wait_for(
        lambda: any(case in json.dumps(x.params) for x in standin.calls("chat.postMessage", ok_only=True)), 10
    )
    expected = [
        c.M_BOT_NOTIFICATIONS,
        f'{c.M_BOT_SLACK_CALLS}{{method="chat.postMessage",outcome="ratelimited"}}',
        f'{c.M_BOT_SLACK_CALLS}{{method="chat.postMessage",outcome="ok"}}',
        f'{c.M_BOT_ACTIONS}{{{c.L_ACTION}="{c.BOT_ACTION_POSTED}"}}',
        f'{c.M_BOT_OUTBOX}{{state="done"}}',
    ]
    text = ""
    deadline = time.monotonic() + 10  # the outbox commits "done" just after Slack's answer
    while time.monotonic() < deadline:
        text = requests.get(f"{bot.url}{c.PATH_METRICS}", timeout=5).text
        if all(line in text for line in expected):
            break
        time.sleep(0.05)
    assert [line for line in expected if line not in text] == []


# -- hardening (issue #12, defects 6 and 7) --------------------------------------------------------
def _raw(bot: Bot, request: bytes) -> bytes:
    host, port = bot.url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_token_in_the_url_query_is_never_logged(bot: Bot, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    # what `triton-sre bot` does for its root handlers (cli.py), on the handler this test reads:
    # every line redacted, this process's HTTP client's debug lines included
    install_redaction([caplog.handler])
    query = urlencode({"token": WEBHOOK_TOKEN})
    base = f"{bot.url}{c.PATH_BOT_ALERTMANAGER}?{query}"
    assert requests.post(base, data=b"{}", timeout=5).status_code == 401  # refused: query is no auth
    assert requests.get(base, timeout=5).status_code == 405
    assert requests.get(f"{bot.url}/nope?{query}", timeout=5).status_code == 404
    requests.request("PROPFIND", base, timeout=5)
    # malformed request lines are logged by http.server's error path
    _raw(bot, f"GET /x?{query} HTTP/1.1 extra\r\n\r\n".encode())
    _raw(bot, f"GET /x?{query} HTTP/9.9\r\n\r\n".encode())
    _raw(bot, f"GET http://user:{WEBHOOK_TOKEN}@host/x HTTP/1.0\r\n\r\n".encode())
    text = caplog.text
    assert c.PATH_BOT_ALERTMANAGER in text and "401" in text  # the access lines were logged...
    assert WEBHOOK_TOKEN not in text  # ...without the token


@pytest.mark.parametrize("method", ["OPTIONS", "TRACE", "PROPFIND", "PUT", "DELETE", "PATCH", "BREW"])
@pytest.mark.parametrize("path", [c.PATH_BOT_ALERTMANAGER, c.PATH_HEALTHZ, "/nope"])
def test_unsupported_methods_are_405_with_allow(bot: Bot, method: str, path: str) -> None:
    response = requests.request(method, f"{bot.url}{path}", timeout=5)
    assert response.status_code == 405
    assert response.headers["Allow"] == "GET, HEAD, POST"


def test_wrong_method_for_an_endpoint_is_405(bot: Bot) -> None:
    wrong_get = requests.get(f"{bot.url}{c.PATH_BOT_ALERTMANAGER}", timeout=5)
    assert (wrong_get.status_code, wrong_get.headers["Allow"]) == (405, "POST")
    wrong_post = requests.post(f"{bot.url}{c.PATH_HEALTHZ}", data=b"x", timeout=5)
    assert (wrong_post.status_code, wrong_post.headers["Allow"]) == (405, "GET, HEAD")
    head = requests.head(f"{bot.url}{c.PATH_HEALTHZ}", timeout=5)
    assert head.status_code == 200 and not head.content


def test_idle_sockets_do_not_starve_the_webhook(bot: Bot) -> None:
    host, port = bot.url.removeprefix("http://").rsplit(":", 1)
    threads = threading.active_count()
    idle = [socket.create_connection((host, int(port)), timeout=5) for _ in range(300)]
    try:
        case = uuid.uuid4().hex[:8]
        assert post(bot, json.dumps(notification(case))).status_code == 200
        assert requests.get(f"{bot.url}{c.PATH_HEALTHZ}", timeout=5).status_code == 200
        assert threading.active_count() < threads + 20  # not a thread per idle socket
    finally:
        for sock in idle:
            sock.close()
