"""Progressive-delivery templates from the rollout spec: an Argo Rollouts AnalysisTemplate (two
versions of one model, named by its args) and Flagger MetricTemplates (the canary pods against the
primary pods), both on the Prometheus provider. Pure: objects are dicts.

Each query gives the candidate's figure relative to the baseline's (a ratio for relative margins,
a difference for absolute ones) and nothing when a side has less than `min_request_rate` or has stopped
being reported (`_reporting`): Argo
then counts the measurement inconclusive; Flagger's `thresholdRange` (see docs/rollouts.md) is
1 + margin (max), 1 - margin (min, batching ratio) or the margin itself.

The batching ratio is compared only while the canary has at least (1 - margin) of the baseline's
requests/s, the condition of `rollout check` and of the guard (`comparable_load`): a dynamic batcher
makes smaller batches at lower load whatever the version (journey27). At a less even split, both
sides above `min_request_rate`, its query answers NOT_JUDGED (candidate = baseline), which passes:
an empty answer is inconclusive in Argo (an analysis run past its `inconclusiveLimit` pauses the
rollout) and a failed check in Flagger (no values found: advancement halted), so every step of a
10 % canary would stop on it. Nor is it compared when the exporter says no dynamic batcher runs in the
models served (the ratio is then the clients' batch size, which no version changes): NOT_JUDGED too.

NOT_JUDGED cannot be told from a measured equal ratio, so each tool gets one more metric,
`batching-ratio-judged` (`judged_query`): JUDGED while the batching query answers the measured ratio,
else NOT_JUDGED_FLAG, always one value. It never stops a canary: in Argo it has no condition (a
measurement is then Successful, `evaluate.EvaluateResult`) and is listed in `dryRun`; in Flagger the
Canary gives it JUDGED_RANGE, which holds both values.
"""

from __future__ import annotations

from typing import Any

from triton_sre import conventions as c
from triton_sre.generate.rulefile import GENERATED_HEADER, render_yaml
from triton_sre.promql import Matcher, by, label_sets, num, on, selector
from triton_sre.rollout.figures import FIGURES, GUARDED, HIGHER, Figure
from triton_sre.rollout.model import comparable_load, no_batcher
from triton_sre.rollout.sides import TRAFFIC, Side, side_queries
from triton_sre.slo import Spec

ROLLOUTS_DIR = "k8s/rollouts"
ARGO_FILE = f"{ROLLOUTS_DIR}/argo-analysistemplate.yaml"
FLAGGER_FILE = f"{ROLLOUTS_DIR}/flagger-metrictemplates.yaml"
TEMPLATE_NAME = "triton-rollout"
PART_OF = {"app.kubernetes.io/part-of": "triton-sre"}
ARG_CLUSTER = "cluster"  # the AnalysisTemplate's arg naming the cluster (with slos.yaml cluster_label)
# Flagger (1.29.0 and later) fills `variables` from the Canary's analysis.metrics[].templateVariables
# and renders with missingkey=error, so `{{ variables.cluster }}` fails a Canary that does not set it;
# `index` gives "" for a missing key (Go text/template), `or` then the default: every series.
FLAGGER_CLUSTER = f"{{{{ or (index variables `{ARG_CLUSTER}`) `.*` }}}}"
NOT_JUDGED = 1  # the batching ratio's answer at an uneven split: candidate = baseline (module docstring)
JUDGED, NOT_JUDGED_FLAG = 1, 0  # batching-ratio-judged's answers (module docstring)
JUDGED_RANGE = {"min": JUDGED - 1, "max": JUDGED}  # Flagger's thresholdRange for it: holds both answers


def _figures(
    base: Side, cand: Side, window: str, spec: Spec, latency: tuple[str, ...]
) -> tuple[dict[str, str], dict[str, str]]:
    """Each side's figures (`side_queries`), the ensemble marks of the spec's exporter_job joined. A side's
    traffic, which gates every figure, is there only while the side still reports (`_reporting`)."""
    b, k = (
        side_queries(side, window, latency, spec.cluster_label, exporter_job=spec.exporter_job)
        for side in (base, cand)
    )
    for side, figures in ((base, b), (cand, k)):
        figures[TRAFFIC] = f"({figures[TRAFFIC]} and {on(())} {_reporting(side)})"
    return b, k


def _reporting(side: Side) -> str:
    """Something while `side`'s request counter is in Prometheus' instant view: a side that stopped being
    reported mid-window (its version unloaded, its pods gone, its scrape failing) leaves it at its next
    scrape (a staleness marker; at most the 5m lookback) while a rate over the window still averages what
    it had. Its figures then give nothing: inconclusive in Argo, a failed check in Flagger, as `rollout
    check` makes a pass on such a side inconclusive."""
    return f"group ({selector(c.NV_REQUEST_SUCCESS, side.matchers)})"


