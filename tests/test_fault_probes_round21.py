"""Fault probes, round twenty-one (branch `probes21`, 2026-12-07): Slack threads whose parent was deleted,
the exporter behind a proxy that rewrites Triton's answers, JSON output, the moments of change — the
probes listed in docs/failure-behaviour.md, "Fault probes, round twenty-one". Each test of a fix failed
before it."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from backfilled_prometheus import Series, backfilled
from faultproxy import MISLABELLED, FaultProxy
from live_prometheus import Prom
from test_bot_alertmanager import (
    SIGNING_SECRET,
    SLACK_TOKEN,
    WEBHOOK_TOKEN,
    Alertmanager,
    new_case,
    wait_until,
)
from test_bot_page_threads import INHIBIT, SEVERITY_ROUTES, burn
from test_bot_receiver import notification, post
from test_exporter_faults import assert_no_bad_values, errors, up

from triton_sre import conventions as c
from triton_sre.bot.command import Bot
from triton_sre.bot.config import BotSettings, load_bot_config
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.cli import main
from triton_sre.config import ExporterSettings
from triton_sre.data import shipped
from triton_sre.exporter.service import Exporter
from triton_sre.prom import Prometheus
from triton_sre.rollout.live import verdict_now
from triton_sre.rollout.sides import version_sides
from triton_sre.slo import DEFAULT_SPEC_FILE, default_spec
from triton_sre.stack.processes import free_ports

CHANNEL = "#triton-alerts"


def test_a_message_whose_thread_was_deleted_in_slack_is_posted_in_the_channel(tmp_path: Path) -> None:
    """A resolved page's message deleted in Slack (someone tidying the channel) within the hour a ticket
    of the same SLO is threaded under it: Slack answers the reply `thread_not_found`, which retrying cannot
    mend. Before, the bot gave the notification up ("Slack refused the message, giving up") and the ticket
    never showed; a ticket whose own reply and page were both deleted lost its resolution the same way.
    The real Alertmanager routes and inhibits as deploy's alertmanager.yml does."""
    (bot_port,) = free_ports(1)
    with SlackStandin(token=SLACK_TOKEN) as standin:
        am = Alertmanager(
            tmp_path / "am", f"http://127.0.0.1:{bot_port}", "http://127.0.0.1:9", SEVERITY_ROUTES, INHIBIT
        )
        settings = BotSettings(
            channel=CHANNEL,
            listen=f"127.0.0.1:{bot_port}",
            alertmanager_url=am.url,
            retry_base_seconds=0.2,
            retry_max_seconds=1.0,
        )
        bot = Bot(
            settings, tmp_path / "outbox.sqlite3", WEBHOOK_TOKEN, SLACK_TOKEN, standin.url, SIGNING_SECRET
        )
        bot.start()
        try:
            case = new_case()
            page, ticket = burn(case, c.BURN_TIERS[1]), burn(case, c.BURN_TIERS[2])
            notes = {"summary": f"burning {case}"}

            def said(word: str, *, top_level: bool) -> list[dict[str, object]]:
                return [
                    call.params
                    for call in standin.calls("chat.postMessage", ok_only=True)
                    if case in str(call.params)
                    and word in str(call.params["text"])
                    and bool(call.params.get("thread_ts")) != top_level
                ]

            am.post(page, notes)
            (first,) = wait_until(lambda: said("FIRING [page]", top_level=True), 15, "the page's message")
            page_ts = next(
                str(call.response["ts"])
                for call in standin.calls("chat.postMessage", ok_only=True)
                if call.params is first
            )
            am.post(page, notes, resolved=True)
            wait_until(
                lambda: str((standin.message(CHANNEL, page_ts) or {}).get("text")).startswith("RESOLVED"),
                15,
                "the page's message resolved",
            )

            # a ticket within the hour: threaded under the page, which is still there
            am.post(ticket, notes)
            (reply,) = wait_until(lambda: said("FIRING [ticket]", top_level=False), 15, "the ticket's reply")
            assert reply["thread_ts"] == page_ts
            reply_ts = next(
                str(call.response["ts"])
                for call in standin.calls("chat.postMessage", ok_only=True)
                if call.params is reply
            )
            # both deleted in Slack; the ticket resolves: its edit is `message_not_found`, its message posted
            # again under its page, which is `thread_not_found`: it is posted in the channel instead
            assert standin.delete(CHANNEL, page_ts) and standin.delete(CHANNEL, reply_ts)
            am.post(ticket, notes, resolved=True)
            wait_until(
                lambda: said("RESOLVED [ticket]", top_level=True),
                15,
                "the ticket's resolution in the channel",
            )

            # a second ticket of the same SLO within the hour: its page's thread is gone, its own message
            other = {**burn(case, c.BURN_TIERS[2]), "testcase": case + "b"}
            am.post(other, notes)
            shown = wait_until(
                lambda: [p for p in said("FIRING [ticket]", top_level=True) if case + "b" in str(p)],
                15,
                "the second ticket in the channel",
            )
            assert len(shown) == 1
            gone = [
                call
                for call in standin.calls("chat.postMessage")
                if call.response.get("error") == "thread_not_found" and case in str(call.params)
            ]
            assert len(gone) == 2, [call.params.get("text") for call in gone]  # each asked once, not retried
            assert bot.outbox.counts().get("failed", 0) == 0, bot.outbox.counts()
        finally:
            bot.stop()
            am.stop()


