"""Round sixteen, continued (docs/failure-behaviour.md): what round sixteen left open, each test
failing before its change. Gameday: a second one on the workdir of one running."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.gameday.command import GAMEDAY_LOCK
from triton_sre.stack.components import STATE_FILE, Component, process_start_time, save_state
from triton_sre.stack.guard import workdir_lock

ROOT = Path(__file__).resolve().parents[1]
GAMEDAY = [sys.executable, "-m", "triton_sre.cli", "gameday", "--scenario", "exporter-killed"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture
def running_stack(tmp_path: Path):
    """The workdir of a gameday whose stack runs: its model repository, and a state file naming a live
    process (its own process group, as every component's)."""
    workdir = tmp_path / "gd"
    (workdir / "models" / "vector_scale").mkdir(parents=True)
    (workdir / "models" / "vector_scale" / "config.pbtxt").write_text("served\n")
    (workdir / "stack").mkdir()
    proc = subprocess.Popen(["sleep", "300"], start_new_session=True)
    start = process_start_time(proc.pid)
    assert start is not None
    save_state(workdir / "stack", [Component("triton", proc.pid, start, "http://127.0.0.1:1", "", [])], {})
    yield workdir, proc
    proc.kill()
    proc.wait()


def test_a_second_gameday_on_a_running_ones_workdir_is_refused_and_touches_nothing(running_stack) -> None:
    """Before: the second rebuilt the model repository under the first one's Triton, failed to start
    its stack ("a stack is already running"), then stopped the first one's whole stack, exit 1
    (measured on the real stack: its six components stopped 4.2 s after the second started)."""
    workdir, first = running_stack
    done = subprocess.run(
        [*GAMEDAY, "--workdir", str(workdir)], capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=120
    )
    assert done.returncode == c.EXIT_USAGE, done.stderr
    assert "a stack is already running" in done.stderr and "--attach" in done.stderr
    assert first.poll() is None, "the first gameday's stack was stopped"
    assert (workdir / "models" / "vector_scale" / "config.pbtxt").read_text() == "served\n"
    assert json.loads((workdir / "stack" / STATE_FILE).read_text())["components"][0]["pid"] == first.pid
    assert "stopping" not in done.stderr


def test_a_gameday_holding_its_workdir_keeps_a_second_one_out(tmp_path: Path) -> None:
    """The first gameday holds its workdir for its whole run (before its stack is recorded too)."""
    workdir = tmp_path / "gd"
    workdir.mkdir()
    (workdir / "models").mkdir()
    (workdir / "models" / "kept").write_text("x")
    with workdir_lock(workdir, GAMEDAY_LOCK):
        done = subprocess.run(
            [*GAMEDAY, "--workdir", str(workdir)],
            capture_output=True,
            text=True,
            env=ENV,
            cwd=ROOT,
            timeout=120,
        )
    assert done.returncode == c.EXIT_USAGE, done.stderr
    assert f"another gameday runs in {workdir} (pid {os.getpid()})" in done.stderr
    assert (workdir / "models" / "kept").exists()


# -- rollouts: a real Prometheus holding backfilled series (tests/backfilled_prometheus.py) -----------
SCRAPE_S, HISTORY_S, RATE = 15.0, 1200.0, 10.0  # the rollout window (15m) is inside the history
LAT = "lat"  # v2 serves without latency series (request and queue duration absent)
VS, NORTH, REPO_A, REPO_B = "vs", "north", "/models/repo_a", "/models/repo_b"
DB = "db"  # the spec's exporter says no dynamic batcher; another job's gauge says one runs
EN = "en"  # only another job's exporter marks it an ensemble
OTHER_JOB = "staging-exporter"


def _counters(labels: dict[str, str], failed: float = 0.0, rate_: float = RATE, latency: bool = True):
    per_s = {
        c.NV_REQUEST_SUCCESS: rate_ * (1 - failed),
        c.NV_REQUEST_FAILURE: rate_ * failed,
        c.NV_INFERENCE_COUNT: rate_ * (1 - failed),
        c.NV_EXEC_COUNT: rate_,
        c.NV_COMPUTE_INFER_DURATION_US: rate_ * 15_000,
    }
    if latency:
        per_s |= {c.NV_REQUEST_DURATION_US: rate_ * 20_000, c.NV_QUEUE_DURATION_US: rate_ * 2_000}
    return per_s


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory):
    from backfilled_prometheus import backfilled

    start = time.time() - HISTORY_S
    stamps = [start + SCRAPE_S * i for i in range(int(HISTORY_S / SCRAPE_S))]
    job = {c.LABEL_JOB: c.DEFAULT_TRITON_JOB}
    sides = [
        ({**job, c.LABEL_MODEL: LAT, c.LABEL_VERSION: "1"}, _counters({})),
        ({**job, c.LABEL_MODEL: LAT, c.LABEL_VERSION: "2"}, _counters({}, latency=False)),
        ({**job, c.LABEL_MODEL: DB, c.LABEL_VERSION: "1"}, _counters({})),
        ({**job, c.LABEL_MODEL: DB, c.LABEL_VERSION: "2"}, _counters({}, rate_=RATE / 2)),
        ({**job, c.LABEL_MODEL: EN, c.LABEL_VERSION: "1"}, _counters({})),
        ({**job, c.LABEL_MODEL: EN, c.LABEL_VERSION: "2"}, _counters({})),
    ]
    for (namespace, version), failed in {(REPO_A, "1"): 0.5, (REPO_B, "1"): 0.0, (REPO_B, "2"): 0.2}.items():
        labels = {**job, c.LABEL_MODEL: VS, c.LABEL_VERSION: version, c.LABEL_CLUSTER: NORTH}
        sides.append(({**labels, c.LABEL_NAMESPACE: namespace}, _counters({}, failed)))
    series = [
        (name, labels, [(t, v * (t - start)) for t in stamps])
        for labels, per_s in sides
        for name, v in per_s.items()
    ]
    for exporter, said in ((c.DEFAULT_EXPORTER_JOB, 0.0), (OTHER_JOB, 1.0)):
        labels = {c.LABEL_JOB: exporter, c.LABEL_MODEL: DB}
        series.append((c.M_MODEL_DYNAMIC_BATCHING, labels, [(t, said) for t in stamps]))
    series.append(
        (c.M_MODEL_ENSEMBLE, {c.LABEL_JOB: OTHER_JOB, c.LABEL_MODEL: EN}, [(t, 1.0) for t in stamps])
    )
    with backfilled(tmp_path_factory.mktemp("prom"), series) as prom:
        yield prom


