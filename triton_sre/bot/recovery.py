"""An SLO page's recovery line: after a fix, a multi-window burn alert keeps firing until its short
window is under the tier's threshold (the 6h tier's 30m window averages half an hour of the outage),
and its message kept the burn rate in the hundreds for a model healthy for half an hour. When the
shortest recorded window's burn (5m, the first tier's short window) is under the alert's own tier
threshold, the page says so and since when: the fix holds.

The threshold is the tier's burn factor from the spec the rules were generated from (the bot's
`--slo-file`, else the shipped one; generate/slo_rules.py `tiers` computes the same); "since" is the
last time within the alert's long window the 5m burn was at or over it, read by a subquery of at
most 3600 points (versions.py's precision: 1 s steps up to an hour, 6 s for 6h).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable

from triton_sre import conventions as c
from triton_sre.bot.payload import Alert
from triton_sre.bot.queries import burn_rate_expr, scope_of, slo_labels
from triton_sre.bot.versions import resolution, utc_clock
from triton_sre.namespacing import in_cluster
from triton_sre.prom import PromError, Prometheus
from triton_sre.slo import Spec, burn_factor, window_seconds

log = logging.getLogger(__name__)

CLEAN_WINDOW = c.BURN_TIERS[0][1]
"""The shortest window the SLO rules record (5m): the first to be clean after a fix."""


def tier_threshold(spec: Spec, slo_name: str, window: str) -> tuple[float, str] | None:
    """The burn rate an SLO's tier of long window `window` alerts at, and the tier's short window."""
    slo = next((s for s in spec.slos if s.name == slo_name), None)
    tier = next((t for t in c.BURN_TIERS if t[0] == window), None)
    if slo is None or tier is None:
        return None
    return burn_factor(slo, window_seconds(window), tier[2]), tier[1]


def recovery_line(
    burn_now: float, threshold: float, short: str, last_over: float | None, window: str, now: float
) -> str:
    """`5m window clean since 21:02:10 UTC (burn 0.0x, under this tier's 6x); the alert resolves when
    its 30m window is under 6x too`."""
    since = f"over the whole {window}" if last_over is None else f"since {utc_clock(last_over, now)}"
    return (
        f"{CLEAN_WINDOW} window clean {since} (burn {max(0.0, burn_now):.1f}x, under this {window} tier's "
        f"{threshold:g}x): the fix holds; the alert resolves when its {short} window is under "
        f"{threshold:g}x too"
    )


def still_burning(slo: str, window: str, model: str, burn: float, threshold: float, cluster: str = "") -> str:
    """`SLO latency of ranker (6h tier): 5m burn 50.0x, over its 6x`: an SLO page not recovering (`of
    ranker in cluster east` on a fleet)."""
    named = in_cluster(model, cluster)
    return f"SLO {slo} of {named} ({window} tier): {CLEAN_WINDOW} burn {burn:.1f}x, over its {threshold:g}x"


def recovery_facts(
    prometheus: Prometheus,
    alerts: Iterable[Alert],
    slo_alerts: Collection[str],
    spec: Spec,
    cluster_label: str,
    now: float,
) -> dict[str, str]:
    """SLO alert fingerprint -> its recovery line, for each whose 5m burn is now under its tier's
    threshold; a failed query leaves the alert out (logged)."""
    found: dict[str, str] = {}
    burning: list[str] = []
    for alert in alerts:
        labels = slo_labels(alert.labels) if alert.name in slo_alerts else None
        tier = tier_threshold(spec, labels[0], labels[1]) if labels is not None else None
        if labels is None or tier is None:
            continue
        slo, window, model = labels
        threshold, short = tier
        expr = burn_rate_expr(slo, CLEAN_WINDOW, model, scope_of(alert.labels, cluster_label))
        res = resolution(window)
        try:
            burn = prometheus.instant(expr)
            if burn is not None and burn >= threshold:
                burning.append(
                    still_burning(slo, window, model, burn, threshold, alert.labels.get(cluster_label, ""))
                )
            if burn is None or burn >= threshold:
                continue
            last = prometheus.instant(
                f"max(max_over_time(timestamp(({expr}) >= {threshold!r})[{window}:{res}s]))"
            )
        except PromError as exc:
            log.warning("alert %s: Prometheus query failed: %s", alert.fingerprint, exc)
            continue
        found[alert.fingerprint] = recovery_line(
            burn, threshold, short, None if last is None else last + res, window, now
        )
    # a group holding other SLO pages recovers only when every one of them does: name those burning
    tail = f"; this group still burns: {'; '.join(burning)}" if burning else ""
    return {fingerprint: line + tail for fingerprint, line in found.items()}