SCRAPE_S, HISTORY_S, RATE = 15.0, 1200.0, 10.0  # the rollout window (15m) is inside the history
GONE_S = 400.0  # a side's series end this long before now: unloaded, its pods gone, its scrape failing


def _rollout_series(stops: str | None, starts_late: bool = False) -> list[Series]:
    """Versions 1 and 2 of `vs` failing alike (1 %); `stops` ("1", "2" or "both"): that version's series
    end GONE_S before now; `starts_late`: version 2's begin 8 minutes before now (a canary just deployed)."""
    now = time.time()
    start = now - HISTORY_S
    stamps = [start + SCRAPE_S * i for i in range(int(HISTORY_S / SCRAPE_S))]
    series: list[Series] = []
    for version in ("1", "2"):
        labels = {c.LABEL_JOB: c.DEFAULT_TRITON_JOB, c.LABEL_MODEL: "vs", c.LABEL_VERSION: version}
        per_s = {
            c.NV_REQUEST_SUCCESS: RATE * 0.99,
            c.NV_REQUEST_FAILURE: RATE * 0.01,
            c.NV_INFERENCE_COUNT: RATE * 0.99,
            c.NV_EXEC_COUNT: RATE,
        }
        kept = [t for t in stamps if not (stops in (version, "both") and t > now - GONE_S)]
        if starts_late and version == "2":
            kept = [t for t in kept if t > now - 480]
        series += [(name, labels, [(t, v * (t - start)) for t in kept]) for name, v in per_s.items()]
    return series


