"""Pure: an Alertmanager notification (webhook payload version 4) -> the model of one Slack message.

The payload is read by `payload.py` (`parse_group`, `digest`, `describe_change`). `enrich` joins the
group with facts gathered at the edges (`Facts`: the diagnosis report of the Triton the alert is
about, current burn rates and budgets from Prometheus) into a `MessageModel`, the context of the
message templates. `describe_change` says in one line what changed between two notifications.
No I/O here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Final
from urllib.parse import urlencode

from triton_sre import conventions as c
from triton_sre.bot.llm import LLM_ALERTS, saturation_threshold
from triton_sre.bot.llm import verdict as llm_verdict
from triton_sre.bot.payload import LEFT_OUT_WHY, Alert, AlertGroup, named
from triton_sre.bot.scaling import SCALING_ALERTS, ScalingAsk, scaling_line
from triton_sre.bot.urls import (
    LABEL_RUNBOOK,
    is_http,
    known_runbook_url,
    link_url,
    resolve_runbook_url,
    runbook_id_of,
    silence_url,
)
from triton_sre.diagnosis.engine import Finding, Report
from triton_sre.durations import human_span
from triton_sre.namespacing import model_name
from triton_sre.units import human_bytes

SERVER_ALERTS: Final = frozenset({c.ALERT_SERVER_DOWN, c.ALERT_SERVER_RESTARTED, c.ALERT_CONTAINER_RESTARTED})
"""Alerts about a Triton server as a whole: its log says why it is gone or came back (a crash, a kill)."""
MODEL_ALERTS: Final = frozenset({c.ALERT_MODEL_UNAVAILABLE, c.ALERT_SLO_MODEL_NOT_SERVED})
"""Alerts about a model Triton does not serve (UNAVAILABLE, or never loaded: a config it refused): live
diagnosis, else its log, says why."""

MAX_ALERTS_SHOWN = 8
"""Alerts detailed in one message; the rest are counted (Slack allows 50 blocks)."""
MAX_FINDINGS_PER_ALERT = 2
MAX_EVIDENCE_LINES = 3
SLO_ALERTS = (c.ALERT_SLO_ERROR_BUDGET_BURN, c.ALERT_SLO_LATENCY_BUDGET_BURN)
_SEVERITY_ORDER = {c.SEVERITY_PAGE: 0, c.SEVERITY_TICKET: 1}
_LEGACY_BURN_IN_TEXT = re.compile(r"\bis (?P<value>[0-9]+(?:\.[0-9]+)?)x\b")
LABEL_ALERTNAME = c.LABEL_ALERTNAME


# ----------------------------------------------------------------------------- facts and model
@dataclass(frozen=True)
class ModelSize:
    """One resident model version and the GPU memory it holds (triton_sre_model_memory_bytes)."""

    model: str
    version: str
    bytes: float

    @property
    def size(self) -> str:
        return human_bytes(self.bytes)


@dataclass(frozen=True)
class Facts:
    """What the edges found out about a group; everything optional."""

    report: Report | None = None
    diagnosis_source: str = ""
    """Where the report came from, e.g. ``live http://triton:8000`` or ``log /var/log/triton.log``."""
    diagnosis_error: str = ""
    burn_rates: Mapping[str, float] = field(default_factory=dict)
    """Alert fingerprint -> current burn rate (from Prometheus)."""
    window_data: Mapping[str, float] = field(default_factory=dict)
    """SLO alert fingerprint -> seconds of data Prometheus holds in the alert's window, when fewer than
    its length (a server up for minutes: the 1h and 6h burn rates are the same figure)."""
    budgets_remaining: Mapping[str, float] = field(default_factory=dict)
    """Alert fingerprint -> share of the error budget left (1 = all, negative = overspent)."""
    titles: Mapping[str, str] = field(default_factory=dict)
    """Runbook id -> title (the catalog)."""
    remediations: Mapping[str, str] = field(default_factory=dict)
    """Runbook id -> its one-line fix (the catalog: each page's front matter)."""
    llm: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """Alert fingerprint -> LLM figures (bot/llm.py: TTFT p99, KV cache use, waiting requests)."""
    largest_models: Mapping[str, Sequence[ModelSize]] = field(default_factory=dict)
    """Alert fingerprint -> the largest models on the alert's GPU (TritonGPUMemoryHeadroomLow)."""
    latency_now: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """Latency alert fingerprint -> quantile (e.g. ``0.99``) -> current seconds (from Prometheus)."""
    latency_idle: frozenset[str] = frozenset()
    shared_models: frozenset[str] = frozenset()
    """Model names served from two namespaces or more (Triton's model namespacing): among the group's
    alerts, and in the store (with Prometheus). Each is named `<namespace>::<model>` (namespacing.py)."""
    """Latency alerts without a current figure whose model had no request in the quantiles' window."""
    replicas: Mapping[str, Sequence[ScalingAsk]] = field(default_factory=dict)
    """Queue/latency alert fingerprint -> the replicas the scaling signal asks for (bot/scaling.py)."""
    rollout: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """TritonRolloutRegression fingerprint -> the verdict now and each figure, baseline -> candidate."""
    versions: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """SLO alert fingerprint -> its versions' failures and recent loads (bot/versions.py)."""
    versions_at: Mapping[str, str] = field(default_factory=dict)  # fingerprint -> the time they are for
    recovering: Mapping[str, str] = field(default_factory=dict)  # SLO alert -> 5m window clean (recovery.py)
    partial: Sequence[str] = ()
    """Prometheus' warnings on the answers these figures come from (a store not answering, a limit hit)."""


