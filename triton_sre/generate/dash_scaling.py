"""The "Scaling" row of the overview dashboard (issue 21): per `autoscaling:` entry, the signal
against its target, the replicas the HPA formula asks for, and the replicas ready (kube-state-metrics)
and serving (Triton pods Prometheus scrapes up). No row when the spec autoscales nothing."""

from __future__ import annotations

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.generate.panels import Layout, cluster_matchers, target, timeseries
from triton_sre.slo import Spec

_REPLICAS = "Replicas: asked, serving, ready"
_NEEDS_K8S = (
    "Asked and serving need traffic on the Triton job; ready needs kube-state-metrics (Kubernetes only)."
)


def scaling_row(layout: Layout, spec: Spec) -> None:
    if not spec.autoscaling:
        return
    signal, replicas = [], []
    for e in spec.autoscaling:
        job = [*cluster_matchers(spec), (c.LABEL_JOB, "=", e.job)]
        mine = [*job, (c.L_DEPLOYMENT, "=", e.deployment)]
        ready = (c.KSM_LABEL_DEPLOYMENT, "=", e.deployment)
        signal += [
            target(pq.selector(c.REC_AUTOSCALE_USAGE, mine), f"{e.deployment} {e.signal} / target"),
        ]
        replicas += [
            target(pq.selector(c.REC_AUTOSCALE_DESIRED, mine), f"{e.deployment} asked (HPA formula)"),
            target(pq.selector(c.REC_SERVING_REPLICAS, job), f"{e.deployment} serving (Triton up)"),
            target(
                f"sum({pq.selector(c.KSM_DEPLOYMENT_READY, [*cluster_matchers(spec), ready])})",
                f"{e.deployment} ready (kube-state-metrics)",
            ),
            target(f"vector({e.max_replicas})", f"{e.deployment} max_replicas"),
        ]
    layout.row(
        "Scaling",
        [
            timeseries(
                "Scaling signal / target",
                "Each autoscaled deployment's signal divided by its target (slos.yaml autoscaling:); "
                f"for pending and waiting requests per serving replica. Above {pq.num(1 + c.HPA_TOLERANCE)} "
                "the HPA adds replicas, below " + pq.num(1 - c.HPA_TOLERANCE) + " it removes some.",
                "none",
                signal,
            ),
            timeseries(
                _REPLICAS,
                "What the HPA formula ceil(serving x signal / target) asks for, the Triton pods "
                f"scraped up, the Deployment's ready replicas and the cap. {c.ALERT_AUTOSCALER_LAGGING} "
                "fires when asked stays above serving for the startup budget.",
                "none",
                replicas,
            ),
        ],
    )
    layout.explain_empty({_REPLICAS: _NEEDS_K8S})
