"""The capacity families (exporter/capacity.py) as exposition `Family` rows, for the collector."""

from __future__ import annotations

from collections.abc import Iterator

from triton_sre import conventions as c
from triton_sre.exporter.capacity import Capacity
from triton_sre.exporter.derive import Derivation
from triton_sre.exporter.family import GAUGE, Family

_MV = (c.LABEL_MODEL, c.LABEL_VERSION)


def capacity_families(d: Derivation) -> Iterator[Family]:
    """Per-model memory, load times, headroom, models that fit, energy (exporter/capacity.py)."""
    cap: Capacity | None = d.capacity
    if cap is None:
        return
    yield Family(
        GAUGE,
        c.M_MODEL_MEMORY_BYTES,
        "Memory a model version took when it loaded, from Triton's statistics (memory_usage); kind is "
        "CPU, CPU_PINNED or GPU, device the GPU uuid (or Triton's device id) or host. Empty where the "
        "backend reports nothing (Python).",
        [*_MV, c.L_KIND, c.L_DEVICE],
        (([m.model, m.version, m.kind, m.device], m.bytes) for m in cap.memory),
    )
    yield Family(
        GAUGE,
        c.M_MODEL_LOAD_SECONDS,
        f"Seconds the last load of a model version took: Triton's {c.NV_MODEL_LOAD_DURATION_SECS} when "
        "exported (24.11+), else the time from the first poll seeing LOADING to the first seeing READY "
        "in the repository index (resolution: the exporter's poll interval).",
        _MV,
        (([model, version], s) for (model, version), s in sorted(cap.load_seconds.items())),
    )
    if cap.gpu_metrics_missing is not None:
        yield Family(
            GAUGE,
            c.M_GPU_METRICS_MISSING,
            "1 if this host has GPUs (models hold GPU memory or carry gpu_uuid) but Triton exports no "
            "GPU memory metrics (MIG-enabled GPU, DCGM unavailable or --allow-gpu-metrics=false), else 0.",
            (),
            [((), float(cap.gpu_metrics_missing))],
        )
    gpus = [g for g in cap.gpus if g.headroom_bytes is not None]
    yield Family(
        GAUGE,
        c.M_GPU_MEMORY_HEADROOM_BYTES,
        "GPU memory not in use: nv_gpu_memory_total_bytes - nv_gpu_memory_used_bytes.",
        [c.LABEL_GPU_UUID],
        (([g.device], g.headroom_bytes) for g in gpus),
    )
    yield Family(
        GAUGE,
        c.M_GPU_MODELS_THAT_FIT,
        "Whole models that fit in the GPU's headroom: headroom / the median GPU memory of the model "
        "versions resident on it (or capacity.model_bytes when Triton reports none).",
        [c.LABEL_GPU_UUID],
        (([g.device], g.models_that_fit) for g in gpus if g.models_that_fit is not None),
    )
    yield Family(
        GAUGE,
        c.M_GPU_LARGEST_MODEL_BYTES,
        "GPU memory of the largest model version resident on the GPU: the headroom its next version "
        "needs to load side by side (capacity.model_bytes where models run there but report no size).",
        [c.LABEL_GPU_UUID],
        (([g.device], g.largest_model_bytes) for g in cap.gpus if g.largest_model_bytes is not None),
    )
    if cap.host is not None and cap.host.headroom_bytes is not None:
        yield Family(
            GAUGE,
            c.M_HOST_MEMORY_HEADROOM_BYTES,
            "Host memory not in use: nv_cpu_memory_total_bytes - nv_cpu_memory_used_bytes.",
            (),
            [((), cap.host.headroom_bytes)],
        )
        if cap.host.models_that_fit is not None:
            yield Family(
                GAUGE,
                c.M_HOST_MODELS_THAT_FIT,
                "Whole models that fit in host memory headroom: headroom / the median CPU memory of "
                "resident model versions (or capacity.model_bytes when Triton reports none).",
                (),
                [((), cap.host.models_that_fit)],
            )
    yield Family(
        GAUGE,
        c.M_ENERGY_COST_PER_HOUR,
        "What the GPU's energy costs per hour at pricing.kwh: the rate of nv_energy_consumption over "
        "the window (joules/s = W) / 1000 * kwh.",
        [c.LABEL_GPU_UUID, c.L_CURRENCY],
        (
            ([g.device, cap.currency], g.energy_cost_per_hour)
            for g in cap.gpus
            if g.energy_cost_per_hour is not None
        ),
    )
    yield Family(
        GAUGE,
        c.M_MODEL_ENERGY_COST_PER_HOUR,
        "GPU energy cost per hour charged to a model version by its share of execution compute time "
        "on the GPUs it runs on (pricing.energy_by_model).",
        [*_MV, c.L_CURRENCY],
        (
            ([model, version, cap.currency], v)
            for (model, version), v in sorted(cap.model_energy_cost_per_hour.items())
        ),
    )