@dataclass(frozen=True)
class Links:
    runbook_base_url: str | None = None
    grafana_url: str | None = None
    alertmanager_url: str | None = None
    dashboard_uid_model: str = ""
    dashboard_uid_slo: str = ""
    dashboard_uid_overview: str = ""
    dashboard_uid_llm: str = ""  # "Triton / LLM", for the LLM alerts


@dataclass(frozen=True)
class FindingView:
    runbook: str
    title: str
    severity: str
    remediation: str
    evidence: list[str]
    runbook_url: str
    source: str


@dataclass(frozen=True)
class AlertView:
    name: str
    status: str
    severity: str
    model: str
    version: str
    instance: str
    summary: str
    description: str
    starts_at: str
    ends_at: str
    runbook: str
    runbook_url: str
    slo: str
    window: str
    burn_rate: float | None  # now (from Prometheus), else when the alert fired (`burn_rate_now` says)
    budget_remaining: float | None
    findings: list[FindingView]
    labels: dict[str, str]
    generator_url: str
    llm: dict[str, float] | None = None  # LLM alerts: TTFT p99, KV cache use, waiting requests
    llm_verdict: str = ""  # memory-bound / compute-bound, with the numbers
    largest_models: list[dict[str, str]] = field(default_factory=list)  # model, version, size
    latency: LatencyView | None = None
    remediation: str = ""  # the one-line fix of the alert's runbook (front matter), shown without findings
    cluster: str = ""  # the value of the alert's cluster label (slos.yaml cluster_label, default `cluster`)
    rollout: list[str] = field(default_factory=list)  # TritonRolloutRegression: verdict, then figures
    scaling: str = ""  # queue/latency alerts: the replicas the scaling signal asks for (issue 21)
    burn_rate_now: bool = False  # `burn_rate` is Prometheus' figure now, not the alert's
    burn_rate_fired: float | None = None  # the alert's own figure (when it fired), shown beside the live one
    window_data: str = ""  # "4 min" when the window holds less data than its length
    versions: list[str] = field(default_factory=list)  # SLO alerts: failing versions, recent loads
    versions_at: str = ""  # the time the versions are for ("20:55:48 UTC, when it fired")
    recovering: str = ""  # SLO alerts: the 5m window is clean since when (the fix holds)
    inhibited_by: str = ""  # firing, inhibited by these alerts (Alertmanager's webhook leaves it out)


@dataclass(frozen=True)
class LatencyView:
    """A latency SLO alert: the current tail against the threshold."""

    quantile: str  # the quantile the SLO judges, as a name (p99)
    threshold_s: float
    now_s: dict[str, float]  # quantile name -> current seconds (p99 always, and the SLO's)
    line: str  # e.g. "p99 now 612 ms (SLO on p99) vs threshold 500 ms"


@dataclass(frozen=True)
class Button:
    text: str
    url: str
    style: str = ""


