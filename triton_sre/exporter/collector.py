"""Renders the latest derivation as Prometheus text (format 0.0.4).

Scrapes only render what the poll loop already derived, so any number of Prometheus servers may
scrape at any rate without changing a value. The derived families are written straight to text
rather than through prometheus_client's Metric objects: a 1,000-model server has ~46k derived
samples, and building an object (with a label dict) per sample costs more time and memory than
the whole poll. The exporter's self-metrics still go through prometheus_client.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from triton_sre import conventions as c
from triton_sre.diagnosis.reasons import failed_to_load
from triton_sre.exporter.capacity_families import capacity_families
from triton_sre.exporter.derive import Derivation, ModelDerivation, ModelState
from triton_sre.exporter.family import COUNTER, GAUGE, Family
from triton_sre.exporter.llm import llm_families


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


def families(view: ExporterView) -> Iterator[Family]:
    """Every derived family, in a fixed order."""
    yield Family(
        GAUGE,
        c.M_UP,
        "1 if the last poll of Triton's metrics endpoint succeeded, else 0.",
        (),
        [((), 1.0 if view.up else 0.0)],
    )
    d = view.derivation
    if d is None:
        return
    yield from _model_metrics(d)
    yield from _cost_metrics(d)
    yield from _state_metrics(d)
    yield from _config_metrics(d)
    yield from (Family(*f) for f in llm_families(d.llm, d.llm_problems, d.currency))
    yield from capacity_families(d)
    yield Family(
        GAUGE,
        c.M_WINDOW_SECONDS,
        "Seconds actually covered by the derivation window.",
        (),
        [((), d.window_seconds)],
    )


def render(view: ExporterView) -> str:
    """The derived families as exposition text."""
    return "".join(render_chunks(view))


def render_chunks(view: ExporterView) -> Iterator[str]:
    """`render` one family at a time, so a caller that encodes as it goes never holds the whole
    text as line strings, joined text and bytes at once (~4.5 MB each at 1,000 models)."""
    for family in families(view):
        out: list[str] = []
        out.append(f"# HELP {family.name} {_escape_help(family.documentation)}\n")
        out.append(f"# TYPE {family.name} {family.kind}\n")
        names = family.labels
        if names:
            # one format per family, `name{a="{}",b="{}"} {}`: a row is one `format` call
            pairs = ",".join(f'{n}="{{}}"' for n in names)
            literal = family.name.replace("{", "{{").replace("}", "}}")
            line = f"{literal}{{{{{pairs}}}}} {{}}\n".format
            width = len(names)
            for values, value in family.rows:
                if len(values) != width:
                    raise ValueError(f"{family.name}: {len(values)} label values for {width} labels")
                out.append(line(*map(_escape, values), _number(value)))
        else:
            for _, value in family.rows:
                out.append(f"{family.name} {_number(value)}\n")
        yield "".join(out)


def _escape(value: str) -> str:
    if "\\" in value or '"' in value or "\n" in value:
        return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return value


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _number(value: float) -> str:
    text = repr(float(value))
    if text[-1] in "fn":  # only `inf`, `-inf` and `nan` end so
        return "NaN" if text == "nan" else "+Inf" if text == "inf" else "-Inf"
    return text


_MV = (c.LABEL_MODEL, c.LABEL_VERSION)
_MVN = (*_MV, c.LABEL_NAMESPACE)


def _labelled(d: Derivation) -> tuple[tuple[str, ...], Callable[[ModelDerivation], list[str]]]:
    """The per-model label names and values: model and version, and Triton's `namespace` too when
    a model of the derivation has one (model namespacing on), so without it nothing changes. A model
    without one then has namespace="" beside them, which Prometheus reads as no label."""
    if any(m.namespace for m in d.models):
        return _MVN, lambda m: [m.model, m.version, m.namespace]
    return _MV, lambda m: [m.model, m.version]


def _model_metrics(d: Derivation) -> Iterator[Family]:
    names, mv = _labelled(d)
    yield Family(
        GAUGE,
        c.M_BATCHING_RATIO,
        "Inferences per model execution over the window (Δinference_count/Δexec_count).",
        names,
        ((mv(m), m.batching_ratio) for m in d.models if m.batching_ratio is not None),
    )
    yield Family(
        GAUGE,
        c.M_BATCH_FILL_RATIO,
        "Batching ratio divided by the model's max_batch_size.",
        names,
        ((mv(m), m.batch_fill_ratio) for m in d.models if m.batch_fill_ratio is not None),
    )
    yield Family(
        GAUGE,
        c.M_REQUEST_STAGE_SECONDS,
        "Average seconds per successful request spent in each stage.",
        [*names, c.L_STAGE],
        (([*mv(m), stage], v) for m in d.models for stage, v in (m.stage_seconds or {}).items()),
    )
    yield Family(
        GAUGE,
        c.M_REQUEST_STAGE_FRACTION,
        "Each stage's share of request time (sums to 1 per model version).",
        [*names, c.L_STAGE],
        (([*mv(m), stage], v) for m in d.models for stage, v in (m.stage_fraction or {}).items()),
    )
    yield Family(
        GAUGE,
        c.M_ENSEMBLE_STEP_SECONDS,
        "An ensemble's request time by step and stage: the step model's own average seconds per request "
        "in the stage over the window, times the times the ensemble's steps name it (Triton counts its "
        "steps' queue under none of the ensemble's own stages).",
        [*names, c.L_STEP, c.L_STAGE],
        (
            ([*mv(m), step, stage], v)
            for m in d.models
            for step, stages in sorted((m.step_seconds or {}).items())
            for stage, v in stages.items()
        ),
    )
    yield Family(
        GAUGE,
        c.M_DERIVATION_SOURCE,
        "1 per model version whose batching ratio or stage split came from /v2/models/stats, the window "
        "holding no /metrics counters for it (none: from Triton's /metrics, the usual source).",
        [*names, c.L_SOURCE],
        # Only the fallback's versions: one series per version on the usual path would add 4 % to the
        # exporter's series (2,873 at 1,000 models x 3 versions) to say what its absence says.
        (
            ([*mv(m), m.source], 1.0)
            for m in d.models
            if m.source != c.SOURCE_METRICS and (m.batching_ratio is not None or m.stage_seconds is not None)
        ),
    )
    yield Family(
        COUNTER,
        c.M_EXECUTIONS_BY_BATCH_SIZE,
        "Model executions by batch size, from Triton's statistics.",
        [*_MV, c.L_BATCH_SIZE],
        (
            ([model, version, str(size)], count)
            for (model, version), by_size in sorted(d.executions_by_batch_size.items())
            for size, count in sorted(by_size.items())
        ),
    )


def _config_metrics(d: Derivation) -> Iterator[Family]:
    configs = sorted(d.configs.items())
    yield Family(
        GAUGE,
        c.M_MODEL_DYNAMIC_BATCHING,
        "1 if the loaded model's config enables dynamic_batching, else 0.",
        [c.LABEL_MODEL],
        (([model], float(cfg.dynamic_batching)) for model, cfg in configs),
    )
    yield Family(
        GAUGE,
        c.M_MODEL_MAX_BATCH_SIZE,
        "max_batch_size from the loaded model's config (0: the model does not batch).",
        [c.LABEL_MODEL],
        (([model], float(cfg.max_batch_size)) for model, cfg in configs),
    )
    yield Family(
        GAUGE,
        c.M_MODEL_MAX_QUEUE_DELAY,
        "dynamic_batching's max_queue_delay_microseconds from the loaded model's config, in seconds "
        "(models with a dynamic batcher only).",
        [c.LABEL_MODEL],
        (
            ([model], cfg.max_queue_delay_us / 1e6)
            for model, cfg in configs
            if cfg.max_queue_delay_us is not None
        ),
    )
    yield Family(
        GAUGE,
        c.M_MODEL_ENSEMBLE,
        "1 per model whose config's platform is ensemble (it has no batcher, its steps do: no batching "
        "ratio or fill is exported for it); absent for other models.",
        [c.LABEL_MODEL],
        (([model], 1.0) for model, cfg in configs if cfg.ensemble),
    )
    yield Family(
        GAUGE,
        c.M_ENSEMBLE_STEP_CALLS,
        "Per ensemble, the times its config's ensemble_scheduling names each step model at each "
        "model_version (-1: the latest): each request of the ensemble is one request of the step per time.",
        [c.LABEL_MODEL, c.L_STEP, c.L_STEP_VERSION],
        (
            ([model, step, str(version)], float(times))
            for model, cfg in configs
            if cfg.ensemble
            for (step, version), times in sorted(Counter(cfg.steps).items())
        ),
    )


def _cost_metrics(d: Derivation) -> Iterator[Family]:
    yield Family(
        GAUGE,
        c.M_COST_DEVICES,
        "Devices the server's cost and idle share are computed over.",
        [c.L_DEVICE_KIND],
        [([d.device_kind], d.devices)],
    )
    if d.idle_fraction is not None:
        yield Family(
            GAUGE,
            c.M_IDLE_COST_FRACTION,
            "Share of device time with no model executing over the window.",
            (),
            [((), d.idle_fraction)],
        )
    if d.server_cost_per_hour is None:
        return
    names, mv = _labelled(d)
    yield Family(
        GAUGE,
        c.M_SERVER_COST_PER_HOUR,
        "The server's price per hour from the pricing config.",
        [c.L_CURRENCY],
        [([d.currency], d.server_cost_per_hour)],
    )
    yield Family(
        GAUGE,
        c.M_COST_PER_HOUR,
        "Server cost per hour attributed to the model by its share of execution compute time.",
        [*names, c.L_CURRENCY],
        (([*mv(m), d.currency], m.cost_per_hour) for m in d.models if m.cost_per_hour is not None),
    )
    yield Family(
        GAUGE,
        c.M_COST_PER_1K,
        "Attributed cost over the window per thousand inferences.",
        [*names, c.L_CURRENCY],
        (([*mv(m), d.currency], m.cost_per_1k) for m in d.models if m.cost_per_1k is not None),
    )


def _shown_states(states: Iterable[ModelState]) -> list[tuple[tuple[str, str], ModelState]]:
    """One row per (model, version), sorted: the index's last, unless a row before it failed to load.
    Two rows of one label set are two same-named models of Triton's model namespacing (the index has
    no namespace): the index's last alone hid a failed one listed first (its repository given first)
    behind the other's READY, and TritonModelUnavailable never fired."""
    rows: dict[tuple[str, str], ModelState] = {}
    for s in states:
        held = rows.get((s.model, s.version))
        if held is None or not failed_to_load(held.state, held.reason):
            rows[(s.model, s.version)] = s
    return sorted(rows.items())


