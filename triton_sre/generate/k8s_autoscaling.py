"""Kubernetes autoscaling objects for the spec's `autoscaling:` entries (issue 21), pure dicts:
an `autoscaling/v2` HorizontalPodAutoscaler on an External metric with the prometheus-adapter
rules that serve it (a ConfigMap), and the equivalent KEDA ScaledObject (prometheus trigger).
Apply one of the two per deployment, not both (KEDA creates its own HPA).

The metric is the job-level recording rule of the entry's signal (generate/autoscaling.py). Queue
time and KV-cache use are per request / a ratio: target type `Value`, the HPA's usage is value /
target. Pending and waiting requests are totals: `AverageValue`, divided by the replicas. The
behaviour follows from the model load time: at most double (or +1) per startup budget, since a
replica still loading does not lower the signal, and keep replicas twice that long on the way down.
"""

from __future__ import annotations

import json
from typing import Any

from triton_sre import conventions as c
from triton_sre.autoscale_spec import K8S_LABEL_VALUE, Autoscaling
from triton_sre.generate.rulefile import GENERATED_HEADER, render_yaml
from triton_sre.promql import num, selector
from triton_sre.slo import Spec

ADAPTER_CONFIGMAP = "triton-sre-adapter-rules"  # mount as prometheus-adapter's --config
_PART_OF = {"app.kubernetes.io/part-of": "triton-sre"}
_NOTE = (
    "# Autoscaling for the `autoscaling:` entries of the spec (docs/autoscaling.md). Apply the HPA\n"
    "# (with the prometheus-adapter rules) OR the KEDA ScaledObject for a deployment, not both.\n"
)


def external_metric(rule: str) -> str:
    """The adapter's name for a recording rule: `job:triton_pending_requests:sum` ->
    `triton_pending_requests` (no colons in the external metrics API)."""
    return rule.split(":")[1]


def quantity(value: float) -> str:
    """A Kubernetes quantity, exact to a thousandth: 0.1 -> 100m, 5 -> 5."""
    milli = round(value * 1000)
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def behavior(entry: Autoscaling) -> dict[str, Any]:
    period = entry.scale_up_period_s
    return {
        "scaleUp": {
            "stabilizationWindowSeconds": 0,
            "selectPolicy": "Max",
            "policies": [
                {"type": "Percent", "value": 100, "periodSeconds": period},
                {"type": "Pods", "value": 1, "periodSeconds": period},
            ],
        },
        "scaleDown": {
            "stabilizationWindowSeconds": entry.scale_down_window_s,
            "policies": [{"type": "Pods", "value": 1, "periodSeconds": period}],
        },
    }


def _target_ref(entry: Autoscaling) -> dict[str, str]:
    return {"apiVersion": "apps/v1", "kind": entry.kind, "name": entry.deployment}


def hpa(entry: Autoscaling) -> dict[str, Any]:
    target: dict[str, str] = (
        {"type": "AverageValue", "averageValue": quantity(entry.target)}
        if entry.per_replica
        else {"type": "Value", "value": quantity(entry.target)}
    )
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": entry.deployment, "labels": dict(_PART_OF)},
        "spec": {
            "scaleTargetRef": _target_ref(entry),
            "minReplicas": entry.min_replicas,
            "maxReplicas": entry.max_replicas,
            "metrics": [
                {
                    "type": "External",
                    "external": {
                        "metric": {
                            "name": external_metric(entry.rule),
                            "selector": {"matchLabels": {c.LABEL_JOB: entry.job}},
                        },
                        "target": target,
                    },
                }
            ],
            "behavior": behavior(entry),
        },
    }


def adapter_rules() -> dict[str, Any]:
    """prometheus-adapter `externalRules` for every signal's job-level rule (label `job` selects)."""
    rules = [
        {
            "seriesQuery": selector(rule, [(c.LABEL_JOB, "!=", "")]),
            "resources": {"namespaced": False},
            "name": {"matches": f"^{rule}$", "as": external_metric(rule)},
            "metricsQuery": "max(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)",
        }
        for rule, _ in c.SIGNAL_RULES.values()
    ]
    config = render_yaml({"externalRules": rules}, "slos.yaml").split("\n", 1)[1]
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": ADAPTER_CONFIGMAP, "labels": dict(_PART_OF)},
        "data": {"config.yaml": config},
    }


def scaled_object(entry: Autoscaling) -> dict[str, Any]:
    job = [(c.LABEL_JOB, "=", entry.job)]
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": entry.deployment, "labels": dict(_PART_OF)},
        "spec": {
            "scaleTargetRef": _target_ref(entry),
            "minReplicaCount": entry.min_replicas,
            "maxReplicaCount": entry.max_replicas,
            "pollingInterval": 15,
            "advanced": {"horizontalPodAutoscalerConfig": {"behavior": behavior(entry)}},
            "triggers": [
                {
                    "type": "prometheus",
                    "metricType": "AverageValue" if entry.per_replica else "Value",
                    "metadata": {
                        "serverAddress": c.AUTOSCALE_PROMETHEUS_URL,
                        "query": f"max({selector(entry.rule, job)})",
                        "threshold": num(entry.target),
                    },
                }
            ],
        },
    }


def no_hpa_note(entry: Autoscaling, source: str) -> str:
    """What stands for the HPA of an entry whose job no `matchLabels` can hold (a PodMonitor's
    `namespace/name`): the API server would refuse that HPA. Refusing the spec instead (the first
    version) stopped every command, the KEDA ScaledObject's users' included, after the upgrade."""
    return GENERATED_HEADER.format(source=source) + (
        f"# No HorizontalPodAutoscaler for {entry.deployment}: it selects the signal with the label\n"
        f"# job={json.dumps(entry.job)}, which is not a Kubernetes label value (at most 63 letters,\n"
        "# digits, '-', '_' or '.', starting and ending with a letter or digit): the API server would\n"
        f"# refuse it. Use {entry.deployment}-keda.yaml, or give the scrape job such a name (relabel\n"
        "# `job` in the scrape config or set the PodMonitor's jobLabel) and generate again.\n"
    )


def autoscaling_files(spec: Spec) -> dict[str, str]:
    """Path under deploy/ -> YAML, for each entry (nothing when the spec has none)."""
    if not spec.autoscaling:
        return {}
    source = spec.origin_name
    files = {
        f"{c.K8S_AUTOSCALING_DIR}/prometheus-adapter-rules.yaml": _NOTE + render_yaml(adapter_rules(), source)
    }
    for entry in spec.autoscaling:
        files[f"{c.K8S_AUTOSCALING_DIR}/{entry.deployment}-hpa.yaml"] = (
            _NOTE + render_yaml(hpa(entry), source)
            if K8S_LABEL_VALUE.fullmatch(entry.job)
            else no_hpa_note(entry, source)
        )
        files[f"{c.K8S_AUTOSCALING_DIR}/{entry.deployment}-keda.yaml"] = _NOTE + render_yaml(
            scaled_object(entry), source
        )
    return files
