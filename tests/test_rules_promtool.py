"""promtool on the generated rules: check, the shipped unit tests, and edge cases written by hand."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml
from binaries import binary

from triton_sre import conventions as c
from triton_sre.generate.command import render_all
from triton_sre.generate.families import rule_files
from triton_sre.generate.families import test_files as promtool_files
from triton_sre.slo import parse_spec

REPO = Path(__file__).resolve().parents[1]


PROMTOOL_TIMEOUT = 1200  # seconds; a loaded CI machine runs these several times slower than a quiet one
pytestmark = pytest.mark.timeout(PROMTOOL_TIMEOUT + 60)  # the suite's 300 s would end them first


def _run(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [binary("promtool"), *args], cwd=cwd, capture_output=True, text=True, timeout=PROMTOOL_TIMEOUT
    )


def _test_in_parallel(files: list[Path]) -> None:
    """promtool test rules, one process per file (the long-window file alone takes ~15 s)."""
    procs = [
        (
            f,
            subprocess.Popen(
                [binary("promtool"), "test", "rules", f.name],
                cwd=f.parent,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            ),
        )
        for f in files
    ]
    failures = []
    try:
        for f, proc in procs:
            # CPU-bound (the long-window file is ~150 CPU-seconds): the bound only catches a hang.
            out, _ = proc.communicate(timeout=PROMTOOL_TIMEOUT)
            if proc.returncode != 0:
                failures.append(f"{f.name}:\n{out[-4000:]}")
    finally:
        for _f, proc in procs:  # a timeout or an interrupt must not leave promtool burning CPU
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert not failures, "\n".join(failures)


def test_promtool_check_rules_passes_on_the_shipped_rules() -> None:
    shipped = sorted((REPO / "alerts").glob("*.yaml"))
    # the shipped files are exactly the generator's, no stale or missing one
    assert [p.name for p in shipped] == sorted(rule_files(parse_spec((REPO / "slos.yaml").read_text())))
    files = [str(p.relative_to(REPO)) for p in shipped]
    result = _run("check", "rules", "--lint-fatal", *files)  # a duplicate rule is a failure, not a line
    assert result.returncode == 0, result.stdout + result.stderr
    # and promtool read every rule of every file: none skipped or merged away
    found = dict(re.findall(r"Checking (\S+)\n\s+SUCCESS: (\d+) rules found", result.stdout + result.stderr))
    written = {
        f: sum(len(g["rules"]) for g in yaml.safe_load((REPO / f).read_text())["groups"]) for f in files
    }
    assert {f: int(n) for f, n in found.items()} == written
    assert all(n > 0 for n in written.values())


@pytest.mark.slow
def test_promtool_unit_tests_pass_on_the_shipped_rules() -> None:
    tests = sorted((REPO / "alerts" / "tests").glob("*.yaml"))
    assert len(tests) == len(promtool_files(parse_spec((REPO / "slos.yaml").read_text()), "runbooks/"))
    names = [g["name"] for t in tests for g in yaml.safe_load(t.read_text())["tests"]]
    for tier in ("1h/5m", "6h/30m", "1d/2h", "3d/6h"):
        for slo in ("availability", "latency", "ttft", "time-per-output-token"):
            assert any(
                n.startswith(f"{slo}: ") and tier in n and "above" in n and "below" in n for n in names
            )
    kinds = {
        "availability": [""],
        "latency": [
            f" ({k})" for k in (c.LATENCY_SLI_HISTOGRAM, c.LATENCY_SLI_TIME_SLICE, c.LATENCY_SOURCE_SUMMARY)
        ],
    }
    for scenario in ("total outage", "recovery resolves", "below min_request_rate", "zero traffic"):
        for slo in ("ttft", "time-per-output-token"):
            assert sum(n.startswith(f"{slo}: ") and scenario in n for n in names) == 1, (slo, scenario)
        for slo in ("availability", "latency"):
            for kind in kinds[slo]:
                found = [n for n in names if n.startswith(f"{slo}: ") and scenario in n and n.endswith(kind)]
                assert len(found) == 1, (slo, scenario, kind)
    for kind in (c.LATENCY_SLI_HISTOGRAM, c.LATENCY_SOURCE_SUMMARY):
        assert f"latency: average under the threshold, p99 over it: burns ({kind})" in names
        assert f"latency: p99 under the threshold, average over it: never burns ({kind})" in names
    _test_in_parallel(tests)


@pytest.mark.slow
def test_shipped_unit_tests_pass_with_every_group_order_reversed(tmp_path: Path) -> None:
    """Each test file fixes the group order, dependencies first (docs/scaling.md). Prometheus does
    not: an alert's group may run before the recording group it reads. Reversed, each group reads
    the other groups' previous evaluation, and every expected alert and value must still hold."""
    tests = sorted((REPO / "alerts" / "tests").glob("*.yaml"))
    (tmp_path / "tests").mkdir()
    for rule_file in (REPO / "alerts").glob("*.yaml"):
        (tmp_path / rule_file.name).write_text(rule_file.read_text())
    reordered = 0
    for t in tests:
        doc = yaml.safe_load(t.read_text())
        order = doc["group_eval_order"]
        doc["group_eval_order"] = order[::-1]
        reordered += len(order) > 1
        (tmp_path / "tests" / t.name).write_text(yaml.safe_dump(doc, sort_keys=False))
    assert reordered >= 3
    _test_in_parallel(sorted((tmp_path / "tests").glob("*.yaml")))


