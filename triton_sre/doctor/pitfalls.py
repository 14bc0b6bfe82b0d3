"""Pure data: known pitfalls of Triton's metrics by release, each with its source.

`applicable` picks those that can bite the server `doctor` talks to (its version, its models,
its flags); `k8s_onprem_rule` spots the k8s-onprem example's queue-time expression among rules a
Prometheus carries. Releases are server versions 2.<minor> (2.51 is 24.10); `until` None: still open.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from triton_sre import conventions as c
from triton_sre.doctor.facts import TritonFacts, minor_version, release_of


@dataclass(frozen=True)
class Pitfall:
    id: str
    title: str
    detail: str
    source: str
    since: int  # first affected minor version
    until: int | None = None  # first fixed minor version, None: not fixed
    when: str = "always"  # what else must hold: always, ensemble, vllm, summary, decoupled-python

    def releases(self) -> str:
        if self.since == 0 and self.until is None:
            return "every release (open)"
        first = f"2.{self.since} ({release_of(self.since)})"
        if self.until is None:
            return f"{first} and later (open)"
        return f"{first} to 2.{self.until - 1} ({release_of(self.until - 1)})"

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "detail": self.detail,
            "source": self.source,
            "releases": self.releases(),
        }


PITFALLS: tuple[Pitfall, ...] = (
    Pitfall(
        "ensemble-failures-other",
        "Ensemble failures are counted under reason OTHER, and twice",
        "A failed request to an ensemble counts on the composing model with its real reason and on "
        "the ensemble as OTHER, once for the inner failure and once for the client's request: error "
        "ratios over ensembles and their steps double count, and bad_reasons cannot tell them apart.",
        "https://github.com/triton-inference-server/server/blob/main/docs/user_guide/metrics.md "
        "(note under Failure Count Categories)",
        since=48,
        when="ensemble",
    ),
    Pitfall(
        "vllm-request-duration",
        "nv_inference_request_duration_us is wrong for vLLM-backend models",
        "Reported on 25.03 with vllm_backend r25.03: the request duration counter of a vLLM model "
        "grows by implausible amounts; use the backend's vllm:e2e_request_latency_seconds instead.",
        "https://github.com/triton-inference-server/server/issues/8463",
        since=56,
        when="vllm",
    ),
    Pitfall(
        "summary-throughput",
        "Latency summaries can cost throughput at high request rates",
        "A user measured a 33% throughput drop with summary_latencies=true at very high QPS; the "
        "histogram covered decoupled models only until 26.01. Measure before enabling summaries on a "
        "saturated server.",
        "https://github.com/triton-inference-server/server/issues/8561",
        since=34,
        when="summary",
    ),
    Pitfall(
        "summary-missing-23-06",
        "nv_inference_request_summary_us missing in 23.06",
        "The request summary exported by 23.05 was absent in 23.06 with summary_latencies=true.",
        "https://github.com/triton-inference-server/server/issues/6011",
        since=35,
        until=36,
        when="summary",
    ),
    Pitfall(
        "python-returned-errors",
        "Errors a Python model returns are not counted as failures",
        "A Python model that returns InferenceResponse(error=...) instead of raising is not counted in "
        "nv_inference_request_failure: reported as a success on 24.08; measured here on the real 2.47, "
        "2.48 and 2.51 (a model without a batcher), each returned error counts as a successful request "
        "and inference, while 2.36-2.46 count it as a failure. Availability SLOs miss those errors. "
        "Raise instead.",
        "https://github.com/triton-inference-server/server/issues/8521; tests/data/releases/",
        since=47,
        when="python",
    ),
    Pitfall(
        "decoupled-compute-time",
        "Decoupled async models report almost no compute time",
        "A decoupled Python model with async execute (as the vLLM backend) is counted as executed when "
        "execute() hands the request to the event loop: compute time is a few hundred microseconds "
        "however long the stream, so cost by compute share understates it (measured on 2.45-2.48 and 2.51; "
        "before 2.45 an async execute fails every request: the Python backend wants None from it).",
        "DEVELOPERS.md, 'Behaviour of 2.51 measured here'; tests/data/releases/",
        since=45,
        when="decoupled",
    ),
    Pitfall(
        "k8s-onprem-queue-time",
        "The k8s-onprem example's avg_time_queue_us under-reports queue time",
        "Its rule averages per-model ratios (an idle model counts as 0, so N models read about 1/N of "
        "the wait) and divides by 1 + requests: the HPA scales up late. Use "
        f'{c.rec_stage_seconds(c.REC_LEVEL_INSTANCE)}{{stage="queue"}} instead.',
        "https://github.com/triton-inference-server/server/issues/8979",
        since=0,
        when="k8s-onprem-rule",
    ),
)


def _applies(p: Pitfall, minor: int | None) -> bool:
    if minor is None:
        return True
    return p.since <= minor and (p.until is None or minor < p.until)


def applicable(facts: TritonFacts, rule_queries: Iterable[str] = ()) -> list[Pitfall]:
    """The pitfalls that can affect this server (its version and what it runs)."""
    minor = minor_version(facts.version)
    backends = {m.backend for m in facts.models}
    conditions = {
        "always": True,
        "ensemble": any(m.platform == c.PLATFORM_ENSEMBLE for m in facts.models),
        "vllm": any(m.llm_flavor == c.BACKEND_VLLM for m in facts.models),
        "summary": c.NV_REQUEST_SUMMARY_US in facts.families,
        "python": "python" in backends,
        "decoupled": any(m.decoupled and m.backend == "python" for m in facts.models),
        "k8s-onprem-rule": any(k8s_onprem_rule(q) for q in rule_queries),
    }
    return [p for p in PITFALLS if conditions[p.when] and _applies(p, minor)]


def k8s_onprem_rule(query: str) -> bool:
    """The k8s-onprem example's expression: queue time over 1 + successes, per model, averaged."""
    text = "".join(query.split())
    return c.NV_QUEUE_DURATION_US in text and f"(1+delta({c.NV_REQUEST_SUCCESS}" in text
