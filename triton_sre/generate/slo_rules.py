"""SLO rules: per SLO, the SLI's recorded parts, its error ratio over every burn window and the
period, the remaining budget, and the multiwindow burn-rate alerts (tiers derived from the period).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from triton_sre import conventions as c
from triton_sre.generate import llm_slo
from triton_sre.generate.cluster_silent import cluster_group
from triton_sre.generate.rulefile import Rule, RuleFile, model_matchers, runbook_url
from triton_sre.promql import (
    Matcher,
    by,
    counter_rate,
    first_of,
    histogram_quantile,
    label_sets,
    le_regex,
    not_ready,
    num,
    on,
    selector,
    summary_quantile,
    tagged,
)
from triton_sre.slo import SLO, Spec, burn_factor, window_seconds

SLO_FILE = "triton-slo-rules.yaml"


def slo_windows(slo: SLO) -> list[str]:
    """The burn windows plus the SLO's period, shortest first."""
    windows = {w for long, short, _, _ in c.BURN_TIERS for w in (long, short)} | {slo.period}
    return sorted(windows, key=window_seconds)


def slo_groups(spec: Spec, base_url: str) -> RuleFile:
    return {"groups": list(group_stream(spec, base_url))}


def group_stream(spec: Spec, base_url: str) -> Iterator[dict[str, Any]]:
    """The family's rule groups, one per SLO, each built when asked for (`generate` writes it and
    drops it: at 10,000 SLOs the whole file was the largest document held, ~17 kB a group)."""
    named: set[str] = set()
    tickets: list[Rule] = []  # the all/regex SLOs' alerts: one group after theirs (each reads all of them)
    for slo in spec.slos:
        rules = _sli_rules(spec, slo)
        rules.extend(burn_alerts(slo, base_url, spec.cluster_label))
        rules.append(not_ready_rule(spec, slo))
        for rule in not_served_alerts(spec, slo, base_url, named):
            (rules if slo.models.kind == "list" or "record" in rule else tickets).append(rule)
        yield {"name": c.slo_group(slo.name), "rules": rules}
    if tickets:
        yield {"name": c.GROUP_SLO_NOT_SERVED, "rules": tickets}
    clusters = cluster_group(spec, base_url)  # with a cluster_label: a cluster gone silent
    if clusters is not None:
        yield clusters


def _valid_rate(spec: Spec, slo: SLO, window: str) -> str:
    if slo.type in c.LLM_SLO_TYPES:  # events of the vLLM histogram: its recorded _count rate
        return _part(slo, c.SLO_PART_TOTAL, window)
    success = _part(slo, c.SLO_PART_SUCCESS, window)
    failure = _part(slo, c.SLO_PART_FAILURE, window)
    return f"{success} + ({failure} or {success} * 0)"


def _part(slo: SLO, part: str, window: str) -> str:
    """The rate of one part of `slo`'s SLI over `window`, from its recorded REC_RATE_WINDOW rate.

    Longer windows average the recorded 5m rates (avg_over_time): the raw counters are read once,
    over 5m, whatever the window, so a 30d window costs 100s of recorded series, not a raw rate over
    every instance's series (the ratio of two such averages is request-weighted, as rate()'s is).
    """
    own = selector(c.rec_slo_part(part), [(c.L_SLO, "=", slo.name)])
    return own if window == c.REC_RATE_WINDOW else f"avg_over_time({own}[{window}])"


