"""Fault probes, round ten (branch `probes10`, 2026-12-05): process lifecycle, full disks, state files
corrupted or shared between runs, Alertmanager webhook variants, churn over time —
docs/failure-behaviour.md, "Fault probes, round ten"."""

from __future__ import annotations

import copy
import os
import re
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_prometheus import serve
from test_bot_outbox_faults import SLACK_TOKEN, bot_metric, group, make_bot, webhook
from test_report_answers import healthy

from triton_sre import conventions as c
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.bot.enrich import Facts, Links, enrich
from triton_sre.bot.outbox import Outbox, OutboxError
from triton_sre.bot.payload import parse_group

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def standin() -> Iterator[SlackStandin]:
    with SlackStandin(token=SLACK_TOKEN) as server:
        yield server


# -- the bot's outbox between runs ---------------------------------------------------------------------
def test_a_second_bot_on_one_outbox_is_refused_naming_the_first(
    tmp_path: Path, standin: SlackStandin
) -> None:
    """Before: a second bot opened the first one's outbox and both delivered every pending
    notification: 19 Slack posts for 10 groups. Now one bot per outbox (a flock on `<outbox>.lock`)."""
    path = tmp_path / "outbox.sqlite3"
    with make_bot(path, standin):
        with pytest.raises(OutboxError, match=r"in use by another bot \(pid \d+\)"):
            make_bot(path, standin)
        # another process, as `triton-sre bot` would be: refused too, whatever the pid
        probe = subprocess.run(
            [sys.executable, "-c", f"from triton_sre.bot.outbox import Outbox; Outbox({str(path)!r})"],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
        )
        assert probe.returncode != 0 and "in use by another bot" in probe.stderr
    with make_bot(path, standin) as again:  # released with the first bot: a restart opens it
        assert webhook(again, group("after")).status_code == 200


def test_a_stored_notification_that_does_not_decode_holds_no_other_delivery(
    tmp_path: Path, standin: SlackStandin
) -> None:
    """Before: a damaged record (its payload cut mid-JSON on disk) raised in `next_due` at every step:
    `delivery loop error` with a traceback each second, and no notification of any group was ever
    delivered again. Now that record is failed with the reason, the others are delivered."""
    path = tmp_path / "outbox.sqlite3"
    box = Outbox(path)
    older = box.enqueue(group("cut")["groupKey"], group("cut"))  # type: ignore[arg-type]
    damaged = box.enqueue(group("cut")["groupKey"], group("cut", "resolved"))  # type: ignore[arg-type]
    box.close()
    db = sqlite3.connect(path)
    db.execute("UPDATE notifications SET payload = ? WHERE id = ?", ('{"alerts": [{"lab', damaged))
    db.commit()
    db.close()
    with make_bot(path, standin) as bot:
        assert webhook(bot, group("other")).status_code == 200
        assert standin.wait_for(lambda: len(standin.calls("chat.postMessage", ok_only=True)) == 2)
        states = {n["id"]: n for n in bot.outbox.notifications()}
        assert states[damaged]["state"] == c.BOT_OUTBOX_FAILED
        assert "does not decode" in states[damaged]["last_error"]
        assert states[older]["state"] == c.BOT_OUTBOX_DONE  # the group's previous notification instead


# -- a full disk under the bot's outbox ---------------------------------------------------------------
def _disk_full(box: Outbox) -> None:
    """SQLite's own SQLITE_FULL (what a full tmpfs gave in the probe): the file may not grow."""
    pages = box._db.execute("PRAGMA page_count").fetchone()[0]
    box._db.execute(f"PRAGMA max_page_count = {pages}")


def test_a_full_disk_under_a_message_write_is_named_not_hidden_by_the_rollback(tmp_path: Path) -> None:
    """Before: SQLite rolls a transaction back itself on SQLITE_FULL; the outbox's ROLLBACK then
    raised `cannot rollback - no transaction is active`, and /healthz gave that as the reason."""
    box = Outbox(tmp_path / "outbox.sqlite3")
    nid = box.enqueue("g", {"alerts": []})
    _disk_full(box)
    box.save_message("g", "#c", "1.1", c.AM_STATUS_FIRING, "d", [{"x": "y" * 100_000}], nid)
    assert "database or disk is full" in box.problem() and "rollback" not in box.problem()
    assert box.unsaved() == 2  # the message and the notification's state, held in memory
    box.close()


