"""An LLM-shaped decoupled model: streams one response per token, with a bounded KV cache.

Tokens are whitespace-separated words of `text_input`; the model streams `max_tokens` output
tokens (default 16). It behaves like a continuous-batching LLM server, scaled down so tests
stay fast:

* prefill takes PREFILL_BASE_MS + PREFILL_MS_PER_TOKEN x prompt tokens, then every output token
  takes DECODE_MS_PER_TOKEN, slowed by DECODE_SLOWDOWN per other running sequence;
* the KV cache holds MAX_NUM_SEQS x MAX_MODEL_LEN tokens in blocks of BLOCK_TOKENS; a request
  reserves ceil((prompt + max_tokens) / BLOCK_TOKENS) blocks when admitted and frees them when
  done. Admission is first come first served and waits while fewer blocks are free than the
  head request needs or MAX_NUM_SEQS sequences already run: requests wait when the cache is full.

METRICS_FLAVOR chooses which backend's metric families it reports through Triton's custom
metrics API (pb_utils.MetricFamily), with the names, kinds, labels and buckets the real backend
uses: "vllm" (triton-inference-server/vllm_backend, src/utils/metrics.py, plus the gauges of its
earlier releases) or "trtllm" (tensorrtllm_backend's custom_metrics_reporter). llm_trtllm's
model.py is a link to this file.

Metric updates go through one reporting thread, as the vLLM backend does, so the event loop
serving tokens never waits on the metrics API.
"""

import asyncio
import json
import math
import queue
import threading
import time

import numpy as np
import triton_python_backend_utils as pb_utils

DEFAULT_MAX_TOKENS = 16
GAUGE_PERIOD_S = 0.1  # how often gauges are refreshed (TensorRT-LLM's statsCheckPeriodMs is 100)

# vLLM backend (src/utils/metrics.py): bucket boundaries.
TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0]
TPOT_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5]
E2E_BUCKETS = [1.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0]
N_BUCKETS = [1, 2, 5, 10, 20]
# TensorRT-LLM backend (custom_metrics_reporter.cc): token length histogram buckets.
TRT_TOKEN_BUCKETS = [10.0, 50.0, 100.0, 500.0, 1000.0]


def buckets_1_2_5(max_value):
    """1, 2, 5, 10, 20, 50, ... up to max_value (vLLM's build_1_2_5_buckets)."""
    out, exponent = [], 0
    while True:
        for mantissa in (1, 2, 5):
            value = mantissa * 10**exponent
            if value > max_value:
                return out
            out.append(value)
        exponent += 1


class Reporter:
    """Applies metric updates on its own thread; counter increments are coalesced."""

    def __init__(self):
        self._queue = queue.Queue()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def increment(self, metric, value):
        if value:
            self._queue.put_nowait(("inc", metric, value))

    def observe(self, metric, value):
        self._queue.put_nowait(("obs", metric, value))

    def set(self, metric, value):
        self._queue.put_nowait(("set", metric, value))

    def stop(self):
        self._queue.put(None)
        self._thread.join(timeout=5)

    def _loop(self):
        while True:
            item = self._queue.get()
            batch = [item]
            while True:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            increments = {}
            for entry in batch:
                if entry is None:
                    self._apply(increments)
                    return
                op, metric, value = entry
                if op == "inc":
                    key = id(metric)
                    increments[key] = (metric, increments.get(key, (metric, 0))[1] + value)
                    continue
                # in queue order: a scrape that sees this observation sees the increments before it
                self._apply(increments)
                increments = {}
                if op == "obs":
                    metric.observe(value)
                else:
                    metric.set(value)
            self._apply(increments)

    @staticmethod
    def _apply(increments):
        for metric, value in increments.values():
            metric.increment(value)


