"""What a canary comparison compares: the baseline and the candidate as series, and each figure's
PromQL over them. Pure: queries are strings.

A side (`Side`) is a matcher list: one version of a model, one model name of a blue/green pair, or a
pod set selected by label matchers (a container upgrade), narrowed to a cluster of a global store or
a namespace of Triton's model namespacing when needed. Each figure is one series per side
(everything summed / the worst summary series), sampled every `step` over the window by a range
query; `rate_figures` is also what the continuous guard (generate/rollout.py) compares per model
version. The verdict on the samples is `model.py`'s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from triton_sre import conventions as c
from triton_sre.promql import (
    Matcher,
    by,
    counter_rate,
    ensemble_marked,
    histogram_quantile,
    rate,
    ratio,
    summary_quantile,
)

__all__ = [
    "ENSEMBLE_FIGURES",
    "TRAFFIC",
    "Side",
    "in_cluster",
    "in_label",
    "model_sides",
    "parse_selector",
    "rate_figures",
    "side_queries",
    "summary_figures",
    "version_sides",
]

TRAFFIC = "requests"  # the key of the request-rate query of a side (not a figure)


@dataclass(frozen=True)
class Side:
    label: str  # how the report names it ("version 1", "scaler_blue", a selector)
    matchers: tuple[Matcher, ...]


def version_sides(job: str, model: str, baseline: str, candidate: str) -> tuple[Side, Side]:
    base = ((c.LABEL_JOB, "=", job), (c.LABEL_MODEL, "=", model))
    return (
        Side(f"{model} v{baseline}", (*base, (c.LABEL_VERSION, "=", baseline))),
        Side(f"{model} v{candidate}", (*base, (c.LABEL_VERSION, "=", candidate))),
    )


def in_cluster(sides: tuple[Side, Side], label: str, cluster: str) -> tuple[Side, Side]:
    """Both sides restricted to one cluster of a global store (`label="cluster"`): without it, a
    canary in one cluster is compared with the baseline of every cluster summed."""
    base, cand = (Side(f"{s.label} in {cluster}", s.matchers) for s in in_label(sides, label, cluster))
    return base, cand


def in_label(sides: tuple[Side, Side], label: str, value: str) -> tuple[Side, Side]:
    """Both sides restricted to the series whose `label` is `value` (an alert's `namespace` under model
    namespacing: another repository's model of the same name is another model), labels unchanged."""
    base, cand = (Side(s.label, (*s.matchers, (label, "=", value))) for s in sides)
    return base, cand


def model_sides(job: str, baseline: str, candidate: str) -> tuple[Side, Side]:
    """A blue/green pair: every version of each model name."""
    return (
        Side(baseline, ((c.LABEL_JOB, "=", job), (c.LABEL_MODEL, "=", baseline))),
        Side(candidate, ((c.LABEL_JOB, "=", job), (c.LABEL_MODEL, "=", candidate))),
    )


_MATCHER = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)')


def parse_selector(text: str) -> tuple[Matcher, ...]:
    """`pod=~"triton-canary-.*", app="triton"` (braces optional) -> matchers; ValueError if malformed."""
    body = text.strip().removeprefix("{").removesuffix("}").strip()
    matchers: list[Matcher] = []
    pos = 0
    while pos < len(body):
        found = _MATCHER.match(body, pos)
        if not found:
            raise ValueError(f'not a label matcher list: {text!r} (expected e.g. pod=~"triton-canary-.*")')
        label, op, value = found.groups()
        matchers.append((label, op, value.replace('\\"', '"').replace("\\\\", "\\")))
        pos = found.end()
    if not matchers:
        raise ValueError("empty selector")
    return tuple(matchers)


