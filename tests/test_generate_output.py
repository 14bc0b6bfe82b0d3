"""`triton-sre generate`: deterministic files, --check, alert and dashboard conventions, runbooks."""

from __future__ import annotations

import argparse
import ast
import gc
import re
from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.diagnosis.catalog import load_catalog
from triton_sre.generate import dash_model, dash_overview, dashboards
from triton_sre.generate.command import render_all, run_generate
from triton_sre.generate.families import rule_files
from triton_sre.generate.panels import DS, EXPORTER_JOB_VAR
from triton_sre.generate.rulefile import all_rules
from triton_sre.slo import default_spec, parse_spec
from triton_sre.stack.render import deploy_files

REPO = Path(__file__).resolve().parents[1]


def test_output_is_byte_identical_across_runs(tmp_path: Path) -> None:
    for out in ("a", "b"):
        assert main(["generate", "--spec", str(REPO / "slos.yaml"), "--out", str(tmp_path / out)]) == 0
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    # every file the generators render (alerts, tests, dashboards, deploy/), nothing else
    spec = default_spec()
    assert files_a == files_b and len(files_a) == len(render_all(spec)) + len(deploy_files(spec))
    for rel in files_a:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()


def test_check_names_stale_and_missing_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = str(REPO / "slos.yaml")
    assert main(["generate", "--spec", spec, "--out", str(tmp_path)]) == 0
    (tmp_path / "dashboards" / "triton-slo.json").write_text("{}")
    (tmp_path / "alerts" / "triton-alerts.yaml").unlink()
    capsys.readouterr()
    assert main(["generate", "--spec", spec, "--out", str(tmp_path), "--check"]) == 1
    err = capsys.readouterr().err
    assert "triton-slo.json" in err and "triton-alerts.yaml" in err and "triton-model.json" not in err
    assert (
        main(["generate", "--spec", spec, "--out", str(tmp_path), "--runbook-base-url", "https://x/rb"]) == 0
    )
    assert "https://x/rb/triton-server-down.md" in (tmp_path / "alerts" / "triton-alerts.yaml").read_text()


@pytest.mark.parametrize(
    ("command", "value", "reason"),
    [
        # generate ended in `internal error: ValueError: cannot render template`
        (["generate", "--spec", str(REPO / "slos.yaml")], "{{ x }}", "must not contain '{{' or '}}'"),
        (["generate", "--spec", str(REPO / "slos.yaml")], "https://x/}}/", "must not contain '{{' or '}}'"),
        (["generate", "--spec", str(REPO / "slos.yaml")], "", "must not be empty"),
        (["stack", "up"], "{{ $labels.job }}/", "must not contain '{{' or '}}'"),
    ],
)
def test_a_runbook_base_with_template_braces_is_refused_at_parsing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str], value: str, reason: str
) -> None:
    """Prometheus expands annotations as Go templates: braces in the prefix break every runbook_url."""
    with pytest.raises(SystemExit) as exited:
        main(
            [
                *command,
                "--out" if command[0] == "generate" else "--workdir",
                str(tmp_path / "o"),
                f"--runbook-base-url={value}",
            ]
        )
    assert exited.value.code == c.EXIT_USAGE
    err = capsys.readouterr().err
    assert f"argument --runbook-base-url: {reason}" in err and "internal error" not in err
    assert not (tmp_path / "o").exists()


def _alerts(base: str = c.DEFAULT_RUNBOOK_BASE_URL) -> list[dict]:
    return [r for r in all_rules(rule_files(default_spec(), base)) if "alert" in r]


def test_every_alert_has_severity_annotations_and_a_runbook() -> None:
    alerts = _alerts()
    latency_slos = {s.name for s in default_spec().slos if s.type == c.SLO_LATENCY}
    names = {a["alert"] for a in alerts}
    # the default spec's SLOs cover `all` models: the first gets the index's TritonSLOModelNotServed (its
    # own tests: tests/test_slo_model_not_served.py); TritonClusterSilent needs a cluster_label (its own
    # tests: tests/test_cluster_silent.py)
    assert names == set(c.ALERT_RUNBOOKS) - {c.ALERT_CLUSTER_SILENT} | {c.ALERT_MODEL_UNAVAILABLE}
    for alert in alerts:
        assert alert["alert"].startswith("Triton") and re.fullmatch(r"[A-Z][A-Za-z0-9]+", alert["alert"])
        assert alert["labels"][c.L_SEVERITY] in (c.SEVERITY_PAGE, c.SEVERITY_TICKET)
        latency = (
            alert["alert"] == c.ALERT_SLO_LATENCY_BUDGET_BURN and alert["labels"][c.L_SLO] in latency_slos
        )
        extra = {c.ANNOTATION_SLO_QUANTILE, c.ANNOTATION_THRESHOLD_SECONDS} if latency else set()
        if alert["alert"] in (c.ALERT_SLO_ERROR_BUDGET_BURN, c.ALERT_SLO_LATENCY_BUDGET_BURN):
            extra |= {c.ANNOTATION_BURN_RATE}  # the burn rate as a number, for the bot
        if alert["alert"] in c.LLM_ALERT_RUNBOOKS:
            extra |= {c.ANNOTATION_KV_CACHE_SATURATED_RATIO}  # the threshold the bot's verdict uses
        assert set(alert["annotations"]) == {"summary", "description", "runbook_url"} | extra
        assert all(alert["annotations"].values())
    burn = [
        a for a in alerts if a["alert"] in (c.ALERT_SLO_ERROR_BUDGET_BURN, c.ALERT_SLO_LATENCY_BUDGET_BURN)
    ]
    assert len(burn) == 4 * len(default_spec().slos)  # four tiers per SLO
    for alert in burn:
        assert set(alert["labels"]) == {c.L_SEVERITY, c.L_SLO, c.L_WINDOW}  # model comes from the series
        assert "$value" in alert["annotations"]["description"]
        assert alert["annotations"][c.ANNOTATION_BURN_RATE] == '{{ $value | printf "%.1f" }}'