def _check(store, capsys: pytest.CaptureFixture[str], model: str) -> tuple[int, dict]:
    from triton_sre.cli import main

    argv = ["rollout", "check", "--prometheus", store.url, "--model", model, "--format", "json"]
    code = main([*argv, "--baseline-version", "1", "--candidate-version", "2"])
    return code, json.loads(capsys.readouterr().out)


def test_a_candidate_without_the_baselines_latency_series_is_no_pass(store, capsys) -> None:
    """Before: queue-share `no data` (60 and 0 samples) and pass, exit 0, the reason silent on it."""
    from triton_sre.prom import Prometheus
    from triton_sre.rollout.live import model_answer
    from triton_sre.slo import default_spec

    code, verdict = _check(store, capsys, LAT)
    assert (code, verdict["verdict"]) == (c.EXIT_INCONCLUSIVE, c.ROLLOUT_INCONCLUSIVE), verdict
    assert f"the candidate lacks what the baseline has: {c.ROLLOUT_FIG_QUEUE_SHARE} (" in verdict["reason"]
    # the bot judges the same figure alike
    lines = model_answer(Prometheus(store.url), LAT, default_spec())
    assert lines[0].startswith(f"{LAT} v2 vs {LAT} v1: {c.ROLLOUT_INCONCLUSIVE.upper()} ("), lines
    assert c.ROLLOUT_FIG_QUEUE_SHARE in lines[0]


def test_a_candidate_with_every_figure_still_passes(store, capsys) -> None:
    code, verdict = _check(store, capsys, DB)
    assert (code, verdict["verdict"]) == (c.EXIT_OK, c.ROLLOUT_PASS), verdict


def test_the_slash_command_for_a_cluster_judges_each_namespace_on_its_own(store) -> None:
    """`/triton rollout vs north`: before, `vs v2 in north vs vs v1 in north: PASS`, repository A's failing
    v1 summed into the baseline (error ratio 0.25 -> 0.2); now each namespace of the cluster on its own."""
    from triton_sre.prom import Prometheus
    from triton_sre.rollout.live import model_answer
    from triton_sre.slo import default_spec

    lines = model_answer(Prometheus(store.url), VS, default_spec(), NORTH)
    assert lines[0].startswith(
        f"{VS} served requests in {c.LABEL_CLUSTER} {NORTH} in 2 namespaces ({c.LABEL_NAMESPACE}: {REPO_A}, "
    ), lines
    (head,) = [line for line in lines if " vs " in line and not line.startswith(" ")]
    assert head.startswith(f"{VS} v2 in {NORTH} in {REPO_B} vs {VS} v1 in {NORTH} in {REPO_B}: FAIL "), lines
    assert any(f"{c.ROLLOUT_FIG_ERROR_RATIO}: 0 -> 0.2" in line for line in lines), lines
    assert any(line.startswith(f"{VS}: fewer than two versions") and REPO_A in line for line in lines), lines


def _dies(procs: dict[str, subprocess.Popen], raises: bool):  # type: ignore[type-arg]
    def inject(ctx: object) -> None:
        procs["prometheus"].kill()
        procs["prometheus"].wait()
        if raises:  # as a model-control call to a Triton killed under it
            raise ConnectionError("Connection reset by peer")

    return inject