def test_a_full_disk_refusing_webhooks_shows_on_health_and_metrics_then_clears(
    tmp_path: Path, standin: SlackStandin
) -> None:
    """Before (a 256 kB tmpfs filled by the outbox): every webhook answered 503 (right: Alertmanager
    retries) while /healthz said 200 and `triton_sre_bot_outbox_usable` 1: only the refusals' counter
    moved. Now the refused insert is the outbox's problem until a write goes through again."""
    import requests

    with make_bot(tmp_path / "outbox.sqlite3", standin) as bot:
        box = bot.outbox
        _disk_full(box)
        big = group("full")
        big["commonAnnotations"] = {"pad": "x" * 100_000}
        assert webhook(bot, big).status_code == 503
        health = requests.get(f"{bot.url}{c.PATH_HEALTHZ}", timeout=5)
        assert health.status_code == 503 and "database or disk is full" in health.json()["problem"]
        assert bot_metric(bot, c.M_BOT_OUTBOX_USABLE) == 0
        box._db.execute("PRAGMA max_page_count = 1073741823")  # space again
        assert webhook(bot, big).status_code == 200
        assert standin.wait_for(lambda: len(standin.calls("chat.postMessage", ok_only=True)) == 1)
        assert standin.wait_for(
            lambda: requests.get(f"{bot.url}{c.PATH_HEALTHZ}", timeout=5).status_code == 200
        )
        assert bot_metric(bot, c.M_BOT_OUTBOX_USABLE) == 1


# -- Alertmanager webhook variants ----------------------------------------------------------------------
def test_one_alert_sent_twice_in_a_group_is_one_alert() -> None:
    """Before: an alert repeated three times in `alerts` (a proxy merging two Alertmanagers' posts)
    was shown three times, `3 firing`, taking three of the eight places of the message."""
    body = group("repeat")
    first = body["alerts"][0]  # type: ignore[index]
    other = copy.deepcopy(first)
    other["labels"] = dict(other["labels"], case="other")
    other["fingerprint"] = "other0001"
    body["alerts"] = [first, first, other, first]
    parsed = parse_group(body)
    assert [a.fingerprint for a in parsed.alerts] == [first["fingerprint"], "other0001"]
    unfingerprinted = copy.deepcopy(first)
    del unfingerprinted["fingerprint"]
    body["alerts"] = [unfingerprinted, unfingerprinted]
    assert len(parse_group(body).alerts) == 1


@pytest.mark.parametrize(
    "external_url",
    [
        "http://am.example/\n<!channel>",
        "http://am.example|<!channel>>",
        "http://am example:9093",
        "http://[::1",
    ],
)
def test_an_external_url_that_is_no_url_makes_no_button_and_no_link(external_url: str) -> None:
    """Before: any text starting `http://` was a link: an Alertmanager `externalURL` holding a
    newline, `|` or `<>` became the Silence button's URL and the "… and N more alert(s)" link
    (`<http://am.example/\\n%3C!channel%3E|see Alertmanager>`). Now such a value is no link; the
    message still says how many alerts it does not show."""
    body = group("ext")
    body["externalURL"] = external_url
    body["truncatedAlerts"] = 2
    model = enrich(parse_group(body), Facts(), Links())
    assert [b.text for b in model.buttons if b.text == "Silence"] == []
    assert model.external_url == "" and model.hidden_alerts == 2
    good = dict(body, externalURL="http://am.example:9093")
    assert any(b.text == "Silence" for b in enrich(parse_group(good), Facts(), Links()).buttons)


