"""The LLM-shaped sample models on the real Triton: streamed tokens, prefill and decode timing,
the KV cache making requests wait, and the backends' metric families on Triton's /metrics."""

from __future__ import annotations

import random
import statistics
import threading
import time

import requests

from triton_sre import conventions as c
from triton_sre.demo import LLM_MAX_MODEL_LEN, LLM_MAX_NUM_SEQS, LLM_TRTLLM, LLM_VLLM
from triton_sre.demo.traffic import TrafficDriver, llm_payload, stream_generate
from triton_sre.triton.exposition import Sample, parse


def scrape(triton) -> list[Sample]:
    return parse(requests.get(triton.metrics_url, timeout=10).text)


def value(samples: list[Sample], name: str, **labels: str) -> float:
    found = [s.value for s in samples if s.name == name and all(s.label(k) == v for k, v in labels.items())]
    assert len(found) == 1, (name, labels, found)
    return found[0]


def scrape_until(triton, done, timeout: float = 10.0) -> list[Sample]:
    """Scrape until `done(samples)` holds: metric updates go through the model's reporting thread,
    so they land a little after the response. The last scrape is returned either way."""
    deadline = time.monotonic() + timeout
    samples = scrape(triton)
    while not done(samples) and time.monotonic() < deadline:
        time.sleep(0.05)
        samples = scrape(triton)
    return samples


def gen(triton, model: str, prompt: int, tokens: int):
    url = f"{triton.http_url}/v2/models/{model}/generate_stream"
    with requests.Session() as session:
        return stream_generate(
            session, url, {"text_input": " ".join(["w"] * prompt), "max_tokens": tokens}, 30
        )


def test_streams_tokens_with_prefill_growing_with_the_prompt(triton):
    short = [gen(triton, LLM_VLLM, 4, 3) for _ in range(5)]
    long = [gen(triton, LLM_VLLM, 200, 3) for _ in range(5)]
    for _, first, tokens, error in short + long:
        assert error is None and tokens == 3 and first is not None
    # prefill: 4 ms + 0.1 ms per prompt token -> ~4.4 ms vs ~24 ms (medians: a loaded machine jitters)
    assert statistics.median(r[1] for r in long) > statistics.median(r[1] for r in short) + 0.01
    _, _, _, error = gen(triton, LLM_VLLM, 10, LLM_MAX_MODEL_LEN)
    assert error is not None and "max_tokens" in error


def test_vllm_families_counters_and_buckets(triton):
    before = scrape(triton)
    mv = {c.LABEL_MODEL: LLM_VLLM, c.LABEL_VERSION: "1"}
    prompts, outputs = [12, 40, 90], [5, 9, 17]
    for p, o in zip(prompts, outputs, strict=True):
        assert gen(triton, LLM_VLLM, p, o)[3] is None
    # The reporting thread applies a finished request's observations one family at a time: wait until
    # every family checked below has the last request's (waiting on one, a scrape between two of them
    # saw the e2e count of all three requests and the generation tokens of two: a fresh-clone CI run).
    expected = {
        c.VLLM_PROMPT_TOKENS: sum(prompts),
        c.VLLM_GENERATION_TOKENS: sum(outputs),
        c.VLLM_TTFT_SECONDS + "_count": len(prompts),
        c.VLLM_TPOT_SECONDS + "_count": sum(outputs) - len(prompts),  # gaps between tokens
        c.VLLM_REQUEST_PROMPT_TOKENS + "_sum": sum(prompts),
        c.VLLM_REQUEST_GENERATION_TOKENS + "_sum": sum(outputs),
        c.VLLM_E2E_SECONDS + "_count": len(prompts),
    }
    after = scrape_until(
        triton,
        lambda now: all(value(now, n, **mv) - value(before, n, **mv) >= v for n, v in expected.items()),
    )

    def delta(name: str) -> float:
        return value(after, name, **mv) - value(before, name, **mv)

    assert delta(c.VLLM_PROMPT_TOKENS) == sum(prompts)
    assert delta(c.VLLM_GENERATION_TOKENS) == sum(outputs)
    assert delta(c.VLLM_TTFT_SECONDS + "_count") == 3
    assert delta(c.VLLM_TPOT_SECONDS + "_count") == sum(outputs) - 3  # gaps between tokens
    assert delta(c.VLLM_REQUEST_PROMPT_TOKENS + "_sum") == sum(prompts)
    assert delta(c.VLLM_REQUEST_GENERATION_TOKENS + "_sum") == sum(outputs)
    assert delta(c.VLLM_E2E_SECONDS + "_count") == 3
    ttft_le = [s.label(c.LABEL_LE) for s in after if s.name == c.VLLM_TTFT_SECONDS + "_bucket"]
    assert [float(le) for le in ttft_le] == [*c.VLLM_TTFT_BUCKETS, float("inf")]
    tpot_le = [s.label(c.LABEL_LE) for s in after if s.name == c.VLLM_TPOT_SECONDS + "_bucket"]
    assert [float(le) for le in tpot_le] == [*c.VLLM_TPOT_BUCKETS, float("inf")]
    for name in (c.VLLM_NUM_RUNNING, c.VLLM_NUM_WAITING, c.VLLM_CACHE_USAGE):
        assert value(after, name, **mv) >= 0
    # every vLLM sample carries exactly model and version (histogram buckets add le)
    for s in after:
        if s.name.startswith("vllm:"):
            assert {k for k, _ in s.labels} - {c.LABEL_LE} == {c.LABEL_MODEL, c.LABEL_VERSION}, s


