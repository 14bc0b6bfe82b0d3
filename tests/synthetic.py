"""Synthetic Triton `/metrics` payloads for tests and benchmarks.

The output copies the structure of a real Triton 2.51 scrape (tests/data/triton_2.51_metrics_cpu.txt):
the same families in the same order, the same HELP/TYPE lines, prometheus-cpp's label order
(label names sorted, `quantile` last), its number formatting (`40`, `0.25`, `Nan`) and the
summaries' five default quantiles. With `gpus > 0` it adds what a GPU server emits on top: each
per-model series a second time with a `gpu_uuid` label, and the `nv_gpu_*` / `nv_energy_consumption`
families between the pinned-memory and the CPU families (this part follows Triton's source and
published GPU scrapes: the capture comes from a CPU-only server). As in Triton's core, the GPU
instance reports the executions on its `gpu_uuid` series and the model's own reporter (the series
without it) keeps its counters at 0: nothing here fails or hits a cache.

Names are predictable so tests can look them up: models `model_0000`, `model_0001`, ...,
versions `"1"` .. `str(versions)`, GPUs `GPU-<uuid>` derived from `seed`. Each model version
runs on GPU `index % gpus`; its `gpu_uuid` series carries the values, its series without it zeros.
Values are internally consistent: inference count >= success count >= execution count, the four
stage durations add up to no more than the request duration, and summary `_count`/`_sum` equal
the success count and request duration.
"""

from __future__ import annotations

import math
import random
import uuid

from triton_sre import conventions as c

# (name, TYPE, HELP) exactly as Triton 2.51 prints them, in its output order.
_PER_MODEL_FAMILIES: tuple[tuple[str, str, str], ...] = (
    (c.NV_REQUEST_SUCCESS, "counter", "Number of successful inference requests, all batch sizes"),
    (c.NV_REQUEST_FAILURE, "counter", "Number of failed inference requests, all batch sizes"),
    (c.NV_INFERENCE_COUNT, "counter", "Number of inferences performed (does not include cached requests)"),
    (c.NV_EXEC_COUNT, "counter", "Number of model executions performed (does not include cached requests)"),
    (
        c.NV_REQUEST_DURATION_US,
        "counter",
        "Cumulative inference request duration in microseconds (includes cached requests)",
    ),
    (
        c.NV_QUEUE_DURATION_US,
        "counter",
        "Cumulative inference queuing duration in microseconds (includes cached requests)",
    ),
    (
        c.NV_COMPUTE_INPUT_DURATION_US,
        "counter",
        "Cumulative compute input duration in microseconds (does not include cached requests)",
    ),
    (
        c.NV_COMPUTE_INFER_DURATION_US,
        "counter",
        "Cumulative compute inference duration in microseconds (does not include cached requests)",
    ),
    (
        c.NV_COMPUTE_OUTPUT_DURATION_US,
        "counter",
        "Cumulative inference compute output duration in microseconds (does not include cached requests)",
    ),
    (
        c.NV_PENDING_REQUEST_COUNT,
        "gauge",
        "Instantaneous number of pending requests awaiting execution per-model.",
    ),
)
_PINNED_FAMILIES: tuple[tuple[str, str, str], ...] = (
    ("nv_pinned_memory_pool_total_bytes", "gauge", "Pinned memory pool total memory size, in bytes"),
    ("nv_pinned_memory_pool_used_bytes", "gauge", "Pinned memory pool used memory size, in bytes"),
)
_GPU_FAMILIES: tuple[tuple[str, str, str], ...] = (
    (c.NV_GPU_UTILIZATION, "gauge", "GPU utilization rate [0.0 - 1.0)"),
    (c.NV_GPU_MEMORY_TOTAL_BYTES, "gauge", "GPU total memory, in bytes"),
    (c.NV_GPU_MEMORY_USED_BYTES, "gauge", "GPU used memory, in bytes"),
    (c.NV_GPU_POWER_USAGE, "gauge", "GPU power usage in watts"),
    (c.NV_GPU_POWER_LIMIT, "gauge", "GPU power management limit in watts"),
    (c.NV_ENERGY_CONSUMPTION, "counter", "GPU energy consumption in joules since the Triton Server started"),
)
_CPU_FAMILIES: tuple[tuple[str, str, str], ...] = (
    (c.NV_CPU_UTILIZATION, "gauge", "CPU utilization rate [0.0 - 1.0]"),
    (c.NV_CPU_MEMORY_TOTAL_BYTES, "gauge", "CPU total memory (RAM), in bytes"),
    (c.NV_CPU_MEMORY_USED_BYTES, "gauge", "CPU used memory (RAM), in bytes"),
)
# (family, HELP); each summary mirrors one of the duration counters above.
_SUMMARY_FAMILIES: tuple[tuple[str, str], ...] = (
    (
        c.NV_REQUEST_SUMMARY_US,
        "Summary of inference request duration in microseconds (includes cached requests)",
    ),
    (
        c.NV_QUEUE_SUMMARY_US,
        "Summary of inference queuing duration in microseconds (includes cached requests)",
    ),
    (
        "nv_inference_compute_input_summary_us",
        "Cumulative compute input duration in microseconds (does not include cached requests)",
    ),
    (
        "nv_inference_compute_infer_summary_us",
        "Cumulative compute inference duration in microseconds (does not include cached requests)",
    ),
    (
        "nv_inference_compute_output_summary_us",
        "Cumulative inference compute output duration in microseconds (does not include cached requests)",
    ),
)
_SUMMARY_SOURCE: tuple[str, ...] = (
    c.NV_REQUEST_DURATION_US,
    c.NV_QUEUE_DURATION_US,
    c.NV_COMPUTE_INPUT_DURATION_US,
    c.NV_COMPUTE_INFER_DURATION_US,
    c.NV_COMPUTE_OUTPUT_DURATION_US,
)
QUANTILES: tuple[str, ...] = ("0.5", "0.9", "0.95", "0.99", "0.999")
FAILURE_REASONS: tuple[str, ...] = ("OTHER", "BACKEND", "CANCELED", "REJECTED")


