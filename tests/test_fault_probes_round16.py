"""Fault probes, round sixteen (branch `probes16`, 2026-12-06): the moments of change —
docs/failure-behaviour.md, "Fault probes, round sixteen". A real Prometheus holding backfilled series
(tests/backfilled_prometheus.py).

Under Triton's model namespacing (`--model-namespacing=true`, two repositories holding a model of one
name) every per-model series carries `namespace="<repository path>"` (tests/data/namespacing_2.51):
two different models share `model` and `version`. The continuous guard's rules keep the label
(alerts/triton-rollout-rules.yaml); here repository A's `vs` v1 fails half its requests, repository B's
v1 fails none and B's canary v2 fails a fifth. Summed over both namespaces the baseline's error ratio
is 0.25 and the canary "passes"."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from backfilled_prometheus import Series, backfilled
from live_prometheus import Prom, serve_text, start_prometheus, stop_prometheus, wait_ready
from test_bot_recovery import LONG, NORTH, SHORT, SLO, _steps
from test_bot_versions import MODEL as BOT_MODEL
from test_bot_versions import slo_alert

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.bot.config import BotSettings, ClusterEntry
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.bot.outbox import Outbox
from triton_sre.bot.recovery import CLEAN_WINDOW
from triton_sre.bot.slack import SlackDelivery
from triton_sre.bot.worker import Worker
from triton_sre.cli import main
from triton_sre.prom import Prometheus
from triton_sre.rollout.live import alert_lines, model_answer
from triton_sre.slo import default_spec
from triton_sre.stack.processes import free_port

SCRAPE_S, HISTORY_S = 15.0, 1200.0  # the rollout window (15m) is inside the history
MODEL, RATE = "vs", 10.0
REPO_A, REPO_B = "/models/repo_a", "/models/repo_b"
ERRORS = {(REPO_A, "1"): 0.5, (REPO_B, "1"): 0.0, (REPO_B, "2"): 0.2}  # failed share of each model version


@pytest.fixture(scope="module")
def namespaced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prom]:
    start = time.time() - HISTORY_S
    stamps = [start + SCRAPE_S * i for i in range(int(HISTORY_S / SCRAPE_S))]
    series: list[Series] = []
    for (namespace, version), failed in ERRORS.items():
        labels = {c.LABEL_JOB: c.DEFAULT_TRITON_JOB, c.LABEL_MODEL: MODEL, c.LABEL_VERSION: version}
        labels[c.LABEL_NAMESPACE] = namespace
        per_s = {
            c.NV_REQUEST_SUCCESS: RATE * (1 - failed),
            c.NV_REQUEST_FAILURE: RATE * failed,
            c.NV_INFERENCE_COUNT: RATE * (1 - failed),
            c.NV_EXEC_COUNT: RATE,
        }
        series += [(name, labels, [(t, v * (t - start)) for t in stamps]) for name, v in per_s.items()]
    with backfilled(tmp_path_factory.mktemp("prom"), series) as prom:
        yield prom


def _check(prom: Prom, capsys: pytest.CaptureFixture[str], *sides: str) -> tuple[int, dict, str]:
    code = main(["rollout", "check", "--prometheus", prom.url, "--model", MODEL, *sides, "--format", "json"])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def _error_ratio(verdict: dict) -> tuple[float, float]:
    (figure,) = [f for f in verdict["figures"] if f["name"] == c.ROLLOUT_FIG_ERROR_RATIO]
    return figure["baseline"], figure["candidate"]


def test_a_side_summing_two_namespaces_is_never_a_pass(
    namespaced: Prom, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: exit 0, pass, B's canary (0.2 failed) judged against A's and B's v1 summed (0.25). Now the
    check says the side sums two namespaces (stderr and reason) and a pass on it is inconclusive."""
    code, verdict, err = _check(namespaced, capsys, "--baseline-version", "1", "--candidate-version", "2")
    assert _error_ratio(verdict) == pytest.approx((0.25, 0.2), abs=1e-6)  # the sums, as measured
    assert (code, verdict["verdict"]) == (c.EXIT_INCONCLUSIVE, c.ROLLOUT_INCONCLUSIVE), verdict
    for said in (verdict["reason"], err):
        assert f"2 namespaces ({c.LABEL_NAMESPACE}: {REPO_A}, {REPO_B})" in said, said
    assert verdict["namespaces"] == {"baseline": [REPO_A, REPO_B], "candidate": [REPO_B]}


