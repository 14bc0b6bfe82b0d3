"""promtool input series of the SLO scenarios (tests_slo.py): one model's traffic history (a
calc.Track) as the counters, histogram buckets and summary quantiles Triton exports.

The values depend on the track's shape only (calc.track_shape: not on the SLO's name nor the
model's), so they are computed once per shape and every model of that shape gets its own labels
around them (issue 28 item 7: most SLOs of a fleet share a shape).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from triton_sre import conventions as c
from triton_sre.generate import llm_slo
from triton_sre.generate.calc import (
    Phase,
    Track,
    average_latency,
    buckets_ms,
    counter_series,
    failure_reason,
    gauge_series,
    request_latencies,
    series_labels,
    summary_value,
    track_shape,
)


def track_series(job: str, track: Track, step: int, quantiles: Sequence[str]) -> list[dict[str, str]]:
    """The input series of `track` scraped from `job`; `quantiles`: the summary quantiles the
    rules read (summary tracks export those)."""
    summary = track.kind == c.LATENCY_SOURCE_SUMMARY
    values = _values(track_shape(track), step, tuple(quantiles) if summary else ())

    def labels(extra: Mapping[str, str]) -> str:
        return series_labels({c.LABEL_MODEL: track.model, **extra}, job)

    if track.kind in c.LLM_SLO_TYPES:
        return llm_slo.slo_track_series(track.owner, labels, *values)
    names: list[tuple[str, dict[str, str]]] = [(c.NV_REQUEST_SUCCESS, {})]
    if track.kind == c.SLO_AVAILABILITY:
        names.append((c.NV_REQUEST_FAILURE, {c.LABEL_REASON: failure_reason(track)}))
    elif track.kind == c.LATENCY_SLI_HISTOGRAM:
        hist = c.NV_FIRST_RESPONSE_HISTOGRAM_MS
        names += [
            (f"{hist}_bucket", {c.LABEL_LE: "+Inf" if le is None else str(le)})
            for le in [*buckets_ms(track), None]
        ]
        names += [(f"{hist}_count", {}), (f"{hist}_sum", {})]
    else:
        names.append((c.NV_REQUEST_DURATION_US, {}))
        names += [(c.NV_REQUEST_SUMMARY_US, {c.LABEL_QUANTILE: q}) for q in quantiles if summary]
        if summary and quantiles:  # the summary's own count: the rules trust a quantile only while it rises
            names.append((f"{c.NV_REQUEST_SUMMARY_US}_count", {}))
    return [
        {"series": name + labels(extra), "values": value}
        for (name, extra), value in zip(names, values, strict=True)
    ]


def _each_step(per_step: Sequence[Phase], value: Callable[[Phase], Any]) -> list[Any]:
    """value(p) for every step, computed once per phase (per_step repeats each phase object)."""
    done: dict[int, Any] = {}
    out = []
    for p in per_step:
        if id(p) not in done:
            done[id(p)] = value(p)
        out.append(done[id(p)])
    return out


@functools.lru_cache(maxsize=1024)
def _values(track: Track, step: int, quantiles: tuple[str, ...]) -> tuple[str, ...]:
    """The values of each series `track_series` names, in its order (`track` a shape)."""
    per_step = track.per_step
    total = _each_step(per_step, lambda p: p.rate * step)
    if track.kind in c.LLM_SLO_TYPES or track.kind == c.SLO_AVAILABILITY:
        bad = _each_step(per_step, lambda p: p.rate * p.bad * step)
        good = _each_step(per_step, lambda p: p.rate * step - p.rate * p.bad * step)
        if track.kind == c.SLO_AVAILABILITY:
            return counter_series(good), counter_series(bad)
        return counter_series(total), counter_series(good)
    if track.kind == c.LATENCY_SLI_HISTOGRAM:
        return counter_series(total), *_histogram_values(track, step)
    duration = _each_step(per_step, lambda p: p.rate * step * average_latency(track, p) * 1_000_000)
    out = [counter_series(total), counter_series(duration)]
    for quantile in quantiles:
        summary = [None, *_each_step(per_step, lambda p, q=quantile: summary_value(track, p, q))]
        out.append(gauge_series([None if v is None else v * 1_000_000 for v in summary]))
    if quantiles:
        out.append(counter_series(total))
    return tuple(out)


def _histogram_values(track: Track, step: int) -> list[str]:
    """nv_inference_first_response_histogram_ms as Triton 26.01 exports it: default bounds plus
    the threshold's, +Inf, _count and _sum (ms)."""
    per_step = track.per_step
    counts = _each_step(per_step, lambda p: p.rate * step)
    out = []
    for le in [*buckets_ms(track), None]:

        def within(p: Phase, le: int | None = le) -> Fraction:
            good_s, bad_s = request_latencies(track, p)
            share = (1 - p.bad) * (le is None or good_s * 1000 <= le) + p.bad * (
                le is None or bad_s * 1000 <= le
            )
            return p.rate * step * share

        out.append(counter_series(_each_step(per_step, within)))

    def latency_ms(p: Phase) -> Fraction:
        good_s, bad_s = request_latencies(track, p)
        return p.rate * step * ((1 - p.bad) * good_s + p.bad * bad_s) * 1000

    return [*out, counter_series(counts), counter_series(_each_step(per_step, latency_ms))]