def rate_figures(
    matchers: Sequence[Matcher],
    window: str,
    labels: Sequence[str],
    cluster_label: str | None = None,
    *,
    exporter_job: str,
) -> dict[str, str]:
    """TRAFFIC and the counter-based figures, rates over `window` summed `by labels`: what
    `rollout check` (labels ()) and the continuous guard (per model version) both compare. The
    exporter's ensemble mark is joined on the model and `cluster_label` (when given or in `labels`):
    on a global store a same-named ensemble of another cluster leaves no figure out (tidy32). Only the
    mark of `exporter_job` (the spec's) counts: another job exporting the gauge drops no figure (tidy33)."""
    m = list(matchers)

    def summed(family: str) -> str:
        return counter_rate(family, m, window, labels)

    # an ensemble's own series are left out of the figures about its steps' scheduling (ENSEMBLE_FIGURES)
    kept = [label for label in labels if label not in _NOT_ON_ENSEMBLE_GAUGE]
    if cluster_label and cluster_label not in kept:
        kept.append(cluster_label)
    ensemble = ensemble_marked((c.LABEL_MODEL, *kept), [(c.LABEL_JOB, "=", exporter_job)])

    def scheduled(family: str) -> str:
        return f"sum {by(labels)} ({rate(family, m, window)} unless {ensemble})"

    success, failure = summed(c.NV_REQUEST_SUCCESS), summed(c.NV_REQUEST_FAILURE)
    failed = f"({failure} or {success} * 0)"
    requests = f"({success} + {failed})"
    stages = (c.NV_COMPUTE_INPUT_DURATION_US, c.NV_COMPUTE_INFER_DURATION_US, c.NV_COMPUTE_OUTPUT_DURATION_US)
    compute = " + ".join(summed(f) for f in stages)
    queued = ratio(scheduled(c.NV_QUEUE_DURATION_US), scheduled(c.NV_REQUEST_DURATION_US))
    return {
        TRAFFIC: requests,
        c.ROLLOUT_FIG_ERROR_RATIO: ratio(failed, requests),
        c.ROLLOUT_FIG_QUEUE_SHARE: queued,
        c.ROLLOUT_FIG_COMPUTE_PER_INFERENCE: ratio(f"({compute}) / 1e6", summed(c.NV_INFERENCE_COUNT)),
        c.ROLLOUT_FIG_BATCHING_RATIO: ratio(scheduled(c.NV_INFERENCE_COUNT), scheduled(c.NV_EXEC_COUNT)),
    }


ENSEMBLE_FIGURES = (c.ROLLOUT_FIG_QUEUE_SHARE, c.ROLLOUT_FIG_BATCHING_RATIO)
"""The figures an ensemble's own series are left out of: they are about its steps' scheduling. Triton
counts an ensemble request as one execution of its rows (its batching ratio is rows per request) and as
queue time only the scheduler's hand-off to the first step (core's RequestTracker: 140 us of 2.37 s on
the real 2.51, while its step queued 39 % of its time). Its error ratio, latencies and compute time per
inference (its steps' compute, summed per request) are end to end and stay; its steps are judged as
models of their own. Known from the exporter's triton_sre_model_ensemble; without it, kept as before."""
_NOT_ON_ENSEMBLE_GAUGE = (c.LABEL_JOB, c.LABEL_INSTANCE, c.LABEL_MODEL, c.LABEL_VERSION, c.LABEL_NAMESPACE)
"""Labels of Triton's series the exporter's gauge does not carry (it is scraped from the exporter, per
model name): the join is on the model and any other label kept (the spec's cluster label)."""


def side_queries(
    side: Side,
    step: str,
    latency_metrics: Sequence[str],
    cluster_label: str | None = None,
    *,
    exporter_job: str,
) -> dict[str, str]:
    """Figure name (and TRAFFIC) -> PromQL giving one series for `side`, rates over `step`; a model is
    its name in its `cluster_label` where the marks of `exporter_job` are joined (`rate_figures`)."""
    m = list(side.matchers)
    queries = {
        **rate_figures(m, step, (), cluster_label, exporter_job=exporter_job),
        c.ROLLOUT_FIG_TTFT_P99: histogram_quantile(c.VLLM_TTFT_SECONDS, m, c.DEFAULT_SLO_QUANTILE, step, ()),
        c.ROLLOUT_FIG_TPOT_P99: histogram_quantile(c.VLLM_TPOT_SECONDS, m, c.DEFAULT_SLO_QUANTILE, step, ()),
    }
    summary, histogram = c.LATENCY_FAMILIES[c.LATENCY_REQUEST]
    for name, quantile in ((c.ROLLOUT_FIG_LATENCY_P99, "0.99"), (c.ROLLOUT_FIG_LATENCY_P50, "0.5")):
        if histogram and c.LATENCY_SOURCE_HISTOGRAM in latency_metrics:
            queries[name] = f"{histogram_quantile(histogram, m, quantile, step, ())} / 1e3"
        elif c.LATENCY_SOURCE_SUMMARY in latency_metrics:
            queries[name] = f"{summary_quantile(summary, m, quantile, ())} / 1e6"
    return queries


def summary_figures(latency_metrics: Sequence[str]) -> frozenset[str]:
    """Figures `side_queries` reads off Triton's latency summaries: each read covers the summary's
    last TRITON_SUMMARY_MAX_AGE_S, so samples closer than that overlap and are sampled that far apart."""
    histogram = c.LATENCY_FAMILIES[c.LATENCY_REQUEST][1]
    if histogram and c.LATENCY_SOURCE_HISTOGRAM in latency_metrics:
        return frozenset()
    if c.LATENCY_SOURCE_SUMMARY in latency_metrics:
        return frozenset((c.ROLLOUT_FIG_LATENCY_P99, c.ROLLOUT_FIG_LATENCY_P50))
    return frozenset()
