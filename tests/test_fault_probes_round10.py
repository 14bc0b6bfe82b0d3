"""Fault probes, round ten (branch `probes10`, 2026-12-05): process lifecycle, full disks, state files
corrupted or shared between runs, Alertmanager webhook variants, churn over time —
docs/failure-behaviour.md, "Fault probes, round ten"."""

from __future__ import annotations

import copy
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_bot_outbox_faults import SLACK_TOKEN, bot_metric, group, make_bot, webhook

from triton_sre import conventions as c
from triton_sre.bot.dev_slack_standin import SlackStandin
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


# -- a full disk under the bot's outbox ---------------------------------------------------------------
def _disk_full(box: Outbox) -> None:
    """SQLite's own SQLITE_FULL (what a full tmpfs gave in the probe): the file may not grow."""
    pages = box._db.execute("PRAGMA page_count").fetchone()[0]
    box._db.execute(f"PRAGMA max_page_count = {pages}")


# -- Alertmanager webhook variants ----------------------------------------------------------------------