@dataclass(frozen=True)
class MessageModel:
    group_key: str
    status: str
    severity: str
    title: str
    alertname: str
    model: str
    firing: int
    resolved: int
    alerts: list[AlertView]
    hidden_alerts: int
    buttons: list[Button]
    common_labels: dict[str, str]
    external_url: str
    diagnosis_error: str
    partial: list[str] = field(default_factory=list)  # Prometheus' warnings: the figures may be partial
    left_out: list[str] = field(default_factory=list)  # shown firing, not in this notification: named
    left_out_why: str = ""  # why the bot cannot say what became of them

    def context(self) -> dict[str, Any]:
        """The template context: plain dicts, lists and scalars only."""
        return asdict(self)


# What no URL holds (RFC 3986): blanks and control characters, and the marks that end or split a
def _findings_for(alert: Alert, facts: Facts, links: Links) -> list[FindingView]:
    model = alert.labels.get(c.LABEL_MODEL, "")
    version = alert.labels.get(c.LABEL_VERSION, "")
    chosen: list[Finding] = []
    if facts.report is not None and model:
        mine = [f for f in facts.report.findings if f.model == model]
        exact = [f for f in mine if not version or not f.version or f.version == version]
        chosen = (exact or mine)[:MAX_FINDINGS_PER_ALERT]
    elif facts.report is not None and alert.name in SERVER_ALERTS:
        # The server is gone: what its log says of the server itself (a crash, a port, an option), else the
        # models that stopped it (--exit-on-error: one failed load ends the server).
        critical = [f for f in facts.report.findings if f.severity == c.IMPACT_CRITICAL]
        chosen = ([f for f in critical if f.model is None] or critical)[:MAX_FINDINGS_PER_ALERT]
    views = [
        FindingView(
            runbook=f.runbook,
            title=f.title,
            severity=f.severity,
            remediation=f.remediation,
            evidence=[e.text for e in f.evidence[:MAX_EVIDENCE_LINES]],
            runbook_url=known_runbook_url(f.runbook, links.runbook_base_url),
            source=facts.diagnosis_source,
        )
        for f in chosen
    ]
    if not views and alert.labels.get(LABEL_RUNBOOK):
        # No live answer: the exporter's own diagnosis, carried in the alert's runbook label.
        runbook = alert.labels[LABEL_RUNBOOK]
        views.append(
            FindingView(
                runbook=runbook,
                title=facts.titles.get(runbook, runbook),
                severity=c.IMPACT_CRITICAL,
                remediation=facts.remediations.get(runbook, ""),
                evidence=[],
                runbook_url=known_runbook_url(runbook, links.runbook_base_url),
                source="exporter",
            )
        )
    return views


def burn_from_annotations(alert: Alert) -> float | None:
    """The burn rate an SLO alert carries: its `burn_rate` annotation; for an alert of rules
    generated before that annotation existed, the figure in its description.

    The fallback is deliberate: during an upgrade Prometheus keeps evaluating the old rule files
    until they are replaced, and Alertmanager re-sends their firing alerts until they resolve.
    An alert that has the annotation is never read from its text, even when the value is bad."""
    if c.ANNOTATION_BURN_RATE in alert.annotations:
        try:
            value = float(alert.annotations[c.ANNOTATION_BURN_RATE])
        except ValueError:
            return None
        return value if math.isfinite(value) else None
    return legacy_burn_from_description(alert)


def legacy_burn_from_description(alert: Alert) -> float | None:
    """Rules generated before the `burn_rate` annotation: "... is 15.2x (threshold ..." in the description."""
    found = _LEGACY_BURN_IN_TEXT.search(alert.annotations.get(c.ANNOTATION_DESCRIPTION, ""))
    return float(found.group("value")) if found else None


def latency_quantiles_shown(alert: Alert) -> list[str]:
    """The quantiles a latency alert shows: p99, and the one its SLO judges when it is another."""
    if alert.name != c.ALERT_SLO_LATENCY_BUDGET_BURN:
        return []
    judged = alert.annotations.get(c.ANNOTATION_SLO_QUANTILE, c.DEFAULT_SLO_QUANTILE)
    return list(dict.fromkeys((c.DEFAULT_SLO_QUANTILE, judged)))


