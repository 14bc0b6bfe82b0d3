"""The current verdict from a live Prometheus: per-interval samples of both sides (range queries),
the sides of a TritonRolloutRegression alert, and every candidate version of a model. Used by
`rollout check` and the bot (alert message, `/triton rollout <model>`)."""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping, Sequence
from typing import Any

from triton_sre import conventions as c
from triton_sre.durations import format_duration, parse_duration
from triton_sre.prom import PromBudgetError, Prometheus
from triton_sre.promcore import finest_step
from triton_sre.promql import counter_rate
from triton_sre.rollout.instant import default_step, dynamic_batcher, ensembles, replaced_pods, restarts
from triton_sre.rollout.model import NO_DATA, Verdict, judge, with_ensembles, with_restarts
from triton_sre.rollout.namespaces import serving_namespaces
from triton_sre.rollout.sides import (
    TRAFFIC,
    Side,
    in_cluster,
    in_label,
    model_sides,
    side_queries,
    summary_figures,
    version_sides,
)
from triton_sre.rollout.spec import RolloutSpec
from triton_sre.slo import Spec


def _values(matrix: list[dict[str, Any]]) -> list[float]:
    """The samples of a figure's one series: NaN, infinite and negative values are no sample (every
    figure is a rate, a ratio of rates or a duration; Prometheus gives NaN for 0/0)."""
    values = [float(v) for series in matrix[:1] for _, v in series.get("values", [])]
    return [v for v in values if _kept(v)]


def _kept(value: float) -> bool:
    return math.isfinite(value) and value >= 0


STOPPED_STEPS = 2
"""Steps a side's request rate may end before the other side's (a scrape not yet in a rate) before the
side is said to have stopped being reported. Against the other side, not the window's end: a store that
ingests late (remote write, a querier's lag) misses the newest minute of both sides alike."""


MAX_POINTS_PER_READ = 1_000_000
"""Samples a figure's read may ask for (30 days at a 2.6 s step): the joined answer of a read holds about
140 bytes a point until it becomes float64s, so a finer --step is refused, not read until the deadline."""


def smallest_step(window_s: float) -> float:
    """The finest step (seconds, rounded up to the millisecond) that keeps a window's read within
    MAX_POINTS_PER_READ points."""
    return finest_step(window_s, MAX_POINTS_PER_READ)


def read_samples(
    prom: Prometheus, query: str, start: float, end: float, step: float, last: list[float] | None = None
) -> array[float]:
    """`_values` of the range [start, end] at `step`, held as float64s (a Python float each took 32
    bytes: 20 reads of 172,800 samples were 110 MB). A range longer than Prometheus answers at once (a
    30-day window at 15 s is 172,800 points) is read in slices by the client (`Prometheus.query_range`).
    `last`: the time of the last sample kept is appended to it (nothing when there is none)."""
    matrix = prom.query_range(query, start, end, step)
    if last is not None:
        kept = [float(t) for series in matrix[:1] for t, v in series.get("values", []) if _kept(float(v))]
        last += kept[-1:]
    return array("d", _values(matrix))


def _stopped(lasts: list[float], latest: float, step_s: float) -> array[float]:
    """How long before `latest` a side's requests were last read, when longer than STOPPED_STEPS steps."""
    return array("d", [latest - t for t in lasts if latest - t > STOPPED_STEPS * step_s])


SIDES = ("baseline", "candidate")


def reads(latency: tuple[str, ...]) -> list[tuple[str, str]]:
    """(figure or TRAFFIC, side) in the order `collect` reads them: traffic first."""
    # the names only: no job is part of a key (each query is built with the spec's exporter_job)
    names = side_queries(Side("", ()), "1m", latency, exporter_job=c.DEFAULT_EXPORTER_JOB)
    return [(name, side) for name in names for side in SIDES]


