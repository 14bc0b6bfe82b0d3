"""The canary verdict from per-interval samples of both sides (the sides and their queries are
`sides.py`'s). Pure: samples are lists.

A figure fails when the candidate is worse by more than its margin AND the one-sided Mann-Whitney
test says the difference is not noise (p < alpha). The batching ratio is left unjudged when the
candidate had less traffic, or when the exporter says no dynamic batcher runs (`at_lower_load`; its
PromQL form, for the guard's rules and the Argo / Flagger templates, is `comparable_load`,
`batcher_said` and `no_batcher`); the reason names restarts, replaced pods and ensembles.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from triton_sre import conventions as c
from triton_sre.durations import format_duration
from triton_sre.promql import Matcher, by, num, on, selector
from triton_sre.rollout.figures import FIGURES, HIGHER, Figure
from triton_sre.rollout.sides import ENSEMBLE_FIGURES, TRAFFIC, Side
from triton_sre.rollout.spec import RolloutSpec
from triton_sre.rollout.stats import mann_whitney_greater, mean, median

__all__ = [
    "BATCHER_SAID",
    "BATCHER_UNSAID",
    "BATCHING_AFTER_FAILURES",
    "BATCHING_AT_LOWER_LOAD",
    "NO_BATCHER",
    "NO_DATA",
    "FigureResult",
    "Verdict",
    "at_lower_load",
    "batcher_said",
    "batching_note",
    "comparable_load",
    "judge",
    "judge_figure",
    "limit_of",
    "no_batcher",
    "unread_on_candidate",
    "with_ensembles",
    "with_restarts",
]


@dataclass(frozen=True)
class FigureResult:
    figure: Figure
    margin: float
    baseline: float | None  # median of the per-interval samples
    candidate: float | None
    p_value: float | None
    samples: tuple[int, int]
    verdict: str  # ROLLOUT_PASS / ROLLOUT_FAIL, or "no data" when a side has too few samples

    @property
    def difference(self) -> float | None:
        if self.baseline is None or self.candidate is None:
            return None
        return self.candidate - self.baseline

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.figure.name,
            "unit": self.figure.unit,
            "worse": self.figure.worse,
            "margin": self.margin,
            "margin_kind": "relative" if self.figure.relative else "absolute",
            "baseline": self.baseline,
            "candidate": self.candidate,
            "difference": self.difference,
            "p_value": self.p_value,
            "samples": list(self.samples),
            "verdict": self.verdict,
        }


NO_DATA = "no data"
BATCHING_AFTER_FAILURES = (
    "lowered by the failed requests: Triton counts a failed batch as an execution, "
    "its requests not as inferences"
)
"""Said of a batching ratio that fails beside the error ratio: Triton adds a batch's size to
nv_inference_count only for successful requests (InferenceStatsAggregator::UpdateSuccess) but counts
every execution the backend reports in nv_inference_exec_count (UpdateInferBatchStats), failed or not:
a failing candidate's ratio drops, below 1 when most batches fail, whatever it batches."""


BATCHING_AT_LOWER_LOAD = "not judged"
"""The batching ratio's verdict when the candidate had less traffic than the baseline by more than the
figure's margin: a dynamic batcher forms its batches from the requests waiting, so fewer requests a
second make smaller batches whatever the version (journey27: an identical version 3 at half version 1's
traffic batched 1.22 against 1.57 and failed on it). A canary almost always has less traffic."""


def at_lower_load(
    result: FigureResult, rates: tuple[float, float], batcher: bool | None = None
) -> FigureResult:
    """The batching ratio left unjudged when the candidate's mean request rate is below the baseline's
    by more than the figure's margin, or, at any load, when the exporter says no dynamic batcher runs
    (`batcher` False: each execution is a request as its client batched it, whatever the version);
    every other figure, and a batching ratio at comparable (or the candidate's higher) load, as judged."""
    if result.figure.name != c.ROLLOUT_FIG_BATCHING_RATIO or result.verdict == NO_DATA:
        return result
    if batcher is not False and rates[1] >= rates[0] * (1 - result.margin):
        return result
    return replace(result, verdict=BATCHING_AT_LOWER_LOAD)