def test_sides_narrowed_to_one_namespace_are_judged_as_before(
    namespaced: Prom, capsys: pytest.CaptureFixture[str]
) -> None:
    """The selectors the message points at: B's v2 against B's v1 fails on its error ratio; nothing said."""
    code, verdict, err = _check(
        namespaced,
        capsys,
        "--baseline-selector",
        f'{c.LABEL_VERSION}="1",{c.LABEL_NAMESPACE}="{REPO_B}"',
        "--candidate-selector",
        f'{c.LABEL_VERSION}="2",{c.LABEL_NAMESPACE}="{REPO_B}"',
    )
    assert _error_ratio(verdict) == pytest.approx((0.0, 0.2), abs=1e-6)
    assert (code, verdict["verdict"]) == (c.EXIT_FAILURE, c.ROLLOUT_FAIL), verdict
    assert "namespaces" not in verdict["reason"] and "namespaces" not in err


def test_the_bots_lines_for_a_guard_alert_read_the_alerts_namespace(namespaced: Prom) -> None:
    """The guard's alert for B's v2 carries `namespace` (its rules keep it). Before, the bot's verdict
    line summed both namespaces' v1 and said pass under a firing alert; now it reads B's series."""
    labels = {
        c.LABEL_ALERTNAME: c.ALERT_ROLLOUT_REGRESSION,
        c.LABEL_JOB: c.DEFAULT_TRITON_JOB,
        c.LABEL_MODEL: MODEL,
        c.LABEL_VERSION: "2",
        c.LABEL_BASELINE: "1",
        c.LABEL_NAMESPACE: REPO_B,
    }
    lines = alert_lines(Prometheus(namespaced.url), labels, default_spec())
    assert f": {c.ROLLOUT_FAIL} (" in lines[0], lines
    (error,) = [line for line in lines if line.startswith(f"{c.ROLLOUT_FIG_ERROR_RATIO}:")]
    assert error.startswith(f"{c.ROLLOUT_FIG_ERROR_RATIO}: 0 -> 0.2"), lines


def test_the_slash_command_judges_each_namespace_on_its_own(namespaced: Prom) -> None:
    """`/triton rollout vs`: before, one line `vs v2 vs vs v1: PASS` (both repositories' v1 summed); now a
    line names the namespaces, B's canary fails against B's v1 and A (one version) has nothing to compare."""
    lines = model_answer(Prometheus(namespaced.url), MODEL, default_spec())
    assert lines[0].startswith(f"{MODEL} served requests in 2 namespaces ({c.LABEL_NAMESPACE}: {REPO_A}, "), (
        lines
    )
    heads = [line for line in lines if " vs " in line and not line.startswith(" ")]
    (head,) = heads
    assert head.startswith(f"{MODEL} v2 in {REPO_B} vs {MODEL} v1 in {REPO_B}: {c.ROLLOUT_FAIL.upper()} "), (
        lines
    )
    assert any(line.startswith(f"{MODEL}: fewer than two versions") and REPO_A in line for line in lines), (
        lines
    )


SECRET = "s3cr3t-pw"
UNMARKED = [
    f"admin:{SECRET}@triton:8000",
    f"http:/admin:{SECRET}@triton:8000",
    f"http://admin:{SECRET}/x@[::1",
]
"""Refused URLs whose credentials no `//` marks for `redact`: the scheme forgotten, one slash, a password
holding `/` (its first part ends the userinfo `redact` finds)."""


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    try:
        code = main(argv)
    except SystemExit as stop:  # argparse's usage error
        code = stop.code
    assert code == c.EXIT_USAGE
    out, err = capsys.readouterr()
    return out + err


