"""The overview's "Unavailable models and runbooks" table shows a model the index lists with no version
READY (notserved27): journey26's refused config is in the real Triton 2.51's index by name alone, so the
exporter writes no `triton_sre_model_unavailable` for it and the table showed nothing. The generated
query, Grafana's variables filled in, run by promtool on the exporter's own samples of that Triton.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from binaries import binary
from grafana_vars import fill
from refused_scrape import input_series, refused_config_samples

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.generate import slo_rules
from triton_sre.generate.dashboards import dashboards, iter_targets
from triton_sre.generate.slo_rules import SLO_FILE
from triton_sre.slo import default_spec

REFUSED, FINE, FAILED = "reranker", "embedder", "broken"
INSTANCE = "triton-0:8003"
PANEL = "Unavailable models and runbooks"
NOT_SERVED = c.ALERT_RUNBOOKS[c.ALERT_SLO_MODEL_NOT_SERVED]
FAILED_RUNBOOK = c.RUNBOOK_MODEL_FILE_MISSING


def panel_query(uid: str = c.UID_OVERVIEW_DASHBOARD, title: str = PANEL) -> str:
    spec = default_spec()
    board = next(b for b in dashboards(spec).values() if b["uid"] == uid)
    (expr,) = [t["expr"] for panel, t in iter_targets(board) if panel["title"] == title]
    return fill(expr, {"exporter_job": spec.exporter_job, "slo": ".*", "model": ".*"})


def rows(
    tmp_path: Path,
    inputs: list[dict[str, str]],
    expected: list[dict[str, Any]],
    query: str = "",
    rule_files: list[str] | None = None,
) -> str:
    """promtool's complaint when the panel's rows at 5m are not `expected` ("" when they are)."""
    case = {"expr": query or panel_query(), "eval_time": "5m", "exp_samples": expected}
    doc = {"rule_files": rule_files or [], "evaluation_interval": "1m", "tests": [
        {"interval": "1m", "input_series": inputs, "promql_expr_test": [case]}
    ]}  # fmt: skip
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    run = [binary("promtool"), "test", "rules", "t.yaml"]
    done = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    return "" if done.returncode == 0 else done.stdout + done.stderr


def row(model: str, version: str, state: str, runbook: str) -> dict[str, Any]:
    """One table row as promtool writes it: an empty label (the refused model's version) is no label."""
    labels = ((c.L_RUNBOOK, runbook), (c.L_STATE, state), (c.LABEL_MODEL, model), (c.LABEL_VERSION, version))
    return {"labels": pq.selector("", pq.equal((k, v) for k, v in labels if v)), "value": 1}


@pytest.mark.triton
def test_a_config_the_real_triton_refused_is_a_row_with_the_not_served_runbook(
    fresh_triton_factory: Any, tmp_path: Path
) -> None:
    families = (c.M_MODEL_STATE, c.M_MODEL_UNAVAILABLE)
    samples = refused_config_samples(fresh_triton_factory, tmp_path, REFUSED, FINE, families)
    assert not [s for s in samples if s.name == c.M_MODEL_UNAVAILABLE]  # the index gave no reason to diagnose
    inputs = input_series(samples, 10, job=default_spec().exporter_job, instance=INSTANCE)
    assert rows(tmp_path, inputs, [row(REFUSED, "", c.STATE_UNKNOWN, NOT_SERVED)]) == ""


def test_a_diagnosed_failure_keeps_its_runbook_and_is_listed_once(tmp_path: Path) -> None:
    """A failed version is on both series (UNAVAILABLE state, diagnosed runbook): one row, its runbook."""
    exporter = {c.LABEL_JOB: default_spec().exporter_job, c.LABEL_INSTANCE: INSTANCE}
    failed = {**exporter, c.LABEL_MODEL: FAILED, c.LABEL_VERSION: "1"}
    inputs = [
        {"series": pq.selector(c.M_MODEL_STATE, pq.equal({**failed, c.L_STATE: state}.items())), "values": v}
        for state, v in ((c.STATE_UNAVAILABLE, "1x10"), (c.STATE_READY, "0x10"))
    ]
    unavailable = pq.equal({**failed, c.L_RUNBOOK: FAILED_RUNBOOK}.items())
    inputs.append({"series": pq.selector(c.M_MODEL_UNAVAILABLE, unavailable), "values": "1x10"})
    assert rows(tmp_path, inputs, [row(FAILED, "1", c.STATE_UNAVAILABLE, FAILED_RUNBOOK)]) == ""


@pytest.mark.triton
def test_the_slo_dashboard_gives_a_model_not_served_no_budget_and_lists_it(
    fresh_triton_factory: Any, tmp_path: Path
) -> None:
    """The refused model's budget reads 100 % (its counters said nothing bad before it stopped being
    served, or nothing at all): no data is not a met objective (Sloth, Pyrra), so the budget panels
    leave it out while the index shows it not served and "Models not served" lists it."""
    spec = default_spec()
    samples = refused_config_samples(fresh_triton_factory, tmp_path, REFUSED, FINE, (c.M_MODEL_STATE,))
    inputs = input_series(samples, 10, job=spec.exporter_job, instance=INSTANCE)
    slo_name = spec.slos[0].name
    for model, value in ((REFUSED, "1x10"), (FINE, "0.5x10")):
        labels = pq.equal(((c.L_SLO, slo_name), (c.LABEL_MODEL, model)))
        inputs.append({"series": pq.selector(c.REC_SLO_BUDGET_REMAINING, labels), "values": value})
    budget = pq.selector("", pq.equal(((c.L_SLO, slo_name), (c.LABEL_MODEL, FINE))))
    for title in ("Error budget remaining", "Budget remaining over time"):
        query = panel_query(c.UID_SLO_DASHBOARD, title)
        assert (
            rows(tmp_path, inputs, [{"labels": c.REC_SLO_BUDGET_REMAINING + budget, "value": 0.5}], query)
            == ""
        )
    # "Models not served" reads each SLO's record of them (the default spec's SLOs all cover every model)
    (tmp_path / SLO_FILE).write_text(yaml.safe_dump(slo_rules.rule_file(spec, "runbooks/")), encoding="utf-8")
    listed = [
        {
            "labels": pq.selector(
                c.REC_SLO_NOT_READY,
                pq.equal(((c.LABEL_MODEL, REFUSED), (c.L_SLO, slo.name), (c.L_STATE, c.STATE_UNKNOWN))),
            ),
            "value": 1,
        }
        for slo in spec.slos
    ]
    query = panel_query(c.UID_SLO_DASHBOARD, "Models not served")
    assert rows(tmp_path, inputs, listed, query, [SLO_FILE]) == ""