def collect(
    prom: Prometheus,
    sides: tuple[Side, Side],
    window_s: float,
    step_s: float,
    latency: tuple[str, ...],
    not_read: list[tuple[str, str]] | None = None,
    cluster_label: str | None = None,
    *,
    exporter_job: str,
    stopped: list[array[float]] | None = None,
) -> dict[str, tuple[array[float], array[float]]]:
    """Per-interval samples of every figure on both sides over the last window (PromError if down).

    Summary quantiles are sampled once per summary window (at least one sample, at the end): reads
    closer together share observations, and a rank test on them would count one slow request many
    times (an equal candidate then "fails" with a tiny p-value).

    With `not_read` given, the client's budget running out (PromBudgetError) stops the reads: the
    figures read on both sides are returned and every (figure, side) not read is added to `not_read`.
    `cluster_label`: the ensemble marks of `exporter_job` (the spec's; no default, so no caller reads
    another job's marks unawares) are read on (model, cluster) (`side_queries`). `stopped`: given, the
    two sides' seconds between their last request-rate read and the other side's, when that is more than
    STOPPED_STEPS steps (`model.stopped_sides`), are added to it (baseline, then candidate)."""
    step = format_duration(step_s)
    found: dict[str, tuple[array[float], array[float]]] = {}
    done = 0  # reads answered, in the order of `reads`
    try:
        end = prom.now()  # Prometheus' clock: this machine's may be off by more than a step
        queries = [
            side_queries(side, step, latency, cluster_label, exporter_job=exporter_job) for side in sides
        ]
        overlapping = summary_figures(latency)

        def samples(query: str, name: str, last: list[float] | None = None) -> array[float]:
            every = max(step_s, c.TRITON_SUMMARY_MAX_AGE_S) if name in overlapping else step_s
            start = min(end - window_s + every, end)  # a window shorter than `every`: one read, at the end
            return read_samples(prom, query, start, end, every, last)

        for name in queries[0]:
            lasts: tuple[list[float], list[float]] = ([], [])
            base = samples(queries[0][name], name, lasts[0] if name == TRAFFIC else None)
            done += 1
            found[name] = (base, samples(queries[1][name], name, lasts[1] if name == TRAFFIC else None))
            done += 1
            if name == TRAFFIC and stopped is not None:  # a side no longer reported (unloaded, pods gone)
                latest = max(lasts[0] + lasts[1], default=end)
                stopped += [_stopped(lasts[0], latest, step_s), _stopped(lasts[1], latest, step_s)]
    except PromBudgetError:
        if not_read is None:
            raise
        not_read += reads(latency)[done:]
    return found


def verdict_now(
    prom: Prometheus,
    sides: tuple[Side, Side],
    rs: RolloutSpec,
    latency: tuple[str, ...],
    job: str,
    window_s: float,
    cluster_label: str = c.LABEL_CLUSTER,
    *,
    exporter_job: str,
) -> Verdict:
    step_s = default_step(prom, job, window_s, sides[0].matchers)
    stopped: list[array[float]] = []
    samples = collect(
        prom,
        sides,
        window_s,
        step_s,
        latency,
        cluster_label=cluster_label,
        exporter_job=exporter_job,
        stopped=stopped,
    )
    counts = restarts(prom, sides, window_s), replaced_pods(prom, sides, window_s)
    batcher = dynamic_batcher(prom, sides, cluster_label, exporter_job=exporter_job)
    verdict = with_restarts(judge(*sides, samples, rs, batcher, stopped), *counts)
    return with_ensembles(verdict, ensembles(prom, sides, cluster_label, exporter_job=exporter_job))


def alert_sides(
    labels: Mapping[str, str], job: str, cluster_label: str = c.LABEL_CLUSTER
) -> tuple[Side, Side] | None:
    """The two sides a TritonRolloutRegression alert names (a blue/green pair, else two versions), in
    the alert's cluster when it names one (a fleet's rules keep `cluster_label`)."""
    base, cand, model = labels.get(c.LABEL_BASELINE), labels.get(c.LABEL_CANDIDATE), labels.get(c.LABEL_MODEL)
    job = labels.get(c.LABEL_JOB, job)
    version = labels.get(c.LABEL_VERSION)
    if base and cand:
        sides = model_sides(job, base, cand)
    elif base and model and version:
        sides = version_sides(job, model, base, version)
    else:
        return None
    namespace = labels.get(c.LABEL_NAMESPACE)  # model namespacing: the guard's rules keep it
    if namespace:
        sides = in_label(sides, c.LABEL_NAMESPACE, namespace)
    cluster = labels.get(cluster_label)
    return in_cluster(sides, cluster_label, cluster) if cluster else sides


