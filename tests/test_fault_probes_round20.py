"""Fault probes, round twenty (branch `probes20`, 2026-12-07): the file system at the edges, numbers at the
edges, the environment, and round nineteen's leftover (names `/etc/hosts` maps to loopback) — the probes
listed in docs/failure-behaviour.md, "Fault probes, round twenty". Each test of a fix failed before it."""

from __future__ import annotations

import contextlib
import math
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from binaries import binary
from live_prometheus import start_prometheus, stop_prometheus, wait_ready
from test_cli_errors import _run
from test_fault_probes_round18 import ROOT, _cli

from triton_sre import conventions as c
from triton_sre.bot.page_threads import PageThreads
from triton_sre.bot.payload import Alert
from triton_sre.doctor import promchecks
from triton_sre.doctor.command import prometheus_checks
from triton_sre.files import stale_files
from triton_sre.httpclient import is_loopback
from triton_sre.report.increases import bucket_quantile
from triton_sre.slo import default_spec
from triton_sre.stack.processes import free_port


# -- a generated file that is not a regular file ---------------------------------------------------------
@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("generated")
    done = _cli("generate", "--spec", str(ROOT / "slos.yaml"), "--out", str(out), timeout=180)
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_fifo_or_endless_device_in_a_generated_files_place_is_stale_not_waited_on(
    generated: Path, tmp_path: Path, kind: str
) -> None:
    """Before: `generate --check` and `generate` opened `alerts/triton-alerts.yaml` to compare it; a FIFO
    there held the open until a writer came (both still waiting after 20 s, killed), and a link to
    /dev/zero would be read for ever. Now such a file is stale: `--check` names it, a write replaces it."""
    out = tmp_path / "out"
    shutil.copytree(generated, out)
    odd = out / "alerts" / "triton-alerts.yaml"
    odd.unlink()
    if kind == "fifo":
        os.mkfifo(odd)
    else:
        odd.symlink_to("/dev/zero")
    spec = str(ROOT / "slos.yaml")
    check = _cli("generate", "--spec", spec, "--out", str(out), "--check", timeout=60)
    assert check.returncode == 1, check.stderr
    assert check.stderr.count("triton-alerts.yaml") == 1, check.stderr
    assert "tests/triton-alerts.test.yaml" not in check.stderr  # only the odd one is stale
    write = _cli("generate", "--spec", spec, "--out", str(out), timeout=60)
    assert write.returncode == 0, write.stderr
    assert stat.S_ISREG(odd.lstat().st_mode)
    assert odd.read_text() == (generated / "alerts" / "triton-alerts.yaml").read_text()
    assert _cli("generate", "--spec", spec, "--out", str(out), "--check", timeout=60).returncode == 0


@pytest.mark.timeout(30)  # before the fix it waited for a writer for ever
def test_the_stacks_config_writer_counts_a_fifo_as_stale_without_waiting(tmp_path: Path) -> None:
    """`stack up` writes its configs with `files.write_files`, which reads the files in place through
    `stale_files`: a FIFO there held it as it held `generate --check`."""
    os.mkfifo(tmp_path / "prometheus.yml")
    (tmp_path / "alertmanager.yml").write_text("same\n")
    files = {"prometheus.yml": "x\n", "alertmanager.yml": "same\n"}
    assert stale_files(files, tmp_path) == ["prometheus.yml"]


# -- help and version to an output that fails ----------------------------------------------------------
def _help_to(path: str, *argv: str) -> tuple[int, str]:
    """The command's exit code and stderr with its stdout opened on `path`."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        done = _run(list(argv), stdout=fd)
    finally:
        os.close(fd)
    return done.returncode, done.stderr.decode()


@pytest.mark.parametrize(
    ("argv", "prog"),
    [(["--help"], "triton-sre"), (["--version"], "triton-sre"), (["triage", "--help"], "triton-sre triage"),
     (["rollout", "check", "--help"], "triton-sre rollout check")],
)  # fmt: skip
def test_help_or_version_to_a_full_disk_is_an_output_error_not_success(argv: list[str], prog: str) -> None:
    """Before: argparse drops a write that fails, so `triton-sre --help > /dev/full` exited 0 with nothing
    shown and nothing said (`ls --help > /dev/full`: `write error`, exit 2). Now as any other output."""
    code, err = _help_to("/dev/full", *argv)
    assert code == c.EXIT_USAGE, err
    assert err.strip() == f"{prog}: cannot write (standard output): No space left on device"


def test_help_to_a_reader_that_closed_the_pipe_is_141_and_silent() -> None:
    """Before: exit 0, as if the help had been read."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = _run(["--help"], stdout=write)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (c.EXIT_BROKEN_PIPE, b"")


