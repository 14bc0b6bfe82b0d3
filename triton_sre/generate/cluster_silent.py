"""TritonClusterSilent: with the spec's `cluster_label`, the global evaluator's alert for a cluster
whose SLO recordings stopped arriving (docs/scaling.md, "A cluster that goes silent").

A cluster's Prometheus records the SLO parts' 5m rates and remote-writes them with its external
label. When it dies (or its remote write breaks), a global store answers its last samples for the
5m lookback, then nothing: the cluster's burn alerts resolve and its panels go empty, as a healthy
cluster's would look to a reader of the resolution. This alert names the cluster instead: seen within
`seen_window` (the spec's longest SLO period), no sample in the last CLUSTER_SILENT_AFTER. Seen is read
from REC_CLUSTER_REPORTING, one series per cluster recorded by the same group, so a period-long look
back costs one series per cluster. It reads only recorded series (it can run on a ruler that has no
raw series). `silent_clusters` is the one expression of it: the alert and the SLO dashboard's table.
Pure.
"""

from __future__ import annotations

from typing import Any

from triton_sre import conventions as c
from triton_sre.generate.rulefile import Rule, runbook_url
from triton_sre.promql import by
from triton_sre.slo import Spec

__all__ = ["cluster_group", "seen_window", "silent_clusters"]


def _recorded(spec: Spec) -> list[str]:
    """The SLO parts' 5m rates every SLO of `spec` records in the cluster (LLM SLOs: total, others:
    success)."""
    parts = {c.SLO_PART_TOTAL if slo.type in c.LLM_SLO_TYPES else c.SLO_PART_SUCCESS for slo in spec.slos}
    return sorted(c.rec_slo_part(part) for part in parts)


def _clusters_present(names: list[str], label: str, window: str) -> str:
    """The clusters with a sample of any of `names` in `window`: grouped a name at a time (a function over
    a selector of two names drops the names, and two series then share a label set: a promtool error)."""
    return " or ".join(f"group {by([label])} (present_over_time({name}[{window}]))" for name in names)


def seen_window(spec: Spec) -> str:
    """How long a silent cluster stays named: the longest SLO period of `spec`. Until then its last
    recordings are inside a budget the dashboards and reports still show, so an outage pages for as
    long as it lasts (journey28's resolution after an hour was a dead cluster read as a healthy one);
    a cluster removed on purpose is silenced in Alertmanager by whoever removed it, and drops out by
    itself once no SLO period holds its data."""
    return max(spec.slos, key=lambda slo: slo.period_s).period


def _recent(spec: Spec) -> str:
    return _clusters_present(_recorded(spec), str(spec.cluster_label), c.CLUSTER_SILENT_AFTER)


def silent_clusters(spec: Spec) -> str:
    """The clusters (one series each, the cluster label only) seen within `seen_window` whose SLO
    recordings stopped arriving CLUSTER_SILENT_AFTER ago. Needs the group's REC_CLUSTER_REPORTING."""
    label = str(spec.cluster_label)
    seen = f"group {by([label])} (present_over_time({c.REC_CLUSTER_REPORTING}[{seen_window(spec)}]))"
    return f"{seen} unless on ({label}) ({_recent(spec)})"


def _reporting_rule(spec: Spec) -> Rule:
    return {"record": c.REC_CLUSTER_REPORTING, "expr": _recent(spec)}


def _silent_alert(spec: Spec, base_url: str) -> Rule:
    label = str(spec.cluster_label)
    who = f"{{{{ $labels.{label} }}}}"
    return {
        "alert": c.ALERT_CLUSTER_SILENT,
        "expr": silent_clusters(spec),
        "for": c.CLUSTER_SILENT_FOR,
        "labels": {c.L_SEVERITY: c.SEVERITY_PAGE},
        "annotations": {
            "summary": f"Cluster {who} stopped sending its SLO recordings: its alerts cannot fire",
            "description": (
                f"The SLO recordings of cluster {who} ({label} label) arrived in the last "
                f"{seen_window(spec)} but none in the last {c.CLUSTER_SILENT_AFTER}: its Prometheus "
                "is down, stopped evaluating rules, or its remote write fails. Until they arrive again "
                "its burn alerts resolve or stay silent and its panels are empty, whatever its models do. "
                "A cluster removed on purpose: silence this alert for its cluster until then."
            ),
            "runbook_url": runbook_url(base_url, c.ALERT_RUNBOOKS[c.ALERT_CLUSTER_SILENT]),
        },
    }


def cluster_group(spec: Spec, base_url: str) -> dict[str, Any] | None:
    """The group of the cluster alerts (None without a cluster_label or SLOs)."""
    if not spec.cluster_label or not spec.slos:
        return None
    return {"name": c.CLUSTER_GROUP, "rules": [_reporting_rule(spec), _silent_alert(spec, base_url)]}
