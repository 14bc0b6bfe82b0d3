"""Pure: the report's range queries, and how many series each has (to choose the step once).

Families the report only needs per model version at each step are aggregated by Prometheus, with
the samples the report's Python used to keep (a fleet's 200,000 series of a gauge become one per
model version): the cost gauge summed over its finite samples (the report integrates the sum of
them, non-finite ones counting 0), the batching ratio and fill averaged over samples that are not
NaN (pandas' mean), the latency summary's worst server per quantile over its finite samples (the
report's rows per version; a model's row takes the worst version). Triton's counters are read per
series (their increase counts resets, which a sum across servers would hide), reduced as read
(`PrometheusClient.read_increases`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from triton_sre import conventions as c
from triton_sre.promql import by

MODEL_VERSION = (c.LABEL_MODEL, c.LABEL_VERSION)
"""What the SLO section's per-step queries are aggregated by (the rules' level: the model name)."""
MODEL_KEY = (*MODEL_VERSION, c.LABEL_NAMESPACE)
MODEL_NAMESPACE = (c.LABEL_MODEL, c.LABEL_NAMESPACE)  # the config facts' and the throughput chart's
"""What the per-model gauges and the summary are aggregated by: rows per version when a model has several,
and per namespace (Triton's model namespacing: same-named models of two repositories, report/namespaces.py;
a series without the label groups as before)."""
CONFIG_FAMILIES = (
    c.M_MODEL_DYNAMIC_BATCHING,
    c.M_MODEL_MAX_BATCH_SIZE,
    c.M_MODEL_MAX_QUEUE_DELAY,
    c.M_MODEL_ENSEMBLE,
    c.M_ENSEMBLE_STEP_CALLS,
)
"""The exporter's per-model facts from the model config (per model, no version label): read as the
largest value among servers per model (an ensemble's steps: per step and version), one sample per
series (the range's last) kept."""
THROUGHPUT = "throughput"
"""The throughput chart's query (its rate window depends on the step: only its count is planned)."""

__all__ = [
    "CONFIG_FAMILIES",
    "MODEL_KEY",
    "MODEL_NAMESPACE",
    "THROUGHPUT",
    "RangeQuery",
    "count_expr",
    "finite",
    "gauge_query",
    "not_nan",
    "report_queries",
    "summary_query",
]


@dataclass(frozen=True)
class RangeQuery:
    """`expr` read over the range; `count` the instant query that says how many series it has."""

    expr: str
    count: str


def finite(expr: str) -> str:
    """The samples of `expr` that are finite numbers (NaN fails every comparison)."""
    return f"(({expr}) < +Inf) > -Inf"


def not_nan(expr: str) -> str:
    """The samples of `expr` that are not NaN (infinite ones kept)."""
    return f"({expr}) >= -Inf"


def count_expr(selector: str, seconds: float, labels: tuple[str, ...] = ()) -> str:
    """How many series the range query of `selector` (aggregated `by labels` when given) has over
    the last `seconds`: each series with a sample in the window counts (`last_over_time`)."""
    window = f"last_over_time({selector}[{max(1, math.ceil(seconds))}s])"
    return f"count(count {by(labels)} ({window}))" if labels else f"count({window})"


def plain(selector: str, seconds: float) -> RangeQuery:
    return RangeQuery(selector, count_expr(selector, seconds))


def _aggregated(op: str, labels: tuple[str, ...], samples: str, selector: str, seconds: float) -> RangeQuery:
    return RangeQuery(f"{op} {by(labels)} ({samples})", count_expr(selector, seconds, labels))


def gauge_query(family: str, seconds: float, cluster: tuple[str, ...] = ()) -> RangeQuery:
    """The range query of one of the exporter's per-model gauges the report reads (others as they are);
    aggregated by the `cluster` label too when given (the spec's `cluster_label`: a row per cluster)."""
    key = (*MODEL_KEY, *cluster)
    if family == c.M_COST_PER_HOUR:
        return _aggregated("sum", (*key, c.L_CURRENCY), finite(family), family, seconds)
    if family in (c.M_BATCHING_RATIO, c.M_BATCH_FILL_RATIO):
        return _aggregated("avg", key, not_nan(family), family, seconds)
    if family == c.M_ENSEMBLE_STEP_SECONDS:  # per step and stage, servers averaged (report/ensemble_steps.py)
        return _aggregated("avg", (*key, c.L_STEP, c.L_STAGE), finite(family), family, seconds)
    if family == c.M_ENSEMBLE_STEP_CALLS:  # an ensemble's steps, per step and version (ensemble_steps.py)
        labels = (*MODEL_NAMESPACE, c.L_STEP, c.L_STEP_VERSION, *cluster)
        return _aggregated("max", labels, finite(family), family, seconds)
    if family in CONFIG_FAMILIES:
        return _aggregated("max", (*MODEL_NAMESPACE, *cluster), finite(family), family, seconds)
    return plain(family, seconds)


def summary_query(seconds: float, cluster: tuple[str, ...] = ()) -> RangeQuery:
    """Triton's latency summary at the report's quantiles: the worst server per model (and cluster),
    quantile and step."""
    quantiles = "|".join(q.replace(".", "\\\\.") for q in c.LATENCY_QUANTILES)
    selector = f'{c.NV_REQUEST_SUMMARY_US}{{{c.LABEL_QUANTILE}=~"{quantiles}"}}'
    return _aggregated("max", (*MODEL_KEY, *cluster, c.LABEL_QUANTILE), finite(selector), selector, seconds)


def report_queries(
    seconds: float,
    histogram_buckets: str,
    token_families: tuple[str, ...],
    capacity_families: tuple[str, ...],
    gauges: tuple[str, ...],
    cluster: tuple[str, ...] = (),
) -> dict[str, RangeQuery]:
    """Every range query of the report over a range of `seconds`, by the name its answer is kept under
    (aggregations keep the `cluster` label when given)."""
    plan = {family: plain(family, seconds) for family in c.PER_MODEL_COUNTERS}
    plan.update({family: gauge_query(family, seconds, cluster) for family in gauges})
    plan[c.NV_REQUEST_SUMMARY_US] = summary_query(seconds, cluster)
    plan.update({family: plain(family, seconds) for family in (histogram_buckets, *token_families)})
    plan.update({family: plain(family, seconds) for family in capacity_families})
    plan[THROUGHPUT] = RangeQuery("", count_expr(c.NV_INFERENCE_COUNT, seconds, (*MODEL_NAMESPACE, *cluster)))
    return plan