def compare_query(
    figure: Figure, base: Side, cand: Side, window: str, spec: Spec, latency: tuple[str, ...]
) -> str:
    """candidate / baseline (relative) or candidate - baseline (absolute), only with enough traffic."""
    rs = spec.rollout
    b, k = _figures(base, cand, window, spec, latency)
    floor = num(rs.min_request_rate)
    op = "/" if figure.relative else "-"
    query = (
        f"({k[figure.name]} and {on(())} ({k[TRAFFIC]} >= {floor}))\n"
        f"{op} {on(())} ({b[figure.name]} and {on(())} ({b[TRAFFIC]} >= {floor}))"
    )
    if figure.name != c.ROLLOUT_FIG_BATCHING_RATIO:
        return query
    busy, even = _batching_load(base, cand, window, spec, latency)
    return (
        f"({query}\nand {on(())} ({even}))\n"
        f"or {on(())} (vector({NOT_JUDGED}) and {busy}\nunless {on(())} ({even}))"
    )


def _batching_load(
    base: Side, cand: Side, window: str, spec: Spec, latency: tuple[str, ...]
) -> tuple[str, str]:
    """(both sides above min_request_rate, the candidate at comparable load and a dynamic batcher not
    said to be absent): when the batching ratio is judged."""
    rs = spec.rollout
    b, k = _figures(base, cand, window, spec, latency)
    floor = num(rs.min_request_rate)
    busy = f"{on(())} ({k[TRAFFIC]} >= {floor}) and {on(())} ({b[TRAFFIC]} >= {floor})"
    even = comparable_load(k[TRAFFIC], on(()), b[TRAFFIC], rs.margins[c.ROLLOUT_FIG_BATCHING_RATIO])
    return busy, f"{even}\nunless {on(())} ({_no_batcher(base, cand, spec)})"


def _no_batcher(base: Side, cand: Side, spec: Spec) -> str:
    """Something when the exporter says no dynamic batcher runs in any model the sides serve
    (triton_sre_model_dynamic_batching 0): the ratio is then the clients' batch size, which no version
    changes, and is not judged (`rollout check` and the guard alike). Nothing without the exporter.
    With the spec's cluster_label a model is its name in its cluster, as the rules match it: on a global
    store a same-named model of another cluster does not decide (tidy31)."""
    model = label_sets(spec.cluster_label).per_model
    served = " or ".join(
        f"group {by(model)} ({selector(c.NV_REQUEST_SUCCESS, side.matchers)})" for side in (base, cand)
    )
    return no_batcher([(c.LABEL_JOB, "=", spec.exporter_job)], model, served)


def judged_query(base: Side, cand: Side, window: str, spec: Spec, latency: tuple[str, ...]) -> str:
    """JUDGED while compare_query's batching ratio is the measured one, else NOT_JUDGED_FLAG (an uneven
    split, too little traffic on a side, or no dynamic batcher): one value whatever the traffic, so that
    neither tool counts it inconclusive or halts on it."""
    busy, even = _batching_load(base, cand, window, spec, latency)
    return f"(vector({JUDGED}) and {busy}\nand {on(())} ({even}))\nor vector({NOT_JUDGED_FLAG})"


def threshold(figure: Figure, margin: float) -> tuple[str, float]:
    """('max' or 'min', bound) the compare_query value must respect."""
    if not figure.relative:
        return ("max", margin) if figure.worse == HIGHER else ("min", -margin)
    return ("max", 1 + margin) if figure.worse == HIGHER else ("min", 1 - margin)


def _guarded(spec: Spec, side: Side) -> list[str]:
    """The guarded figures this spec's servers can give (no latency quantile without a source)."""
    known = side_queries(
        side, c.REC_RATE_WINDOW, spec.latency_metrics, spec.cluster_label, exporter_job=spec.exporter_job
    )
    return [name for name in GUARDED if name in known]