def test_every_runbook_url_resolves_to_a_page_in_the_catalog() -> None:
    catalog = load_catalog(REPO / "runbooks")
    for alert in _alerts():
        url = alert["annotations"]["runbook_url"]
        assert url.startswith(c.DEFAULT_RUNBOOK_BASE_URL)
        page = url[len(c.DEFAULT_RUNBOOK_BASE_URL) :]
        if alert["alert"] == c.ALERT_MODEL_UNAVAILABLE:
            assert page == "{{ $labels.runbook }}.md"
            ids = set(c.LOAD_FAILURE_RUNBOOKS)  # the values the exporter puts in `runbook`
        else:
            ids = {page.removesuffix(".md")}
            assert c.ALERT_RUNBOOKS[alert["alert"]] in ids
        for runbook_id in ids:
            assert (REPO / "runbooks" / f"{runbook_id}.md").is_file(), runbook_id
            assert runbook_id in catalog
    for alert_name, runbook_id in c.ALERT_RUNBOOKS.items():
        severity = catalog[runbook_id].severity
        pages = any(
            a["labels"][c.L_SEVERITY] == c.SEVERITY_PAGE for a in _alerts() if a["alert"] == alert_name
        )
        # none from the default spec (it names no model); it pages (tests/test_slo_model_not_served.py)
        pages |= alert_name == c.ALERT_SLO_MODEL_NOT_SERVED
        pages |= alert_name == c.ALERT_CLUSTER_SILENT  # only with a cluster_label: it pages
        assert severity == (c.IMPACT_CRITICAL if pages else c.IMPACT_WARNING), alert_name


def test_runbook_base_url_is_configurable() -> None:
    for alert in _alerts("https://runbooks.example.com/triton"):
        assert alert["annotations"]["runbook_url"].startswith("https://runbooks.example.com/triton/")


def test_dashboards_have_stable_uids_variables_units_and_descriptions() -> None:
    boards = dashboards.dashboards(default_spec())
    assert {b["uid"] for b in boards.values()} == {
        c.UID_OVERVIEW_DASHBOARD,
        c.UID_MODEL_DASHBOARD,
        c.UID_SLO_DASHBOARD,
        c.UID_LLM_DASHBOARD,
        c.UID_CAPACITY_DASHBOARD,
    }
    for name, board in boards.items():
        variables = {v["name"] for v in board["templating"]["list"]}
        expected = (
            {"datasource", "slo", EXPORTER_JOB_VAR, "model"}  # exporter_job: its Models not served
            if name == "triton-slo.json"
            else {"datasource", "job", "instance", EXPORTER_JOB_VAR}  # per GPU and host, not per model
            if name == "triton-capacity.json"
            else {"datasource", "job", "instance", EXPORTER_JOB_VAR, "model"}
        )
        assert variables == expected, name
        panels = [p for p in board["panels"] if p["type"] != "row"]
        ids = [p["id"] for p in board["panels"]]
        assert len(ids) == len(set(ids))
        for panel in panels:
            assert panel["description"], panel["title"]
            assert panel["fieldConfig"]["defaults"].get("unit"), panel["title"]
            assert panel["targets"], panel["title"]
            for target in panel["targets"]:
                assert target["datasource"] == DS
                if "rate(" in target["expr"] and name != "triton-slo.json":
                    # every rate over $__rate_interval (a summary quantile's gate has no window since
                    # fleet26: promql.summary_current)
                    windows = re.findall(r"rate\((\w+)(?:\{.*?\})?\[([^\]]+)\]\)", target["expr"])
                    assert windows, target["expr"]
                    assert {window for _, window in windows} == {"$__rate_interval"}, target["expr"]


