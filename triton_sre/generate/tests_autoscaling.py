"""promtool tests of the autoscaling rules (autoscaling.py): the request-weighted queue time where
the average of per-model averages is wrong, the pending and LLM signals, and the lagging alert."""

from __future__ import annotations

import math
from typing import Any

from triton_sre import conventions as c
from triton_sre.autoscale_spec import Autoscaling
from triton_sre.durations import format_duration
from triton_sre.generate.annotations import plain_labels, render_any
from triton_sre.generate.autoscaling import AUTOSCALING_FILE, entry_rules
from triton_sre.generate.calc import TEST_ENSEMBLE
from triton_sre.promql import by, label_sets, rate, selector
from triton_sre.slo import Spec

_STEP_S = 15  # the tests' scrape interval: a 1m rate needs several samples
_LAG_TICKS = 40  # rule evaluations a lagging test makes up to its alert's `for`, at most (about)
_TEST_FILE = "triton-autoscaling-rules.test.yaml"
_I1, _I2 = "triton-0:8002", "triton-1:8002"
_BUSY, _IDLE = "busy", "idle"
# Signals read from an instant gauge, which can read 0 between two scrapes under load.
_GAUGE_SIGNALS = (c.SIGNAL_PENDING, c.SIGNAL_LLM_WAITING)
# Gauge signals the rules average over the spec's signal window (2 scrapes). Their bursty test feeds
# samples a quarter of that window apart, so a window of the alternating series holds half its samples
# high (Prometheus 3's left-open range, 4 samples) or at most 3 of 5 (Prometheus 2's closed range); at
# 2 samples a window (3 in Prometheus 2) the shares 1/3 to 2/3 have no one ceil(2 x usage) to assert.
_SMOOTHED_SIGNALS = (c.SIGNAL_PENDING, c.SIGNAL_LLM_WAITING)
_SMOOTHED_STEPS = 4  # input samples per signal window in the bursty test
_HIGH_SHARES = (0.5, 0.6)
_BURST = 4.0  # x target at every other sample: a third of a window high still averages over 1.1
_BURST_SMOOTHED = 3.3  # ceil(2 x 3.3 x share) is 4 for both shares; averaged, 1.65 to 1.98 x target


def _counter(family: str, labels: dict[str, str], per_step: float, steps: int = 40) -> dict[str, str]:
    return {"series": f"{family}{plain_labels(labels)}", "values": f"0+{per_step:g}x{steps}"}


def _gauge(name: str, labels: dict[str, str], value: float, steps: int = 40) -> dict[str, str]:
    return {"series": f"{name}{plain_labels(labels)}", "values": f"{value:g}x{steps}"}


def naive_queue_average(job: str, cluster_label: str | None = None) -> str:
    """NVIDIA's k8s-onprem signal, per server: the average over models of each model's average."""
    m = [(c.LABEL_JOB, "=", job)]
    per_model = f"{rate(c.NV_QUEUE_DURATION_US, m, '1m')} / {rate(c.NV_REQUEST_SUCCESS, m, '1m')}"
    return f"avg {by(label_sets(cluster_label).server)} ({per_model}) / 1e6"


