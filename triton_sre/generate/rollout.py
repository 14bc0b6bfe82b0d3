"""The continuous rollout guard (issue 22): each model's candidate versions and each declared
blue/green pair compared with their baseline over the rollout window; `TritonRolloutRegression`
when a candidate is worse by the figure's margin with enough traffic on both sides.

PromQL cannot order version labels (they are strings), so the guard takes the version serving the
most requests as a model's baseline and every other version with enough traffic as a candidate:
during a canary (a version policy serving two versions, a few per cent of the traffic on the new
one) that is the new version. The rank test of `rollout check` has no PromQL form; the alert's
`for` (a third of the window, derived from it alone so that a short window fires quickly) is what
keeps a noisy interval from firing it.

The batching ratio is compared only while the candidate serves at least (1 - margin) of the baseline's
requests/s: a dynamic batcher forms smaller batches at lower load whatever the version, and the
baseline, the busiest version, always has the more traffic (journey27: an identical version 3 at half
version 1's traffic paged on its batching ratio of 1.26). It is not compared at all for a model the
exporter says runs no dynamic batcher (for a pair: neither model): the ratio is then its clients' batch
size, which no version changes (`_unbatched`).
"""

from __future__ import annotations

from triton_sre import conventions as c
from triton_sre.durations import format_duration, parse_duration
from triton_sre.generate.rulefile import Rule, RuleFile, alert, runbook_url
from triton_sre.promql import Matcher, by, label_sets, num, on, q, selector
from triton_sre.rollout.figures import FIGURES, GUARDED, HIGHER, Figure
from triton_sre.rollout.model import comparable_load, no_batcher
from triton_sre.rollout.sides import TRAFFIC, rate_figures
from triton_sre.slo import Spec

ROLLOUT_FILE = "triton-rollout-rules.yaml"


def figure_exprs(spec: Spec, window: str) -> dict[str, str]:
    """TRAFFIC and figure -> PromQL of it per model version (label_sets().model) over `window`."""
    ls = label_sets(spec.cluster_label)
    job: list[Matcher] = [(c.LABEL_JOB, "=", spec.triton_job)]
    p99 = selector(
        c.rec_latency_quantile(c.REC_LEVEL_MODEL, c.LATENCY_REQUEST), [(c.LABEL_QUANTILE, "=", "0.99"), *job]
    )
    return {
        **rate_figures(job, window, ls.model, exporter_job=spec.exporter_job),
        c.ROLLOUT_FIG_LATENCY_P99: f"max {by(ls.model)} (avg_over_time({p99}[{window}]))",
    }


def _unbatched(spec: Spec, labels: tuple[str, ...], models: tuple[str, ...] = ()) -> str:
    """PromQL of the `labels` sets (a model name and cluster, or a cluster's, of `models`: the exporter's
    series carry neither Triton's job nor its namespace) the exporter says run no dynamic batcher
    (`model.no_batcher`): the batching ratio, the clients' batch size, is not judged (`rollout check`
    likewise). Nothing without the exporter's gauge: judged as before."""
    exporter: Matcher = (c.LABEL_JOB, "=", spec.exporter_job)
    if not models:
        return no_batcher([exporter], labels)
    return f" and {on(labels)} ".join(
        f"({no_batcher([exporter, (c.LABEL_MODEL, '=', m)], labels)})" for m in models
    )


def _limit(figure: Figure, baseline: str, margin: float) -> str:
    """PromQL of the worst value the margin allows, from the baseline series `baseline`."""
    sign = "+" if figure.worse == HIGHER else "-"
    return (
        f"({baseline} * (1 {sign} {num(margin)}))"
        if figure.relative
        else f"({baseline} {sign} {num(margin)})"
    )