def test_dashboard_queries_do_not_use_metrics_triton_removed() -> None:
    """NVIDIA's published dashboards still query nv_inference_load_ratio and friends (gone since 2020)."""
    text = "".join(dashboards.render_json(b) for b in dashboards.dashboards(default_spec()).values())
    for removed in (
        "nv_inference_load_ratio",
        "nv_inference_request_duration_ms",
        "nv_gpu_power_limit_watts",
    ):
        assert removed not in text
    assert "1+rate" not in text.replace(" ", "")


def test_grafanalib_is_imported_only_by_the_panel_module() -> None:
    importers = []
    for path in (REPO / "triton_sre").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(n.split(".")[0] == "grafanalib" for n in names):
                importers.append(path.relative_to(REPO).as_posix())
    assert sorted(set(importers)) == ["triton_sre/generate/panels.py"]


def test_render_all_lists_every_generated_file() -> None:
    files = render_all(default_spec())
    assert set(files) == {
        p.relative_to(REPO).as_posix()
        for d in ("alerts", "dashboards")
        for p in (REPO / d).rglob("*")
        if p.is_file()
    }


def test_tail_latency_panels_draw_p50_p95_p99_the_average_and_the_threshold() -> None:
    spec = default_spec()
    for board in (dash_overview.overview(spec, ""), dash_model.model(spec)):
        tail = {p["title"]: p for p in board["panels"] if "p50 / p95 / p99" in p.get("title", "")}
        assert set(tail) == {"Request latency p50 / p95 / p99", "Queue time p50 / p95 / p99"}
        for panel in tail.values():
            legends = [t["legendFormat"] for t in panel["targets"]]
            assert [leg.rsplit(" ", 1)[-1] for leg in legends[:4]] == ["p50", "p95", "p99", "average"]
            assert legends[4:] == [f"SLO {s.name} threshold" for s in spec.slos if s.type == c.SLO_LATENCY]
            assert 'quantile="0.99"' in panel["targets"][2]["expr"]
            assert panel["fieldConfig"]["defaults"]["unit"] == "s"
        request = tail["Request latency p50 / p95 / p99"]["targets"]
        assert "histogram_quantile(0.99, " in request[2]["expr"]  # the histogram first, when there is one
        assert c.NV_REQUEST_SUMMARY_US in request[2]["expr"]
        assert not any(p["type"] == "heatmap" for p in board["panels"])  # 2.51: no histogram
    histograms = parse_spec(
        "scrape: {latency_metrics: [summary, histogram]}\n"
        "slos: [{name: lat, type: latency, objective: 99, threshold: 500ms}]\n"
    )
    for board in (dash_overview.overview(histograms, ""), dash_model.model(histograms)):
        heatmaps = [p for p in board["panels"] if p["type"] == "heatmap"]
        assert len(heatmaps) == 1
        (target,) = heatmaps[0]["targets"]
        assert target["format"] == "heatmap" and "[$__rate_interval]" in target["expr"]
        assert f"{c.NV_FIRST_RESPONSE_HISTOGRAM_MS}_bucket" in target["expr"]


def test_generate_runs_no_full_garbage_collection_and_restores_the_thresholds(tmp_path: Path) -> None:
    """Full collections walked every held document again and came more often the longer the run:
    at 10,000 SLOs 24 of them took 14 s (bench/RESULTS.md, nineteenth session). Thresholds of
    (20, 1, 1) make them come every few dozen allocations; generate must still run none, while the young
    generations are collected as before."""
    collections = [0, 0, 0]

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections[info["generation"]] += 1

    spec = tmp_path / "slos.yaml"  # 300 SLOs: what generate holds outgrows a quarter of the heap
    slo = "{{name: a{i}, type: availability, models: [m{i}], objective: 99.9, period: 30d}}"
    spec.write_text("slos:\n" + "".join(f"  - {slo.format(i=i)}\n" for i in range(300)), encoding="utf-8")
    assert main(["generate", "--spec", str(REPO / "slos.yaml"), "--out", str(tmp_path / "a")]) == 0  # imports
    args = argparse.Namespace(
        spec=spec, out=tmp_path / "b", runbook_base_url=c.DEFAULT_RUNBOOK_BASE_URL, check=False
    )
    before = gc.get_threshold()
    gc.collect()  # nothing pending from the warm-up when the count starts
    gc.set_threshold(20, 1, 1)
    gc.callbacks.append(count)
    try:
        code = run_generate(args)
    finally:  # the full collection put off comes right after: stop counting first
        gc.callbacks.remove(count)
        after = gc.get_threshold()
        gc.set_threshold(*before)
    assert code == c.EXIT_OK and after == (20, 1, 1)
    assert collections[2] == 0 and collections[0] > 50, collections
