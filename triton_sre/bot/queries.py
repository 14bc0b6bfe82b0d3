"""Pure: the PromQL of an alert's facts — an SLO's burn rate and budget selector, a model's latency now,
the largest models on a GPU — and the labels of an SLO alert that may enter a query (the worker asks
Prometheus with them; the chart plots the burn rate)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from triton_sre import conventions as c
from triton_sre.durations import DurationError, parse_duration
from triton_sre.promql import q, summary_quantile

__all__ = [
    "LARGEST_MODELS_SHOWN",
    "Scope",
    "burn_rate_expr",
    "data_in_window_expr",
    "holds_less_than_window",
    "in_namespace",
    "in_own_cluster",
    "largest_models_expr",
    "latency_now_expr",
    "namespaces_expr",
    "requests_now_expr",
    "scope_matchers",
    "scope_of",
    "slo_labels",
    "slo_selector",
]


Scope = tuple[tuple[str, str], ...]  # more label matchers of an alert's query: its cluster on a fleet


def scope_matchers(scope: Scope) -> str:
    """The scope's matchers, each after a comma, to append to a selector's own."""
    return "".join(f",{label}={q(value)}" for label, value in scope)


def in_own_cluster(labels: Mapping[str, str], cluster_label: str) -> dict[str, str]:
    """An alert's labels as read on its cluster's own Prometheus (bot config `clusters`): without the
    cluster label, which its external labels add only to what it remote-writes."""
    return {k: v for k, v in labels.items() if k != cluster_label}


def scope_of(labels: Mapping[str, str], cluster_label: str) -> Scope:
    """The alert's cluster as a matcher when it has one (a fleet's rules keep `cluster_label`): on a
    global store the model's figures of every cluster answer the same query."""
    return ((cluster_label, labels[cluster_label]),) if labels.get(cluster_label) else ()


def in_namespace(labels: Mapping[str, str], scope: Scope) -> Scope:
    """`scope` and the alert's `namespace` when it carries one (rules kept it: Triton's model namespacing,
    or the Kubernetes one): a figure of its model is of that model, not of every same-named one."""
    namespace = labels.get(c.LABEL_NAMESPACE, "")
    return (*scope, (c.LABEL_NAMESPACE, namespace)) if namespace else scope


def slo_selector(slo: str, model: str, scope: Scope = ()) -> str:
    return f"{{{c.L_SLO}={q(slo)},{c.LABEL_MODEL}={q(model)}{scope_matchers(scope)}}}"


def slo_labels(labels: Mapping[str, str]) -> tuple[str, str, str] | None:
    """(slo, window, model) of an SLO alert, or None when one is missing or the window is not a
    duration: it becomes part of a recording rule's NAME (`burn_rate_expr`), which PromQL cannot
    quote, so `5m{...} or vector(1)` would be a query of the label's choosing."""
    slo, window, model = (labels.get(k, "") for k in (c.L_SLO, c.L_WINDOW, c.LABEL_MODEL))
    if not (slo and window and model) or not window.isascii():
        return None
    try:
        parse_duration(window, c.L_WINDOW)
    except DurationError:
        return None
    return slo, window, model


LARGEST_MODELS_SHOWN = 5


def largest_models_expr(labels: Mapping[str, str]) -> str:
    """The largest model versions holding GPU memory on the alert's GPU (same exporter job/instance)."""
    matchers = [f"{c.L_KIND}={q(c.MEMORY_TYPE_GPU)}"]
    matchers.append(f"{c.L_DEVICE}={q(labels[c.LABEL_GPU_UUID])}")
    for label in (c.LABEL_JOB, c.LABEL_INSTANCE):
        if labels.get(label):
            matchers.append(f"{label}={q(labels[label])}")
    return (
        f"topk({LARGEST_MODELS_SHOWN}, sum by ({c.LABEL_MODEL}, {c.LABEL_VERSION}) "
        f"({c.M_MODEL_MEMORY_BYTES}{{{','.join(matchers)}}}))"
    )