def test_total_outage_pages_within_five_minutes() -> None:
    doc = yaml.safe_load((REPO / "alerts" / "tests" / "triton-slo-rules.test.yaml").read_text())
    for group in (g for g in doc["tests"] if "total outage" in g["name"]):
        checks = group["alert_rule_test"]
        onset = [t for t in checks if t["eval_time"] == "1h"]
        after = [t for t in checks if t["eval_time"] in ("1h10m", "70m")]
        assert onset and all(not t["exp_alerts"] for t in onset), group["name"]
        severities = {a["exp_labels"][c.L_SEVERITY] for t in after for a in t["exp_alerts"]}
        assert c.SEVERITY_PAGE in severities, group["name"]


CUSTOM = """
scrape: {triton_job: inference, exporter_job: sidecar}
slos:
  - name: resnet-availability
    type: availability
    models: [resnet50, resnet101]
    objective: 99.5
    period: 28d
    bad_reasons: [BACKEND, OTHER]
    min_request_rate: 0.5
  - name: llm-latency
    type: latency
    models: {regex: "llm-.*"}
    objective: 95
    threshold: 2s
    latency_sli: time_slice
    min_request_rate: 0
  - name: hist-latency
    type: latency
    models: [resnet50]
    objective: 99.9
    threshold: 100ms
    latency_sli: histogram
"""


@pytest.mark.slow
def test_a_custom_spec_generates_rules_whose_tests_pass(tmp_path: Path) -> None:
    spec = parse_spec(CUSTOM, str(tmp_path / "slos.yaml"))
    for rel, content in render_all(spec, "https://runbooks.example.com/").items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(content)
    result = _run("check", "rules", *sorted(str(p) for p in (tmp_path / "alerts").glob("*.yaml")))
    assert result.returncode == 0, result.stdout + result.stderr
    tests = tmp_path / "alerts" / "tests"
    _test_in_parallel([tests / "triton-slo-rules.test.yaml", tests / "triton-alerts.test.yaml"])


MINIMAL = "slos:\n  - name: a\n    type: availability\n    objective: 99.9\n"


@pytest.mark.slow
def test_a_minimal_spec_generates_tests_that_all_pass(tmp_path: Path) -> None:
    """One availability SLO and nothing else: every default (its `min_request_rate` is 0, which the
    rollout guard takes as its floor) must give rules whose generated tests all pass."""
    spec = parse_spec(MINIMAL, str(tmp_path / "slos.yaml"))
    for rel, content in render_all(spec, "runbooks/").items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(content)
    tests = sorted((tmp_path / "alerts" / "tests").glob("*.yaml"))
    assert any(t.name == "triton-rollout-rules.test.yaml" for t in tests)
    _test_in_parallel(tests)