def _part_rules(spec: Spec, slo: SLO, labels: Mapping[str, str]) -> list[Rule]:
    """The recorded REC_RATE_WINDOW rates every window of `slo` is computed from (per model)."""
    if slo.type in c.LLM_SLO_TYPES:  # events of vLLM's histogram (generate/llm_slo.py)
        return [
            {"record": c.rec_slo_part(part), "expr": expr, "labels": dict(labels)}
            for part, expr in llm_slo.slo_parts(spec, slo).items()
        ]
    ms: list[Matcher] = [(c.LABEL_JOB, "=", spec.triton_job), *model_matchers(slo)]
    w, model = c.REC_RATE_WINDOW, label_sets(spec.cluster_label).per_model
    parts = {
        c.SLO_PART_SUCCESS: counter_rate(c.NV_REQUEST_SUCCESS, ms, w, model),
        c.SLO_PART_FAILURE: counter_rate(c.NV_REQUEST_FAILURE, ms, w, model),
    }
    if slo.type == c.SLO_AVAILABILITY:
        parts[c.SLO_PART_BAD] = counter_rate(c.NV_REQUEST_FAILURE, [*ms, bad_reason_matcher(slo)], w, model)
    elif slo.latency_sli != c.LATENCY_SLI_TIME_SLICE:
        for part, sel in histogram_selectors(spec, slo).items():
            parts[part] = f"sum {by(model)} (rate({sel}[{w}]))"
    return [
        {"record": c.rec_slo_part(part), "expr": expr, "labels": dict(labels)} for part, expr in parts.items()
    ]


def histogram_selectors(spec: Spec, slo: SLO) -> dict[str, str]:
    """A request-based latency SLI's parts as series selectors (`SLO_PART_TOTAL`: the histogram's
    count, `SLO_PART_GOOD`: the threshold's bucket): what the rules rate, and the report's SLO section
    takes the increase of over its range. An LLM SLO's are vLLM's histogram's (`llm_slo`)."""
    if slo.type in c.LLM_SLO_TYPES:
        return llm_slo.slo_selectors(spec, slo)
    ms: list[Matcher] = [(c.LABEL_JOB, "=", spec.triton_job), *model_matchers(slo)]
    hist = c.NV_FIRST_RESPONSE_HISTOGRAM_MS
    le = (c.LABEL_LE, "=~", le_regex(round(slo.threshold_s * 1000)))
    return {
        c.SLO_PART_TOTAL: selector(f"{hist}_count", ms),
        c.SLO_PART_GOOD: selector(f"{hist}_bucket", [*ms, le]),
    }


def slice_bad_expr(spec: Spec, slo: SLO) -> str:
    """The time-slice SLI's per-model expression: 1 for a bad slice, 0 for a good one (the recorded
    `REC_SLO_SLICE_BAD`; the report evaluates it once per slice over its range)."""
    return _slice_rule(spec, slo, {})["expr"]


def bad_reason_matcher(slo: SLO) -> Matcher:
    if slo.bad_reasons is None:
        return (c.LABEL_REASON, "!=", c.FAILURE_REASON_CANCELED)
    return (c.LABEL_REASON, "=~", "|".join(slo.bad_reasons))


def is_bad_reason(slo: SLO, reason: str) -> bool:
    """Whether `bad_reason_matcher` selects a series whose `reason` label is `reason` ("" when it has
    none): the report filters series it read once by it (the reasons are Triton's plain names)."""
    if slo.bad_reasons is None:
        return reason != c.FAILURE_REASON_CANCELED
    return reason in slo.bad_reasons


def _sli_rules(spec: Spec, slo: SLO) -> list[Rule]:
    labels = {c.L_SLO: slo.name}
    own: list[Matcher] = [(c.L_SLO, "=", slo.name)]
    rules: list[Rule] = [
        {"record": c.REC_SLO_OBJECTIVE, "expr": f"vector({num(slo.objective / 100)})", "labels": labels}
    ]
    time_slice = slo.type == c.SLO_LATENCY and slo.latency_sli != c.LATENCY_SLI_HISTOGRAM
    if time_slice:
        rules.append(_slice_rule(spec, slo, labels))
    rules.extend(_part_rules(spec, slo, labels))
    for window in slo_windows(slo):
        requests = selector(c.rec_slo_requests(window), own)
        rules.append(
            {"record": c.rec_slo_requests(window), "expr": _valid_rate(spec, slo, window), "labels": labels}
        )
        rules.append(
            {
                "record": c.rec_slo_errors(window),
                "expr": _error_ratio(spec, slo, window, requests),
                "labels": labels,
            }
        )
    period_errors = selector(c.rec_slo_errors(slo.period), own)
    rules.append(
        {
            "record": c.REC_SLO_BUDGET_REMAINING,
            "expr": f"1 - {period_errors} / {num(slo.budget)}",
            "labels": labels,
        }
    )
    return rules


