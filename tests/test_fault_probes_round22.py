"""Fault probes, round twenty-two (branch `probes22`, 2026-12-07): logs given as pipes, a file name's byte
that is not UTF-8, the bot's clock behind Prometheus', durations as Prometheus reads them, runbook base URLs
no alert can link to — the probes listed in docs/failure-behaviour.md, "Fault probes, round twenty-two". Each
test of a fix failed before it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml
from binaries import binary
from live_prometheus import Prom
from test_bot_versions import EAST, MODEL, WINDOW, facts_worker, slo_group, versions_store

import triton_sre
from triton_sre import conventions as c
from triton_sre.bot.config import load_bot_config
from triton_sre.bot.enrich import enrich
from triton_sre.cli import main
from triton_sre.durations import DurationError, parse_duration

ROOT = Path(triton_sre.__file__).resolve().parents[1]  # the code under test (PYTHONPATH), its CLI too
CLI = [sys.executable, "-m", "triton_sre"]
LOG = ROOT / "tests/data/logs/gpu/cloud-repository-access.s3.log"


def _run(*args: str, shell: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [binary("bash"), "-c", shell] if shell else [*CLI, *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)


# -- triage of a log given as a pipe's path ------------------------------------------------------------------
def test_triage_reads_a_log_given_by_process_substitution_as_the_file() -> None:
    """Before: `triage <(kubectl logs ...)` (bash hands `/dev/fd/63`, a pipe) was `cannot read: File or
    stream is not seekable.`, exit 2, since the sparse-hole skip seeked every log, a pipe's too."""
    whole = _run("triage", str(LOG))
    assert whole.returncode == 1 and "CRITICAL" in whole.stdout, whole
    cli = " ".join(CLI)
    shells = [f"{cli} triage <(cat {LOG})", f"{cli} triage <(gzip -c {LOG})"]
    shells.append(f"cat {LOG} | {cli} triage /dev/stdin")  # a pipe again, by its /dev name
    for command in shells:
        piped = _run(shell=command)
        assert (piped.returncode, piped.stdout, piped.stderr) == (1, whole.stdout, ""), (command, piped)


def test_triage_reads_a_named_pipe(tmp_path: Path) -> None:
    fifo = tmp_path / "triton.log"
    os.mkfifo(fifo)

    def write() -> None:
        with LOG.open("rb") as source, fifo.open("wb") as sink:
            shutil.copyfileobj(source, sink)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    done = _run("triage", str(fifo))
    writer.join(timeout=30)
    assert done.returncode == 1 and "CRITICAL" in done.stdout, done


# -- the bot's clock behind Prometheus' ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prom]:
    """test_bot_versions' clusters scraped by a real Prometheus, on clocks of this module's own."""
    with versions_store(tmp_path_factory.mktemp("versions-store"), {}) as prom:
        yield prom


def test_a_bots_clock_behind_prometheus_still_shows_the_versions_when_the_alert_fired(
    store: Prom, tmp_path: Path
) -> None:
    """Before: with the bot's machine two hours behind Prometheus, the alert's startsAt (Prometheus' time)
    was clamped to the bot's now, and the versions "when it fired" were read two hours before the alert:
    no version line at all. Now they are read at the firing, on Prometheus' clock."""
    fired = time.time() - 1  # east's v2 has been failing for a while (the `store` fixture waits for it)
    group = slo_group(EAST, fired)
    worker = facts_worker(store.url, tmp_path)
    worker.clock = lambda: time.time() - 7200
    model = enrich(group, worker.facts(group), worker.links, c.LABEL_CLUSTER).context()
    blocks = json.dumps(worker.renderer.blocks(model))
    at = datetime.fromtimestamp(fired, timezone.utc).strftime("%H:%M:%S UTC")
    assert f"*Versions at {at}, when it fired:* {MODEL} over {WINDOW}: v2 100.0% failed" in blocks, blocks


