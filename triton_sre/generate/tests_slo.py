"""promtool scenarios of the SLO rules (slo_rules.py), predicted by calc.py.

Every scenario is a piecewise-constant traffic history written as Prometheus' expanding series
notation. The expected alerts are *predicted* from that history with exact arithmetic (the bad
share of each window, the request rate of each window, the tier thresholds), so the tests prove
that the PromQL implements the arithmetic: windows, both-window conditions, the minimum-rate guard,
no NaN at zero traffic. Check times are chosen so that no tier other than the one under test is
within 1 % of its threshold, and the tier under test sits 2 % above or below it. Other SLOs on the
same model judge the same track: where one of them burns within 0.5 % of a tier, or at a rounding tie
of the annotation's one decimal, at every check time (99.0 % and 99.6 % on one model: 3x × 1.02 of
the first is 7.65x of the second), the track moves further off its threshold (`MARGINS`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator, Sequence
from fractions import Fraction
from typing import Any

from triton_sre import conventions as c
from triton_sre.durations import format_duration
from triton_sre.generate.annotations import render
from triton_sre.generate.calc import (
    ABOVE,
    BELOW,
    FAST_STEP,
    SLOW_STEP,
    TESTS,
    Phase,
    Track,
    Unpredictable,
    burn_value,
    busy_rate,
    predict,
)
from triton_sre.generate.slo_models import SLOIndex, sample_models
from triton_sre.generate.slo_rules import SLO_FILE, burn_alert_name, tiers
from triton_sre.generate.tests_slo_series import track_series
from triton_sre.promql import num, selector
from triton_sre.slo import SLO, Spec, window_seconds

log = logging.getLogger(__name__)


def _scenario(
    spec: Spec, base_url: str, title: str, tracks: Sequence[Track], step: int, checks: Sequence[int]
) -> dict[str, Any]:
    """A promtool test group; check times move forward past instants too close to call."""
    length = max(len(t.per_step) for t in tracks) * step
    judges = SLOIndex.of(spec)
    fixed = []
    for t in checks:
        for candidate in range(t, min(t + 10 * step, length + 1), step):
            try:
                for track in tracks:
                    for slo in judges.covering(track.model):
                        for p in predict(slo, track, step, candidate, spec.latency_metrics):
                            burn_value(p.burn)
            except Unpredictable:
                continue
            fixed.append(candidate)
            break
        else:
            raise Unpredictable(f"{title}: no predictable check time near {t}s")
    tests = []
    for t in fixed:
        expected: dict[str, list[dict[str, Any]]] = {name: [] for name in judges.alert_names}
        for track in tracks:
            for slo in judges.covering(track.model):
                for p in predict(slo, track, step, t, spec.latency_metrics):
                    rule = judges.burn_rule(slo, base_url, p.tier_long)
                    labels = {**rule["labels"], c.LABEL_MODEL: p.model}
                    value = burn_value(p.burn)
                    expected[burn_alert_name(slo)].append(
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
        "input_series": [
            s for track in tracks for s in track_series(spec.triton_job, track, step, judges.quantiles)
        ],
        "alert_rule_test": tests,
    }


def _rate(slo: SLO) -> Fraction:
    return busy_rate(slo.min_request_rate)


def _tier_groups(
    spec: Spec,
    base_url: str,
    slo: SLO,
    models: Sequence[str],
    kind: str,
    tier: tuple[str, str, str, float],
    variants: Sequence[tuple[str, Fraction]],
    rate_scale: Fraction = Fraction(1),
) -> list[dict[str, Any]]:
    """The just-above/just-below groups of one burn tier (`variants`: their bad shares)."""
    long, short, severity, factor = tier
    step = FAST_STEP if window_seconds(long) <= 6 * 3600 else SLOW_STEP
    lsteps = int(window_seconds(long)) // step
    history = min(lsteps, (3600 if step == FAST_STEP else 6 * 3600) // step)
    rate = _rate(slo) * rate_scale
    tracks = [
        Track(
            slo,
            models[i % len(models)],
            (Phase(history, rate, Fraction(0)), Phase(lsteps + 3, rate, bad)),
            kind,
        )
        for i, (_label, bad) in enumerate(variants)
    ]
    # with one model name available, above and below need groups of their own
    batches = [tracks] if len({t.model for t in tracks}) == len(tracks) else [[t] for t in tracks]
    threshold = Fraction(repr(factor)) * Fraction(str(slo.budget))
    groups = []
    for batch in batches:
        title = f"{slo.name}: {severity} tier {long}/{short} at {factor:g}x: " + ", ".join(
            f"{t.model} burns just {'above' if t.phases[1].bad > threshold else 'below'}" for t in batch
        )
        groups.append(
            _scenario(spec, base_url, title, batch, step, [history * step, (history + lsteps + 2) * step])
        )
    return groups


def _first_predictable(build: Any, choices: Sequence[tuple[Any, ...]]) -> Any:
    """`build(*choice)` for the first choice whose check times are all predictable; None if none is."""
    for choice in choices:
        try:
            return build(*choice)
        except Unpredictable:
            continue
    return None


def _left_out(spec: Spec, slo: SLO, what: str, model: str) -> None:
    log.warning(
        "%s: SLO %s: the %s scenario is left out of %s: at every check time it could use, an SLO on "
        "model %s sits within 1 %% of a threshold or on a rounding tie (SLOs sharing a model)",
        spec.source,
        slo.name,
        what,
        TESTS,
        model,
    )


def _event_kind(slo: SLO) -> str | None:
    if slo.type == c.SLO_AVAILABILITY:
        return c.SLO_AVAILABILITY
    if slo.type in c.LLM_SLO_TYPES:
        return slo.type  # LLM histogram tracks (generate/llm.py)
    return None if slo.latency_sli == c.LATENCY_SLI_TIME_SLICE else c.LATENCY_SLI_HISTOGRAM


# How far the just-above/just-below tracks sit from a tier's threshold: the first that another SLO on
# the same model leaves predictable (the first is the usual one; the others only where it is not).
# Each after the first is d % off plus 1/7 %: another SLO's burn (a ratio of round budgets) then never
# lands on a rounding tie of the annotation's one decimal (7.65 is ambiguous, 7.6607... is not).
_MOVED = tuple(Fraction(7 * d + 1, 700) for d in (4, 7, 11, 15, 20, 26, 33, 41))
MARGINS = ((ABOVE, BELOW), *((1 + m, 1 - m) for m in _MOVED))
# Where another SLO's traffic floor sits within 1 % of a track's request rate at every check time,
# the track's rates are scaled (up where the scenario needs traffic, down where it must stay under
# its own floor): the first scale is the usual one.
RATE_SCALES_UP = (Fraction(1), Fraction(3, 2), Fraction(9, 4), Fraction(37, 10))
RATE_SCALES_DOWN = (Fraction(1), Fraction(2, 3), Fraction(4, 9), Fraction(27, 100))


def _tier_variants(
    factor: float, budget: Fraction, margin: tuple[Fraction, Fraction] = MARGINS[0]
) -> list[tuple[str, Fraction]]:
    """(label, bad share) of the just-above and just-below tracks of one burn tier; a share over
    1 cannot be expressed (no more than every request can fail), so that track is left out."""
    scales = (("above", margin[0]), ("below", margin[1]))
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
            for long, short, _share, _severity, factor in tiers(slo):
                kept = [label for label, _bad in _tier_variants(factor, budget)]
                at = f"at {factor:g}x a {num(slo.budget * 100)}% budget"
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
        for long, short, _share, severity, factor in tiers(slo):
            step = FAST_STEP if window_seconds(long) <= 6 * 3600 else SLOW_STEP
            labels = [label for label, _bad in _tier_variants(factor, budget)]
            if not labels:
                continue  # the tier cannot fire at all (dropped_scenarios says so)
            tier = (long, short, severity, factor)
            groups = _first_predictable(
                lambda margin, scale, tier=tier: _tier_groups(
                    spec, base_url, slo, models, kind, tier, _tier_variants(tier[3], budget, margin), scale
                ),
                [
                    (margin, scale)
                    for scale in RATE_SCALES_UP
                    for margin in MARGINS
                    # a margin that would leave a variant out is not the same scenario
                    if [label for label, _bad in _tier_variants(factor, budget, margin)] == labels
                ],
            )
            if groups is None:
                _left_out(spec, slo, f"{severity} tier {long}/{short} at {factor:g}x", models[0])
                continue
            (fast if step == FAST_STEP else slow).extend(groups)
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

        def group(
            title: str,
            phases: Sequence[Phase],
            checks: Sequence[int],
            k: str = k,
            scales: Sequence[Fraction] = RATE_SCALES_UP,
        ) -> dict[str, Any] | None:
            return _one_track(spec, base_url, Track(slo, model, tuple(phases), k), title, checks, scales)

        for g in (
            group(
                "total outage pages within minutes",
                [Phase(hour, rate, Fraction(0)), Phase(20, rate, Fraction(1))],
                [hour, hour + 10],
            ),
            group(
                "recovery resolves",
                [
                    Phase(hour, rate, Fraction(0)),
                    Phase(15, rate, Fraction(1)),
                    Phase(50, rate, Fraction(0)),
                ],
                [hour + 14, hour + 25, hour + 15 + 40],
            ),
        ):
            if g is not None:
                fast.append(g)
        if slo.min_request_rate > 0:
            low = Fraction(repr(slo.min_request_rate)) / 2
            guard = group(
                "traffic below min_request_rate never fires",
                [Phase(3 * hour, low, Fraction(1))],
                [30, 3 * hour],
                scales=RATE_SCALES_DOWN,
            )
            if guard is not None:
                fast.append(guard)
        zero = group(
            "zero traffic never fires, no NaN", [Phase(4 * hour, Fraction(0), Fraction(0))], [hour, 4 * hour]
        )
        if zero is not None:
            zero["promql_expr_test"] = [
                {
                    "expr": selector(c.rec_slo_errors(w), [(c.L_SLO, "=", slo.name)]),
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
        if k == c.LATENCY_SOURCE_SUMMARY:  # average_latency puts the average opposite the quantile
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
            g = _one_track(spec, base_url, Track(slo, model, tuple(phases), k), title, checks)
            if g is not None:
                groups.append(g)
    return groups


def _one_track(
    spec: Spec,
    base_url: str,
    track: Track,
    title: str,
    minutes: Sequence[int],
    scales: Sequence[Fraction] = RATE_SCALES_UP,
) -> dict[str, Any] | None:
    """A one-model scenario evaluated every minute, checked at `minutes`; its rates scaled by the first
    of `scales` that other SLOs on the model leave predictable (None, said on the log, if none does)."""
    name = f"{track.owner.name}: {title} ({track.kind})"
    checks = [m * FAST_STEP for m in minutes]

    def build(scale: Fraction) -> dict[str, Any]:
        phases = tuple(dataclasses.replace(p, rate=p.rate * scale) for p in track.phases)
        scaled = track if scale == 1 else dataclasses.replace(track, phases=phases)
        return _scenario(spec, base_url, name, [scaled], FAST_STEP, checks)

    group = _first_predictable(build, [(scale,) for scale in scales])
    if group is None:
        _left_out(spec, track.owner, f"'{title}' ({track.kind})", track.model)
    return group


FAST_TEST_FILE = "triton-slo-rules.test.yaml"
SLOW_TEST_FILE = "triton-slo-rules-long-windows.test.yaml"


def test_files(spec: Spec, base_url: str) -> dict[str, dict[str, Any]]:
    """Test file name (under alerts/tests/) -> promtool document: the fast tiers at FAST_STEP, the
    1d/3d tiers at SLOW_STEP (their own file: a 1-minute step over days would be slow)."""
    heads, groups = test_stream(spec, base_url)
    docs: dict[str, dict[str, Any]] = {name: {**head, "tests": []} for name, head in heads.items()}
    for name, group in groups:
        docs[name]["tests"].append(group)
    return docs


def test_stream(spec: Spec, base_url: str) -> tuple[dict[str, dict[str, Any]], Iterator[tuple[str, Any]]]:
    """test_files as families.TestStream: the documents without `tests`, then (file, group) pairs,
    one SLO's groups built at a time."""
    heads = {
        name: {"rule_files": [f"../{SLO_FILE}"], "evaluation_interval": format_duration(step)}
        for name, step in ((FAST_TEST_FILE, FAST_STEP), (SLOW_TEST_FILE, SLOW_STEP))
    }
    return heads, _groups(spec, base_url)


def _groups(spec: Spec, base_url: str) -> Iterator[tuple[str, Any]]:
    for slo in spec.slos:
        fast, slow = slo_scenarios(spec, slo, base_url)
        yield from ((FAST_TEST_FILE, group) for group in fast)
        yield from ((SLOW_TEST_FILE, group) for group in slow)
