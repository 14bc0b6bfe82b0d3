"""promtool unit tests (`alerts/tests/*.yaml`) for the generated rules.

Every scenario is a piecewise-constant traffic history written as Prometheus' expanding series
notation. The expected alerts are *predicted* from that history with exact arithmetic (the bad
share of each window, the request rate of each window, the tier thresholds), so the tests prove
that the PromQL implements the arithmetic: windows, both-window conditions, the minimum-rate guard,
no NaN at zero traffic. Check times are chosen so that no tier other than the one under test is
within 1 % of its threshold, and the tier under test sits 2 % above or below it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from triton_sre import conventions as c
from triton_sre.generate import rules as r
from triton_sre.slo import SLO, Spec, format_duration, window_seconds

TEST_INSTANCE = "triton-0:8002"
TEST_EXPORTER_INSTANCE = "triton-0:8003"
TEST_MODEL = "model_under_test"
TEST_VERSION = "1"
FAST_STEP = 60  # s: tiers up to 6h
SLOW_STEP = 300  # s: the 1d and 3d tiers
ABOVE, BELOW = Fraction(102, 100), Fraction(98, 100)
TESTS = "alerts/tests/"
MARGIN = Fraction(1, 100)


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
    """Expanding notation for a counter starting at 0 with the given per-step increments."""
    parts: list[str] = []
    value = Fraction(0)
    i = 0
    first = True
    while i < len(increments):
        j = i
        while j < len(increments) and increments[j] == increments[i]:
            j += 1
        inc, n = increments[i], j - i
        if first:
            parts.append(f"0+{_n(inc)}x{n}")
            first = False
        else:
            parts.append(f"{_n(value + inc)}+{_n(inc)}x{n - 1}")
        value += inc * n
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


def _labels(extra: Mapping[str, str], job: str, instance: str = TEST_INSTANCE) -> str:
    labels = {
        c.LABEL_JOB: job,
        c.LABEL_INSTANCE: instance,
        c.LABEL_MODEL: TEST_MODEL,
        c.LABEL_VERSION: TEST_VERSION,
        **extra,
    }
    return "{" + ", ".join(f"{k}={r.q(v)}" for k, v in labels.items()) + "}"


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


def _reason(track: Track) -> str:
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
        if slo.latency_sli != c.LATENCY_SLI_TIME_SLICE and round(slo.threshold_s * 1000) in _buckets_ms(
            track
        ):
            return EVENTS
        # no bucket at the threshold: the slices, which read the histogram when the spec says so
        return SLICES if slices and c.LATENCY_SOURCE_HISTOGRAM in latency_metrics else None
    return SLICES if slices else None


# Triton 26.01's default bounds of nv_inference_first_response_histogram_ms (ms), +Inf aside.
HISTOGRAM_BOUNDS_MS = (100, 500, 2000, 5000)


def _buckets_ms(track: Track) -> list[int]:
    return sorted({*HISTOGRAM_BOUNDS_MS, round(track.owner.threshold_s * 1000)})


def _owner_threshold(track: Track) -> Fraction:
    return Fraction(round(track.owner.threshold_s * 1e6), 1_000_000)


def _request_latencies(track: Track, p: Phase) -> tuple[Fraction, Fraction]:
    """Histogram tracks: (latency of a good request, of a bad one) in seconds."""
    threshold = _owner_threshold(track)
    return threshold / 10, threshold * p.slow


def _hist_bad_share(slo: SLO, track: Track, p: Phase) -> Fraction:
    """Share of a histogram track's requests slower than `slo`'s threshold."""
    limit = Fraction(round(slo.threshold_s * 1000), 1000)
    good_s, bad_s = _request_latencies(track, p)
    return (1 - p.bad) * (good_s > limit) + p.bad * (bad_s > limit)


def _bad_share(slo: SLO, track: Track, p: Phase) -> Fraction:
    if slo.type == c.SLO_AVAILABILITY:
        if track.kind != c.SLO_AVAILABILITY:
            return Fraction(0)
        counted = (
            _reason(track) != c.FAILURE_REASON_CANCELED
            if slo.bad_reasons is None
            else _reason(track) in slo.bad_reasons
        )
        return p.bad if counted else Fraction(0)
    if track.kind == c.LATENCY_SLI_HISTOGRAM:
        return _hist_bad_share(slo, track, p)
    return p.bad


def window_stats(
    per_step: Sequence[Phase], step: int, t: int, window: int, bad_of: Any = None
) -> tuple[Fraction, Fraction | None]:
    """(request rate, bad share) over `window` seconds ending at `t`, as the SLO rules compute them.

    The REC_RATE_WINDOW window is rate() of the counters; a longer one averages the recorded 5m
    rates evaluated every `step` in [t - window, t] (avg_over_time: both ends included), so its bad
    share is the sum of the recorded bad rates over the sum of the recorded request rates.
    """
    rec = int(window_seconds(c.REC_RATE_WINDOW))
    if window <= rec:
        return _rate_stats(per_step, step, t, window, bad_of)
    samples = [
        _rate_stats(per_step, step, j * step, rec, bad_of)
        for j in range(max(1, -(-(t - window) // step)), t // step + 1)
    ]
    if not samples:
        return Fraction(0), None
    total = sum((rate for rate, _ in samples), Fraction(0))
    bad = sum((rate * (share or 0) for rate, share in samples), Fraction(0))
    return total / len(samples), (bad / total if total > 0 else None)


def _rate_stats(
    per_step: Sequence[Phase], step: int, t: int, window: int, bad_of: Any = None
) -> tuple[Fraction, Fraction | None]:
    """(request rate, bad share) over `window` seconds ending at `t`, as rate() computes them."""
    end = t // step
    start = max(0, end - window // step)
    steps = per_step[start:end]
    if end - start < 1:
        return Fraction(0), None
    total = sum((p.rate for p in steps), Fraction(0)) * step
    bad = sum((p.rate * (bad_of(p) if bad_of else p.bad) for p in steps), Fraction(0)) * step
    return total / window, (bad / total if total > 0 else None)


def _latency(track: Track, p: Phase) -> Fraction:
    """Average latency of a step. Time-slice tracks: a bad step runs at twice the owner's
    threshold, a good one at a tenth. Summary tracks put the average on the other side of the
    threshold from the quantile: a bad step (tail over the threshold) averages half the threshold,
    a good one twice it (a few huge outliers), so only a quantile-based SLI predicts them right.
    """
    threshold = _owner_threshold(track)
    if track.kind == c.LATENCY_SOURCE_SUMMARY:
        return threshold / 2 if p.bad > 0 else threshold * 2
    return threshold * 2 if p.bad > 0 else threshold / 10


def _summary_value(track: Track, p: Phase, quantile: str) -> Fraction | None:
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
    bounds: list[int | None] = [*_buckets_ms(track), None]
    counts = []
    for le in bounds:
        within = Fraction(0)
        for p in steps:
            good_s, bad_s = _request_latencies(track, p)
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
    per_step = track.per_step
    k = int(window_seconds(slo.time_slice)) // step
    first = max(k, -(-(t - window) // step))
    threshold = Fraction(round(slo.threshold_s * 1e6), 1_000_000)
    samples = []
    if track.kind == c.LATENCY_SLI_HISTOGRAM:
        limit_ms = threshold * 1000
        for j in range(first, t // step + 1):
            steps = per_step[j - k : j]
            if sum((p.rate for p in steps), Fraction(0)) > 0:
                value = _histogram_quantile(track, steps, slo.quantile)
                if abs(value / limit_ms - 1) < MARGIN:
                    raise Unpredictable(
                        f"{slo.name}: a slice's quantile at t={t}s is within 1% of the threshold"
                    )
                samples.append(value > limit_ms)
        return Fraction(sum(samples), len(samples)) if samples else None
    summary = track.kind == c.LATENCY_SOURCE_SUMMARY and c.LATENCY_SOURCE_SUMMARY in latency_metrics
    if summary:  # the summary sample at j covers step j - 1
        for j in range(max(1, -(-(t - window) // step)), t // step + 1):
            value = _summary_value(track, per_step[j - 1], slo.quantile) if j <= len(per_step) else None
            if value is not None:
                samples.append(value > threshold)
        return Fraction(sum(samples), len(samples)) if samples else None
    for j in range(first, t // step + 1):
        steps = per_step[j - k : j]
        requests = sum((p.rate for p in steps), Fraction(0))
        if requests > 0:
            latency = sum((p.rate * _latency(track, p) for p in steps), Fraction(0))
            samples.append(latency / requests > threshold)
    return Fraction(sum(samples), len(samples)) if samples else None


@dataclass(frozen=True)
class Prediction:
    slo: SLO
    model: str
    tier_long: str
    burn: Fraction


def predict(
    slo: SLO, track: Track, step: int, t: int, latency_metrics: Sequence[str] = (c.LATENCY_SOURCE_SUMMARY,)
) -> list[Prediction]:
    """The tiers of `slo` firing for `track` at `t` (no `for`: firing as soon as the condition holds)."""
    judged = _judged_by(slo, track, latency_metrics)
    if judged is None:
        return []
    budget = Fraction(str(slo.budget))
    guard = Fraction(repr(slo.min_request_rate))
    per_step = track.per_step
    firing = []
    for long, short, _share, _severity, factor in r.tiers(slo):
        f = Fraction(repr(factor))
        conds = []
        burn_long = Fraction(0)
        for w in (long, short):
            ws = int(window_seconds(w))
            rate, ratio = window_stats(per_step, step, t, ws, lambda p: _bad_share(slo, track, p))
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
            firing.append(Prediction(slo, track.model, long, burn_long))
    return firing


# -- expected annotations -------------------------------------------------------------------------
_TEMPLATE = re.compile(r"\{\{\s*(\$labels\.(\w+)|\$value \| printf \"(%\.\df)\")\s*\}\}")


def render(template: str, labels: Mapping[str, str], value: float) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(2):
            return labels[m.group(2)]
        return m.group(3) % value

    out = _TEMPLATE.sub(sub, template)
    if "{{" in out:
        raise ValueError(f"cannot render template {template!r}")
    return out


def _burn_value(burn: Fraction) -> float:
    value = float(burn)
    tenth = value * 10 - int(value * 10)
    if abs(tenth - 0.5) < 1e-6:
        raise Unpredictable(f"burn {value} rounds ambiguously")
    return value


# -- SLO scenarios --------------------------------------------------------------------------------
def _track_series(spec: Spec, track: Track, step: int) -> list[dict[str, str]]:
    job = spec.triton_job
    per_step = track.per_step
    total = [p.rate * step for p in per_step]
    bad = [p.rate * p.bad * step for p in per_step]
    good = [t - b for t, b in zip(total, bad, strict=True)]
    model = {c.LABEL_MODEL: track.model}
    if track.kind in c.LLM_SLO_TYPES:
        from triton_sre.generate import llm

        series = counter_series(total), counter_series(good)
        return llm.slo_track_series(track.owner, lambda extra: _labels({**model, **extra}, job), *series)
    if track.kind == c.SLO_AVAILABILITY:
        return [
            {"series": c.NV_REQUEST_SUCCESS + _labels(model, job), "values": counter_series(good)},
            {
                "series": c.NV_REQUEST_FAILURE + _labels({**model, c.LABEL_REASON: _reason(track)}, job),
                "values": counter_series(bad),
            },
        ]
    if track.kind == c.LATENCY_SLI_HISTOGRAM:
        return [
            {"series": c.NV_REQUEST_SUCCESS + _labels(model, job), "values": counter_series(total)},
            *_histogram_series(track, job, step),
        ]
    duration = [p.rate * step * _latency(track, p) * 1_000_000 for p in per_step]
    series = [
        {"series": c.NV_REQUEST_SUCCESS + _labels(model, job), "values": counter_series(total)},
        {"series": c.NV_REQUEST_DURATION_US + _labels(model, job), "values": counter_series(duration)},
    ]
    if track.kind == c.LATENCY_SOURCE_SUMMARY:
        judged = {s.quantile for s in spec.slos if s.type == c.SLO_LATENCY}  # what the rules read
        for quantile in sorted(judged, key=float):
            values = [None, *(_summary_value(track, p, quantile) for p in per_step)]
            series.append(
                {
                    "series": c.NV_REQUEST_SUMMARY_US + _labels({**model, c.LABEL_QUANTILE: quantile}, job),
                    "values": gauge_series([None if v is None else v * 1_000_000 for v in values]),
                }
            )
    return series


def _histogram_series(track: Track, job: str, step: int) -> list[dict[str, str]]:
    """nv_inference_first_response_histogram_ms as Triton 26.01 exports it: default bounds plus
    the threshold's, +Inf, _count and _sum (ms)."""
    hist = c.NV_FIRST_RESPONSE_HISTOGRAM_MS
    model = {c.LABEL_MODEL: track.model}
    per_step = track.per_step
    counts = [p.rate * step for p in per_step]
    series = []
    for le in [*_buckets_ms(track), None]:
        within = []
        for p, n in zip(per_step, counts, strict=True):
            good_s, bad_s = _request_latencies(track, p)
            share = (1 - p.bad) * (le is None or good_s * 1000 <= le) + p.bad * (
                le is None or bad_s * 1000 <= le
            )
            within.append(n * share)
        bound = "+Inf" if le is None else str(le)
        series.append(
            {
                "series": f"{hist}_bucket" + _labels({**model, c.LABEL_LE: bound}, job),
                "values": counter_series(within),
            }
        )
    total_ms = []
    for p, n in zip(per_step, counts, strict=True):
        good_s, bad_s = _request_latencies(track, p)
        total_ms.append(n * ((1 - p.bad) * good_s + p.bad * bad_s) * 1000)
    series.append({"series": f"{hist}_count" + _labels(model, job), "values": counter_series(counts)})
    series.append({"series": f"{hist}_sum" + _labels(model, job), "values": counter_series(total_ms)})
    return series