def _slice_rule(spec: Spec, slo: SLO, labels: Mapping[str, str]) -> Rule:
    """1 when the slice's `quantile` of request latency exceeds the threshold, else 0, per model.

    Triton's summary (its sliding window ending now, the worst instance) where the spec says Triton
    exports summaries; histogram_quantile over the slice where it exports histograms; the slice's
    average only for models with neither (label latency_source="average").
    """
    ms: list[Matcher] = [(c.LABEL_JOB, "=", spec.triton_job), *model_matchers(slo)]
    threshold_us = num(round(slo.threshold_s * 1e6))
    by_model = label_sets(spec.cluster_label).per_model
    branches = []
    if c.LATENCY_SOURCE_SUMMARY in spec.latency_metrics:
        quantile = summary_quantile(c.NV_REQUEST_SUMMARY_US, ms, slo.quantile, by_model)
        branches.append(tagged(f"{quantile} > bool {threshold_us}", c.LATENCY_SOURCE_SUMMARY))
    if c.LATENCY_SOURCE_HISTOGRAM in spec.latency_metrics:
        hist = histogram_quantile(
            c.NV_FIRST_RESPONSE_HISTOGRAM_MS, ms, slo.quantile, slo.time_slice, by_model
        )
        branches.append(tagged(f"{hist} > bool {num(slo.threshold_s * 1e3)}", c.LATENCY_SOURCE_HISTOGRAM))
    duration = counter_rate(c.NV_REQUEST_DURATION_US, ms, slo.time_slice, by_model)
    success = counter_rate(c.NV_REQUEST_SUCCESS, ms, slo.time_slice, by_model)
    average = f"({duration} / ({success} > 0)) > bool {threshold_us}"
    if not branches:  # nothing but averages: the rule itself says so
        return {
            "record": c.REC_SLO_SLICE_BAD,
            "expr": average,
            "labels": {**labels, c.L_LATENCY_SOURCE: c.LATENCY_SOURCE_AVERAGE},
        }
    branches.append(tagged(average, c.LATENCY_SOURCE_AVERAGE))
    return {"record": c.REC_SLO_SLICE_BAD, "expr": first_of(branches, by_model), "labels": dict(labels)}


def _error_ratio(spec: Spec, slo: SLO, window: str, requests: str) -> str:
    on_model = on(label_sets(spec.cluster_label).per_model)
    if slo.type in c.LLM_SLO_TYPES:  # events above the threshold: all minus the threshold's bucket
        total = _part(slo, c.SLO_PART_TOTAL, window)
        good = _part(slo, c.SLO_PART_GOOD, window)
        return f"clamp_min({total} - {good}, 0) / ({total} > 0)"
    if slo.type == c.SLO_AVAILABILITY:
        bad = _part(slo, c.SLO_PART_BAD, window)
        return f"({bad} or {on_model} {requests} * 0) / {on_model} ({requests} > 0)"
    parts = []
    if slo.latency_sli != c.LATENCY_SLI_TIME_SLICE:
        total = _part(slo, c.SLO_PART_TOTAL, window)
        good = _part(slo, c.SLO_PART_GOOD, window)
        parts.append(f"(({total} - {good}) / ({total} > 0))")
    if slo.latency_sli != c.LATENCY_SLI_HISTOGRAM:
        bad_slices = selector(c.REC_SLO_SLICE_BAD, [(c.L_SLO, "=", slo.name)])
        # summed over the latency sources a model had in the window (one, unless it changed)
        without = f"without ({c.L_SLO}, {c.L_LATENCY_SOURCE})"
        parts.append(
            f"(sum {without} (sum_over_time({bad_slices}[{window}]))"
            f" / sum {without} (count_over_time({bad_slices}[{window}])))"
        )
    # Histogram where the server exports the threshold's bucket; time slices for the other models.
    return f" or {on_model} ".join(parts)