def _state_metrics(d: Derivation) -> Iterator[Family]:
    latest = _shown_states(d.states)  # one row per label set
    unavailable = [(key, s) for key, s in latest if failed_to_load(s.state, s.reason)]
    yield Family(
        GAUGE,
        c.M_MODEL_STATE,
        "1 for the state the repository index reports, 0 for the other known states.",
        [*_MV, c.L_STATE],
        (
            ([model, version, known], float(s.state == known))
            for (model, version), s in latest
            for known in c.MODEL_STATES
        ),
    )
    yield Family(
        GAUGE,
        c.M_MODEL_UNAVAILABLE,
        "1 per UNAVAILABLE model version; runbook is the diagnosed runbook id.",
        [*_MV, c.L_RUNBOOK],
        (
            ([model, version, s.runbook or c.RUNBOOK_UNKNOWN_LOAD_FAILURE], 1.0)
            for (model, version), s in unavailable
        ),
    )
    yield Family(
        GAUGE,
        c.M_MODEL_UNAVAILABLE_INFO,
        f"Why a model is UNAVAILABLE: first line of Triton's reason, at most {c.MAX_REASON_LABEL_CHARS} "
        f"characters (full text on {c.PATH_DEBUG_MODELS}).",
        [*_MV, c.L_REASON],
        (([model, version, reason_label(s.reason)], 1.0) for (model, version), s in unavailable),
    )
