"""LLM figures: the backends' public example scrapes, hand-checked windows, bad input, and the
exporter against the real Triton serving the LLM sample models."""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.demo import LLM_TRTLLM, LLM_VLLM
from triton_sre.demo.traffic import TrafficDriver
from triton_sre.exporter.collector import ExporterView, render
from triton_sre.exporter.derive import Derivation
from triton_sre.exporter.llm import (
    GENERATION_TOKENS,
    KV_USAGE,
    PROMPT_TOKENS,
    RUNNING,
    TPOT_COUNT,
    TTFT_COUNT,
    TTFT_SUM,
    WAITING,
    LLMData,
    collect,
    derive_llm,
)
from triton_sre.exporter.service import Exporter
from triton_sre.exporter.snapshot import keep_family
from triton_sre.pricing import Pricing
from triton_sre.triton.exposition import parse

DATA = Path(__file__).parent / "data"
KEY = ("vllm_model", "1")
TRT_KEY = ("tensorrt_llm", "1")


def load(name: str) -> LLMData:
    return collect(parse((DATA / name).read_text(), keep=keep_family))


def nan(value: float) -> bool:
    return value != value


# ------------------------------------------------------------------ the backends' example scrapes
def test_vllm_readme_scrape():
    data = load("vllm_backend_readme_metrics.txt")
    row = data.rows[KEY]
    assert row[PROMPT_TOKENS] == 10 and row[GENERATION_TOKENS] == 16
    assert row[TTFT_SUM] == pytest.approx(0.03233122825622559) and row[TTFT_COUNT] == 1
    assert row[TPOT_COUNT] == 15
    # this release has no request or KV cache gauges: those figures are absent, not zero
    assert nan(row[RUNNING]) and nan(row[WAITING]) and nan(row[KV_USAGE])
    assert data.problems == {}
    (d,) = derive_llm([(0.0, data)])
    assert d.running is None and d.kv_cache_utilization is None


def test_vllm_readme_scrape_with_gauges():
    data = load("vllm_backend_readme_metrics_with_gauges.txt")
    row = data.rows[KEY]
    assert (row[RUNNING], row[WAITING], row[KV_USAGE]) == (0, 0, 0)
    assert row[PROMPT_TOKENS] == 10
    assert data.problems == {}


def test_tensorrtllm_readme_scrape():
    data = load("tensorrtllm_backend_readme_metrics.txt")
    row = data.rows[TRT_KEY]
    assert row[RUNNING] == 1  # request_type="scheduled"
    assert row[WAITING] == 1
    assert row[KV_USAGE] == pytest.approx(0.4875)  # kv_cache_block_type="fraction"
    # the README's scrape predates nv_llm_*_token_len: no token figures
    assert nan(row[PROMPT_TOKENS]) and nan(row[GENERATION_TOKENS])
    (d,) = derive_llm([(0.0, data), (10.0, data)])
    assert d.tokens_per_second == {} and d.kv_cache_utilization == pytest.approx(0.4875)
    assert d.running == 1 and d.waiting == 1


# ------------------------------------------------------------------ hand-checked windows
VLLM_T0 = """\
vllm:prompt_tokens_total{model="m",version="1"} 1000
vllm:generation_tokens_total{model="m",version="1"} 500
vllm:time_to_first_token_seconds_bucket{model="m",version="1",le="0.1"} 9
vllm:time_to_first_token_seconds_bucket{model="m",version="1",le="+Inf"} 10
vllm:time_to_first_token_seconds_sum{model="m",version="1"} 0.5
vllm:time_to_first_token_seconds_count{model="m",version="1"} 10
vllm:time_per_output_token_seconds_bucket{model="m",version="1",le="+Inf"} 490
vllm:time_per_output_token_seconds_sum{model="m",version="1"} 9.8
vllm:time_per_output_token_seconds_count{model="m",version="1"} 490
vllm:num_requests_running{model="m",version="1"} 3
vllm:num_requests_waiting{model="m",version="1"} 0
vllm:gpu_cache_usage_perc{model="m",version="1"} 0.5
"""
VLLM_T1 = """\
vllm:prompt_tokens_total{model="m",version="1"} 7000
vllm:generation_tokens_total{model="m",version="1"} 2500
vllm:time_to_first_token_seconds_bucket{model="m",version="1",le="0.1"} 29
vllm:time_to_first_token_seconds_bucket{model="m",version="1",le="+Inf"} 30
vllm:time_to_first_token_seconds_sum{model="m",version="1"} 2.5
vllm:time_to_first_token_seconds_count{model="m",version="1"} 30
vllm:time_per_output_token_seconds_bucket{model="m",version="1",le="+Inf"} 2470
vllm:time_per_output_token_seconds_sum{model="m",version="1"} 59.3
vllm:time_per_output_token_seconds_count{model="m",version="1"} 2470
vllm:num_requests_running{model="m",version="1"} 8
vllm:num_requests_waiting{model="m",version="1"} 5
vllm:gpu_cache_usage_perc{model="m",version="1"} 0.97
"""


