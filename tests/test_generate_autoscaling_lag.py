"""The generated TritonAutoscalerLagging test scales its evaluation spacing with the alert's `for`
(the startup budget: 2 x load_time + margin), so promtool runs it in a few seconds whatever the
load_time: at a fixed 15 s step a `load_time` of 1d made promtool evaluate every rule ~13,600 times
(bench figures in the session report, not a timed test here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from test_generate_any_spec import _promtool_test, _render

from triton_sre import conventions as c
from triton_sre.durations import parse_duration
from triton_sre.generate.tests_autoscaling import test_files as autoscaling_test_files
from triton_sre.slo import spec_from_mapping

MAX_EVALUATIONS = 100  # rule evaluations promtool makes for one lagging test


def _raw(load_time: str, signal: str = c.SIGNAL_PENDING, *more: dict[str, Any]) -> dict[str, Any]:
    entry = {"deployment": "triton", "signal": signal, "max_replicas": 10, "load_time": load_time}
    return {
        "slos": [{"name": "a", "type": "availability", "objective": 99.9}],
        "autoscaling": [entry, *more],
    }


def _evaluations(docs: dict[str, dict[str, Any]], deployment: str) -> int:
    """Rule evaluations promtool makes for `deployment`'s lagging test: its latest eval time over the
    evaluation interval of the file holding it."""
    for doc in docs.values():
        for test in doc["tests"]:
            if test["name"].startswith(c.ALERT_AUTOSCALER_LAGGING) and f": {deployment} " in test["name"]:
                latest = max(
                    parse_duration(t["eval_time"], "eval_time")
                    for t in [*test["alert_rule_test"], *test["promql_expr_test"]]
                )
                return round(latest / parse_duration(doc["evaluation_interval"], "evaluation_interval"))
    raise AssertionError(f"no lagging test for {deployment}")


@pytest.mark.parametrize("load_time", ["1s", "45s", "10m", "2h", "1d"])
def test_the_lagging_test_makes_a_bounded_number_of_evaluations(load_time: str) -> None:
    spec = spec_from_mapping(_raw(load_time))
    assert _evaluations(autoscaling_test_files(spec, "runbooks/"), "triton") <= MAX_EVALUATIONS


def test_a_short_entry_keeps_its_fine_step_beside_a_long_one() -> None:
    """Each entry's test is spaced for its own budget: a 45 s load next to a 1d one is still
    checked at 15 s (before its budget: silent; after: firing)."""
    other = {"deployment": "slow", "job": "triton-slow", "max_replicas": 4, "load_time": "1d"}
    docs = autoscaling_test_files(spec_from_mapping(_raw("45s", c.SIGNAL_PENDING, other)), "runbooks/")
    steps = {
        name: doc["evaluation_interval"]
        for name, doc in docs.items()
        for test in doc["tests"]
        if test["name"].startswith(c.ALERT_AUTOSCALER_LAGGING)
    }
    assert len(steps) == 2 and "15s" in steps.values(), steps


@pytest.mark.parametrize("signal", [c.SIGNAL_PENDING, c.SIGNAL_QUEUE_TIME])
def test_promtool_passes_the_lagging_test_of_a_1d_load_time(signal: str, tmp_path: Path) -> None:
    """The coarse spacing still proves the alert: silent before the budget, firing after it (the
    queue-time signal's 1m rates still read 15 s input samples)."""
    _render(_raw("1d", signal), tmp_path)
    tests = sorted((tmp_path / "alerts" / "tests").glob("triton-autoscaling-rules*.test.yaml"))
    assert len(tests) == 2, tests  # the fine-step file and the 1d entry's own
    for path in tests:
        assert yaml.safe_load(path.read_text())["tests"]
        _promtool_test(tmp_path, path.name)
