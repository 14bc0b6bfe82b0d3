"""A real Prometheus (Debian's binary) scraping the real local Triton and an in-process exporter,
with the generated rules loaded: every rule and every dashboard query runs through its HTTP API.

One Prometheus for the session, scrape and evaluation every second, storage in a temp dir.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
import yaml

from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.demo import SLOW_MODEL, TEXT_ECHO, VECTOR_SCALE
from triton_sre.demo.traffic import TrafficDriver
from triton_sre.exporter.derive import Pricing
from triton_sre.exporter.service import Exporter, ExporterServer
from triton_sre.generate import dashboards, rules
from triton_sre.generate.command import default_spec, render_all
from triton_sre.triton.local import LocalTriton, free_port

PROMETHEUS = shutil.which("prometheus")
RATE_INTERVAL = "1m"  # stands in for $__rate_interval: the test's data spans well under a minute
SUBSTITUTIONS = {
    "$__rate_interval": RATE_INTERVAL,
    "$job": c.DEFAULT_TRITON_JOB,
    "$instance": ".*",
    "$slo": ".*",
}
CORE_PANELS = {
    "Requests per second",
    "Error ratio",
    "Batching ratio",
    "Latency split by stage",
    "Seconds per request by stage",
    "Model states",
    "Cost per 1k inferences",
}

pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason="Debian's prometheus is not installed")


class Prom:
    def __init__(self, url: str) -> None:
        self.url = url

    def query(self, expr: str) -> list[dict[str, Any]]:
        response = requests.get(f"{self.url}/api/v1/query", params={"query": expr}, timeout=10)
        body = response.json()
        assert response.status_code == 200 and body["status"] == "success", f"{expr}\n-> {body}"
        result: list[dict[str, Any]] = body["data"]["result"]
        return result

    def wait_for(self, expr: str, timeout: float = 30.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while True:
            result = self.query(expr)
            if result or time.monotonic() > deadline:
                return result
            time.sleep(0.5)


@pytest.fixture(scope="session")
def live(triton: LocalTriton, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Prometheus + exporter + 15 s of mixed traffic (with backend failures) on the shared Triton."""
    work = tmp_path_factory.mktemp("prometheus")
    spec = default_spec()
    for rel, content in render_all(spec).items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(content)
    settings = ExporterSettings(
        triton_url=triton.http_url,
        metrics_url=triton.metrics_url,
        interval=1.0,
        window=300.0,
        pricing=Pricing(currency="USD", node_hour=0.36, cpu_execution_slots=2),
    )
    exporter = ExporterServer(Exporter(settings), "127.0.0.1", 0).start()
    port = free_port()
    triton_target = triton.metrics_url.split("//", 1)[1].split("/", 1)[0]
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "900ms"},
        "rule_files": [str(p) for p in sorted((work / "alerts").glob("*.yaml"))],
        "scrape_configs": [
            {"job_name": spec.triton_job, "static_configs": [{"targets": [triton_target]}]},
            {
                "job_name": spec.exporter_job,
                "static_configs": [{"targets": [exporter.url.split("//", 1)[1]]}],
            },
        ],
    }
    (work / "prometheus.yml").write_text(yaml.safe_dump(config))
    log = (work / "prometheus.log").open("wb")
    proc = subprocess.Popen(
        [
            str(PROMETHEUS),
            f"--config.file={work / 'prometheus.yml'}",
            f"--storage.tsdb.path={work / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--log.level=warn",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    driver = TrafficDriver(
        triton.http_url,
        {VECTOR_SCALE: 4, SLOW_MODEL: 2, TEXT_ECHO: 1},
        error_fraction=0.05,
        max_duration_s=60,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                if requests.get(f"{url}/-/ready", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, (work / "prometheus.log").read_text()
            time.sleep(0.2)
        prom = Prom(url)
        assert prom.wait_for(f'up{{job="{spec.exporter_job}"}} == 1'), "exporter not scraped"
        assert prom.wait_for(f'up{{job="{spec.triton_job}"}} == 1'), "Triton not scraped"
        driver.start()
        time.sleep(15)
        driver.stop()
        time.sleep(3)  # a last scrape, poll and rule evaluation after the traffic stopped
        exporter.exporter.poll_once()
        yield {"prom": prom, "exporter": exporter, "work": work, "spec": spec}
    finally:
        driver.stop()
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        exporter.stop()


def _values(result: list[dict[str, Any]]) -> list[float]:
    return [float(r["value"][1]) for r in result]


def test_every_rule_expression_runs_without_error_or_nan(live: dict[str, Any]) -> None:
    prom: Prom = live["prom"]
    files = rules.rule_files(live["spec"])
    exprs = [rule["expr"] for rule in rules.all_rules(files)]
    assert len(exprs) > 50
    for expr in exprs:
        for value in _values(prom.query(expr)):
            assert not math.isnan(value), expr
    # the rules are loaded and evaluated by Prometheus itself, without errors
    groups = requests.get(f"{prom.url}/api/v1/rules", timeout=10).json()["data"]["groups"]
    loaded = [rule for g in groups for rule in g["rules"]]
    assert len(loaded) == len(exprs)
    assert [r["name"] for r in loaded if r.get("health") == "err"] == []


def test_every_dashboard_query_runs_and_core_panels_have_data(live: dict[str, Any]) -> None:
    prom: Prom = live["prom"]
    with_data: set[str] = set()
    count = 0
    for name, board in dashboards.dashboards(live["spec"]).items():
        model = VECTOR_SCALE if name == "triton-model.json" else f"{VECTOR_SCALE}|{SLOW_MODEL}|{TEXT_ECHO}"
        for panel, target in dashboards.iter_targets(board):
            expr = target["expr"]
            for var, value in {**SUBSTITUTIONS, "$model": model}.items():
                expr = expr.replace(var, value)
            assert "$" not in expr, expr
            count += 1
            result = prom.query(expr)
            if result:
                with_data.add(panel["title"])
    assert count >= 40
    assert with_data >= CORE_PANELS, f"core panels without data: {CORE_PANELS - with_data}"


def test_slo_rules_report_the_traffic(live: dict[str, Any]) -> None:
    prom: Prom = live["prom"]
    errors = prom.query(f'{c.rec_slo_errors("5m")}{{slo="availability", model="{VECTOR_SCALE}"}}')
    assert len(errors) == 1 and 0 < float(errors[0]["value"][1]) < 1  # error_fraction 0.05 (+ batchmates)
    requests_ = prom.query(f'{c.rec_slo_requests("5m")}{{slo="availability", model="{VECTOR_SCALE}"}}')
    assert float(requests_[0]["value"][1]) > 0
    slices = prom.query(f'{c.REC_SLO_SLICE_BAD}{{slo="latency"}}')
    assert {r["metric"]["model"] for r in slices} >= {VECTOR_SCALE, SLOW_MODEL}


def _close(a: float, b: float, rel: float = 0.15, abs_: float = 0.002) -> bool:
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def test_recording_rules_agree_with_the_exporter(live: dict[str, Any]) -> None:
    prom: Prom = live["prom"]
    derivation = live["exporter"].exporter.derivation
    by_model = {m.model: m for m in derivation.models}
    compared = 0
    for model in (VECTOR_SCALE, SLOW_MODEL, TEXT_ECHO):
        derived = by_model[model]
        assert derived.batching_ratio is not None and derived.stage_seconds is not None
        for level in c.REC_LEVELS:
            sel = f'{{model="{model}", version="1"}}'
            ratio = _values(prom.query(f"{c.rec_batching_ratio(level)}{sel}"))
            assert len(ratio) == 1 and _close(ratio[0], derived.batching_ratio), (model, ratio, derived)
            for stage, seconds in derived.stage_seconds.items():
                stage_sel = f'{{model="{model}", version="1", stage="{stage}"}}'
                got = _values(prom.query(f"{c.rec_stage_seconds(level)}{stage_sel}"))
                assert len(got) == 1 and _close(got[0], seconds), (model, level, stage, got, seconds)
                compared += 1
    assert compared == 3 * 2 * len(c.STAGES)
    # batching happens on vector_scale (4 concurrent clients, max_batch_size 16): the rules see it too
    assert by_model[VECTOR_SCALE].batching_ratio > 1.0
