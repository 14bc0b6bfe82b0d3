"""Pure: what Triton shows of itself, as the doctor checks read it: which watched families a `/metrics`
body carries, what one model's config says (ModelFacts), the server's minor version and its NGC release.
`checks.py` judges these facts; the doctor command and the exporter gather them (no I/O here).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from triton_sre import conventions as c
from triton_sre.diagnosis.releases import server_release_from_version

# Families whose presence the checks read: a `# TYPE` line (Triton writes it for every family it
# registered, before any request) or, without one, a sample of the family.
WATCHED_FAMILIES = (
    c.NV_REQUEST_DURATION_US,
    c.NV_REQUEST_SUMMARY_US,
    c.NV_FIRST_RESPONSE_HISTOGRAM_MS,
    *c.NV_GPU_METRIC_FAMILIES,
    *c.NV_CPU_METRIC_FAMILIES,
    c.NV_PENDING_REQUEST_COUNT,
    c.NV_MODEL_LOAD_DURATION_SECS,
    c.NV_CACHE_UTIL,
)
_WATCHED = frozenset(WATCHED_FAMILIES)
_TYPE = "# TYPE "
# What follows a family's name at the start of one of its sample lines (summary and histogram
# series included).
_SAMPLE_TAIL = re.compile(r"(?:_count|_sum|_bucket)?[ \t{]")


@dataclass(frozen=True)
class ModelFacts:
    """What the checks need from one model's config (and its statistics)."""

    name: str
    backend: str = ""
    platform: str = ""
    decoupled: bool = False
    parameters: Mapping[str, str] = field(default_factory=dict)
    response_cache: bool = False
    gpu: bool = False  # an instance group of kind KIND_GPU

    @property
    def llm_flavor(self) -> str | None:
        """vllm / trtllm for a model served by (or imitating) an LLM backend, else None."""
        if self.backend == c.BACKEND_VLLM:
            return c.BACKEND_VLLM
        if self.backend == c.BACKEND_TRTLLM:
            return c.FLAVOR_TRTLLM
        flavor = self.parameters.get(c.PARAM_METRICS_FLAVOR)
        if flavor in (c.BACKEND_VLLM, c.FLAVOR_TRTLLM):
            return flavor
        return c.BACKEND_VLLM if c.PARAM_REPORT_CUSTOM_METRICS in self.parameters else None


@dataclass(frozen=True)
class TritonFacts:
    version: str | None  # e.g. "2.51.0"; None when not asked (the exporter)
    families: frozenset[str]  # WATCHED_FAMILIES present on /metrics
    models: tuple[ModelFacts, ...]  # READY models with a readable config
    llm_models: frozenset[str]  # models with samples of an LLM backend's families
    memory_models: frozenset[str]  # models whose statistics report memory_usage
    gpu_memory_models: frozenset[str] = frozenset()  # ... of type GPU
    stats_refused: str = ""  # why Triton refused the statistics (model namespacing), "" when read


def families_present(text: str) -> frozenset[str]:
    """Which WATCHED_FAMILIES an exposition body carries: one pass from `# TYPE` line to `# TYPE`
    line (about 4 ms on an 8 MB body with summaries; one search per family took 13 ms), then a
    search for samples of each family no `# TYPE` line declared. Samples without a TYPE line are
    untyped but scraped all the same: a `#TYPE` written without its space (a comment to the text
    format; Alibaba Cloud's ACK guide shows a 21.05 body so) or an excerpt that drops comments."""
    found = set()
    at = text.find(_TYPE)
    while at >= 0:
        start = at + len(_TYPE)
        end = text.find(" ", start)
        if end < 0:
            break
        if text[start:end] in _WATCHED:
            found.add(text[start:end])
        at = text.find(_TYPE, end)
    found.update(family for family in _WATCHED - found if _has_samples(text, family))
    return frozenset(found)


def _has_samples(text: str, family: str) -> bool:
    """A line starts with a sample of `family` (str.find: a regex anchored at every line start
    took 100 ms per family on an 8 MB body)."""
    if text.startswith(family) and _SAMPLE_TAIL.match(text, len(family)):
        return True
    needle = "\n" + family
    at = text.find(needle)
    while at >= 0:
        if _SAMPLE_TAIL.match(text, at + len(needle)):
            return True
        at = text.find(needle, at + len(needle))
    return False


def model_facts(name: str, config: Mapping[str, Any]) -> ModelFacts:
    """From `GET /v2/models/<name>/config` (JSON); unknown shapes read as absent."""
    params: dict[str, str] = {}
    raw = config.get("parameters")
    if isinstance(raw, Mapping):
        for key, value in raw.items():
            if isinstance(value, Mapping) and isinstance(value.get("string_value"), str):
                params[str(key)] = value["string_value"]
    policy = config.get("model_transaction_policy")
    cache = config.get("response_cache")
    groups = config.get("instance_group")
    return ModelFacts(
        name=name,
        backend=str(config.get("backend") or ""),
        platform=str(config.get("platform") or ""),
        decoupled=isinstance(policy, Mapping) and policy.get("decoupled") is True,
        parameters=params,
        response_cache=isinstance(cache, Mapping) and cache.get("enable") is True,
        gpu=isinstance(groups, list)
        and any(isinstance(g, Mapping) and g.get("kind") == c.KIND_GPU for g in groups),
    )


def minor_version(version: str | None) -> int | None:
    """`2.51.0` -> 51 (None when absent or not 2.x)."""
    parts = (version or "").split(".")
    if len(parts) < 2 or parts[0] != "2" or not parts[1].isdigit():
        return None
    return int(parts[1])


def release_of(minor: int) -> str:
    """Server 2.<minor> -> its NGC release, e.g. 51 -> 24.10, 65 -> 26.01 (25.07 was the patch 2.59.1);
    the one mapping is `diagnosis.releases.server_release_from_version`."""
    return server_release_from_version(2, minor) or f"2.{minor}"
