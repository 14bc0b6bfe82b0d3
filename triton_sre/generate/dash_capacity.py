"""The "Triton / Capacity" dashboard (issue 16): memory per model, headroom and models that fit,
load times, power and energy cost, utilisation."""

from __future__ import annotations

from typing import Any

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.generate.panels import (
    NEEDS_GPU,
    NEEDS_GPU_MEMORY_USAGE,
    NEEDS_MEMORY_USAGE,
    RATE,
    Layout,
    cpu_utilization,
    dashboard,
    exporter_matchers,
    gpu_utilization,
    resource_matchers,
    table,
    target,
    timeseries,
    variables,
)
from triton_sre.slo import Spec


def capacity(spec: Spec) -> dict[str, Any]:
    """Memory per model, headroom and models that fit, load times, power and energy, utilisation."""
    exp = exporter_matchers(spec, None)
    res = resource_matchers(spec)
    gpu_memory = pq.selector(c.M_MODEL_MEMORY_BYTES, [*exp, (c.L_KIND, "=", c.MEMORY_TYPE_GPU)])
    host_memory = pq.selector(c.M_MODEL_MEMORY_BYTES, [*exp, (c.L_KIND, "!=", c.MEMORY_TYPE_GPU)])
    layout = Layout()
    layout.row(
        "Memory per model",
        [
            timeseries(
                "GPU memory per model, stacked per GPU",
                "GPU memory each model version took when it loaded (memory_usage of Triton's statistics; "
                "ONNX Runtime and TensorRT report it, Python models do not). One stack per GPU (device).",
                "bytes",
                [
                    target(
                        f"sum by (device, model, version) ({gpu_memory})", "{{device}} {{model}} v{{version}}"
                    )
                ],
                stack=True,
            ),
            timeseries(
                "Host memory per model",
                "CPU and pinned memory each model version took when it loaded.",
                "bytes",
                [target(f"sum by (kind, model, version) ({host_memory})", "{{kind}} {{model}} v{{version}}")],
                stack=True,
            ),
        ],
    )
    layout.row(
        "Headroom",
        [
            timeseries(
                "GPU memory headroom vs largest model",
                "Free GPU memory (total - used) and the largest resident model: below it, the model's "
                "next version cannot load side by side (TritonGPUMemoryHeadroomLow).",
                "bytes",
                [
                    target(pq.selector(c.M_GPU_MEMORY_HEADROOM_BYTES, exp), "free {{instance}} {{gpu_uuid}}"),
                    target(
                        pq.selector(c.M_GPU_LARGEST_MODEL_BYTES, exp),
                        "largest model {{instance}} {{gpu_uuid}}",
                    ),
                ],
            ),
            timeseries(
                "Models that fit",
                "Whole models of the median resident size (or capacity.model_bytes) that fit in the "
                "headroom, per GPU and on the host.",
                "none",
                [
                    target(pq.selector(c.M_GPU_MODELS_THAT_FIT, exp), "{{instance}} {{gpu_uuid}}"),
                    target(pq.selector(c.M_HOST_MODELS_THAT_FIT, exp), "{{instance}} host"),
                ],
            ),
            timeseries(
                "Host memory headroom",
                "Free host memory (nv_cpu_memory_total_bytes - nv_cpu_memory_used_bytes).",
                "bytes",
                [target(pq.selector(c.M_HOST_MEMORY_HEADROOM_BYTES, exp), "{{instance}}")],
            ),
            timeseries(
                "GPU metrics missing",
                "1: the host has GPUs but Triton exports no GPU metrics (MIG, DCGM held elsewhere): "
                "GPU headroom and energy are unknown, not zero.",
                "none",
                [target(pq.selector(c.M_GPU_METRICS_MISSING, exp), "{{instance}}")],
            ),
        ],
    )
    layout.row(
        "Load times",
        [
            table(
                "Load time per model",
                "Seconds the last load of each model version took (Triton's nv_model_load_duration_secs, "
                "or LOADING -> READY in the repository index at the poll interval). Size the startup "
                "probe at 2 x the slowest + a margin.",
                [
                    target(
                        f"sort_desc({pq.selector(c.M_MODEL_LOAD_SECONDS, exp)})", "", instant=True, table=True
                    )
                ],
            ),
            timeseries(
                "Load time per model over time",
                "The last load's duration per model version.",
                "s",
                [target(pq.selector(c.M_MODEL_LOAD_SECONDS, exp), "{{model}} v{{version}}")],
            ),
        ],
    )
    layout.row(
        "Power and energy",
        [
            timeseries(
                "GPU power",
                "Triton's nv_gpu_power_usage and the limit nv_gpu_power_limit, in watts.",
                "watt",
                [
                    target(pq.selector(c.NV_GPU_POWER_USAGE, res), "used {{instance}} {{gpu_uuid}}"),
                    target(pq.selector(c.NV_GPU_POWER_LIMIT, res), "limit {{instance}} {{gpu_uuid}}"),
                ],
            ),
            timeseries(
                "GPU energy rate",
                "rate(nv_energy_consumption): joules per second, i.e. average watts.",
                "watt",
                [
                    target(
                        f"rate({pq.selector(c.NV_ENERGY_CONSUMPTION, res)}[{RATE}])",
                        "{{instance}} {{gpu_uuid}}",
                    )
                ],
            ),
            timeseries(
                "Energy cost per hour",
                "What each GPU's energy costs per hour at pricing.kwh, and per model with "
                "pricing.energy_by_model.",
                "none",
                [
                    target(pq.selector(c.M_ENERGY_COST_PER_HOUR, exp), "{{gpu_uuid}} ({{currency}})"),
                    target(
                        pq.selector(c.M_MODEL_ENERGY_COST_PER_HOUR, exp),
                        "{{model}} v{{version}} ({{currency}})",
                    ),
                ],
                stack=False,
            ),
        ],
    )
    layout.row(
        "Utilisation",
        [
            gpu_utilization(res),
            cpu_utilization(res),
            timeseries(
                "GPU memory used / total",
                "Triton's nv_gpu_memory_used_bytes over nv_gpu_memory_total_bytes per GPU.",
                "percentunit",
                [
                    target(
                        f"{pq.selector(c.NV_GPU_MEMORY_USED_BYTES, res)} / "
                        f"({pq.selector(c.NV_GPU_MEMORY_TOTAL_BYTES, res)} > 0)",
                        "{{instance}} {{gpu_uuid}}",
                    )
                ],
            ),
        ],
    )
    layout.explain_empty(
        {
            "GPU memory per model, stacked per GPU": NEEDS_GPU_MEMORY_USAGE,
            "Host memory per model": NEEDS_MEMORY_USAGE,
            "GPU memory headroom vs largest model": NEEDS_GPU_MEMORY_USAGE,
            "Models that fit": NEEDS_MEMORY_USAGE,
            "GPU power": NEEDS_GPU,
            "GPU energy rate": NEEDS_GPU,
            "Energy cost per hour": NEEDS_GPU,
            "GPU memory used / total": NEEDS_GPU,
        }
    )
    templating = variables(spec, multi_model=True)
    templating.list = [v for v in templating.list if v.name != "model"]  # capacity is per GPU and host
    return dashboard(
        "Triton / Capacity",
        c.UID_CAPACITY_DASHBOARD,
        "Per GPU: memory per model, headroom and how many more models fit, load times, power and "
        "energy cost, GPU and CPU utilisation.",
        templating,
        layout,
    )