def _scenario(
    spec: Spec, base_url: str, title: str, tracks: Sequence[Track], step: int, checks: Sequence[int]
) -> dict[str, Any]:
    """A promtool test group; check times move forward past instants too close to call."""
    length = max(len(t.per_step) for t in tracks) * step
    fixed = []
    for t in checks:
        for candidate in range(t, min(t + 10 * step, length + 1), step):
            try:
                for track in tracks:
                    for slo in spec.slos:
                        for p in predict(slo, track, step, candidate, spec.latency_metrics):
                            _burn_value(p.burn)
            except Unpredictable:
                continue
            fixed.append(candidate)
            break
        else:
            raise Unpredictable(f"{title}: no predictable check time near {t}s")
    tests = []
    for t in fixed:
        expected: dict[str, list[dict[str, Any]]] = {r.burn_alert_name(s): [] for s in spec.slos}
        for track in tracks:
            for slo in spec.slos:
                by_window = {rule["labels"][c.L_WINDOW]: rule for rule in r.burn_alerts(slo, base_url)}
                for p in predict(slo, track, step, t, spec.latency_metrics):
                    rule = by_window[p.tier_long]
                    labels = {**rule["labels"], c.LABEL_MODEL: p.model}
                    value = _burn_value(p.burn)
                    expected[r.burn_alert_name(slo)].append(
                        {
                            "exp_labels": dict(sorted(labels.items())),
                            "exp_annotations": {
                                k: render(v, labels, value) for k, v in rule["annotations"].items()
                            },
                        }
                    )
        for alertname, alerts in sorted(expected.items()):
            tests.append({"eval_time": format_duration(t), "alertname": alertname, "exp_alerts": alerts})
    return {
        "name": title,
        "interval": format_duration(step),
        "input_series": [s for track in tracks for s in _track_series(spec, track, step)],
        "alert_rule_test": tests,
    }