@pytest.mark.parametrize("url", UNMARKED, ids=["no-scheme", "one-slash", "slash-in-password"])
def test_a_refused_url_never_shows_its_password(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: `got 'admin:s3cr3t-pw@triton:8000'` on stderr, from a flag, the bot's `clusters:` (or any
    config's URL) and an environment variable alike. Now the part before the last `@` is hidden and the
    host still named."""
    config = tmp_path / "bot.yaml"
    config.write_text(json.dumps({"bot": {"clusters": {"east": {"triton_url": url}}}}), encoding="utf-8")
    monkeypatch.setenv(c.ENV_TRITON_URL, url)
    said = [
        _refused(capsys, ["report", "--prometheus-url", url, "--last", "1h"]),
        _refused(capsys, ["bot", "--config", str(config)]),
        _refused(capsys, ["export"]),
    ]
    for text in said:
        assert SECRET not in text and "<redacted>@" in text, text
        assert "triton:8000" in text or "[::1" in text, text


OWN_FIX_AFTER_S = (
    20.0  # the cluster's burn clears this long after its Prometheus starts: the page is posted before
)


@pytest.fixture
def own_prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Prom, float]]:
    """North's own Prometheus: its series carry no cluster label (an external label adds it only to what it
    remote-writes). North's 5m SLO burn is 50x until OWN_FIX_AFTER_S, then 0 (the fix); one per test."""
    started = time.time()

    def exposition() -> str:
        burn = 50 * (1 - SLO.objective) if time.time() < started + OWN_FIX_AFTER_S else 0.0
        labels = pq.equal([(c.L_SLO, SLO.name), (c.LABEL_MODEL, BOT_MODEL)])
        lines = [
            f"{pq.selector(c.rec_slo_errors(CLEAN_WINDOW), labels)} {burn}",
            f"{pq.selector(c.rec_slo_errors(SHORT), labels)} {50 * (1 - SLO.objective)}",
            f"{pq.selector(c.REC_SLO_OBJECTIVE, pq.equal([(c.L_SLO, SLO.name)]))} {SLO.objective}",
        ]
        return "\n".join(lines) + "\n"

    server = serve_text(exposition)
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "900ms"},
        "scrape_configs": [
            {
                "job_name": "recorded",
                "static_configs": [{"targets": [f"127.0.0.1:{server.server_address[1]}"]}],
            }
        ],
    }
    work, port = tmp_path_factory.mktemp("north-prom"), free_port()
    running = start_prometheus(work, config, port)
    try:
        yield wait_ready(running[0], work, port), started
    finally:
        stop_prometheus(*running)
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("global_url", [False, True], ids=["no-global-prometheus", "global-down"])
def test_a_clusters_posted_page_gets_its_recovery_line_from_the_clusters_own_prometheus(
    own_prometheus: tuple[Prom, float], global_url: bool, tmp_path: Path
) -> None:
    """The recovery watch read only the bot's `prometheus_url`, with the cluster matcher: without one it
    did not run at all, and with one that does not hold north's series (down here) north's page, fixed
    while posted, never said so. Now it reads the cluster's own Prometheus (`clusters.north.prometheus_url`)
    without the cluster matcher, as the notification's figures are read."""
    prom, started = own_prometheus
    settings = BotSettings(
        channel="#c",
        prometheus_url=f"http://127.0.0.1:{free_port()}" if global_url else None,
        chart=False,
        clusters={NORTH: ClusterEntry(f"http://127.0.0.1:{free_port()}", prom.url)},
    )
    with SlackStandin(token="xoxb-test") as standin:
        worker = Worker(settings, Outbox(tmp_path / "o.sqlite3"), SlackDelivery("xoxb-test", standin.url), {})
        try:
            alert = slo_alert(NORTH, started, LONG)  # a group of one: its labels are the common ones
            payload = {"version": "4", "groupKey": "{}:north", "status": "firing", "receiver": "bot"}
            payload |= {"groupLabels": {}, "commonLabels": alert["labels"], "alerts": [alert]}
            worker.outbox.enqueue("{}:north", payload)
            posted = _steps(worker, lambda: standin.calls("chat.postMessage", ok_only=True), 30, "page")[0]
            ts = posted.response["ts"]

            def shown() -> str:
                return json.dumps(standin.message("#c", ts))

            assert "Recovering" not in shown(), "posted after the fix: the test proves nothing"
            assert worker.recovery is not None
            worker.recovery.poll_seconds = 1.0
            _steps(worker, lambda: "Recovering" in shown(), OWN_FIX_AFTER_S + 40, "recovery line")
        finally:
            worker.stop()