def weighting_test(spec: Spec) -> dict[str, Any]:
    """Two models on one Triton: `busy` (10 req/s, no queue) and `idle` (one request per 15 s that
    queues 2 s). An average request waits 2 s / 151 requests = 13.2 ms; the average of the two
    models' averages says 1 s. A second Triton serves `busy` only, 10 ms of queue per request."""
    job = spec.triton_job

    def model(instance: str, name: str) -> dict[str, str]:
        return {c.LABEL_JOB: job, c.LABEL_INSTANCE: instance, c.LABEL_MODEL: name, c.LABEL_VERSION: "1"}

    busy1, idle1, busy2 = model(_I1, _BUSY), model(_I1, _IDLE), model(_I2, _BUSY)
    failed = {**idle1, c.LABEL_REASON: c.FAILURE_REASON_BACKEND}
    series = [
        _counter(c.NV_REQUEST_SUCCESS, busy1, 150),
        _counter(c.NV_QUEUE_DURATION_US, busy1, 0),
        _counter(c.NV_REQUEST_SUCCESS, idle1, 1),
        _counter(c.NV_REQUEST_FAILURE, failed, 0),
        _counter(c.NV_QUEUE_DURATION_US, idle1, 2_000_000),
        _counter(c.NV_REQUEST_SUCCESS, busy2, 150),
        _counter(c.NV_QUEUE_DURATION_US, busy2, 1_500_000),
        _gauge(c.NV_PENDING_REQUEST_COUNT, busy1, 0),
        _gauge(c.NV_PENDING_REQUEST_COUNT, idle1, 3),
        _gauge(c.NV_PENDING_REQUEST_COUNT, busy2, 5),
        _gauge(c.REC_LLM_WAITING, {c.LABEL_JOB: job, c.LABEL_MODEL: "llm", c.LABEL_VERSION: "1"}, 4),
        _gauge(c.REC_LLM_WAITING, {c.LABEL_JOB: job, c.LABEL_MODEL: "llm", c.LABEL_VERSION: "2"}, 2),
        _gauge(c.REC_LLM_KV_CACHE, {c.LABEL_JOB: job, c.LABEL_MODEL: "llm", c.LABEL_VERSION: "1"}, 0.9),
        _gauge(c.REC_LLM_KV_CACHE, {c.LABEL_JOB: job, c.LABEL_MODEL: "llm", c.LABEL_VERSION: "2"}, 0.4),
        _gauge("up", {c.LABEL_JOB: job, c.LABEL_INSTANCE: _I1}, 1),
        _gauge("up", {c.LABEL_JOB: job, c.LABEL_INSTANCE: _I2}, 1),
    ]
    server1, server2 = {c.LABEL_JOB: job, c.LABEL_INSTANCE: _I1}, {c.LABEL_JOB: job, c.LABEL_INSTANCE: _I2}
    fleet = {c.LABEL_JOB: job}
    checks = [
        (c.REC_QUEUE_PER_REQUEST_INSTANCE, [(server1, 2 / 151), (server2, 0.01)]),
        (c.REC_QUEUE_PER_REQUEST_JOB, [(fleet, 3.5 / 301)]),
        (
            naive_queue_average(job, spec.cluster_label),
            [(server1, 1.0), (server2, 0.01)],
        ),  # what the weighting fixes
        (c.REC_PENDING_INSTANCE, [(server1, 3), (server2, 5)]),
        (c.REC_PENDING_JOB, [(fleet, 8)]),
        (c.REC_LLM_WAITING_JOB, [(fleet, 6)]),
        (c.REC_LLM_KV_CACHE_JOB, [(fleet, 0.9)]),
        (c.REC_SERVING_REPLICAS, [(fleet, 2)]),
    ]
    return {
        "name": "autoscaling signals: request-weighted queue time over models, pending, LLM",
        "interval": f"{_STEP_S}s",
        "input_series": series,
        "promql_expr_test": [
            {
                "expr": f"round({expr}, 0.000001)",
                "eval_time": "5m",
                "exp_samples": [
                    {"labels": plain_labels(labels), "value": round(value, 6)} for labels, value in samples
                ],
            }
            for expr, samples in checks
        ],
    }


def _signal_series(entry: Autoscaling, usage: float, replicas: int, steps: int = 40) -> list[dict[str, str]]:
    """Input series that put `entry.rule` at `usage` x target with `replicas` servers up, `steps`
    samples long."""
    job = entry.job
    value = usage * entry.target * (replicas if entry.per_replica else 1)
    out = [
        _gauge("up", {c.LABEL_JOB: job, c.LABEL_INSTANCE: f"triton-{i}:8002"}, 1, steps)
        for i in range(replicas)
    ]
    m = {c.LABEL_JOB: job, c.LABEL_INSTANCE: _I1, c.LABEL_MODEL: _BUSY, c.LABEL_VERSION: "1"}
    llm = {c.LABEL_JOB: job, c.LABEL_MODEL: "llm", c.LABEL_VERSION: "1"}
    if entry.signal == c.SIGNAL_QUEUE_TIME:
        out.append(_counter(c.NV_REQUEST_SUCCESS, m, 100, steps))
        out.append(_counter(c.NV_QUEUE_DURATION_US, m, 100 * value * 1e6, steps))
    elif entry.signal == c.SIGNAL_PENDING:
        out.append(_gauge(c.NV_PENDING_REQUEST_COUNT, m, value, steps))
    elif entry.signal == c.SIGNAL_LLM_WAITING:
        out.append(_gauge(c.REC_LLM_WAITING, llm, value, steps))
    else:
        out.append(_gauge(c.REC_LLM_KV_CACHE, llm, value, steps))
    return out


def lag_step_s(entry: Autoscaling) -> int:
    """Seconds between rule evaluations in `entry`'s lagging test: 15 s, or coarser (a multiple of
    15 s) so that the alert's `for`, the startup budget, is about _LAG_TICKS evaluations. At 15 s a
    1d load_time (a 2d budget) was ~13,600 evaluations of every rule, 16-24 s of promtool; the input
    samples stay 15 s apart whatever the step (the signal's 1m rates need them)."""
    return _STEP_S * max(1, math.ceil(entry.startup_budget_s / (_STEP_S * _LAG_TICKS)))


