"""`triton-sre report` on a real Triton 2.51 that refuses one model's config (journey26's reranker: in the
repository index by its name alone), scraped with the exporter by a real Prometheus while both models get
requests. Triton counts no request of the refused model (it is not loaded), so before notserved27 the
report had no word of it: no row, nothing in the SLO section of an SLO naming it.
"""

from __future__ import annotations

import contextlib
import io
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
import requests
import yaml
from corpus import refused_config_repository
from grafana_vars import fill
from live_prometheus import private_prometheus, scraped_after

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.generate import slo_rules
from triton_sre.generate.dashboards import dashboards, iter_targets
from triton_sre.generate.slo_rules import SLO_FILE
from triton_sre.report.slo_text import NOT_SERVED
from triton_sre.report.unserved import CAUSE
from triton_sre.slo import Spec, default_spec, parse_spec
from triton_sre.stack.local_triton import LocalTriton

pytestmark = [pytest.mark.triton, pytest.mark.server]  # a private Triton started without the fixtures

REFUSED, FINE = "reranker", "embedder"
SLO_NAME = "rank-avail"
TRAFFIC_S = 8.0


@dataclass
class Run:
    out: Path
    markdown: str
    html: str
    # the SLO dashboard's "Models not served" rows (model, slo) per value of its $slo, read from the
    # private Prometheus evaluating the spec's SLO rules
    not_served: dict[str, set[tuple[str, str]]]


FINE_ONLY = "embed-avail"  # an SLO of the served model alone: the dashboard's not-served table is empty


def _spec(triton_job: str, exporter_job: str) -> str:
    return f"""
scrape: {{triton_job: {triton_job}, exporter_job: {exporter_job}}}
slos:
  - {{name: {SLO_NAME}, type: {c.SLO_AVAILABILITY}, models: [{FINE}, {REFUSED}], objective: 99.9}}
  - {{name: {FINE_ONLY}, type: {c.SLO_AVAILABILITY}, models: {{regex: "{FINE}.*"}}, objective: 99.9}}
"""


def _send(url: str, model: str, stop: threading.Event, answers: dict[str, int]) -> None:
    body = {"inputs": [{"name": "INPUT", "shape": [1, 4], "datatype": "FP32", "data": [1.0] * 4}]}
    while not stop.is_set():
        status = requests.post(f"{url}/v2/models/{model}/infer", json=body, timeout=10).status_code
        answers[f"{model} {status}"] = answers.get(f"{model} {status}", 0) + 1
        stop.wait(0.05)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    work = tmp_path_factory.mktemp("report-not-served")
    spec = default_spec()
    triton = LocalTriton(refused_config_repository(work / "models", REFUSED, FINE), workdir=work / "triton")
    triton.start()
    stop = threading.Event()
    answers: dict[str, int] = {}
    senders = [
        threading.Thread(target=_send, args=(triton.http_url, m, stop, answers), daemon=True)
        for m in (FINE, REFUSED)
    ]
    stack = contextlib.ExitStack()  # Prometheus and the exporter, stopped before Triton
    slo_spec = parse_spec(_spec(spec.triton_job, spec.exporter_job))
    rules = work / SLO_FILE
    rules.write_text(yaml.safe_dump(slo_rules.rule_file(slo_spec, "runbooks/")), encoding="utf-8")
    not_served: dict[str, set[tuple[str, str]]] = {}
    try:
        prom, _ = stack.enter_context(private_prometheus(work, spec, triton, rule_files=[rules]))
        scraped_after(prom, spec.triton_job, time.time())
        scraped_after(prom, spec.exporter_job, time.time())
        start = time.time()
        for s in senders:
            s.start()
        stop.wait(TRAFFIC_S)
        stop.set()
        for s in senders:
            s.join(timeout=30)
        scraped_after(prom, spec.triton_job, time.time())
        scraped_after(prom, spec.exporter_job, time.time())
        time.sleep(2.5)
        end = time.time()
        for slo in (SLO_NAME, FINE_ONLY, ".*"):
            expr = fill(_panel(slo_spec), {"slo": slo, "model": ".*", "exporter_job": spec.exporter_job})
            found = prom.query(expr)
            not_served[slo] = {(r["metric"][c.LABEL_MODEL], r["metric"][c.L_SLO]) for r in found}
        (work / "slos.yaml").write_text(_spec(spec.triton_job, spec.exporter_job), encoding="utf-8")
        out = work / "report"
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout):
            code = main(
                [
                    "report", "--prometheus-url", prom.url, "--start", f"{start:.3f}", "--end", f"{end:.3f}",
                    "--out", str(out), "--slo-file", str(work / "slos.yaml"),
                ]
            )  # fmt: skip
        assert code == c.EXIT_OK, stdout.getvalue()
    finally:
        stop.set()
        for s in senders:
            s.join(timeout=30)
        stack.close()
        triton.stop()
    print("\nanswers:", answers)
    assert answers.get(f"{FINE} 200", 0) > 10 and answers.get(f"{REFUSED} 404", 0) > 10, answers
    markdown, html = (out / "report.md").read_text(encoding="utf-8"), (out / "report.html").read_text("utf-8")
    yield Run(out, markdown, html, not_served)