def burn_alert_name(slo: SLO) -> str:
    return (
        c.ALERT_SLO_ERROR_BUDGET_BURN if slo.type == c.SLO_AVAILABILITY else c.ALERT_SLO_LATENCY_BUDGET_BURN
    )


def tiers(slo: SLO) -> list[tuple[str, str, float, str, float]]:
    """(long, short, budget share, severity, burn factor) per tier, derived from the period."""
    return [
        (long, short, share, severity, burn_factor(slo, window_seconds(long), share))
        for long, short, share, severity in c.BURN_TIERS
    ]


def burn_alerts(slo: SLO, base_url: str, cluster_label: str | None = None) -> list[Rule]:
    own: list[Matcher] = [(c.L_SLO, "=", slo.name)]
    on_slo = on(label_sets(cluster_label).keep(c.L_SLO, c.LABEL_MODEL))
    name = burn_alert_name(slo)
    rules = []
    for long, short, share, severity, factor in tiers(slo):
        budget = num(slo.budget)
        guard = num(slo.min_request_rate)
        expr = (
            f"(\n  {selector(c.rec_slo_errors(long), own)} / {budget} >= {num(factor)}\n"
            f"and {on_slo}\n"
            f"  {selector(c.rec_slo_errors(short), own)} / {budget} >= {num(factor)}\n)\n"
            f"and {on_slo} {selector(c.rec_slo_requests(long), own)} >= {guard}\n"
            f"and {on_slo} {selector(c.rec_slo_requests(short), own)} >= {guard}"
        )
        rules.append(
            {
                "alert": name,
                "expr": expr,
                "labels": {c.L_SEVERITY: severity, c.L_SLO: slo.name, c.L_WINDOW: long},
                "annotations": burn_annotations(slo, long, short, share, factor, base_url),
            }
        )
    return rules


def burn_annotations(
    slo: SLO, long: str, short: str, share: float, factor: float, base_url: str
) -> dict[str, str]:
    what = "error budget" if slo.type == c.SLO_AVAILABILITY else "latency budget"
    if slo.type == c.SLO_AVAILABILITY:
        sli = "failed requests"
    elif slo.type in c.LLM_SLO_TYPES:
        sli = llm_slo.slo_sli_text(slo)
    elif slo.latency_sli == c.LATENCY_SLI_HISTOGRAM:
        sli = f"requests slower than {num(slo.threshold_s * 1000)} ms"
    else:
        sli = (
            f"requests slower than {num(slo.threshold_s * 1000)} ms where Triton has the histogram, "
            f"else {slo.time_slice} slices whose {c.quantile_name(slo.quantile)} exceeds it"
        )
    extra = {}
    if slo.type == c.SLO_LATENCY:
        extra = {
            c.ANNOTATION_SLO_QUANTILE: slo.quantile,
            c.ANNOTATION_THRESHOLD_SECONDS: num(slo.threshold_s),
        }
    return {
        "summary": (
            f"Model {{{{ $labels.model }}}} burns the {what} of SLO {{{{ $labels.slo }}}} "
            f"{num(factor)}x too fast or faster ({long} and {short} windows)"
        ),
        "description": (
            f"Over the last {long} the burn rate of SLO {{{{ $labels.slo }}}} ({num(slo.objective)}% "
            f"over {slo.period}) for model {{{{ $labels.model }}}} is "
            f'{{{{ $value | printf "%.1f" }}}}x (threshold {num(factor)}x in both the {long} and '
            f"the {short} window, {sli}). At {num(factor)}x, {num(share * 100)}% of the {slo.period} "
            f"{what} is gone in {long}."
        ),
        "runbook_url": runbook_url(base_url, c.ALERT_RUNBOOKS[burn_alert_name(slo)]),
        # the same figure as the description's, as a number the bot reads (no text parsing)
        c.ANNOTATION_BURN_RATE: '{{ $value | printf "%.1f" }}',
        **extra,
    }


