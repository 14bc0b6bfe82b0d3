"""Rollouts on a real Triton (explicit model control) scraped by a real Prometheus that evaluates the
rules `triton-sre generate` writes for a 40 s rollout window, all in one traffic phase:

- two versions of one model: a ten-times-slower version 2 fails `rollout check`, an equal version 2
  passes at every check, a version 2 with almost no traffic is inconclusive;
- a blue/green pair of model names declared in the spec (the green ones loaded through the
  model-control API beside the running blue ones): the same three verdicts;
- `TritonRolloutRegression` fires for the slow version and the slow green model, never for the
  equal ones; the bot's lines for the fired alerts and the slash command's answers (a version, a
  pair's name, a model two pairs share).
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests
from binaries import binary
from live_prometheus import Prom, start_prometheus, stop_prometheus, wait_ready

from triton_sre import conventions as c
from triton_sre.bot.enrich import Facts, Links, enrich
from triton_sre.bot.payload import parse_group
from triton_sre.bot.slack import Renderer
from triton_sre.cli import main
from triton_sre.data import shipped
from triton_sre.durations import parse_duration
from triton_sre.generate.rollout import ROLLOUT_FILE
from triton_sre.prom import Prometheus
from triton_sre.promql import selector
from triton_sre.rollout.live import alert_lines, model_answer
from triton_sre.rollout.model import NO_DATA
from triton_sre.slo import load_spec
from triton_sre.stack.local_triton import LocalTriton
from triton_sre.stack.processes import free_port

pytestmark = [pytest.mark.triton, pytest.mark.server]  # a private Triton started without the fixtures

REPOSITORY = Path(__file__).parent / "data" / "rollout_models"
JOB = "triton"  # the shipped spec's scrape.triton_job
WINDOW, STEP = "40s", "4s"
P99_MARGIN = 0.5
SLOW_S = 0.08  # the slow models' sleep per request (config.pbtxt)
RECORDING_FILE = "triton-recording-rules.yaml"  # the guard's p99 reads its latency quantiles
# blue/green pairs (name, blue, green): green ten times slower, as fast, almost no traffic
PAIRS = (
    ("scaler", "scaler_blue", "scaler_green"),
    ("steady", "steady_blue", "steady_green"),
    ("quiet", "steady_blue", "quiet_green"),
)
# p99 margin 50 %: over a 40 s window on the shared 2-core test machine the guard's p99 of two
# equal models differed by more than 20 % for longer than the alert's `for` (docs/rollouts.md)
SPEC_TAIL = (
    f"rollout:\n  window: {WINDOW}\n  margins: {{{c.ROLLOUT_FIG_LATENCY_P99}: {P99_MARGIN}}}\n  pairs:\n"
    + "".join(f"    - {{name: {n}, baseline: {b}, candidate: {g}}}\n" for n, b, g in PAIRS)
)
AT_START = ["canary", "steady", "quiet", "scaler_blue", "steady_blue"]
GREEN = ["scaler_green", "steady_green", "quiet_green"]  # loaded later through model control
BUSY, RARE = 0.02, 20.0  # pause between a driver's requests (s): busy, or two or three per window
TRAFFIC = (
    ("canary", "1", BUSY),
    ("canary", "2", BUSY),
    ("steady", "1", BUSY),
    ("steady", "2", BUSY),
    ("quiet", "1", BUSY),
    ("quiet", "2", RARE),
    ("scaler_blue", "1", BUSY),
    ("scaler_green", "1", BUSY),
    ("steady_blue", "1", BUSY),
    ("steady_green", "1", BUSY),
    ("quiet_green", "1", RARE),
)
# the slow candidates' p99 alerts: (model label, the label naming the baseline's side)
SLOW_ALERTS = {"canary v2": ("canary", "1"), "scaler_green": ("scaler_green", "scaler_blue")}
EQUAL_MODELS = ("steady", "steady_green", "quiet", "quiet_green")
FIRE_DEADLINE_S = 150.0  # from the first request; measured: see docs/rollouts.md
CHECKS = {  # name -> flags of `rollout check`
    "slow version": ["--model", "canary", "--baseline-version", "1", "--candidate-version", "2"],
    "equal version": ["--model", "steady", "--baseline-version", "1", "--candidate-version", "2"],
    "quiet version": ["--model", "quiet", "--baseline-version", "1", "--candidate-version", "2"],
    "slow pair": ["--pair", "scaler"],  # the spec's pair: scaler_blue -> scaler_green
    "equal pair": ["--baseline-model", "steady_blue", "--candidate-model", "steady_green"],
    "quiet pair": ["--baseline-model", "steady_blue", "--candidate-model", "quiet_green"],
}
REPEATS = ("equal version", "equal pair")  # judged again on later windows: never a false fail


@dataclass
class Phase:
    """What one traffic phase produced, for the tests below to judge."""

    checks: dict[str, list[tuple[int, dict[str, Any]]]] = field(default_factory=dict)
    fired: dict[str, dict[str, str]] = field(default_factory=dict)  # SLOW_ALERTS key -> alert labels
    fired_after: dict[str, float] = field(default_factory=dict)  # seconds from the first request
    equal_firing: list[dict[str, Any]] = field(default_factory=list)  # ALERTS series, should be none
    traffic_s: float = 0.0  # length of the traffic phase
    pending_at: list[str] = field(default_factory=list)  # when an equal candidate was pending
    equal_p99_ratio: dict[str, float] = field(default_factory=dict)  # the guard's, worst, full windows
    promtool: str = ""
    bot: dict[str, list[str]] = field(default_factory=dict)
    answer: list[str] = field(default_factory=list)
    pair_answers: dict[str, list[str]] = field(default_factory=dict)
    sent: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def _infer(url: str, model: str, version: str) -> None:
    body = {"inputs": [{"name": "INPUT", "shape": [4], "datatype": "FP32", "data": [1, 2, 3, 4]}]}
    r = requests.post(f"{url}/v2/models/{model}/versions/{version}/infer", json=body, timeout=10)
    r.raise_for_status()


def _drive(url: str, model: str, version: str, pause: float, stop: threading.Event, phase: Phase) -> None:
    key = f"{model} v{version}"
    phase.sent[key] = 0
    while not stop.is_set():
        try:
            _infer(url, model, version)
            phase.sent[key] += 1
        except requests.RequestException as exc:
            phase.errors.append(f"{key}: {exc}")
        stop.wait(pause)


def _load(url: str, model: str) -> None:
    """Explicit model control: load `model` beside the running ones (the green deploy)."""
    r = requests.post(f"{url}/v2/repository/models/{model}/load", timeout=120)
    assert r.status_code == 200, f"load {model}: {r.status_code} {r.text}"
    assert requests.get(f"{url}/v2/models/{model}/ready", timeout=5).status_code == 200, model


def _check(prom_url: str, spec: Path, flags: list[str]) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(
            [
                "rollout", "check", "--prometheus", prom_url, "--spec", str(spec), *flags,
                "--window", WINDOW, "--step", STEP, "--format", "json",
            ]
        )  # fmt: skip
    return code, json.loads(out.getvalue())


def _rollout_alerts(prom: Prom) -> list[dict[str, Any]]:
    body = requests.get(f"{prom.url}/api/v1/alerts", timeout=10).json()
    return [
        a for a in body["data"]["alerts"] if a["labels"].get(c.LABEL_ALERTNAME) == c.ALERT_ROLLOUT_REGRESSION
    ]


def _slow_key(labels: dict[str, str]) -> str | None:
    """Which SLOW_ALERTS entry a p99 alert is, if any."""
    if labels.get(c.LABEL_FIGURE) != c.ROLLOUT_FIG_LATENCY_P99:
        return None
    for key, (model, baseline) in SLOW_ALERTS.items():
        if labels.get(c.LABEL_MODEL) == model and labels.get(c.LABEL_BASELINE) == baseline:
            return key
    return None


def _equal_p99_ratios(prom: Prometheus, started: float) -> dict[str, float]:
    """The worst ratio between the guard's p99 figures of the two equal sides, once both windows
    were full (for the docs: how far apart two equal models' p99 are over a short window)."""
    p99 = selector(c.rec_rollout_figure(WINDOW), [(c.LABEL_FIGURE, "=", c.ROLLOUT_FIG_LATENCY_P99)])
    start = started + parse_duration(WINDOW, "window")
    series = {
        (r["metric"][c.LABEL_MODEL], r["metric"].get(c.LABEL_VERSION)): dict(r["values"])
        for r in prom.query_range(p99, start, time.time(), 1)
    }
    sides = {
        "steady v2/v1": (("steady", "2"), ("steady", "1")),
        "steady_green/steady_blue": (("steady_green", "1"), ("steady_blue", "1")),
    }
    ratios = {}
    for name, (a, b) in sides.items():
        xs, ys = series.get(a, {}), series.get(b, {})
        both = [(float(xs[t]), float(ys[t])) for t in xs if t in ys]
        ratios[name] = max((max(x / y, y / x) for x, y in both if x > 0 and y > 0), default=float("nan"))
    return ratios


@pytest.fixture(scope="module")
def phase(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phase]:
    work = tmp_path_factory.mktemp("rollout")
    repo = work / "models"
    shutil.copytree(REPOSITORY, repo, symlinks=False)  # the Python stub writes __pycache__ into it
    spec_path = work / "slos.yaml"
    spec_path.write_text(shipped("slos.yaml").read_text() + SPEC_TAIL)
    spec = load_spec(spec_path)
    with contextlib.redirect_stdout(io.StringIO()):  # the list of files written
        assert main(["generate", "--spec", str(spec_path), "--out", str(work / "gen")]) == c.EXIT_OK
    result = Phase()
    result.promtool = subprocess.run(
        [binary("promtool"), "test", "rules", "triton-rollout-rules.test.yaml"],
        cwd=work / "gen" / "alerts" / "tests",
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    triton = LocalTriton(
        repo,
        model_control_mode="explicit",
        load_models=AT_START,
        extra_args=["--metrics-interval-ms=500"],
        workdir=work / "triton",
    )
    triton.start()
    with ThreadPoolExecutor(len(GREEN)) as pool:
        list(pool.map(lambda m: _load(triton.http_url, m), GREEN))
    target = triton.metrics_url.split("//", 1)[1].split("/", 1)[0]
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "900ms"},
        "rule_files": [str(work / "gen" / "alerts" / f) for f in (RECORDING_FILE, ROLLOUT_FILE)],
        "scrape_configs": [{"job_name": JOB, "static_configs": [{"targets": [target]}]}],
    }
    port = free_port()
    proc, log = start_prometheus(work, config, port)
    stop = threading.Event()
    drivers = [
        threading.Thread(target=_drive, args=(triton.http_url, m, v, pause, stop, result), daemon=True)
        for m, v, pause in TRAFFIC
    ]
    try:
        prom = wait_ready(proc, work, port)
        assert prom.wait_for(f'up{{job="{JOB}"}} == 1'), "Triton not scraped"
        for model, version, _ in TRAFFIC:  # each side answers before the phase (a load fault fails here)
            _infer(triton.http_url, model, version)
        started, started_wall = time.monotonic(), time.time()
        for d in drivers:
            d.start()
        # one phase: until both slow candidates' p99 alerts fire and a full window of traffic is in
        window_due = started + parse_duration(WINDOW, "window") + parse_duration(STEP, "step") + 1
        while time.monotonic() < started + FIRE_DEADLINE_S:
            for alert in _rollout_alerts(prom):
                key = _slow_key(alert["labels"])
                if key and alert["state"] == "firing" and key not in result.fired:
                    result.fired[key] = alert["labels"]
                    result.fired_after[key] = time.monotonic() - started
            if len(result.fired) == len(SLOW_ALERTS) and time.monotonic() >= window_due:
                break
            time.sleep(0.5)
        for name, flags in CHECKS.items():
            result.checks[name] = [_check(prom.url, spec_path, flags)]
        for _ in range(2):  # later windows
            time.sleep(6)
            for name in REPEATS:
                result.checks[name].append(_check(prom.url, spec_path, CHECKS[name]))
        for key, labels in result.fired.items():
            result.bot[key] = alert_lines(Prometheus(prom.url), labels, spec)
        result.answer = model_answer(Prometheus(prom.url), "canary", spec)
        for name in ("scaler", "steady_blue"):  # a pair's name; the baseline of two pairs
            result.pair_answers[name] = model_answer(Prometheus(prom.url), name, spec)
        elapsed = int(time.time() - started_wall) + 1
        equal = f'alertname="{c.ALERT_ROLLOUT_REGRESSION}", model=~"{"|".join(EQUAL_MODELS)}"'
        firing = f'count_over_time(ALERTS{{{equal}, alertstate="firing"}}[{elapsed}s])'
        result.equal_firing = prom.query(firing)  # one sample per rule evaluation (1 s) while firing
        result.traffic_s = time.monotonic() - started
        result.equal_p99_ratio = _equal_p99_ratios(Prometheus(prom.url), started_wall)
        pending = f'ALERTS{{{equal}, alertstate="pending"}}'
        for series in Prometheus(prom.url).query_range(pending, started_wall, time.time(), 1):
            seconds = [float(t) - started_wall for t, _ in series["values"]]
            result.pending_at.append(f"{series['metric']}: {min(seconds):.0f}-{max(seconds):.0f} s")
    finally:
        stop.set()
        for d in drivers:
            d.join(timeout=15)
        stop_prometheus(proc, log)
        triton.stop()
    print("\nrequests sent:", result.sent, "errors:", result.errors[:5])
    for name, runs in result.checks.items():
        for code, r in runs:
            figures = [(f["name"], f["baseline"], f["candidate"], f["p_value"]) for f in r["figures"]]
            print(name, code, r["verdict"], r["request_rate"], figures)
    print("fired after (s):", result.fired_after)
    print("traffic phase (s):", round(result.traffic_s, 1))
    print("equal pending at:", result.pending_at)
    print("equal sides' worst guard p99 ratio:", result.equal_p99_ratio)
    yield result


