"""A prometheus_client collector over the latest derivation.

Scrapes only render what the poll loop already derived, so any number of Prometheus servers may
scrape at any rate without changing a value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
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
        yield from _config_metrics(d)
        window = GaugeMetricFamily(c.M_WINDOW_SECONDS, "Seconds actually covered by the derivation window.")
        window.add_metric([], d.window_seconds)
        yield window


_MV = [c.L_MODEL, c.L_VERSION]


def _family(
    kind: type[GaugeMetricFamily] | type[CounterMetricFamily],
    name: str,
    documentation: str,
    labels: list[str],
    rows: Iterable[tuple[list[str], float]],
) -> Metric:
    """One metric family. Families are built one at a time as the exposition writer asks for
    them, so a 1,000-model server never holds all its samples as objects at once."""
    family = kind(name, documentation, labels=labels)
    for label_values, value in rows:
        family.add_metric(label_values, value)
    return family


def _model_metrics(d: Derivation) -> Iterator[Metric]:
    yield _family(
        GaugeMetricFamily,
        c.M_BATCHING_RATIO,
        "Inferences per model execution over the window (Δinference_count/Δexec_count).",
        _MV,
        (([m.model, m.version], m.batching_ratio) for m in d.models if m.batching_ratio is not None),
    )
    yield _family(
        GaugeMetricFamily,
        c.M_BATCH_FILL_RATIO,
        "Batching ratio divided by the model's max_batch_size.",
        _MV,
        (([m.model, m.version], m.batch_fill_ratio) for m in d.models if m.batch_fill_ratio is not None),
    )
    yield _family(
        GaugeMetricFamily,
        c.M_REQUEST_STAGE_SECONDS,
        "Average seconds per successful request spent in each stage.",
        [*_MV, c.L_STAGE],
        (([m.model, m.version, stage], v) for m in d.models for stage, v in (m.stage_seconds or {}).items()),
    )
    yield _family(
        GaugeMetricFamily,
        c.M_REQUEST_STAGE_FRACTION,
        "Each stage's share of request time (sums to 1 per model version).",
        [*_MV, c.L_STAGE],
        (([m.model, m.version, stage], v) for m in d.models for stage, v in (m.stage_fraction or {}).items()),
    )
    yield _family(
        CounterMetricFamily,
        c.M_EXECUTIONS_BY_BATCH_SIZE,
        "Model executions by batch size, from Triton's statistics.",
        [*_MV, c.L_BATCH_SIZE],
        (
            ([model, version, str(size)], count)
            for (model, version), by_size in sorted(d.executions_by_batch_size.items())
            for size, count in sorted(by_size.items())
        ),
    )


def _config_metrics(d: Derivation) -> Iterator[Metric]:
    configs = sorted(d.configs.items())
    yield _family(
        GaugeMetricFamily,
        c.M_MODEL_DYNAMIC_BATCHING,
        "1 if the loaded model's config enables dynamic_batching, else 0.",
        [c.L_MODEL],
        (([model], float(cfg.dynamic_batching)) for model, cfg in configs),
    )
    yield _family(
        GaugeMetricFamily,
        c.M_MODEL_MAX_BATCH_SIZE,
        "max_batch_size from the loaded model's config (0: the model does not batch).",
        [c.L_MODEL],
        (([model], float(cfg.max_batch_size)) for model, cfg in configs),
    )


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
    yield _family(
        GaugeMetricFamily,
        c.M_SERVER_COST_PER_HOUR,
        "The server's price per hour from the pricing config.",
        [c.L_CURRENCY],
        [([d.currency], d.server_cost_per_hour)],
    )
    yield _family(
        GaugeMetricFamily,
        c.M_COST_PER_HOUR,
        "Server cost per hour attributed to the model by its share of execution compute time.",
        [*_MV, c.L_CURRENCY],
        (
            ([m.model, m.version, d.currency], m.cost_per_hour)
            for m in d.models
            if m.cost_per_hour is not None
        ),
    )
    yield _family(
        GaugeMetricFamily,
        c.M_COST_PER_1K,
        "Attributed cost over the window per thousand inferences.",
        [*_MV, c.L_CURRENCY],
        (([m.model, m.version, d.currency], m.cost_per_1k) for m in d.models if m.cost_per_1k is not None),
    )


def _state_metrics(d: Derivation) -> Iterator[Metric]:
    latest = sorted({(s.model, s.version): s for s in d.states}.items())  # one row per label set
    unavailable = [(key, s) for key, s in latest if s.state == c.STATE_UNAVAILABLE]
    yield _family(
        GaugeMetricFamily,
        c.M_MODEL_STATE,
        "1 for the state the repository index reports, 0 for the other known states.",
        [*_MV, c.L_STATE],
        (
            ([model, version, known], float(s.state == known))
            for (model, version), s in latest
            for known in c.MODEL_STATES
        ),
    )
    yield _family(
        GaugeMetricFamily,
        c.M_MODEL_UNAVAILABLE,
        "1 per UNAVAILABLE model version; runbook is the diagnosed runbook id.",
        [*_MV, c.L_RUNBOOK],
        (
            ([model, version, s.runbook or c.RUNBOOK_UNKNOWN_LOAD_FAILURE], 1.0)
            for (model, version), s in unavailable
        ),
    )
    yield _family(
        GaugeMetricFamily,
        c.M_MODEL_UNAVAILABLE_INFO,
        f"Why a model is UNAVAILABLE: first line of Triton's reason, at most {c.MAX_REASON_LABEL_CHARS} "
        f"characters (full text on {c.PATH_DEBUG_MODELS}).",
        [*_MV, c.L_REASON],
        (([model, version, reason_label(s.reason)], 1.0) for (model, version), s in unavailable),
    )
