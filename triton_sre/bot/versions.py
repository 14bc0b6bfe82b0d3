"""An SLO page's versions: which version of the model fails and how often over the alert's long window,
the reasons Triton counts its failures under (`nv_inference_request_failure{reason}`, 24.07 and
later), and a version that became READY within the window (the exporter's state series), named with
how long before its first failure. Per cluster on a global store (`queries.scope_matchers`), and as
of the alert's startsAt, whenever the message is posted."""

from __future__ import annotations

import datetime as dt
import logging
import math
import time
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from triton_sre import conventions as c
from triton_sre.bot.payload import Alert
from triton_sre.bot.queries import Scope, scope_matchers, scope_of, slo_labels
from triton_sre.durations import human_span, parse_duration
from triton_sre.prom import PromError, Prometheus
from triton_sre.promql import q
from triton_sre.rfc3339 import parse_rfc3339

log = logging.getLogger(__name__)

STAMP_POINTS = 3600
"""Points of the first-READY and first-failure subqueries over the window: 1 s steps up to an hour."""


@dataclass
class VersionFigures:
    succeeded: float = 0.0
    failed: dict[str, float] = field(default_factory=dict)  # reason ("" without the label) -> count
    ready_since: float | None = None  # first READY sample in the window, Unix time
    first_failure: float | None = None  # first sample of a non-zero failure counter in the window

    @property
    def failures(self) -> float:
        return sum(self.failed.values())


def resolution(window: str) -> int:
    return max(1, math.ceil(parse_duration(window, c.L_WINDOW) / STAMP_POINTS))


def _sel(model: str, scope: Scope, *more: str) -> str:
    return "{" + ",".join([f"{c.LABEL_MODEL}={q(model)}", *more]) + scope_matchers(scope) + "}"


def version_exprs(model: str, window: str, scope: Scope = ()) -> dict[str, str]:
    """PromQL, each by version: requests succeeded and failed (by reason) over `window`, the first
    READY sample and the first sample of a non-zero failure counter in it, and (one value) the oldest
    state sample of the model in it (a version READY later than that changed within the window)."""
    res = resolution(window)
    sel = _sel(model, scope)
    ready = f"{c.M_MODEL_STATE}{_sel(model, scope, f'{c.L_STATE}={q(c.STATE_READY)}')} == 1"
    by = f"by ({c.LABEL_VERSION})"
    failed = f"{c.NV_REQUEST_FAILURE}{sel}"
    return {
        "succeeded": f"sum {by} (increase({c.NV_REQUEST_SUCCESS}{sel}[{window}]))",
        "failed": f"sum by ({c.LABEL_VERSION}, {c.LABEL_REASON}) (increase({failed}[{window}]))",
        "ready_since": f"min {by} (min_over_time(timestamp({ready})[{window}:{res}s]))",
        "first_failure": f"min {by} (min_over_time(timestamp({failed} > 0)[{window}:{res}s]))",
        "states_since": f"min(min_over_time(timestamp({c.M_MODEL_STATE}{sel})[{window}:{res}s]))",
    }


def _count(n: float) -> str:
    return f"{n:,.0f}"


def version_lines(
    model: str, window: str, figures: Mapping[str, VersionFigures], states_since: float | None, res: int
) -> list[str]:
    """The page's lines: the versions that failed (worst first, with the reason split when Triton
    labels it), the healthy ones, then each version that became READY within the window."""
    lines: list[str] = []
    failing = sorted(
        ((v, f) for v, f in figures.items() if f.failures > 0),
        key=lambda item: (-item[1].failures / (item[1].failures + item[1].succeeded), item[0]),
    )
    healthy = sorted(v for v, f in figures.items() if f.failures == 0 and f.succeeded > 0)
    if failing:
        parts = []
        for version, f in failing:
            total = f.failures + f.succeeded
            part = f"v{version} {f.failures / total:.1%} failed ({_count(f.failures)} of {_count(total)})"
            reasons = sorted(((r, n) for r, n in f.failed.items() if r and n > 0), key=lambda rn: -rn[1])
            if reasons:
                part += ", " + ", ".join(f"{r} {n / f.failures:.0%}" for r, n in reasons)
            parts.append(part)
        if healthy:
            parts.append("healthy: " + ", ".join(f"v{v}" for v in healthy))
        lines.append(f"{model} over {window}: " + " · ".join(parts))
    if states_since is None:
        return lines
    for version, f in sorted(figures.items()):
        if f.ready_since is None or f.ready_since <= states_since + 2 * res:
            continue  # READY since the window (or the exporter's data) began
        if f.first_failure is not None and f.first_failure >= f.ready_since:
            when = f"{human_span(f.first_failure - f.ready_since)} before its first failure"
        else:
            when = "within the window"
        lines.append(f"{model} v{version} became READY {when}")
    return lines