def not_served_alerts(spec: Spec, slo: SLO, base_url: str, named: set[str]) -> list[Rule]:
    """ALERT_SLO_MODEL_NOT_SERVED for each model `slo` names by name that no earlier SLO named (added to
    `named`): no version of it READY on any instance of the exporter's job while some exporter reads
    Triton. A model Triton refused (a bad config.pbtxt: in the index by name alone, state UNKNOWN) or
    nobody loaded fails every request before Triton counts it per model, so no burn alert can see it;
    the SLO's list of names is the intent. `all` and regex selectors name no model: for them the
    repository index is the list of expected models (`index_not_served_alert`)."""
    if slo.models.kind != "list":
        return index_not_served_alert(spec, slo, base_url)
    cluster = label_sets(spec.cluster_label).cluster
    exporter: list[Matcher] = [(c.LABEL_JOB, "=", spec.exporter_job)]
    by_c, on_c = (f"{by(cluster)} ", f" {on(cluster)}") if cluster else ("", "")  # per cluster, if any
    reading = f"max {by_c}({selector(c.M_UP, exporter)}) == 1"
    rules: list[Rule] = []
    for model in slo.models.names:
        if model in named:
            continue
        named.add(model)
        ready = selector(
            c.M_MODEL_STATE, [*exporter, (c.LABEL_MODEL, "=", model), (c.L_STATE, "=", c.STATE_READY)]
        )
        description = (
            f"SLO {slo.name} names model {model}, but for {c.SLO_MODEL_NOT_SERVED_FOR} the "
            f"exporter (job {spec.exporter_job}) has seen no version of it {c.STATE_READY} on "
            "any Triton instance: Triton refused its config, failed to load it, or nobody "
            "loaded it. Every request to it fails before Triton counts it, so the SLO's "
            "burn alerts stay silent. `triton-sre triage --triton-url` names the reason."
        )
        summary = f"Model {model} of SLO {slo.name} is not served (no version {c.STATE_READY})"
        expr = f"{reading}\nunless{on_c}\nmax {by_c}({ready}) == 1"
        rules.append(_not_served_rule(slo, base_url, expr, {c.LABEL_MODEL: model}, summary, description))
    return rules


def not_ready_rule(spec: Spec, slo: SLO) -> Rule:
    """REC_SLO_NOT_READY: the models of `slo` the exporter's index lists with no version READY, per
    version and state (the SLO dashboard's "Models not served", which follows its SLO selection)."""
    exporter: list[Matcher] = [(c.LABEL_JOB, "=", spec.exporter_job), *model_matchers(slo)]
    key = label_sets(spec.cluster_label).per_model
    return {
        "record": c.REC_SLO_NOT_READY,
        "expr": not_ready(exporter, (*key, c.LABEL_VERSION, c.L_STATE), key),
        "labels": {c.L_SLO: slo.name},
    }


