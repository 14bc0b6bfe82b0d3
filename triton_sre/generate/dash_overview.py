"""The "Triton / Overview" dashboard: every model's traffic, errors, latency, state, cost and resources."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.conventions import UID_OVERVIEW_DASHBOARD as UID_OVERVIEW
from triton_sre.generate.dash_scaling import scaling_row
from triton_sre.generate.dash_slo import silent_clusters_row
from triton_sre.generate.panels import (
    NEEDS_GPU,
    NO_ENSEMBLE,
    Layout,
    cpu_utilization,
    dashboard,
    ensemble_steps,
    exporter_matchers,
    gpu_utilization,
    panel_rate,
    per_request,
    recorded,
    recorded_without_ensembles,
    request_rate,
    resource_matchers,
    stage_targets,
    table,
    tail_row,
    target,
    timeseries,
    triton_matchers,
    variables,
)
from triton_sre.generate.rulefile import normalize_base
from triton_sre.slo import Spec


def unserved_rows(spec: Spec, exp_job: Sequence[pq.Matcher]) -> str:
    """The table's rows: each UNAVAILABLE version with its diagnosed runbook, then each model with no
    version READY that no such row names, its state and the not-served runbook (their cause is in
    Triton's log, not its API: the index holds a refused config by name alone)."""
    failed = f"max by (model, version, runbook) ({pq.selector(c.M_MODEL_UNAVAILABLE, exp_job)})"
    failed = f'label_replace({failed}, {pq.q(c.L_STATE)}, {pq.q(c.STATE_UNAVAILABLE)}, "", "")'
    key = pq.label_sets(spec.cluster_label).per_model
    unserved = pq.not_ready(exp_job, (c.LABEL_MODEL, c.LABEL_VERSION, c.L_STATE), key)
    runbook = c.ALERT_RUNBOOKS[c.ALERT_SLO_MODEL_NOT_SERVED]
    either = pq.on((c.LABEL_MODEL,))
    return f'{failed}\nor {either}\nlabel_replace({unserved}, {pq.q(c.L_RUNBOOK)}, {pq.q(runbook)}, "", "")'


def overview(spec: Spec, base_url: str) -> dict[str, Any]:
    ms = triton_matchers(spec)
    by_model = (c.LABEL_MODEL,)
    exp_job = exporter_matchers(spec, None)
    layout = Layout()
    silent_clusters_row(layout, spec)
    layout.row(
        "Traffic and errors",
        [
            timeseries(
                "Requests per second",
                "Successful plus failed requests per second, by model (Triton counters, 5m rates "
                "of the recording rules).",
                "reqps",
                [target(request_rate(ms, by_model, recorded), "{{model}}")],
            ),
            timeseries(
                "Error ratio",
                "Failed requests / all requests, by model (every failure reason).",
                "percentunit",
                [
                    target(
                        f"({recorded(c.NV_REQUEST_FAILURE, ms, by_model)})"
                        f" / ({request_rate(ms, by_model, recorded)} > 0)",
                        "{{model}}",
                    )
                ],
            ),
            timeseries(
                "Failures by reason",
                "Failed requests per second by model and Triton's failure reason.",
                "reqps",
                [
                    target(
                        panel_rate(c.NV_REQUEST_FAILURE, ms, (c.LABEL_MODEL, c.LABEL_REASON)),
                        "{{model}} {{reason}}",
                    )
                ],
            ),
        ],
    )
    steps_rate = recorded_without_ensembles(spec)
    queue = per_request(steps_rate(c.NV_QUEUE_DURATION_US, ms, by_model), ms, by_model, steps_rate)
    step_queue = f"sum {pq.by(by_model)} ({ensemble_steps(spec, (c.STAGE_QUEUE,))})"
    layout.row(
        "Latency",
        [
            timeseries(
                "Latency split by stage",
                "Average seconds per successful request in each stage over the selected "
                "models: queue, compute input/infer/output, and the rest of the request time (other). "
                "Ensembles left out: their requests are their steps' again, and Triton counts their steps' "
                "queue under none of their stages (see Ensemble time by step).",
                "s",
                stage_targets(ms, (), "", steps_rate),
                stack=True,
            ),
            timeseries(
                "Average request latency",
                "Average request duration per successful request, by model.",
                "s",
                [
                    target(
                        per_request(recorded(c.NV_REQUEST_DURATION_US, ms, by_model), ms, by_model, recorded),
                        "{{model}}",
                    )
                ],
            ),
            timeseries(
                "Queue time per request",
                "Average seconds a request waits in Triton's queue, by model; for an ensemble, the "
                "queue of its steps added (the exporter's triton_sre_ensemble_step_seconds): Triton's own "
                "counter holds only its hand-off to the first step.",
                "s",
                [target(f"{queue}\nor {step_queue}", "{{model}}")],
            ),
            timeseries(
                "Ensemble time by step",
                "Seconds per request of each ensemble spent in each of its steps, by stage: the step's own "
                "average (the exporter's triton_sre_ensemble_step_seconds). The step whose queue grows is "
                "the one to scale or batch.",
                "s",
                [target(ensemble_steps(spec), "{{model}} {{step}} {{stage}}")],
            ),
        ],
    )
    tail_row(layout, spec, ms, by_model, "{{model}} ")
    layout.row(
        "Batching and cost",
        [
            timeseries(
                "Batching ratio",
                "Inferences per model execution, by model. 1 means nothing batches.",
                "short",
                [
                    target(
                        f"{panel_rate(c.NV_INFERENCE_COUNT, ms, by_model)}"
                        f" / ({panel_rate(c.NV_EXEC_COUNT, ms, by_model)} > 0)",
                        "{{model}}",
                    )
                ],
            ),
            timeseries(
                "Cost per 1k inferences",
                "The exporter's attributed cost per thousand inferences, by model "
                "(currency in the legend; needs pricing in the exporter config).",
                "short",
                [
                    target(
                        f"max by (model, currency) ({pq.selector(c.M_COST_PER_1K, exporter_matchers(spec))})",
                        "{{model}} ({{currency}})",
                    )
                ],
            ),
            timeseries(
                "Idle share of cost",
                "Share of device time with no model executing (paid for, unused).",
                "percentunit",
                [
                    target(
                        f"max by (instance) ({pq.selector(c.M_IDLE_COST_FRACTION, exp_job)})",
                        "{{instance}}",
                    )
                ],
            ),
        ],
    )
    runbook_link = {
        "matcher": {"id": "byName", "options": c.L_RUNBOOK},
        "properties": [
            {
                "id": "links",
                "value": [{"title": "Runbook", "url": f"{normalize_base(base_url)}${{__value.raw}}.md"}],
            }
        ],
    }
    layout.row(
        "Model state",
        [
            table(
                "Model states",
                "Each model version's state from Triton's repository index (all models, "
                "including ones that never served a request).",
                [
                    target(
                        f"max by (model, version, state) ({pq.selector(c.M_MODEL_STATE, exp_job)}) == 1",
                        "",
                        instant=True,
                        table=True,
                    )
                ],
            ),
            table(
                "Unavailable models and runbooks",
                "Models no instance serves: UNAVAILABLE versions with the diagnosed runbook (click it), and "
                "models the repository index lists with no version READY (a config Triton refused is there "
                f"by name alone, state {c.STATE_UNKNOWN}; a load under way; an unloaded model) with the "
                "runbook that finds their cause in Triton's log.",
                [target(unserved_rows(spec, exp_job), "", instant=True, table=True)],
                [runbook_link],
            ),
        ],
    )
    res = resource_matchers(spec)
    layout.row(
        "GPU and CPU",
        [
            gpu_utilization(res),
            timeseries(
                "GPU memory used",
                "GPU memory used per GPU.",
                "bytes",
                [target(pq.selector(c.NV_GPU_MEMORY_USED_BYTES, res), "{{instance}} {{gpu_uuid}}")],
            ),
            cpu_utilization(res),
            timeseries(
                "CPU memory used",
                "Host memory used as Triton reports it.",
                "bytes",
                [target(pq.selector(c.NV_CPU_MEMORY_USED_BYTES, res), "{{instance}}")],
            ),
        ],
    )
    layout.explain_empty({"GPU memory used": NEEDS_GPU, "Ensemble time by step": NO_ENSEMBLE})
    scaling_row(layout, spec)
    return dashboard(
        "Triton / Overview",
        UID_OVERVIEW,
        "All models of the selected Triton servers: traffic, errors, latency split, batching, cost, states.",
        variables(spec, multi_model=True),
        layout,
    )
