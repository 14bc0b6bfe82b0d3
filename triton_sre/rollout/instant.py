"""The instant reads of a live verdict (`rollout check` and the bot): the step's spacing (the samples'
own, else the job's scrape interval), each side's counter resets and replaced servers, and what the
exporter's gauges say of the models the sides served (a dynamic batcher, an ensemble). `live.py`
reads the figures' ranges and judges; these are the reads beside them."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from triton_sre import conventions as c
from triton_sre.durations import format_duration
from triton_sre.prom import PromError, Prometheus
from triton_sre.promql import Matcher, by, on, selector
from triton_sre.rollout.model import batcher_said
from triton_sre.rollout.sides import Side
from triton_sre.rollout.stats import median

SAMPLES_PER_WINDOW = 30  # default step = window / this (at least 3 scrape intervals)

SPACING_LOOKBACK_S = 300.0  # how far back sample_spacing reads the raw samples


def sample_spacing(prom: Prometheus, matchers: Sequence[Matcher]) -> float | None:
    """The median time between successive samples of the request counter selected by `matchers`
    over the last SPACING_LOOKBACK_S: the interval its series were scraped at, wherever that was. A
    global store (clusters remote-writing to it) does not scrape them, so its configuration names
    another interval (its own default, 1m). None without two samples or with an answer of another
    shape (a store that does not answer a range selector in an instant query)."""
    expr = f"{selector(c.NV_REQUEST_SUCCESS, matchers)}[{format_duration(SPACING_LOOKBACK_S)}]"
    try:
        data = prom.api("/api/v1/query", {"query": expr})
    except PromError:
        return None
    result = data.get("result") if data.get("resultType") == "matrix" else None
    gaps: list[float] = []
    for series in result if isinstance(result, list) else []:
        try:
            stamps = [float(point[0]) for point in series["values"]]
        except (KeyError, IndexError, TypeError, ValueError):
            return None
        gaps += [b - a for a, b in pairwise(stamps) if b > a]
    return round(median(gaps), 3) if gaps else None


def default_step(prom: Prometheus, job: str, window_s: float, matchers: Sequence[Matcher] = ()) -> float:
    """window / SAMPLES_PER_WINDOW, at least three scrape intervals: the samples' own spacing when
    `matchers` select some, else the job's interval in Prometheus' configuration, else 15 s."""
    interval = (sample_spacing(prom, matchers) if matchers else None) or prom.scrape_interval(job) or 15.0
    return max(window_s / SAMPLES_PER_WINDOW, 3 * interval)


def restarts(prom: Prometheus, sides: tuple[Side, Side], window_s: float) -> tuple[int, int]:
    """How many times each side's request counters reset over the last `window_s` (summed over its
    series): a Triton or model restart inside the window."""
    window = format_duration(window_s)
    counts = [
        prom.instant(f"sum(resets({selector(c.NV_REQUEST_SUCCESS, side.matchers)}[{window}]))")
        for side in sides
    ]
    return (round(counts[0] or 0), round(counts[1] or 0))


def replaced_pods(prom: Prometheus, sides: tuple[Side, Side], window_s: float) -> tuple[int, int]:
    """How many of each side's servers were replaced by a new one over the last `window_s`: series
    that ended in the window (gone now) paired with series that began in it (absent at its start).
    A Kubernetes pod replaced, not restarted in place, is a new `pod`/`instance`: a new series, no
    reset. A series begun with none ended (a scale-up) or ended with none begun is no replacement."""
    window = format_duration(window_s)
    counts = []
    for side in sides:  # one query a side: the smaller of the two counts (each 0 when none)
        now = selector(c.NV_REQUEST_SUCCESS, side.matchers)
        ended = f"count(last_over_time({now}[{window}]) unless {now}) or vector(0)"
        began = f"count({now} unless {now} offset {window}) or vector(0)"
        both = f'label_replace({ended}, "n", "ended", "", "") or label_replace({began}, "n", "began", "", "")'
        counts.append(round(prom.instant(f"min({both})") or 0))
    return (counts[0], counts[1])


def ensembles(
    prom: Prometheus,
    sides: tuple[Side, Side],
    cluster_label: str = c.LABEL_CLUSTER,
    *,
    exporter_job: str,
) -> tuple[list[str], list[str]]:
    """The models of each side that the exporter's triton_sre_model_ensemble marks as ensembles
    (none without an exporter scraped): one instant query a side. A model is its name in its cluster
    (`cluster_label`), as `dynamic_batcher` reads it: on a global store a same-named ensemble of another
    cluster does not make a side's model one (tidy32). Only the spec's `exporter_job` says, as in the
    recording rules: another job's gauge (a staging exporter scraped into the same store) does not."""
    model = (c.LABEL_MODEL, cluster_label)
    marked = f"group {by(model)} ({selector(c.M_MODEL_ENSEMBLE, [(c.LABEL_JOB, '=', exporter_job)])} == 1)"
    served = [f"group {by(model)} ({selector(c.NV_REQUEST_SUCCESS, side.matchers)})" for side in sides]
    found = [prom.vector(f"{marked} and {on(model)} {models}") for models in served]
    base, cand = (sorted({labels.get(c.LABEL_MODEL, "") for labels, _ in side}) for side in found)
    return base, cand


def dynamic_batcher(
    prom: Prometheus,
    sides: tuple[Side, Side],
    cluster_label: str = c.LABEL_CLUSTER,
    *,
    exporter_job: str,
) -> bool | None:
    """Whether the models the sides served run a dynamic batcher, as the exporter's
    triton_sre_model_dynamic_batching says (from the model config): True when it says so of one of
    them, False when it says no of every one, None when it says nothing of one (no exporter scraped).
    One instant query a side (`batcher_said`): a model served without the gauge reads BATCHER_UNSAID. A
    model is its name in its cluster (`cluster_label`, as the rules match it): on a global store a
    same-named model of another cluster does not decide; a store without the label groups by name alone.
    The gauge of the spec's `exporter_job` only, as the guard's rules and the templates read it."""
    model = (c.LABEL_MODEL, cluster_label)
    values = []
    for side in sides:
        served = f"group {by(model)} ({selector(c.NV_REQUEST_SUCCESS, side.matchers)})"
        said = batcher_said([(c.LABEL_JOB, "=", exporter_job)], model, served)
        values += [v for _, v in prom.vector(said)]
    if any(v > 0 for v in values):
        return True
    return False if values and all(v == 0 for v in values) else None