def _fmt(value: float) -> str:
    """prometheus-cpp's number formatting: integers bare, 16 significant digits, `Nan`, `+Inf`."""
    if math.isnan(value):
        return "Nan"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == int(value) and abs(value) < 1e16:
        return str(int(value))
    return f"{value:.16g}"


class _ModelVersion:
    """One model version's counter values, plus the labels it is exported under."""

    __slots__ = ("gpu", "model", "quantiles", "reasons", "values", "version")

    def __init__(self, model: str, version: str, gpu: str, rng: random.Random, *, failed: bool) -> None:
        self.model = model
        self.version = version
        self.gpu = gpu
        # prometheus-cpp prints a family's series in hash order; the real scrape shows the reasons
        # of two models in two different orders. The order depends on the labels only: the real
        # server writes its series in the same order at every scrape, whatever the values.
        reasons = list(FAILURE_REASONS)
        rng.shuffle(reasons)  # as before, so every seed draws the same values
        counts = {
            reason: float(rng.randint(1, 40)) if not failed and rng.random() < 0.1 else 0.0
            for reason in reasons
        }
        order = list(FAILURE_REASONS)
        random.Random(f"{model}/{version}").shuffle(order)
        self.reasons = tuple((reason, counts[reason]) for reason in order)
        values: dict[str, float] = dict.fromkeys(c.PER_MODEL_COUNTERS, 0.0)
        values[c.NV_PENDING_REQUEST_COUNT] = 0.0
        self.quantiles: dict[str, tuple[float, ...]] = {}
        idle = failed or rng.random() < 0.2
        success = 0 if idle else rng.randint(1, 2_000_000)
        if success:
            inferences = success * rng.randint(1, 8)
            executions = max(1, success // rng.randint(1, 16))
            request_us = success * rng.uniform(150.0, 40_000.0)
            queue_us = request_us * rng.uniform(0.0, 0.6)
            compute = request_us - queue_us
            values.update(
                {
                    c.NV_REQUEST_SUCCESS: float(success),
                    c.NV_INFERENCE_COUNT: float(inferences),
                    c.NV_EXEC_COUNT: float(executions),
                    c.NV_REQUEST_DURATION_US: float(int(request_us)),
                    c.NV_QUEUE_DURATION_US: float(int(queue_us)),
                    c.NV_COMPUTE_INPUT_DURATION_US: float(int(compute * rng.uniform(0.0, 0.05))),
                    c.NV_COMPUTE_INFER_DURATION_US: float(int(compute * rng.uniform(0.5, 0.9))),
                    c.NV_COMPUTE_OUTPUT_DURATION_US: float(int(compute * rng.uniform(0.0, 0.05))),
                    c.NV_PENDING_REQUEST_COUNT: float(rng.choice((0, 0, 0, 1, 3, 12))),
                }
            )
            for family in _SUMMARY_SOURCE:
                # Quantiles are `Nan` once the sliding window holds no observation (as in the
                # captured scrape); otherwise increasing latencies around the mean.
                if rng.random() < 0.5:
                    self.quantiles[family] = (math.nan,) * len(QUANTILES)
                else:
                    mean = values[family] / success
                    self.quantiles[family] = tuple(float(int(mean * f)) for f in (0.8, 1.6, 2.0, 3.5, 6.0))
        self.values = values

    def label_sets(self) -> list[tuple[str, bool]]:
        """The label prefix of each series of this model version and whether it carries the values:
        the model's own series (zeros on a GPU model), then the GPU instance's."""
        base = f'model="{self.model}",version="{self.version}"'
        if self.gpu:
            return [(base, False), (f'gpu_uuid="{self.gpu}",{base}', True)]
        return [(base, True)]


def _family_header(lines: list[str], name: str, typ: str, help_text: str) -> None:
    lines.append(f"# HELP {name} {help_text}")
    lines.append(f"# TYPE {name} {typ}")


def triton_metrics_payload(
    models: int,
    versions: int,
    gpus: int = 0,
    seed: int = 0,
    *,
    summaries: bool = True,
    failed_models: int = 0,
) -> str:
    """A `/metrics` body as Triton 2.51 would serve it for `models` x `versions` loaded models.

    `summaries=False` drops the five latency summaries (Triton's default without
    `--metrics-config summary_latencies=true`). `failed_models` adds models named `failed_0000`,
    ... that appear only in `nv_inference_request_failure` (all zero), like model `exc` in the
    captured scrape.
    """
    if models < 0 or versions < 0 or gpus < 0 or failed_models < 0:
        raise ValueError("models, versions, gpus and failed_models must be >= 0")
    rng = random.Random(seed)
    gpu_uuids = [f"GPU-{uuid.UUID(int=rng.getrandbits(128), version=4)}" for _ in range(gpus)]
    loaded: list[_ModelVersion] = []
    for m in range(models):
        for v in range(1, versions + 1):
            gpu = gpu_uuids[len(loaded) % gpus] if gpus else ""
            loaded.append(_ModelVersion(f"model_{m:04d}", str(v), gpu, rng, failed=False))
    failed = [_ModelVersion(f"failed_{m:04d}", "1", "", rng, failed=True) for m in range(failed_models)]

    lines: list[str] = []
    for name, typ, help_text in _PER_MODEL_FAMILIES:
        with_failed = failed if name == c.NV_REQUEST_FAILURE else []
        if not loaded and not with_failed:
            continue  # prometheus-cpp omits a family without series
        _family_header(lines, name, typ, help_text)
        for mv in loaded + with_failed:
            if name == c.NV_REQUEST_FAILURE:
                for labels, carries in mv.label_sets():
                    model_part, version_part = labels.rsplit(",", 1)
                    for reason, count in mv.reasons:
                        value = _fmt(count if carries else 0.0)
                        lines.append(f'{name}{{{model_part},reason="{reason}",{version_part}}} {value}')
            else:
                for labels, carries in mv.label_sets():
                    lines.append(f"{name}{{{labels}}} {_fmt(mv.values[name] if carries else 0.0)}")

    def gauges(families: tuple[tuple[str, str, str], ...], values: list[float], label: str = "") -> None:
        for (name, typ, help_text), value in zip(families, values, strict=True):
            _family_header(lines, name, typ, help_text)
            lines.append(f"{name}{label} {_fmt(value)}")

    gauges(_PINNED_FAMILIES, [268435456.0, float(rng.choice((0, 0, 1048576, 4194304)))])
    if gpus:
        per_gpu: list[list[float]] = []
        for _ in gpu_uuids:
            total = 85899345920.0
            limit = 400.0
            per_gpu.append(
                [
                    round(rng.random(), 2),
                    total,
                    float(rng.randrange(1 << 30, int(total))),
                    round(rng.uniform(60.0, limit), 3),
                    limit,
                    round(rng.uniform(1e5, 1e8), 3),
                ]
            )
        for index, (name, typ, help_text) in enumerate(_GPU_FAMILIES):
            _family_header(lines, name, typ, help_text)
            for gpu, values in zip(gpu_uuids, per_gpu, strict=True):
                lines.append(f'{name}{{gpu_uuid="{gpu}"}} {_fmt(values[index])}')
    memory_total = 25276510208.0
    gauges(
        _CPU_FAMILIES,
        [round(rng.random(), 6), memory_total, float(rng.randrange(1 << 28, int(memory_total)))],
    )

    if summaries and loaded:
        for (name, help_text), source in zip(_SUMMARY_FAMILIES, _SUMMARY_SOURCE, strict=True):
            _family_header(lines, name, "summary", help_text)
            for mv in loaded:
                for labels, carries in mv.label_sets():
                    count = _fmt(mv.values[c.NV_REQUEST_SUCCESS] if carries else 0.0)
                    total = _fmt(mv.values[source] if carries else 0.0)
                    quantiles = mv.quantiles.get(source) if carries else None
                    quantiles = quantiles or (math.nan,) * len(QUANTILES)
                    lines.append(f"{name}_count{{{labels}}} {count}")
                    lines.append(f"{name}_sum{{{labels}}} {total}")
                    for q, value in zip(QUANTILES, quantiles, strict=True):
                        lines.append(f'{name}{{{labels},quantile="{q}"}} {_fmt(value)}')
    lines.append("")
    return "\n".join(lines)