def analysis_template(spec: Spec) -> dict[str, Any]:
    rs = spec.rollout
    job: Matcher = (c.LABEL_JOB, "=", spec.triton_job)
    model: Matcher = (c.LABEL_MODEL, "=", "{{args.model}}")
    # a fleet: the cluster a global store is read for (default every series: a cluster's own
    # Prometheus has no cluster label, `=~".*"` matches a missing label)
    cluster: tuple[Matcher, ...] = ()
    cluster_arg: list[dict[str, str]] = []
    if spec.cluster_label:
        cluster = ((spec.cluster_label, "=~", f"{{{{args.{ARG_CLUSTER}}}}}"),)
        cluster_arg = [{"name": ARG_CLUSTER, "value": ".*"}]
    base = Side("baseline", (job, model, (c.LABEL_VERSION, "=", "{{args.baseline-version}}"), *cluster))
    cand = Side("candidate", (job, model, (c.LABEL_VERSION, "=", "{{args.candidate-version}}"), *cluster))
    figures = {f.name: f for f in FIGURES}
    metrics = []
    for name in _guarded(spec, base):
        f = figures[name]
        side, bound = threshold(f, rs.margins[name])
        op = "<=" if side == "max" else ">="
        metrics.append(
            {
                "name": name,
                "interval": "1m",
                "count": 10,
                "failureLimit": 1,
                "inconclusiveLimit": 5,
                "successCondition": f"len(result) > 0 && result[0] {op} {num(bound)}",
                "failureCondition": f"len(result) > 0 && !(result[0] {op} {num(bound)})",
                "provider": {
                    "prometheus": {
                        "address": "{{args.prometheus-address}}",
                        "query": compare_query(f, base, cand, c.REC_RATE_WINDOW, spec, spec.latency_metrics),
                    }
                },
            }
        )
    if c.ROLLOUT_FIG_BATCHING_RATIO in _guarded(spec, base):
        query = judged_query(base, cand, c.REC_RATE_WINDOW, spec, spec.latency_metrics)
        # no condition: every measurement Successful; dryRun: none counts for the run either
        metrics.append(
            {
                "name": c.ROLLOUT_BATCHING_JUDGED,
                "interval": "1m",
                "count": 10,
                "provider": {"prometheus": {"address": "{{args.prometheus-address}}", "query": query}},
            }
        )
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "AnalysisTemplate",
        "metadata": {"name": TEMPLATE_NAME, "labels": PART_OF},
        "spec": {
            "args": [
                {"name": "prometheus-address", "value": c.K8S_PROMETHEUS_URL},
                {"name": "model"},
                {"name": "baseline-version"},
                {"name": "candidate-version"},
                *cluster_arg,
            ],
            "metrics": metrics,
            "dryRun": [{"metricName": c.ROLLOUT_BATCHING_JUDGED}],
        },
    }


def metric_templates(spec: Spec) -> list[dict[str, Any]]:
    """One Flagger MetricTemplate per figure: the canary's pods against the primary's."""
    ns: Matcher = ("namespace", "=", "{{ namespace }}")
    job: Matcher = (c.LABEL_JOB, "=", spec.triton_job)
    # a fleet: the cluster a global store is read for, a regular expression (as the Argo arg)
    cluster: tuple[Matcher, ...] = ()
    if spec.cluster_label:
        cluster = ((spec.cluster_label, "=~", FLAGGER_CLUSTER),)
    base = Side("primary", (job, ns, ("pod", "=~", "{{ target }}-primary-.*"), *cluster))
    cand = Side(
        "canary",
        (job, ns, ("pod", "=~", "{{ target }}-.*"), ("pod", "!~", "{{ target }}-primary-.*"), *cluster),
    )
    figures = {f.name: f for f in FIGURES}
    queries = {
        name: compare_query(figures[name], base, cand, "{{ interval }}", spec, spec.latency_metrics)
        for name in _guarded(spec, base)
    }
    if c.ROLLOUT_FIG_BATCHING_RATIO in queries:
        judged = judged_query(base, cand, "{{ interval }}", spec, spec.latency_metrics)
        queries[c.ROLLOUT_BATCHING_JUDGED] = judged
    return [
        {
            "apiVersion": "flagger.app/v1beta1",
            "kind": "MetricTemplate",
            "metadata": {"name": f"{TEMPLATE_NAME}-{name}", "labels": PART_OF},
            "spec": {"provider": {"type": "prometheus", "address": c.K8S_PROMETHEUS_URL}, "query": query},
        }
        for name, query in queries.items()
    ]


def rollout_k8s_files(spec: Spec) -> dict[str, str]:
    """Path under deploy/ -> YAML: the AnalysisTemplate; the MetricTemplates in one multi-document file."""
    source = spec.origin_name
    docs = [render_yaml(doc, source) for doc in metric_templates(spec)]
    header = GENERATED_HEADER.format(source=source)
    flagger = header + "---\n".join(doc.removeprefix(header) for doc in docs)
    return {ARGO_FILE: render_yaml(analysis_template(spec), source), FLAGGER_FILE: flagger}