def index_not_served_alert(spec: Spec, slo: SLO, base_url: str) -> list[Rule]:
    """ALERT_SLO_MODEL_NOT_SERVED for an SLO of `all` models or a regex: a model of it that the
    exporter's repository index lists by name alone (state UNKNOWN: a config Triton refused, or, under
    explicit model control, a model nobody loaded) with no version READY on any instance, while some
    model of the same cluster is READY and some exporter reads Triton (a server still starting, or down,
    is other alerts'). A ticket, not a page: such an SLO lists no model, so the index cannot tell a
    refusal from a repository that holds models on purpose unloaded; naming the model in a list SLO
    pages. A failed load (UNAVAILABLE) pages as ALERT_MODEL_UNAVAILABLE and an unload on purpose
    (UNAVAILABLE, reason "unloaded") alerts nobody, so neither is matched here. One alert per model:
    models any list SLO names are left to their own alert, and those an earlier `all`/regex SLO covers
    to its alert (an earlier `all` leaves none): the SLO records its models as REC_SLO_NAME_ONLY_RANK
    valued its rank in the spec, and alerts for those whose lowest rank, among every SLO's records, is
    its own (the alert goes to GROUP_SLO_NOT_SERVED: it reads every SLO group). The rules' size is the
    SLO's own (they named every earlier regex: 10.7 MB of SLO rules at 500 regex SLOs, 31.8 MB at 1,000)."""
    rank = spec.slos.index(slo) + 1
    if any(s.models.kind == "all" for s in spec.slos[: rank - 1]):
        return []
    named = {n for s in spec.slos if s.models.kind == "list" for n in s.models.names}
    names = sorted(n for n in named if _may_match(slo, n))
    exporter: list[Matcher] = [(c.LABEL_JOB, "=", spec.exporter_job)]
    models = [*exporter, *model_matchers(slo)]
    if names:
        models.append((c.LABEL_MODEL, "!~", "|".join(re.escape(n) for n in names)))
    cluster = label_sets(spec.cluster_label).cluster
    key = (c.LABEL_MODEL, *cluster)
    ready = selector(c.M_MODEL_STATE, [*exporter, (c.L_STATE, "=", c.STATE_READY)])
    name_only = selector(c.M_MODEL_STATE, [*models, (c.L_STATE, "=", c.STATE_UNKNOWN)])
    model_ready = selector(c.M_MODEL_STATE, [*models, (c.L_STATE, "=", c.STATE_READY)])
    by_c, on_c = by(cluster), on(cluster)
    listed = (
        f"(max {by(key)} ({name_only} == 1) unless {on(key)} ({model_ready} == 1)\n"
        f"and {on_c} (count {by_c} ({ready} == 1) > 0)\n"
        f"and {on_c} (max {by_c} ({selector(c.M_UP, exporter)}) == 1)) * 0 + {rank}"
    )
    record: Rule = {"record": c.REC_SLO_NAME_ONLY_RANK, "expr": listed, "labels": {c.L_SLO: slo.name}}
    own = selector(c.REC_SLO_NAME_ONLY_RANK, [(c.L_SLO, "=", slo.name)])
    expr = f"{own}\n== {on(key)} (min {by(key)} ({c.REC_SLO_NAME_ONLY_RANK}))"
    model = "{{ $labels.model }}"
    description = (
        f"Model {model}, one of SLO {slo.name}'s ({slo.models.describe()}), has been in the repository "
        f"index by name alone, with no version {c.STATE_READY} on any Triton instance, for "
        f"{c.SLO_MODEL_NOT_SERVED_FOR} while other models are served (exporter job {spec.exporter_job}): "
        "Triton refused its config, or (explicit model control) nobody loaded it. Every request to it "
        "fails before Triton counts it, so the SLO's burn alerts stay silent. `triton-sre triage "
        "--triton-url` names the reason; name the model in a list SLO to page for it."
    )
    summary = f"Model {model} of SLO {slo.name} is not served (no version {c.STATE_READY})"
    return [record, _not_served_rule(slo, base_url, expr, {}, summary, description, c.SEVERITY_TICKET)]


def _may_match(slo: SLO, model: str) -> bool:
    """Whether `slo` may cover `model` (its RE2 regex read by Python's re; one it cannot read may): a
    named model the regex cannot match needs no `model!~` (500 regex SLOs beside 2,000 named models
    repeated every name in every rule: generate took twice as long)."""
    if slo.models.kind != "regex":
        return True
    try:
        return re.fullmatch(slo.models.regex, model) is not None
    except re.error:
        return True


def _not_served_rule(
    slo: SLO,
    base_url: str,
    expr: str,
    labels: dict[str, str],
    summary: str,
    description: str,
    severity: str = c.SEVERITY_PAGE,
) -> Rule:
    return {
        "alert": c.ALERT_SLO_MODEL_NOT_SERVED,
        "expr": expr,
        "for": c.SLO_MODEL_NOT_SERVED_FOR,
        "labels": {c.L_SEVERITY: severity, c.L_SLO: slo.name, **labels},
        "annotations": {
            "summary": summary,
            "description": description,
            "runbook_url": runbook_url(base_url, c.ALERT_RUNBOOKS[c.ALERT_SLO_MODEL_NOT_SERVED]),
        },
    }


def rule_file(spec: Spec, base_url: str) -> RuleFile:
    """The family's rule file (registered in generate/families.py)."""
    return slo_groups(spec, base_url)
