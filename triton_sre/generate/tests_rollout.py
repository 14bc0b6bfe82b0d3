"""promtool tests of the continuous rollout guard (rollout.py): a version five times slower per
inference fires TritonRolloutRegression; the same version with too little traffic (half the spec's
`min_request_rate`), as fast as the baseline, or not yet served for a full window, does not. A version
batching half as much fires at nearly the baseline's traffic, not at a fifth of it, nor for a model the
exporter says runs no dynamic batcher. With a
`min_request_rate` of 0 (the availability SLO's default) there is no floor: a trickle fires."""

from __future__ import annotations

from typing import Any

from triton_sre import conventions as c
from triton_sre.durations import format_duration, parse_duration
from triton_sre.generate.annotations import plain_labels, render_any
from triton_sre.generate.calc import TEST_EXPORTER_INSTANCE, TEST_INSTANCE, TEST_MODEL
from triton_sre.generate.rollout import ROLLOUT_FILE, rollout_groups
from triton_sre.promql import num
from triton_sre.slo import Spec


def _version(
    spec: Spec,
    model: str,
    version: str,
    per_min: float,
    compute_us: int,
    interval_s: float,
    length: int,
    served: int | None = None,
    batch: int = 1,
) -> list[dict[str, str]]:
    """Raw Triton counters of one model version: `per_min` requests a minute, `compute_us` each, `batch`
    requests an execution, one sample every `interval_s` for `length` intervals; with `served`, no
    request after that many."""
    labels = {
        c.LABEL_JOB: spec.triton_job,
        c.LABEL_INSTANCE: TEST_INSTANCE,
        c.LABEL_MODEL: model,
        c.LABEL_VERSION: version,
    }
    per_request = {
        c.NV_REQUEST_SUCCESS: 1,
        c.NV_INFERENCE_COUNT: 1,
        c.NV_EXEC_COUNT: 1 / batch,
        c.NV_REQUEST_DURATION_US: compute_us + 1000,
        c.NV_QUEUE_DURATION_US: 0,
        c.NV_COMPUTE_INPUT_DURATION_US: 0,
        c.NV_COMPUTE_INFER_DURATION_US: compute_us,
        c.NV_COMPUTE_OUTPUT_DURATION_US: 0,
    }

    def values(step: float) -> str:
        if served is None:
            return f"0+{num(step)}x{length}"
        return f"0+{num(step)}x{served} {num(step * served)}+0x{length - served}"

    return [
        {"series": f"{family}{plain_labels(labels)}", "values": values(per_min * each * interval_s / 60)}
        for family, each in per_request.items()
    ]


def _no_batcher(spec: Spec, model: str, length: int, interval_s: float) -> dict[str, str]:
    """The exporter's gauge saying `model` runs no dynamic batcher (its config has none)."""
    labels = {c.LABEL_JOB: spec.exporter_job, c.LABEL_INSTANCE: TEST_EXPORTER_INSTANCE, c.LABEL_MODEL: model}
    return {"series": f"{c.M_MODEL_DYNAMIC_BATCHING}{plain_labels(labels)}", "values": f"0x{length}"}


