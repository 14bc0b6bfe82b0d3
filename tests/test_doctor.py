"""`triton-sre doctor` against the real Triton (with and without summaries, an LLM model with and
without its custom metrics) and a real Prometheus (wrong job name, too-long scrape interval, stale
rules, no Alertmanager; then a correct one with a real Alertmanager)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from binaries import binary
from faultproxy import HUGE, TRICKLE, FaultProxy
from live_prometheus import start_prometheus, stop_prometheus, wait_ready
from test_bot_alertmanager import Alertmanager  # the real Alertmanager, started the same way

from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.demo import LLM_TRTLLM, LLM_VLLM, SAMPLE_REPOSITORY, VECTOR_SCALE
from triton_sre.doctor import checks, promchecks
from triton_sre.doctor.checks import HISTOGRAM_ALL_MODELS_SINCE, REPORT_CUSTOM_METRICS_LINE
from triton_sre.doctor.command import diagnose, stack_summary
from triton_sre.doctor.facts import release_of
from triton_sre.exporter.service import Exporter
from triton_sre.generate.families import rule_files
from triton_sre.generate.rulefile import render_yaml
from triton_sre.slo import default_spec, parse_spec, spec_from_mapping
from triton_sre.stack.local_triton import LocalTriton
from triton_sre.stack.processes import free_port
from triton_sre.triton.exposition import parse_bytes

ROOT = Path(__file__).resolve().parent.parent


def _doctor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "triton_sre.cli", "doctor", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


def _checks(out: str) -> dict[str, dict[str, Any]]:
    body = json.loads(out)
    return {check["id"]: check for check in body["checks"]}


def _repository(tmp_path: Path, report_vllm_metrics: bool) -> Path:
    """The two LLM-shaped decoupled models and one batching model; vLLM's metrics on or off."""
    repo = tmp_path / "models"
    for name in (LLM_VLLM, LLM_TRTLLM, VECTOR_SCALE):
        shutil.copytree(SAMPLE_REPOSITORY / name, repo / name, symlinks=False)
    if not report_vllm_metrics:
        config = repo / LLM_VLLM / "config.pbtxt"
        text = config.read_text()
        assert REPORT_CUSTOM_METRICS_LINE.replace('"true"', '"false"') not in text
        on = f'key: "{c.PARAM_REPORT_CUSTOM_METRICS}" value: {{ string_value: "true" }}'
        assert on in text
        config.write_text(text.replace(on, on.replace('"true"', '"false"')))
    return repo


def _exporter_missing(triton: LocalTriton) -> dict[str, float]:
    """triton_sre_input_missing{check} as the exporter serves it after two polls."""
    exporter = Exporter(
        ExporterSettings(triton_url=triton.http_url, metrics_url=triton.metrics_url, interval=1.0)
    )
    exporter.poll_once()
    exporter.poll_once()
    samples = parse_bytes(exporter.metrics_text())
    return {dict(s.labels)[c.L_CHECK]: s.value for s in samples if s.name == c.M_INPUT_MISSING}