# -- process lifecycle: a stop signal while a command writes its files ------------------------------------
_STOP_AT_FIRST_RENAME = """
import os, signal, sys
real = os.replace
def replace(src, dst):  # the signal arrives while a temp file waits for its rename
    os.kill(os.getpid(), getattr(signal, sys.argv[1]))
    real(src, dst)
os.replace = replace
from triton_sre.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_stop_signal_while_the_report_is_written_leaves_no_temp_file(tmp_path: Path, sig: str) -> None:
    """Before: SIGTERM or SIGHUP (their default action) or Ctrl-C (a KeyboardInterrupt `write_atomic`
    did not clean up after) between a temp file's write and its rename left `.report.md.x1y2z3`
    in --out. Now the temp file is removed and the command still ends by that signal (130 for
    Ctrl-C); the previous report stays whole."""
    httpd = serve(lambda query, stamps: healthy(query, stamps))
    out = tmp_path / "report"
    out.mkdir()
    (out / "report.md").write_text("the previous report\n")
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        argv = ["report", "--prometheus-url", url, "--start", "1000", "--end", "1060", "--step", "10"]
        run = subprocess.run(
            [sys.executable, "-c", _STOP_AT_FIRST_RENAME, sig, *argv, "--format", "md", "--out", str(out)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    finally:
        httpd.shutdown()
        httpd.server_close()
    expected = c.EXIT_INTERRUPTED if sig == "SIGINT" else -getattr(signal, sig)
    assert run.returncode == expected, run.stderr
    left = [p.name for p in out.rglob(".*")]
    assert left == [], left
    assert (out / "report.md").read_text() == "the previous report\n"


# -- process lifecycle: `stack up` interrupted --------------------------------------------------------------
_STACK_UP_INTERRUPTED = """
import os, signal, sys, time
from triton_sre.stack import local
sig, twice = getattr(signal, sys.argv[1]), sys.argv[2] == "twice"

started = []

def up(self):  # what `stack up` has started when the signal comes: one component, recorded
    started.append(self.spawn("exporter", [sys.executable, "-c", "import time; time.sleep(600)"], "http://127.0.0.1:9"))
    os.kill(os.getpid(), sig)
    time.sleep(30)  # the rest of the start-up, never reached
    return {}

real_down = local.down
def down(workdir, say):
    if twice and started:  # a second signal while the first one's cleanup stops what was started
        os.kill(os.getpid(), sig)
    real_down(workdir, say)

local.Stack.up = up
local.down = down
from triton_sre.cli import main
sys.exit(main(["stack", "up", "--workdir", sys.argv[3]]))
"""


@pytest.mark.parametrize(
    ("sig", "twice"), [("SIGTERM", ""), ("SIGHUP", ""), ("SIGINT", "twice"), ("SIGTERM", "twice")]
)
def test_stack_up_interrupted_leaves_no_component_running(tmp_path: Path, sig: str, twice: str) -> None:
    """Before: SIGTERM or SIGHUP during `stack up` took the default action, leaving every component
    started so far running (a real `stack up` killed after 6 s: its exporter ran on, ppid 1); a second
    Ctrl-C while the first one's cleanup stopped them interrupted the cleanup (`stopping exporter`
    said, the exporter still running). Now the cleanup runs under either, to its end."""
    from triton_sre.stack.components import load_state

    run = subprocess.run(
        [sys.executable, "-c", _STACK_UP_INTERRUPTED, sig, twice, str(tmp_path / "stack")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    started = [int(pid) for pid in re.findall(r"started exporter \(pid (\d+)\)", run.stderr)]
    running = [x for x in load_state(tmp_path / "stack") if x.alive() and x.pid in started]
    for orphan in running:  # what the test would otherwise leave behind when it fails
        os.kill(orphan.pid, signal.SIGKILL)
    expected = c.EXIT_INTERRUPTED if sig == "SIGINT" else -getattr(signal, sig)
    assert run.returncode == expected, run.stderr
    assert started and "stopping exporter" in run.stderr, run.stderr
    assert not running and not _process_runs(started[0]), run.stderr


def _process_runs(pid: int) -> bool:
    """`pid` is a process that has not exited (a zombie waiting to be reaped has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def test_an_external_url_with_credentials_links_to_the_host_without_them() -> None:
    """Before: `externalURL: http://admin:<password>@am:9093` (Alertmanager behind basic auth) made
    the "… and N more" link and the Silence button of that URL; the message's redaction then turned
    them into `http://&lt;redacted&gt;@am.example:9093`, a link that leads nowhere. Now the links carry
    the host without the credentials (no secret either way)."""
    body = group("cred")
    body["externalURL"] = "http://admin:hunter2-probe10@am.example:9093"
    body["truncatedAlerts"] = 2
    model = enrich(parse_group(body), Facts(), Links())
    assert model.external_url == "http://am.example:9093"
    silence = [b.url for b in model.buttons if b.text == "Silence"]
    assert len(silence) == 1 and silence[0].startswith("http://am.example:9093/#/silences/new?")