EDGE_SPEC = """
slos:
  - {name: avail, type: availability, objective: 99}
  - {name: lat, type: latency, objective: 99, threshold: 500ms, latency_sli: histogram}
"""

EDGE_TESTS = """
rule_files: [alerts/triton-slo-rules.yaml]
evaluation_interval: 1m
tests:
  - name: Prometheus 3 writes le="500.0"; CANCELED is not bad; a GPU model's series add up
    interval: 1m
    input_series:
      # 60 requests/min of which 6 failed BACKEND and 30 were CANCELED by clients. As in Triton's
      # core, the GPU instance counts what it executed on its gpu_uuid series and the model's own
      # reporter (no gpu_uuid) what never reached it: the two are disjoint and summed
      - series: 'nv_inference_request_success{job="triton", instance="a", model="m", version="1"}'
        values: '0+0x20'
      - series: 'nv_inference_request_failure{job="triton", instance="a", model="m", version="1", reason="BACKEND"}'
        values: '0+0x20'
      - series: 'nv_inference_request_failure{job="triton", instance="a", model="m", version="1", reason="CANCELED"}'
        values: '0+30x20'
      - series: 'nv_inference_request_success{job="triton", instance="a", model="m", version="1", gpu_uuid="GPU-0"}'
        values: '0+24x20'
      - series: 'nv_inference_request_failure{job="triton", instance="a", model="m", version="1", reason="BACKEND", gpu_uuid="GPU-0"}'
        values: '0+6x20'
      # histogram with Prometheus 3 bucket labels: 60 requests/min, 45 within 500 ms
      - series: 'nv_inference_first_response_histogram_ms_count{job="triton", instance="a", model="m", version="1"}'
        values: '0+60x20'
      - series: 'nv_inference_first_response_histogram_ms_bucket{job="triton", instance="a", model="m", version="1", le="500.0"}'
        values: '0+45x20'
      - series: 'nv_inference_first_response_histogram_ms_bucket{job="triton", instance="a", model="m", version="1", le="5000.0"}'
        values: '0+60x20'
    promql_expr_test:
      - expr: round(slo_model:triton_slo_errors:ratio_rate5m{slo="avail"}, 0.0001)
        eval_time: 10m
        exp_samples: [{labels: '{model="m", slo="avail"}', value: 0.1}]
      - expr: round(slo_model:triton_slo_requests:rate5m{slo="avail"}, 0.0001)
        eval_time: 10m
        exp_samples: [{labels: '{model="m", slo="avail"}', value: 1}]
      - expr: round(slo_model:triton_slo_errors:ratio_rate5m{slo="lat"}, 0.0001)
        eval_time: 10m
        exp_samples: [{labels: '{model="m", slo="lat"}', value: 0.25}]
"""  # noqa: E501