def test_help_to_a_working_stdout_is_unchanged(tmp_path: Path) -> None:
    assert _help_to(str(tmp_path / "help.txt"), "triage", "--help") == (0, "")
    assert (tmp_path / "help.txt").read_text().startswith("usage: triton-sre triage")


# -- a path that is not what the flag asks for -------------------------------------------------------
def _odd_paths(where: Path) -> dict[str, Path]:
    (where / "loop1").symlink_to("loop2")
    (where / "loop2").symlink_to("loop1")
    (where / "dangling").symlink_to(where / "gone")
    os.mkfifo(where / "fifo")
    (where / "folder").mkdir()
    (where / "file").write_text("x\n")
    return {
        "loop1": where / "loop1", "dangling": where / "dangling", "fifo": where / "fifo",
        "folder": where / "folder", "file": where / "file", "missing": where / "missing",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("name", "says"),
    [("loop1", "Too many levels of symbolic links"), ("fifo", "FIFO (named pipe) whose writer did not"),
     ("folder", "a directory, not a regular file"), ("missing", "No such file or directory")],
)  # fmt: skip
def test_doctor_names_what_is_wrong_with_the_spec_path(tmp_path: Path, name: str, says: str) -> None:
    """Before: `SLO spec loop1 does not exist` for a link loop, a FIFO and a folder alike (an `is_file`
    test before the loader); now the loader's reason, as `generate --spec` gives it."""
    done = _cli("doctor", "--spec", str(_odd_paths(tmp_path)[name]), "--triton-url", "http://127.0.0.1:1")
    assert done.returncode == c.EXIT_USAGE, done.stderr
    assert done.stderr.startswith("triton-sre doctor: invalid SLO spec: "), done.stderr
    assert says in done.stderr and "does not exist" not in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("name", "says"),
    [("loop1", "a symbolic link loop"), ("dangling", "a dangling symbolic link"),
     ("fifo", "a FIFO (named pipe)"), ("file", "a regular file"), ("missing", "nothing there")],
)  # fmt: skip
def test_lint_says_what_its_path_is_when_it_is_no_folder(tmp_path: Path, name: str, says: str) -> None:
    """Before: `lint PATH: not a directory` for each of them, a typo and a link loop alike."""
    path = _odd_paths(tmp_path)[name]
    done = _cli("lint", str(path))
    assert done.returncode == c.EXIT_USAGE, done.stderr
    assert done.stderr.strip() == f"triton-sre lint: {path}: not a directory: {says}"


# -- histogram buckets that are not cumulative -----------------------------------------------------------
BOUNDS = (("0.1", 0.1), ("0.5", 0.5), ("1", 1.0), ("+Inf", math.inf))
NOT_CUMULATIVE = {
    "falls": (10, 5, 8, 8), "zigzag": (2, 9, 3, 5), "dips": (5, 3, 10, 10), "flat": (4, 4, 4, 4),
}  # fmt: skip