Cluster = tuple[tuple[str, str], ...]
"""(label, value) pairs: both sides in one cluster of a global store, and in one of Triton's model
namespaces inside it when the model serves in several (empty: the whole store)."""


def _narrow(sides: tuple[Side, Side], cluster: Cluster) -> tuple[Side, Side]:
    for label, value in cluster:
        sides = in_cluster(sides, label, value)
    return sides


INSTANT_QUERIES_PER_VERDICT = 10
"""`verdict_now`'s instant queries beside its range reads: Prometheus' clock and the samples' spacing
(the step), then one a side for counter resets, replaced pods, the exporter's dynamic batcher and its
ensemble marks (one more, the configuration read, when the sides have no samples to space)."""


def queries_per_verdict(latency: tuple[str, ...]) -> tuple[int, int]:
    """(range, instant) queries of one `verdict_now`: each figure read on each side (18 with the shipped
    latency sources), and INSTANT_QUERIES_PER_VERDICT."""
    return len(reads(latency)), INSTANT_QUERIES_PER_VERDICT


MAX_VERSIONS_JUDGED = 5
MAX_SHOWN_UNJUDGED = 10  # versions named in the line about those not judged
"""Candidate versions the slash command judges, the busiest first: `queries_per_verdict` each (18 range
and 10 instant queries with the shipped spec) within the bot's 2 s for the whole answer; a model serving
hundreds of versions was no answer at all (`did not answer within 2s`), after spending the budget."""


def model_verdicts(
    prom: Prometheus,
    model: str,
    rs: RolloutSpec,
    latency: tuple[str, ...],
    job: str,
    window_s: float,
    cluster: Cluster = (),
    unjudged: list[str] | None = None,
    ran_out: list[str] | None = None,
    cluster_label: str = c.LABEL_CLUSTER,
    *,
    exporter_job: str,
) -> list[Verdict]:
    """The MAX_VERSIONS_JUDGED busiest other served versions of `model` against its busiest version
    (the guard's baseline); the versions left, least busy last, are added to `unjudged` when given,
    and those the client's budget left unjudged to `ran_out` (`judged_until_budget`)."""
    window = format_duration(window_s)
    matchers = [
        (c.LABEL_JOB, "=", job),
        (c.LABEL_MODEL, "=", model),
        *((label, "=", value) for label, value in cluster),
    ]
    served = prom.vector(counter_rate(c.NV_REQUEST_SUCCESS, matchers, window, (c.LABEL_VERSION,)))
    by_traffic = sorted(served, key=lambda row: -row[1])
    versions = [labels.get(c.LABEL_VERSION, "") for labels, _ in by_traffic]
    if unjudged is not None:
        unjudged += versions[1 + MAX_VERSIONS_JUDGED :]
    sides = [
        (f"v{v}", _narrow(version_sides(job, model, versions[0], v), cluster))
        for v in versions[1 : 1 + MAX_VERSIONS_JUDGED]
    ]
    how = (rs, latency, job, window_s, cluster_label)
    return judged_until_budget(prom, sides, how, ran_out, exporter_job=exporter_job)


def judged_until_budget(
    prom: Prometheus,
    sides: Sequence[tuple[str, tuple[Side, Side]]],
    how: tuple[RolloutSpec, tuple[str, ...], str, float, str],
    ran_out: list[str] | None,
    *,
    exporter_job: str,
) -> list[Verdict]:
    """`verdict_now` of each (name, sides) in turn. With `ran_out` given, the client's budget running
    out keeps the verdicts judged and adds the names not judged to `ran_out` (the slash command's
    answer was the budget's error alone, every verdict judged before it lost)."""
    verdicts: list[Verdict] = []
    for at, (_, pair) in enumerate(sides):
        try:
            verdicts.append(verdict_now(prom, pair, *how, exporter_job=exporter_job))
        except PromBudgetError:
            if ran_out is None:
                raise
            ran_out += [name for name, _ in sides[at:]]
            break
    return verdicts