class VllmMetrics:
    """The vLLM backend's families (labels model, version)."""

    def __init__(self, labels, max_model_len):
        def family(name, description, kind):
            return pb_utils.MetricFamily(name=name, description=description, kind=kind)

        counter, gauge, histogram = (
            pb_utils.MetricFamily.COUNTER,
            pb_utils.MetricFamily.GAUGE,
            pb_utils.MetricFamily.HISTOGRAM,
        )
        self.families = [
            family("vllm:prompt_tokens_total", "Number of prefill tokens processed.", counter),
            family("vllm:generation_tokens_total", "Number of generation tokens processed.", counter),
            family(
                "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", histogram
            ),
            family(
                "vllm:time_per_output_token_seconds",
                "Histogram of time per output token in seconds.",
                histogram,
            ),
            family(
                "vllm:e2e_request_latency_seconds",
                "Histogram of end to end request latency in seconds.",
                histogram,
            ),
            family("vllm:request_prompt_tokens", "Number of prefill tokens processed.", histogram),
            family("vllm:request_generation_tokens", "Number of generation tokens processed.", histogram),
            family("vllm:request_params_n", "Histogram of the n request parameter.", histogram),
            family("vllm:num_requests_running", "Number of requests currently running on GPU.", gauge),
            family("vllm:num_requests_waiting", "Number of requests waiting to be processed.", gauge),
            family("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.", gauge),
        ]
        f = self.families
        lengths = buckets_1_2_5(max_model_len)
        self.prompt_tokens = f[0].Metric(labels=labels)
        self.generation_tokens = f[1].Metric(labels=labels)
        self.ttft = f[2].Metric(labels=labels, buckets=TTFT_BUCKETS)
        self.tpot = f[3].Metric(labels=labels, buckets=TPOT_BUCKETS)
        self.e2e = f[4].Metric(labels=labels, buckets=E2E_BUCKETS)
        self.request_prompt_tokens = f[5].Metric(labels=labels, buckets=lengths)
        self.request_generation_tokens = f[6].Metric(labels=labels, buckets=lengths)
        self.request_n = f[7].Metric(labels=labels, buckets=N_BUCKETS)
        self.running = f[8].Metric(labels=labels)
        self.waiting = f[9].Metric(labels=labels)
        self.cache_usage = f[10].Metric(labels=labels)

    def on_prefill(self, reporter, prompt_tokens, ttft):
        reporter.increment(self.prompt_tokens, prompt_tokens)
        reporter.increment(self.generation_tokens, 1)
        reporter.observe(self.ttft, ttft)

    def on_token(self, reporter, gap):
        reporter.increment(self.generation_tokens, 1)
        reporter.observe(self.tpot, gap)

    def on_finish(self, reporter, prompt_tokens, output_tokens, e2e):
        reporter.observe(self.e2e, e2e)
        reporter.observe(self.request_prompt_tokens, prompt_tokens)
        reporter.observe(self.request_generation_tokens, output_tokens)
        reporter.observe(self.request_n, 1)

    def on_state(self, reporter, engine):
        reporter.set(self.running, engine.running)
        reporter.set(self.waiting, engine.waiting)
        reporter.set(self.cache_usage, engine.used_blocks / engine.total_blocks)