def test_without_summaries_or_vllm_metrics_names_each_fix(fresh_triton_factory: Any, tmp_path: Path) -> None:
    triton = fresh_triton_factory(_repository(tmp_path, report_vllm_metrics=False), metrics_config=[])
    time.sleep(2.5)  # Triton's CPU metrics are 0 until the first collection
    result = _doctor("--triton-url", triton.http_url, "--metrics-url", triton.metrics_url, "--format", "json")
    assert result.returncode == c.EXIT_FAILURE, result.stderr
    body = json.loads(result.stdout)
    assert body["triton_version"] == "2.51.0"
    checks = _checks(result.stdout)
    assert list(checks) == list(c.TRITON_CHECKS)
    assert set(checks[c.CHECK_LATENCY_QUANTILES]) == {
        "id",
        "ok",
        "needed",
        "found",
        "affects",
        "fix",
        c.L_NEEDS_RELEASE,
    }
    assert all(check[c.L_NEEDS_RELEASE] == "" for check in checks.values())  # 2.51 predates none of them
    latency = checks[c.CHECK_LATENCY_QUANTILES]
    assert latency["ok"] is False and "summary_latencies=true" in latency["fix"]
    assert any(c.ALERT_LATENCY_QUANTILES_MISSING in a for a in latency["affects"])
    llm = checks[c.CHECK_LLM_METRICS]
    assert llm["ok"] is False
    assert REPORT_CUSTOM_METRICS_LINE in llm["fix"] and LLM_VLLM in llm["fix"]
    assert LLM_TRTLLM not in llm["fix"]  # it reports the TensorRT-LLM families
    assert checks[c.CHECK_CPU_METRICS]["ok"] and checks[c.CHECK_PENDING_REQUESTS]["ok"]
    # 2.51 has no load-duration family: not needed (the exporter times loads), so not a failure
    assert checks[c.CHECK_LOAD_DURATION]["ok"] and not checks[c.CHECK_LOAD_DURATION]["needed"]
    missing = {i for i, ch in checks.items() if ch["needed"] and not ch["ok"]}
    assert missing == {c.CHECK_LATENCY_QUANTILES, c.CHECK_LLM_METRICS}
    text = _doctor("--triton-url", triton.http_url, "--metrics-url", triton.metrics_url)
    assert text.returncode == c.EXIT_FAILURE
    assert "MISSING latency-quantiles" in text.stdout and "\033[" not in text.stdout  # no colour off a TTY
    assert "fix: start tritonserver with --metrics-config summary_latencies=true" in text.stdout
    # the exporter evaluates the same checks from its poll
    exported = _exporter_missing(triton)
    assert set(exported) == set(c.TRITON_CHECKS)
    assert {check for check, value in exported.items() if value == 1} == missing
    state = {"components": [{"name": "triton", "url": triton.http_url, "metrics_url": triton.metrics_url}]}
    summary = stack_summary(state)
    assert summary[0].endswith("2 needed input(s) missing: latency-quantiles, llm-metrics")
    assert any(REPORT_CUSTOM_METRICS_LINE in line for line in summary)


def test_with_summaries_and_llm_metrics_passes(fresh_triton_factory: Any, tmp_path: Path) -> None:
    triton = fresh_triton_factory(_repository(tmp_path, report_vllm_metrics=True))  # summaries on
    time.sleep(2.5)
    result = _doctor("--triton-url", triton.http_url, "--metrics-url", triton.metrics_url, "--format", "json")
    checks = _checks(result.stdout)
    assert result.returncode == c.EXIT_OK, result.stdout
    assert checks[c.CHECK_LATENCY_QUANTILES]["ok"] and checks[c.CHECK_LLM_METRICS]["ok"]
    assert f"reporting: {LLM_TRTLLM}, {LLM_VLLM}" in checks[c.CHECK_LLM_METRICS]["found"]
    assert set(_exporter_missing(triton).values()) == {0.0}
    # what `stack up` and `demo` print at start
    state = {"components": [{"name": "triton", "url": triton.http_url, "metrics_url": triton.metrics_url}]}
    assert stack_summary(state) == [
        "doctor: Triton 2.51.0, 8 checks: every input triton-sre needs is present"
    ]
    pitfalls = {p["id"]: p for p in json.loads(result.stdout)["pitfalls"]}
    assert "summary-throughput" in pitfalls  # summaries are on
    assert pitfalls["summary-throughput"]["source"].startswith("https://github.com/")


def test_unreachable_triton_and_bad_usage_exit_2(tmp_path: Path) -> None:
    port = free_port()
    result = _doctor("--triton-url", f"http://127.0.0.1:{port}")
    assert result.returncode == c.EXIT_USAGE and "cannot read Triton" in result.stderr
    assert _doctor().returncode == c.EXIT_USAGE  # --triton-url is required
    missing = _doctor("--triton-url", f"http://127.0.0.1:{port}", "--spec", str(tmp_path / "none.yaml"))
    assert missing.returncode == c.EXIT_USAGE and "No such file or directory" in missing.stderr


