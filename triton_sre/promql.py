"""The PromQL library: every query string the rules, dashboards, LLM rules and the report build.

Pure string builders, no I/O. Conventions written once here:
- string literals: `escape`/`q` (PromQL and Alertmanager matchers share the syntax: backslash,
  double quote and newline are escaped);
- numbers: `num` (stable and short: 0.001, 14.4, 500000);
- aggregation label sets: `label_sets()` (see `LabelSets`), the one place every `by (...)` of the
  generated rules takes its labels from;
- Triton counters: `counter_rate` counts GPU models once (the series without `gpu_uuid` is the
  total, per-GPU series are summed only where no total exists);
- ratios: `ratio` filters the denominator with `> 0`, so zero traffic gives no sample, never NaN;
- quantiles: `summary_quantile` (worst series, NaN dropped) and `histogram_quantile` (buckets
  summed `by (labels, le)`, one builder with a named `guard`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from triton_sre.conventions import (
    L_LATENCY_SOURCE,
    L_STATE,
    LABEL_INSTANCE,
    LABEL_JOB,
    LABEL_LE,
    LABEL_MODEL,
    LABEL_NAMESPACE,
    LABEL_QUANTILE,
    LABEL_VERSION,
    M_MODEL_ENSEMBLE,
    M_MODEL_STATE,
    STATE_READY,
)

__all__ = [
    "GUARD_NONE",
    "GUARD_NON_NEGATIVE",
    "GUARD_OBSERVED",
    "LabelSets",
    "Literal",
    "Matcher",
    "by",
    "counter_rate",
    "ensemble_marked",
    "equal",
    "escape",
    "first_of",
    "histogram_quantile",
    "label_sets",
    "le_regex",
    "not_ready",
    "num",
    "on",
    "q",
    "rate",
    "ratio",
    "selector",
    "summary_current",
    "summary_quantile",
    "tagged",
]

Matcher = tuple[str, str, str]  # (label, operator, value)


class Literal(str):
    """A matcher value that is already a whole PromQL string literal, written as it is (not quoted
    again): a Grafana variable in a format that makes its own literal (generate/panels.py, `var_matcher`)."""

    __slots__ = ()


# -- literals --------------------------------------------------------------------------------------
def escape(value: str) -> str:
    """The inside of a double-quoted PromQL string (no quotes)."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def q(value: str) -> str:
    """A PromQL double-quoted string literal."""
    return f'"{escape(value)}"'


