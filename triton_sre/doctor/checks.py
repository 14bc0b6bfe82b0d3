"""Pure: what Triton exports -> one `Check` per input triton-sre uses, with the exact fix.

Shared by `triton-sre doctor` (which fetches everything once) and the exporter (which evaluates
the same checks from its poll and exposes `triton_sre_input_missing{check}`). No I/O here: the
callers hand in `TritonFacts` (facts.py).

A check is `ok` when the input is there (or nothing uses it here), and `needed` when something
triton-sre ships for this setup reads it: `doctor` exits 1 when a needed check is not ok. Facts
about Triton's releases are cited in docs/doctor.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from triton_sre import conventions as c
from triton_sre.conventions.triton_releases import first_release
from triton_sre.diagnosis.releases import server_version_of_release
from triton_sre.doctor.facts import (
    TritonFacts,
    minor_version,
    release_of,
)
from triton_sre.doctor.llmslo import uncovered_llm_slos
from triton_sre.slo import Spec


def _minor_since(family: str) -> int:
    """The server minor version (2.<minor>) of the first release registering `family`, read from the
    family table (conventions/triton_releases.py) so doctor and docs/triton-families.md agree."""
    version = server_version_of_release(first_release(family))
    assert version is not None, family  # every family watched here is newer than 21.02
    return int(version.split(".")[1])


# 24.11: --metrics-config histogram_latencies=true, with the first-response histogram
HISTOGRAM_LATENCIES_SINCE = _minor_since(c.NV_FIRST_RESPONSE_HISTOGRAM_MS)
# 26.01 (2.65.0): the first-response histogram for every model, not only decoupled (core PR #464, first in
# core's r26.01 branch; the server's r26.01 TRITON_VERSION is 2.65.0: 2.60 is 25.08, 25.07 was 2.59.1)
HISTOGRAM_ALL_MODELS_SINCE = 65
LOAD_DURATION_SINCE = _minor_since(c.NV_MODEL_LOAD_DURATION_SECS)
PENDING_COUNT_SINCE = _minor_since(c.NV_PENDING_REQUEST_COUNT)
CPU_METRICS_SINCE = _minor_since(c.NV_CPU_UTILIZATION)  # with --allow-cpu-metrics (server PR #4803)
VLLM_METRICS_SINCE = _minor_since(c.VLLM_PROMPT_TOKENS)  # the vLLM backend reports through Triton

SUMMARY_FLAG = "--metrics-config summary_latencies=true"
HISTOGRAM_FLAG = "--metrics-config histogram_latencies=true"
REPORT_CUSTOM_METRICS_LINE = (
    f'parameters: {{ key: "{c.PARAM_REPORT_CUSTOM_METRICS}" value: {{ string_value: "true" }} }}'
)


@dataclass(frozen=True)
class Check:
    id: str
    ok: bool
    needed: bool
    found: str
    affects: tuple[str, ...]
    fix: str
    needs_release: str = ""  # YY.MM when this server predates the input: only that upgrade fixes it

    @property
    def missing(self) -> bool:
        """A needed input is absent: what `doctor` exits 1 for and the exporter reports as 1."""
        return self.needed and not self.ok

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "ok": self.ok,
            "needed": self.needed,
            "found": self.found,
            "affects": list(self.affects),
            "fix": self.fix,
            c.L_NEEDS_RELEASE: self.needs_release,
        }


def _names(items: Iterable[str]) -> str:
    """At most six names, then how many more."""
    items = sorted(items)
    shown = ", ".join(items[:6])
    return shown + (f" and {len(items) - 6} more" if len(items) > 6 else "")


def triton_checks(facts: TritonFacts, spec: Spec | None = None) -> list[Check]:
    """Every Triton-side check, in c.TRITON_CHECKS order."""
    return [
        latency_quantiles(facts, spec),
        gpu_metrics(facts),
        cpu_metrics(facts),
        pending_requests(facts),
        load_duration(facts),
        model_memory(facts),
        llm_metrics(facts, spec),
        response_cache(facts),
    ]


def latency_quantiles(facts: TritonFacts, spec: Spec | None) -> Check:
    wanted: tuple[str, ...] | None = spec.latency_metrics if spec is not None else None
    has = {
        c.LATENCY_SOURCE_SUMMARY: c.NV_REQUEST_SUMMARY_US in facts.families,
        c.LATENCY_SOURCE_HISTOGRAM: c.NV_FIRST_RESPONSE_HISTOGRAM_MS in facts.families,
    }
    affects = (
        f"recording rules {c.rec_latency_quantile(c.REC_LEVEL_MODEL, c.LATENCY_REQUEST)} and "
        f"{c.rec_latency_quantile(c.REC_LEVEL_MODEL, c.LATENCY_QUEUE)}",
        f"latency SLOs (time slices judge averages without them), {c.ALERT_SLO_LATENCY_BUDGET_BURN}",
        f"alert {c.ALERT_LATENCY_QUANTILES_MISSING} fires for every model with traffic",
        "panels: request and queue latency p50 / p95 / p99, latency heatmap",
    )
    minor = minor_version(facts.version)
    fixes = {
        c.LATENCY_SOURCE_SUMMARY: f"start tritonserver with {SUMMARY_FLAG}",
        c.LATENCY_SOURCE_HISTOGRAM: (
            f"start tritonserver with {HISTOGRAM_FLAG} (Triton 24.11 / 2.52 or later"
            + (f"; this server is {facts.version}" if minor and minor < HISTOGRAM_LATENCIES_SINCE else "")
            + ")"
        ),
    }
    exported = [source for source, present in has.items() if present]
    if exported:
        found = f"Triton exports latency {' and '.join(exported)}"
    elif c.NV_REQUEST_DURATION_US in facts.families:
        found = "Triton exports latency averages only (no summary, no histogram)"
    else:  # --metrics-config counter_latencies=false without summaries, or an excerpt without them
        found = f"Triton exports no request latency (no {c.NV_REQUEST_DURATION_US}, no summary, no histogram)"
    cached = [m.name for m in facts.models if m.response_cache]
    if cached and has[c.LATENCY_SOURCE_SUMMARY]:
        found += f"; no request summary for models with the response cache on ({_names(cached)})"
    if has[c.LATENCY_SOURCE_HISTOGRAM] and (minor is None or minor < HISTOGRAM_ALL_MODELS_SINCE):
        plain = [m.name for m in facts.models if not m.decoupled]
        if plain:
            found += f"; before 26.01 the histogram covers decoupled models only, not {_names(plain)}"
    if wanted is None:  # no spec (the exporter): either source will do
        wanted = tuple(exported) or (c.LATENCY_SOURCE_SUMMARY,)
    if not wanted:
        return Check(
            c.CHECK_LATENCY_QUANTILES,
            ok=bool(exported),
            needed=False,
            found=found + "; the spec lists no latency_metrics, so latency SLOs judge averages",
            affects=affects,
            fix=f"{fixes[c.LATENCY_SOURCE_SUMMARY]} and set scrape.latency_metrics: [summary] in slos.yaml",
        )
    missing = [source for source in wanted if not has[source]]
    unlisted = [source for source in exported if source not in wanted]
    if unlisted and not missing:
        found += f"; slos.yaml does not list {' and '.join(unlisted)} in scrape.latency_metrics"
    return Check(
        c.CHECK_LATENCY_QUANTILES,
        ok=not missing,
        needed=True,
        found=found + (f"; slos.yaml expects {' and '.join(missing)}" if missing else ""),
        affects=affects,
        fix="; ".join(fixes[source] for source in missing)
        or ("none needed" if not unlisted else f"add {' and '.join(unlisted)} to scrape.latency_metrics"),
    )


def gpu_metrics(facts: TritonFacts) -> Check:
    present = sorted(f for f in c.NV_GPU_METRIC_FAMILIES if f in facts.families)
    gpu_models = {m.name for m in facts.models if m.gpu} | set(facts.gpu_memory_models)
    affects = (
        f"{c.M_GPU_MEMORY_HEADROOM_BYTES}, {c.M_GPU_MODELS_THAT_FIT}, {c.M_ENERGY_COST_PER_HOUR}",
        f"alerts {c.ALERT_GPU_MEMORY_NEAR_LIMIT}, {c.ALERT_GPU_MEMORY_HEADROOM_LOW}",
        "panels: GPU utilization, GPU memory, power and energy cost",
    )
    if present:
        return Check(
            c.CHECK_GPU_METRICS,
            True,
            bool(gpu_models),
            f"Triton exports {', '.join(present)}",
            affects,
            "none needed",
        )
    if not gpu_models:
        return Check(
            c.CHECK_GPU_METRICS,
            True,
            False,
            "no GPU metrics and no model on a GPU (a CPU-only server): nothing needs them",
            affects,
            "none needed; on a GPU host Triton exports them unless started with --allow-gpu-metrics=false",
        )
    return Check(
        c.CHECK_GPU_METRICS,
        False,
        True,
        f"models run on a GPU ({_names(gpu_models)}) but Triton exports no nv_gpu_* family",
        affects,
        "Triton reads GPU metrics through DCGM: use a Triton build with DCGM (the NGC image) and do not "
        "pass --allow-gpu-metrics=false; on MIG-partitioned GPUs, or when another DCGM agent holds the "
        "GPU, Triton exports none (server #5324): scrape NVIDIA's dcgm-exporter instead",
    )


def cpu_metrics(facts: TritonFacts) -> Check:
    missing = [f for f in c.NV_CPU_METRIC_FAMILIES if f not in facts.families]
    minor = minor_version(facts.version)
    old = minor is not None and minor < CPU_METRICS_SINCE
    if not missing:
        found, fix = "Triton exports CPU utilization and memory", "none needed"
    elif old:  # its tritonserver has no --allow-cpu-metrics option to give
        found = f"Triton does not export {', '.join(missing)} (Triton {facts.version} predates them)"
        fix = f"upgrade Triton to {release_of(CPU_METRICS_SINCE)} (2.{CPU_METRICS_SINCE}) or later"
    else:
        found = f"Triton does not export {', '.join(missing)}"
        fix = (
            "start tritonserver with --allow-cpu-metrics=true (and --allow-metrics=true); CPU metrics "
            f"exist on Linux only, since {release_of(CPU_METRICS_SINCE)} (2.{CPU_METRICS_SINCE})"
        )
    return Check(
        c.CHECK_CPU_METRICS,
        not missing,
        True,
        found,
        (
            f"{c.M_HOST_MEMORY_HEADROOM_BYTES}, {c.M_HOST_MODELS_THAT_FIT}",
            "panels: CPU utilization and host memory",
        ),
        fix,
        release_of(CPU_METRICS_SINCE) if missing and old else "",
    )


def pending_requests(facts: TritonFacts) -> Check:
    present = c.NV_PENDING_REQUEST_COUNT in facts.families
    minor = minor_version(facts.version)
    old = minor is not None and minor < PENDING_COUNT_SINCE
    return Check(
        c.CHECK_PENDING_REQUESTS,
        present,
        True,
        f"Triton exports {c.NV_PENDING_REQUEST_COUNT}"
        if present
        else f"no {c.NV_PENDING_REQUEST_COUNT}" + (f" (Triton {facts.version} predates it)" if old else ""),
        (
            f"alerts {c.ALERT_PENDING_REQUESTS_GROWING} and "
            f"{c.ALERT_BATCHING_INEFFECTIVE} (it needs a backlog)",
            f"autoscaling signal {c.SIGNAL_PENDING}",
            "panel: pending requests per model",
        ),
        "none needed"
        if present
        else f"upgrade Triton to {release_of(PENDING_COUNT_SINCE)} (2.{PENDING_COUNT_SINCE}) or later",
        release_of(PENDING_COUNT_SINCE) if not present and old else "",
    )


def load_duration(facts: TritonFacts) -> Check:
    affects = (f"{c.M_MODEL_LOAD_SECONDS}", f"alert {c.ALERT_MODEL_LOAD_SLOW}", "panel: model load time")
    if c.NV_MODEL_LOAD_DURATION_SECS in facts.families:
        return Check(
            c.CHECK_LOAD_DURATION,
            True,
            True,
            f"Triton exports {c.NV_MODEL_LOAD_DURATION_SECS}",
            affects,
            "none needed",
        )
    minor = minor_version(facts.version)
    if minor is not None and minor < LOAD_DURATION_SINCE:
        return Check(
            c.CHECK_LOAD_DURATION,
            True,
            False,
            f"Triton {facts.version} has no {c.NV_MODEL_LOAD_DURATION_SECS} (24.11+): the exporter times "
            "loads from the repository index instead (LOADING -> READY at its poll interval; only loads "
            "through model control are seen LOADING)",
            affects,
            f"upgrade Triton to {release_of(LOAD_DURATION_SINCE)} (2.{LOAD_DURATION_SINCE}) or later "
            "for exact load times",
        )
    return Check(
        c.CHECK_LOAD_DURATION,
        False,
        False,
        f"no {c.NV_MODEL_LOAD_DURATION_SECS}"
        + (f" although Triton {facts.version} has it" if minor is not None else " (Triton's version unknown)")
        + ": load times come from the repository index only",
        affects,
        "it appears after a model loads; check that metrics are enabled (--allow-metrics=true)",
    )


# Core's ModelReadyVersions keys the all-model statistics `<namespace>::<model>`, which no lookup finds
# (24.05-26.x): with --model-namespacing=true `/v2/models/stats` answers 400 whatever the models.
NAMESPACED_STATS_FIX = (
    "none while Triton runs with --model-namespacing=true: it refuses the all-model statistics then "
    "(docs/exporter.md, Model namespacing)"
)


def model_memory(facts: TritonFacts) -> Check:
    # an ensemble holds no memory of its own (its steps do) and has no backend: never a silent model
    names = {m.name for m in facts.models if m.platform != c.PLATFORM_ENSEMBLE}
    silent = names - set(facts.memory_models)
    backends = sorted({m.backend or "?" for m in facts.models if m.name in silent})
    affects = (
        f"{c.M_MODEL_MEMORY_BYTES}, {c.M_GPU_MODELS_THAT_FIT}, {c.M_GPU_LARGEST_MODEL_BYTES}",
        f"alert {c.ALERT_GPU_MEMORY_HEADROOM_LOW}",
        "panel: memory per model",
    )
    if facts.stats_refused:
        return Check(c.CHECK_MODEL_MEMORY, False, False, facts.stats_refused, affects, NAMESPACED_STATS_FIX)
    if not silent:
        return Check(
            c.CHECK_MODEL_MEMORY,
            True,
            bool(names),
            f"every model reports its memory ({len(names)})" if names else "no model loaded",
            affects,
            "none needed",
        )
    return Check(
        c.CHECK_MODEL_MEMORY,
        False,
        False,
        f"{len(silent)} of {len(names)} models report no memory_usage in their statistics "
        f"({_names(silent)}; backend {', '.join(backends)})",
        affects,
        "no flag turns it on: Triton 23.06+ reports memory only for backends that measure it (ONNX "
        "Runtime, TensorRT); the Python backend reports none. Size those models from GPU memory "
        "before and after a load",
    )


def llm_metrics(facts: TritonFacts, spec: Spec | None) -> Check:
    llm = [m for m in facts.models if m.llm_flavor]
    affects = (
        f"{c.M_LLM_TOKENS_PER_SECOND}, {c.M_LLM_KV_CACHE_UTILIZATION}, {c.M_LLM_TTFT_SECONDS}, "
        f"{c.M_COST_PER_1M_TOKENS}",
        f"alerts {c.ALERT_LLM_KV_CACHE_SATURATED}, {c.ALERT_LLM_REQUESTS_WAITING}; "
        "ttft / time_per_output_token SLOs",
        "dashboard Triton / LLM",
    )
    uncovered = uncovered_llm_slos(facts.models, spec)
    if not llm and not uncovered:
        return Check(c.CHECK_LLM_METRICS, True, False, "no LLM-backend model loaded", affects, "none needed")
    silent = [m for m in llm if m.name not in facts.llm_models]
    reporting = [m.name for m in llm if m.name in facts.llm_models]
    fixes = []
    minor = minor_version(facts.version)
    for model in silent:
        if model.llm_flavor == c.BACKEND_VLLM:
            if model.parameters.get(c.PARAM_REPORT_CUSTOM_METRICS, "").lower() != "true":
                fix = f"{model.name}: add {REPORT_CUSTOM_METRICS_LINE} to its config.pbtxt and reload it"
            else:
                fix = (
                    f"{model.name}: {c.PARAM_REPORT_CUSTOM_METRICS} is on but no vllm: family has its "
                    'label: set "disable_log_stats": false in its model.json'
                )
            if minor is not None and minor < VLLM_METRICS_SINCE:
                fix += (
                    f" (the vLLM backend reports metrics through Triton from 24.08; this is {facts.version})"
                )
        else:
            fix = (
                f"{model.name}: no nv_trt_llm_* family has its label: the TensorRT-LLM backend reports them "
                "for the tensorrt_llm model itself (not its ensemble or BLS wrapper) once it is loaded"
            )
        fixes.append(fix)
    found = "no LLM-backend model"
    if llm:
        found = f"{len(llm)} LLM model(s); reporting: {_names(reporting) or 'none'}"
    if silent:
        found += f"; without their backend's metrics: {_names(m.name for m in silent)}"
    if uncovered:
        found += "; " + "; ".join(
            f"SLO {slo} ({kind}) names {_names(models)}, served by no LLM backend: no {family}, so the SLO "
            "has no series and never alerts"
            for slo, kind, family, models in uncovered
        )
        fixes.append(_uncovered_fix(facts))
    ok = not silent and not uncovered
    return Check(c.CHECK_LLM_METRICS, ok, True, found, affects, "; ".join(fixes) or "none needed")


def _uncovered_fix(facts: TritonFacts) -> str:
    minor = minor_version(facts.version)
    older = minor is not None and minor < HISTOGRAM_LATENCIES_SINCE
    first_response = (
        f"give it a latency SLO with latency_sli: histogram instead: with {HISTOGRAM_FLAG} Triton measures a "
        f"decoupled model's first response ({c.NV_FIRST_RESPONSE_HISTOGRAM_MS}, "
        f"{release_of(HISTOGRAM_LATENCIES_SINCE)} / 2.{HISTOGRAM_LATENCIES_SINCE} or later"
        + (f"; this server is {facts.version})" if older else ")")
    )
    return (
        "a model of your own must report the vLLM backend's histogram (its name and buckets) through the "
        f"Python backend's custom metrics (pb_utils.MetricFamily, {c.PARAM_REPORT_CUSTOM_METRICS} in its "
        f"config); or {first_response}; or take the model out of the SLO"
    )


def response_cache(facts: TritonFacts) -> Check:
    cached = [m.name for m in facts.models if m.response_cache]
    affects = (
        "request latency quantiles of those models (Triton drops their request summary)",
        "stage split: cache hits have no compute time",
    )
    if not cached:
        return Check(
            c.CHECK_RESPONSE_CACHE, True, False, "no model enables the response cache", affects, "none needed"
        )
    on = c.NV_CACHE_UTIL in facts.families
    return Check(
        c.CHECK_RESPONSE_CACHE,
        on,
        True,
        f"response cache enabled for {_names(cached)}; "
        + (
            f"Triton exports {c.NV_CACHE_UTIL}"
            if on
            else f"no {c.NV_CACHE_UTIL}: the server has no cache, nothing is cached"
        ),
        affects,
        "none needed; their latency quantiles need the histogram (--metrics-config histogram_latencies=true)"
        if on
        else "start tritonserver with --cache-config local,size=<bytes> (and --cache-directory when the "
        "cache library is not under /opt/tritonserver/caches): without a server cache the model loads, "
        "caches nothing and its cache counters stay 0",
    )
