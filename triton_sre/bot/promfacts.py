"""The Prometheus figures of one alert group's message: burn rates, budgets and latency of the SLO
alerts, the replicas the scaling signal asks for, the rollout verdict, LLM figures and the largest
models on a GPU. Each reader takes the group's shown alerts and returns figures keyed by alert
fingerprint; a query that fails is logged and leaves that figure out (the message degrades, it is
never blocked). The worker calls these inside its Prometheus budget (worker.FACTS_PROMETHEUS_BUDGET_S).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from triton_sre import conventions as c
from triton_sre.bot.enrich import SLO_ALERTS, ModelSize, latency_quantiles_shown
from triton_sre.bot.llm import LLM_ALERTS
from triton_sre.bot.llm import figure_exprs as llm_figure_exprs
from triton_sre.bot.payload import Alert
from triton_sre.bot.queries import (
    Scope,
    burn_rate_expr,
    data_in_window_expr,
    holds_less_than_window,
    in_namespace,
    largest_models_expr,
    latency_now_expr,
    namespaces_expr,
    requests_now_expr,
    scope_of,
    slo_labels,
    slo_selector,
)
from triton_sre.bot.scaling import SCALING_ALERTS, ScalingAsk, asks, scaling_exprs
from triton_sre.prom import PromError, Prometheus
from triton_sre.rollout.live import alert_lines
from triton_sre.slo import Spec

log = logging.getLogger(__name__)


def _failed(group_key: str, exc: PromError) -> None:
    log.warning("group %s: Prometheus query failed: %s", group_key, exc)


@dataclass
class SloFigures:
    burn: dict[str, float] = field(default_factory=dict)
    data: dict[str, float] = field(default_factory=dict)  # seconds of data in a window shorter than it
    budget: dict[str, float] = field(default_factory=dict)
    latency: dict[str, dict[str, float]] = field(default_factory=dict)
    idle: set[str] = field(default_factory=set)  # latency alerts whose model had no request lately


def slo_figures(
    prometheus: Prometheus, alerts: Sequence[Alert], cluster_label: str, group_key: str
) -> SloFigures:
    """Burn rate now, the data a window holds, budget left and latency now of each SLO alert."""
    out = SloFigures()
    for alert in alerts:
        found = slo_labels(alert.labels) if alert.name in SLO_ALERTS else None
        if found is None:
            continue
        slo, window, model = found
        scope = scope_of(alert.labels, cluster_label)
        key = alert.fingerprint
        try:
            value = prometheus.instant(burn_rate_expr(slo, window, model, scope))
            if value is not None:
                out.burn[key] = value
            held = prometheus.instant(data_in_window_expr(window, model, scope))
            if held is not None and holds_less_than_window(window, held):
                out.data[key] = held
            left = prometheus.instant(f"{c.REC_SLO_BUDGET_REMAINING}{slo_selector(slo, model, scope)}")
            if left is not None:
                out.budget[key] = left
            for quantile in latency_quantiles_shown(alert):
                now = prometheus.instant(latency_now_expr(model, quantile, scope))
                if now is not None:
                    out.latency.setdefault(key, {})[quantile] = now
            quiet = latency_quantiles_shown(alert) and key not in out.latency
            if quiet and prometheus.instant(requests_now_expr(model, scope)) == 0:
                out.idle.add(key)
        except PromError as exc:
            _failed(group_key, exc)
    return out


def replicas(
    prometheus: Prometheus, alerts: Sequence[Alert], cluster_label: str, group_key: str
) -> dict[str, list[ScalingAsk]]:
    """For each queue/latency alert: the replicas the scaling signal asks for (bot/scaling.py)."""
    found: dict[str, list[ScalingAsk]] = {}
    for alert in alerts:
        if alert.name not in SCALING_ALERTS:
            continue
        desired, serving = scaling_exprs(alert.labels, cluster_label)
        try:
            asked = asks(prometheus.vector(desired), prometheus.vector(serving), cluster_label)
        except PromError as exc:
            _failed(group_key, exc)
            continue
        if asked:
            found[alert.fingerprint] = asked
    return found


def rollout(
    prometheus: Prometheus, alerts: Sequence[Alert], spec: Callable[[], Spec], group_key: str
) -> dict[str, list[str]]:
    """For each rollout alert: the verdict now and each figure (rollout/live.py, --slo-file's spec)."""
    found: dict[str, list[str]] = {}
    for alert in alerts:
        if alert.name != c.ALERT_ROLLOUT_REGRESSION:
            continue
        try:
            found[alert.fingerprint] = alert_lines(prometheus, alert.labels, spec())
        except PromError as exc:
            _failed(group_key, exc)
    return found


def llm_figures(
    prometheus: Prometheus, alerts: Sequence[Alert], cluster_label: str, group_key: str
) -> dict[str, dict[str, float]]:
    """TTFT p99, KV cache use and waiting requests for each LLM alert (bot/llm.py)."""
    found: dict[str, dict[str, float]] = {}
    for alert in alerts:
        model = alert.labels.get(c.LABEL_MODEL)
        if alert.name not in LLM_ALERTS or not model:
            continue
        figures: dict[str, float] = {}
        try:
            scope = in_namespace(alert.labels, scope_of(alert.labels, cluster_label))
            version = alert.labels.get(c.LABEL_VERSION, "")
            for name, expr in llm_figure_exprs(model, version, scope).items():
                value = prometheus.instant(expr)
                if value is not None:
                    figures[name] = value
        except PromError as exc:
            _failed(group_key, exc)
        found[alert.fingerprint] = figures
    return found


def largest_models(
    prometheus: Prometheus, alerts: Sequence[Alert], group_key: str
) -> dict[str, list[ModelSize]]:
    """For each headroom alert: the largest models on its GPU, from the exporter's memory series."""
    found: dict[str, list[ModelSize]] = {}
    for alert in alerts:
        if alert.name != c.ALERT_GPU_MEMORY_HEADROOM_LOW or not alert.labels.get(c.LABEL_GPU_UUID):
            continue
        try:
            rows = prometheus.vector(largest_models_expr(alert.labels))
        except PromError as exc:
            _failed(group_key, exc)
            continue
        sizes = [ModelSize(m.get(c.LABEL_MODEL, ""), m.get(c.LABEL_VERSION, ""), v) for m, v in rows]
        found[alert.fingerprint] = sorted(sizes, key=lambda s: (-s.bytes, s.model, s.version))
    return found


def shared_models(
    prometheus: Prometheus, alerts: Sequence[Alert], cluster_label: str, group_key: str
) -> set[str]:
    """The model names of alerts carrying a namespace that the store serves from two namespaces or more
    (in the alert's cluster): the report names those `<namespace>::<model>`, a name of one namespace
    (a Kubernetes namespace of the Prometheus Operator's) stays bare. One query per name and cluster."""
    found: set[str] = set()
    asked: set[tuple[str, Scope]] = set()
    for alert in alerts:
        model = alert.labels.get(c.LABEL_MODEL, "")
        scope = scope_of(alert.labels, cluster_label)
        if not model or not alert.labels.get(c.LABEL_NAMESPACE) or (model, scope) in asked:
            continue
        asked.add((model, scope))
        try:
            if (prometheus.instant(namespaces_expr(model, scope)) or 0) > 1:
                found.add(model)
        except PromError as exc:
            _failed(group_key, exc)
    return found
