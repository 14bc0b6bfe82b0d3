"""What the bot adds to a queue or latency alert (pure, issue 21): how many replicas the scaling
signal asks for, per autoscaled deployment, beside how many Triton servers serve.

The figures are the autoscaling recording rules (generate/autoscaling.py):
`deployment:triton_autoscale_desired_replicas:ceil` (Kubernetes' formula on the spec's signal) and
`job:triton_serving_replicas:count`, narrowed to the alert's job and cluster when it carries them
(the cluster is the spec's `cluster_label`, `cluster` by default: the label the rules keep).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from triton_sre import conventions as c
from triton_sre.promql import Matcher, selector

SCALING_ALERTS = frozenset(
    {c.ALERT_SLO_LATENCY_BUDGET_BURN, c.ALERT_QUEUE_TIME_HIGH, c.ALERT_PENDING_REQUESTS_GROWING}
)
MAX_DEPLOYMENTS_SHOWN = 3

Sample = tuple[Mapping[str, str], float]


@dataclass(frozen=True)
class ScalingAsk:
    deployment: str
    asked: float
    serving: float | None


def scaling_exprs(labels: Mapping[str, str], cluster_label: str = c.LABEL_CLUSTER) -> tuple[str, str]:
    """(desired replicas per deployment, serving replicas per job) for an alert's labels, narrowed
    to its job and its cluster (`cluster_label`)."""
    scope: list[Matcher] = [(k, "=", labels[k]) for k in (c.LABEL_JOB, cluster_label) if labels.get(k)]
    return selector(c.REC_AUTOSCALE_DESIRED, scope), selector(c.REC_SERVING_REPLICAS, scope)


def asks(
    desired: Sequence[Sample], serving: Sequence[Sample], cluster_label: str = c.LABEL_CLUSTER
) -> list[ScalingAsk]:
    """One ask per deployment (the largest first), with the servers of its job (and cluster) serving."""

    def key(labels: Mapping[str, str]) -> tuple[str, str]:
        return labels.get(c.LABEL_JOB, ""), labels.get(cluster_label, "")

    up = {key(labels): value for labels, value in serving}
    found = [
        ScalingAsk(labels.get(c.L_DEPLOYMENT, ""), value, up.get(key(labels))) for labels, value in desired
    ]
    return sorted(found, key=lambda a: (-a.asked, a.deployment))[:MAX_DEPLOYMENTS_SHOWN]


def scaling_line(found: Sequence[ScalingAsk]) -> str:
    """e.g. "the scaling signal asks for 5 replicas of triton (2 serving)"; "" without figures."""
    parts = []
    for a in found:
        of = f" of {a.deployment}" if a.deployment else ""
        serving = f" ({a.serving:.0f} serving)" if a.serving is not None else ""
        parts.append(f"{a.asked:.0f} replicas{of}{serving}")
    return f"the scaling signal asks for {'; '.join(parts)}" if parts else ""