def _latency_view(alert: Alert, facts: Facts) -> LatencyView | None:
    try:
        threshold = float(alert.annotations.get(c.ANNOTATION_THRESHOLD_SECONDS, ""))
    except ValueError:
        return None
    judged = alert.annotations.get(c.ANNOTATION_SLO_QUANTILE, c.DEFAULT_SLO_QUANTILE)
    now = facts.latency_now.get(alert.fingerprint, {})
    shown = {c.quantile_name(q): now[q] for q in latency_quantiles_shown(alert) if q in now}
    idle = alert.fingerprint in facts.latency_idle
    none = f"no request in the last {c.SUMMARY_OBSERVED_WINDOW} (idle)" if idle else "current latency n/a"
    parts = [f"{name} now {_ms(value)}" for name, value in shown.items()] or [none]
    line = f"{', '.join(parts)} (SLO on {c.quantile_name(judged)}) vs threshold {_ms(threshold)}"
    return LatencyView(c.quantile_name(judged), threshold, shown, line)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds >= 0.01 else f"{seconds * 1000:.2f} ms"


def _view(alert: Alert, facts: Facts, links: Links, cluster_label: str, shared: frozenset[str]) -> AlertView:
    # A model that is unavailable, or a server that is down: the diagnosis says why (live, or from the log).
    diagnosed = alert.name in MODEL_ALERTS or alert.name in SERVER_ALERTS
    findings = _findings_for(alert, facts, links) if diagnosed else []
    runbook = findings[0].runbook if findings and findings[0].source != "exporter" else runbook_id_of(alert)
    is_slo = alert.name in SLO_ALERTS or bool(alert.labels.get(c.L_SLO) and alert.labels.get(c.L_WINDOW))
    is_llm = alert.name in LLM_ALERTS
    fired = burn_from_annotations(alert) if is_slo else None
    burn = facts.burn_rates.get(alert.fingerprint)
    now = burn is not None
    if burn is None:
        burn = fired
    data_s = facts.window_data.get(alert.fingerprint)
    return AlertView(
        name=alert.name,
        status=alert.status,
        severity=alert.labels.get(c.L_SEVERITY, ""),
        model=model_name(alert.labels, shared),
        version=alert.labels.get(c.LABEL_VERSION, ""),
        instance=alert.labels.get(c.LABEL_INSTANCE, ""),
        summary=alert.annotations.get(c.ANNOTATION_SUMMARY, ""),
        description=alert.annotations.get(c.ANNOTATION_DESCRIPTION, ""),
        starts_at=alert.starts_at,
        ends_at=alert.ends_at if alert.status == c.AM_STATUS_RESOLVED else "",
        runbook=runbook,
        runbook_url=resolve_runbook_url(alert, runbook, links.runbook_base_url),
        slo=alert.labels.get(c.L_SLO, ""),
        window=alert.labels.get(c.L_WINDOW, ""),
        burn_rate=burn if is_slo else None,
        burn_rate_now=now and is_slo,
        burn_rate_fired=fired if now else None,
        window_data=human_span(data_s) if data_s is not None and is_slo else "",
        budget_remaining=facts.budgets_remaining.get(alert.fingerprint) if is_slo else None,
        findings=findings,
        labels=dict(alert.labels),
        generator_url=alert.generator_url,
        llm=dict(facts.llm.get(alert.fingerprint, {})) if is_llm else None,
        llm_verdict=(
            llm_verdict(
                facts.llm.get(alert.fingerprint, {}),
                saturation_threshold(alert.annotations),
                alert.labels.get(c.L_BOUND, ""),
            )
            if is_llm
            else ""
        ),
        largest_models=[
            {"model": m.model, "version": m.version, "size": m.size}
            for m in facts.largest_models.get(alert.fingerprint, ())
        ],
        latency=_latency_view(alert, facts) if alert.name == c.ALERT_SLO_LATENCY_BUDGET_BURN else None,
        remediation=facts.remediations.get(runbook, "") if runbook else "",
        cluster=alert.labels.get(cluster_label, ""),
        rollout=list(facts.rollout.get(alert.fingerprint, ())),
        versions=list(facts.versions.get(alert.fingerprint, ())) if is_slo else [],
        versions_at=facts.versions_at.get(alert.fingerprint, ""),
        recovering=facts.recovering.get(alert.fingerprint, "") if is_slo else "",
        inhibited_by=alert.inhibited_by if alert.status == c.AM_STATUS_FIRING else "",
        scaling=(
            scaling_line(facts.replicas.get(alert.fingerprint, ())) if alert.name in SCALING_ALERTS else ""
        ),
    )