def comparable_load(candidate_rate: str, matching: str, baseline_rate: str, margin: float) -> str:
    """`at_lower_load`'s condition in PromQL, the one source of the guard's rules and the Argo / Flagger
    templates: the candidate's request rate is at least (1 - margin) of the baseline's (`matching`: the
    vector matching between the two, e.g. `on ()`)."""
    return f"{candidate_rate} >= {matching} ({baseline_rate} * (1 - {num(margin)}))"


BATCHER_UNSAID = -1
"""`batcher_said`'s value for a model served without the exporter's gauge (no exporter scraped there)."""


def batcher_said(matchers: Sequence[Matcher], model: Sequence[str], served: str | None = None) -> str:
    """The one PromQL source of what the exporter's triton_sre_model_dynamic_batching says (1: a dynamic
    batcher runs, 0: none, from the model config), per `model` (a model's labels under the cluster rule:
    its name and the cluster label, or a cluster's alone when `matchers` name the model), over the series
    `matchers` select (the exporter's job, a model). With `served` (a query grouped `by model`): the
    models it holds only, one served without the gauge reading BATCHER_UNSAID. The guard's rules, the Argo
    / Flagger templates and the instant read of `rollout check` and the bot all build on it."""
    said = f"max {by(model)} ({selector(c.M_MODEL_DYNAMIC_BATCHING, matchers)})"
    if served is None:
        return said
    return f"{said} and {on(model)} ({served}) or {on(model)} ({served}) * {BATCHER_UNSAID}"


def no_batcher(matchers: Sequence[Matcher], model: Sequence[str], served: str | None = None) -> str:
    """`batcher_said`'s condition for leaving the batching ratio unjudged, in PromQL: per `model`, the
    exporter says no dynamic batcher runs; with `served`, one value (no labels) when it says so of every
    model served, nothing when it says nothing of one of them (as `at_lower_load`'s `batcher` None)."""
    said = batcher_said(matchers, model, served)
    return f"{said} == 0" if served is None else f"max(abs({said})) == 0"


BATCHER_SAID = {
    None: "a dynamic batcher, if the model has one, makes smaller batches at lower load",
    True: "a dynamic batcher makes smaller batches at lower load",
}
"""Why the batching ratio is not judged at lower load, by what the exporter says of a dynamic batcher
(`instant.dynamic_batcher`; None: no exporter scraped): journey28 read the first for a model that had none."""
NO_BATCHER = (
    "the exporter says no dynamic batcher runs here: each execution runs one request as its client "
    "batched it, so the ratio is the clients' batch size and cannot tell the versions apart"
)
"""Why the batching ratio is not judged, at any load, of models the exporter says run no dynamic batcher
(triton_sre_model_dynamic_batching 0 for every model served): a ratio no version can change neither
fails nor passes a rollout."""


def batching_note(results: Sequence[FigureResult], rates: tuple[float, float], batcher: bool | None) -> str:
    """The verdict's reason about a batching ratio not judged ("" when judged): the one wording of
    `rollout check` and of the bot (alert lines, `/triton rollout`), both through `judge`."""
    unjudged = [r for r in results if r.verdict == BATCHING_AT_LOWER_LOAD]
    if not unjudged:
        return ""
    if batcher is False:
        return f"; {c.ROLLOUT_FIG_BATCHING_RATIO} not judged: {NO_BATCHER}"
    return (
        f"; {c.ROLLOUT_FIG_BATCHING_RATIO} not judged: the candidate had {rates[1] / rates[0]:.0%} of the "
        f"baseline's requests/s, and {BATCHER_SAID[batcher]} (it is judged "
        f"from {1 - unjudged[0].margin:.0%} of the baseline's traffic)"
    )


@dataclass(frozen=True)
class Verdict:
    verdict: str
    reason: str
    baseline: Side
    candidate: Side
    request_rate: tuple[float, float]  # mean requests/s over the window, each side
    figures: tuple[FigureResult, ...]
    restarts: tuple[int, int] = (0, 0)  # each side's restarts in the window: resets + replaced pods
    replaced: tuple[int, int] = (0, 0)  # of which a server replaced by a new one (a new series)
    ensembles: tuple[tuple[str, ...], ...] = ((), ())  # ensemble models of each side (with_ensembles)

    def as_dict(self) -> dict[str, object]:
        return {
            "verdict": self.verdict,
            "reason": self.reason,
            "baseline": self.baseline.label,
            "candidate": self.candidate.label,
            "request_rate": {"baseline": self.request_rate[0], "candidate": self.request_rate[1]},
            "figures": [f.as_dict() for f in self.figures],
            "restarts": {"baseline": self.restarts[0], "candidate": self.restarts[1]},
            "replaced_pods": {"baseline": self.replaced[0], "candidate": self.replaced[1]},
            "ensembles": {"baseline": list(self.ensembles[0]), "candidate": list(self.ensembles[1])},
        }