def rollout_groups(spec: Spec, base_url: str) -> RuleFile:
    rs = spec.rollout
    ls = label_sets(spec.cluster_label)
    w = rs.window
    per_model = tuple(label for label in ls.model if label != c.LABEL_VERSION)
    requests, figure = c.rec_rollout_requests(w), c.rec_rollout_figure(w)
    exprs = figure_exprs(spec, w)
    # for_: a third of the window, in whole seconds: 5m for the default 15m, 13s for a 40s test window
    for_ = format_duration(max(round(parse_duration(w, "rollout.window") / 3), 1))
    recent = c.rec_rollout_requests(for_)
    rules: list[Rule] = [{"record": requests, "expr": exprs[TRAFFIC]}]
    if recent != requests:
        rules.append({"record": recent, "expr": figure_exprs(spec, for_)[TRAFFIC]})
    rules += [{"record": figure, "expr": exprs[name], "labels": {c.LABEL_FIGURE: name}} for name in GUARDED]
    # enough traffic now, and traffic already one window ago: the window compared is full. Without
    # the second condition a window holding the first seconds of a rollout (a handful of requests,
    # each figure noisy) was judged: on the real Triton an equal version fired with a 40s window.
    # ... and served now (a request within the alert's `for`): a candidate rolled back keeps its window's
    # rate for a whole window, and paged a regression 14 minutes after its rollback (journey25)
    busy = f"{requests} >= {num(rs.min_request_rate)} and {requests} offset {w} > 0 and {recent} > 0"
    busiest = f"{requests} == {on(per_model)} group_left () max {by(per_model)} ({requests})"
    rules.append(
        {
            "record": c.rec_rollout_baseline(w),
            "expr": (
                f"label_replace({figure} and {on(ls.model)} ({busiest}) and {on(ls.model)} ({busy}), "
                f'{q(c.LABEL_BASELINE)}, "$1", {q(c.LABEL_VERSION)}, "(.*)")'
            ),
        }
    )
    url = runbook_url(base_url, c.ALERT_RUNBOOKS[c.ALERT_ROLLOUT_REGRESSION])
    baseline = f"max without ({c.LABEL_VERSION}) ({c.rec_rollout_baseline(w)})"
    figures = {f.name: f for f in FIGURES}
    for name in GUARDED:
        f, margin = figures[name], rs.margins[name]
        worse = ">" if f.worse == HIGHER else "<"
        mine = selector(figure, [(c.LABEL_FIGURE, "=", name)])
        cand = f"{mine} unless {on(ls.model)} ({c.rec_rollout_baseline(w)})"
        expr = (
            f"({cand})\n{worse} {on((*per_model, c.LABEL_FIGURE))} group_left ({c.LABEL_BASELINE}) "
            f"{_limit(f, baseline, margin)}\nand {on(ls.model)} ({busy})"
        )
        if name == c.ROLLOUT_FIG_BATCHING_RATIO:  # judged at comparable load only (module docstring)
            busiest_rate = f"max {by(per_model)} ({requests})"
            even = comparable_load(requests, f"{on(per_model)} group_left ()", busiest_rate, margin)
            expr += f"\nand {on(ls.model)} ({even})"
            expr += f"\nunless {on(ls.per_model)} ({_unbatched(spec, ls.per_model)})"
        rules.append(
            _alert(
                name,
                margin,
                f,
                expr,
                for_,
                url,
                "version {{ $labels.version }}",
                "version {{ $labels.baseline }}",
            )
        )
    for pair in rs.pairs:
        for name in GUARDED:
            f, margin = figures[name], rs.margins[name]
            worse = ">" if f.worse == HIGHER else "<"

            def side(model: str, name: str = name) -> str:
                series = selector(figure, [(c.LABEL_FIGURE, "=", name), (c.LABEL_MODEL, "=", model)])
                served = selector(requests, [(c.LABEL_MODEL, "=", model)])
                traffic = (
                    f"sum {by(per_model)} ({served}) >= {num(rs.min_request_rate)} "
                    f"and sum {by(per_model)} ({served} offset {w}) > 0 "
                    f"and sum {by(per_model)} ({selector(recent, [(c.LABEL_MODEL, '=', model)])}) > 0"
                )
                return f"(max {by((*per_model, c.LABEL_FIGURE))} ({series}) and {on(per_model)} ({traffic}))"

            limit = _limit(f, side(pair.baseline), margin)
            expr = f"{side(pair.candidate)}\n{worse} ignoring ({c.LABEL_MODEL}) {limit}"
            if name == c.ROLLOUT_FIG_BATCHING_RATIO:  # judged at comparable load only (module docstring)
                rate = {
                    m: f"sum {by(per_model)} ({selector(requests, [(c.LABEL_MODEL, '=', m)])})"
                    for m in (pair.candidate, pair.baseline)
                }
                ignoring = f"ignoring ({c.LABEL_MODEL})"
                even = comparable_load(rate[pair.candidate], ignoring, rate[pair.baseline], margin)
                expr += f"\nand ignoring ({c.LABEL_FIGURE}) ({even})"
                models = (pair.baseline, pair.candidate)
                expr += f"\nunless {on(ls.cluster)} ({_unbatched(spec, ls.cluster, models)})"
            rule = _alert(name, margin, f, expr, for_, url, pair.candidate, pair.baseline, pair.name)
            # `ignoring (model)` drops the model label: the alert names the candidate model again
            pair_labels = {c.LABEL_MODEL: pair.candidate, c.LABEL_BASELINE: pair.baseline}
            rule["labels"].update({**pair_labels, c.LABEL_CANDIDATE: pair.candidate})
            rules.append(rule)
    return {"groups": [{"name": c.GROUP_ROLLOUT, "rules": rules}]}


def _alert(
    name: str,
    margin: float,
    f: Figure,
    expr: str,
    for_: str,
    url: str,
    cand: str,
    base: str,
    model: str = "{{ $labels.model }}",
) -> Rule:
    kind = f"{margin:.0%} of the baseline" if f.relative else f"{num(margin)} (absolute)"
    rule = alert(
        c.ALERT_ROLLOUT_REGRESSION,
        expr,
        for_,
        c.SEVERITY_PAGE,
        f"Model {model}: {cand} is worse than {base} on {name}",
        f"The candidate {cand} of model {model} has {name} = "
        f'{{{{ $value | printf "%.4f" }}}}, '
        f"{f.worse} than the baseline {base} by more than the margin ({kind}), with enough traffic on both. "
        "Run `triton-sre rollout check` for the full comparison and roll back (runbook).",
        url,
    )
    rule["labels"][c.LABEL_FIGURE] = name
    return rule


def rule_file(spec: Spec, base_url: str) -> RuleFile:
    """The family's rule file (registered in generate/families.py)."""
    return rollout_groups(spec, base_url)