def sample_models(slo: SLO, n: int = 2) -> list[str]:
    """Up to `n` distinct model names the SLO's selector matches (best effort for regexes)."""
    sel = slo.models
    if sel.kind == "all":
        return [f"{slo.name}-model-{i}" for i in range(n)]
    if sel.kind == "list":
        return list(sel.names[:n])
    found: list[str] = []
    for alternative in _top_level_alternatives(sel.regex):
        base = re.sub(r"\\d[+*]?|\[0-9\][+*]?", "1", alternative)
        base = re.sub(r"\.[+*]|\[[^\]]*\][+*]?", "x", base)
        base = re.sub(r"[()^$?]|\\(?=.)", "", base)
        for candidate in (base, base + "x", base + "y", base + "1", base + "2"):
            if candidate and candidate not in found and re.fullmatch(sel.regex, candidate):
                found.append(candidate)
    return found[:n]


def _top_level_alternatives(regex: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in regex:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "|" and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    return [*parts, current]


def _rate(slo: SLO) -> Fraction:
    return max(Fraction(1), Fraction(repr(slo.min_request_rate)) * 10)


def _event_kind(slo: SLO) -> str | None:
    if slo.type == c.SLO_AVAILABILITY:
        return c.SLO_AVAILABILITY
    if slo.type in c.LLM_SLO_TYPES:
        return slo.type  # LLM histogram tracks (generate/llm.py)
    return None if slo.latency_sli == c.LATENCY_SLI_TIME_SLICE else c.LATENCY_SLI_HISTOGRAM


def _tier_variants(factor: float, budget: Fraction) -> list[tuple[str, Fraction]]:
    """(label, bad share) of the just-above and just-below tracks of one burn tier; a share over
    1 cannot be expressed (no more than every request can fail), so that track is left out."""
    scales = (("above", ABOVE), ("below", BELOW))
    variants = [(label, Fraction(repr(factor)) * budget * scale) for label, scale in scales]
    return [(label, bad) for label, bad in variants if bad <= 1]


def dropped_scenarios(spec: Spec) -> list[str]:
    """One line per SLO whose promtool scenarios `slo_scenarios` leaves out, saying which and why
    (`generate` prints them on stderr: an untested rule should not pass unnoticed)."""
    lines = []
    for slo in spec.slos:
        budget = Fraction(str(slo.budget))
        reasons = []
        if not sample_models(slo):
            queue = " and its queue-time test" if slo.type == c.SLO_LATENCY else ""
            reasons.append(
                f"all of them{queue} (no model name matching /{slo.models.regex}/ could be invented)"
            )
        elif _event_kind(slo) is None:
            reasons.append(
                f"the burn tiers' just-above/just-below ones (latency_sli: {c.LATENCY_SLI_TIME_SLICE} "
                "cannot express them; outage, recovery and guards are tested)"
            )
        else:
            for long, short, _share, _severity, factor in r.tiers(slo):
                kept = [label for label, _bad in _tier_variants(factor, budget)]
                at = f"at {factor:g}x a {r.num(slo.budget * 100)}% budget"
                if not kept:
                    reasons.append(f"those of the {long}/{short} tier ({at} it can never fire)")
                elif "above" not in kept:
                    reasons.append(
                        f"the just-above one of the {long}/{short} tier ({at} it fires only when almost "
                        "every request is bad)"
                    )
        if reasons:
            left_out = "; ".join(reasons)
            lines.append(f"{spec.source}: SLO {slo.name}: promtool scenarios left out of {TESTS}: {left_out}")
    return lines


def slo_scenarios(spec: Spec, slo: SLO, base_url: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(groups evaluated every minute, groups evaluated every 5 minutes) for one SLO."""
    budget = Fraction(str(slo.budget))
    rate = _rate(slo)
    models = sample_models(slo)
    fast: list[dict[str, Any]] = []
    slow: list[dict[str, Any]] = []
    if not models:
        return fast, slow  # a regex we cannot invent a matching name for: see README
    kind = _event_kind(slo)
    if kind is not None:
        for long, short, _share, severity, factor in r.tiers(slo):
            step = FAST_STEP if window_seconds(long) <= 6 * 3600 else SLOW_STEP
            lsteps = int(window_seconds(long)) // step
            history = min(lsteps, (3600 if step == FAST_STEP else 6 * 3600) // step)
            variants = _tier_variants(factor, budget)
            tracks = [
                Track(
                    slo,
                    models[i % len(models)],
                    (Phase(history, rate, Fraction(0)), Phase(lsteps + 3, rate, bad)),
                    kind,
                )
                for i, (_label, bad) in enumerate(variants)
            ]
            if not tracks:
                continue  # the tier cannot fire at all (dropped_scenarios says so)
            # with one model name available, above and below need groups of their own
            batches = [tracks] if len({t.model for t in tracks}) == len(tracks) else [[t] for t in tracks]
            for batch in batches:
                threshold = Fraction(repr(factor)) * budget
                title = f"{slo.name}: {severity} tier {long}/{short} at {factor:g}x: " + ", ".join(
                    f"{t.model} burns just {'above' if t.phases[1].bad > threshold else 'below'}"
                    for t in batch
                )
                group = _scenario(
                    spec, base_url, title, batch, step, [history * step, (history + lsteps + 2) * step]
                )
                (fast if step == FAST_STEP else slow).append(group)
    slices = slo.type == c.SLO_LATENCY and slo.latency_sli != c.LATENCY_SLI_HISTOGRAM
    kinds = [
        k
        for k in (
            kind,
            c.LATENCY_SLI_TIME_SLICE if slices else None,
            c.LATENCY_SOURCE_SUMMARY if slices and c.LATENCY_SOURCE_SUMMARY in spec.latency_metrics else None,
        )
        if k
    ]
    hour = 3600 // FAST_STEP
    model = models[0]
    for k in kinds:

        def group(title: str, phases: Sequence[Phase], checks: Sequence[int], k: str = k) -> dict[str, Any]:
            return _one_track(spec, base_url, Track(slo, model, tuple(phases), k), title, checks)

        fast.append(
            group(
                "total outage pages within minutes",
                [Phase(hour, rate, Fraction(0)), Phase(20, rate, Fraction(1))],
                [hour, hour + 10],
            )
        )
        fast.append(
            group(
                "recovery resolves",
                [
                    Phase(hour, rate, Fraction(0)),
                    Phase(15, rate, Fraction(1)),
                    Phase(50, rate, Fraction(0)),
                ],
                [hour + 14, hour + 25, hour + 15 + 40],
            )
        )
        if slo.min_request_rate > 0:
            low = Fraction(repr(slo.min_request_rate)) / 2
            fast.append(
                group(
                    "traffic below min_request_rate never fires",
                    [Phase(3 * hour, low, Fraction(1))],
                    [30, 3 * hour],
                )
            )
        zero = group(
            "zero traffic never fires, no NaN", [Phase(4 * hour, Fraction(0), Fraction(0))], [hour, 4 * hour]
        )
        zero["promql_expr_test"] = [
            {
                "expr": r.selector(c.rec_slo_errors(w), [(c.L_SLO, "=", slo.name)]),
                "eval_time": format_duration(4 * hour * FAST_STEP),
                "exp_samples": [],
            }
            for w in ("5m", "1h", "2h")
        ]
        fast.append(zero)
    if slo.type == c.SLO_LATENCY:
        fast.extend(_tail_scenarios(spec, slo, base_url, models[0], rate, budget, kinds))
    return fast, slow


def _tail_scenarios(
    spec: Spec, slo: SLO, base_url: str, model: str, rate: Fraction, budget: Fraction, kinds: Sequence[str]
) -> list[dict[str, Any]]:
    """The tail, not the average, decides: summary and histogram inputs whose average sits on the
    other side of the threshold from the SLO's quantile."""
    hour = 3600 // FAST_STEP
    p = c.quantile_name(slo.quantile)
    groups = []
    for k in kinds:
        if k == c.LATENCY_SOURCE_SUMMARY:  # _latency puts the average opposite the quantile
            tail_bad = [Phase(hour, rate, Fraction(0)), Phase(40, rate, Fraction(1))]
            tail_fine = [Phase(3 * hour, rate, Fraction(0))]
        elif k == c.LATENCY_SLI_HISTOGRAM:
            # half the requests at 1.5x the threshold keep the average under it; half the budget
            # of requests so slow that the average is over the threshold leaves the quantile under it
            tail_bad = [Phase(hour, rate, Fraction(0)), Phase(40, rate, Fraction(1, 2), Fraction(3, 2))]
            tail_fine = [Phase(3 * hour, rate, budget / 2, 3 / (budget / 2))]
        else:
            continue
        for title, phases, checks in (
            (f"average under the threshold, {p} over it: burns", tail_bad, [hour, hour + 30]),
            (f"{p} under the threshold, average over it: never burns", tail_fine, [hour, 2 * hour + 30]),
        ):
            groups.append(_one_track(spec, base_url, Track(slo, model, tuple(phases), k), title, checks))
    return groups


def _one_track(spec: Spec, base_url: str, track: Track, title: str, minutes: Sequence[int]) -> dict[str, Any]:
    """A one-model scenario evaluated every minute, checked at `minutes`."""
    name = f"{track.owner.name}: {title} ({track.kind})"
    return _scenario(spec, base_url, name, [track], FAST_STEP, [m * FAST_STEP for m in minutes])


# -- recording rules and operational alerts -------------------------------------------------------
def recording_tests(spec: Spec) -> list[dict[str, Any]]:
    """Known rates in, the exporter's formulas out; GPU duplicates are not double counted."""
    job = spec.triton_job
    gpu = {c.LABEL_GPU_UUID: "GPU-0"}
    per_min = {  # increments per minute of each counter (model total series)
        c.NV_INFERENCE_COUNT: 240,
        c.NV_EXEC_COUNT: 60,
        c.NV_REQUEST_SUCCESS: 120,
        c.NV_QUEUE_DURATION_US: 120 * 20_000,  # 20 ms per request
        c.NV_COMPUTE_INPUT_DURATION_US: 120 * 1_000,
        c.NV_COMPUTE_INFER_DURATION_US: 120 * 50_000,
        c.NV_COMPUTE_OUTPUT_DURATION_US: 120 * 2_000,
        c.NV_REQUEST_DURATION_US: 120 * 80_000,  # 80 ms: other = 7 ms
    }
    series = []
    for family, inc in per_min.items():
        series.append({"series": f"{family}{_labels({}, job)}", "values": f"0+{inc}x30"})
        # the same model's per-GPU series: must not be added to the total
        series.append({"series": f"{family}{_labels(gpu, job)}", "values": f"0+{inc}x30"})
    series.append(
        {
            "series": f"{c.NV_REQUEST_FAILURE}{_labels({c.LABEL_REASON: c.FAILURE_REASON_BACKEND}, job)}",
            "values": "0+30x30",
        }
    )
    base = {c.LABEL_JOB: job, c.LABEL_MODEL: TEST_MODEL, c.LABEL_VERSION: TEST_VERSION}
    inst = {**base, c.LABEL_INSTANCE: TEST_INSTANCE}
    stage_seconds = {
        c.STAGE_QUEUE: 0.02,
        c.STAGE_COMPUTE_INPUT: 0.001,
        c.STAGE_COMPUTE_INFER: 0.05,
        c.STAGE_COMPUTE_OUTPUT: 0.002,
        c.STAGE_OTHER: 0.007,
    }
    tests = []
    for level, labels in ((c.REC_LEVEL_INSTANCE, inst), (c.REC_LEVEL_MODEL, base)):
        checks = [
            (c.rec_batching_ratio(level), {}, 4.0),
            (c.rec_requests(level), {}, 2.5),
            (c.rec_error_ratio(level), {}, 0.2),
            (c.rec_rate(level, c.NV_INFERENCE_COUNT), {}, 4.0),
        ]
        checks += [(c.rec_stage_seconds(level), {c.L_STAGE: s}, v) for s, v in stage_seconds.items()]
        if level == c.REC_LEVEL_MODEL:  # the share is recorded per model version only
            checks += [(c.rec_stage_fraction(level), {c.L_STAGE: c.STAGE_QUEUE}, 0.25)]
        for name, extra, value in checks:
            tests.append(
                {
                    # round(): compare the formula, not the last bit of float division
                    "expr": f"round({r.selector(name, [(k, '=', v) for k, v in extra.items()])}, 0.0001)",
                    "eval_time": "20m",
                    "exp_samples": [{"labels": _plain({**labels, **extra}), "value": value}],
                }
            )
    return [
        {
            "name": "recording rules mirror the exporter",
            "interval": "1m",
            "input_series": series,
            "promql_expr_test": tests,
        },
        latency_quantile_test(spec),
    ]


def latency_quantile_test(spec: Spec) -> dict[str, Any]:
    """Quantile rules: Triton's summary per instance, the worst instance per model; the histogram
    (26.01's family, merged across instances) wins over summaries; NaN summaries give nothing."""
    job = spec.triton_job
    a, b = TEST_INSTANCE, "triton-1:8002"
    summary_model, hist_model, idle_model = "summarized", "histogrammed", "idle"
    # (instance, request µs, queue µs) per quantile for the summary model: b is the worse one
    summaries = {a: (100_000, 10_000), b: (300_000, 40_000)}
    series = []
    for inst, (request_us, queue_us) in summaries.items():
        for i, quantile in enumerate(c.TRITON_SUMMARY_QUANTILES):
            for measure_us, family in (
                (request_us, c.NV_REQUEST_SUMMARY_US),
                (queue_us, c.NV_QUEUE_SUMMARY_US),
            ):
                labels = _labels({c.LABEL_MODEL: summary_model, c.LABEL_QUANTILE: quantile}, job, inst)
                series.append({"series": family + labels, "values": f"{measure_us * (i + 1)}x30"})
                idle = _labels({c.LABEL_MODEL: idle_model, c.LABEL_QUANTILE: quantile}, job, inst)
                series.append({"series": family + idle, "values": " ".join(["NaN"] * 31)})
    # histogram model: 60 requests/min on each instance, all within 100 ms on a, within 100-500 ms on b
    hist = c.NV_FIRST_RESPONSE_HISTOGRAM_MS
    for inst, per_bound in ((a, (60, 60, 60, 60, 60)), (b, (0, 60, 60, 60, 60))):
        for bound, count in zip((*HISTOGRAM_BOUNDS_MS, "+Inf"), per_bound, strict=True):
            labels = _labels({c.LABEL_MODEL: hist_model, c.LABEL_LE: str(bound)}, job, inst)
            series.append({"series": f"{hist}_bucket{labels}", "values": f"0+{count}x30"})
        # its summary (9 s) must lose to the histogram
        labels = _labels({c.LABEL_MODEL: hist_model, c.LABEL_QUANTILE: "0.99"}, job, inst)
        series.append({"series": c.NV_REQUEST_SUMMARY_US + labels, "values": "9000000x30"})
    tests = []

    def expect(name: str, quantile: str, model: str, inst: str | None, source: str, value: float) -> None:
        labels = {c.LABEL_JOB: job, c.LABEL_MODEL: model, c.LABEL_VERSION: TEST_VERSION}
        if inst:
            labels[c.LABEL_INSTANCE] = inst
        labels.update({c.LABEL_QUANTILE: quantile, c.L_LATENCY_SOURCE: source})
        sel = [(c.LABEL_MODEL, "=", model), (c.LABEL_QUANTILE, "=", quantile)]
        if inst:
            sel.append((c.LABEL_INSTANCE, "=", inst))
        tests.append(
            {
                "expr": f"round({r.selector(name, sel)}, 0.0001)",
                "eval_time": "20m",
                "exp_samples": [{"labels": _plain(labels), "value": value}],
            }
        )

    inst_level, model_level = c.REC_LEVEL_INSTANCE, c.REC_LEVEL_MODEL
    for measure, index in ((c.LATENCY_REQUEST, 0), (c.LATENCY_QUEUE, 1)):
        for quantile in c.LATENCY_QUANTILES:
            factor = c.TRITON_SUMMARY_QUANTILES.index(quantile) + 1
            for inst, values in summaries.items():
                seconds = values[index] * factor / 1e6
                expect(
                    c.rec_latency_quantile(inst_level, measure),
                    quantile,
                    summary_model,
                    inst,
                    "summary",
                    seconds,
                )
            worst = max(v[index] for v in summaries.values()) * factor / 1e6
            expect(
                c.rec_latency_quantile(model_level, measure), quantile, summary_model, None, "summary", worst
            )
        tests.append(
            {
                "expr": r.selector(
                    c.rec_latency_quantile(model_level, measure), [(c.LABEL_MODEL, "=", idle_model)]
                ),
                "eval_time": "20m",
                "exp_samples": [],
            }
        )
    # merged: 120 requests/min, 60 within 100 ms, 120 within 500 ms (linear inside a bucket)
    merged = {"0.5": 0.1, "0.95": 0.46, "0.99": 0.492}
    for quantile, seconds in merged.items():
        expect(
            c.rec_latency_quantile(model_level, c.LATENCY_REQUEST),
            quantile,
            hist_model,
            None,
            "histogram",
            seconds,
        )
    expect(c.rec_latency_quantile(inst_level, c.LATENCY_REQUEST), "0.99", hist_model, a, "histogram", 0.099)
    expect(c.rec_latency_quantile(inst_level, c.LATENCY_REQUEST), "0.99", hist_model, b, "histogram", 0.496)
    return {
        "name": "latency quantiles: summaries per instance, worst instance per model, histograms merged",
        "interval": "1m",
        "input_series": series,
        "promql_expr_test": tests,
    }


def _plain(labels: Mapping[str, str]) -> str:
    return "{" + ", ".join(f"{k}={r.q(v)}" for k, v in sorted(labels.items())) + "}"


def operational_tests(spec: Spec, base_url: str) -> list[dict[str, Any]]:
    rules = {
        (rule["alert"], rule["labels"].get(c.L_SLO)): rule
        for g in r.operational_groups(spec, base_url)["groups"]
        for rule in g["rules"]
    }
    tj, ej = spec.triton_job, spec.exporter_job
    groups = []

    def alert_test(
        title: str,
        alert: str,
        series: list[dict[str, str]],
        at: str,
        labels: Mapping[str, str],
        value: float,
        slo: str | None = None,
    ) -> None:
        rule = rules[(alert, slo)]
        all_labels = {**labels, **rule["labels"]}
        groups.append(
            {
                "name": title,
                "interval": "1m",
                "input_series": series,
                "alert_rule_test": [
                    {"eval_time": "1m", "alertname": alert, "exp_alerts": []},
                    {
                        "eval_time": at,
                        "alertname": alert,
                        "exp_alerts": [
                            {
                                "exp_labels": dict(sorted(all_labels.items())),
                                "exp_annotations": {
                                    k: _render_any(v, all_labels, value)
                                    for k, v in rule["annotations"].items()
                                },
                            }
                        ],
                    },
                ],
            }
        )

    t_inst = {c.LABEL_JOB: tj, c.LABEL_INSTANCE: TEST_INSTANCE}
    e_inst = {c.LABEL_JOB: ej, c.LABEL_INSTANCE: TEST_EXPORTER_INSTANCE}
    mv = {c.LABEL_MODEL: TEST_MODEL, c.LABEL_VERSION: TEST_VERSION}
    alert_test(
        "Triton down",
        c.ALERT_SERVER_DOWN,
        [{"series": f"up{_plain(t_inst)}", "values": "0x10"}],
        "5m",
        t_inst,
        0,
    )
    alert_test(
        "exporter down",
        c.ALERT_EXPORTER_DOWN,
        [{"series": f"up{_plain(e_inst)}", "values": "0x10"}],
        "8m",
        e_inst,
        0,
    )
    alert_test(
        "exporter cannot read Triton",
        c.ALERT_EXPORTER_POLL_FAILING,
        [{"series": f"{c.M_UP}{_plain(e_inst)}", "values": "0x20"}],
        "15m",
        e_inst,
        0,
    )
    runbook = c.RUNBOOK_PYTHON_MODEL_ERROR
    unavailable = {**e_inst, **mv, c.L_RUNBOOK: runbook}
    alert_test(
        "model unavailable links its diagnosed runbook",
        c.ALERT_MODEL_UNAVAILABLE,
        [{"series": f"{c.M_MODEL_UNAVAILABLE}{_plain(unavailable)}", "values": "1x10"}],
        "5m",
        unavailable,
        1,
    )
    loading = {**e_inst, **mv, c.L_STATE: c.STATE_LOADING}
    alert_test(
        "model stuck loading",
        c.ALERT_MODEL_STUCK_LOADING,
        [{"series": f"{c.M_MODEL_STATE}{_plain(loading)}", "values": "1x30"}],
        "20m",
        loading,
        1,
    )
    pending = {**t_inst, **mv}
    alert_test(
        "pending requests growing",
        c.ALERT_PENDING_REQUESTS_GROWING,
        [
            {
                "series": f"{c.NV_PENDING_REQUEST_COUNT}{_plain(pending)}",
                "values": f"{spec.operational.pending_requests}+1x40",
            }
        ],
        "20m",
        pending,
        spec.operational.pending_requests + 10,
    )
    gpu = {**t_inst, c.LABEL_GPU_UUID: "GPU-0"}
    ratio = min(0.999, spec.operational.gpu_memory_ratio + (1 - spec.operational.gpu_memory_ratio) / 2)
    alert_test(
        "GPU memory near limit",
        c.ALERT_GPU_MEMORY_NEAR_LIMIT,
        [
            {"series": f"{c.NV_GPU_MEMORY_USED_BYTES}{_plain(gpu)}", "values": f"{ratio * 1e10:.0f}x20"},
            {"series": f"{c.NV_GPU_MEMORY_TOTAL_BYTES}{_plain(gpu)}", "values": "10000000000x20"},
        ],
        "15m",
        gpu,
        ratio,
    )
    # Batching: a model with dynamic batching configured executes one inference at a time under load.
    counters = [
        {"series": f"{f}{_plain(pending)}", "values": "0+600x40"}
        for f in (c.NV_INFERENCE_COUNT, c.NV_EXEC_COUNT, c.NV_REQUEST_SUCCESS)
    ] + [
        {"series": f"{c.NV_PENDING_REQUEST_COUNT}{_plain(pending)}", "values": "3x40"},
        {
            "series": f"{c.M_MODEL_DYNAMIC_BATCHING}{_plain({**e_inst, c.LABEL_MODEL: mv[c.LABEL_MODEL]})}",
            "values": "1x40",
        },
    ]
    alert_test(
        "batching ineffective under load",
        c.ALERT_BATCHING_INEFFECTIVE,
        counters,
        "30m",
        {c.LABEL_JOB: tj, **mv},
        1.0,
    )
    # Traffic but neither summaries nor histograms: asks for quantiles; a summarised model does not.
    summarised = {**t_inst, c.LABEL_MODEL: "summarised", c.LABEL_VERSION: TEST_VERSION}
    alert_test(
        "traffic without latency quantiles",
        c.ALERT_LATENCY_QUANTILES_MISSING,
        [
            {"series": f"{c.NV_REQUEST_SUCCESS}{_plain(pending)}", "values": "0+60x40"},
            {"series": f"{c.NV_REQUEST_SUCCESS}{_plain(summarised)}", "values": "0+60x40"},
            {"series": f"{c.NV_REQUEST_SUMMARY_US}_count{_plain(summarised)}", "values": "0+60x40"},
        ],
        "25m",
        {c.LABEL_JOB: tj, **mv},
        1.0,
    )
    # Queue time: above the share of each latency SLO's threshold (or the fallback threshold).
    latency = [s for s in spec.slos if s.type == c.SLO_LATENCY]
    fallback_model = TEST_MODEL
    cases: list[tuple[str, str, float]] = []  # (title, model, seconds of queue per request)
    for slo in latency:
        names = sample_models(slo, 1)
        if names:
            cases.append((slo.name, names[0], slo.threshold_s * slo.queue_time_share * 2))
    if (c.ALERT_QUEUE_TIME_HIGH, None) in rules and not any(
        s.models.pattern is None or re.fullmatch(s.models.pattern, fallback_model) for s in latency
    ):
        cases.append(("fallback", fallback_model, spec.operational.queue_time_threshold_s * 2))
    for title, model_name, queue_s in cases:
        labels = {**t_inst, c.LABEL_MODEL: model_name, c.LABEL_VERSION: TEST_VERSION}
        expected = []
        covering = [
            s for s in latency if s.models.pattern is None or re.fullmatch(s.models.pattern, model_name)
        ]
        limits = [(s.name, s.threshold_s * s.queue_time_share) for s in covering]
        if not covering:
            limits = [(None, spec.operational.queue_time_threshold_s)]
        for slo_name, limit in limits:
            if queue_s <= limit * 1.01:
                continue
            rule = rules[(c.ALERT_QUEUE_TIME_HIGH, slo_name)]
            all_labels = {**labels, c.L_STAGE: c.STAGE_QUEUE, **rule["labels"]}
            expected.append(
                {
                    "exp_labels": dict(sorted(all_labels.items())),
                    "exp_annotations": {
                        k: _render_any(v, all_labels, queue_s) for k, v in rule["annotations"].items()
                    },
                }
            )
        groups.append(
            {
                "name": f"queue time high ({title})",
                "interval": "1m",
                "input_series": [
                    {"series": f"{c.NV_REQUEST_SUCCESS}{_plain(labels)}", "values": "0+60x40"},
                    {
                        "series": f"{c.NV_QUEUE_DURATION_US}{_plain(labels)}",
                        "values": f"0+{60 * round(queue_s * 1e6)}x40",
                    },
                ],
                "alert_rule_test": [
                    {"eval_time": "1m", "alertname": c.ALERT_QUEUE_TIME_HIGH, "exp_alerts": []},
                    {"eval_time": "25m", "alertname": c.ALERT_QUEUE_TIME_HIGH, "exp_alerts": expected},
                ],
            }
        )
    return groups


_ANY_VALUE = re.compile(r"\{\{\s*\$value \| (humanizePercentage|printf \"(%\.\df)\")\s*\}\}")


def _render_any(template: str, labels: Mapping[str, str], value: float) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(1) == "humanizePercentage":
            return f"{value * 100:.4g}%"
        return m.group(2) % value

    return render(_ANY_VALUE.sub(sub, template), labels, value)


def capacity_tests(spec: Spec, base_url: str) -> list[dict[str, Any]]:
    """Each capacity alert fires on series shaped like the exporter's, and stays silent just below."""
    rules = {rule["alert"]: rule for g in r.capacity_groups(spec, base_url)["groups"] for rule in g["rules"]}
    e_inst = {c.LABEL_JOB: spec.exporter_job, c.LABEL_INSTANCE: TEST_EXPORTER_INSTANCE}

    def case(title: str, alert: str, series: list[dict[str, str]], silent: list[dict[str, str]],
             at: str, labels: Mapping[str, str], value: float) -> dict[str, Any]:
        rule = rules[alert]
        all_labels = {**labels, **rule["labels"]}
        expected = {
            "exp_labels": dict(sorted(all_labels.items())),
            "exp_annotations": {k: _render_any(v, all_labels, value) for k, v in rule["annotations"].items()},
        }
        return {
            "name": title,
            "interval": "1m",
            "input_series": series + silent,
            "alert_rule_test": [
                {"eval_time": "0m", "alertname": alert, "exp_alerts": []},  # pending, not firing
                {"eval_time": at, "alertname": alert, "exp_alerts": [expected]},
            ],
        }

    low, ok = {**e_inst, c.LABEL_GPU_UUID: "GPU-0"}, {**e_inst, c.LABEL_GPU_UUID: "GPU-1"}
    largest = 4_000_000_000
    limit = spec.operational.startup_probe_budget_s * spec.operational.load_slow_share
    slow, quick = {**e_inst, c.LABEL_MODEL: TEST_MODEL, c.LABEL_VERSION: TEST_VERSION}, {
        **e_inst, c.LABEL_MODEL: "quick", c.LABEL_VERSION: TEST_VERSION}
    return [
        case(
            "headroom below the largest resident model",
            c.ALERT_GPU_MEMORY_HEADROOM_LOW,
            [
                {"series": f"{c.M_GPU_MEMORY_HEADROOM_BYTES}{_plain(low)}", "values": f"{largest - 1}x30"},
                {"series": f"{c.M_GPU_LARGEST_MODEL_BYTES}{_plain(low)}", "values": f"{largest}x30"},
            ],
            [  # exactly the largest model free: it fits, no alert
                {"series": f"{c.M_GPU_MEMORY_HEADROOM_BYTES}{_plain(ok)}", "values": f"{largest}x30"},
                {"series": f"{c.M_GPU_LARGEST_MODEL_BYTES}{_plain(ok)}", "values": f"{largest}x30"},
            ],
            "20m",
            low,
            largest - 1,
        ),
        case(
            "a load longer than the share of the startup-probe budget",
            c.ALERT_MODEL_LOAD_SLOW,
            [{"series": f"{c.M_MODEL_LOAD_SECONDS}{_plain(slow)}", "values": f"{limit + 1:g}x10"}],
            [{"series": f"{c.M_MODEL_LOAD_SECONDS}{_plain(quick)}", "values": f"{limit:g}x10"}],
            "5m",
            slow,
            limit + 1,
        ),
    ]


# -- test files -----------------------------------------------------------------------------------
def test_files(spec: Spec, base_url: str) -> dict[str, dict[str, Any]]:
    """File name (under alerts/tests/) -> promtool test document."""
    fast: list[dict[str, Any]] = []
    slow: list[dict[str, Any]] = []
    for slo in spec.slos:
        f, s = slo_scenarios(spec, slo, base_url)
        fast += f
        slow += s
    from triton_sre.generate import llm

    documents = {
        llm.LLM_TEST_FILE: llm.test_file(spec, base_url),
        "triton-slo-rules.test.yaml": {
            "rule_files": [f"../{r.SLO_FILE}"],
            "evaluation_interval": format_duration(FAST_STEP),
            "tests": fast,
        },
        "triton-slo-rules-long-windows.test.yaml": {
            "rule_files": [f"../{r.SLO_FILE}"],
            "evaluation_interval": format_duration(SLOW_STEP),
            "tests": slow,
        },
        "triton-recording-rules.test.yaml": {
            "rule_files": [f"../{r.RECORDING_FILE}"],
            "evaluation_interval": "1m",
            "tests": recording_tests(spec),
        },
        "triton-alerts.test.yaml": {
            "rule_files": [f"../{r.RECORDING_FILE}", f"../{r.OPERATIONAL_FILE}"],
            "evaluation_interval": "1m",
            "tests": operational_tests(spec, base_url),
        },
        "triton-capacity-alerts.test.yaml": {
            "rule_files": [f"../{r.CAPACITY_FILE}"],
            "evaluation_interval": "1m",
            "tests": capacity_tests(spec, base_url),
        },
    }
    return {name: with_eval_order(doc, r.rule_files(spec, base_url)) for name, doc in documents.items()}


def with_eval_order(document: dict[str, Any], files: Mapping[str, r.RuleFile]) -> dict[str, Any]:
    """`document` with `group_eval_order`: every group of its rule files, each after the groups it
    reads (rules.eval_order). Without it promtool evaluates groups in a random order at each step,
    and a rule reading another group's series sees this step's value or the previous one's."""
    loaded = {g["name"] for path in document["rule_files"] for g in files[path.split("/")[-1]]["groups"]}
    order = [name for name in r.eval_order(files) if name in loaded]
    return {"rule_files": document["rule_files"], "group_eval_order": order, **document}