def test_window_figures_and_cost_per_million_tokens():
    t0, t1 = collect(parse(VLLM_T0)), collect(parse(VLLM_T1))
    (d,) = derive_llm([(100.0, t0), (160.0, t1)], {("m", "1"): 0.06})
    # 6000 prompt tokens and 2000 generated tokens in 60 s
    assert d.tokens_per_second == {c.DIRECTION_INPUT: 100.0, c.DIRECTION_OUTPUT: pytest.approx(2000 / 60)}
    assert d.ttft_seconds == pytest.approx(2.0 / 20)  # Δsum 2.0 s over Δcount 20
    assert d.tpot_seconds == pytest.approx(49.5 / 1980)
    assert (d.running, d.waiting, d.kv_cache_utilization) == (8, 5, 0.97)
    # 0.06 spent over the window: per million input tokens 0.06/6000*1e6 = 10, output 30
    assert d.cost_per_1m_tokens == {
        c.DIRECTION_INPUT: pytest.approx(10.0),
        c.DIRECTION_OUTPUT: pytest.approx(30.0),
    }


def test_counter_reset_never_negative_and_one_snapshot_gives_no_rates():
    t0, t1 = collect(parse(VLLM_T1)), collect(parse(VLLM_T0))  # the backend restarted
    (d,) = derive_llm([(0.0, t0), (30.0, t1)])
    assert all(v >= 0 for v in d.tokens_per_second.values())
    assert d.ttft_seconds is not None and d.ttft_seconds >= 0
    (single,) = derive_llm([(0.0, t0)])
    assert single.tokens_per_second == {} and single.ttft_seconds is None and single.running == 8


# ------------------------------------------------------------------ bad input
BAD = """\
vllm:prompt_tokens_total{version="1"} 5
vllm:generation_tokens_total{model="m",version="1"} NaN
vllm:prompt_tokens_total{model="m",version="1"} 10
vllm:gpu_cache_usage_perc{model="m",version="1"} 7.5
vllm:num_requests_waiting{model="m",version="1"} -3
vllm:time_to_first_token_seconds_bucket{model="m",version="1",le="0.1"} 1
vllm:time_to_first_token_seconds_sum{model="m",version="1"} 0.2
vllm:time_to_first_token_seconds_count{model="m",version="1"} 1
nv_trt_llm_request_metrics{model="t",request_type="bogus",version="1"} 4
nv_trt_llm_request_metrics{model="t",request_type="waiting",version="1"} +Inf
nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="used",model="t",version="1"} 30
nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="max",model="t",version="1"} 0
nv_llm_input_token_len_sum{model="t",response_metric_type="total_input_tokens",version="1"} 100
nv_llm_input_token_len_count{model="t",response_metric_type="total_input_tokens",version="1"} 2
nv_llm_input_token_len_bucket{model="t",response_metric_type="total_input_tokens",version="1",le="+Inf"} 2
"""


