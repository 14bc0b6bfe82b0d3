"""slos.yaml's `autoscaling:` list: defaults from the SLOs and the startup budget, clear errors."""

from __future__ import annotations

from typing import Any

import pytest

from triton_sre import conventions as c
from triton_sre.slo import SpecError, spec_from_mapping

_SLOS: list[dict[str, Any]] = [
    {"name": "latency", "type": "latency", "objective": 99, "threshold": "500ms"},
    {"name": "tight", "type": "latency", "objective": 99, "threshold": "250ms"},
]


def _spec(entries: Any, **top: Any) -> Any:
    return spec_from_mapping({"slos": _SLOS, "autoscaling": entries, **top}, "s.yaml")


def test_defaults_come_from_the_tightest_latency_slo_and_the_startup_budget() -> None:
    (entry,) = _spec(
        [{"deployment": "triton", "max_replicas": 4}], operational={"startup_probe_budget": "5m"}
    ).autoscaling
    assert entry.signal == c.SIGNAL_PENDING  # the backlog leads the burn (bench/RESULTS.md)
    assert entry.target == 1 and entry.per_replica and entry.rule == c.REC_PENDING_JOB
    assert entry.min_replicas == c.AUTOSCALE_MIN_REPLICAS
    assert entry.load_time_s == 135  # (300 s - 30 s margin) / 2
    assert entry.startup_budget_s == 300
    assert entry.scale_up_period_s == 300 and entry.scale_down_window_s == 600


def test_queue_target_leaves_the_slo_quantile_headroom() -> None:
    """threshold / (2 x ln(1/(1-q))): the tightest SLO wins, and a p95 SLO allows a larger mean."""
    (entry,) = _spec([{"deployment": "triton", "max_replicas": 4, "signal": "queue_time"}]).autoscaling
    assert entry.rule == c.REC_QUEUE_PER_REQUEST_JOB and not entry.per_replica
    assert entry.target == pytest.approx(0.027)  # 250 ms / (2 x 4.605)
    p95 = [{"name": "l", "type": "latency", "objective": 99, "threshold": "500ms", "quantile": 0.95}]
    spec = spec_from_mapping(
        {"slos": p95, "autoscaling": [{"deployment": "t", "max_replicas": 2, "signal": "queue_time"}]},
        "s.yaml",
    )
    assert spec.autoscaling[0].target == pytest.approx(0.083)  # 500 ms / (2 x 2.996)


def test_explicit_values_and_per_replica_signals() -> None:
    entries = _spec(
        [
            {
                "deployment": "a",
                "signal": "pending_requests",
                "target": 3,
                "max_replicas": 5,
                "load_time": "10s",
            },
            {"deployment": "b", "signal": "llm_kv_cache", "max_replicas": 2, "min_replicas": 1, "job": "llm"},
        ]
    ).autoscaling
    assert (entries[0].target, entries[0].per_replica, entries[0].load_time_s) == (3, True, 10)
    assert entries[0].scale_down_window_s == c.AUTOSCALE_SCALE_DOWN_MIN_S
    assert entries[1].target == pytest.approx(c.LLM_KV_SATURATED_RATIO * c.AUTOSCALE_KV_TARGET_SHARE)


@pytest.mark.parametrize(
    "entry,message",
    [
        (
            {"deployment": "Triton_1", "max_replicas": 2},
            "autoscaling[0]: deployment: required, a Kubernetes name",
        ),
        ({"deployment": "t"}, "autoscaling[0] (t): max_replicas: required"),
        (
            {"deployment": "t", "max_replicas": 1, "min_replicas": 3},
            "max_replicas: must be at least min_replicas (3)",
        ),
        (
            {"deployment": "t", "max_replicas": 2, "signal": "gpu"},
            "signal: must be one of queue_time, pending",
        ),
        (
            {"deployment": "t", "max_replicas": 2, "signal": "queue_time", "target": 0.05},
            "target: expected a duration like 500ms",
        ),
        (
            {"deployment": "t", "max_replicas": 2, "signal": "llm_kv_cache", "target": 1.5},
            "target: must be at least 0.001 and at most 1",
        ),
        # out of what Kubernetes and Prometheus accept: refused, the field and its range named
        (
            {"deployment": "t", "max_replicas": 2, "target": 0.0000000001},
            "target: must be at least 0.001 and at most 1000000000, got 1e-10",
        ),
        (
            {"deployment": "t", "max_replicas": 2, "target": 1e300},
            "target: must be at least 0.001 and at most 1000000000",
        ),
        (
            {"deployment": "t", "max_replicas": 2, "min_replicas": 99999999999999999999999999},
            "min_replicas: must be a whole number from 1 to 2147483647",
        ),
        (
            {"deployment": "t", "max_replicas": 2**31},
            "max_replicas: must be a whole number from 1 to 2147483647",
        ),
        (
            {"deployment": "t", "max_replicas": 2, "load_time": "300000d"},
            "load_time: must be at most 365d (a year), got '300000d'",
        ),
        (
            {"deployment": "t", "max_replicas": 2, "load_time": "25h"},
            "load_time: must be at most 1d, got '25h'",
        ),
        (
            {"deployment": "t", "max_replicas": 2, "min_replicas": 0},
            "min_replicas: must be a whole number greater than 0",
        ),
        ({"deployment": "t", "max_replicas": 2, "replicas": 3}, ": unknown key 'replicas'"),
        (
            {"deployment": "t", "max_replicas": 2, "kind": "DaemonSet"},
            "kind: must be one of Deployment, StatefulSet",
        ),
    ],
)
def test_bad_entries_get_the_specs_clear_errors(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError) as err:
        _spec([entry])
    assert message in str(err.value) and str(err.value).startswith("s.yaml: autoscaling[0]")


def test_a_deployment_listed_twice_and_a_non_list_are_refused() -> None:
    twice = [{"deployment": "t", "max_replicas": 2, "job": job} for job in ("a", "b")]
    with pytest.raises(SpecError) as err:
        _spec(twice)
    same = "autoscaling[1] (t): deployment: autoscaling[0] (t) scales the same deployment"
    assert str(err.value) == f"s.yaml: {same}"
    with pytest.raises(SpecError, match="autoscaling: expected a list of deployments"):
        _spec({"deployment": "t"})


def test_two_entries_on_one_scrape_job_are_refused_naming_both() -> None:
    """The signal and the serving replicas are per job: two deployments behind one job cannot be told
    apart, so each entry would ask for the replicas of both (the default job counts as named)."""
    one_job = [
        {"deployment": "gpu", "max_replicas": 4},
        {"deployment": "cpu", "max_replicas": 4, "signal": "queue_time", "job": c.DEFAULT_TRITON_JOB},
    ]
    with pytest.raises(SpecError) as err:
        _spec(one_job)
    message = str(err.value)
    assert message.startswith("s.yaml: autoscaling[1] (cpu): job: autoscaling[0] (gpu) scales the servers")
    assert f"scrape job '{c.DEFAULT_TRITON_JOB}' too" in message and "its own job" in message
    spec = _spec([one_job[0], {**one_job[1], "job": "triton-cpu"}])
    assert [e.job for e in spec.autoscaling] == [c.DEFAULT_TRITON_JOB, "triton-cpu"]
    assert spec.signal_jobs == (c.DEFAULT_TRITON_JOB, "triton-cpu")


def test_no_autoscaling_key_means_no_entries() -> None:
    assert spec_from_mapping({"slos": _SLOS}).autoscaling == ()