def test_metrics_port_elsewhere_says_to_give_metrics_url(triton: LocalTriton) -> None:
    """`doctor --triton-url` alone looks for metrics on port 8002; on `stack up`'s free ports (or a
    container's mapping) that was "Connection refused" with no word of --metrics-url (journey23)."""
    result = _doctor(
        "--triton-url", triton.http_url, "--metrics-url", f"http://127.0.0.1:{free_port()}/metrics"
    )
    assert result.returncode == c.EXIT_USAGE, result.stderr
    assert (
        "Connection refused" in result.stderr
        and "give its metrics endpoint as --metrics-url" in result.stderr
    )
    down = _doctor("--triton-url", f"http://127.0.0.1:{free_port()}")  # the HTTP API itself: no such hint
    assert down.returncode == c.EXIT_USAGE and "--metrics-url" not in down.stderr


@pytest.mark.parametrize("fault", [HUGE, TRICKLE])
def test_a_huge_or_trickling_metadata_answer_is_bounded(triton: LocalTriton, fault: str) -> None:
    """`GET /v2` goes through the same client as the other reads: its size cap and its --timeout for the
    whole answer (a 50 MB body, or a real answer one byte every 0.4 s)."""
    with FaultProxy(triton.http_url) as proxy:
        proxy.set_fault("/v2", fault)
        started = time.monotonic()
        result = _doctor("--triton-url", proxy.url, "--metrics-url", triton.metrics_url, "--timeout", "2")
        took = time.monotonic() - started
    assert result.returncode == c.EXIT_USAGE, result.stderr
    assert "cannot read Triton" in result.stderr and len(result.stderr.splitlines()) == 1
    assert took < 30, took  # (it read the whole 50 MB, or trickled for minutes, before)
    if fault == HUGE:
        assert c.FAULT_TOO_LARGE in result.stderr  # refused by its size, not read whole and then parsed


def test_release_mapping() -> None:
    assert release_of(51) == "24.10" and release_of(52) == "24.11" and release_of(54) == "25.01"
    assert release_of(38) == "23.09"
    # 25.07 had no minor version of its own (2.59.1): 2.59 is 25.06, 2.60 is 25.08, 2.65 is 26.01 (the
    # server's r26.01 TRITON_VERSION)
    assert release_of(59) == "25.06" and release_of(60) == "25.08" and release_of(65) == "26.01"


def test_the_histogram_covers_every_model_from_2_65_on() -> None:
    """26.01 (2.65) is the first release whose first-response histogram covers non-decoupled models."""
    assert release_of(HISTOGRAM_ALL_MODELS_SINCE) == "26.01"
    assert release_of(HISTOGRAM_ALL_MODELS_SINCE - 1) == "25.12"


def _prometheus(work: Path, config: dict[str, Any], rules: dict[str, str]) -> tuple[Any, Any, str]:
    work.mkdir(parents=True, exist_ok=True)
    for name, text in rules.items():
        (work / name).write_text(text)
    config["rule_files"] = [str(work / name) for name in rules]
    port = free_port()
    # the shipped spec's rules read 30 days: kept that long, the retention check passes with the others
    proc, log = start_prometheus(work, config, port, "--storage.tsdb.retention.time=30d")
    wait_ready(proc, work, port)
    return proc, log, f"http://127.0.0.1:{port}"


