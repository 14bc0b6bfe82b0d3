"""`triton-sre doctor` on real users' scrapes (tests/data/scrapes/, one public source each).

Each body is served by the loopback Triton stand-in (tests/scrape_triton.py) with the HTTP API
derived from it. The families doctor (and the exporter's `triton_sre_input_missing`) sees are
checked against the body read by this test's own line regexes: a watched family is there when a
`# TYPE` line declares it or a sample of it is written without one. A body Prometheus would
reject is exit 2 with a message naming the metrics URL and the line, not an internal error.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from scrape_triton import SCRAPES as SCRAPE_DIR
from scrape_triton import ScrapeTriton, scrape_files, split_scrape

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.doctor.checks import cpu_metrics
from triton_sre.doctor.command import triton_facts
from triton_sre.doctor.facts import WATCHED_FAMILIES
from triton_sre.triton.client import TritonClient

CUT_MID_LINE = {"server_issue8561_recent_cut_mid_line.txt"}
# Examples posted with "..." where they left lines out, and the body line of the first "...": the vLLM
# backend's README (buckets left out), the backend repository's tutorial (body cut after four families).
ELIDED = {
    "vllm_backend_readme_98947a7_histograms_elided_24.09.txt": 12,
    "backend_recommended_tutorial_batching_elided_21.12.txt": 13,
    "vllm_backend_pr92_1a1b66e_gauges_elided_25.x.txt": 36,
}
# Ends at a comment line with no final newline, and the body line it ends on: Kura's GPU parser test constant.
UNTERMINATED = {"kura_metrics_parser_test_gpu_ends_at_type_24.x.txt": 14}
PARSEABLE = [p for p in scrape_files() if p.name not in CUT_MID_LINE | set(ELIDED) | set(UNTERMINATED)]
_TYPE_LINE = re.compile(r"^# TYPE (\S+) ", re.MULTILINE)
_SAMPLE_NAME = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)[ \t{]", re.MULTILINE)
_SERIES_SUFFIXES = ("", "_count", "_sum", "_bucket")


def watched_in(body: str) -> set[str]:
    declared = set(_TYPE_LINE.findall(body))
    sampled = set(_SAMPLE_NAME.findall(body))
    return {
        family
        for family in WATCHED_FAMILIES
        if family in declared or any(family + suffix in sampled for suffix in _SERIES_SUFFIXES)
    }


@pytest.mark.parametrize("path", PARSEABLE, ids=lambda p: p.stem)
def test_doctor_sees_the_watched_families_a_body_declares_or_samples(path: Path) -> None:
    body = split_scrape(path)[1]
    with ScrapeTriton(body) as triton:
        facts = triton_facts(TritonClient(triton.url, triton.url + c.PATH_METRICS, timeout=10))
    assert facts.families == watched_in(body.decode())


def test_untyped_gpu_families_count_as_exported(capsys: pytest.CaptureFixture[str]) -> None:
    """Alibaba Cloud's ACK guide shows a 21.05 body whose comment lines read `#TYPE` (no space):
    comments to the text format, so its GPU families are untyped, yet scraped and read by the
    exporter. Doctor said "no GPU metrics ... a CPU-only server" for it."""
    body = split_scrape(SCRAPE_DIR / "aliyun_ack_hash_help_no_space_21.05_gpu.txt")[1].decode()
    assert not re.search(r"^# TYPE nv_gpu_", body, re.MULTILINE)
    assert set(c.NV_GPU_METRIC_FAMILIES) <= watched_in(body)
    with ScrapeTriton(body.encode()) as triton:
        code = main(["doctor", "--triton-url", triton.url, "--metrics-url", triton.url + c.PATH_METRICS])
    out = capsys.readouterr().out
    gpu_line = next(line for line in out.splitlines() if c.CHECK_GPU_METRICS in line)
    assert gpu_line.startswith("ok") and "CPU-only" not in gpu_line
    assert all(family in gpu_line for family in c.NV_GPU_METRIC_FAMILIES)
    assert code == 1  # the 21.05 body really lacks CPU metrics and the pending count


@pytest.mark.parametrize("variant", ["cut_mid_line", "crlf", *ELIDED, *UNTERMINATED])
def test_a_body_that_is_not_prometheus_text_is_exit_2_naming_url_and_line(
    variant: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if variant == "cut_mid_line":
        body = split_scrape(SCRAPE_DIR / next(iter(CUT_MID_LINE)))[1]
    elif variant in ELIDED or variant in UNTERMINATED:
        body = split_scrape(SCRAPE_DIR / variant)[1]
    else:
        body = split_scrape(SCRAPE_DIR / "server_issue7583_vllm_reasons_24.08.txt")[1].replace(b"\n", b"\r\n")
    with ScrapeTriton(body) as triton:
        metrics_url = triton.url + c.PATH_METRICS
        code = main(["doctor", "--triton-url", triton.url, "--metrics-url", metrics_url])
    err = capsys.readouterr().err
    assert code == c.EXIT_USAGE
    assert "internal error" not in err
    assert metrics_url in err and "not Prometheus text format" in err and "line " in err
    if variant in ELIDED:
        assert f"line {ELIDED[variant]}: " in err and "'...'" in err
    if variant in UNTERMINATED:
        assert f"line {UNTERMINATED[variant]}: " in err and "does not end with a newline" in err


@pytest.mark.parametrize(("version", "predates"), [("2.14.0", True), ("2.26.0", False), (None, False)])
def test_cpu_metrics_fix_for_a_server_older_than_them(version: str | None, predates: bool) -> None:
    """Model Analyzer's 21.09 test body (GPU families only): CPU metrics came with 22.09 (server
    2.26, PR #4803 "Add CPU metrics CLI options and docs"). Doctor told a 2.14 server to start with
    --allow-cpu-metrics=true, an option its tritonserver does not have."""
    body = split_scrape(SCRAPE_DIR / "model_analyzer_remote_monitor_gpu_only_21.09.txt")[1]
    with ScrapeTriton(body) as triton:
        facts = triton_facts(TritonClient(triton.url, triton.url + c.PATH_METRICS, timeout=10))
    assert not facts.families & set(c.NV_CPU_METRIC_FAMILIES)
    check = cpu_metrics(dataclasses.replace(facts, version=version))
    assert not check.ok and check.needed
    if predates:
        assert "--allow-cpu-metrics" not in check.fix
        assert "upgrade Triton to 22.09 (2.26) or later" in check.fix
        assert f"Triton {version} predates them" in check.found
    else:
        assert "--allow-cpu-metrics=true" in check.fix and "predates" not in check.found


def test_a_body_with_no_latency_family_at_all_is_not_called_averages_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """server#7697's docs body (24.11 dev) holds nv_model_load_duration_secs alone: no request duration
    counter, no summary, no histogram. Doctor said "Triton exports latency averages only", averages the
    body does not have (as a server started with --metrics-config counter_latencies=false has none)."""
    body = split_scrape(SCRAPE_DIR / "server_pr7697_docs_model_load_time_two_versions_24.11dev.txt")[1]
    assert c.NV_REQUEST_DURATION_US.encode() not in body
    with ScrapeTriton(body) as triton:
        code = main(["doctor", "--triton-url", triton.url, "--metrics-url", triton.url + c.PATH_METRICS])
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if c.CHECK_LATENCY_QUANTILES in line)
    assert line.startswith("MISSING") and "averages only" not in line
    assert "no request latency" in line and c.NV_REQUEST_DURATION_US in line
    load = next(line for line in out.splitlines() if c.CHECK_LOAD_DURATION in line)
    assert load.startswith("ok") and c.NV_MODEL_LOAD_DURATION_SECS in load
    assert code == 1