def with_restarts(verdict: Verdict, restarts: tuple[int, int], replaced: tuple[int, int] = (0, 0)) -> Verdict:
    """The verdict, its reason naming each side whose request counter reset in the window (Triton or
    the model restarted) or whose server was replaced by a new one (a new pod: its series ended,
    another began): the rates step over either, but requests refused while it was down reach no
    counter, so no figure shows them. The verdict itself is the figures'."""
    sides = (verdict.baseline, verdict.candidate)

    def said(counts: tuple[int, int]) -> str:
        return ", ".join(
            f"{side.label} {n} time{'s' if n > 1 else ''}"
            for side, n in zip(sides, counts, strict=True)
            if n > 0
        )

    total = (restarts[0] + replaced[0], restarts[1] + replaced[1])
    notes = []
    if any(restarts):
        notes.append(f"counters reset in the window (Triton or the model restarted): {said(restarts)}")
    if any(replaced):
        notes.append(
            "a pod replaced by a new one in the window (its series ended, another began): " + said(replaced)
        )
    if not notes:
        return replace(verdict, restarts=total, replaced=replaced)
    note = "; " + "; ".join(notes) + "; requests refused while it was down are in no figure"
    return replace(verdict, reason=verdict.reason + note, restarts=total, replaced=replaced)


def with_ensembles(verdict: Verdict, ensembles: tuple[Sequence[str], Sequence[str]]) -> Verdict:
    """The verdict, its reason naming the ensembles of each side (the exporter's
    triton_sre_model_ensemble): their series are in no ENSEMBLE_FIGURES figure, which their steps'
    own scheduling makes. The verdict itself is the figures'."""
    said = [
        f"{side.label}: {', '.join(names)}"
        for side, names in zip((verdict.baseline, verdict.candidate), ensembles, strict=True)
        if names
    ]
    if not said:
        return verdict
    note = (
        f"; ensembles ({'; '.join(said)}) are judged end to end: {', '.join(ENSEMBLE_FIGURES)} leave them "
        "out (an ensemble has no queue or batcher of its own; its steps do, judge those)"
    )
    return replace(verdict, reason=verdict.reason + note, ensembles=tuple(tuple(n) for n in ensembles))


def limit_of(figure: Figure, baseline: float, margin: float) -> float:
    """The worst candidate value the margin allows."""
    sign = 1 if figure.worse == HIGHER else -1
    return baseline * (1 + sign * margin) if figure.relative else baseline + sign * margin


def judge_figure(
    figure: Figure, margin: float, base: Sequence[float], cand: Sequence[float], rs: RolloutSpec
) -> FigureResult:
    if len(base) < rs.min_samples or len(cand) < rs.min_samples:
        b = median(base) if base else None
        k = median(cand) if cand else None
        return FigureResult(figure, margin, b, k, None, (len(base), len(cand)), NO_DATA)
    b, k = median(base), median(cand)
    if figure.worse == HIGHER:
        test, exceeded = mann_whitney_greater(base, cand), k > limit_of(figure, b, margin)
    else:
        test, exceeded = mann_whitney_greater(cand, base), k < limit_of(figure, b, margin)
    failed = exceeded and test.p_value < rs.alpha
    verdict = c.ROLLOUT_FAIL if failed else c.ROLLOUT_PASS
    return FigureResult(figure, margin, b, k, test.p_value, (len(base), len(cand)), verdict)


