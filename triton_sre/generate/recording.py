"""Recording rules: Triton's raw counters -> the exporter's derivations, per instance and per model
version, and the latency quantiles (histogram when Triton exports one, else its summary).

Conventions: recording rules are named `level:metric:operations`; numerators and denominators are
summed to the level first and divided after, so a fleet of replicas gets the same ratio a single
server would. Counters go through `promql.counter_rate` (GPU models counted once).
"""

from __future__ import annotations

from collections.abc import Iterable

from triton_sre import conventions as c
from triton_sre.generate.rulefile import Rule, RuleFile
from triton_sre.promql import (
    Matcher,
    by,
    counter_rate,
    ensemble_marked,
    first_of,
    histogram_quantile,
    label_sets,
    ratio,
    selector,
    summary_quantile,
    tagged,
)
from triton_sre.slo import Spec

RECORDING_FILE = "triton-recording-rules.yaml"


# Three groups, so that no group reads all nine counters of every model version in one evaluation
# (issue 13: at 4,000 model versions one group took 15-20 % of its interval). Each raw rate is read
# once: the request counts (4 counters) in one group, the request duration and the 4 stage durations
# in another; the stage split divides by the first group's success rate, and the per-model group sums
# both (cross-group reads: see `group_reads` and docs/scaling.md). The request duration sits with the
# stages because `other` is a difference of the two (request minus the stages): read from two groups
# evaluated at different instants, their 5m rates differ by up to an interval's change, and the
# difference showed a phantom `other` of 2-5 % of the request time whenever traffic changed (a live
# test against the exporter's exact differences); a ratio across groups only scales by that much.
_REQUEST_COUNTERS = (
    c.NV_INFERENCE_COUNT,
    c.NV_EXEC_COUNT,
    c.NV_REQUEST_SUCCESS,
    c.NV_REQUEST_FAILURE,
)
_STAGE_SOURCES = (c.NV_REQUEST_DURATION_US, *c.STAGE_COUNTERS.values())


def recording_groups(spec: Spec) -> RuleFile:
    ls = label_sets(spec.cluster_label)
    job: list[Matcher] = [(c.LABEL_JOB, "=", spec.triton_job)]

    def raw(families: Iterable[str]) -> list[Rule]:
        return [
            {
                "record": c.rec_rate(c.REC_LEVEL_INSTANCE, family),
                "expr": counter_rate(family, job, c.REC_RATE_WINDOW, ls.instance),
            }
            for family in families
        ]

    per_model: list[Rule] = [
        {
            "record": c.rec_rate(c.REC_LEVEL_MODEL, family),
            "expr": f"sum {by(ls.model)} ({c.rec_rate(c.REC_LEVEL_INSTANCE, family)})",
        }
        for family in c.PER_MODEL_COUNTERS
    ]
    model = c.REC_LEVEL_MODEL
    instance = c.REC_LEVEL_INSTANCE
    ensemble = ensemble_marked(ls.per_model, [(c.LABEL_JOB, "=", spec.exporter_job)])
    return {
        "groups": [
            {
                "name": c.GROUP_RECORDING_REQUESTS,
                "rules": [*raw(_REQUEST_COUNTERS), *_request_rules(instance, ensemble)],
            },
            {"name": c.GROUP_RECORDING_STAGES, "rules": [*raw(_STAGE_SOURCES), *_stage_rules(instance)]},
            {
                "name": c.GROUP_RECORDING_MODELS,
                "rules": [*per_model, *_request_rules(model, ensemble), *_stage_rules(model)],
            },
            {"name": c.GROUP_LATENCY_QUANTILES, "rules": latency_quantile_rules(spec)},
        ]
    }


