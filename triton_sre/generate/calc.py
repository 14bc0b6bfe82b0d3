"""The Python model of PromQL the promtool tests are predicted with (exact arithmetic).

A scenario is a piecewise-constant traffic history written as Prometheus' expanding series
notation; this module writes that notation and predicts, with Fractions, what the generated rules
compute from it: the bad share and request rate of each window, time slices, summary and histogram
quantiles, which burn tiers fire, and the annotations Prometheus renders.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from triton_sre import conventions as c
from triton_sre.generate.cumulative import Sums
from triton_sre.generate.slo_rules import tiers
from triton_sre.promql import q
from triton_sre.slo import SLO, ModelSelector, window_seconds

TEST_INSTANCE = "triton-0:8002"
TEST_EXPORTER_INSTANCE = "triton-0:8003"
TEST_MODEL = "model_under_test"
TEST_ENSEMBLE = "ensemble_under_test"  # a model whose config's platform is ensemble
TEST_FAILING = "failing_under_test"  # a model that executes but whose every request fails
TEST_VERSION = "1"
TEST_NAMESPACE = "inference"  # a pod kube-state-metrics reports on, in the operational tests
TEST_POD = "triton-7d9f8-abcde"
TEST_TERMINATED_REASON = "OOMKilled"
TEST_GPU_UUID = "GPU-0"  # the GPU of the operational tests (energy, memory)
FAST_STEP = 60  # s: tiers up to 6h
SLOW_STEP = 300  # s: the 1d and 3d tiers
ABOVE, BELOW = Fraction(102, 100), Fraction(98, 100)
TESTS = "alerts/tests/"
MARGIN = Fraction(1, 100)


def busy_rate(*floors: float) -> Fraction:
    """Requests/s a test feeds a model that must count as busy: ten times the highest traffic floor
    (`min_request_rate`) that applies, at least one. A fixed rate fails the tests of a spec whose
    floor is above it: the alert under test stays silent."""
    return max([Fraction(1), *(Fraction(repr(f)) * 10 for f in floors)])


@dataclass(frozen=True)
class Phase:
    steps: int
    rate: Fraction  # requests per second
    bad: Fraction  # share of requests that are bad (failed, or slower than the threshold)
    slow: Fraction = Fraction(2)  # histogram tracks: latency of a bad request, in owner thresholds


class Unpredictable(ValueError):
    """A check time where some ratio sits too close to a threshold to predict reliably."""


# -- series ----------------------------------------------------------------------------------------
def counter_series(increments: Sequence[Fraction]) -> str:
    """Expanding notation for a counter starting at 0 with the given per-step increments.

    promtool expands `a+bxn` by adding b to a float n times, so each run starts where promtool's
    own sum of the run before ends: started at the exact sum instead, a run after increments with
    no exact float (767371.2 a step) could start a hair below the last value, a counter reset that
    rate() reads as the whole counter again."""
    parts: list[str] = []
    value = 0.0  # the counter's last value as promtool computes it
    i = 0
    first = True
    while i < len(increments):
        j = i
        while j < len(increments) and (increments[j] is increments[i] or increments[j] == increments[i]):
            j += 1
        inc, n = increments[i], j - i
        step = float(_n(inc))
        if first:
            parts.append(f"0+{_n(inc)}x{n}")
            first = False
        else:
            value += step
            parts.append(f"{_n(Fraction(value))}+{_n(inc)}x{n - 1}")
            n -= 1
        for _ in range(n):
            value += step
        i = j
    return " ".join(parts) if parts else "0"


def gauge_series(values: Sequence[Fraction | None]) -> str:
    """Expanding notation for a gauge; None is NaN (written one by one: promtool has no `NaNxN`)."""
    parts: list[str] = []
    i = 0
    while i < len(values):
        j = i
        while j < len(values) and values[j] == values[i]:
            j += 1
        if values[i] is None:
            parts.extend(["NaN"] * (j - i))
        else:
            parts.append(_n(values[i]) if j - i == 1 else f"{_n(values[i])}x{j - i - 1}")
        i = j
    return " ".join(parts)


def _n(value: Fraction) -> str:
    f = float(value)
    return str(int(f)) if f == int(f) else repr(f)


def series_labels(extra: Mapping[str, str], job: str, instance: str = TEST_INSTANCE) -> str:
    labels = {
        c.LABEL_JOB: job,
        c.LABEL_INSTANCE: instance,
        c.LABEL_MODEL: TEST_MODEL,
        c.LABEL_VERSION: TEST_VERSION,
        **extra,
    }
    return "{" + ", ".join(f"{k}={q(v)}" for k, v in labels.items()) + "}"


def _steps(phases: Sequence[Phase]) -> list[Phase]:
    out: list[Phase] = []
    for p in phases:
        out.extend([p] * p.steps)
    return out


# -- prediction -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Track:
    """One model's traffic history in a scenario, shaped for its owner SLO's SLI."""

    owner: SLO
    model: str
    phases: tuple[Phase, ...]
    kind: str  # availability | histogram | time_slice (averages only) | summary

    @property
    def per_step(self) -> list[Phase]:
        return _steps(self.phases)

    def __hash__(self) -> int:
        return self._hash

    @functools.cached_property
    def _hash(self) -> int:
        """Hashed once: a track keys the prediction caches at every check time of its scenario."""
        return hash((self.owner, self.model, self.phases, self.kind))


def failure_reason(track: Track) -> str:
    return (track.owner.bad_reasons or (c.FAILURE_REASON_BACKEND,))[0]


EVENTS, SLICES = "events", "slices"


def _judged_by(slo: SLO, track: Track, latency_metrics: Sequence[str]) -> str | None:
    """How `slo` computes an SLI from `track`'s series: per event (requests), per time slice, or
    not at all (None)."""
    pattern = slo.models.pattern
    if pattern is not None and not re.fullmatch(pattern, track.model):
        return None
    if slo.type == c.SLO_AVAILABILITY:
        return EVENTS  # every track has request counters; only availability tracks have failures
    if slo.type in c.LLM_SLO_TYPES or track.kind in c.LLM_SLO_TYPES:  # generate/llm.py
        return EVENTS if track.kind == slo.type and slo.threshold_s == track.owner.threshold_s else None
    slices = slo.latency_sli != c.LATENCY_SLI_HISTOGRAM
    if track.kind == c.LATENCY_SLI_HISTOGRAM:
        if slo.latency_sli != c.LATENCY_SLI_TIME_SLICE and round(slo.threshold_s * 1000) in buckets_ms(track):
            return EVENTS
        # no bucket at the threshold: the slices, which read the histogram when the spec says so
        return SLICES if slices and c.LATENCY_SOURCE_HISTOGRAM in latency_metrics else None
    return SLICES if slices else None


# Triton's default bounds of nv_inference_first_response_histogram_ms (ms), +Inf aside, as whole
# numbers (the promtool tests write them as `le` values).
HISTOGRAM_BOUNDS_MS = tuple(int(bound) for bound in c.FIRST_RESPONSE_BUCKETS_MS)


def buckets_ms(track: Track) -> list[int]:
    return sorted({*HISTOGRAM_BOUNDS_MS, round(track.owner.threshold_s * 1000)})


def _owner_threshold(track: Track) -> Fraction:
    return Fraction(round(track.owner.threshold_s * 1e6), 1_000_000)


def request_latencies(track: Track, p: Phase) -> tuple[Fraction, Fraction]:
    """Histogram tracks: (latency of a good request, of a bad one) in seconds."""
    threshold = _owner_threshold(track)
    return threshold / 10, threshold * p.slow


def _hist_bad_share(slo: SLO, track: Track, p: Phase) -> Fraction:
    """Share of a histogram track's requests slower than `slo`'s threshold."""
    limit = Fraction(round(slo.threshold_s * 1000), 1000)
    good_s, bad_s = request_latencies(track, p)
    return (1 - p.bad) * (good_s > limit) + p.bad * (bad_s > limit)


def _bad_share(slo: SLO, track: Track, p: Phase) -> Fraction:
    if slo.type == c.SLO_AVAILABILITY:
        if track.kind != c.SLO_AVAILABILITY:
            return Fraction(0)
        counted = (
            failure_reason(track) != c.FAILURE_REASON_CANCELED
            if slo.bad_reasons is None
            else failure_reason(track) in slo.bad_reasons
        )
        return p.bad if counted else Fraction(0)
    if track.kind == c.LATENCY_SLI_HISTOGRAM:
        return _hist_bad_share(slo, track, p)
    return p.bad


def window_stats(
    per_step: Sequence[Phase] | Sums, step: int, t: int, window: int
) -> tuple[Fraction, Fraction | None]:
    """(request rate, bad share) over `window` seconds ending at `t`, as the SLO rules compute them.

    The REC_RATE_WINDOW window is rate() of the counters; a longer one averages the recorded 5m
    rates evaluated every `step` in [t - window, t] (avg_over_time: both ends included), so its bad
    share is the sum of the recorded bad rates over the sum of the recorded request rates (a
    sample's rate times its bad share is its bad rate, so the shares need not be formed).
    """
    sums = per_step if isinstance(per_step, Sums) else Sums(per_step)
    rec = int(window_seconds(c.REC_RATE_WINDOW))
    if window <= rec:
        return _rate_stats(sums, step, t, window)
    first, last = max(1, -(-(t - window) // step)), t // step
    if last < first:
        return Fraction(0), None
    # each sample j is _rate_stats(j * step, rec): steps [max(0, j - rec // step), j)
    rate, bad = sums.ends_between(first, last, rec // step)
    total = rate * step / rec
    return total / (last - first + 1), (bad * step / rec / total if total > 0 else None)


def _rate_stats(sums: Sums, step: int, t: int, window: int) -> tuple[Fraction, Fraction | None]:
    """(request rate, bad share) over `window` seconds ending at `t`, as rate() computes them."""
    end = t // step
    start = max(0, end - window // step)
    if end - start < 1:
        return Fraction(0), None
    rate, bad = sums.between(start, end)
    total, bad = rate * step, bad * step
    return total / window, (bad / total if total > 0 else None)


def average_latency(track: Track, p: Phase) -> Fraction:
    """Average latency of a step. Time-slice tracks: a bad step runs at twice the owner's
    threshold, a good one at a tenth. Summary tracks put the average on the other side of the
    threshold from the quantile: a bad step (tail over the threshold) averages half the threshold,
    a good one twice it (a few huge outliers), so only a quantile-based SLI predicts them right.
    """
    threshold = _owner_threshold(track)
    if track.kind == c.LATENCY_SOURCE_SUMMARY:
        return threshold / 2 if p.bad > 0 else threshold * 2
    return threshold * 2 if p.bad > 0 else threshold / 10


def summary_value(track: Track, p: Phase, quantile: str) -> Fraction | None:
    """Summary tracks: Triton's quantile (s) over a step; None (NaN) for a step without requests.

    In a bad step the owner's quantile and those above it are twice the threshold, the lower ones a
    tenth of it; in a good step every quantile is half the threshold.
    """
    if p.rate == 0:
        return None
    threshold = _owner_threshold(track)
    if p.bad > 0:
        return threshold * 2 if float(quantile) >= float(track.owner.quantile) else threshold / 10
    return threshold / 2


def _histogram_quantile(track: Track, steps: Sequence[Phase], quantile: str) -> Fraction:
    """Prometheus' histogram_quantile (ms) over a histogram track's buckets summed over `steps`."""
    bounds: list[int | None] = [*buckets_ms(track), None]
    counts = []
    for le in bounds:
        within = Fraction(0)
        for p in steps:
            good_s, bad_s = request_latencies(track, p)
            share = (1 - p.bad) * (le is None or good_s * 1000 <= le) + p.bad * (
                le is None or bad_s * 1000 <= le
            )
            within += p.rate * share
        counts.append(within)
    rank = Fraction(quantile) * counts[-1]
    lower, below = Fraction(0), Fraction(0)
    for le, cumulative in zip(bounds, counts, strict=True):
        if cumulative >= rank:
            if le is None:
                return lower
            return lower + (le - lower) * (rank - below) / (cumulative - below)
        lower, below = Fraction(le), cumulative
    return lower


def slice_stats(
    slo: SLO, track: Track, step: int, t: int, window: int, latency_metrics: Sequence[str] = ()
) -> Fraction | None:
    """Share of bad time slices among the slices with traffic in `window` ending at `t`."""
    samples, bad, close = _slice_samples(slo, track, step, tuple(latency_metrics))
    # from the second sample on: a summary's sample at j covers step j - 1, and rate() over a range
    # reaching before the history's start rates the steps so far
    first = max(1, -(-(t - window) // step))
    last = min(t // step, len(samples) - 2)  # no sample past the history's end
    if last < first:
        return None
    if close[last + 1] - close[first]:
        raise Unpredictable(f"{slo.name}: a slice's quantile at t={t}s is within 1% of the threshold")
    n = samples[last + 1] - samples[first]
    return Fraction(bad[last + 1] - bad[first], n) if n else None


@functools.lru_cache(maxsize=1024)
def _slice_samples(
    slo: SLO, track: Track, step: int, latency_metrics: tuple[str, ...]
) -> tuple[list[int], list[int], list[int]]:
    """Cumulative counts, over the evaluation steps j, of the slices with traffic, of the bad ones,
    and of those too close to the threshold to call; computed once per (SLO, track) for every
    window and check time (issue 28 item 7)."""
    per_step = track.per_step
    k = int(window_seconds(slo.time_slice)) // step
    threshold = Fraction(round(slo.threshold_s * 1e6), 1_000_000)
    summary = track.kind == c.LATENCY_SOURCE_SUMMARY and c.LATENCY_SOURCE_SUMMARY in latency_metrics
    memo: dict[tuple[int, ...], tuple[bool, bool, bool]] = {}

    def sample(j: int) -> tuple[bool, bool, bool]:
        """(has traffic, bad, too close to call) of the slice sampled at step j."""
        if summary:
            if not 1 <= j <= len(per_step):
                return False, False, False
            value = summary_value(track, per_step[j - 1], slo.quantile)
            return value is not None, value is not None and value > threshold, False
        steps = per_step[max(0, j - k) : j]
        key = tuple(id(p) for p in steps)  # a slice of the same phases gives the same sample
        if key in memo:
            return memo[key]
        requests = sum((p.rate for p in steps), Fraction(0))
        if requests <= 0:  # j < k: a slice of the history so far (Prometheus rates what it has)
            out = (False, False, False)
        elif track.kind == c.LATENCY_SLI_HISTOGRAM:
            value = _histogram_quantile(track, steps, slo.quantile)
            limit_ms = threshold * 1000
            out = (True, value > limit_ms, abs(value / limit_ms - 1) < MARGIN)
        else:
            latency = sum((p.rate * average_latency(track, p) for p in steps), Fraction(0))
            out = (True, latency / requests > threshold, False)
        memo[key] = out
        return out

    samples, bad, close = [0], [0], [0]
    for j in range(len(per_step) + k + 1):
        has, is_bad, is_close = sample(j)
        samples.append(samples[-1] + has)
        bad.append(bad[-1] + (has and is_bad))
        close.append(close[-1] + (has and is_close))
    return samples, bad, close


@functools.lru_cache(maxsize=1024)
def _bad_sums(slo: SLO, track: Track) -> Sums:
    """`track`'s prefix sums as `slo` counts its bad requests: one per (SLO, track), shared by every
    tier, window and check time."""
    return Sums(track.per_step, lambda p: _bad_share(slo, track, p))


@dataclass(frozen=True)
class Prediction:
    slo: SLO
    model: str
    tier_long: str
    burn: Fraction


def predict(
    slo: SLO, track: Track, step: int, t: int, latency_metrics: Sequence[str] = (c.LATENCY_SOURCE_SUMMARY,)
) -> list[Prediction]:
    """The tiers of `slo` firing for `track` at `t` (no `for`: firing as soon as the condition holds).

    Computed once per shape (`shape`, `track_shape`): the SLOs of a fleet mostly differ only by
    name and models, and their scenarios then predict the same (issue 28 item 7)."""
    lm = tuple(latency_metrics)
    judged, slo_shape, shaped_track = _prediction_keys(slo, track, lm)
    if judged is None:
        return []
    outcome = _shaped_predict(slo_shape, judged, shaped_track, step, t, lm)
    if isinstance(outcome, str):  # the shape's message, from a nameless SLO: ": burn ..."
        raise Unpredictable(slo.name + outcome)
    return [Prediction(slo, track.model, long, burn) for long, burn in outcome]


_ANY_MODEL = ModelSelector("all")


@functools.lru_cache(maxsize=4096)
def shape(slo: SLO) -> SLO:
    """`slo` without what tells it apart from SLOs of the same shape (name, models, description):
    what every prediction and input series depends on."""
    return _canonical(dataclasses.replace(slo, name="", models=_ANY_MODEL, description=""))


@functools.lru_cache(maxsize=4096)
def track_shape(track: Track) -> Track:
    """`track` with its owner's shape and no model name (see `shape`)."""
    return _canonical(Track(shape(track.owner), "", track.phases, track.kind))


@functools.lru_cache(maxsize=4096)
def _canonical(value: Any) -> Any:
    """The first value seen equal to `value`: equal shapes are then the same object, which the
    caches keyed by them compare at once."""
    return value


@functools.lru_cache(maxsize=4096)
def _prediction_keys(
    slo: SLO, track: Track, latency_metrics: tuple[str, ...]
) -> tuple[str | None, SLO, Track]:
    """How `slo` judges `track`, and both shapes: once per pair, not at every check time."""
    return _judged_by(slo, track, latency_metrics), shape(slo), track_shape(track)


@functools.lru_cache(maxsize=16384)  # a scenario predicts each check time twice: to pick it, to write it
def _shaped_predict(
    slo: SLO, judged: str, track: Track, step: int, t: int, latency_metrics: tuple[str, ...]
) -> tuple[tuple[str, Fraction], ...] | str:
    """(long window, burn) of each firing tier, or the message of the Unpredictable raised."""
    try:
        return _firing(slo, judged, track, step, t, latency_metrics)
    except Unpredictable as exc:
        return str(exc)


def _firing(
    slo: SLO, judged: str, track: Track, step: int, t: int, latency_metrics: tuple[str, ...]
) -> tuple[tuple[str, Fraction], ...]:
    budget = Fraction(str(slo.budget))
    guard = Fraction(repr(slo.min_request_rate))
    sums = _bad_sums(slo, track)
    firing = []
    for long, short, _share, _severity, factor in tiers(slo):
        f = Fraction(repr(factor))
        conds = []
        burn_long = Fraction(0)
        for w in (long, short):
            ws = int(window_seconds(w))
            rate, ratio = window_stats(sums, step, t, ws)
            if judged == SLICES:
                ratio = slice_stats(slo, track, step, t, ws, latency_metrics)
            if ratio is None or t < step:
                conds.append(False)
                continue
            burn = ratio / budget
            if w == long:
                burn_long = burn
            if burn > 0 and abs(burn / f - 1) < MARGIN / 2:
                raise Unpredictable(
                    f"{slo.name}: burn {float(burn):.4f} at t={t}s is within 0.5% of {factor}"
                )
            if guard > 0 and rate > 0 and abs(rate / guard - 1) < MARGIN:
                raise Unpredictable(f"{slo.name}: rate at t={t}s is within 1% of the guard")
            conds.append(burn >= f and rate >= guard)
        if all(conds):
            firing.append((long, burn_long))
    return tuple(firing)


# -- expected annotations -------------------------------------------------------------------------
def burn_value(burn: Fraction) -> float:
    value = float(burn)
    tenth = value * 10 - int(value * 10)
    if abs(tenth - 0.5) < 1e-6:
        raise Unpredictable(f"burn {value} rounds ambiguously")
    return value