def _wait_scraped(url: str, jobs: set[str]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        targets = requests.get(f"{url}/api/v1/targets", timeout=5).json()["data"]["activeTargets"]
        if {t["labels"]["job"] for t in targets if t["health"] == "up"} >= jobs:
            return
        time.sleep(0.5)
    raise AssertionError(f"targets not scraped: {targets}")


def _rules(spec: Any) -> dict[str, str]:
    return {name: render_yaml(doc, "slos.yaml") for name, doc in rule_files(spec).items()}


def test_prometheus_wrong_job_long_interval_stale_rules(triton: LocalTriton, tmp_path: Path) -> None:
    spec = default_spec()
    target = triton.metrics_url.split("//", 1)[1].split("/", 1)[0]
    # A spec edited after the rules were loaded: the latency threshold changed, one SLO removed.
    text = (ROOT / "slos.yaml").read_text().replace("threshold: 500ms", "threshold: 250ms")
    older = parse_spec(text.replace("name: time-per-output-token", "name: tpot-old"))
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "900ms"},
        "scrape_configs": [
            {"job_name": "tritonserver", "static_configs": [{"targets": [target]}]},  # wrong name
            {
                "job_name": spec.exporter_job,
                "scrape_interval": "2m",  # the shortest rule window is 1m: at most 15s
                "scrape_timeout": "10s",
                "static_configs": [{"targets": [target]}],
            },
        ],
    }
    proc, log, url = _prometheus(tmp_path / "prom", config, _rules(older))
    try:
        _wait_scraped(url, {"tritonserver"})  # the 2m job's first scrape may come up to 2m later
        report = diagnose(triton.http_url, triton.metrics_url, spec, prometheus_url=url)
    finally:
        stop_prometheus(proc, log)
    checks = {ch.id: ch for ch in report.checks}
    jobs = checks[c.CHECK_PROMETHEUS_JOBS]
    assert not jobs.ok and f"no target has job={spec.triton_job!r}" in jobs.found
    assert "job tritonserver scrapes" in jobs.fix and f"job_name: {spec.triton_job}" in jobs.fix
    interval = checks[c.CHECK_SCRAPE_INTERVAL]
    assert not interval.ok and f"{spec.exporter_job}: 2m" in interval.found
    assert "scrape_interval: 15s" in interval.fix and spec.exporter_job in interval.fix
    rules = checks[c.CHECK_RULES_LOADED]
    assert not rules.ok and "triton-sre.slo.time-per-output-token" in rules.found  # not loaded
    assert "triton-sre.slo.latency (" in rules.found and "changed" in rules.found  # stale threshold
    assert not checks[c.CHECK_ALERTMANAGER].ok
    assert report.exit_code == c.EXIT_FAILURE


def test_prometheus_set_up_right_passes(triton: LocalTriton, tmp_path: Path) -> None:
    spec = default_spec()
    target = triton.metrics_url.split("//", 1)[1].split("/", 1)[0]
    nowhere = f"http://127.0.0.1:{free_port()}"  # no alert fires in these seconds: no webhook is sent
    am = Alertmanager(tmp_path / "am", nowhere, nowhere)
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "900ms"},
        "alerting": {"alertmanagers": [{"static_configs": [{"targets": [f"127.0.0.1:{am.port}"]}]}]},
        "scrape_configs": [
            {"job_name": spec.triton_job, "static_configs": [{"targets": [target]}]},
            {"job_name": spec.exporter_job, "static_configs": [{"targets": [target]}]},
        ],
    }
    try:
        proc, log, url = _prometheus(tmp_path / "prom", config, _rules(spec))
        try:
            _wait_scraped(url, {spec.triton_job, spec.exporter_job})
            report = diagnose(
                triton.http_url, triton.metrics_url, spec, prometheus_url=url, alertmanager_url=am.url
            )
            wrong_am = diagnose(
                triton.http_url,
                triton.metrics_url,
                spec,
                prometheus_url=url,
                alertmanager_url=f"http://127.0.0.1:{free_port()}",
            )
        finally:
            stop_prometheus(proc, log)
    finally:
        am.stop()
    checks = {ch.id: ch for ch in report.checks}
    for check_id in c.PROMETHEUS_CHECKS:
        assert checks[check_id].ok, checks[check_id]
    assert "loaded" in checks[c.CHECK_RULES_LOADED].found
    assert not {ch.id: ch for ch in wrong_am.checks}[c.CHECK_ALERTMANAGER].ok


def test_unreachable_prometheus_exit_2(triton: LocalTriton) -> None:
    result = _doctor(
        "--triton-url",
        triton.http_url,
        "--metrics-url",
        triton.metrics_url,
        "--prometheus-url",
        f"http://127.0.0.1:{free_port()}",
    )
    assert result.returncode == c.EXIT_USAGE and "cannot reach Prometheus" in result.stderr


def test_k8s_onprem_rule_is_recognised() -> None:
    from triton_sre.doctor.pitfalls import k8s_onprem_rule

    adapter = (
        "avg(delta(nv_inference_queue_duration_us{pod='x'}[30s])/"
        "(1+delta(nv_inference_request_success{pod='x'}[30s]))) by (pod)"
    )
    assert k8s_onprem_rule(adapter)
    assert not k8s_onprem_rule(
        "rate(nv_inference_queue_duration_us[5m]) / rate(nv_inference_request_success[5m])"
    )