def _alternating(series: str, value: float, every_s: float, ticks: range, window_s: float) -> dict[str, str]:
    """`series` at `value`, 0, `value`, 0 ... every `every_s`: an instance taking the whole queue at every
    other scrape. Written only where a rule reads it, the samples of the `window_s` before each rule
    evaluation (`ticks`, seconds; one sample more before each window), `_` between: the rules read the
    gauge over `window_s` alone (`avg_over_time`), so each evaluation sees what the whole series gives
    it, and the size follows the evaluations, not the samples (written whole, a 1 s scrape interval and
    a 1d load time made a 1.2 MB test file)."""
    kept: set[int] = set()
    for tick in ticks:
        first = max(0, math.floor((tick - window_s) / every_s) - 1)
        kept.update(range(first, math.floor(tick / every_s + 1e-9) + 1))
    terms, gap = [], 0
    for k in range(max(kept) + 1):
        if k not in kept:
            gap += 1
            continue
        terms += [f"_x{gap}"] if gap else []
        terms.append(f"{value:g}" if k % 2 == 0 else "0")
        gap = 0
    return {"series": series, "values": " ".join(terms)}


def lagging_test(spec: Spec, entry: Autoscaling, base_url: str, bursty: bool = False) -> dict[str, Any]:
    """The signal at 1.4 x target with 2 replicas asks for ceil(2.8) = 3, or min_replicas when that
    is more: pending for the startup budget, firing after it; the usage and desired replicas are
    recorded. Not 1.5 x: 2 x 1.5 is a whole number, and the float noise of a queue signal's ratio
    (5.0895 s / a 3.393 s target) put it a hair above 3, so ceil asked for 4. Checked every
    `lag_step_s` (the evaluation interval of the file holding it).

    `bursty`: a gauge signal at 4 x target at every other sample and 0 between (at least a third of
    the samples of any window are high: its average is over 1.1); it asks for up to ceil(2 x 4).
    Averaged over the rule's window (pending requests): at 3.3 x target, ceil(2 x 3.3 x its high
    share of a window)."""
    smoothed = bursty and entry.signal in _SMOOTHED_SIGNALS
    usage, replicas = (_BURST_SMOOTHED if smoothed else _BURST if bursty else 1.4), 2
    step = lag_step_s(entry)
    # seconds between input samples: a quarter of the signal window for a smoothed bursty test
    every_s = spec.signal_window_s / _SMOOTHED_STEPS if smoothed else _STEP_S
    asks = {math.ceil(usage * replicas)}
    if smoothed:
        asks = {math.ceil(usage * replicas * share) for share in _HIGH_SHARES}
    (most,) = asks  # one answer whatever the Prometheus version's range semantics
    desired = max(most, entry.min_replicas)  # the rule's floor (clamp_min)
    # this entry's alert (every entry has one with the same name)
    (rule,) = (r for r in entry_rules(entry, base_url, spec.cluster_label) if "alert" in r)
    labels = {c.LABEL_JOB: entry.job, c.L_DEPLOYMENT: entry.deployment}
    recorded = {"__name__": c.REC_AUTOSCALE_DESIRED, **labels}
    alert_labels = {**labels, **rule["labels"]}
    budget_steps = int(entry.startup_budget_s // step)
    at_s = (budget_steps + 8) * step
    at = f"{at_s}s"
    before = f"{max(1, budget_steps - 1) * step}s"  # a gauge signal is over its target from t=0
    mine = [(c.L_DEPLOYMENT, "=", entry.deployment)]
    steps = max(40, math.ceil(at_s / every_s) + 10)  # past `at`
    series = _signal_series(entry, usage, replicas, steps)
    checks = [
        {
            "expr": f"round({selector(c.REC_AUTOSCALE_USAGE, mine)}, 0.001)",
            "eval_time": at,
            "exp_samples": [{"labels": plain_labels(labels), "value": usage}],
        },
        {
            "expr": selector(c.REC_AUTOSCALE_DESIRED, mine),
            "eval_time": at,
            "exp_samples": [{"labels": plain_labels(recorded), "value": desired}],
        },
    ]
    if bursty:
        gauge = series.pop()
        high = float(gauge["values"].split("x")[0])
        ticks = range(0, at_s + 1, step)  # promtool evaluates the rules from 0 at the file's interval
        series.append(_alternating(gauge["series"], high, every_s, ticks, spec.signal_window_s))
        checks = []  # the instant usage and desired replicas alternate
    return {
        "name": f"{c.ALERT_AUTOSCALER_LAGGING}: {entry.deployment} asks for more replicas than serve"
        + (", its signal dipping to 0 at every other scrape" if bursty else ""),
        "interval": format_duration(every_s),
        "input_series": series,
        "promql_expr_test": checks,
        "alert_rule_test": [
            {"eval_time": before, "alertname": c.ALERT_AUTOSCALER_LAGGING, "exp_alerts": []},
            {
                "eval_time": at,
                "alertname": c.ALERT_AUTOSCALER_LAGGING,
                "exp_alerts": [
                    {
                        "exp_labels": dict(sorted(alert_labels.items())),
                        "exp_annotations": {
                            k: render_any(v, alert_labels, desired) for k, v in rule["annotations"].items()
                        },
                    }
                ],
            },
        ],
    }


def floor_test(entry: Autoscaling) -> dict[str, Any]:
    """No load on one serving replica: the formula's ceil(1 x 0) = 0, the rule keeps min_replicas."""
    labels = {c.LABEL_JOB: entry.job, c.L_DEPLOYMENT: entry.deployment}
    desired = selector(c.REC_AUTOSCALE_DESIRED, [(c.L_DEPLOYMENT, "=", entry.deployment)])
    return {
        "name": f"{c.REC_AUTOSCALE_DESIRED}: {entry.deployment} idle keeps the warm floor",
        "interval": f"{_STEP_S}s",
        "input_series": _signal_series(entry, 0.0, 1),
        "promql_expr_test": [
            {
                "expr": desired,
                "eval_time": "5m",
                "exp_samples": [
                    {
                        "labels": plain_labels({"__name__": c.REC_AUTOSCALE_DESIRED, **labels}),
                        "value": entry.min_replicas,
                    }
                ],
            }
        ],
        "alert_rule_test": [{"eval_time": "5m", "alertname": c.ALERT_AUTOSCALER_LAGGING, "exp_alerts": []}],
    }


def ensemble_test(spec: Spec) -> dict[str, Any]:
    """A server whose traffic comes through an ensemble: each of its 10 requests/s is a request of its
    step again, which queues 40 ms; the ensemble's own queue time is the hand-off to the step (0 here,
    140 us of 2.37 s on the real 2.51). An average request waits 40 ms in Triton's queues; counting the
    ensemble's requests too said 20 ms, and the autoscaler scaled out at twice its target."""
    job = spec.triton_job

    def model(name: str) -> dict[str, str]:
        return {c.LABEL_JOB: job, c.LABEL_INSTANCE: _I1, c.LABEL_MODEL: name, c.LABEL_VERSION: "1"}

    ensemble, step = model(TEST_ENSEMBLE), model(_BUSY)
    exporter = {c.LABEL_JOB: spec.exporter_job, c.LABEL_INSTANCE: _I1, c.LABEL_MODEL: TEST_ENSEMBLE}
    series = [
        _counter(c.NV_REQUEST_SUCCESS, ensemble, 150),
        _counter(c.NV_QUEUE_DURATION_US, ensemble, 0),
        _counter(c.NV_REQUEST_SUCCESS, step, 150),
        _counter(c.NV_QUEUE_DURATION_US, step, 150 * 40_000),
        _gauge(c.M_MODEL_ENSEMBLE, exporter, 1),
    ]
    checks = [
        (c.REC_QUEUE_PER_REQUEST_INSTANCE, {c.LABEL_JOB: job, c.LABEL_INSTANCE: _I1}),
        (c.REC_QUEUE_PER_REQUEST_JOB, {c.LABEL_JOB: job}),
    ]
    return {
        "name": "autoscaling signals: an ensemble's requests are its step's again, not counted twice",
        "interval": f"{_STEP_S}s",
        "input_series": series,
        "promql_expr_test": [
            {
                "expr": f"round({expr}, 0.000001)",
                "eval_time": "5m",
                "exp_samples": [{"labels": plain_labels(labels), "value": 0.04}],
            }
            for expr, labels in checks
        ],
    }


def _file_name(step: int) -> str:
    return (
        _TEST_FILE
        if step == _STEP_S
        else _TEST_FILE.replace(".test.", f".every-{format_duration(step)}.test.")
    )


def test_files(spec: Spec, base_url: str) -> dict[str, dict[str, Any]]:
    """Test file name (under alerts/tests/) -> promtool document. promtool evaluates every rule at
    the file's one evaluation interval: a lagging test spaced wider than 15 s (`lag_step_s`) goes to
    a file of its step, `triton-autoscaling-rules.every-<step>.test.yaml`."""
    by_step: dict[int, list[dict[str, Any]]] = {_STEP_S: [weighting_test(spec), ensemble_test(spec)]}
    for entry in spec.autoscaling:
        by_step.setdefault(lag_step_s(entry), []).append(lagging_test(spec, entry, base_url))
        if entry.signal in _GAUGE_SIGNALS:
            by_step[lag_step_s(entry)].append(lagging_test(spec, entry, base_url, bursty=True))
        by_step[_STEP_S].append(floor_test(entry))
    return {
        _file_name(step): {
            "rule_files": [f"../{AUTOSCALING_FILE}"],
            "evaluation_interval": format_duration(step),
            "tests": tests,
        }
        for step, tests in sorted(by_step.items())
    }