def judge(
    baseline: Side,
    candidate: Side,
    samples: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    rs: RolloutSpec,
    batcher: bool | None = None,
    stopped: Sequence[Sequence[float]] = ((), ()),
) -> Verdict:
    """The verdict from per-interval samples: name (figures and TRAFFIC) -> (baseline, candidate);
    `batcher`: whether the exporter says a dynamic batcher runs (`instant.dynamic_batcher`); `stopped`:
    per side, how long before the window's end its requests were last reported (`live.collect`)."""
    base_rate, cand_rate = samples.get(TRAFFIC, ((), ()))
    rates = (mean(base_rate), mean(cand_rate))
    results = tuple(
        at_lower_load(judge_figure(f, rs.margins[f.name], *samples.get(f.name, ((), ())), rs), rates, batcher)
        for f in FIGURES
        if any(samples.get(f.name, ((), ())))
    )
    busy = (sum(1 for v in base_rate if v > 0), sum(1 for v in cand_rate if v > 0))
    short = [
        side.label
        for side, rate, n in zip((baseline, candidate), rates, busy, strict=True)
        if rate < rs.min_request_rate or n < rs.min_samples
    ]
    if short:
        reason = (
            f"too little traffic on {' and '.join(short)} (needs {rs.min_request_rate:g} requests/s "
            f"and {rs.min_samples} intervals with requests on each side)"
        )
        # a misspelt version or model has no request at all: say so, or a pipeline waits for traffic
        silent = [side.label for side, n in zip((baseline, candidate), busy, strict=True) if n == 0]
        if silent:
            reason += (
                f"; no request at all on {' and '.join(silent)} in the window: is it served, "
                "and spelt as Triton's metrics label it?"
            )
        return Verdict(c.ROLLOUT_INCONCLUSIVE, reason, baseline, candidate, rates, results)
    failed = [r.figure.name for r in results if r.verdict == c.ROLLOUT_FAIL]
    if c.ROLLOUT_FIG_ERROR_RATIO in failed and c.ROLLOUT_FIG_BATCHING_RATIO in failed:
        at = failed.index(c.ROLLOUT_FIG_BATCHING_RATIO)
        failed[at] = f"{c.ROLLOUT_FIG_BATCHING_RATIO} ({BATCHING_AFTER_FAILURES})"
    note = batching_note(results, rates, batcher)
    if failed:
        return Verdict(
            c.ROLLOUT_FAIL,
            f"candidate worse beyond the margin: {', '.join(failed)}{note}",
            baseline,
            candidate,
            rates,
            results,
        )
    if unread := unread_on_candidate(results, rs.min_samples):
        return Verdict(c.ROLLOUT_INCONCLUSIVE, unread + note, baseline, candidate, rates, results)
    if gone := stopped_sides((baseline, candidate), stopped or ((), ())):
        return Verdict(c.ROLLOUT_INCONCLUSIVE, gone + note, baseline, candidate, rates, results)
    return Verdict(
        c.ROLLOUT_PASS, f"no figure worse beyond its margin{note}", baseline, candidate, rates, results
    )


def stopped_sides(sides: Sequence[Side], stopped: Sequence[Sequence[float]]) -> str:
    """Why a pass is no pass when a side's requests stopped being reported well before the other side's (""
    when none): a canary unloaded, its pods gone or its scrape failing minutes ago still passed on the
    intervals it had (round twenty-one), and a pipeline promoted a version no longer serving."""
    gone = [
        f"{side.label}'s requests stop being reported {format_duration(round(max(ago)))} before the other "
        "side's"
        for side, ago in zip(sides, stopped, strict=True)
        if len(ago)
    ]
    if not gone:
        return ""
    return (
        f"no figure read is worse beyond its margin, but {' and '.join(gone)}; a pass on a version that "
        "stopped serving (unloaded, its pods gone, or its scrape failing) is not a pass"
    )


def unread_on_candidate(results: Sequence[FigureResult], min_samples: int) -> str:
    """Why a pass is no pass when the baseline has a figure the candidate lacks ("" when none): a
    candidate serving requests without latency series (a build that turned its summaries or histograms
    off) passed on the figures left, `queue-share` "no data" without a word (round sixteen). The
    Argo and Flagger templates never pass on it either: an empty candidate read is an inconclusive
    measurement to Argo and a failed check to Flagger."""
    unread = [
        f"{r.figure.name} ({r.samples[0]} and {r.samples[1]} samples)"
        for r in results
        if r.verdict == NO_DATA and r.samples[0] >= min_samples > r.samples[1]
    ]
    if not unread:
        return ""
    return (
        f"no figure read is worse beyond its margin, but the candidate lacks what the baseline has: "
        f"{', '.join(unread)}; a pass on figures it could not read is not a pass (does the candidate "
        "still export them?)"
    )