def test_bad_input_is_ignored_and_counted_never_nan_or_negative():
    data = collect(parse(BAD))
    assert data.problems == {
        c.LLM_PROBLEM_NO_MODEL: 1,
        c.LLM_PROBLEM_NOT_FINITE: 2,
        c.LLM_PROBLEM_NEGATIVE: 1,
        c.LLM_PROBLEM_UNKNOWN_LABEL: 1,
        c.LLM_PROBLEM_NO_INF_BUCKET: 1,
    }
    row = data.rows[("m", "1")]
    assert row[PROMPT_TOKENS] == 10 and nan(row[GENERATION_TOKENS]) and nan(row[TTFT_SUM])
    models = derive_llm([(0.0, data), (5.0, data)], {("m", "1"): 1.0, ("t", "1"): 1.0})
    by_model = {m.model: m for m in models}
    assert by_model["m"].kv_cache_utilization == 1.0  # clamped into 0-1
    assert by_model["t"].kv_cache_utilization is None  # max 0 blocks: no ratio
    assert by_model["t"].tokens_per_second == {c.DIRECTION_INPUT: 0.0}  # its input histogram is whole
    assert by_model["m"].cost_per_1m_tokens == {} and by_model["t"].cost_per_1m_tokens == {}
    view = ExporterView(True, Derivation(window_seconds=5.0, llm=models, llm_problems=data.problems))
    text = render(view)
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            assert math.isfinite(s.value) and s.value >= 0, s
    assert f'{c.M_LLM_PARSE_PROBLEMS}{{{c.L_PROBLEM}="{c.LLM_PROBLEM_NOT_FINITE}"}} 2.0' in text


def test_only_some_families_and_no_llm_at_all():
    assert collect(parse('nv_inference_count{model="a",version="1"} 3\n')).rows == {}
    only_gauge = collect(parse('vllm:num_requests_running{model="m",version="1"} 2\n'))
    (d,) = derive_llm([(0.0, only_gauge), (1.0, only_gauge)])
    assert d.running == 2 and d.waiting is None and d.tokens_per_second == {} and d.ttft_seconds is None
    assert derive_llm([]) == []


# ------------------------------------------------------------------ the real Triton
def scrape(url: str) -> dict[tuple[str, tuple], float]:
    """Triton's samples by (name, sorted labels)."""
    return {(s.name, s.labels): s.value for s in parse(requests.get(url, timeout=10).text)}