def _verdict(result: tuple[int, dict[str, Any]]) -> tuple[int, str]:
    return result[0], result[1]["verdict"]


@pytest.mark.parametrize("kind", ["version", "pair"])
def test_rollout_check_verdicts(phase: Phase, kind: str) -> None:
    assert not phase.errors, phase.errors[:5]
    (slow,) = phase.checks[f"slow {kind}"]
    assert _verdict(slow) == (c.EXIT_FAILURE, c.ROLLOUT_FAIL), slow
    figures = {f["name"]: f for f in slow[1]["figures"]}
    p99, p50 = figures[c.ROLLOUT_FIG_LATENCY_P99], figures[c.ROLLOUT_FIG_LATENCY_P50]
    # Triton's summary quantiles cover 60 s: a 40 s window holds one independent read per side, too
    # few to test (the figures show it, the verdict comes from the per-interval counter figures)
    for quantile in (p99, p50):
        assert quantile["verdict"] == NO_DATA and quantile["samples"] == [1, 1], quantile
    assert p99["candidate"] >= SLOW_S and p50["candidate"] > 3 * p50["baseline"], (p99, p50)
    assert figures[c.ROLLOUT_FIG_COMPUTE_PER_INFERENCE]["verdict"] == c.ROLLOUT_FAIL
    equal = phase.checks[f"equal {kind}"]
    assert len(equal) == 3
    for result in equal:
        assert _verdict(result) == (c.EXIT_OK, c.ROLLOUT_PASS), result
    (quiet,) = phase.checks[f"quiet {kind}"]
    assert _verdict(quiet) == (c.EXIT_INCONCLUSIVE, c.ROLLOUT_INCONCLUSIVE), quiet
    assert ("quiet v2" if kind == "version" else "quiet_green") in quiet[1]["reason"]


