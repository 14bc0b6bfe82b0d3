"""`triton-sre report` on real users' scrapes (tests/data/scrapes/, one public source each).

A real Prometheus (Debian's) scrapes every body below from its own loopback Triton stand-in
(tests/scrape_triton.py) each second; then each body moves on once (every counter doubled, or, for
SonicMetricAnalyzer's server, the user's next dump of it) and the report is built over the whole
range. The report reads each counter's increase over the range, so every figure below is counted by
hand from the bodies: a doubled body's increase is the body's own value.
"""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Iterator

import pandas as pd
import pytest
from live_prometheus import Prom, start_prometheus, stop_prometheus, wait_ready
from scrape_triton import SCRAPES as SCRAPE_DIR
from scrape_triton import ScrapeTriton, split_scrape

from triton_sre import conventions as c
from triton_sre.report.command import build_report
from triton_sre.report.render import CostReport, to_csv, to_html, to_markdown
from triton_sre.stack.processes import free_port

DOUBLED = (
    "ifa_captured_summary_25.12_cpu.txt",
    "zh_triton_guide_vastpipe_custom_metric_23.12_cpu.txt",
    "drunkcoding_measure_4gpu_ensemble_per_gpu_instances_21.12dev.txt",
    "curtpark_codegen_gptj_fastertransformer_ensemble_22.12.txt",
    "server_issue7583_vllm_reasons_24.08.txt",
    "server_issue6448_vllm_dashed_name_23.09.txt",
    "prometheus_docs_pr1953_gpu_uuid_per_model.txt",
)
SONIC_FIRST, SONIC_NEXT = "sonic_exatrkx_gpu_energy_22.x_first.txt", "sonic_exatrkx_gpu_energy_22.x.txt"


def _body(name: str) -> bytes:
    return split_scrape(SCRAPE_DIR / name)[1]


def _all_scraped_after(prom: Prom, targets: int, at: float, timeout: float = 30.0) -> None:
    """Until Prometheus holds a scrape of every one of the `targets` taken after `at`."""
    deadline = time.monotonic() + timeout
    expr = f'count(timestamp(up{{job="{c.DEFAULT_TRITON_JOB}"}}) > {at})'
    while True:
        found = prom.query(expr)
        if found and int(float(found[0]["value"][1])) == targets:
            return
        assert time.monotonic() < deadline, f"not every target scraped after {at}"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CostReport]:
    """The report over the range in which every body moved on once."""
    stands = [ScrapeTriton(_body(name)) for name in (*DOUBLED, SONIC_FIRST)]
    for stand in stands:
        stand.__enter__()
    work = tmp_path_factory.mktemp("prom")
    config = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "900ms"},
        "scrape_configs": [
            {
                "job_name": c.DEFAULT_TRITON_JOB,
                "static_configs": [{"targets": [s.url.split("//", 1)[1] for s in stands]}],
            }
        ],
    }
    port = free_port()
    proc, log = start_prometheus(work, config, port)
    try:
        prom = wait_ready(proc, work, port)
        start = time.time()
        _all_scraped_after(prom, len(stands), start)
        moved = time.time() + 1.0  # at least one more scrape of the bodies as posted
        _all_scraped_after(prom, len(stands), moved)
        for stand in stands[:-1]:
            stand.advance(2.0)
        stands[-1].body = _body(SONIC_NEXT)
        at = time.time()
        _all_scraped_after(prom, len(stands), at + 1.0)
        yield build_report(prom.url, start - 5.0, time.time(), 1.0, scrape_interval=1.0)
    finally:
        stop_prometheus(proc, log)
        for stand in stands:
            stand.__exit__(None, None, None)


@pytest.fixture(scope="module")
def table(report: CostReport) -> pd.DataFrame:
    """The report's table, one row per model."""
    return report.table.set_index("model")


def test_summaries_of_a_25_12_cpu_server(table: pd.DataFrame) -> None:
    """p95labs/ifa's capture with every summary (25.12, CPU): 200 requests of `echo`, 173393 µs in all,
    12588 µs queued, 8956 + 125599 + 25171 µs computing; the request summary's p50/p95/p99 504, 921 and
    1156 µs."""
    echo = table.loc["echo"]
    assert (echo["inferences"], echo["executions"], echo["requests"]) == (200, 200, 200)
    assert echo["batching_ratio"] == 1.0
    assert echo["queue_share"] == pytest.approx(12588 / 173393)
    assert echo["compute_share"] == pytest.approx((8956 + 125599 + 25171) / 173393)
    assert echo["avg_latency_ms"] == pytest.approx(173393 / 1000 / 200)
    assert (echo["p50_ms"], echo["p95_ms"], echo["p99_ms"]) == pytest.approx((0.504, 0.921, 1.156))
    assert echo["latency_source"] == c.LATENCY_SOURCE_SUMMARY


def test_a_python_model_without_a_driver_and_a_counter_naming_an_unloaded_model(table: pd.DataFrame) -> None:
    """The Chinese guide's 23.12 body: 2 requests in 45735 µs (113 queued, 254 + 44730 + 625 computing);
    the custom counter labelled model="custom_metrics" is no Triton family: no row of its own."""
    row = table.loc["vastpipe_passthrough"]
    assert (row["inferences"], row["executions"], row["requests"]) == (2, 2, 2)
    assert row["queue_share"] == pytest.approx(113 / 45735)
    assert row["compute_share"] == pytest.approx((254 + 44730 + 625) / 45735)
    assert row["avg_latency_ms"] == pytest.approx(45735 / 1000 / 2)
    assert row["latency_source"] == ""  # no summary, no histogram
    assert "custom_metrics" not in table.index