@pytest.mark.triton
def test_exporter_on_the_real_triton_llm_models(triton):
    settings = ExporterSettings(
        triton_url=triton.http_url,
        metrics_url=triton.metrics_url,
        interval=0.5,
        window=3600.0,
        pricing=Pricing(currency="USD", node_hour=0.36, cpu_execution_slots=1),
    )
    exporter = Exporter(settings)
    raw_before = scrape(triton.metrics_url)
    exporter.poll_once()

    def saturated(during: dict) -> bool:
        return all(
            m in during
            and (during[m].kv_cache_utilization or 0) >= 0.9
            and (during[m].waiting or 0) > 0
            and (during[m].running or 0) > 0
            for m in (LLM_VLLM, LLM_TRTLLM)
        )

    with TrafficDriver(triton.http_url, {LLM_VLLM: 12, LLM_TRTLLM: 12}, llm_saturate=True, max_duration_s=30):
        deadline = time.monotonic() + 25
        while True:  # polls in the middle of saturating traffic, until both caches fill (or give up)
            time.sleep(0.5)
            exporter.poll_once()
            during = {m.model: m for m in exporter.derivation.llm}
            if saturated(during) or time.monotonic() > deadline:
                break
    deadline = time.monotonic() + 15
    while True:  # until the engines drained what was in flight when the clients stopped
        time.sleep(0.5)
        exporter.poll_once()
        drained = {m.model: m for m in exporter.derivation.llm}
        if (drained.get(LLM_VLLM) and drained[LLM_VLLM].running == 0 and drained[LLM_VLLM].waiting == 0) or (
            time.monotonic() > deadline
        ):
            break
    raw_after = scrape(triton.metrics_url)
    after = {m.model: m for m in exporter.derivation.llm}
    assert set(after) >= {LLM_VLLM, LLM_TRTLLM}
    assert exporter.derivation.llm_problems == {}

    # saturated: the cache is (nearly) full and requests wait, for both backends' families
    for model in (LLM_VLLM, LLM_TRTLLM):
        assert during[model].kv_cache_utilization >= 0.9, during[model]
        assert during[model].waiting > 0 and during[model].running > 0

    # tokens over the window equal what Triton's counters say, on both backends' families
    mv = ((c.LABEL_MODEL, LLM_VLLM), (c.LABEL_VERSION, "1"))
    prompt = raw_after[(c.VLLM_PROMPT_TOKENS, mv)] - raw_before.get((c.VLLM_PROMPT_TOKENS, mv), 0.0)
    assert after[LLM_VLLM].tokens[c.DIRECTION_INPUT] == prompt > 0
    trt = (
        (c.LABEL_MODEL, LLM_TRTLLM),
        ("response_metric_type", "total_output_tokens"),
        (c.LABEL_VERSION, "1"),
    )
    out_name = c.TRT_OUTPUT_TOKEN_LEN + "_sum"
    generated = raw_after[(out_name, trt)] - raw_before.get((out_name, trt), 0.0)
    assert after[LLM_TRTLLM].tokens[c.DIRECTION_OUTPUT] == generated > 0
    # the model's own timings: prefill >= 4 ms, decode >= 2 ms per token
    assert after[LLM_VLLM].ttft_seconds > 0.004 and after[LLM_VLLM].tpot_seconds > 0.002
    assert after[LLM_TRTLLM].ttft_seconds is None  # TensorRT-LLM's families carry no TTFT
    # drained: nothing runs or waits after the traffic
    assert after[LLM_VLLM].running == 0 and after[LLM_VLLM].waiting == 0

    # exported, with cost per million tokens from the same attribution as cost per 1k inferences
    text = exporter.metrics_text().decode()
    exported = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    rate = exported[
        (
            c.M_LLM_TOKENS_PER_SECOND,
            ((c.L_DIRECTION, c.DIRECTION_OUTPUT), (c.LABEL_MODEL, LLM_VLLM), (c.LABEL_VERSION, "1")),
        )
    ]
    assert rate > 0
    costs = {k: v for k, v in exported.items() if k[0] == c.M_COST_PER_1M_TOKENS}
    per_1k = {k: v for k, v in exported.items() if k[0] == c.M_COST_PER_1K}
    vllm_1k = next(v for k, v in per_1k.items() if dict(k[1])[c.LABEL_MODEL] == LLM_VLLM)
    vllm_1m_out = next(
        v
        for k, v in costs.items()
        if dict(k[1])[c.LABEL_MODEL] == LLM_VLLM and dict(k[1])[c.L_DIRECTION] == "output"
    )
    inferences = raw_after[(c.NV_INFERENCE_COUNT, mv)] - raw_before.get((c.NV_INFERENCE_COUNT, mv), 0.0)
    # both divide the same attributed cost: per 1k inferences x inferences/1000 = per 1M tokens x tokens/1e6
    spent_from_1k = vllm_1k * inferences / 1000
    spent_from_1m = vllm_1m_out * after[LLM_VLLM].tokens[c.DIRECTION_OUTPUT] / 1e6
    assert spent_from_1m == pytest.approx(spent_from_1k, rel=1e-9)
    assert all(math.isfinite(v) and v >= 0 for k, v in exported.items() if k[0].startswith("triton_sre_llm"))


def test_tensorrtllm_before_25_04_reads_waiting_as_active_minus_scheduled():
    # tensorrtllm_backend r23.12-r25.03 registers no request_type="waiting" (nor "fraction"); the backend
    # itself computes waiting as active - scheduled from r25.04 on
    data = collect(
        parse(
            (DATA / "synthetic" / "tensorrtllm_backend_r24.10_no_waiting.txt").read_text(), keep=keep_family
        )
    )
    row = data.rows[TRT_KEY]
    assert row[RUNNING] == 3
    assert row[WAITING] == 2
    assert row[KV_USAGE] == pytest.approx(0.25)  # used / max
    assert not data.problems