def _panel(spec: Spec) -> str:
    """The SLO dashboard's "Models not served" query, as generated for `spec`."""
    board = next(b for b in dashboards(spec).values() if b["uid"] == c.UID_SLO_DASHBOARD)
    (expr,) = [t["expr"] for panel, t in iter_targets(board) if panel["title"] == "Models not served"]
    return expr


def test_the_slo_dashboards_not_served_table_follows_its_slo_selection(run: Run) -> None:
    """notserved28: the table filtered on $model (models with recorded requests: never the refused one)
    and listed every model of the index whatever SLO was chosen. Now the SLO's own record: the SLO
    naming the refused model lists it, the one of the served model alone lists nothing."""
    assert run.not_served == {
        SLO_NAME: {(REFUSED, SLO_NAME)},
        FINE_ONLY: set(),
        ".*": {(REFUSED, SLO_NAME)},
    }


def test_the_refused_model_has_a_row_with_its_state_and_cause(run: Run) -> None:
    table = pd.read_csv(run.out / "unserved_models.csv", dtype=str, keep_default_na=False)
    runbook = c.ALERT_RUNBOOKS[c.ALERT_SLO_MODEL_NOT_SERVED]
    assert table.to_dict("records") == [
        {c.LABEL_MODEL: REFUSED, c.LABEL_VERSION: "", c.L_STATE: c.STATE_UNKNOWN, CAUSE: runbook}
    ]
    models = pd.read_csv(run.out / "models.csv", dtype={"version": str})
    assert REFUSED not in set(models["model"]) and FINE in set(models["model"])  # it served nothing
    for text in (run.markdown, run.html):
        assert "Models not served" in text and f"{REFUSED}" in text and runbook in text
    assert f"| {REFUSED} | – | {c.STATE_UNKNOWN} | {runbook} |" in run.markdown


def test_the_slo_naming_the_refused_model_says_no_data_not_a_met_objective(run: Run) -> None:
    """Sloth and Pyrra show no data for an SLI without events, never 100 %: the SLO section gives the
    refused model a row of 0 events saying it was not served, beside the served model's figures."""
    section = run.markdown.split("## SLOs", 1)[1].split("\n## ", 1)[0]
    not_served = NOT_SERVED.format(state=c.STATE_UNKNOWN)
    assert f"| {REFUSED} | – | 0 | – | {not_served} | – | – | – |" in section
    assert f"| {FINE} | 1 | " in section and "never 100 %" in section
    assert not_served in run.html.split("<h2>SLOs</h2>", 1)[1]