def pair_verdicts(
    prom: Prometheus,
    name: str,
    rs: RolloutSpec,
    latency: tuple[str, ...],
    job: str,
    window_s: float,
    cluster: Cluster = (),
    ran_out: list[str] | None = None,
    cluster_label: str = c.LABEL_CLUSTER,
    *,
    exporter_job: str,
) -> list[Verdict]:
    """Each declared blue/green pair that `name` names (the pair, its baseline or its candidate)."""
    sides = [
        (p.name, _narrow(model_sides(job, p.baseline, p.candidate), cluster))
        for p in rs.pairs
        if name in (p.name, p.baseline, p.candidate)
    ]
    how = (rs, latency, job, window_s, cluster_label)
    return judged_until_budget(prom, sides, how, ran_out, exporter_job=exporter_job)


def serving_clusters(prom: Prometheus, model: str, spec: Spec, window_s: float) -> list[str]:
    """The clusters (values of the spec's cluster label) where `model`, or a pair it names, served
    requests in the window: several on a global store that clusters write to, none on a cluster's own."""
    label = spec.cluster_label or c.LABEL_CLUSTER
    pairs = [p for p in spec.rollout.pairs if model in (p.name, p.baseline, p.candidate)]
    names = {model, *(p.baseline for p in pairs), *(p.candidate for p in pairs)}
    found: set[str] = set()
    for name in sorted(names):
        matchers = [(c.LABEL_JOB, "=", spec.triton_job), (c.LABEL_MODEL, "=", name)]
        rates = counter_rate(c.NV_REQUEST_SUCCESS, matchers, format_duration(window_s), (label,))
        found |= {labels[label] for labels, _ in prom.vector(rates) if labels.get(label)}
    return sorted(found)


def summary_lines(verdict: Verdict) -> list[str]:
    """One line per judged figure: baseline -> candidate, p-value and verdict (the bot's message)."""
    lines = []
    for r in verdict.figures:
        if r.baseline is None or r.candidate is None:
            continue
        scale, unit = (1e3, " ms") if r.figure.unit == "s" else (1.0, "")
        p = "" if r.p_value is None else f", p={r.p_value:.2g}"
        values = f"{r.baseline * scale:.4g}{unit} -> {r.candidate * scale:.4g}{unit}"
        # a figure with too few samples to test still shows both medians (the alert may name it)
        judged = r.verdict
        if r.verdict == NO_DATA:
            judged = f"{NO_DATA}: {r.samples[0]} and {r.samples[1]} samples"
        lines.append(f"{r.figure.name}: {values}{p} ({judged})")
    return lines


def alert_lines(prom: Prometheus, labels: Mapping[str, str], spec: Spec) -> list[str]:
    """The bot's lines for a TritonRolloutRegression alert: the verdict now, then each figure."""
    rs = spec.rollout
    label = spec.cluster_label or c.LABEL_CLUSTER
    sides = alert_sides(labels, spec.triton_job, label)
    if sides is None:
        return []
    window_s = parse_duration(rs.window, "rollout.window")
    verdict = verdict_now(
        prom,
        sides,
        rs,
        spec.latency_metrics,
        spec.triton_job,
        window_s,
        label,
        exporter_job=spec.exporter_job,
    )
    head = f"{verdict.candidate.label} vs {verdict.baseline.label}: {verdict.verdict} ({verdict.reason})"
    return [head, *summary_lines(verdict)]


def model_answer(prom: Prometheus, model: str, spec: Spec, cluster: str | None = None) -> list[str]:
    """The slash command's lines for `rollout <model> [cluster]`: each candidate version's verdict now,
    and each declared blue/green pair `model` names (a pair name, or either model of a pair). On a
    store holding several clusters and no cluster given, each cluster is judged on its own: summed, a
    canary in one cluster would be compared with the baseline of every cluster. A last line names
    Prometheus' warnings on the answers read, when any (the figures may rest on partial data)."""
    with prom.heeding() as warned:
        lines = _model_answer(prom, model, spec, cluster)
    if warned:
        lines.append(partial_line(warned))
    return lines


PARTIAL_SHOWN = 3  # distinct Prometheus warnings a Slack line names (its figures may be partial)