def _figures(prometheus: Prometheus, exprs: Mapping[str, str], at: float | None) -> dict[str, VersionFigures]:
    figures: dict[str, VersionFigures] = {}
    for labels, value in prometheus.vector(exprs["succeeded"], at):
        figures.setdefault(labels.get(c.LABEL_VERSION, ""), VersionFigures()).succeeded = value
    for labels, value in prometheus.vector(exprs["failed"], at):
        f = figures.setdefault(labels.get(c.LABEL_VERSION, ""), VersionFigures())
        f.failed[labels.get(c.LABEL_REASON, "")] = value
    for key in ("ready_since", "first_failure"):
        for labels, value in prometheus.vector(exprs[key], at):
            setattr(figures.setdefault(labels.get(c.LABEL_VERSION, ""), VersionFigures()), key, value)
    return figures


def fired_at(alert: Alert, now: float) -> tuple[float | None, str]:
    """When the alert fired (its startsAt, at most `now`) as Unix time and as the message says it
    (`20:55:48 UTC, when it fired`, with the date on another day than `now`); (None, "") when the
    payload carries no time."""
    try:
        when = min(parse_rfc3339(alert.starts_at).timestamp(), now)
    except ValueError:
        return None, ""
    return when, f"{utc_clock(when, now)}, when it fired"


def clock_of(prometheus: Prometheus, alerts: Iterable[Alert], now: float) -> float:
    """`now` (this machine's clock), or Prometheus' own when an alert started after it: this clock is
    behind the one that stamped startsAt, and the figures "when it fired" clamped to it were read hours
    before the alert (no version at all, or the wrong one). Prometheus not answering: `now`."""
    for alert in alerts:
        try:
            started = parse_rfc3339(alert.starts_at).timestamp()
        except ValueError:
            continue
        if started > now:
            try:
                return max(now, prometheus.now())
            except PromError as exc:
                log.warning("Prometheus' clock not read: %s", exc)
                return now
    return now


def utc_clock(when: float, now: float) -> str:
    """`20:55:48 UTC`, with the date when `when` is on another (UTC) day than `now`."""
    stamp = dt.datetime.fromtimestamp(when, dt.timezone.utc)
    today = dt.datetime.fromtimestamp(now, dt.timezone.utc).date()
    return stamp.strftime("%H:%M:%S UTC" if stamp.date() == today else "%Y-%m-%d %H:%M:%S UTC")


def version_facts(
    prometheus: Prometheus | None,
    alerts: Iterable[Alert],
    slo_alerts: Collection[str],
    cluster_label: str,
    now: float | None = None,
) -> dict[str, list[str]]:
    """SLO alert fingerprint -> its version lines (`version_lines`) as they were when the alert fired
    (Prometheus' instant queries at its startsAt: a delivery delayed by retries or group_wait showed
    the state after the fix); a query that fails leaves the alert out (logged)."""
    now = time.time() if now is None else now
    found: dict[str, list[str]] = {}
    for alert in alerts if prometheus is not None else ():
        labels = slo_labels(alert.labels) if alert.name in slo_alerts else None
        if labels is None or prometheus is None:
            continue
        _, window, model = labels
        exprs = version_exprs(model, window, scope_of(alert.labels, cluster_label))
        at, _ = fired_at(alert, now)
        try:
            figures = _figures(prometheus, exprs, at)
            since = prometheus.instant(exprs["states_since"], at)
        except PromError as exc:
            log.warning("alert %s: Prometheus query failed: %s", alert.fingerprint, exc)
            continue
        lines = version_lines(model, window, figures, since, resolution(window))
        if lines:
            found[alert.fingerprint] = lines
    return found