def _interval_s(spec: Spec) -> float:
    """A minute between samples, less for a window under 4 minutes (a rate over it needs samples)."""
    return min(60.0, max(1.0, float(parse_duration(spec.rollout.window, "window") // 4)))


def rollout_tests(spec: Spec, base_url: str) -> list[dict[str, Any]]:
    rs = spec.rollout
    rules = [r for g in rollout_groups(spec, base_url)["groups"] for r in g["rules"] if "alert" in r]
    compute = next(r for r in rules if r["labels"][c.LABEL_FIGURE] == c.ROLLOUT_FIG_COMPUTE_PER_INFERENCE)
    window_s, interval_s = parse_duration(rs.window, "window"), _interval_s(spec)
    at_s = window_s * 2 + 5 * interval_s  # the window filled twice, the alert's `for` (window / 3) over
    at, interval, length = format_duration(at_s), format_duration(interval_s), int(at_s // interval_s) + 5
    busy = max(60, int(rs.min_request_rate * 60 * 10))  # requests/min, well above the floor
    # half the floor (the guard's `>= min_request_rate`); a floor of 0 has no "too little": a trickle
    quiet = rs.min_request_rate * 60 / 2 if rs.min_request_rate > 0 else 1
    fired_labels = {
        c.LABEL_JOB: spec.triton_job,
        c.LABEL_MODEL: TEST_MODEL,
        c.LABEL_VERSION: "2",
        c.LABEL_BASELINE: "1",
        c.LABEL_FIGURE: c.ROLLOUT_FIG_COMPUTE_PER_INFERENCE,
        **compute["labels"],
    }
    slow_s = 0.04
    expected = {
        "exp_labels": dict(sorted(fired_labels.items())),
        "exp_annotations": {
            k: render_any(v, fired_labels, slow_s) for k, v in compute["annotations"].items()
        },
    }

    # the last sample inside the first window: long past the alert's `for`, the window not yet full
    early = format_duration(window_s - interval_s)

    def case(
        name: str,
        v2_per_min: float,
        v2_compute_us: int,
        alerts: list[dict[str, Any]],
        when: str = at,
        v2_served: int | None = None,
        batches: tuple[int, int] = (1, 1),
        extra: tuple[dict[str, str], ...] = (),
    ) -> dict[str, Any]:
        return {
            "name": name,
            "interval": interval,
            "input_series": [
                *_version(spec, TEST_MODEL, "1", busy, 8000, interval_s, length, batch=batches[0]),
                *_version(
                    spec,
                    TEST_MODEL,
                    "2",
                    v2_per_min,
                    v2_compute_us,
                    interval_s,
                    length,
                    v2_served,
                    batches[1],
                ),
                *extra,
            ],
            "alert_rule_test": [
                {"eval_time": when, "alertname": c.ALERT_ROLLOUT_REGRESSION, "exp_alerts": alerts}
            ],
        }

    cases = [
        case("a canary five times slower per inference fires", busy // 5, int(slow_s * 1e6), [expected]),
        (
            case("the same canary with too little traffic stays silent", quiet, int(slow_s * 1e6), [])
            if rs.min_request_rate > 0
            else case(
                "min_request_rate 0: the same canary with a trickle of traffic fires",
                quiet,
                int(slow_s * 1e6),
                [expected],
            )
        ),
        case("a canary as fast as the baseline stays silent", busy // 5, 8000, []),
        case(
            "the slow canary stays silent until it has served a full window",
            busy // 5,
            int(slow_s * 1e6),
            [],
            early,
        ),
        # rolled back a third of the window and two samples before: its window's rate still holds it
        case(
            "the slow canary rolled back stays silent while its window still holds its traffic",
            busy // 5,
            int(slow_s * 1e6),
            [],
            v2_served=int((at_s - window_s / 3) // interval_s) - 2,
        ),
    ]
    # the batching ratio halved (4 -> 2 requests an execution): judged only at comparable load, since a
    # dynamic batcher makes smaller batches at lower load whatever the version (journey27)
    batching = next(r for r in rules if r["labels"][c.LABEL_FIGURE] == c.ROLLOUT_FIG_BATCHING_RATIO)
    at_load = {**fired_labels, **batching["labels"]}
    halved = {
        "exp_labels": dict(sorted(at_load.items())),
        "exp_annotations": {k: render_any(v, at_load, 2) for k, v in batching["annotations"].items()},
    }
    near = busy * (1 - rs.margins[c.ROLLOUT_FIG_BATCHING_RATIO] / 2)  # inside the margin of the baseline's
    cases += [
        case(
            "a canary batching half as much at a fifth of the traffic stays silent",
            busy // 5,
            8000,
            [],
            batches=(4, 2),
        ),
        case(
            "a canary batching half as much at nearly the baseline's traffic fires",
            near,
            8000,
            [halved],
            batches=(4, 2),
        ),
        # without a dynamic batcher the ratio is the clients' batch size: no version changes it
        case(
            "the same canary of a model the exporter says runs no dynamic batcher stays silent",
            near,
            8000,
            [],
            batches=(4, 2),
            extra=(_no_batcher(spec, TEST_MODEL, length, interval_s),),
        ),
    ]
    for pair in rs.pairs[:1]:  # a declared blue/green pair: the green model five times slower

        def pair_alert(figure: str, value: float, candidate: str = pair.candidate) -> dict[str, Any]:
            """The pair's alert on `figure` as promtool expects it, at `value`."""
            rule = next(
                r
                for r in rules
                if r["labels"].get(c.LABEL_CANDIDATE) == candidate and r["labels"][c.LABEL_FIGURE] == figure
            )
            labels = {c.LABEL_JOB: spec.triton_job, c.LABEL_MODEL: candidate, **rule["labels"]}
            return {
                "exp_labels": dict(sorted(labels.items())),
                "exp_annotations": {k: render_any(v, labels, value) for k, v in rule["annotations"].items()},
            }

        fired = pair_alert(c.ROLLOUT_FIG_COMPUTE_PER_INFERENCE, slow_s)
        series = [
            *_version(spec, pair.baseline, "1", busy, 8000, interval_s, length),
            *_version(spec, pair.candidate, "1", busy // 5, int(slow_s * 1e6), interval_s, length),
        ]
        cases.append(
            {
                "name": f"blue/green pair {pair.name}: the candidate five times slower fires",
                "interval": interval,
                "input_series": series,
                "alert_rule_test": [
                    {"eval_time": early, "alertname": c.ALERT_ROLLOUT_REGRESSION, "exp_alerts": []},
                    {"eval_time": at, "alertname": c.ALERT_ROLLOUT_REGRESSION, "exp_alerts": [fired]},
                ],
            }
        )
        pair_halved = pair_alert(c.ROLLOUT_FIG_BATCHING_RATIO, 2)
        without = tuple(_no_batcher(spec, m, length, interval_s) for m in (pair.baseline, pair.candidate))
        one = without[1:]
        for traffic, what, alerts, extra in (
            (busy // 5, "a fifth of the traffic stays silent", [], ()),
            (near, "nearly the baseline's traffic fires", [pair_halved], ()),
            (near, "nearly the baseline's traffic, no dynamic batcher, stays silent", [], without),
            (near, "nearly the baseline's traffic, none said of one side only, fires", [pair_halved], one),
        ):
            cases.append(
                {
                    "name": f"blue/green pair {pair.name}: the candidate batching half as much at {what}",
                    "interval": interval,
                    "input_series": [
                        *_version(spec, pair.baseline, "1", busy, 8000, interval_s, length, batch=4),
                        *_version(spec, pair.candidate, "1", traffic, 8000, interval_s, length, batch=2),
                        *extra,
                    ],
                    "alert_rule_test": [
                        {"eval_time": at, "alertname": c.ALERT_ROLLOUT_REGRESSION, "exp_alerts": alerts}
                    ],
                }
            )
    return cases


def test_files(spec: Spec, base_url: str) -> dict[str, dict[str, Any]]:
    """Test file name (under alerts/tests/) -> promtool document."""
    return {
        "triton-rollout-rules.test.yaml": {
            "rule_files": [f"../{ROLLOUT_FILE}"],
            "evaluation_interval": format_duration(_interval_s(spec)),
            "tests": rollout_tests(spec, base_url),
        }
    }
