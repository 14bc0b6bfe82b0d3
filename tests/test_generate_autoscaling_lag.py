"""The generated TritonAutoscalerLagging test scales its evaluation spacing with the alert's `for`
(the startup budget: 2 x load_time + margin), so promtool runs it in a few seconds whatever the
load_time: at a fixed 15 s step a `load_time` of 1d made promtool evaluate every rule ~13,600 times
(bench figures in the session report, not a timed test here). Its size does not follow the scrape
interval either: the bursty test's gauge is written only where a rule reads it."""

from __future__ import annotations

import math
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


def _raw(
    load_time: str, signal: str = c.SIGNAL_PENDING, *more: dict[str, Any], interval: str = "15s"
) -> dict[str, Any]:
    entry = {"deployment": "triton", "signal": signal, "max_replicas": 10, "load_time": load_time}
    return {
        "scrape": {"interval": interval},
        "slos": [{"name": "a", "type": "availability", "objective": 99.9}],
        "autoscaling": [entry, *more],
    }


def _bursty(docs: dict[str, dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the file, the test) of the lagging test whose signal dips to 0 at every other scrape."""
    (found,) = [(doc, t) for doc in docs.values() for t in doc["tests"] if "every other scrape" in t["name"]]
    return found


def _expanded(values: str) -> list[float | None]:
    """promtool's series notation as the bursty test writes it (`v`, `_`, `_xN`): one entry per input
    interval, None where no sample is."""
    out: list[float | None] = []
    for term in values.split():
        out += [None] * int(term[2:]) if term.startswith("_x") else [None if term == "_" else float(term)]
    return out


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


@pytest.mark.parametrize("interval", ["1s", "15s", "60s"])
@pytest.mark.parametrize("load_time", ["45s", "1d"])
def test_the_lagging_tests_size_does_not_follow_the_scrape_interval(load_time: str, interval: str) -> None:
    """The bursty test's input is a quarter of the signal window apart (0.5 s at a 1 s scrape
    interval): written whole up to the alert's `for` of a 1d load time it was 1.2 MB."""
    docs = autoscaling_test_files(spec_from_mapping(_raw(load_time, interval=interval)), "runbooks/")
    size = sum(len(yaml.safe_dump(doc)) for doc in docs.values())
    assert size < 16_000, f"{size:,} bytes"


@pytest.mark.parametrize("interval", ["1s", "15s", "60s"])
@pytest.mark.parametrize("load_time", ["45s", "10m", "1d"])
def test_each_evaluation_reads_the_whole_alternating_series(load_time: str, interval: str) -> None:
    """Where a rule reads the bursty gauge (its signal window before each evaluation, promtool's rule
    evaluations every `evaluation_interval` from 0 to the last eval_time), the written samples are the
    whole series': `value`, 0, `value`, 0 ... one input interval apart."""
    spec = spec_from_mapping(_raw(load_time, interval=interval))
    doc, test = _bursty(autoscaling_test_files(spec, "runbooks/"))
    every = parse_duration(test["interval"], "interval")
    step = parse_duration(doc["evaluation_interval"], "evaluation_interval")
    last = max(parse_duration(t["eval_time"], "eval_time") for t in test["alert_rule_test"])
    (gauge,) = [s for s in test["input_series"] if s["series"].startswith(c.NV_PENDING_REQUEST_COUNT)]
    written = _expanded(gauge["values"])
    high = next(v for v in written if v)
    window = spec.signal_window_s
    for tick in range(0, round(last) + 1, round(step)):
        first, until = max(0, math.floor((tick - window) / every)), math.floor(tick / every)
        assert until < len(written), f"no samples up to {tick}s"
        for k in range(first, until + 1):
            assert written[k] == (high if k % 2 == 0 else 0), (tick, k, written[k])
    assert sum(v is not None for v in written) <= 10 * math.ceil(last / step + 1)  # a few per evaluation


def test_promtool_passes_the_bursty_lagging_test_at_a_1s_scrape_interval(tmp_path: Path) -> None:
    _render(_raw("1d", interval="1s"), tmp_path)
    for path in sorted((tmp_path / "alerts" / "tests").glob("triton-autoscaling-rules*.test.yaml")):
        _promtool_test(tmp_path, path.name)