def num(value: float | Decimal) -> str:
    """A number as PromQL and YAML write it, stable and short (0.001, 14.4, 500000)."""
    if isinstance(value, Decimal):
        text = format(value.normalize(), "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    return f"{value:.12g}"


# -- label sets --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LabelSets:
    """The labels aggregations keep, per level.

    `instance`: one Triton server's model version; `model`: a model version over the fleet of a
    job; `per_model`: the SLO level (a model, whatever job or version). `cluster`: the labels that
    must survive every aggregation (the spec's `cluster_label`, issue 24), appended to each level;
    a hand-written label set goes through `keep` to carry them too.
    """

    instance: tuple[str, ...]
    model: tuple[str, ...]
    per_model: tuple[str, ...]
    server: tuple[str, ...] = ()  # one Triton server (a pod), all its models
    job: tuple[str, ...] = ()  # a job's fleet of servers (an autoscaled deployment)
    cluster: tuple[str, ...] = ()

    def keep(self, *labels: str) -> tuple[str, ...]:
        """`labels` plus the labels every aggregation keeps (the cluster label, when set)."""
        return (*labels, *self.cluster)


def label_sets(cluster_label: str | None = None) -> LabelSets:
    """The aggregation label sets every `by (...)` / `on (...)` of the generated rules uses.

    Callers pass the spec's `cluster_label` (None: single-cluster output, unchanged).
    A model version is also told apart by Triton's `namespace` label (model namespacing, 24.05+: two
    repositories may hold models of one name); a series without it groups as before, so the
    figures without namespacing are unchanged. `per_model`, the SLO's level, names a model by name
    alone: an SLO covers every namespace's model of that name.
    """
    cluster = (cluster_label,) if cluster_label else ()
    namespace = (LABEL_NAMESPACE,) if cluster_label != LABEL_NAMESPACE else ()
    return LabelSets(
        instance=(LABEL_JOB, LABEL_INSTANCE, LABEL_MODEL, LABEL_VERSION, *namespace, *cluster),
        model=(LABEL_JOB, LABEL_MODEL, LABEL_VERSION, *namespace, *cluster),
        per_model=(LABEL_MODEL, *cluster),
        server=(LABEL_JOB, LABEL_INSTANCE, *cluster),
        job=(LABEL_JOB, *cluster),
        cluster=cluster,
    )


def by(labels: Sequence[str]) -> str:
    return f"by ({', '.join(labels)})"


def on(labels: Sequence[str]) -> str:
    return f"on ({', '.join(labels)})"


# -- selectors -------------------------------------------------------------------------------------
def selector(metric: str, matchers: Iterable[Matcher] = ()) -> str:
    body = ", ".join(
        f"{label}{op}{value if isinstance(value, Literal) else q(value)}" for label, op, value in matchers
    )
    return f"{metric}{{{body}}}" if body else metric


def not_ready(matchers: Sequence[Matcher], labels: Sequence[str], key: Sequence[str] = (LABEL_MODEL,)) -> str:
    """The models the exporter's repository index lists with no version READY (`matchers` select the
    exporter's series): one sample per `labels` set (each of `key`'s label sets READY on no instance).
    A config Triton 2.51 refuses is in the index by name alone (state UNKNOWN, version ""), an unloaded
    model UNAVAILABLE, a load under way LOADING: none serves a request."""
    states = selector(M_MODEL_STATE, [*matchers, (L_STATE, "!=", STATE_READY)])
    ready = selector(M_MODEL_STATE, [*matchers, (L_STATE, "=", STATE_READY)])
    return f"max {by(labels)} ({states} == 1) unless {on(key)} ({ready} == 1)"


def one_of(label: str, values: Sequence[str]) -> Matcher:
    """`label="v"` for one value, `label=~"v1|v2"` (each value literal) for several."""
    if len(values) == 1:
        return (label, "=", values[0])
    return (label, "=~", "|".join(re.escape(v) for v in values))


def equal(labels: Iterable[tuple[str, str]]) -> list[Matcher]:
    """`label="value"` matchers for (label, value) pairs, in the order given."""
    return [(k, "=", v) for k, v in labels]


def le_regex(threshold_ms: int) -> str:
    """Match a histogram bucket bound however it is written: `500` (Prometheus 2) or `500.0` (3)."""
    return f"{threshold_ms}(\\.0+)?"


# -- counters --------------------------------------------------------------------------------------
def rate(family: str, matchers: Iterable[Matcher], window: str, fn: str = "rate") -> str:
    """`rate(family{matchers}[window])` (or `increase`, with fn)."""
    return f"{fn}({selector(family, matchers)}[{window}])"


def counter_rate(family: str, matchers: Sequence[Matcher], window: str, labels: Sequence[str]) -> str:
    """Per-second rate of a Triton counter summed `by labels`, over every series of a GPU model.

    A GPU instance counts its executions on a series with `gpu_uuid`, the model's own reporter the
    rest on the series without it: disjoint, so their sum (`triton_sre.counters`).
    """
    return f"sum {by(labels)} ({rate(family, matchers, window)})"


def ensemble_marked(labels: Sequence[str], matchers: Sequence[Matcher] = ()) -> str:
    """`on (labels) (max by (labels) (triton_sre_model_ensemble{matchers}) == 1)`: the right side of
    an `unless` leaving out the series of the models the exporter marks as ensembles (none without
    the exporter scraped). `labels`: the model and the labels the gauge shares (the cluster label)."""
    return f"{on(labels)} (max {by(labels)} ({selector(M_MODEL_ENSEMBLE, matchers)}) == 1)"


def ratio(numerator: str, denominator: str) -> str:
    """`numerator / (denominator > 0)`: no sample, never NaN or Inf, when the denominator is 0."""
    return f"{numerator} / ({denominator} > 0)"


# -- quantiles -------------------------------------------------------------------------------------
def summary_current(family: str, matchers: Sequence[Matcher], quantile: str) -> str:
    """`family`'s `quantile` series whose last sample is as recent as its `_count`'s: both come from
    one scrape while Triton writes a finite quantile; a store that drops the NaN of an empty summary
    (VictoriaMetrics) keeps scraping `_count` while the quantile's last sample grows old."""
    series = selector(family, [*matchers, (LABEL_QUANTILE, "=", quantile)])
    count = selector(f"{family}_count", matchers)
    return f"(timestamp({series}) >= ignoring ({LABEL_QUANTILE}) timestamp({count}))"


def summary_quantile(family: str, matchers: Sequence[Matcher], quantile: str, labels: Sequence[str]) -> str:
    """Triton's own summary quantile, the worst series `by labels` (summaries cannot be merged).

    A summary with no request in its sliding window reads NaN: `>= 0` drops it on Prometheus. A store
    that drops NaN samples (VictoriaMetrics) answers the last finite quantile instead, so a series
    counts only while its last sample is as recent as its `_count`'s (`summary_current`).
    """
    series = selector(family, [*matchers, (LABEL_QUANTILE, "=", quantile)])
    current = summary_current(family, matchers, quantile)
    return f"max {by(labels)} (({series} >= 0) and ignoring ({LABEL_QUANTILE}) {current})"


GUARD_NON_NEGATIVE = "non-negative"  # `(... ) >= 0`: drops the NaN of a window without requests
GUARD_OBSERVED = "observed"  # `and on (labels) (count rate > 0)`: only where requests were observed
GUARD_NONE = "none"  # the bare quantile (dashboards' length distributions)


def histogram_quantile(
    family: str,
    matchers: Sequence[Matcher],
    quantile: str,
    window: str,
    labels: Sequence[str],
    *,
    guard: str = GUARD_NON_NEGATIVE,
    fn: str = "rate",
) -> str:
    """histogram_quantile of `family`'s buckets over `window`, summed `by (labels, le)` (histograms
    merge across instances). `matchers` should include the job (every caller passes one).

    A window without requests gives NaN; `guard` says how it is kept out: GUARD_NON_NEGATIVE
    filters the result with `>= 0`, GUARD_OBSERVED joins the buckets with the `_count` rate > 0,
    GUARD_NONE keeps the NaN.
    """
    buckets = f"sum {by((*labels, LABEL_LE))} ({rate(f'{family}_bucket', matchers, window, fn)})"
    if guard == GUARD_NON_NEGATIVE:
        return f"(histogram_quantile({quantile}, {buckets}) >= 0)"
    if guard == GUARD_OBSERVED:
        seen = f"sum {by(labels)} ({rate(f'{family}_count', matchers, window, fn)})"
        return f"histogram_quantile({quantile}, {buckets} and {on(labels)} ({seen} > 0))"
    if guard == GUARD_NONE:
        return f"histogram_quantile({quantile}, {buckets})"
    raise ValueError(f"unknown histogram_quantile guard {guard!r}")


# -- combining -------------------------------------------------------------------------------------
def tagged(expr: str, source: str) -> str:
    """`expr` with label latency_source=`source`."""
    return f'label_replace({expr}, {q(L_LATENCY_SOURCE)}, {q(source)}, "", "")'


def first_of(branches: Sequence[str], labels: Sequence[str]) -> str:
    """The first branch that has a series for each combination of `labels`."""
    return f" or {on(labels)} ".join(branches)