@pytest.mark.parametrize("raises", [False, True], ids=["waiting", "inject-raises"])
def test_a_gameday_whose_prometheus_died_says_so_instead_of_waiting_out_its_timeouts(
    tmp_path: Path, raises: bool
) -> None:
    """Measured on the real stack: Prometheus SIGKILLed 0.2 s after an injection, the gameday waited the
    whole 120 s detection timeout and scored `detected=False`, the dead Prometheus unsaid (exit 1 after
    155.8 s). Now the wait ends at the first poll that sees a component no scenario stopped gone, and the
    result names it; one a scenario stops (`stack.stop`) is no death."""
    from types import SimpleNamespace

    from triton_sre.gameday import runner
    from triton_sre.gameday.observer import Timeline
    from triton_sre.gameday.scaling import Scale
    from triton_sre.gameday.scenarios import Expect, Scenario
    from triton_sre.gameday.stack import GamedayStack
    from triton_sre.stack.local import StackOptions

    stack = GamedayStack(
        StackOptions(tmp_path / "models", tmp_path / "work"), Scale(factor=20), lambda _: None
    )
    procs = {
        name: subprocess.Popen(["sleep", "300"], start_new_session=True) for name in ("prometheus", "bot")
    }
    try:
        for name, proc in procs.items():
            start = process_start_time(proc.pid)
            assert start is not None
            stack.components.append(Component(name, proc.pid, start, "http://127.0.0.1:1", f"{name}.log", []))
        stack.stop("bot")  # as a scenario stops a component: not a death
        assert stack.died() == []
        restored: list[bool] = []
        scenario = Scenario(
            "never-fires",
            "nothing",
            _dies(procs, raises),  # the stack dies mid-injection
            lambda ctx: restored.append(True),
            Expect("A", "r", detect_timeout=60.0),
        )
        started = time.monotonic()
        result = runner.run(scenario, SimpleNamespace(stack=stack), Timeline(), lambda _: None)  # type: ignore[arg-type]
        took = time.monotonic() - started
    finally:
        for proc in procs.values():
            proc.kill()
            proc.wait()
    assert took < 30, took  # not the 60 s detection timeout
    assert result.error is not None and result.error.startswith("the stack died mid-game: "), result.error
    assert (
        result.error is not None
        and f"prometheus (pid {procs['prometheus'].pid}), log prometheus.log" in result.error
    )
    assert "bot" not in result.error and restored == [True] and not result.passed


def test_the_instant_reads_hear_only_the_specs_exporter(store, capsys) -> None:
    """Another job's exporter gauges (a staging exporter scraped into the same store) decided the
    instant reads, as the guard's rules and the templates never let them: `db`'s batching ratio was
    "not judged" at lower load (a batcher said to run) instead of for the spec exporter's "no dynamic
    batcher", and `en` was named an ensemble in the reason, in `rollout check` and the bot alike."""
    from triton_sre.prom import Prometheus
    from triton_sre.rollout.live import model_answer
    from triton_sre.rollout.model import NO_BATCHER
    from triton_sre.slo import default_spec

    code, verdict = _check(store, capsys, DB)
    assert code == c.EXIT_OK and NO_BATCHER in verdict["reason"], verdict["reason"]
    code, verdict = _check(store, capsys, EN)
    assert code == c.EXIT_OK and verdict["ensembles"] == {"baseline": [], "candidate": []}, verdict
    assert "ensembles (" not in verdict["reason"]
    for model, present, absent in ((DB, NO_BATCHER, "of the baseline"), (EN, "", "ensembles (")):
        (head, *_) = model_answer(Prometheus(store.url), model, default_spec())
        assert present in head and absent not in head, head


def test_the_figures_hear_only_the_specs_exporters_ensemble_mark(store, capsys) -> None:
    """tidy33: the figures themselves left a model out of queue-share and batching-ratio when any job's
    triton_sre_model_ensemble marked it (`en`: only the staging exporter does), in all four readers: the
    guard's rules, the Argo/Flagger templates, the range reads of `rollout check` and of the bot."""
    from triton_sre.generate.rollout import figure_exprs
    from triton_sre.prom import Prometheus
    from triton_sre.rollout.figures import FIGURES
    from triton_sre.rollout.k8s import compare_query
    from triton_sre.rollout.live import model_answer
    from triton_sre.rollout.sides import version_sides
    from triton_sre.slo import default_spec

    spec, prom = default_spec(), Prometheus(store.url)
    scheduled = (c.ROLLOUT_FIG_QUEUE_SHARE, c.ROLLOUT_FIG_BATCHING_RATIO)
    _, verdict = _check(store, capsys, EN)
    samples = {f["name"]: f["samples"] for f in verdict["figures"] if f["name"] in scheduled}
    assert len(samples) == 2 and all(min(n) > 0 for n in samples.values()), samples
    lines = model_answer(prom, EN, spec)
    assert all(any(line.strip().startswith(f"{name}: ") for line in lines) for name in scheduled), lines
    exprs = figure_exprs(spec, c.REC_RATE_WINDOW)
    for name in scheduled:
        rows = prom.vector(exprs[name])
        assert EN in {labels.get(c.LABEL_MODEL) for labels, _ in rows}, (name, rows)
    sides = version_sides(c.DEFAULT_TRITON_JOB, EN, "1", "2")
    for figure in (f for f in FIGURES if f.name in scheduled):
        query = compare_query(figure, *sides, c.REC_RATE_WINDOW, spec, spec.latency_metrics)
        assert prom.vector(query), figure.name
