"""The capacity dashboard and alerts through a real Prometheus, on the public GPU fixtures.

No GPU here, so Triton's side is served from tests/data/capacity/gpu4_metrics.txt (a public
4-GPU scrape, verbatim) plus the CPU families of the real 2.51 scrape; its energy counters advance
at each GPU's scraped power usage. The exporter is the real ExporterServer, its Triton client
answering from the same fixtures (statistics from gpu4_stats.json, derived from Triton's source
because no public answer with GPU memory exists: see tests/data/capacity/SOURCE.md; execution time grows;
one model seen LOADING for two polls, then READY). Every query of "Triton / Capacity" and every
capacity alert expression must return data, without NaN.
"""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path
from typing import Any

import pytest
import requests
from client_double import PollClient
from grafana_vars import fill
from live_prometheus import Prom, serve_text, start_prometheus, stop_prometheus, wait_ready

from triton_sre import conventions as c
from triton_sre.config import CapacitySettings, ExporterSettings
from triton_sre.exporter.service import Exporter, ExporterServer
from triton_sre.generate import capacity, dashboards
from triton_sre.generate.panels import EXPORTER_JOB_VAR
from triton_sre.generate.rulefile import render_yaml
from triton_sre.pricing import Pricing
from triton_sre.slo import default_spec
from triton_sre.stack.processes import free_port

DATA = Path(__file__).parent / "data"
GPU4 = (DATA / "capacity" / "gpu4_metrics.txt").read_text()
CPU_LINES = "".join(
    line + "\n"
    for line in (DATA / "triton_2.51_metrics_cpu.txt").read_text().splitlines()
    if line.startswith(("nv_cpu", "# HELP nv_cpu", "# TYPE nv_cpu"))
)
POWER = dict(re.findall(r'nv_gpu_power_usage\{gpu_uuid="([^"]+)"\} ([0-9.]+)', GPU4))
ENERGY_LINE = re.compile(r'^(nv_energy_consumption\{gpu_uuid="([^"]+)"\}) ([0-9.]+)$', re.M)
LOADING_MODEL = ("gpt_neo_cola_part0", "0")


