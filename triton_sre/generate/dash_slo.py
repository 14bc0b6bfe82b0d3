"""The SLO dashboard: error budgets, burn rates and burn-rate alerts of the spec's SLOs (it queries
the SLO recording rules)."""

from __future__ import annotations

from typing import Any

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.conventions import UID_SLO_DASHBOARD as UID_SLO
from triton_sre.generate.cluster_silent import seen_window, silent_clusters
from triton_sre.generate.panels import (
    ALL_SERVED,
    DATASOURCE_VAR,
    Layout,
    Matchers,
    cluster_matchers,
    cluster_variables,
    dashboard,
    exporter_job_var,
    exporter_matchers,
    query_var,
    stat,
    table,
    target,
    templating_of,
    timeseries,
    var_matcher,
)
from triton_sre.slo import Spec, window_seconds


def slo(spec: Spec) -> dict[str, Any]:
    cluster = cluster_matchers(spec)
    sel: Matchers = [*cluster, var_matcher(c.L_SLO, "=~", "slo"), var_matcher(c.LABEL_MODEL, "=~", "model")]
    objective = pq.selector(c.REC_SLO_OBJECTIVE, [var_matcher(c.L_SLO, "=~", "slo")])
    if cluster:  # one objective per SLO whether rules ran per cluster (external label) or globally
        objective = f"max {pq.by((c.L_SLO,))} ({objective})"
    windows = sorted(
        {w for long, short, _, _ in c.BURN_TIERS for w in (long, short)}, key=lambda w: window_seconds(w)
    )
    shortest = windows[0]  # the first tier's short window: the freshest request rate recorded per SLO
    # a model no server serves (a config Triton refused): its requests fail before Triton counts them, so
    # its budget reads what the counters last said (100 % when they said nothing bad): no data, not met
    exporter = [*exporter_matchers(spec, None), var_matcher(c.LABEL_MODEL, "=~", "model")]
    key = pq.label_sets(spec.cluster_label).per_model
    unserved = pq.not_ready(exporter, key, key)
    budget = f"{pq.selector(c.REC_SLO_BUDGET_REMAINING, sel)} unless {pq.on(key)} ({unserved})"
    # the SLO's own record of them (slo_rules.not_ready_rule): its models, whatever the model variable lists
    # (recorded requests: a model never served has none)
    not_ready_sel: Matchers = [*cluster, var_matcher(c.L_SLO, "=~", "slo")]
    layout = Layout()
    silent_clusters_row(layout, spec)
    layout.row(
        "Error budget",
        [
            stat(
                "Error budget remaining",
                "Share of the period's error budget left, per SLO and model (negative: overspent); none for "
                "a model not served now (Models not served: no data is not a met objective).",
                "percentunit",
                [target(budget, "{{slo}} {{model}}")],
            ),
            timeseries(
                "Budget remaining over time",
                "Error budget remaining over the SLO period; a model not served has none while it is not.",
                "percentunit",
                [target(budget, "{{slo}} {{model}}")],
            ),
            table(
                "Models not served",
                "Models of the selected SLOs the exporter's repository index lists with no version READY "
                "on any server: Triton fails their requests before counting them, so the SLO has no data "
                "(never 100 %; TritonSLOModelNotServed alerts for them). Their cause: the overview's "
                "Unavailable models table, or triton-sre triage on Triton's log.",
                [target(pq.selector(c.REC_SLO_NOT_READY, not_ready_sel), "", instant=True, table=True)],
            ),
        ],
    )
    layout.explain_empty({"Models not served": ALL_SERVED})
    layout.row(
        "Burn rate",
        [
            timeseries(
                "Burn rate per window",
                "Bad-event ratio / error budget for each alert window; 1 spends the "
                "budget exactly over the period. Pages fire at 14.4x (1h and 5m) and 6x (6h and 30m).",
                "suffix:x",
                [
                    target(
                        f"{pq.selector(c.rec_slo_errors(w), sel)} / on (slo) group_left () (1 - {objective})",
                        f"{{{{slo}}}} {{{{model}}}} {w}",
                    )
                    for w in windows
                ],
            ),
            timeseries(
                "Requests per second (burn-alert guard)",
                f"Valid requests per second per SLO and model over {shortest}; "
                "burn alerts stay silent below min_request_rate.",
                "reqps",
                [target(pq.selector(c.rec_slo_requests(shortest), sel), "{{slo}} {{model}}")],
            ),
        ],
    )
    alerts = "|".join((c.ALERT_SLO_ERROR_BUDGET_BURN, c.ALERT_SLO_LATENCY_BUDGET_BURN))
    firing: Matchers = [(c.LABEL_ALERTNAME, "=~", alerts), var_matcher(c.L_SLO, "=~", "slo")]
    layout.row(
        "Alerts",
        [
            table(
                "Burn-rate alerts",
                "Pending and firing burn-rate alerts with their window and severity.",
                [target(pq.selector(c.ALERTS_SERIES, [*cluster, *firing]), "", instant=True, table=True)],
            ),
        ],
    )
    # the objective has no cluster label when rules are evaluated centrally: list a cluster's SLOs
    slos = pq.selector(c.rec_slo_requests(shortest), cluster) if cluster else c.REC_SLO_OBJECTIVE
    slo_requests = pq.selector(c.rec_slo_requests(shortest), [*cluster, var_matcher(c.L_SLO, "=~", "slo")])
    templating = templating_of(
        [
            DATASOURCE_VAR,
            *cluster_variables(spec),
            exporter_job_var(spec),
            query_var("slo", "SLO", f"label_values({slos}, slo)", "$__all", True),
            query_var(
                "model",
                "Model",
                f"label_values({slo_requests}, model)",
                "$__all",
                True,
            ),
        ]
    )
    return dashboard(
        "Triton / SLOs",
        UID_SLO,
        f"Error budgets, burn rates and burn-rate alerts of the SLOs in {spec.origin_name}.",
        templating,
        layout,
    )


SILENT_CLUSTERS = "Silent clusters"


def silent_clusters_row(layout: Layout, spec: Spec) -> None:
    """The clusters TritonClusterSilent names (its expression, every cluster whatever the variable
    selects: a silent cluster's series are gone, so it may not be offered any more). Only with the
    spec's cluster_label and SLOs, first: the other panels cannot show such a cluster."""
    if not spec.cluster_label or not spec.slos:
        return
    layout.row(
        "Clusters",
        [
            table(
                SILENT_CLUSTERS,
                f"Clusters whose SLO recordings arrived in the last {seen_window(spec)} but none in the "
                f"last {c.CLUSTER_SILENT_AFTER} (TritonClusterSilent): their Prometheus or its remote write "
                "is down, so their panels here are empty and their burn alerts cannot fire, whatever "
                "their models do.",
                [target(silent_clusters(spec), "", instant=True, table=True)],
            ),
        ],
    )
    layout.explain_empty({SILENT_CLUSTERS: "None: every cluster seen is sending its SLO recordings."})