class TrtLlmMetrics:
    """The TensorRT-LLM backend's families (labels model, version and one category label)."""

    GROUPS = (
        (
            "nv_trt_llm_request_metrics",
            "TRT LLM request metrics",
            "request_type",
            ("active", "max", "scheduled", "context", "waiting"),
        ),
        (
            "nv_trt_llm_runtime_memory_metrics",
            "TRT LLM runtime memory metrics",
            "memory_type",
            ("cpu", "gpu", "pinned"),
        ),
        (
            "nv_trt_llm_kv_cache_block_metrics",
            "TRT LLM KV cache block metrics",
            "kv_cache_block_type",
            ("max", "free", "used", "tokens_per", "reused", "fraction"),
        ),
        (
            "nv_trt_llm_inflight_batcher_metrics",
            "TRT LLM inflight_batcher-specific metrics",
            "inflight_batcher_specific_metric",
            ("total_context_tokens", "generation_requests", "micro_batch_id", "paused_requests"),
        ),
        (
            "nv_trt_llm_general_metrics",
            "General TRT LLM metrics",
            "general_type",
            ("timestamp", "iteration_counter"),
        ),
    )

    def __init__(self, labels):
        self.families = []
        self.gauges = {}
        for name, description, category, values in self.GROUPS:
            fam = pb_utils.MetricFamily(name=name, description=description, kind=pb_utils.MetricFamily.GAUGE)
            self.families.append(fam)
            for value in values:
                self.gauges[(name, value)] = fam.Metric(labels={**labels, category: value})
        histogram = pb_utils.MetricFamily.HISTOGRAM
        out_family = pb_utils.MetricFamily(
            name="nv_llm_output_token_len", description="TRT LLM response metrics", kind=histogram
        )
        in_family = pb_utils.MetricFamily(
            name="nv_llm_input_token_len", description="TRT LLM response metrics", kind=histogram
        )
        self.families += [out_family, in_family]
        self.output_len = out_family.Metric(
            labels={**labels, "response_metric_type": "total_output_tokens"}, buckets=TRT_TOKEN_BUCKETS
        )
        self.input_len = in_family.Metric(
            labels={**labels, "response_metric_type": "total_input_tokens"}, buckets=TRT_TOKEN_BUCKETS
        )

    def on_prefill(self, reporter, prompt_tokens, ttft):
        pass

    def on_token(self, reporter, gap):
        pass

    def on_finish(self, reporter, prompt_tokens, output_tokens, e2e):
        # reported once per completed request, as the backend's reportCustomMetrics does
        reporter.observe(self.input_len, prompt_tokens)
        reporter.observe(self.output_len, output_tokens)

    def on_state(self, reporter, engine):
        g = self.gauges
        values = {
            ("nv_trt_llm_request_metrics", "active"): engine.running + engine.waiting,
            ("nv_trt_llm_request_metrics", "max"): engine.max_num_seqs,
            ("nv_trt_llm_request_metrics", "scheduled"): engine.running,
            ("nv_trt_llm_request_metrics", "context"): engine.prefilling,
            # the backend reports waiting = active - scheduled
            ("nv_trt_llm_request_metrics", "waiting"): engine.waiting,
            ("nv_trt_llm_runtime_memory_metrics", "cpu"): 0,
            ("nv_trt_llm_runtime_memory_metrics", "gpu"): engine.used_blocks * engine.block_tokens * 1024,
            ("nv_trt_llm_runtime_memory_metrics", "pinned"): 0,
            ("nv_trt_llm_kv_cache_block_metrics", "max"): engine.total_blocks,
            ("nv_trt_llm_kv_cache_block_metrics", "free"): engine.total_blocks - engine.used_blocks,
            ("nv_trt_llm_kv_cache_block_metrics", "used"): engine.used_blocks,
            ("nv_trt_llm_kv_cache_block_metrics", "tokens_per"): engine.block_tokens,
            ("nv_trt_llm_kv_cache_block_metrics", "reused"): 0,
            ("nv_trt_llm_kv_cache_block_metrics", "fraction"): engine.used_blocks / engine.total_blocks,
            ("nv_trt_llm_inflight_batcher_metrics", "total_context_tokens"): engine.context_tokens,
            ("nv_trt_llm_inflight_batcher_metrics", "generation_requests"): engine.running
            - engine.prefilling,
            ("nv_trt_llm_inflight_batcher_metrics", "micro_batch_id"): 0,
            ("nv_trt_llm_inflight_batcher_metrics", "paused_requests"): 0,
            # the backend converts the executor's timestamp to microseconds since the epoch
            ("nv_trt_llm_general_metrics", "timestamp"): int(time.time() * 1e6),
            ("nv_trt_llm_general_metrics", "iteration_counter"): engine.iterations,
        }
        for key, value in values.items():
            reporter.set(g[key], float(value))


class Engine:
    """KV-cache admission and the token timings; all state is touched by the event loop only."""

    def __init__(self, params):
        self.max_num_seqs = int(params["MAX_NUM_SEQS"])
        self.max_model_len = int(params["MAX_MODEL_LEN"])
        self.block_tokens = int(params["BLOCK_TOKENS"])
        self.total_blocks = self.max_num_seqs * self.max_model_len // self.block_tokens
        self.prefill_base_s = float(params["PREFILL_BASE_MS"]) / 1000.0
        self.prefill_per_token_s = float(params["PREFILL_MS_PER_TOKEN"]) / 1000.0
        self.decode_s = float(params["DECODE_MS_PER_TOKEN"]) / 1000.0
        self.slowdown = float(params["DECODE_SLOWDOWN"])
        self.used_blocks = 0
        self.running = 0
        self.prefilling = 0
        self.context_tokens = 0
        self.waiting = 0
        self.iterations = 0
        self._queue = []  # futures of waiting requests, first come first served
        self._needs = {}

    def blocks_for(self, tokens):
        return math.ceil(tokens / self.block_tokens)

    def _fits(self, blocks):
        return self.running < self.max_num_seqs and self.used_blocks + blocks <= self.total_blocks

    async def admit(self, blocks):
        loop = asyncio.get_running_loop()
        if not self._queue and self._fits(blocks):
            self._take(blocks)
            return
        ticket = loop.create_future()
        self._queue.append(ticket)
        self._needs[ticket] = blocks
        self.waiting += 1
        try:
            await ticket
        except BaseException:
            if ticket in self._needs:  # cancelled while still waiting
                self._queue.remove(ticket)
                del self._needs[ticket]
                self.waiting -= 1
            elif ticket.done() and not ticket.cancelled():
                self.release(blocks)  # admitted just as it was cancelled
            raise

    def _take(self, blocks):
        self.used_blocks += blocks
        self.running += 1

    def release(self, blocks):
        self.used_blocks -= blocks
        self.running -= 1
        while self._queue and self._fits(self._needs[self._queue[0]]):
            ticket = self._queue.pop(0)
            self._take(self._needs.pop(ticket))
            self.waiting -= 1
            ticket.set_result(None)

    def prefill_seconds(self, prompt_tokens):
        return self.prefill_base_s + self.prefill_per_token_s * prompt_tokens

    def decode_seconds(self):
        return self.decode_s * (1.0 + self.slowdown * max(0, self.running - 1))


