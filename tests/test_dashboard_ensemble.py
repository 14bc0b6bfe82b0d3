"""The model dashboard's "Batching ratio" panel is empty for an ensemble and unchanged for its step
(journey26: it read 2.0 for `pipeline`, sent 2 rows a request: Triton counts an ensemble request as
one execution of its rows). The generated query, with Grafana's variables filled in, run by promtool."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml
from binaries import binary
from grafana_vars import fill

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.generate.dashboards import dashboards, iter_targets
from triton_sre.slo import default_spec

PIPELINE, EMBEDDER = "pipeline", "embedder"
EXPORTER_INSTANCE = "triton-0:8003"


def batching_ratio_query(model: str) -> str:
    spec = default_spec()
    board = next(b for b in dashboards(spec).values() if b["uid"] == c.UID_MODEL_DASHBOARD)
    (expr,) = [t["expr"] for panel, t in iter_targets(board) if panel["title"] == "Batching ratio"]
    texts = {"job": spec.triton_job, "instance": ".*", "model": model, "exporter_job": spec.exporter_job}
    return fill(expr, {**texts, "__rate_interval": "5m"})


def series(metric: str, values: str, **labels: str) -> dict[str, str]:
    return {"series": pq.selector(metric, pq.equal(labels.items())), "values": values}


def test_the_batching_ratio_panel_is_empty_for_an_ensemble(tmp_path: Path) -> None:
    spec = default_spec()
    triton = {c.LABEL_JOB: spec.triton_job, c.LABEL_INSTANCE: "triton-0:8002", c.LABEL_VERSION: "1"}
    exporter = {c.LABEL_JOB: spec.exporter_job, c.LABEL_INSTANCE: EXPORTER_INSTANCE}
    inputs = [
        series(family, values, **triton, **{c.LABEL_MODEL: model})
        for model in (PIPELINE, EMBEDDER)
        for family, values in ((c.NV_INFERENCE_COUNT, "0+120x20"), (c.NV_EXEC_COUNT, "0+60x20"))
    ]
    inputs.append(series(c.M_MODEL_ENSEMBLE, "1x20", **exporter, **{c.LABEL_MODEL: PIPELINE}))
    tests = {
        "rule_files": [],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": inputs,
                "promql_expr_test": [
                    {"expr": batching_ratio_query(PIPELINE), "eval_time": "15m", "exp_samples": []},
                    {
                        "expr": batching_ratio_query(EMBEDDER),
                        "eval_time": "15m",
                        "exp_samples": [{"labels": '{version="1"}', "value": 2}],
                    },
                ],
            }
        ],
    }
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(tests, sort_keys=False), encoding="utf-8")
    run = [binary("promtool"), "test", "rules", "t.yaml"]
    result = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