def test_shortest_window_of_the_shipped_rules() -> None:
    groups = promchecks.groups_from_rule_files(rule_files(default_spec()))
    windows = promchecks.range_windows(groups)
    assert min(s for _, s in windows) == 30.0  # the shortest: the scaling signals' average, 2 x 15 s
    assert min(s for f, s in windows if f == "rate") == 60.0  # the queue-time and time-slice rates
    assert {f for f, s in windows if s == 30.0} == {"avg_over_time"}


def test_a_scaling_average_of_two_scrapes_passes_at_15s_and_names_scrape_interval_when_short() -> None:
    """At 15 s the signals' [30s] average holds two scrapes (enough for an average; a rate needs 4):
    the check passes. A spec saying scrape.interval 5s ([10s] average) against a Prometheus scraping
    every 15 s fails, and the fix names both ways out: the spec's interval, or the scrape config."""
    spec = default_spec()
    groups = promchecks.groups_from_rule_files(rule_files(spec))
    at_15s = promchecks.scrape_interval(spec, {spec.triton_job: 15.0, spec.exporter_job: 15.0}, groups)
    assert at_15s.ok, at_15s.found
    raw = yaml.safe_load((ROOT / "slos.yaml").read_text())
    fast = spec_from_mapping({**raw, "scrape": {**raw["scrape"], "interval": "5s"}})
    fast_groups = promchecks.groups_from_rule_files(rule_files(fast))
    check = promchecks.scrape_interval(fast, {fast.triton_job: 15.0, fast.exporter_job: 15.0}, fast_groups)
    assert not check.ok and "the shortest average 10s" in check.found
    assert "set scrape.interval: 15s in" in check.fix and "triton-sre generate" in check.fix
    assert "scrape_interval: 5s" in check.fix  # or scrape that often
    assert f"job {fast.exporter_job}" not in check.fix  # the averages read only the Triton job
    # scraped faster than the spec says: passes, and says a shorter window would answer sooner
    check = promchecks.scrape_interval(spec, {spec.triton_job: 5.0, spec.exporter_job: 15.0}, groups)
    assert check.ok and "set it to 5s and regenerate" in check.found