# -- a file name's byte that is not UTF-8 -------------------------------------------------------------------
@pytest.mark.parametrize("locale", ["C.UTF-8", "POSIX"])
def test_a_file_names_byte_that_is_not_utf8_is_shown_as_that_byte(tmp_path: Path, locale: str) -> None:
    """Before: lint's error on stderr and generate's list on stdout wrote the folder `rep<0xff>` as
    `rep\\udcff` (Python's stand-in for the byte), where triage and every `shown_path` write `rep\\xff`."""
    folder = Path(os.fsdecode(bytes(tmp_path) + b"/rep\xff"))
    folder.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LC_ALL": locale}
    linted = subprocess.run([*CLI, "lint", str(folder)], capture_output=True, text=True, timeout=120, env=env)
    out = folder / "out"
    made = subprocess.run(
        [*CLI, "generate", "--spec", str(ROOT / "slos.yaml"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert linted.returncode == 2 and f"{tmp_path}/rep\\xff: the folder is empty" in linted.stderr, linted
    assert made.returncode == 0 and f"into {tmp_path}/rep\\xff/out/" in made.stdout, made
    assert "udcff" not in linted.stderr + made.stdout


# -- durations: Prometheus' grammar, no looser and no stricter -----------------------------------------------
DURATIONS = ["1y", "1w", "2d", "1h30m", "1d1ms", "90s", "500ms", "1m1ms"]
DURATIONS += ["5m5m", "30s1h", "1ms1s", "1d1w", "1h1h"]


def _promtool_reads(tmp_path: Path, duration: str) -> bool:
    rules = tmp_path / "d.yaml"
    rules.write_text(f"groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    for: {duration}\n")
    done = subprocess.run(
        [binary("promtool"), "check", "rules", str(rules)], capture_output=True, text=True, timeout=60
    )
    return done.returncode == 0


def _we_read(duration: str) -> bool:
    try:
        parse_duration(duration, "x")
    except DurationError:
        return False
    return True


def test_a_duration_is_read_exactly_when_promtool_reads_it(tmp_path: Path) -> None:
    """Before: `5m5m`, `30s1h`, `1ms1s` were read (as 10m, 1h30s, 1.001s) where promtool and rule loading
    say "not a valid duration string", and `1y` was refused where Prometheus reads a year."""
    promtool = {d: _promtool_reads(tmp_path, d) for d in DURATIONS}
    assert {d: _we_read(d) for d in DURATIONS} == promtool
    assert not promtool["5m5m"] and promtool["1y"]  # the real tool does tell the two kinds apart
    assert parse_duration("1y", "x") == 365 * 86400


def test_units_out_of_order_say_how_prometheus_writes_them(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["rollout", "check", "--prometheus", "http://127.0.0.1:9", "--model", "m", "--window", "5m5m"]
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert "--window: units go largest first, each once, as Prometheus reads them (1h30m), got '5m5m'" in (
        capsys.readouterr().err
    )


# -- --runbook-base-url that no alert can link to -----------------------------------------------------------
RUNBOOK_BASES = {
    # value: what the refusal says (generate wrote each into every alert's runbook_url, promtool clean)
    "javascript:alert(1)//": "must be an http(s) URL without a query string or fragment",
    "ftp://h/rb/": "must be an http(s) URL without a query string or fragment",
    "http://h/rb?token=s3cret": "must be an http(s) URL without a query string or fragment",  # ?token=…/x.md
    "http://h/rb/#top": "must be an http(s) URL without a query string or fragment",
    "http://u:s3cret@h/rb/": "must carry no credentials: every alert, message and dashboard shows it",
    "http://h/\nrb/": "must be one line of printable text",  # a YAML block of two lines in every alert
}
RUNBOOK_COMMANDS = {
    "generate": ["generate", "--spec", str(ROOT / "slos.yaml"), "--out"],
    "stack up": ["stack", "up", "--port-base=-1", "--workdir"],  # a base it refuses: never a stack started
    "lint": ["lint", str(ROOT / "triton_sre/demo/models"), "--release", "24.12", "--target"],
    "triage": ["triage", str(LOG), "--format"],
}


@pytest.mark.parametrize("command", sorted(RUNBOOK_COMMANDS))
@pytest.mark.parametrize("value", sorted(RUNBOOK_BASES))
def test_a_runbook_base_no_alert_can_link_to_is_refused_at_parsing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, value: str
) -> None:
    last = {"lint": "cpu", "triage": "text"}.get(command, str(tmp_path / "o"))
    with pytest.raises(SystemExit) as exited:
        main([*RUNBOOK_COMMANDS[command], last, f"--runbook-base-url={value}"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --runbook-base-url: {RUNBOOK_BASES[value]}" in err, err
    assert "s3cret" not in err and not (tmp_path / "o").exists()


@pytest.mark.parametrize("value", ["https://github.com/ORG/REPO/blob/main/runbooks/", "rb/", "docs/rb:x/"])
def test_an_http_url_or_a_repository_path_is_still_a_runbook_base(tmp_path: Path, value: str) -> None:
    spec = str(ROOT / "slos.yaml")
    assert main(["generate", "--spec", spec, "--out", str(tmp_path), f"--runbook-base-url={value}"]) == 0
    alerts = (tmp_path / "alerts/triton-alerts.yaml").read_text()
    assert f"runbook_url: {value}triton-server-down.md" in alerts


BOT_RUNBOOK_BASES = {
    "http://u:s3cret@h/rb/": "must carry no credentials: every alert, message and dashboard shows it",
    "http://h/rb/?token=s3cret": "must be an http(s) URL without a query string or fragment",
}


@pytest.mark.parametrize("value", sorted(BOT_RUNBOOK_BASES))
def test_the_bots_runbook_base_with_a_password_or_a_query_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """Before: the bot took any http(s) URL (`check_url`): every Slack button carried the password or the
    query (`…/rb/?token=…python-model-error.md`)."""
    monkeypatch.delenv(c.ENV_BOT_TOKEN, raising=False)  # no bot ever starts, whatever it accepts
    config = tmp_path / "bot.yaml"
    config.write_text(yaml.safe_dump({"bot": {"channel": "#t", "runbook_base_url": value}}), encoding="utf-8")
    assert main(["bot", "--config", str(config)]) == 2
    flag = ["bot", "--channel", "#t", "--outbox", str(tmp_path / "o.sqlite3"), f"--runbook-base-url={value}"]
    assert main(flag) == 2
    err = capsys.readouterr().err
    assert f"{config}: bot.runbook_base_url: {BOT_RUNBOOK_BASES[value]}" in err, err
    assert f"--runbook-base-url: {BOT_RUNBOOK_BASES[value]}" in err and "s3cret" not in err
    assert load_bot_config_text(tmp_path, "https://rb.example.com/runbooks/") == "https://rb.example.com/runbooks/"


def load_bot_config_text(tmp_path: Path, value: str) -> str | None:
    config = tmp_path / "good.yaml"
    config.write_text(yaml.safe_dump({"bot": {"runbook_base_url": value}}), encoding="utf-8")
    return load_bot_config(config).runbook_base_url