def partial_texts(warned: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    """The distinct texts of Prometheus' warnings (query, text), at most PARTIAL_SHOWN of 300 characters
    each: a Slack line naming them stays under its 3,000 (the bot's message and `/triton rollout`)."""
    return tuple(dict.fromkeys(text for _, text in warned))[:PARTIAL_SHOWN]


def partial_line(warned: Sequence[tuple[str, str]]) -> str:
    """The line saying figures may rest on partial data, naming Prometheus' warnings."""
    return "Figures may be partial: " + "; ".join(partial_texts(warned))


def _model_answer(prom: Prometheus, model: str, spec: Spec, cluster: str | None) -> list[str]:
    window_s = parse_duration(spec.rollout.window, "rollout.window")
    label = spec.cluster_label or c.LABEL_CLUSTER
    scope: Cluster = () if cluster is None else ((label, cluster),)
    clusters = serving_clusters(prom, model, spec, window_s) if cluster is None else []
    if len(clusters) < 2:  # model namespacing: two repositories' models of one name, each on its own
        matchers = [(c.LABEL_JOB, "=", spec.triton_job), (c.LABEL_MODEL, "=", model)]
        namespaces = serving_namespaces(prom, [*matchers, *((k, "=", v) for k, v in scope)], window_s)
        if len(namespaces) < 2:
            return _answer(prom, model, spec, window_s, scope)
        label, clusters = c.LABEL_NAMESPACE, namespaces
    kind = "namespaces" if label == c.LABEL_NAMESPACE else "clusters"
    where = "".join(f" in {k} {v}" for k, v in scope)
    lines = [
        f"{model} served requests{where} in {len(clusters)} {kind} ({label}: {', '.join(clusters)}): "
        "each is judged on its own."
    ]
    for name in clusters:
        lines += _answer(prom, model, spec, window_s, (*scope, (label, name)))
    return lines


def _version_of(side: Side) -> str:
    return next((value for label, _, value in side.matchers if label == c.LABEL_VERSION), "")


def _answer(prom: Prometheus, model: str, spec: Spec, window_s: float, cluster: Cluster) -> list[str]:
    rs = spec.rollout
    args = (prom, model, rs, spec.latency_metrics, spec.triton_job, window_s, cluster)
    label, exporter = spec.cluster_label or c.LABEL_CLUSTER, spec.exporter_job
    unjudged: list[str] = []
    ran_out: list[str] = []
    verdicts = [
        *model_verdicts(
            *args, unjudged=unjudged, ran_out=ran_out, cluster_label=label, exporter_job=exporter
        ),
        *pair_verdicts(*args, ran_out=ran_out, cluster_label=label, exporter_job=exporter),
    ]
    if not verdicts and not ran_out:
        where = "".join(f" in {label} {value}" for label, value in cluster)
        return [
            f"{model}: fewer than two versions served requests{where} in the last {rs.window} and no "
            "declared blue/green pair names it: nothing to compare."
        ]
    lines = []
    for v in verdicts:
        lines.append(f"{v.candidate.label} vs {v.baseline.label}: {v.verdict.upper()} ({v.reason})")
        lines += [f"  {line}" for line in summary_lines(v)]
    if ran_out:
        lines.append(
            f"{model}: Prometheus did not answer every query within {prom.budget:g}s: not judged: "
            f"{', '.join(ran_out)}."
        )
    if unjudged:
        shown = ", ".join(f"v{v}" for v in unjudged[:MAX_SHOWN_UNJUDGED])
        more = f" and {len(unjudged) - MAX_SHOWN_UNJUDGED} more" if len(unjudged) > MAX_SHOWN_UNJUDGED else ""
        lines.append(
            f"{model}: {len(unjudged)} other versions served fewer requests and are not judged here "
            f"(the {MAX_VERSIONS_JUDGED} busiest are): {shown}{more}; `triton-sre rollout check --model "
            f"{model} --baseline-version {_version_of(verdicts[0].baseline) if verdicts else 'B'} "
            "--candidate-version V` judges one."
        )
    return lines


__all__ = [
    "INSTANT_QUERIES_PER_VERDICT",
    "MAX_POINTS_PER_READ",
    "MAX_VERSIONS_JUDGED",
    "PARTIAL_SHOWN",
    "alert_lines",
    "alert_sides",
    "collect",
    "model_answer",
    "model_verdicts",
    "pair_verdicts",
    "partial_line",
    "partial_texts",
    "queries_per_verdict",
    "serving_clusters",
    "smallest_step",
    "summary_lines",
    "verdict_now",
]