def _params(model_config):
    return {key: value["string_value"] for key, value in model_config.get("parameters", {}).items()}


def _text(request, name):
    tensor = pb_utils.get_input_tensor_by_name(request, name)
    if tensor is None:
        return None
    value = tensor.as_numpy().reshape(-1)[0]
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)


def _int(request, name, default):
    tensor = pb_utils.get_input_tensor_by_name(request, name)
    if tensor is None:
        return default
    return int(tensor.as_numpy().reshape(-1)[0])


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        params = _params(config)
        self.engine = Engine(params)
        labels = {"model": args["model_name"], "version": args["model_version"]}
        flavor = params.get("METRICS_FLAVOR", "vllm")
        report = params.get("REPORT_CUSTOM_METRICS", "true").lower() == "true"
        self.metrics = None
        if report:
            self.metrics = (
                TrtLlmMetrics(labels)
                if flavor == "trtllm"
                else VllmMetrics(labels, self.engine.max_model_len)
            )
        self.reporter = Reporter()
        self._stop = threading.Event()
        self._gauges = threading.Thread(target=self._gauge_loop, daemon=True)
        self._gauges.start()

    def _gauge_loop(self):
        while not self._stop.wait(GAUGE_PERIOD_S):
            if self.metrics is not None:
                self.metrics.on_state(self.reporter, self.engine)

    async def execute(self, requests):
        await asyncio.gather(*(self._serve(request) for request in requests))
        return None

    async def _serve(self, request):
        sender = request.get_response_sender()
        final = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL
        arrived = time.monotonic()
        try:
            prompt = _text(request, "text_input") or ""
            prompt_tokens = max(1, len(prompt.split()))
            max_tokens = _int(request, "max_tokens", DEFAULT_MAX_TOKENS)
        except Exception as exc:
            sender.send(
                pb_utils.InferenceResponse(error=pb_utils.TritonError(f"bad input: {exc}")), flags=final
            )
            return
        engine = self.engine
        if max_tokens < 1 or prompt_tokens + max_tokens > engine.max_model_len:
            message = (
                f"prompt ({prompt_tokens} tokens) + max_tokens ({max_tokens}) "
                f"must be 1..{engine.max_model_len}"
            )
            sender.send(pb_utils.InferenceResponse(error=pb_utils.TritonError(message)), flags=final)
            return
        blocks = engine.blocks_for(prompt_tokens + max_tokens)
        await engine.admit(blocks)
        metrics, reporter = self.metrics, self.reporter
        try:
            engine.prefilling += 1
            engine.context_tokens += prompt_tokens
            try:
                await asyncio.sleep(engine.prefill_seconds(prompt_tokens))
            finally:
                engine.prefilling -= 1
                engine.context_tokens -= prompt_tokens
            for index in range(max_tokens):
                if index:
                    before = time.monotonic()
                    await asyncio.sleep(engine.decode_seconds())
                    engine.iterations += 1
                if request.is_cancelled():
                    sender.send(flags=final)
                    return
                token = np.array([f"tok{index}".encode()], dtype=np.object_)
                sender.send(
                    pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("text_output", token)])
                )
                now = time.monotonic()
                if metrics is not None:
                    if index == 0:
                        metrics.on_prefill(reporter, prompt_tokens, now - arrived)
                    else:
                        metrics.on_token(reporter, now - before)
            sender.send(flags=final)
            if metrics is not None:
                metrics.on_finish(reporter, prompt_tokens, max_tokens, time.monotonic() - arrived)
        finally:
            engine.release(blocks)

    def finalize(self):
        self._stop.set()
        self._gauges.join(timeout=5)
        self.reporter.stop()
