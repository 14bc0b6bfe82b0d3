"""Fault probes of the services: they keep serving, answer 4xx and count the fault in a metric.

The exporter polls a server that answers every path with an HTML page (a proxy's error page in
front of Triton) or never answers; the bot gets webhooks that are garbage, oversized, of the wrong
content type or unauthenticated. Faults in front of the real Triton are in test_exporter_faults.py.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest
import requests
from fake_prometheus import serve
from prometheus_client.parser import text_string_to_metric_families
from test_bot_receiver import (
    MAX_BODY,
    SIGNING_SECRET,
    SLACK_TOKEN,
    WEBHOOK_TOKEN,
    bot,
    notification,
    post,
    slash,
    standin,
    total,
)
from test_fault_probes import Silent, html_url, silent

from triton_sre import conventions as c
from triton_sre.bot.command import Bot
from triton_sre.bot.config import BotSettings
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.bot.receiver import SLACK_COMMAND_WINDOW_S
from triton_sre.bot.slack import MAX_RETRY_AFTER_SECONDS
from triton_sre.config import ExporterSettings
from triton_sre.exporter.service import Exporter, ExporterServer

__all__ = ["bot", "html_url", "silent", "standin"]  # fixtures shared with those modules


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _poll_errors(samples: dict, target: str, kind: str) -> float:
    return samples.get((c.M_POLL_ERRORS, ((c.L_KIND, kind), (c.L_TARGET, target))), 0.0)


def test_exporter_polling_an_html_page_keeps_serving_and_counts_parse_errors(html_url: str) -> None:
    settings = ExporterSettings(
        triton_url=html_url, metrics_url=f"{html_url}/metrics", interval=3600, timeout=2.0
    )
    with ExporterServer(Exporter(settings), "127.0.0.1", 0) as server:
        server.exporter.poll_once()
        scrape = requests.get(server.url + c.PATH_METRICS, timeout=10)
        assert scrape.status_code == 200
        samples = _samples(scrape.text)
        assert samples[(c.M_UP, ())] == 0
        # HTML is not Prometheus text, nor the index's or the statistics' JSON
        for target in (c.TARGET_METRICS, c.TARGET_INDEX, c.TARGET_STATS):
            assert _poll_errors(samples, target, c.FAULT_PARSE) >= 1, target
        assert requests.get(server.url + c.PATH_HEALTHZ, timeout=5).status_code == 200
        assert requests.get(server.url + c.PATH_READYZ, timeout=5).status_code == 503


def test_exporter_polling_a_silent_server_counts_a_bounded_timeout(silent: Silent) -> None:
    settings = ExporterSettings(
        triton_url=silent.url, metrics_url=f"{silent.url}/metrics", interval=3600, timeout=0.5
    )
    with ExporterServer(Exporter(settings), "127.0.0.1", 0) as server:
        server.exporter.poll_once()  # returns: every fetch is cut at its deadline
        samples = _samples(requests.get(server.url + c.PATH_METRICS, timeout=10).text)
        assert silent.accepted.is_set()
        assert samples[(c.M_UP, ())] == 0
        assert _poll_errors(samples, c.TARGET_METRICS, c.FAULT_TIMEOUT) >= 1


def _refused(bot: Bot) -> dict[str, float]:
    text = requests.get(f"{bot.url}{c.PATH_METRICS}", timeout=5).text
    name = c.M_BOT_REFUSED
    return {
        dict(labels)[c.L_CODE]: value for (sample, labels), value in _samples(text).items() if sample == name
    }


@pytest.mark.parametrize(
    ("body", "headers", "token", "status"),
    [
        (b"hello", {"Content-Type": "text/plain"}, WEBHOOK_TOKEN, 415),
        (b"a=1&b=2", {"Content-Type": "application/x-www-form-urlencoded"}, WEBHOOK_TOKEN, 415),
        (json.dumps(notification("ct")).encode(), {"Content-Type": "text/html"}, WEBHOOK_TOKEN, 415),
        (bytes(range(256)) * 8, {"Content-Type": "application/json"}, WEBHOOK_TOKEN, 400),
        (b'{"alerts": [', {"Content-Type": "application/json; charset=utf-8"}, WEBHOOK_TOKEN, 400),
        (b"x" * (MAX_BODY + 1), {"Content-Type": "application/json"}, WEBHOOK_TOKEN, 413),
        (b"{}", {"Content-Type": "application/json"}, "wrong-token", 401),
    ],
    ids=["text", "form", "json-as-html", "binary", "truncated", "oversized", "unauthorized"],
)
def test_a_bad_webhook_is_refused_counted_and_the_bot_keeps_serving(
    bot: Bot, body: bytes, headers: dict[str, str], token: str, status: int
) -> None:
    before, queued = _refused(bot), total(bot)
    answer = post(bot, body, token, **headers)
    assert answer.status_code == status, answer.text
    assert total(bot) == queued  # nothing queued
    after = _refused(bot)
    assert after.get(str(status), 0) == before.get(str(status), 0) + 1
    assert requests.get(f"{bot.url}{c.PATH_HEALTHZ}", timeout=5).status_code == 200
    good = post(bot, json.dumps(notification(f"after-{status}")), **{"Content-Type": "application/json"})
    assert good.status_code == 200  # the next real notification is still taken


def test_a_json_content_type_with_parameters_is_accepted(bot: Bot) -> None:
    answer = post(
        bot, json.dumps(notification("ct-params")), **{"Content-Type": "application/json; charset=utf-8"}
    )
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("retry_after", [float("inf"), float("nan"), -5.0, 1e12])
def test_a_retry_after_slack_never_means_keeps_the_bot_delivering(
    bot: Bot, standin: SlackStandin, retry_after: float
) -> None:
    """`Retry-After: inf` (or 1e12) killed the delivery thread (OverflowError in its wait) or paused it
    for ages while webhooks were still answered 200; `nan` and `-5` retried at once, with no pause."""
    case = f"retry-after-{retry_after:g}"
    assert standin.wait_for(lambda: not bot.outbox.counts().get("pending"), 10)  # the fault is this case's
    standin.fail_next(1, status=429, retry_after=retry_after, methods=("chat.postMessage",))
    sent = time.monotonic()
    answer = post(bot, json.dumps(notification(case)), **{"Content-Type": "application/json"})
    assert answer.status_code == 200
    assert standin.wait_for(lambda: _refused_by_slack(standin, case) >= 1, 10)
    if math.isfinite(retry_after) and retry_after > 0:  # a real, if absurd, wait: capped, the thread alive
        time.sleep(0.5)
        assert bot.worker._thread is not None and bot.worker._thread.is_alive()
        pause = bot.worker._paused_until - time.time()
        assert 0 < pause <= MAX_RETRY_AFTER_SECONDS
        bot.worker._paused_until = 0.0  # the test does not wait out the cap
        bot.outbox.retry_later(_pending_id(bot), time.time(), "test: cap checked")
        bot.worker.wake()
    else:  # not a number of seconds: Slack's default pause (1 s), neither none nor forever
        assert standin.wait_for(lambda: _delivered(standin, case), 10)
        posts = [x for x in standin.calls("chat.postMessage") if case in json.dumps(x.params)]
        assert posts[-1].at - posts[0].at >= 0.8
    assert standin.wait_for(lambda: _delivered(standin, case), 10), time.monotonic() - sent
    assert bot.worker._thread is not None and bot.worker._thread.is_alive()


def _refused_by_slack(standin: SlackStandin, case: str) -> int:
    calls = standin.calls("chat.postMessage")
    return sum(1 for x in calls if x.status == 429 and case in json.dumps(x.params))


def _delivered(standin: SlackStandin, case: str) -> bool:
    return any(case in json.dumps(x.params) for x in standin.calls("chat.postMessage", ok_only=True))


def _pending_id(bot: Bot) -> int:
    found, _ = bot.outbox.next_due(time.time() + 2 * MAX_RETRY_AFTER_SECONDS)
    assert found is not None
    return found.id


SLOW_QUERY_S = 0.5


def test_a_slow_prometheus_cannot_hold_a_slash_command_past_slacks_window(
    tmp_path: Path, standin: SlackStandin
) -> None:
    """`/triton rollout <model>` made its 19 queries one after another at up to 5 s each: against a
    Prometheus taking 0.5 s per answer it held one of the bot's 16 HTTP workers for ~10 s, long after
    Slack (3 s) had dropped the answer; a slower one, a minute per command."""
    # One answer for every instant query: the versions' request rates, and `time()` read from the first
    # (a plausible clock, as a real Prometheus gives; prom.PLAUSIBLE_CLOCK refuses 5).
    now = f"{time.time():.3f}"
    versions = [{"metric": {c.LABEL_VERSION: v}, "value": [0, now]} for v in ("1", "2")]
    httpd = serve(lambda q, ts: {"resultType": "matrix", "result": []}, delay=SLOW_QUERY_S, instant=versions)
    prometheus = f"http://127.0.0.1:{httpd.server_address[1]}"
    settings = BotSettings(channel="#c", listen="127.0.0.1:0", prometheus_url=prometheus)
    try:
        with Bot(
            settings, tmp_path / "o.sqlite3", WEBHOOK_TOKEN, SLACK_TOKEN, standin.url, SIGNING_SECRET
        ) as b:
            started = time.monotonic()
            answer = slash(b, "rollout m", timeout=30)
            took = time.monotonic() - started
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert answer.status_code == 200
    assert took < SLACK_COMMAND_WINDOW_S, (took, answer.json())
    assert "Prometheus" in answer.json()["text"] and "within" in answer.json()["text"], answer.json()


def test_a_silent_prometheus_delays_a_big_groups_message_by_one_budget(
    tmp_path: Path, standin: SlackStandin, silent: Silent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each SLO alert of a group asked Prometheus for its burn rate, budget and latency, each query
    waiting its 5 s: a group of 20 alerts against a Prometheus that never answers held the one delivery
    thread 100 s (10,000 alerts: 14 hours), and every other group's message waited behind it."""
    from triton_sre.bot import worker

    monkeypatch.setattr(worker, "FACTS_PROMETHEUS_BUDGET_S", 1.0)
    case = "silent-prometheus"
    body = notification(case, n_alerts=20)
    for i, alert in enumerate(body["alerts"]):
        alert["labels"] |= {"alertname": c.ALERT_SLO_ERROR_BUDGET_BURN, "slo": "availability"}
        alert["labels"] |= {"window": "5m", "model": f"m{i}"}
    settings = BotSettings(channel="#c", listen="127.0.0.1:0", prometheus_url=silent.url, chart=False)
    with Bot(settings, tmp_path / "o.sqlite3", WEBHOOK_TOKEN, SLACK_TOKEN, standin.url) as b:
        sent = time.monotonic()
        answer = post(b, json.dumps(body), **{"Content-Type": "application/json"})
        assert answer.status_code == 200
        assert standin.wait_for(lambda: _delivered(standin, case), 15), time.monotonic() - sent
        took = time.monotonic() - sent
    assert silent.accepted.is_set()  # the facts were asked for, and given up on within the budget
    assert took < 1.0 + 5.0, took