def latency_now_expr(model: str, quantile: str, scope: Scope = ()) -> str:
    """PromQL: a model's current request latency (s) at `quantile`, the worst version and server:
    the recording rule for the recorded quantiles, Triton's summary for the others (only while it
    counted requests: a store that drops NaN keeps an idle summary's last quantile)."""
    sel = f"{c.LABEL_MODEL}={q(model)},{c.LABEL_QUANTILE}={q(quantile)}{scope_matchers(scope)}"
    if quantile in c.LATENCY_QUANTILES:
        return f"max({c.rec_latency_quantile(c.REC_LEVEL_MODEL, c.LATENCY_REQUEST)}{{{sel}}})"
    matchers = [(c.LABEL_MODEL, "=", model), *((label, "=", value) for label, value in scope)]
    return f"{summary_quantile(c.NV_REQUEST_SUMMARY_US, matchers, quantile, ())} / 1e6"


def requests_now_expr(model: str, scope: Scope = ()) -> str:
    """PromQL: a model's requests/s (succeeded and failed) over the window a summary quantile is
    trusted in: 0 says the model is idle, so no current latency is the expected answer."""
    names = f"{c.NV_REQUEST_SUCCESS}|{c.NV_REQUEST_FAILURE}"
    sel = f'__name__=~"{names}",{c.LABEL_MODEL}={q(model)}{scope_matchers(scope)}'
    return f"sum(rate({{{sel}}}[{c.SUMMARY_OBSERVED_WINDOW}]))"


def burn_rate_expr(slo: str, window: str, model: str, scope: Scope = ()) -> str:
    """PromQL: an SLO's burn rate for one model (in the alert's cluster) over `window` (bad ratio /
    error budget)."""
    return (
        f"{c.rec_slo_errors(window)}{slo_selector(slo, model, scope)} / on ({c.L_SLO}) group_left () "
        f"(1 - {c.REC_SLO_OBJECTIVE}{{{c.L_SLO}={q(slo)}}})"
    )


WINDOW_POINTS = 120
"""Points of `data_in_window_expr`'s subquery over the window: its answer is within window / 120."""


def data_in_window_expr(window: str, model: str, scope: Scope = ()) -> str:
    """PromQL: seconds of data on `model` (in the alert's cluster, `scope`) Prometheus holds in the last
    `window` (Triton's request counter, which every SLO of the model is computed from): now minus its
    oldest sample in the window, read by a subquery of `WINDOW_POINTS` points (and one of 1 s points
    over the last of them). Shorter than the window when the server (or Prometheus) has been up for
    less: the burn rate over the window is then over that much data. Without the scope a global
    store answered with another cluster's older samples of the model, and a cluster up for minutes
    read as a full window."""
    seconds = parse_duration(window, c.L_WINDOW)
    resolution = max(1, math.ceil(seconds / WINDOW_POINTS))
    stamps = f"timestamp({c.NV_REQUEST_SUCCESS}{{{c.LABEL_MODEL}={q(model)}{scope_matchers(scope)}}})"
    # a subquery's points are aligned to multiples of its resolution: data younger than the last such
    # point is in none of them, so the last resolution is read again at 1 s
    recent = f"min_over_time({stamps}[{resolution}s:1s])"
    return f"time() - min(min_over_time({stamps}[{window}:{resolution}s]) or {recent})"


SHORT_WINDOW_DATA = 0.9
"""A window holding less than this share of its length in data is said to (the subquery's resolution
and a scrape interval are within the rest)."""


def holds_less_than_window(window: str, seconds_of_data: float) -> bool:
    """Whether `data_in_window_expr`'s answer is short of the window (the page says how much it holds)."""
    return seconds_of_data < SHORT_WINDOW_DATA * parse_duration(window, c.L_WINDOW)


def namespaces_expr(model: str, scope: Scope = ()) -> str:
    """How many namespaces serve a model of this name (Triton's model namespacing; 0 answers nothing)."""
    matchers = f'{c.LABEL_MODEL}={q(model)},{c.LABEL_NAMESPACE}!=""{scope_matchers(scope)}'
    selector = f"{c.NV_INFERENCE_COUNT}{{{matchers}}}"
    return f"count(count by ({c.LABEL_NAMESPACE}) ({selector}))"