def _prometheus_quantiles(folder: Path) -> dict[tuple[str, float], float]:
    """histogram_quantile of Prometheus' own engine (promtool's rule tests) over buckets growing at the
    rates in NOT_CUMULATIVE: each expectation is -1 so that promtool prints every value it got."""
    lines = ["rule_files: []", "evaluation_interval: 1m", "tests:", "  - interval: 1m", "    input_series:"]
    for case, counts in NOT_CUMULATIVE.items():
        for (le, _), n in zip(BOUNDS, counts, strict=True):
            series = f"h_bucket{{case=\"{case}\", le=\"{le}\"}}"
            lines += [f"      - series: '{series}'", f"        values: '0+{n}x10'"]
    lines.append("    promql_expr_test:")
    for case in NOT_CUMULATIVE:
        for q in (0.5, 0.99):
            lines += [
                f"      - expr: histogram_quantile({q}, rate(h_bucket{{case=\"{case}\"}}[5m]))",
                "        eval_time: 10m",
                "        exp_samples:",
                f"          - labels: '{{case=\"{case}\"}}'",
                "            value: -1",
            ]
    (folder / "quantiles.test.yaml").write_text("\n".join(lines) + "\n")
    done = subprocess.run(
        [binary("promtool"), "test", "rules", "quantiles.test.yaml"],
        cwd=folder, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    said = done.stdout + done.stderr  # promtool 2.42 prints the failures on stderr
    asked = re.findall(r"histogram_quantile\(([\d.]+), rate\(h_bucket\{case=\\\"(\w+)\\\"", said)
    got = [float(v) for v in re.findall(r"got: \{case=\"\w+\"\} (\S+)", said)]
    assert len(asked) == len(got) == 2 * len(NOT_CUMULATIVE), said
    return {(case, float(q)): value for (q, case), value in zip(asked, got, strict=True)}


def test_the_reports_quantile_of_buckets_that_are_not_cumulative_is_prometheus_own(tmp_path: Path) -> None:
    """Before: `report` read a range's bucket increases as given; where a count fell from one bound to the
    next it differed from the rules' histogram_quantile (p99 0.079 s against 0.099 s for 10, 5, 8, 8;
    0.269 s against 0.495 s for 2, 9, 3, 5). Prometheus raises each to the largest below it."""
    prometheus = _prometheus_quantiles(tmp_path)
    bounds = [b for _, b in BOUNDS]
    for (case, q), value in prometheus.items():
        ours = bucket_quantile(q, bounds, [float(n) for n in NOT_CUMULATIVE[case]])
        assert ours == pytest.approx(value, rel=1e-9), (case, q)


def test_buckets_without_the_inf_bound_have_no_quantile_as_in_prometheus() -> None:
    assert math.isnan(bucket_quantile(0.5, [0.1, 0.5], [1.0, 2.0]))
    assert math.isnan(bucket_quantile(0.5, [math.inf], [3.0]))


# -- rules that read further back than Prometheus keeps ------------------------------------------------
@pytest.mark.parametrize(
    ("text", "seconds"),
    [("15d", 15 * 86400.0), ("2w or 1GiB", 14 * 86400.0), ("1y", 365 * 86400.0), ("1d12h", 36 * 3600.0),
     ("1GiB", None), ("", None), ("forever", None)],
)  # fmt: skip
def test_prometheus_retention_as_its_runtimeinfo_writes_it(text: str, seconds: float | None) -> None:
    assert promchecks.retention_seconds(text) == seconds


@pytest.mark.parametrize(
    ("flags", "ok", "says"),
    [(["--storage.tsdb.retention.time=1d"], False, "retention 1d; the longest range the rules read is 30d: "
      "a 30d figure is computed over 1d of data"),
     ([], False, "retention 15d;"),  # Prometheus' default under the shipped spec's 30-day SLOs
     (["--storage.tsdb.retention.time=2w", "--storage.tsdb.retention.size=1GB"], False,
      "retention 2w or 1GiB;"),
     (["--storage.tsdb.retention.time=1y"], True, "retention 1y;"),
     (["--storage.tsdb.retention.size=1GB"], True, "by size only")],
)  # fmt: skip
def test_doctor_warns_when_prometheus_keeps_less_than_the_rules_read(
    tmp_path: Path, flags: list[str], ok: bool, says: str
) -> None:
    """Before: nothing said that the shipped spec's 30-day SLO figures (`avg_over_time(...[30d])`) were
    computed over the 15 days Prometheus keeps by default. Now doctor's `retention` check, from the real
    Prometheus' /api/v1/status/runtimeinfo; a warning: doctor's exit code is left to missing inputs."""
    port = free_port()
    proc, log = start_prometheus(tmp_path, {"global": {"scrape_interval": "15s"}}, port, *flags)
    try:
        wait_ready(proc, tmp_path, port)
        checks, _ = prometheus_checks(f"http://127.0.0.1:{port}", default_spec(), None, None, 10.0)
    finally:
        stop_prometheus(proc, log)
    check = {ch.id: ch for ch in checks}[c.CHECK_RETENTION]
    assert (check.ok, check.needed) == (ok, False), check
    assert says in check.found, check.found
    assert ("--storage.tsdb.retention.time=30d" in check.fix) is not ok, check.fix


# -- names /etc/hosts maps to loopback (round nineteen's leftover): decided, not changed -------------------
@pytest.mark.parametrize("host", ["localhost.localdomain", "ip6-localhost", "localhost4", "vm", "runsc"])
def test_a_name_hosts_maps_to_loopback_is_left_to_the_proxy_without_a_lookup(
    host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decided in round twenty (docs/failure-behaviour.md): a name other than `localhost` and
    `*.localhost` goes to the environment's proxy, as in Go's net/http (which Prometheus uses); curl 7.88
    and requests proxy even `localhost`. Telling these names apart would need a lookup per request
    before choosing the proxy: a name the proxy was there to resolve would go to the local resolver
    (and wait on it). `NO_PROXY` covers them. What must hold: no lookup is made for a name."""
    import socket

    asked: list[int] = []
    real = socket.getaddrinfo

    def recording(*args: object, **kwargs: object) -> object:
        asked.append(int(kwargs.get("flags", args[5] if len(args) > 5 else 0)))  # type: ignore[arg-type]
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", recording)
    assert is_loopback(host) is False
    assert all(flags & socket.AI_NUMERICHOST for flags in asked), asked


# -- a port the OS chooses ----------------------------------------------------------------------------
@contextlib.contextmanager
def _started(argv: list[str], says: str, env: dict[str, str], cwd: Path) -> Iterator[str]:
    """The service running, and its first log line holding `says`; stopped (SIGTERM) on the way out."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "triton_sre", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
    )
    try:
        assert proc.stderr is not None
        line = next((x for x in proc.stderr if says in x), None)  # ends when the service's stderr does
        assert line is not None, f"no line with {says!r}; exit {proc.wait(timeout=10)}"
        threading.Thread(target=proc.stderr.read, daemon=True).start()  # a full pipe must not stall it
        yield line
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_a_port_the_os_chooses_is_the_one_the_bots_start_line_names(host: str, tmp_path: Path) -> None:
    """Before: `bot --listen 127.0.0.1:0` logged `bot listening on 127.0.0.1:0` (only the webhook URL after it
    had the port). Now the bound port, which answers; the exporter's start line does the same with the one
    helper (`tests/test_cli_consistency.py` tests it)."""
    shown = f"[{host}]" if ":" in host else host
    argv = ["bot", "--channel", "#x", "--outbox", "o.db", "--listen", f"{shown}:0"]
    slack = "http://127.0.0.1:1/api/"  # never reached: the start line comes first
    env = {c.ENV_SLACK_BOT_TOKEN: "xoxb-1", c.ENV_SLACK_API_URL: slack, c.ENV_BOT_TOKEN: "t0ken"}
    says = f"listening on {shown}:"
    with _started(argv, says, env, tmp_path) as line:
        port = int(line.split(says, 1)[1].split()[0])
        assert port > 0, line
        assert requests.get(f"http://{shown}:{port}{c.PATH_HEALTHZ}", timeout=10).status_code == 200


# -- the wall clock stepping back under the bot's page threads ------------------------------------------
def _slo_alert(severity: str) -> Alert:
    labels = {c.LABEL_ALERTNAME: "TritonSLOBurn", c.L_SLO: "availability", c.LABEL_MODEL: "m",
              c.L_SEVERITY: severity}  # fmt: skip
    return Alert(status="firing", labels=labels, annotations={})


@pytest.mark.parametrize(("step_s", "threaded"), [(30.0, True), (-30.0, True), (-2 * 86400.0, False)])
def test_a_ticket_is_threaded_under_a_page_only_near_it_whichever_way_the_clock_stepped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step_s: float, threaded: bool
) -> None:
    """Before: a page recorded, then the wall clock stepped back two days (a clock that ran ahead, mended):
    its age read negative, under the hour, and every ticket of the next two days went into that old
    page's thread. Now a page stamped over the hour ahead counts as not near; a step of seconds either
    way still threads."""
    threads = PageThreads(str(tmp_path / "side.db"), "cluster")
    start = time.time()
    monkeypatch.setattr(time, "time", lambda: start)
    threads.record_pages([_slo_alert(c.SEVERITY_PAGE)], "#x", "1.000001")
    monkeypatch.setattr(time, "time", lambda: start + step_s)
    found = threads.page_for([_slo_alert(c.SEVERITY_TICKET)])
    assert found == (("#x", "1.000001") if threaded else None)