def _rollout(prom: Prom, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    argv = ["rollout", "check", "--prometheus", prom.url, "--model", "vs", "--baseline-version", "1"]
    code = main([*argv, "--candidate-version", "2", "--window", "15m", "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("stops", ["2", "1"])
def test_a_side_whose_series_stopped_mid_window_is_no_pass(
    stops: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A canary unloaded (or its pods gone, its scrape failing) about 7 minutes before a 15-minute check
    still passed on the 11 intervals it had, exit 0: a pipeline promoted a version no longer serving. The
    baseline's stopping alike compares two different stretches of time. A real Prometheus holding the
    series (tests/backfilled_prometheus.py); the bot's verdict (`verdict_now`) judges alike."""
    with backfilled(tmp_path, _rollout_series(stops)) as prom:
        code, verdict = _rollout(prom, capsys)
        sides = version_sides(c.DEFAULT_TRITON_JOB, "vs", "1", "2")
        spec = default_spec()
        bots = verdict_now(
            Prometheus(prom.url),
            sides,
            spec.rollout,
            (),
            c.DEFAULT_TRITON_JOB,
            900.0,
            exporter_job=spec.exporter_job,
        )
    assert code == c.EXIT_INCONCLUSIVE, verdict
    assert verdict["verdict"] == bots.verdict == c.ROLLOUT_INCONCLUSIVE
    said = re.fullmatch(
        rf"no figure read is worse beyond its margin, but vs v{stops}'s requests stop being reported "
        r"(\d+)s before the other side's; a pass on a version that stopped serving \(unloaded, its pods "
        r"gone, or its scrape failing\) is not a pass",
        verdict["reason"],
    )
    assert said is not None and GONE_S - 2 * SCRAPE_S <= int(said.group(1)) <= GONE_S + 60, verdict["reason"]
    assert bots.reason == verdict["reason"]
    assert all(f["verdict"] == c.ROLLOUT_PASS for f in verdict["figures"])  # every figure read passed


@pytest.mark.parametrize(("stops", "starts_late"), [(None, True), ("both", False)])
def test_a_canary_that_started_mid_window_or_a_store_behind_on_both_sides_still_passes(
    stops: str | None, starts_late: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The other shapes of a side with fewer intervals: a canary deployed 8 minutes ago and serving to the
    end; both sides ending alike before the window's end (a store that ingests late, remote write or a
    querier's lag, misses the newest data of both): a side stopped is one that ends before the other."""
    with backfilled(tmp_path, _rollout_series(stops, starts_late)) as prom:
        code, verdict = _rollout(prom, capsys)
    assert (code, verdict["verdict"]) == (c.EXIT_OK, c.ROLLOUT_PASS), verdict


_SPEC_EDITS = {  # the shipped spec with one value ending in a newline (YAML's `|` block scalar gives one)
    "autoscaling deployment": (lambda s: s["autoscaling"][0].update(deployment="triton\n"), "deployment"),
    "cluster label": (lambda s: s.update(cluster_label="cluster\n"), "cluster_label"),
    "SLO name": (lambda s: s["slos"][0].update(name="availability\n"), "name"),
    "SLO period": (lambda s: s["slos"][0].update(period="30d\n"), "period"),
    "triton job": (lambda s: s["scrape"].update(triton_job="triton\n"), "triton_job"),
    "model list": (lambda s: s["slos"][0].update(models=["resnet\n"]), "models"),
}


@pytest.mark.parametrize("edit", sorted(_SPEC_EDITS))
def test_a_spec_value_ending_in_a_newline_is_refused_by_name(
    edit: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The spec's name checks used `re.match` on patterns ending in `$`, which also matches before a
    final newline: `deployment: "triton\\n"` (or a `|` block) passed, and `generate` wrote
    `deploy/k8s/autoscaling/triton\\n-hpa.yaml` holding an HPA named "triton\\n", which the API server
    refuses (not a DNS-1123 label); `cluster_label: "cluster\\n"` became a dashboard variable and an alert
    label the bot never found. Each is a usage error naming the field, and nothing is written."""
    spec = yaml.safe_load(shipped(DEFAULT_SPEC_FILE).read_text(encoding="utf-8"))
    change, field = _SPEC_EDITS[edit]
    change(spec)
    path = tmp_path / "slos.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    code = main(["generate", "--spec", str(path), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == c.EXIT_USAGE, err
    assert f"{field}:" in err and ("\\n'" in err or field == "models"), err  # a list is shown by its size
    assert not (tmp_path / "out").exists()


@contextmanager
def _bot(tmp_path: Path) -> Iterator[tuple[Bot, SlackStandin]]:
    """An in-process bot posting to a Slack stand-in, stopped on exit."""
    with SlackStandin(token=SLACK_TOKEN) as standin:
        settings = BotSettings(channel=CHANNEL, listen="127.0.0.1:0")
        bot = Bot(
            settings, tmp_path / "outbox.sqlite3", WEBHOOK_TOKEN, SLACK_TOKEN, standin.url, SIGNING_SECRET
        )
        bot.start()
        try:
            yield bot, standin
        finally:
            bot.stop()


def test_a_notification_without_any_alert_is_refused_and_posts_nothing(tmp_path: Path) -> None:
    """`"alerts": []` (Alertmanager never sends one; a hand-made test or another sender does) was queued and
    posted as a `FIRING` message of no alert, which nothing would ever resolve. It is a 400 naming why,
    counted with the bot's other refusals; a payload of another `version` ("3") is still read."""
    with _bot(tmp_path) as (bot, standin):
        case = new_case()
        empty, older = notification(case, n_alerts=0), {**notification(case + "v3"), "version": "3"}
        answer = post(bot, json.dumps(empty), WEBHOOK_TOKEN)
        assert (answer.status_code, answer.json()) == (
            400,
            {"error": "the notification carries no alert"},
        )
        assert post(bot, json.dumps(older), WEBHOOK_TOKEN).status_code == 200
        wait_until(lambda: standin.calls("chat.postMessage", ok_only=True), 15, "the version 3 notification")
        time.sleep(0.5)  # the worker had the empty one first, had it been queued
        (shown,) = standin.calls("chat.postMessage", ok_only=True)
        assert case + "v3" in str(shown.params)
        assert sum(bot.outbox.counts().values()) == 1
        metrics = requests.get(f"{bot.url}{c.PATH_METRICS}", timeout=5).text
        assert f'{c.M_BOT_REFUSED}{{{c.L_CODE}="400"}} 1.0' in metrics


def test_different_alerts_under_one_fingerprint_are_each_shown(tmp_path: Path) -> None:
    """A sender writing one fingerprint for every alert (a hand-made relay, a collision): the group kept the
    first alert and dropped the others as copies, so a page of three down servers said one. An alert is a
    copy only when its labels are the first's too; the others get a fingerprint of their labels."""
    with _bot(tmp_path) as (bot, standin):
        case = new_case()
        body = notification(case, n_alerts=3)
        body["alerts"].append(dict(body["alerts"][1]))  # the second again: a copy, one alert
        for alert in body["alerts"]:
            alert["fingerprint"] = "0000000000000000"
        assert post(bot, json.dumps(body), WEBHOOK_TOKEN).status_code == 200
        (shown,) = wait_until(lambda: standin.calls("chat.postMessage", ok_only=True), 15, "the message")
        text = json.dumps(shown.params)
        assert all(f"triton-{i}:8002" in text for i in range(3)), text
        (kept,) = [m for m in (standin.message(CHANNEL, str(shown.response["ts"])),) if m]
        assert "3 firing" in json.dumps(kept["blocks"]), kept["blocks"]


@pytest.mark.triton
def test_a_body_that_does_not_decode_as_its_content_encoding_is_a_parse_fault(triton: Any) -> None:
    """The real Triton behind a proxy that labels its answers `Content-Encoding: gzip` without compressing
    them (the client asks for identity): counted as a `connection` fault before, sending an operator to the
    network though every connection worked. It is a `parse` fault of each target, named for what it is;
    the exporter serves on and reads Triton again once the proxy is mended."""
    metrics_base, metrics_path = triton.metrics_url.rsplit("/", 1)
    with FaultProxy(triton.http_url) as api_proxy, FaultProxy(metrics_base) as metrics_proxy:
        settings = ExporterSettings(
            triton_url=api_proxy.url, metrics_url=f"{metrics_proxy.url}/{metrics_path}", timeout=2.0
        )
        exporter = Exporter(settings)
        exporter.poll_once()
        assert up(exporter) == 1
        for proxy, path in ((metrics_proxy, "/metrics"), (api_proxy, "/v2")):
            proxy.set_fault(path, MISLABELLED)
        exporter.poll_once()
        assert up(exporter) == 0
        for target in (c.TARGET_METRICS, c.TARGET_INDEX, c.TARGET_STATS):
            assert errors(exporter, target, c.FAULT_PARSE) == 1, target
            assert errors(exporter, target, c.FAULT_CONNECTION) == 0, target
        assert_no_bad_values(exporter)
        for proxy, path in ((metrics_proxy, "/metrics"), (api_proxy, "/v2")):
            proxy.set_fault(path, None)
        exporter.poll_once()
        assert up(exporter) == 1


def test_a_prometheus_answer_that_does_not_decode_says_so_in_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The real Prometheus behind a proxy labelling its answers gzip without compressing them: the command
    said `answered HTTP 200, then ('Received response with content-encoding: gzip, but failed to decode
    it.', error('Error -3 while decompressing data: incorrect header check'))`, urllib3's tuple. Now one
    sentence; exit 2 as for any Prometheus that cannot be read."""
    with backfilled(tmp_path, _rollout_series(None)) as prom, FaultProxy(prom.url) as proxy:
        proxy.set_fault("/api/v1/", MISLABELLED)
        argv = ["rollout", "check", "--prometheus", proxy.url, "--model", "vs", "--baseline-version", "1"]
        code = main([*argv, "--candidate-version", "2", "--window", "15m"])
    err = capsys.readouterr().err
    assert code == c.EXIT_USAGE, err
    assert err == (
        f"triton-sre rollout check: Prometheus at {proxy.url} answered HTTP 200, then the body does not "
        "decode as its Content-Encoding says (a proxy labelling what it did not compress?)\n"
    )


def test_a_webhook_escaping_a_lone_surrogate_is_shown_not_refused_as_an_outbox_fault(tmp_path: Path) -> None:
    """`"model": "m\\ud800"` is valid JSON but no text (Alertmanager, in Go, never writes one; a hand-made
    relay may). The outbox could not store it: `outbox write failed: 'utf-8' codec can't encode character
    '\\ud800'`, answered 503 `outbox unavailable`, which a sender retries for ever and an operator reads as
    a disk fault. Each such character is shown as `?`, as the exporter does; a surrogate pair (an emoji)
    and a backslash escaped before `u` are left as they are."""
    with _bot(tmp_path) as (bot, standin):
        case = new_case()
        payload = notification(case)
        payload["groupKey"] += "\ud800"  # json.dumps writes each as its escape
        payload["alerts"][0]["annotations"]["summary"] = f"Triton \ud800 is down ({case}) \U0001f680 \\udfff"
        body = json.dumps(payload)
        assert "\\ud800" in body and "\\ud83d\\ude80" in body
        answer = post(bot, body.encode(), WEBHOOK_TOKEN)
        assert answer.status_code == 200, answer.text
        (shown,) = wait_until(lambda: standin.calls("chat.postMessage", ok_only=True), 15, "the message")
        assert f"Triton ? is down ({case}) \U0001f680 \\udfff" in str(shown.params["text"]), shown.params
        # marked done after Slack's answer, which the stand-in records first
        wait_until(lambda: bot.outbox.counts() == {"done": 1}, 15, "the notification done")


@pytest.mark.parametrize(
    ("document", "said"),
    [
        (
            {"channel": "#t", "clusters": {"east": {"triton_url": "http://triton.east:8000"}}},
            "channel, clusters: the bot's settings go under `bot:`",
        ),
        ({"bot": {"channel": "#t"}, "slack": {"token": "x"}}, "unknown key 'slack'"),
    ],
)
def test_a_bot_config_key_outside_its_section_is_named_not_ignored(
    document: dict, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bot read its `bot:` section and ignored every other top-level key: a config written without the
    `bot:` line started a bot with no clusters, routes or channel from it, without a word (the exporter's
    loader refuses an unknown section). The exporter's sections are still left to it."""
    path = tmp_path / "bot.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    assert main(["bot", "--config", str(path)]) == c.EXIT_USAGE
    assert capsys.readouterr().err == f"triton-sre bot: configuration error: {path}: {said}" + (
        " (allowed: bot, capacity, exporter, pricing)\n" if "unknown" in said else "\n"
    )
    shared = {"bot": {"channel": "#t"}, "exporter": {"interval": 5}, "pricing": {}}
    assert load_bot_config_doc(tmp_path, shared).channel == "#t"


def load_bot_config_doc(tmp_path: Path, document: dict) -> BotSettings:
    path = tmp_path / "shared.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return load_bot_config(path)


def test_a_negative_count_of_alerts_left_out_says_nothing_left_out(tmp_path: Path) -> None:
    """`"truncatedAlerts": -5` (Alertmanager writes the count its `max_alerts` left out, never below 0; a
    hand-made sender may) made the message say `… and -5 more alert(s) in this group`."""
    with _bot(tmp_path) as (bot, standin):
        body = {**notification(new_case()), "truncatedAlerts": -5}
        assert post(bot, json.dumps(body), WEBHOOK_TOKEN).status_code == 200
        (shown,) = wait_until(lambda: standin.calls("chat.postMessage", ok_only=True), 15, "the message")
        assert "more alert(s) in this group" not in json.dumps(shown.params), shown.params
        more = {**notification(new_case()), "truncatedAlerts": 5}  # a real count is still said
        assert post(bot, json.dumps(more), WEBHOOK_TOKEN).status_code == 200
        said = wait_until(
            lambda: standin.calls("chat.postMessage", ok_only=True)[1:], 15, "the second message"
        )
        assert "and 5 more alert(s) in this group" in json.dumps(said[0].params), said[0].params
