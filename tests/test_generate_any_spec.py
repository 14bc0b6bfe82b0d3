"""`triton-sre generate` gives rules promtool accepts and tests that pass for every valid spec, not
only the shipped one: the generated tests follow the spec's floors, thresholds and replicas."""

from __future__ import annotations

import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml
from binaries import binary
from spec_draws import draw_spec

from triton_sre import conventions as c
from triton_sre.generate.calc import counter_series
from triton_sre.generate.command import render_all
from triton_sre.generate.families import rule_files
from triton_sre.slo import Spec, spec_from_mapping

TIMEOUT = 600  # s: one promtool run; a loaded machine is several times slower than a quiet one


def _render(raw: dict[str, Any], out: Path) -> Spec:
    spec = spec_from_mapping(raw, str(out / "slos.yaml"))
    for rel, content in render_all(spec, "runbooks/").items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(content)
    return spec


def _promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [binary("promtool"), *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)


def _promtool_test(out: Path, name: str) -> None:
    done = _promtool("test", "rules", name, cwd=out / "alerts" / "tests")
    assert done.returncode == 0, f"{name}: {done.stdout[-4000:]}{done.stderr[-2000:]}"


def _promtool_tests(out: Path, names: list[str]) -> None:
    """`_promtool_test` on each file, two at a time: promtool evaluates a file on one core, the machine
    has two."""
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda name: _promtool_test(out, name), names))


def test_operational_tests_follow_the_traffic_floor_and_the_gpu_threshold(tmp_path: Path) -> None:
    """A floor of 50 requests/s (the tests fed 1 and 10) and a latency SLO's own floor of 20 on its
    models (the others take the fallback queue threshold); GPU memory alerting only when full."""
    _render(
        {
            "operational": {"min_request_rate": 50, "gpu_memory_ratio": 1},
            "slos": [
                {"name": "a", "type": "availability", "objective": 99.9},
                {
                    "name": "l",
                    "type": "latency",
                    "objective": 99,
                    "threshold": "250ms",
                    "models": ["scaler"],
                    "min_request_rate": 20,
                },
            ],
        },
        tmp_path,
    )
    _promtool_test(tmp_path, "triton-alerts.test.yaml")


