"""promtool tests of the operational alerts (operational.py): each fires on its shape, stays silent
just below."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from triton_sre import conventions as c
from triton_sre.generate.annotations import plain_labels, render_any
from triton_sre.generate.calc import (
    TEST_ENSEMBLE,
    TEST_EXPORTER_INSTANCE,
    TEST_FAILING,
    TEST_GPU_UUID,
    TEST_INSTANCE,
    TEST_MODEL,
    TEST_NAMESPACE,
    TEST_POD,
    TEST_TERMINATED_REASON,
    TEST_VERSION,
    busy_rate,
)
from triton_sre.generate.operational import OPERATIONAL_FILE, operational_groups
from triton_sre.generate.recording import RECORDING_FILE
from triton_sre.generate.slo_models import sample_models
from triton_sre.slo import SLO, Spec


def slos_covering(slos: Sequence[SLO]) -> Callable[[str], list[SLO]]:
    """model name -> the SLOs of `slos` whose selector covers it, in their order. Each queue-time case
    asked every latency SLO's pattern (n x n `re.fullmatch`, each compiled again past re's cache of
    512: 2,000 SLOs took 96 s); a named model is now looked up, only regexes are matched, compiled once."""
    by_name: dict[str, list[int]] = {}
    matched: list[tuple[int, re.Pattern[str] | None]] = []  # all models (None) and regex selectors
    for i, slo in enumerate(slos):
        if slo.models.kind == "list":
            for name in dict.fromkeys(slo.models.names):
                by_name.setdefault(name, []).append(i)
        else:
            pattern = slo.models.pattern
            matched.append((i, None if pattern is None else re.compile(pattern)))

    def find(model: str) -> list[SLO]:
        found = {*by_name.get(model, ()), *(i for i, rx in matched if rx is None or rx.fullmatch(model))}
        return [slos[i] for i in sorted(found)]

    return find


def operational_tests(spec: Spec, base_url: str) -> list[dict[str, Any]]:
    rules = {
        (rule["alert"], rule["labels"].get(c.L_SLO)): rule
        for g in operational_groups(spec, base_url)["groups"]
        for rule in g["rules"]
    }
    tj, ej = spec.triton_job, spec.exporter_job
    groups = []
    latency = [s for s in spec.slos if s.type == c.SLO_LATENCY]
    # requests per 1m step: above every floor the traffic-gated alerts apply (operational, latency SLOs)
    floors = [spec.operational.min_request_rate, *(s.min_request_rate for s in latency)]
    busy = math.ceil(busy_rate(*floors) * 60)
    traffic = f"0+{busy}x40"

    def alert_test(
        title: str,
        alert: str,
        series: list[dict[str, str]],
        at: str,
        labels: Mapping[str, str],
        value: float,
        slo: str | None = None,
    ) -> None:
        rule = rules[(alert, slo)]
        all_labels = {**labels, **rule["labels"]}
        groups.append(
            {
                "name": title,
                "interval": "1m",
                "input_series": series,
                "alert_rule_test": [
                    {"eval_time": "1m", "alertname": alert, "exp_alerts": []},
                    {
                        "eval_time": at,
                        "alertname": alert,
                        "exp_alerts": [
                            {
                                "exp_labels": dict(sorted(all_labels.items())),
                                "exp_annotations": {
                                    k: render_any(v, all_labels, value)
                                    for k, v in rule["annotations"].items()
                                },
                            }
                        ],
                    },
                ],
            }
        )

    t_inst = {c.LABEL_JOB: tj, c.LABEL_INSTANCE: TEST_INSTANCE}
    e_inst = {c.LABEL_JOB: ej, c.LABEL_INSTANCE: TEST_EXPORTER_INSTANCE}
    mv = {c.LABEL_MODEL: TEST_MODEL, c.LABEL_VERSION: TEST_VERSION}
    alert_test(
        "Triton down",
        c.ALERT_SERVER_DOWN,
        [{"series": f"up{plain_labels(t_inst)}", "values": "0x10"}],
        "5m",
        t_inst,
        0,
    )
    t_model = {**t_inst, c.LABEL_MODEL: TEST_MODEL, c.LABEL_VERSION: TEST_VERSION}
    counter = f"{c.NV_EXEC_COUNT}{plain_labels(t_model)}"
    # A restart in place: the counters reset and a scrape failed; or an idle GPU server restarted between
    # two scrapes: no inference counter moved, no scrape failed, but its energy counter (joules since
    # Triton started) began again from 0.
    energy = f"{c.NV_ENERGY_CONSUMPTION}{plain_labels({**t_inst, c.LABEL_GPU_UUID: TEST_GPU_UUID})}"
    for title, up, executions, joules in (
        (
            "Triton restarted in place: its counters reset and a scrape failed",
            "1 1 1 0 1x10",
            "10 20 30 _ 0+10x10",
            None,
        ),
        (
            "an idle GPU server restarted between two scrapes: its energy counter began again",
            "1x14",
            "0x14",
            "3000+120x3 40+120x10",
        ),
    ):
        series = [
            {"series": f"up{plain_labels(t_inst)}", "values": up},
            {"series": counter, "values": executions},
        ]
        if joules is not None:
            series.append({"series": energy, "values": joules})
        alert_test(title, c.ALERT_SERVER_RESTARTED, series, "6m", t_inst, 1)
    # ... or a CPU server restarted between two scrapes under traffic: no scrape failed, no energy counter;
    # the exporter saw every counted model's counters go down between two polls and counted it
    restarts = f"{c.M_TRITON_RESTARTS}{plain_labels(e_inst)}"
    counted = [{"series": f"up{plain_labels(t_inst)}", "values": "1x14"}]
    counted += [{"series": counter, "values": "10 20 30 0+10x10"}]
    counted += [{"series": restarts, "values": "0 0 0 1x11"}]
    title = "a restart between two scrapes, counted by the exporter"
    alert_test(title, c.ALERT_SERVER_RESTARTED, counted, "6m", e_inst, 1)
    # ... and not a model reloaded alone (its counters reset, every scrape answered) nor a flaky scrape
    # (a scrape failed, no counter reset), while the GPU's energy grows as it does between restarts
    for title, up, executions in (
        ("a model reloaded is no restart", "1x14", "10 20 30 0+10x10"),
        ("a missed scrape is no restart", "1 1 1 0 1x10", "10+10x13"),
    ):
        groups.append(
            {
                "name": title,
                "interval": "1m",
                "input_series": [
                    {"series": f"up{plain_labels(t_inst)}", "values": up},
                    {"series": counter, "values": executions},
                    {"series": energy, "values": "3000+120x13"},
                    {"series": restarts, "values": "0x13"},
                ],
                "alert_rule_test": [
                    {"eval_time": at, "alertname": c.ALERT_SERVER_RESTARTED, "exp_alerts": []}
                    for at in ("4m", "6m", "10m")
                ],
            }
        )
    _container_restart_tests(spec, alert_test, groups)
    alert_test(
        "exporter down",
        c.ALERT_EXPORTER_DOWN,
        [{"series": f"up{plain_labels(e_inst)}", "values": "0x10"}],
        "8m",
        e_inst,
        0,
    )
    alert_test(
        "exporter cannot read Triton",
        c.ALERT_EXPORTER_POLL_FAILING,
        [{"series": f"{c.M_UP}{plain_labels(e_inst)}", "values": "0x20"}],
        "15m",
        e_inst,
        0,
    )
    runbook = c.RUNBOOK_PYTHON_MODEL_ERROR
    unavailable = {**e_inst, **mv, c.L_RUNBOOK: runbook}
    alert_test(
        "model unavailable links its diagnosed runbook",
        c.ALERT_MODEL_UNAVAILABLE,
        [{"series": f"{c.M_MODEL_UNAVAILABLE}{plain_labels(unavailable)}", "values": "1x10"}],
        "5m",
        unavailable,
        1,
    )
    loading = {**e_inst, **mv, c.L_STATE: c.STATE_LOADING}
    alert_test(
        "model stuck loading",
        c.ALERT_MODEL_STUCK_LOADING,
        [{"series": f"{c.M_MODEL_STATE}{plain_labels(loading)}", "values": "1x30"}],
        "20m",
        loading,
        1,
    )
    pending = {**t_inst, **mv}
    alert_test(
        "pending requests growing",
        c.ALERT_PENDING_REQUESTS_GROWING,
        [
            {
                "series": f"{c.NV_PENDING_REQUEST_COUNT}{plain_labels(pending)}",
                "values": f"{spec.operational.pending_requests}+1x40",
            }
        ],
        "20m",
        pending,
        spec.operational.pending_requests + 10,
    )
    missing = {**e_inst, c.L_CHECK: c.CHECK_LATENCY_QUANTILES}
    alert_test(
        "an input triton-sre needs is missing",
        c.ALERT_INPUT_MISSING,
        [{"series": f"{c.M_INPUT_MISSING}{plain_labels(missing)}", "values": "1x30"}],
        "20m",
        missing,
        1,
    )
    # The same input on a release that predates it (the exporter read Triton's version): only an upgrade
    # fixes it, so no ticket; a missing input this release has (needs_release "") still alerts.
    predates = {**e_inst, c.L_CHECK: c.CHECK_PENDING_REQUESTS}
    groups.append(
        {
            "name": "an input the release predates is not alerted on",
            "interval": "1m",
            "input_series": [
                {"series": c.M_INPUT_MISSING + plain_labels({**predates, c.L_NEEDS_RELEASE: n}), "values": v}
                for n, v in (("23.09", "1x30"), ("", "0x30"))
            ],
            "alert_rule_test": [{"eval_time": "20m", "alertname": c.ALERT_INPUT_MISSING, "exp_alerts": []}],
        }
    )
    gpu = {**t_inst, c.LABEL_GPU_UUID: TEST_GPU_UUID}
    # halfway from the threshold to full: a threshold of 1 fires only when the memory is full
    ratio = spec.operational.gpu_memory_ratio + (1 - spec.operational.gpu_memory_ratio) / 2
    alert_test(
        "GPU memory near limit",
        c.ALERT_GPU_MEMORY_NEAR_LIMIT,
        [
            {
                "series": f"{c.NV_GPU_MEMORY_USED_BYTES}{plain_labels(gpu)}",
                "values": f"{ratio * 1e10:.0f}x20",
            },
            {"series": f"{c.NV_GPU_MEMORY_TOTAL_BYTES}{plain_labels(gpu)}", "values": "10000000000x20"},
        ],
        "15m",
        gpu,
        ratio,
    )
    # Batching: a model with dynamic batching configured executes one inference at a time under load.
    counters = [
        {"series": f"{f}{plain_labels(pending)}", "values": traffic}
        for f in (c.NV_INFERENCE_COUNT, c.NV_EXEC_COUNT, c.NV_REQUEST_SUCCESS)
    ] + [
        {"series": f"{c.NV_PENDING_REQUEST_COUNT}{plain_labels(pending)}", "values": "3x40"},
        {
            "series": c.M_MODEL_DYNAMIC_BATCHING + plain_labels({**e_inst, c.LABEL_MODEL: mv[c.LABEL_MODEL]}),
            "values": "1x40",
        },
    ]
    alert_test(
        "batching ineffective under load",
        c.ALERT_BATCHING_INEFFECTIVE,
        counters,
        "30m",
        {c.LABEL_JOB: tj, **mv},
        1.0,
    )
    # An ensemble under the same load (one row a request: ratio 1, requests pending) never fires: it has
    # no batcher (dynamic_batching and ensemble_scheduling are one oneof of the config), so the exporter
    # writes dynamic_batching 0 for it, beside triton_sre_model_ensemble 1.
    ensemble = plain_labels({**pending, c.LABEL_MODEL: TEST_ENSEMBLE})
    e_ensemble = plain_labels({**e_inst, c.LABEL_MODEL: TEST_ENSEMBLE})

    def never_batching(title: str, input_series: list[dict[str, str]]) -> None:
        """A group in which TritonBatchingIneffective must not fire under the load above."""
        groups.append(
            {
                "name": f"batching ineffective: never for {title}",
                "interval": "1m",
                "input_series": input_series,
                "alert_rule_test": [
                    {"eval_time": at, "alertname": c.ALERT_BATCHING_INEFFECTIVE, "exp_alerts": []}
                    for at in ("30m", "40m")
                ],
            }
        )

    never_batching(
        "an ensemble",
        [
            *(
                {"series": f"{f}{ensemble}", "values": traffic}
                for f in (c.NV_INFERENCE_COUNT, c.NV_EXEC_COUNT, c.NV_REQUEST_SUCCESS)
            ),
            {"series": f"{c.NV_PENDING_REQUEST_COUNT}{ensemble}", "values": "3x40"},
            {"series": f"{c.M_MODEL_DYNAMIC_BATCHING}{e_ensemble}", "values": "0x40"},
            {"series": f"{c.M_MODEL_ENSEMBLE}{e_ensemble}", "values": "1x40"},
        ],
    )
    # A model whose requests all fail under the same load never fires: Triton counts each failed batch's
    # execution but no inference, so its ratio read 0; the rule, as the exporter, writes none (compat32).
    failing = plain_labels({**pending, c.LABEL_MODEL: TEST_FAILING})
    failing_exporter = plain_labels({**e_inst, c.LABEL_MODEL: TEST_FAILING})
    never_batching(
        "a model whose every request fails",
        [
            *(
                {"series": f"{family}{failing}", "values": values}
                for family, values in (
                    (c.NV_EXEC_COUNT, traffic),
                    (c.NV_REQUEST_FAILURE, traffic),
                    (c.NV_INFERENCE_COUNT, "0x40"),
                    (c.NV_REQUEST_SUCCESS, "0x40"),
                    (c.NV_PENDING_REQUEST_COUNT, "3x40"),
                )
            ),
            {"series": c.M_MODEL_DYNAMIC_BATCHING + failing_exporter, "values": "1x40"},
        ],
    )
    # Traffic but neither summaries nor histograms: asks for quantiles; a summarised model does not.
    summarised = {**t_inst, c.LABEL_MODEL: "summarised", c.LABEL_VERSION: TEST_VERSION}
    alert_test(
        "traffic without latency quantiles",
        c.ALERT_LATENCY_QUANTILES_MISSING,
        [
            {"series": f"{c.NV_REQUEST_SUCCESS}{plain_labels(pending)}", "values": traffic},
            {"series": f"{c.NV_REQUEST_SUCCESS}{plain_labels(summarised)}", "values": traffic},
            {"series": f"{c.NV_REQUEST_SUMMARY_US}_count{plain_labels(summarised)}", "values": traffic},
        ],
        "25m",
        {c.LABEL_JOB: tj, **mv},
        1.0,
    )
    groups.append(quantiles_rollback_test(rules[(c.ALERT_LATENCY_QUANTILES_MISSING, None)], t_inst, traffic))
    # Queue time: above the share of each latency SLO's threshold (or the fallback threshold).
    fallback_model = TEST_MODEL
    cases: list[tuple[str, str, float]] = []  # (title, model, seconds of queue per request)
    for slo in latency:
        names = sample_models(slo, 1)
        if names:
            cases.append((slo.name, names[0], slo.threshold_s * slo.queue_time_share * 2))
    covering_slos = slos_covering(latency)
    if (c.ALERT_QUEUE_TIME_HIGH, None) in rules and not covering_slos(fallback_model):
        cases.append(("fallback", fallback_model, spec.operational.queue_time_threshold_s * 2))
    for title, model_name, queue_s in cases:
        labels = {**t_inst, c.LABEL_MODEL: model_name, c.LABEL_VERSION: TEST_VERSION}
        expected = []
        covering = covering_slos(model_name)
        limits = [(s.name, s.threshold_s * s.queue_time_share) for s in covering]
        if not covering:
            limits = [(None, spec.operational.queue_time_threshold_s)]
        for slo_name, limit in limits:
            if queue_s <= limit * 1.01:
                continue
            rule = rules[(c.ALERT_QUEUE_TIME_HIGH, slo_name)]
            all_labels = {**labels, c.L_STAGE: c.STAGE_QUEUE, **rule["labels"]}
            expected.append(
                {
                    "exp_labels": dict(sorted(all_labels.items())),
                    "exp_annotations": {
                        k: render_any(v, all_labels, queue_s) for k, v in rule["annotations"].items()
                    },
                }
            )
        groups.append(
            {
                "name": f"queue time high ({title})",
                "interval": "1m",
                "input_series": [
                    {"series": f"{c.NV_REQUEST_SUCCESS}{plain_labels(labels)}", "values": traffic},
                    {
                        "series": f"{c.NV_QUEUE_DURATION_US}{plain_labels(labels)}",
                        "values": f"0+{busy * round(queue_s * 1e6)}x40",
                    },
                ],
                "alert_rule_test": [
                    {"eval_time": "1m", "alertname": c.ALERT_QUEUE_TIME_HIGH, "exp_alerts": []},
                    {"eval_time": "25m", "alertname": c.ALERT_QUEUE_TIME_HIGH, "exp_alerts": expected},
                ],
            }
        )
    return groups


def test_files(spec: Spec, base_url: str) -> dict[str, dict[str, Any]]:
    """Test file name (under alerts/tests/) -> promtool document (the alerts read recorded series)."""
    return {
        "triton-alerts.test.yaml": {
            "rule_files": [f"../{RECORDING_FILE}", f"../{OPERATIONAL_FILE}"],
            "evaluation_interval": "1m",
            "tests": operational_tests(spec, base_url),
        }
    }


_TWO_KSM = ("kube-state-metrics-a:8080", "kube-state-metrics-b:8080")
_OTHER_REASON = "Error"  # a container that exited non-zero (not 137)


def _container_restart_tests(spec: Spec, alert_test: Any, groups: list[dict[str, Any]]) -> None:
    """kube-state-metrics counted a restart of the Triton container: the alert carries why it last
    ended, or `unknown`; a container that never restarted, or another container of the pod, is silent."""
    pod = {
        c.KSM_LABEL_NAMESPACE: TEST_NAMESPACE,
        c.KSM_LABEL_POD: TEST_POD,
        c.KSM_LABEL_CONTAINER: spec.triton_container,
    }
    restarts = f"{c.KSM_CONTAINER_RESTARTS}{plain_labels(pod)}"
    oom = {**pod, c.KSM_LABEL_REASON: TEST_TERMINATED_REASON}
    for title, series, reason in (
        (
            "the Triton container restarted, and kube-state-metrics says why",
            [
                {"series": restarts, "values": "0 0 0 1x10"},
                {"series": f"{c.KSM_LAST_TERMINATED_REASON}{plain_labels(oom)}", "values": "_ _ _ 1x10"},
            ],
            TEST_TERMINATED_REASON,
        ),
        (
            "the Triton container restarted, no reason exported",
            [{"series": restarts, "values": "0 0 0 1x10"}],
            c.KSM_REASON_UNKNOWN,
        ),
        (  # two kube-state-metrics (an HA pair, two scrape jobs) while one has not seen the new reason:
            # one alert, reason unknown; a join on the reason would fail the whole rule (duplicate series)
            "the Triton container restarted, two kube-state-metrics give two reasons",
            [
                {"series": f"{c.KSM_CONTAINER_RESTARTS}{plain_labels(seen)}", "values": "0 0 0 1x10"}
                for seen in ({**pod, c.LABEL_INSTANCE: ksm} for ksm in _TWO_KSM)
            ]
            + [
                {"series": f"{c.KSM_LAST_TERMINATED_REASON}{plain_labels(seen)}", "values": "_ _ _ 1x10"}
                for seen in (
                    {**pod, c.LABEL_INSTANCE: ksm, c.KSM_LABEL_REASON: why}
                    for ksm, why in zip(_TWO_KSM, (TEST_TERMINATED_REASON, _OTHER_REASON), strict=True)
                )
            ],
            c.KSM_REASON_UNKNOWN,
        ),
    ):
        alert_test(title, c.ALERT_CONTAINER_RESTARTED, series, "6m", {**pod, c.KSM_LABEL_REASON: reason}, 1)
    sidecar = {**pod, c.KSM_LABEL_CONTAINER: f"{spec.triton_container}-sidecar"}
    groups.append(
        {
            "name": "a container that never restarted, or another container of the pod, is no Triton restart",
            "interval": "1m",
            "input_series": [
                {"series": restarts, "values": "3x14"},
                {"series": f"{c.KSM_CONTAINER_RESTARTS}{plain_labels(sidecar)}", "values": "0 0 0 1x10"},
            ],
            "alert_rule_test": [
                {"eval_time": at, "alertname": c.ALERT_CONTAINER_RESTARTED, "exp_alerts": []}
                for at in ("4m", "6m", "10m")
            ],
        }
    )


def quantiles_rollback_test(
    rule: Mapping[str, Any], t_inst: Mapping[str, str], traffic: str
) -> dict[str, Any]:
    """A version rolled back (unloaded at 20m: its counters and its summary end) is not missing
    quantiles: its 5m request rate outlives it by 5 minutes and, before, it went pending for them.
    Version 1, served without quantiles all along, fires beside it (ALERTS: pending or firing)."""
    served = {**t_inst, c.LABEL_MODEL: TEST_MODEL, c.LABEL_VERSION: TEST_VERSION}
    rolled = {**served, c.LABEL_VERSION: f"{TEST_VERSION}0"}
    gone = f"{traffic.removesuffix('x40')}x20 stale"
    alerts = {c.LABEL_ALERTNAME: c.ALERT_LATENCY_QUANTILES_MISSING}
    firing = {**alerts, c.LABEL_ALERTSTATE: c.AM_STATUS_FIRING, **rule["labels"]}
    firing |= {k: v for k, v in served.items() if k != c.LABEL_INSTANCE}
    return {
        "name": "latency quantiles missing: not for a version rolled back",
        "interval": "1m",
        "input_series": [
            {"series": f"{c.NV_REQUEST_SUCCESS}{plain_labels(served)}", "values": traffic},
            {"series": f"{c.NV_REQUEST_SUCCESS}{plain_labels(rolled)}", "values": gone},
            {"series": f"{c.NV_REQUEST_SUMMARY_US}_count{plain_labels(rolled)}", "values": gone},
        ],
        "promql_expr_test": [
            {
                "expr": f"{c.ALERTS_SERIES}{plain_labels(alerts)}",
                "eval_time": at,
                "exp_samples": [{"labels": f"{c.ALERTS_SERIES}{plain_labels(firing)}", "value": 1}],
            }
            for at in ("21m", "24m")
        ],
    }