def test_one_model_on_four_gpus_is_one_row(table: pd.DataFrame) -> None:
    """drunkcoding/model-inference (Dec 2021): distilgpt2_cola's 151 requests on each of four GPUs are
    one row of 604; its queue and request time the four series' sums."""
    row = table.loc["distilgpt2_cola"]
    assert (row["inferences"], row["executions"], row["requests"]) == (604, 604, 604)
    request_us = 47574974 + 50371315 + 47312693 + 47603188
    assert row["queue_share"] == pytest.approx((2550 + 58356 + 2496 + 2554) / request_us)
    assert row["avg_latency_ms"] == pytest.approx(request_us / 1000 / 604)
    for part in range(4):
        assert table.loc[f"gpt_neo_cola_part{part}", "requests"] == 1208


def test_two_real_dumps_of_one_gpu_server(table: pd.DataFrame) -> None:
    """SonicMetricAnalyzer's result1 then result2 of one 22.x GPU server: 100 more requests each for
    gnn, embed and filter. embed's first request (986855 µs, a warm-up) is before the range: its average
    over the range is (1196137 - 986855) / 100 µs."""
    gnn, embed, filt = (table.loc[m] for m in ("gnn", "embed", "filter"))
    for row in (gnn, embed, filt):
        assert (row["inferences"], row["executions"], row["requests"]) == (100, 100, 100)
    assert gnn["avg_latency_ms"] == pytest.approx((12857993 - 47836) / 1000 / 100)
    assert embed["avg_latency_ms"] == pytest.approx((1196137 - 986855) / 1000 / 100)
    assert filt["avg_latency_ms"] == pytest.approx((3112679 - 37803) / 1000 / 100)
    assert gnn["queue_share"] == pytest.approx((9098 - 216) / (12857993 - 47836))
    gnn_compute = (17401 - 225) + (12047511 - 47253) + (766179 - 11)
    assert gnn["compute_share"] == pytest.approx(gnn_compute / (12857993 - 47836))
    # the pipeline's other models served nothing in either dump: no row
    assert not {"exatrkx", "frnn", "wcc", "applyfilter"} & set(table.index)


def test_dynamic_batching_from_three_families(table: pd.DataFrame) -> None:
    """Curt-Park's FasterTransformer GPT-J (22.12): 391768 inferences in 20439 executions."""
    assert table.loc["codegen-350M-mono-gptj", "batching_ratio"] == pytest.approx(391768 / 20439)


def test_a_family_the_body_lacks_is_no_figure_not_zero(table: pd.DataFrame) -> None:
    """server#7583's two vLLM models (24.08): the post holds the success, failure and inference counts
    only, so there is no execution count and no request duration. The report said 0 executions and an
    average latency of 0.0 ms, figures no counter gave (as for any server started with
    `--metrics-config counter_latencies=false`, which drops every duration counter)."""
    for model in ("llama2", "mistral7b"):
        row = table.loc[model]
        assert (row["inferences"], row["requests"], row["failures"]) == (20, 20, 0)
        for column in ("executions", "batching_ratio", "avg_latency_ms", "queue_share", "compute_share"):
            assert pd.isna(row[column]), (model, column, row[column])


def test_an_excerpt_ending_at_the_request_duration_has_an_average_and_no_shares(table: pd.DataFrame) -> None:
    """server#6448's vLLM model (23.09): the post ends after nv_inference_request_duration_us, 2885180 µs
    over 2639 requests; no queue or compute family, where the report said a queue share and a compute
    share of 0."""
    row = table.loc["triton-vllm-code-llama-model"]
    assert (row["inferences"], row["executions"], row["requests"]) == (2639, 2639, 2639)
    assert row["avg_latency_ms"] == pytest.approx(2885180 / 1000 / 2639)
    assert pd.isna(row["queue_share"]) and pd.isna(row["compute_share"])


def test_no_request_count_is_no_request_rate(table: pd.DataFrame) -> None:
    """Curt-Park's README kept three families (inference and execution counts, compute infer time): no
    success or failure count, so no requests and no request rate, where the report said 0 requests
    beside 391768 inferences; no request duration, so no shares and no average either."""
    gptj = table.loc["codegen-350M-mono-gptj"]
    empty = ("requests", "requests_per_s", "failures", "avg_latency_ms", "queue_share", "compute_share")
    for column in empty:
        assert pd.isna(gptj[column]), (column, gptj[column])
    assert gptj["inferences"] == 391768 and gptj["executions"] == 20439


def test_the_missing_figures_are_empty_in_every_rendering(report: CostReport) -> None:
    """The same rows as the report writes them: an empty CSV cell and a dash, never 0."""
    rows = {r["model"]: r for r in csv.DictReader(io.StringIO(to_csv(report)))}
    assert rows["llama2"]["avg_latency_ms"] == "" and rows["llama2"]["executions"] == ""
    assert rows["codegen-350M-mono-gptj"]["requests"] == ""
    assert rows["echo"]["avg_latency_ms"] != ""
    line = next(row for row in to_markdown(report).splitlines() if row.startswith("| llama2 "))
    assert "–" in line
    assert "llama2" in to_html(report)


def test_two_versions_counted_by_requests_only(report: CostReport) -> None:
    """prometheus/docs#1953's sample (2021): inception_v3 versions 42 and 43, per-GPU series only, and
    the excerpt ends inside the failure counter: 54 and 177 successful requests, no inference or
    execution count. The report said 0 inferences beside them."""
    rows = report.table[report.table["model"] == "inception_v3"].set_index("version")
    assert list(rows.index) == ["all", "42", "43"]
    assert [rows.loc[v, "requests"] for v in ("all", "42", "43")] == [231, 54, 177]
    for column in ("inferences", "executions", "batching_ratio", "cost_per_1k"):
        assert rows[column].isna().all(), (column, rows[column].tolist())