def test_generated_short_window_rules_pass_promtool(phase: Phase) -> None:
    assert "SUCCESS" in phase.promtool and "FAILED" not in phase.promtool, phase.promtool


def test_alert_fires_for_slow_candidates_only(phase: Phase) -> None:
    assert set(phase.fired) == set(SLOW_ALERTS), (phase.fired, phase.fired_after)
    pair = phase.fired["scaler_green"]
    assert (pair[c.LABEL_CANDIDATE], pair[c.LABEL_BASELINE]) == ("scaler_green", "scaler_blue")
    assert phase.fired["canary v2"][c.LABEL_VERSION] == "2"
    assert phase.equal_firing == [], [s["metric"] for s in phase.equal_firing]


def test_bot_shows_the_fired_alerts_comparison(phase: Phase) -> None:
    expected = {"canary v2": "canary v2 vs canary v1", "scaler_green": "scaler_green vs scaler_blue"}
    for key, head in expected.items():
        lines = phase.bot[key]
        print(key, lines)
        assert lines[0].startswith(f"{head}: {c.ROLLOUT_FAIL}"), lines
        labels = phase.fired[key]
        notification = {
            "version": "4",
            "groupKey": "{}:{x}",
            "status": c.AM_STATUS_FIRING,
            "receiver": "bot",
            "groupLabels": {},
            "commonLabels": {},
            "commonAnnotations": {},
            "alerts": [
                {"status": c.AM_STATUS_FIRING, "labels": labels, "annotations": {}, "fingerprint": "r1"}
            ],
        }
        message = enrich(parse_group(notification), Facts(rollout={"r1": lines}), Links())
        shown = json.dumps(Renderer().blocks(message.context()), ensure_ascii=False)
        assert f"*Rollout:* {head}: fail" in shown
        assert f"• {c.ROLLOUT_FIG_COMPUTE_PER_INFERENCE}: " in shown and "(fail)" in shown
        # the alert's own figure, one summary read a side in a 40 s window: shown, not judged
        assert f"• {c.ROLLOUT_FIG_LATENCY_P99}: " in shown and f"({NO_DATA}: 1 and 1 samples)" in shown
    print("slash:", phase.answer, phase.pair_answers)
    assert phase.answer[0].startswith(f"canary v2 vs canary v1: {c.ROLLOUT_FAIL.upper()}")
    scaler = phase.pair_answers["scaler"]
    assert scaler[0].startswith(f"scaler_green vs scaler_blue: {c.ROLLOUT_FAIL.upper()}"), scaler
    heads = [line for line in phase.pair_answers["steady_blue"] if not line.startswith(" ")]
    assert heads[0].startswith(f"steady_green vs steady_blue: {c.ROLLOUT_PASS.upper()}"), heads
    assert heads[1].startswith(f"quiet_green vs steady_blue: {c.ROLLOUT_INCONCLUSIVE.upper()}"), heads