def test_trtllm_families(triton):
    mv = {c.LABEL_MODEL: LLM_TRTLLM, c.LABEL_VERSION: "1"}
    before = scrape(triton)
    assert gen(triton, LLM_TRTLLM, 30, 7)[3] is None
    sums = {c.TRT_INPUT_TOKEN_LEN + "_sum": 30, c.TRT_OUTPUT_TOKEN_LEN + "_sum": 7}  # land one at a time
    after = scrape_until(
        triton, lambda now: all(value(now, n, **mv) - value(before, n, **mv) >= v for n, v in sums.items())
    )
    assert (
        value(after, c.TRT_INPUT_TOKEN_LEN + "_sum", **mv)
        - value(before, c.TRT_INPUT_TOKEN_LEN + "_sum", **mv)
        == 30
    )
    assert (
        value(after, c.TRT_OUTPUT_TOKEN_LEN + "_sum", **mv)
        - value(before, c.TRT_OUTPUT_TOKEN_LEN + "_sum", **mv)
        == 7
    )
    kinds = {
        c.TRT_REQUEST_METRICS: {"active", "max", "scheduled", "context", "waiting"},
        c.TRT_KV_CACHE_BLOCK_METRICS: {"max", "free", "used", "tokens_per", "reused", "fraction"},
        c.TRT_RUNTIME_MEMORY_METRICS: {"cpu", "gpu", "pinned"},
        c.TRT_INFLIGHT_BATCHER_METRICS: {
            "total_context_tokens",
            "generation_requests",
            "micro_batch_id",
            "paused_requests",
        },
        c.TRT_GENERAL_METRICS: {"timestamp", "iteration_counter"},
    }
    for family, expected in kinds.items():
        rows = [s for s in after if s.name == family and s.label(c.LABEL_MODEL) == LLM_TRTLLM]
        categories = {v for s in rows for k, v in s.labels if k not in (c.LABEL_MODEL, c.LABEL_VERSION)}
        assert categories == expected, family
    assert value(after, c.TRT_REQUEST_METRICS, request_type="max", **mv) == LLM_MAX_NUM_SEQS
    assert value(after, c.TRT_KV_CACHE_BLOCK_METRICS, kv_cache_block_type="max", **mv) == (
        LLM_MAX_NUM_SEQS * LLM_MAX_MODEL_LEN / 16
    )
    assert not any(s.name.startswith("vllm:") and s.label(c.LABEL_MODEL) == LLM_TRTLLM for s in after)


def test_saturating_traffic_fills_the_cache_and_requests_wait(triton):
    mv = {c.LABEL_MODEL: LLM_VLLM, c.LABEL_VERSION: "1"}
    trt = {c.LABEL_MODEL: LLM_TRTLLM, c.LABEL_VERSION: "1"}
    seen: list[tuple[float, float, float, float]] = []
    # the wait ends as soon as both models were seen saturated; the bound is only for a loaded machine
    # (a fresh-clone CI once took longer than 15 s to see TensorRT-LLM's first waiting request)
    with TrafficDriver(triton.http_url, {LLM_VLLM: 12, LLM_TRTLLM: 12}, llm_saturate=True, max_duration_s=99):
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            time.sleep(0.2)
            s = scrape(triton)
            seen.append(
                (
                    value(s, c.VLLM_CACHE_USAGE, **mv),
                    value(s, c.VLLM_NUM_WAITING, **mv),
                    value(s, c.TRT_KV_CACHE_BLOCK_METRICS, kv_cache_block_type="fraction", **trt),
                    value(s, c.TRT_REQUEST_METRICS, request_type="waiting", **trt),
                )
            )
            if any(u >= 0.95 and w > 0 for u, w, _, _ in seen) and any(
                u >= 0.95 and w > 0 for _, _, u, w in seen
            ):
                break
    assert any(u >= 0.95 and w > 0 for u, w, _, _ in seen), seen
    assert any(u >= 0.95 and w > 0 for _, _, u, w in seen), seen
    # and they drain: nothing runs or waits once the traffic stopped
    s = scrape_until(
        triton,
        lambda now: all(
            value(now, n, **mv) == 0 for n in (c.VLLM_NUM_RUNNING, c.VLLM_NUM_WAITING, c.VLLM_CACHE_USAGE)
        ),
        timeout=60.0,
    )
    assert value(s, c.VLLM_NUM_RUNNING, **mv) == 0 and value(s, c.VLLM_NUM_WAITING, **mv) == 0
    assert value(s, c.VLLM_CACHE_USAGE, **mv) == 0


def test_payloads_vary_and_stay_within_the_model_length():
    rng = random.Random(7)
    bodies = [llm_payload(rng) for _ in range(50)] + [llm_payload(rng, saturate=True) for _ in range(50)]
    lengths = {len(b["text_input"].split()) + b["max_tokens"] for b in bodies}
    assert len(lengths) > 20 and max(lengths) <= LLM_MAX_MODEL_LEN


def test_concurrent_streams_all_complete(triton):
    results: list = []

    def client() -> None:
        results.append(gen(triton, LLM_VLLM, 150, 60))

    threads = [threading.Thread(target=client) for _ in range(LLM_MAX_NUM_SEQS + 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r[2] for r in results] == [60] * len(threads) and all(r[3] is None for r in results)
