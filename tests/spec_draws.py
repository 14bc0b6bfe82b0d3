"""Seeded draws of valid SLO specs over the ranges the spec documents (docs/slos-and-alerts.md,
docs/autoscaling.md, docs/rollouts.md): SLO types, objectives, periods, floors, thresholds, model
selectors, scrape and operational settings, autoscaling entries, rollouts and a cluster label.

A draw is a plain mapping (what a user writes in slos.yaml); `parse_spec` must accept every one.
Values lean to the edges of each range, where generated tests assumed fixed figures.
"""

from __future__ import annotations

import random
from typing import Any

from triton_sre import conventions as c


def _pick(rng: random.Random, *choices: Any) -> Any:
    return choices[rng.randrange(len(choices))]


def _rate(rng: random.Random) -> float:
    """A traffic floor: 0, a typical one, far above a trickle, or the most the spec allows."""
    high = _pick(rng, 1.5, 5, 50, 1000, c.MAX_REQUEST_RATE)
    return _pick(rng, 0, 0.1, round(10 ** rng.uniform(-3, 4), 3), high)


def _ms(rng: random.Random, low: int, high: int) -> str:
    return f"{rng.randint(low, high)}ms"


def _objective(rng: random.Random) -> float:
    return _pick(rng, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, round(rng.uniform(50, 99.99), 2))


def _models(rng: random.Random, i: int) -> Any:
    return _pick(rng, "all", [f"model_{i}", "other-model"], {"regex": f"llm-.*|m{i}"})


def _slo(rng: random.Random, i: int) -> dict[str, Any]:
    kind = _pick(rng, c.SLO_AVAILABILITY, c.SLO_LATENCY, *c.LLM_SLO_TYPES)
    slo: dict[str, Any] = {
        "name": f"slo-{i}",
        "type": kind,
        "models": _models(rng, i),
        "objective": _objective(rng),
        "period": _pick(rng, "30d", "28d", "7d", "3d", f"{rng.randint(3, 90)}d"),
        "min_request_rate": _rate(rng),
    }
    if kind == c.SLO_AVAILABILITY:
        if rng.random() < 0.3:
            slo["bad_reasons"] = rng.sample(list(c.FAILURE_REASONS), rng.randint(1, len(c.FAILURE_REASONS)))
    elif kind == c.SLO_LATENCY:
        slo["threshold"] = _pick(rng, "500ms", "1s", _ms(rng, 1, 10_000))
        slo["latency_sli"] = _pick(rng, c.LATENCY_SLI_AUTO, c.LATENCY_SLI_HISTOGRAM, c.LATENCY_SLI_TIME_SLICE)
        slo["time_slice"] = _pick(rng, "1m", "30s", "5m", "1h", f"{rng.randint(30, 3600)}s")
        slo["quantile"] = float(_pick(rng, *c.TRITON_SUMMARY_QUANTILES))
        slo["queue_time_share"] = _pick(rng, 0.5, 1, round(rng.uniform(0.05, 1), 2))
    else:
        _family, buckets = c.LLM_SLO_HISTOGRAMS[kind]
        slo["threshold"] = f"{round(_pick(rng, *buckets) * 1000)}ms"
    return slo


def _autoscaling(rng: random.Random, triton_job: str) -> list[dict[str, Any]]:
    entries = []
    for i in range(rng.choice((0, 1, 1, 2, 3))):
        signal = _pick(rng, *c.SIGNALS)
        low = _pick(rng, 1, 2, 3, 4, 7, rng.randint(1, 50), c.K8S_INT32_MAX)
        entry: dict[str, Any] = {
            "deployment": f"triton-{i}",
            "signal": signal,
            "min_replicas": low,
            "max_replicas": min(c.K8S_INT32_MAX, low + _pick(rng, 0, 1, rng.randint(1, 100))),
        }
        if i:  # each entry scales the servers of its own scrape job
            entry["job"] = f"{triton_job}-{i}"
        if rng.random() < 0.5:
            if signal == c.SIGNAL_QUEUE_TIME:
                entry["target"] = _ms(rng, 1, 5000)
            elif signal == c.SIGNAL_LLM_KV_CACHE:
                entry["target"] = round(rng.uniform(0.05, 1), 2)
            else:
                entry["target"] = _pick(rng, 1, 16, round(rng.uniform(0.5, 200), 1), c.AUTOSCALE_TARGET_MAX)
        if rng.random() < 0.5:
            entry["load_time"] = _pick(rng, "1s", "5s", "45s", "10m", f"{rng.randint(1, 7200)}s")
        if rng.random() < 0.2:
            entry["kind"] = "StatefulSet"
        entries.append(entry)
    return entries


def _rollout(rng: random.Random) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if rng.random() < 0.5:
        out["window"] = _pick(rng, "5m", "15m", "30m", "1h")
    if rng.random() < 0.5:
        out["min_request_rate"] = _rate(rng)
    if rng.random() < 0.3:
        out["margins"] = {c.ROLLOUT_FIG_COMPUTE_PER_INFERENCE: round(rng.uniform(0.05, 1), 2)}
    if rng.random() < 0.3:
        out["pairs"] = [{"name": "scaler", "baseline": "scaler_blue", "candidate": "scaler_green"}]
    return out


def draw_spec(seed: int) -> dict[str, Any]:
    """One valid spec, the same for the same seed."""
    rng = random.Random(seed)
    triton_job = _pick(rng, c.DEFAULT_TRITON_JOB, "triton-prod")
    spec: dict[str, Any] = {
        "scrape": {
            "triton_job": triton_job,
            "exporter_job": _pick(rng, c.DEFAULT_EXPORTER_JOB, "sre"),
            # from the seed, not the generator: the other draws stay what they were
            "triton_container": "tritonserver" if seed % 2 else c.DEFAULT_TRITON_CONTAINER,
            "latency_metrics": _pick(rng, [], ["summary"], ["histogram"], ["summary", "histogram"]),
        },
        "operational": {
            "queue_time_threshold": _pick(rng, "1s", _ms(rng, 1, 10_000)),
            "min_request_rate": _rate(rng),
            "batching_ratio_max": _pick(rng, 1.1, round(rng.uniform(1.01, 8), 2)),
            "pending_requests": _pick(rng, 1, 10, rng.randint(1, 1000)),
            "gpu_memory_ratio": _pick(rng, 0.9, 1, round(rng.uniform(0.3, 0.99), 2)),
            "startup_probe_budget": _pick(rng, "2m", "30s", "10s", "1d", f"{rng.randint(1, 7200)}s"),
            "load_slow_share": _pick(rng, 0.5, 1, round(rng.uniform(0.05, 1), 2)),
        },
        "llm": {
            "kv_cache_saturated_ratio": _pick(rng, 0.95, 1, round(rng.uniform(0.3, 1), 2)),
            "saturated_for": _pick(rng, "5m", "1m", f"{rng.randint(1, 60)}m"),
        },
        "slos": [_slo(rng, i) for i in range(rng.randint(1, 3))],
    }
    if rng.random() < 0.3:
        spec["cluster_label"] = _pick(rng, "cluster", "region")
    autoscaling = _autoscaling(rng, triton_job)
    if autoscaling:
        spec["autoscaling"] = autoscaling
    rollout = _rollout(rng)
    if rollout:
        spec["rollout"] = rollout
    return spec