def latency_quantile_rules(spec: Spec) -> list[Rule]:
    """Seconds at each of LATENCY_QUANTILES, per instance and per model version.

    The histogram (ms) when Triton exports one, aggregated across instances; else Triton's summary
    (µs), whose fleet value per model version is the worst instance's (summaries cannot be merged).
    """
    ls = label_sets(spec.cluster_label)
    job: list[Matcher] = [(c.LABEL_JOB, "=", spec.triton_job)]
    inst, model = c.REC_LEVEL_INSTANCE, c.REC_LEVEL_MODEL
    rules: list[Rule] = []
    for measure, (summary, histogram) in c.LATENCY_FAMILIES.items():
        for quantile in c.LATENCY_QUANTILES:
            labels = {c.LABEL_QUANTILE: quantile}
            per_instance = [
                tagged(
                    f"{summary_quantile(summary, job, quantile, ls.instance)} / 1e6",
                    c.LATENCY_SOURCE_SUMMARY,
                )
            ]
            worst = selector(c.rec_latency_quantile(inst, measure), [(c.LABEL_QUANTILE, "=", quantile)])
            per_model = [f"max {by((*ls.model, c.L_LATENCY_SOURCE))} ({worst})"]
            if histogram:
                for branches, level_by in ((per_instance, ls.instance), (per_model, ls.model)):
                    hist = histogram_quantile(histogram, job, quantile, c.REC_RATE_WINDOW, level_by)
                    branches.insert(0, tagged(f"{hist} / 1e3", c.LATENCY_SOURCE_HISTOGRAM))
            rules.append(
                {
                    "record": c.rec_latency_quantile(inst, measure),
                    "expr": first_of(per_instance, ls.instance),
                    "labels": labels,
                }
            )
            rules.append(
                {
                    "record": c.rec_latency_quantile(model, measure),
                    "expr": first_of(per_model, ls.model),
                    "labels": labels,
                }
            )
    return rules


def _request_rules(level: str, ensemble: str) -> list[Rule]:
    """Requests, error ratio and batching ratio from the recorded rates of `level`.

    No batching ratio for a model the exporter marks an ensemble (`unless ensemble`): Triton counts
    an ensemble request as one execution of its rows, so its ratio is rows per request, of a model with
    no batcher (dynamic_batching and ensemble_scheduling are one oneof of the config). None either for a
    window without a successful inference (`> 0` on the numerator), as the exporter: Triton counts a failed
    batch's execution, not its inferences, so a model failing every request read 0 (compat32)."""
    success, failure = c.rec_rate(level, c.NV_REQUEST_SUCCESS), c.rec_rate(level, c.NV_REQUEST_FAILURE)
    inferences = c.rec_rate(level, c.NV_INFERENCE_COUNT)
    return [
        {"record": c.rec_requests(level), "expr": f"{success} + ({failure} or {success} * 0)"},
        {
            "record": c.rec_error_ratio(level),
            "expr": f"({failure} or {success} * 0) / ({c.rec_requests(level)} > 0)",
        },
        {
            "record": c.rec_batching_ratio(level),
            "expr": (
                f"{ratio(f'({inferences} > 0)', c.rec_rate(level, c.NV_EXEC_COUNT))}\nunless {ensemble}"
            ),
        },
    ]


def _stage_rules(level: str) -> list[Rule]:
    """Seconds per successful request in each stage at `level`; each stage's share per model version.

    The share is recorded at the model_version level only: per instance it was the costliest rule
    of a fleet (a many-to-one match over five series per model version per server, 11 % of the
    stages group's interval in bench/bench_fleet.py) and nothing reads it; one server's share is
    what its exporter exposes (`triton_sre_request_stage_fraction`).
    """

    def rate(family: str) -> str:
        return c.rec_rate(level, family)

    success = rate(c.NV_REQUEST_SUCCESS)
    rules: list[Rule] = []
    for stage, family in c.STAGE_COUNTERS.items():
        rules.append(
            {
                "record": c.rec_stage_seconds(level),
                "expr": f"{rate(family)} / 1e6 / ({success} > 0)",
                "labels": {c.L_STAGE: stage},
            }
        )
    measured = " - ".join(rate(f) for f in c.STAGE_COUNTERS.values())
    rules.append(
        {
            "record": c.rec_stage_seconds(level),
            "expr": f"clamp_min(({rate(c.NV_REQUEST_DURATION_US)} - {measured}) / 1e6 / ({success} > 0), 0)",
            "labels": {c.L_STAGE: c.STAGE_OTHER},
        }
    )
    if level != c.REC_LEVEL_MODEL:
        return rules
    seconds = c.rec_stage_seconds(level)
    rules.append(
        {
            "record": c.rec_stage_fraction(level),
            "expr": (
                f"{seconds} / ignoring ({c.L_STAGE}) group_left ()"
                f" (sum without ({c.L_STAGE}) ({seconds}) > 0)"
            ),
        }
    )
    return rules


def rule_file(spec: Spec, base_url: str) -> RuleFile:
    """The family's rule file (registered in generate/families.py)."""
    return recording_groups(spec)