class FixtureTriton(PollClient):
    """Triton's metrics text and JSON answers, from the fixtures, moving with the clock."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.index_calls = 0
        self.stats = json.loads((DATA / "capacity" / "gpu4_stats.json").read_text())["model_stats"]

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def metrics_text(self) -> str:
        t = self.elapsed()
        text = ENERGY_LINE.sub(lambda m: f"{m[1]} {float(m[3]) + float(POWER[m[2]]) * t:.6f}", GPU4)
        return text + CPU_LINES

    # the TritonClient interface the exporter uses
    def metrics(self) -> bytes:
        return self.metrics_text().encode()

    def repository_index(self) -> list[dict[str, Any]]:
        self.index_calls += 1
        rows = []
        for entry in self.stats:
            state = c.STATE_READY
            if (entry["name"], entry["version"]) == LOADING_MODEL and self.index_calls <= 2:
                state = c.STATE_LOADING
            rows.append({"name": entry["name"], "version": entry["version"], "state": state, "reason": ""})
        return rows

    def all_stats(self) -> list[dict[str, Any]]:
        ns = int(self.elapsed() * 1e8)  # every model executes 10 % of the time
        return [
            {**e, "batch_stats": [{"batch_size": 1, "compute_infer": {"count": 1, "ns": ns}}]}
            for e in self.stats
        ]

    def model_config(self, model: str, version: str = "") -> dict[str, Any]:
        return {"name": model, "max_batch_size": 0}


@pytest.fixture(scope="module")
def prom(tmp_path_factory: pytest.TempPathFactory):
    work = tmp_path_factory.mktemp("capacity-prometheus")
    spec = default_spec()
    (work / "rules.yaml").write_text(render_yaml(capacity.capacity_groups(spec, "runbooks/"), "slos.yaml"))
    fixture = FixtureTriton()
    triton = serve_text(fixture.metrics_text)
    settings = ExporterSettings(
        interval=0.5,
        window=30.0,
        pricing=Pricing(currency="EUR", kwh=0.30, energy_by_model=True),
        capacity=CapacitySettings(gpu_host=True),
    )
    exporter = ExporterServer(Exporter(settings, client=fixture), "127.0.0.1", 0).start()  # type: ignore[arg-type]
    port = free_port()
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "900ms"},
        "rule_files": [str(work / "rules.yaml")],
        "scrape_configs": [
            {
                "job_name": spec.triton_job,
                "static_configs": [{"targets": [f"127.0.0.1:{triton.server_port}"]}],
            },
            {
                "job_name": spec.exporter_job,
                "static_configs": [{"targets": [exporter.url.split("//", 1)[1]]}],
            },
        ],
    }
    proc, log = start_prometheus(work, config, port)
    try:
        p = wait_ready(proc, work, port)
        assert p.wait_for(f'{c.M_ENERGY_COST_PER_HOUR}{{job="{spec.exporter_job}"}}'), (
            "no energy cost scraped"
        )
        assert p.wait_for(f'{c.M_MODEL_LOAD_SECONDS}{{job="{spec.exporter_job}"}}'), "no load time scraped"
        time.sleep(4)  # enough samples for rate() over the energy counters
        yield {"prom": p, "spec": spec, "exporter": exporter}
    finally:
        stop_prometheus(proc, log)
        exporter.stop()
        triton.shutdown()


def test_every_capacity_dashboard_query_returns_data(prom: dict[str, Any]) -> None:
    board = dashboards.dashboards(prom["spec"])["triton-capacity.json"]
    assert board["uid"] == c.UID_CAPACITY_DASHBOARD and board["title"] == "Triton / Capacity"
    subs = {
        "$__rate_interval": "1m",
        "$job": prom["spec"].triton_job,
        "$instance": ".*",
        f"${EXPORTER_JOB_VAR}": prom["spec"].exporter_job,
    }
    empty = []
    count = 0
    for panel, target in dashboards.iter_targets(board):
        expr = target["expr"]
        expr = fill(expr, subs)
        assert "$" not in expr, expr
        count += 1
        result = prom["prom"].query(expr)
        if not result:
            empty.append(f"{panel['title']}: {expr}")
        for r in result:
            assert not math.isnan(float(r["value"][1])), expr
    assert count >= 15
    assert empty == []


def test_capacity_figures_through_prometheus(prom: dict[str, Any]) -> None:
    p: Prom = prom["prom"]
    ej = prom["spec"].exporter_job
    stacked = p.query(f'sum by (device) ({c.M_MODEL_MEMORY_BYTES}{{job="{ej}",kind="GPU"}})')
    per_gpu = {r["metric"]["device"]: float(r["value"][1]) for r in stacked}
    assert len(per_gpu) == 4 and per_gpu["GPU-7a9c9f44-ff57-1177-e21a-1740a8cf1a65"] == 4.7e9
    # energy: average power = the scraped power usage, so cost/h = W / 1000 x 0.30 EUR
    cost = {
        r["metric"][c.LABEL_GPU_UUID]: float(r["value"][1])
        for r in p.query(f'{c.M_ENERGY_COST_PER_HOUR}{{job="{ej}"}}')
    }
    for uuid, watts in POWER.items():
        assert cost[uuid] == pytest.approx(float(watts) / 1000 * 0.30, rel=0.05)
    # all four GPUs have ~9.5 GB free, more than their largest model: the headroom alert stays silent
    headroom_rule = next(
        r["expr"]
        for g in capacity.capacity_groups(prom["spec"], "x/")["groups"]
        for r in g["rules"]
        if r["alert"] == c.ALERT_GPU_MEMORY_HEADROOM_LOW
    )
    assert p.query(headroom_rule) == []
    assert len(p.query(headroom_rule.replace("<", ">"))) == 4
    # the load seen LOADING then READY was measured; no NaN anywhere
    loads = p.query(f'{c.M_MODEL_LOAD_SECONDS}{{job="{ej}"}}')
    assert [(r["metric"]["model"], r["metric"]["version"]) for r in loads] == [LOADING_MODEL]
    assert p.query(f'{c.M_GPU_METRICS_MISSING}{{job="{ej}"}} == 0')
    groups = requests.get(f"{p.url}/api/v1/rules", timeout=10).json()["data"]["groups"]
    assert [r["name"] for g in groups for r in g["rules"] if r.get("health") == "err"] == []


def test_report_capacity_section_from_prometheus(prom: dict[str, Any], tmp_path: Path) -> None:
    from triton_sre.report.command import build_report
    from triton_sre.report.outputs import write_report

    end = time.time()
    report = build_report(prom["prom"].url, end - 60, end, 1.0, probe_budget_s=120.0)
    cap = report.capacity
    assert cap is not None and len(cap.gpus) == 4 and cap.currency == "EUR"
    gpu0 = next(g for g in cap.gpus if g.gpu_uuid == "GPU-7a9c9f44-ff57-1177-e21a-1740a8cf1a65")
    assert gpu0.headroom_bytes == 16944988160 - 7329546240 and gpu0.largest_model_bytes == 4.0e9
    assert gpu0.models_that_fit == 4  # 9.6e9 free / median(4.0e9, 0.7e9)
    assert gpu0.energy_cost_per_hour == pytest.approx(58.993 / 1000 * 0.30, rel=0.05)
    top = cap.memory.iloc[0]
    assert (top["model"], top["kind"], top["bytes"]) == ("gpt_neo_cola_part3", "GPU", 4.1e9)
    assert list(zip(cap.loads["model"], cap.loads["version"], strict=True)) == [LOADING_MODEL]
    written = write_report(report, tmp_path, ("md", "html"))
    md = (tmp_path / "report.md").read_text()
    html = (tmp_path / "report.html").read_text()
    assert "## Capacity" in md and "### Headroom per GPU" in md and "gpt_neo_cola_part3" in md
    assert "Startup probe: the slowest load took" in md and "the configured 120 s is enough" in md
    assert "<h2>Capacity</h2>" in html and "Load times" in html
    assert len(written) >= 2


def test_bot_headroom_alert_names_the_largest_models_on_the_gpu(prom: dict[str, Any], tmp_path: Path) -> None:
    """A TritonGPUMemoryHeadroomLow notification as Alertmanager would send it for GPU3."""
    from triton_sre.bot.config import BotSettings
    from triton_sre.bot.enrich import Links, enrich
    from triton_sre.bot.outbox import Outbox
    from triton_sre.bot.payload import parse_group
    from triton_sre.bot.slack import Renderer, SlackDelivery
    from triton_sre.bot.worker import Worker

    gpu3 = "GPU-71ce41fd-3ac0-afe7-c995-21119f1e984a"  # gpt_neo_cola_part3 (4.1e9) + distilgpt2 (0.7e9)
    exporter_instance = prom["exporter"].url.split("//", 1)[1]
    labels = {
        "alertname": c.ALERT_GPU_MEMORY_HEADROOM_LOW,
        c.LABEL_GPU_UUID: gpu3,
        c.LABEL_JOB: prom["spec"].exporter_job,
        c.LABEL_INSTANCE: exporter_instance,
        c.L_SEVERITY: c.SEVERITY_PAGE,
    }
    group = parse_group(
        {"alerts": [{"labels": labels, "fingerprint": "h1", "annotations": {}}], "commonLabels": labels}
    )
    settings = BotSettings(channel="#c", prometheus_url=prom["prom"].url)
    worker = Worker(settings, Outbox(tmp_path / "o.sqlite3"), SlackDelivery("xoxb-unused"), {})
    facts = worker.facts(group)
    sizes = [(m.model, m.version, m.bytes) for m in facts.largest_models["h1"]]
    assert sizes == [("gpt_neo_cola_part3", "0", 4.1e9), ("distilgpt2_cola", "0", 0.7e9)]
    shown = json.dumps(Renderer().blocks(enrich(group, facts, Links()).context()))
    assert "Largest models on this GPU" in shown
    assert "`gpt_neo_cola_part3` v0 3.82 GiB" in shown and "`distilgpt2_cola` v0 667.57 MiB" in shown
