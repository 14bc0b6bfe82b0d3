"""A prometheus_client collector over the latest derivation.

Scrapes only render what the poll loop already derived, so any number of Prometheus servers may
scrape at any rate without changing a value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from triton_sre import conventions as c
from triton_sre.exporter.derive import Derivation


@dataclass(frozen=True, slots=True)
class ExporterView:
    """What one scrape shows: Triton reachability and the latest derivation (None before any)."""

    up: bool
    derivation: Derivation | None


def reason_label(reason: str) -> str:
    """A bounded label value for a raw reason: its first line, truncated."""
    first = reason.strip().splitlines()[0] if reason.strip() else ""
    limit = c.MAX_REASON_LABEL_CHARS
    return first if len(first) <= limit else first[: limit - 1] + "…"


class DerivedCollector(Collector):
    def __init__(self, view: Callable[[], ExporterView]) -> None:
        self._view = view

    def collect(self) -> Iterator[Metric]:
        view = self._view()
        up = GaugeMetricFamily(c.M_UP, "1 if the last poll of Triton's metrics endpoint succeeded, else 0.")
        up.add_metric([], 1.0 if view.up else 0.0)
        yield up
        d = view.derivation
        if d is None:
            return
        yield from _model_metrics(d)
        yield from _cost_metrics(d)
        yield from _state_metrics(d)
        window = GaugeMetricFamily(c.M_WINDOW_SECONDS, "Seconds actually covered by the derivation window.")
        window.add_metric([], d.window_seconds)
        yield window


_MV = [c.L_MODEL, c.L_VERSION]


def _model_metrics(d: Derivation) -> Iterator[Metric]:
    ratio = GaugeMetricFamily(
        c.M_BATCHING_RATIO,
        "Inferences per model execution over the window (Δinference_count/Δexec_count).",
        labels=_MV,
    )
    fill = GaugeMetricFamily(
        c.M_BATCH_FILL_RATIO, "Batching ratio divided by the model's max_batch_size.", labels=_MV
    )
    seconds = GaugeMetricFamily(
        c.M_REQUEST_STAGE_SECONDS,
        "Average seconds per successful request spent in each stage.",
        labels=[*_MV, c.L_STAGE],
    )
    fraction = GaugeMetricFamily(
        c.M_REQUEST_STAGE_FRACTION,
        "Each stage's share of request time (sums to 1 per model version).",
        labels=[*_MV, c.L_STAGE],
    )
    batches = CounterMetricFamily(
        c.M_EXECUTIONS_BY_BATCH_SIZE,
        "Model executions by batch size, from Triton's statistics.",
        labels=[*_MV, c.L_BATCH_SIZE],
    )
    for m in d.models:
        key = [m.model, m.version]
        if m.batching_ratio is not None:
            ratio.add_metric(key, m.batching_ratio)
        if m.batch_fill_ratio is not None:
            fill.add_metric(key, m.batch_fill_ratio)
        for stage, value in (m.stage_seconds or {}).items():
            seconds.add_metric([*key, stage], value)
        for stage, value in (m.stage_fraction or {}).items():
            fraction.add_metric([*key, stage], value)
    for (model, version), by_size in sorted(d.executions_by_batch_size.items()):
        for size, count in sorted(by_size.items()):
            batches.add_metric([model, version, str(size)], count)
    yield from (ratio, fill, seconds, fraction, batches)


def _cost_metrics(d: Derivation) -> Iterator[Metric]:
    devices = GaugeMetricFamily(
        c.M_COST_DEVICES,
        "Devices the server's cost and idle share are computed over.",
        labels=[c.L_DEVICE_KIND],
    )
    devices.add_metric([d.device_kind], d.devices)
    yield devices
    if d.idle_fraction is not None:
        idle = GaugeMetricFamily(
            c.M_IDLE_COST_FRACTION, "Share of device time with no model executing over the window."
        )
        idle.add_metric([], d.idle_fraction)
        yield idle
    if d.server_cost_per_hour is None:
        return
    server = GaugeMetricFamily(
        c.M_SERVER_COST_PER_HOUR,
        "The server's price per hour from the pricing config.",
        labels=[c.L_CURRENCY],
    )
    server.add_metric([d.currency], d.server_cost_per_hour)
    per_hour = GaugeMetricFamily(
        c.M_COST_PER_HOUR,
        "Server cost per hour attributed to the model by its share of execution compute time.",
        labels=[*_MV, c.L_CURRENCY],
    )
    per_1k = GaugeMetricFamily(
        c.M_COST_PER_1K,
        "Attributed cost over the window per thousand inferences.",
        labels=[*_MV, c.L_CURRENCY],
    )
    for m in d.models:
        if m.cost_per_hour is not None:
            per_hour.add_metric([m.model, m.version, d.currency], m.cost_per_hour)
        if m.cost_per_1k is not None:
            per_1k.add_metric([m.model, m.version, d.currency], m.cost_per_1k)
    yield from (server, per_hour, per_1k)


def _state_metrics(d: Derivation) -> Iterator[Metric]:
    state = GaugeMetricFamily(
        c.M_MODEL_STATE,
        "1 for the state the repository index reports, 0 for the other known states.",
        labels=[*_MV, c.L_STATE],
    )
    unavailable = GaugeMetricFamily(
        c.M_MODEL_UNAVAILABLE,
        "1 per UNAVAILABLE model version; runbook is the diagnosed runbook id.",
        labels=[*_MV, c.L_RUNBOOK],
    )
    info = GaugeMetricFamily(
        c.M_MODEL_UNAVAILABLE_INFO,
        f"Why a model is UNAVAILABLE: first line of Triton's reason, at most {c.MAX_REASON_LABEL_CHARS} "
        f"characters (full text on {c.PATH_DEBUG_MODELS}).",
        labels=[*_MV, c.L_REASON],
    )
    latest = {(s.model, s.version): s for s in d.states}  # one row per label set, last wins
    for (model, version), s in sorted(latest.items()):
        for known in c.MODEL_STATES:
            state.add_metric([model, version, known], 1.0 if s.state == known else 0.0)
        if s.state == c.STATE_UNAVAILABLE:
            unavailable.add_metric([model, version, s.runbook or c.RUNBOOK_UNKNOWN_LOAD_FAILURE], 1.0)
            info.add_metric([model, version, reason_label(s.reason)], 1.0)
    yield from (state, unavailable, info)