def test_edge_cases_bucket_format_cancelled_requests_and_gpu_duplicates(tmp_path: Path) -> None:
    spec = parse_spec(EDGE_SPEC, "slos.yaml")
    for rel, content in render_all(spec).items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(content)
    (tmp_path / "edge.test.yaml").write_text(EDGE_TESTS)
    result = _run("test", "rules", "edge.test.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


BOTH_KINDS = """
scrape: {latency_metrics: [summary, histogram]}
slos:
  - {name: hist, type: latency, objective: 99, threshold: 500ms, latency_sli: histogram}
  - {name: slices, type: latency, objective: 99, threshold: 250ms, latency_sli: time_slice, quantile: 0.95}
"""


@pytest.mark.slow
def test_slices_judged_on_histogram_quantiles_when_triton_exports_histograms(tmp_path: Path) -> None:
    """With histograms declared, a time-slice SLO judges slices on histogram_quantile: the other
    SLO's 26.01-shaped histogram tracks (no bucket at 250 ms) burn it, as predicted."""
    spec = parse_spec(BOTH_KINDS, str(tmp_path / "slos.yaml"))
    files = render_all(spec)
    for rel, content in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(content)
    doc = yaml.safe_load(files["alerts/tests/triton-slo-rules.test.yaml"])
    judged = [
        a
        for g in doc["tests"]
        for t in g["alert_rule_test"]
        for a in t["exp_alerts"]
        if a["exp_labels"][c.L_SLO] == "slices" and a["exp_labels"][c.LABEL_MODEL].startswith("hist")
    ]
    assert judged  # the histogram branch of the slice rule is exercised
    _test_in_parallel([tmp_path / "alerts" / "tests" / "triton-slo-rules.test.yaml"])


def test_average_only_slices_still_burn_as_predicted(tmp_path: Path) -> None:
    """Triton without summaries or histograms: the slice rule says it is average-based and the
    generated burn scenarios (averages only) pass."""
    spec = parse_spec(
        "scrape: {latency_metrics: []}\n"
        "slos: [{name: lat, type: latency, objective: 99, threshold: 300ms, latency_sli: time_slice}]\n",
        str(tmp_path / "slos.yaml"),
    )
    files = render_all(spec)
    for rel, content in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(content)
    slices = [
        r
        for g in yaml.safe_load(files["alerts/triton-slo-rules.yaml"])["groups"]
        for r in g["rules"]
        if r.get("record") == c.REC_SLO_SLICE_BAD
    ]
    assert [r["labels"][c.L_LATENCY_SOURCE] for r in slices] == [c.LATENCY_SOURCE_AVERAGE]
    names = [g["name"] for g in yaml.safe_load(files["alerts/tests/triton-slo-rules.test.yaml"])["tests"]]
    assert any("total outage" in n and n.endswith(f"({c.LATENCY_SLI_TIME_SLICE})") for n in names)
    assert not any(n.endswith(f"({c.LATENCY_SOURCE_SUMMARY})") for n in names)
    _test_in_parallel([tmp_path / "alerts" / "tests" / "triton-slo-rules.test.yaml"])


def test_promtool_asserts_the_burn_rate_annotation_prometheus_renders(tmp_path: Path) -> None:
    """Every expected burn alert of the shipped tests carries `burn_rate`, the number its description
    shows; promtool compares it with what Prometheus renders, so a wrong value fails the test."""
    checked = 0
    for name in ("triton-slo-rules.test.yaml", "triton-slo-rules-long-windows.test.yaml"):
        doc = yaml.safe_load((REPO / "alerts" / "tests" / name).read_text())
        for group in doc["tests"]:
            for check in group["alert_rule_test"]:
                for alert in check["exp_alerts"]:
                    annotations = alert["exp_annotations"]
                    value = annotations[c.ANNOTATION_BURN_RATE]
                    assert float(value) > 0 and f" is {value}x (threshold" in annotations["description"]
                    checked += 1
    assert checked > 50
    # One firing group, as generated (passes), then with the annotation off by 0.1 (fails).
    doc = yaml.safe_load((REPO / "alerts" / "tests" / "triton-slo-rules.test.yaml").read_text())
    group = next(
        g
        for g in doc["tests"]
        if "total outage" in g["name"] and any(t["exp_alerts"] for t in g["alert_rule_test"])
    )
    (tmp_path / "alerts").mkdir()
    rules = REPO / "alerts" / "triton-slo-rules.yaml"
    (tmp_path / "alerts" / rules.name).write_text(rules.read_text())
    tests = tmp_path / "alerts" / "tests"
    tests.mkdir()
    one = {**doc, "tests": [group]}
    (tests / "good.test.yaml").write_text(yaml.safe_dump(one))
    result = _run("test", "rules", "good.test.yaml", cwd=tests)
    assert result.returncode == 0, result.stdout + result.stderr
    check = next(t for t in group["alert_rule_test"] if t["exp_alerts"])
    rendered = check["exp_alerts"][0]["exp_annotations"][c.ANNOTATION_BURN_RATE]
    check["exp_alerts"][0]["exp_annotations"][c.ANNOTATION_BURN_RATE] = f"{float(rendered) + 0.1:.1f}"
    (tests / "bad.test.yaml").write_text(yaml.safe_dump(one))
    result = _run("test", "rules", "bad.test.yaml", cwd=tests)
    assert result.returncode != 0 and c.ANNOTATION_BURN_RATE in result.stdout + result.stderr