def dashboard_url(group: AlertGroup, links: Links) -> str:
    if not is_http(links.grafana_url):
        return ""
    base = str(links.grafana_url).rstrip("/")
    name = group.common_labels.get(LABEL_ALERTNAME, "")
    model = group.common_labels.get(c.LABEL_MODEL, "")
    uid = (
        links.dashboard_uid_slo
        if name in SLO_ALERTS
        else (links.dashboard_uid_model if model else links.dashboard_uid_overview)
    )
    if name in LLM_ALERTS and links.dashboard_uid_llm:
        uid = links.dashboard_uid_llm
    if not uid:
        return ""
    query = f"?{urlencode({'var-model': model})}" if model else ""
    return f"{base}/d/{uid}{query}"


def _worst_severity(alerts: Sequence[Alert]) -> str:
    severities = [a.labels.get(c.L_SEVERITY, "") for a in alerts if a.labels.get(c.L_SEVERITY)]
    if not severities:
        return ""
    return min(severities, key=lambda s: (_SEVERITY_ORDER.get(s, 9), s))


def shown_alerts(group: AlertGroup) -> list[Alert]:
    """The alerts a group's message shows, in order: firing first, resolved after (what still hurts on
    top), at most MAX_ALERTS_SHOWN. Only these are enriched: a fleet's group of hundreds of alerts
    asked Prometheus for every one of them, and the message shows eight."""
    firing = [a for a in group.alerts if a.status == c.AM_STATUS_FIRING]
    return (firing + [a for a in group.alerts if a.status != c.AM_STATUS_FIRING])[:MAX_ALERTS_SHOWN]


def enrich(
    group: AlertGroup, facts: Facts, links: Links, cluster_label: str = c.LABEL_CLUSTER
) -> MessageModel:
    """`cluster_label`: the label naming an alert's cluster, the spec's `cluster_label` (issue 24)."""
    firing_alerts = [a for a in group.alerts if a.status == c.AM_STATUS_FIRING]
    views = [_view(a, facts, links, cluster_label, group.shared_models) for a in shown_alerts(group)]
    alertnames = sorted({a.name for a in group.alerts if a.name})
    alertname = group.common_labels.get(LABEL_ALERTNAME) or (alertnames[0] if len(alertnames) == 1 else "")
    model = model_name(group.common_labels, group.shared_models)
    if not alertname:
        alertname = f"{len(alertnames)} alerts" if alertnames else "Alert"
    title = f"{alertname}: {model}" if model else alertname
    if not model and len({v.model for v in views if v.model}) == 1:
        title = f"{alertname}: {views[0].model}"
    clusters = {v.cluster for v in views if v.cluster}
    if len(clusters) == 1:  # a multi-cluster fleet (issue 24): say which cluster burns
        title = f"{title} in cluster {clusters.pop()}"
    buttons = []
    runbook_views = [v for v in views if is_http(v.runbook_url)]
    if runbook_views:
        buttons.append(Button("Runbook", runbook_views[0].runbook_url, "primary"))
    dash = dashboard_url(group, links)
    if dash:
        buttons.append(Button("Grafana dashboard", dash))
    silence = silence_url(group, links.alertmanager_url)
    if silence and group.status == c.AM_STATUS_FIRING:
        buttons.append(Button("Silence", silence, "danger"))
    source = next((v.generator_url for v in views if is_http(v.generator_url)), "")
    if source:
        buttons.append(Button("Source", source))
    return MessageModel(
        group_key=group.group_key,
        status=group.status,
        severity=_worst_severity(firing_alerts or list(group.alerts)),
        title=title,
        alertname=alertname,
        model=model,
        firing=len(firing_alerts),
        resolved=len(group.alerts) - len(firing_alerts),
        alerts=views,
        hidden_alerts=len(group.alerts) - len(views) + group.truncated_alerts,
        buttons=buttons,
        common_labels=dict(group.common_labels),
        external_url=link_url(group.external_url),
        diagnosis_error=facts.diagnosis_error,
        partial=list(facts.partial),
        left_out=[named(s) for s in group.left_out],
        left_out_why=LEFT_OUT_WHY if group.left_out else "",
    )