def test_autoscaling_tests_follow_each_entry_its_job_and_its_warm_floor(tmp_path: Path) -> None:
    """Entries each on its own scrape job (the signals recorded for every entry's job), one with a
    warm floor above the 3 replicas the lagging test's load asks for, one on an LLM signal, one on
    the queue: each entry's test checks its own alert and the desired replicas clamp_min gives."""
    spec = _render(
        {
            "slos": [{"name": "a", "type": "availability", "objective": 99.9}],
            "autoscaling": [
                {"deployment": "gpu", "min_replicas": 5, "max_replicas": 8},
                {"deployment": "llm", "job": "triton-llm", "signal": "llm_waiting", "max_replicas": 4},
                # a queue signal whose ratio to its target carries float noise
                {"deployment": "q", "job": "triton-q", "signal": "queue_time", "target": "3393ms"}
                | {"max_replicas": 9},
            ],
        },
        tmp_path,
    )
    assert spec.signal_jobs == ("triton", "triton-llm", "triton-q")
    # one rule identity per entry: the two lagging alerts differed in nothing but their expression
    rule_file = "alerts/triton-autoscaling-rules.yaml"
    checked = _promtool("check", "rules", "--lint-fatal", rule_file, cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    _promtool_test(tmp_path, "triton-autoscaling-rules.test.yaml")


def test_counter_series_never_reset_in_promtool(tmp_path: Path) -> None:
    """A run after increments with no exact float (10 x a 1278.952 floor x 60 s) starts where
    promtool's own float sum ends: resets() sees none, and the counter ends where the exact sum
    does, to float precision (it started a hair below the last value: a reset, read as the whole
    counter again, and a tokens SLO of that floor never burned)."""
    per_step = Fraction(127895_2, 10) * 6
    increments = [per_step] * 60 + [Fraction(0)] * 19 + [per_step] * 5 + [Fraction(1, 3)] * 7
    series = counter_series(increments)
    test = {
        "tests": [
            {
                "interval": "1m",
                "input_series": [{"series": "c", "values": series}],
                "promql_expr_test": [
                    {"expr": "resets(c[3h])", "eval_time": "91m", "exp_samples": [{"value": 0}]},
                    {
                        "expr": f"abs(c - {float(sum(increments))}) < bool 0.01",
                        "eval_time": "91m",
                        "exp_samples": [{"labels": "{}", "value": 1}],
                    },
                ],
            }
        ]
    }
    (tmp_path / "series.test.yaml").write_text(yaml.safe_dump(test))
    done = _promtool("test", "rules", "series.test.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_slices_longer_than_the_step_count_from_the_history_start(tmp_path: Path) -> None:
    """5-minute slices judged on 1-minute steps: Prometheus rates the first minutes of the history
    (a range reaching before the first sample), so the 6h window holds slices from the second
    sample on; the prediction counted them only from the fifth and expected too high a burn rate."""
    _render(
        {
            "scrape": {"latency_metrics": []},
            "slos": [
                {"name": "l", "type": "latency", "objective": 99.95, "threshold": "1s", "time_slice": "5m"}
            ],
        },
        tmp_path,
    )
    _promtool_test(tmp_path, "triton-slo-rules.test.yaml")


# Seeds of the drawn specs promtool runs (slow: each spec's SLO scenarios take 20-60 s of promtool).
# test_the_drawn_specs_are_valid_and_cover_the_spec checks that together they reach every SLO type,
# SLI, signal, latency source, cluster label and rollout setting the draws know.
SEEDS = (300, 29, 115, 303)


def test_the_drawn_specs_are_valid_and_cover_the_spec() -> None:
    """Every draw is a valid spec, and the seeds promtool runs reach every kind the spec documents."""
    specs = {seed: spec_from_mapping(draw_spec(seed), f"s{seed}.yaml") for seed in {*range(100), *SEEDS}}
    assert all(specs[seed] == spec_from_mapping(draw_spec(seed), f"s{seed}.yaml") for seed in SEEDS)
    run = [specs[seed] for seed in SEEDS]
    slos = [slo for spec in run for slo in spec.slos]
    assert {slo.type for slo in slos} == {c.SLO_AVAILABILITY, c.SLO_LATENCY, *c.LLM_SLO_TYPES}
    assert {s.latency_sli for s in slos if s.type == c.SLO_LATENCY} == {
        c.LATENCY_SLI_AUTO,
        c.LATENCY_SLI_HISTOGRAM,
        c.LATENCY_SLI_TIME_SLICE,
    }
    assert {e.signal for spec in run for e in spec.autoscaling} == set(c.SIGNALS)
    assert {m for spec in run for m in spec.latency_metrics} == set(c.LATENCY_METRICS)
    assert {spec.cluster_label is None for spec in run} == {True, False}
    assert {bool(draw_spec(seed).get("rollout")) for seed in SEEDS} == {True, False}
    assert max(e.min_replicas for spec in run for e in spec.autoscaling) > 3
    assert max(spec.operational.min_request_rate for spec in run) > 10
    assert any(len(spec.autoscaling) > 1 for spec in run)
    assert any(spec.operational.gpu_memory_ratio == 1 for spec in run)
    assert any(s.time_slice != "1m" and s.latency_sli != c.LATENCY_SLI_HISTOGRAM for s in slos)


@pytest.mark.slow
@pytest.mark.timeout(3 * TIMEOUT)
@pytest.mark.parametrize("seed", SEEDS)
def test_a_drawn_spec_generates_rules_that_load_and_tests_that_pass(seed: int, tmp_path: Path) -> None:
    """promtool check rules (every rule read; a rule with the same name and labels as another fails
    its lint), vmalert loads every file, and every generated promtool test passes."""
    spec = _render(draw_spec(seed), tmp_path)
    (tmp_path / "slos.yaml").write_text(yaml.safe_dump(draw_spec(seed)))  # to rerun by hand
    files = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "alerts").glob("*.yaml"))
    checked = _promtool("check", "rules", "--lint-fatal", *files, cwd=tmp_path)  # duplicates fail
    assert checked.returncode == 0, checked.stdout + checked.stderr
    found = re.findall(r"SUCCESS: (\d+) rules found", checked.stdout + checked.stderr)
    rules = [r for doc in rule_files(spec, "runbooks/").values() for g in doc["groups"] for r in g["rules"]]
    assert sum(map(int, found)) == len(rules)
    vm = subprocess.run(
        [binary("vmalert"), "-dryRun", *(f"-rule={f}" for f in files)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert vm.returncode == 0, vm.stdout[-2000:] + vm.stderr[-2000:]
    _promtool_tests(tmp_path, sorted(p.name for p in (tmp_path / "alerts" / "tests").glob("*.yaml")))


def _same_model_spec(objectives: list[str]) -> dict[str, Any]:
    slos = [
        {"name": f"s{i}", "type": "availability", "models": ["m0"], "objective": float(o)}
        for i, o in enumerate(objectives)
    ]
    return {"slos": slos}


@pytest.mark.parametrize(
    "objectives",
    [["99.0", "99.6"], [f"{99 + i / 20:.2f}" for i in range(20)]],
    ids=["two", "twenty"],
)
def test_slos_sharing_a_model_get_their_scenarios_not_an_internal_error(
    objectives: list[str], tmp_path: Path
) -> None:
    """99.0 % and 99.6 % on one model: the first's 1d/2h just-above track burned the second at 7.65x,
    a rounding tie of the annotation's one decimal, at every check time, and `generate` stopped with
    `internal error: Unpredictable`. The scenario now moves further from the threshold (tests_slo.MARGINS)."""
    from triton_sre.generate.tests_slo import FAST_TEST_FILE, SLOW_TEST_FILE

    spec = _render(_same_model_spec(objectives), tmp_path)
    for name in (FAST_TEST_FILE, SLOW_TEST_FILE):
        doc = yaml.safe_load((tmp_path / "alerts" / "tests" / name).read_text())
        titles = [group["name"] for group in doc["tests"]]
        for slo in spec.slos:  # every tier's just-above and just-below scenario is there
            assert any(t.startswith(f"{slo.name}: ") and "just above" in t for t in titles), (name, slo.name)
            assert any(t.startswith(f"{slo.name}: ") and "just below" in t for t in titles), (name, slo.name)


def test_a_track_whose_rate_sits_on_another_slo_s_floor_is_scaled_not_an_internal_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """`strict`'s page-tier track fed 1 request/s, within 1 % of `busy`'s floor of 0.989 at every check
    time (the guard decides there): `internal error: Unpredictable`. The track's rate is scaled now."""
    from triton_sre.generate.tests_slo import FAST_TEST_FILE

    spec = _render(BUSY_AND_STRICT, tmp_path)
    doc = yaml.safe_load((tmp_path / "alerts" / "tests" / FAST_TEST_FILE).read_text())
    titles = [group["name"] for group in doc["tests"]]
    assert any(t.startswith("strict: page tier 1h/5m") and "just above" in t for t in titles), titles
    assert "left out" not in caplog.text
    assert len(spec.slos) == 2


BUSY_AND_STRICT = {
    "slos": [
        {
            "name": "busy",
            "type": "availability",
            "models": ["shared"],
            "objective": 99,
            "min_request_rate": 0.989,
        },
        {
            "name": "strict",
            "type": "availability",
            "models": ["shared"],
            "objective": 99.95,
            "min_request_rate": 0.1,
        },
    ]
}


@pytest.mark.slow
@pytest.mark.parametrize("which", ["margins", "rates"])
def test_the_moved_scenarios_of_slos_sharing_a_model_pass_in_promtool(which: str, tmp_path: Path) -> None:
    """The scenarios moved off a threshold (99.0 % and 99.6 %) or scaled off a floor (busy, strict)
    still predict what promtool evaluates."""
    from triton_sre.generate.tests_slo import FAST_TEST_FILE, SLOW_TEST_FILE

    _render(_same_model_spec(["99.0", "99.6"]) if which == "margins" else BUSY_AND_STRICT, tmp_path)
    _promtool_tests(tmp_path, [FAST_TEST_FILE, SLOW_TEST_FILE])
