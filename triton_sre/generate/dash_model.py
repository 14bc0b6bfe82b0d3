"""The per-model drill-down dashboard: one model's traffic, latency stages, batching and instances."""

from __future__ import annotations

from typing import Any

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.conventions import UID_MODEL_DASHBOARD as UID_MODEL
from triton_sre.generate.panels import (
    NEEDS_GPU,
    NO_ENSEMBLE,
    RATE,
    Layout,
    dashboard,
    ensemble_steps,
    exporter_matchers,
    panel_rate,
    request_rate,
    resource_matchers,
    stage_targets,
    tail_row,
    target,
    timeseries,
    triton_matchers,
    variables,
)
from triton_sre.slo import Spec


def model(spec: Spec) -> dict[str, Any]:
    ms = triton_matchers(spec, "=")
    none: tuple[str, ...] = ()
    exp = exporter_matchers(spec, "=")
    total: pq.Matcher = (c.LABEL_GPU_UUID, "=", "")
    batches = pq.selector(c.M_EXECUTIONS_BY_BATCH_SIZE, exp)
    layout = Layout()
    layout.row(
        "Traffic and errors",
        [
            timeseries(
                "Requests per second",
                "Successful requests and failures by reason.",
                "reqps",
                [
                    target(panel_rate(c.NV_REQUEST_SUCCESS, ms, none), "success"),
                    target(panel_rate(c.NV_REQUEST_FAILURE, ms, (c.LABEL_REASON,)), "failed {{reason}}"),
                ],
            ),
            timeseries(
                "Error ratio",
                "Failed requests / all requests.",
                "percentunit",
                [
                    target(
                        f"({panel_rate(c.NV_REQUEST_FAILURE, ms, none)}) / ({request_rate(ms, none)} > 0)",
                        "error ratio",
                    )
                ],
            ),
            timeseries(
                "Inferences and executions",
                "Inferences and model executions per second.",
                "ops",
                [
                    target(panel_rate(c.NV_INFERENCE_COUNT, ms, none), "inferences"),
                    target(panel_rate(c.NV_EXEC_COUNT, ms, none), "executions"),
                ],
            ),
        ],
    )
    tail_row(layout, spec, ms, (c.LABEL_VERSION,), "v{{version}} ")
    layout.row(
        "Latency split by stage",
        [
            timeseries(
                "Seconds per request by stage",
                "Average seconds per successful request in each stage. For an ensemble, other holds its "
                "steps' queue (Triton counts it under none of the ensemble's stages): see Time by step.",
                "s",
                stage_targets(ms, (c.LABEL_VERSION,), "v{{version}} "),
                stack=True,
            ),
            timeseries(
                "Share of request time by stage",
                "The exporter's stage fractions (sum to 1 per version).",
                "percentunit",
                [
                    target(
                        f"max by (version, stage) ({pq.selector(c.M_REQUEST_STAGE_FRACTION, exp)})",
                        "v{{version}} {{stage}}",
                    )
                ],
                stack=True,
            ),
            timeseries(
                "Time by step",
                "For an ensemble: seconds per request in each of its steps, by stage (each step's own "
                "average, the exporter's triton_sre_ensemble_step_seconds). The step whose queue grows is "
                "the one to scale or batch.",
                "s",
                [
                    target(
                        ensemble_steps(spec, labels=(c.LABEL_VERSION, c.L_STEP, c.L_STAGE), model_op="="),
                        "v{{version}} {{step}} {{stage}}",
                    )
                ],
                stack=True,
            ),
        ],
    )
    layout.row(
        "Batching",
        [
            timeseries(
                "Batching ratio",
                "Inferences per execution (Triton counters). 1 means nothing batches. Empty for an "
                "ensemble: it has no batcher, and Triton counts its requests' rows per request.",
                "short",
                [
                    target(
                        f"{panel_rate(c.NV_INFERENCE_COUNT, ms, (c.LABEL_VERSION,))} / "
                        f"({panel_rate(c.NV_EXEC_COUNT, ms, (c.LABEL_VERSION,))} > 0) "
                        f"unless on () (max ({pq.selector(c.M_MODEL_ENSEMBLE, exp)}) == 1)",
                        "v{{version}}",
                    )
                ],
            ),
            timeseries(
                "Batch fill",
                "Batching ratio / max_batch_size (the exporter).",
                "percentunit",
                [target(f"max by (version) ({pq.selector(c.M_BATCH_FILL_RATIO, exp)})", "v{{version}}")],
            ),
            timeseries(
                "Pending requests",
                "Requests waiting in Triton for execution, per instance.",
                "short",
                [
                    target(
                        f"sum by (instance) ({pq.selector(c.NV_PENDING_REQUEST_COUNT, [*ms, total])})",
                        "{{instance}}",
                    )
                ],
            ),
            timeseries(
                "Executions by batch size",
                "Model executions per second by batch size (Triton statistics, via the exporter).",
                "ops",
                [
                    target(
                        f"sum by (batch_size) (rate({batches}[{RATE}]))",
                        "batch {{batch_size}}",
                    )
                ],
                stack=True,
            ),
        ],
    )
    res = resource_matchers(spec)
    layout.row(
        "GPU",
        [
            timeseries(
                "GPU utilization",
                "Utilization of the GPUs of the selected instances (0-1).",
                "percentunit",
                [target(pq.selector(c.NV_GPU_UTILIZATION, res), "{{instance}} {{gpu_uuid}}")],
            ),
            timeseries(
                "GPU memory",
                "GPU memory used and total.",
                "bytes",
                [
                    target(pq.selector(c.NV_GPU_MEMORY_USED_BYTES, res), "used {{gpu_uuid}}"),
                    target(pq.selector(c.NV_GPU_MEMORY_TOTAL_BYTES, res), "total {{gpu_uuid}}"),
                ],
            ),
        ],
    )
    layout.explain_empty({"GPU utilization": NEEDS_GPU, "GPU memory": NEEDS_GPU, "Time by step": NO_ENSEMBLE})
    return dashboard(
        "Triton / Model",
        UID_MODEL,
        "One model: traffic and errors, latency by stage, batching, GPU.",
        variables(spec, multi_model=False),
        layout,
    )
