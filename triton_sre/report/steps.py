"""The report's step, chosen before any range is read: its range queries (`report_plan`), the step at
which every counted query fits the per-query sample budget (`fitting`), the histogram buckets' own step
(`histogram_step_of`), and the notes that say a step was raised. Pure: the counts come from the caller
(`command.build_report`, which asks Prometheus)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from triton_sre import conventions as c

__all__ = ["GAUGES", "fitting", "histogram_note", "histogram_step_of", "raised_note", "report_plan"]

GAUGES = (
    c.M_COST_PER_HOUR,
    c.M_SERVER_COST_PER_HOUR,
    c.M_IDLE_COST_FRACTION,
    c.M_BATCHING_RATIO,
    c.M_BATCH_FILL_RATIO,
    c.M_MODEL_DYNAMIC_BATCHING,
    c.M_MODEL_MAX_BATCH_SIZE,
    c.M_MODEL_MAX_QUEUE_DELAY,
    c.M_MODEL_ENSEMBLE,
    c.M_ENSEMBLE_STEP_SECONDS,
    c.M_ENSEMBLE_STEP_CALLS,
)


def raised_note(series: int, step: float, to: float, on_note: Callable[[str], None] | None) -> None:
    from triton_sre.report.prom import MAX_SAMPLES_PER_QUERY

    if on_note is not None:
        on_note(
            f"{series:,} series in one query: step {step:g}s raised to {to:g}s "
            f"(at most {MAX_SAMPLES_PER_QUERY:,} samples per query)"
        )


def histogram_note(series: int, step: float, to: float, on_note: Callable[[str], None] | None) -> None:
    from triton_sre.report.figures import HISTOGRAM_BUCKETS
    from triton_sre.report.prom import MAX_SAMPLES_PER_QUERY

    if on_note is not None:
        on_note(
            f"{series:,} series of {HISTOGRAM_BUCKETS}: read at step {to:g}s, the other families at "
            f"{step:g}s (at most {MAX_SAMPLES_PER_QUERY:,} samples per query)"
        )


def histogram_step_of(
    expr: str,
    series: int | None,
    start: float,
    end: float,
    step: float,
    on_note: Callable[[str], None] | None,
) -> float:
    """The step the first-response histogram's buckets are read at: the report's `step` when its
    `series` fit `MAX_SAMPLES_PER_QUERY` at it, else the finest step at which they do (said through
    `on_note`, with or without --step: the quantiles are of the whole range, a coarser step moves only
    its edges). TooManySamples when not even one point per series fits."""
    from triton_sre.report.prom import MAX_SAMPLES_PER_QUERY, TooManySamples, fitting_step

    points = int((end - start) // step) + 1
    if not series or series * points <= MAX_SAMPLES_PER_QUERY:
        return step
    fit = fitting_step(start, end, series)
    if fit is None:
        raise TooManySamples(expr, series, points, fit)
    histogram_note(series, step, fit, on_note)
    return fit


def report_plan(seconds: float, cluster: tuple[str, ...] = ()) -> Any:
    from triton_sre.report.capacity import FAMILIES as CAPACITY_FAMILIES
    from triton_sre.report.figures import HISTOGRAM_BUCKETS
    from triton_sre.report.llm import TOKEN_FAMILIES
    from triton_sre.report.queries import report_queries

    capacity = tuple(CAPACITY_FAMILIES)
    return report_queries(seconds, HISTOGRAM_BUCKETS, TOKEN_FAMILIES, capacity, GAUGES, cluster)


def fitting(
    plan: Any,
    counts: dict[str, int | None],
    start: float,
    end: float,
    step: float,
    chosen: bool,
    on_note: Callable[[str], None] | None,
) -> float:
    """The step at which every query's counted series fit `MAX_SAMPLES_PER_QUERY`: the default one
    raised once, before anything is read; with `--step`, TooManySamples naming the step to give."""
    from triton_sre.report.prom import MAX_SAMPLES_PER_QUERY, TooManySamples, fitting_step

    name, series = max(counts.items(), key=lambda item: item[1] or 0)
    points = int((end - start) // step) + 1
    if not series or series * points <= MAX_SAMPLES_PER_QUERY:
        return step
    fit = fitting_step(start, end, series)
    if not chosen or fit is None:
        raise TooManySamples(plan[name].expr or name, series, points, fit)
    raised_note(series, step, fit, on_note)
    return fit