def test_input_missing_alert_fires_under_promtool(tmp_path: Path) -> None:
    """The alert on the exporter's gauge, run by the real promtool: 1 for 15m fires, 0 never."""
    from triton_sre.diagnosis.catalog import load_catalog
    from triton_sre.generate.input_missing import input_missing_alert

    spec = default_spec()
    rule = input_missing_alert(spec)
    (tmp_path / "rules.yaml").write_text(
        render_yaml({"groups": [{"name": c.GROUP_OPERATIONAL, "rules": [rule]}]}, "slos.yaml")
    )
    series = f'{c.M_INPUT_MISSING}{{job="{spec.exporter_job}",instance="e:8003",{c.L_CHECK}="%s"}}'
    fired = {c.LABEL_JOB: spec.exporter_job, c.LABEL_INSTANCE: "e:8003", c.L_SEVERITY: c.SEVERITY_TICKET}
    test = {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    {"series": series % c.CHECK_LLM_METRICS, "values": "1x30"},
                    {"series": series % c.CHECK_CPU_METRICS, "values": "0x30"},
                ],
                "alert_rule_test": [
                    {"eval_time": "10m", "alertname": c.ALERT_INPUT_MISSING, "exp_alerts": []},
                    {
                        "eval_time": "20m",
                        "alertname": c.ALERT_INPUT_MISSING,
                        "exp_alerts": [
                            {
                                "exp_labels": {**fired, c.L_CHECK: c.CHECK_LLM_METRICS},
                                "exp_annotations": {
                                    key: value.replace("{{ $labels.instance }}", "e:8003").replace(
                                        "{{ $labels.check }}", c.CHECK_LLM_METRICS
                                    )
                                    for key, value in rule["annotations"].items()
                                },
                            }
                        ],
                    },
                ],
            }
        ],
    }
    (tmp_path / "test.yaml").write_text(yaml.safe_dump(test))
    result = subprocess.run(
        [binary("promtool"), "test", "rules", "test.yaml"], cwd=tmp_path, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert c.RUNBOOK_INPUT_MISSING in load_catalog()
    assert rule["annotations"][c.ANNOTATION_RUNBOOK_URL].endswith(f"{c.RUNBOOK_INPUT_MISSING}.md")


def test_response_cache_without_and_with_a_server_cache(fresh_triton_factory: Any, tmp_path: Path) -> None:
    """A model enabling the response cache loads without a server cache (2.51): doctor says so."""
    from triton_sre.stack.local_triton import find_server

    repo = tmp_path / "models"
    shutil.copytree(SAMPLE_REPOSITORY / VECTOR_SCALE, repo / VECTOR_SCALE)
    config = repo / VECTOR_SCALE / "config.pbtxt"
    config.write_text(config.read_text() + "\nresponse_cache { enable: true }\n")
    caches = find_server().binary.parent.parent / "caches"
    found = {}
    for name, extra in (
        ("without", []),
        ("with", ["--cache-config=local,size=1048576", f"--cache-directory={caches}"]),
    ):
        triton = fresh_triton_factory(repo, extra_args=extra, workdir=tmp_path / name)
        checks = {ch.id: ch for ch in diagnose(triton.http_url, triton.metrics_url, default_spec()).checks}
        found[name] = checks
        triton.stop()
    cache = found["without"][c.CHECK_RESPONSE_CACHE]
    assert not cache.ok and cache.needed and "--cache-config local,size=" in cache.fix
    assert found["with"][c.CHECK_RESPONSE_CACHE].ok
    # Triton drops the request summary of a cached model: the only model here has none
    latency = found["with"][c.CHECK_LATENCY_QUANTILES]
    assert not latency.ok and "summary_latencies=true" in latency.fix


@pytest.mark.parametrize(("version", "noted"), [("2.64.0", True), ("2.65.0", False), (None, True)])
def test_the_histogram_note_on_non_decoupled_models_stops_at_26_01(version: str | None, noted: bool) -> None:
    from triton_sre.doctor.checks import latency_quantiles
    from triton_sre.doctor.facts import ModelFacts, TritonFacts

    facts = TritonFacts(
        version=version,
        families=frozenset({c.NV_FIRST_RESPONSE_HISTOGRAM_MS}),
        models=(ModelFacts("plain_model"), ModelFacts("stream_model", decoupled=True)),
        llm_models=frozenset(),
        memory_models=frozenset(),
    )
    found = latency_quantiles(facts, None).found
    note = "before 26.01 the histogram covers decoupled models only, not plain_model"
    assert (note in found) is noted, found
    assert "stream_model" not in found


def test_the_first_server_versions_doctor_names_are_the_family_tables() -> None:
    """Doctor's "upgrade to" versions come from conventions/triton_releases.py; these are the server
    versions the release notes give for those families' first releases (22.09, 23.09, 24.08, 24.11)."""
    assert checks.CPU_METRICS_SINCE == 26
    assert checks.PENDING_COUNT_SINCE == 38
    assert checks.VLLM_METRICS_SINCE == 49
    assert checks.LOAD_DURATION_SINCE == checks.HISTOGRAM_LATENCIES_SINCE == 52
    assert release_of(checks.PENDING_COUNT_SINCE) == "23.09"


def test_an_empty_by_is_compared_as_prometheus_prints_it() -> None:
    """Prometheus prints `count by () (x)` as `count(x)` (an empty grouping is no grouping) but keeps
    `on ()`: the generated not-served alert of an all-models SLO read as stale in a real Prometheus."""
    generated = 'x and on () (count by () (y{a="1"} == 1) > 0) and on () (max by () (z) == 1)'
    loaded = 'x and on () (count(y{a="1"} == 1) > 0) and on () (max(z) == 1)'
    assert promchecks.normalize(generated) == promchecks.normalize(loaded)
    assert promchecks.normalize("sum by (model) (a)") != promchecks.normalize("sum(a)")
    assert promchecks.normalize("a and on () b") != promchecks.normalize("a and b")
