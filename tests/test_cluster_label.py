"""slos.yaml `cluster_label` (issue 24): every aggregation of every generated rule keeps the cluster,
every dashboard query reads one selected cluster, and a burn in one cluster pages for that cluster
only (promtool, two clusters)."""

from __future__ import annotations

import dataclasses
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from binaries import binary
from grafana_vars import fill

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.generate.cluster_silent import silent_clusters
from triton_sre.generate.command import render_all
from triton_sre.generate.dashboards import dashboards, iter_targets
from triton_sre.generate.families import rule_files
from triton_sre.rollout.k8s import analysis_template
from triton_sre.slo import Spec, SpecError, parse_spec

REPO = Path(__file__).resolve().parents[1]
CLUSTER = c.LABEL_CLUSTER

_CLAUSE = re.compile(r"\b(by|on|without|ignoring)\s*\(([^)]*)\)")
_AGGREGATION = re.compile(
    r"\b(sum|min|max|avg|group|stddev|stdvar|count|count_values|bottomk|topk|quantile)\s*\("
)
# Label-dropping functions the rules use on purpose, and why:
# absent(up{job=...}) fires when no target of the job exists at all (no series: no cluster to keep);
# vector(objective) is the SLO's objective, a constant with no cluster.
_ALLOWED_DROPS = re.compile(r"\babsent\(|\bvector\(")


def spec_with_cluster(text: str | None = None) -> Spec:
    spec = parse_spec(text or (REPO / "slos.yaml").read_text())
    return dataclasses.replace(spec, cluster_label=CLUSTER)


def _close(expr: str, open_at: int) -> int:
    """Index of the parenthesis closing the one at `open_at`."""
    depth = 0
    for i in range(open_at, len(expr)):
        depth += {"(": 1, ")": -1}.get(expr[i], 0)
        if depth == 0:
            return i
    raise AssertionError(f"unbalanced parentheses in {expr!r}")


def dropped(expr: str, label: str) -> list[str]:
    """Every clause of `expr` that drops `label`: a `by`/`on` without it, a `without`/`ignoring`
    with it, an aggregation with no clause at all."""
    problems = []
    for m in _CLAUSE.finditer(expr):
        labels = {x.strip() for x in m.group(2).split(",") if x.strip()}
        keeps = label in labels if m.group(1) in ("by", "on") else label not in labels
        if not keeps:
            problems.append(m.group(0))
    for m in _AGGREGATION.finditer(expr):
        end = _close(expr, m.end() - 1)
        if not re.match(r"\s*(by|without)\s*\(", expr[end + 1 :]):
            problems.append(f"{m.group(0)}...) without by/without")
    return problems


def _rule_exprs(spec: Spec) -> Iterator[tuple[str, str, str]]:
    for file, doc in rule_files(spec, "runbooks/").items():
        for group in doc["groups"]:
            for rule in group["rules"]:
                yield file, rule.get("record") or rule["alert"], rule["expr"]


def _selectors(expr: str) -> list[str]:
    return re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*\{[^}]*\}", expr)


def _dashboard_problems(spec: Spec, label: str) -> list[str]:
    """Dashboard queries that do not read one selected cluster."""
    pinned = f"{label}=~`the-cluster`"  # the variable's value, as its regex format writes it
    problems = []
    for name, board in dashboards(spec).items():
        variables = {v["name"]: v for v in board["templating"]["list"]}
        if "cluster" not in variables or variables["cluster"].get("multi"):
            problems.append(f"{name}: no single-valued cluster variable")
        queries = [v["query"] for v in variables.values() if v.get("type") == "query"]
        queries += [t["expr"] for _, t in iter_targets(board)]
        for expr in queries:
            if not isinstance(expr, str) or expr.startswith(f"label_values({c.NV_INFERENCE_COUNT}, "):
                continue  # the cluster variable's own values
            if spec.cluster_label and expr == silent_clusters(spec):
                continue  # the clusters TritonClusterSilent names: every cluster, whichever is selected
            expr = fill(expr, {name: f"the-{name}" for name in variables})  # no `${…}` braces in selectors
            objective = re.escape(c.REC_SLO_OBJECTIVE)
            body = re.sub(rf"max by \({c.L_SLO}\) \({objective}\{{[^}}]*\}}\)", "", expr)
            bare = [
                n for n in re.findall(r"[a-zA-Z_]+:[a-zA-Z0-9_:]+(?![a-zA-Z0-9_:{])", body) if n != objective
            ]
            unpinned = [s for s in _selectors(body) if pinned not in s]
            if unpinned or bare or (c.REC_SLO_OBJECTIVE in body):
                problems.append(f"{name}: {expr[:160]}")
    return problems


def test_default_spec_output_is_unchanged_by_the_setting() -> None:
    spec = parse_spec((REPO / "slos.yaml").read_text())
    assert spec.cluster_label is None
    shipped = {rel: (REPO / rel).read_text() for rel in render_all(spec, c.DEFAULT_RUNBOOK_BASE_URL)}
    assert render_all(spec, c.DEFAULT_RUNBOOK_BASE_URL) == shipped


def test_every_rule_aggregation_keeps_the_cluster() -> None:
    spec = spec_with_cluster()
    exprs = list(_rule_exprs(spec))
    assert len(exprs) > 100
    problems = [
        f"{file} {name}: {p}"
        for file, name, expr in exprs
        for p in dropped(_ALLOWED_DROPS.sub("(", expr), CLUSTER)
    ]
    assert not problems, "\n".join(problems)


def test_the_checker_finds_the_drops_of_single_cluster_output() -> None:
    """The same walk over today's (cluster-less) rules and dashboards flags them: it can fail."""
    spec = parse_spec((REPO / "slos.yaml").read_text())
    rule_drops = [p for _, _, expr in _rule_exprs(spec) for p in dropped(expr, CLUSTER)]
    assert len(rule_drops) > 100
    assert dropped("sum(rate(x[5m]))", CLUSTER) and dropped("a / ignoring (cluster) b", CLUSTER)
    assert not dropped("sum by (model, cluster) (x) / on (model, cluster) y", CLUSTER)
    assert len(_dashboard_problems(spec, CLUSTER)) > 50


def test_every_dashboard_query_reads_the_selected_cluster() -> None:
    problems = _dashboard_problems(spec_with_cluster(), CLUSTER)
    assert not problems, "\n".join(problems)


def test_cluster_label_is_validated() -> None:
    base = "slos:\n  - {name: a, type: availability, objective: 99}\n"
    assert parse_spec(f"cluster_label: region\n{base}").cluster_label == "region"
    for bad in ("model", "9x", "__name__", "[a]", "a-b"):
        try:
            parse_spec(f"cluster_label: {bad}\n{base}")
        except SpecError as exc:
            assert "cluster_label" in str(exc)
        else:
            raise AssertionError(f"cluster_label {bad!r} accepted")


TWO_CLUSTERS = """
cluster_label: cluster
slos:
  - {name: avail, type: availability, objective: 99, min_request_rate: 0.1}
"""


# What fires at 70m in the two-cluster scenario: every burn tier of east's model, nothing of west's
# (tests/test_victoria_rules.py checks VictoriaMetrics against the same list).
EXPECTED_FIRING = [
    {CLUSTER: "east", c.LABEL_MODEL: "m", c.L_SEVERITY: severity, c.L_SLO: "avail", c.L_WINDOW: long}
    for long, _, _, severity in c.BURN_TIERS
]


def _series(metric: str, cluster: str | None, values: str, **extra: str) -> dict[str, str]:
    labels = {c.LABEL_JOB: c.DEFAULT_TRITON_JOB, c.LABEL_INSTANCE: "triton-0:8002", c.LABEL_MODEL: "m"}
    labels |= {c.LABEL_VERSION: "1", **({CLUSTER: cluster} if cluster else {}), **extra}
    return {"series": pq.selector(metric, pq.equal(labels.items())), "values": values}


def _firing(alerts: list[dict[str, str]]) -> list[dict[str, Any]]:
    return [{"labels": pq.selector(c.ALERTS_SERIES, pq.equal(sorted(a.items()))), "value": 1} for a in alerts]


def _promtool(tmp_path: Path, spec_text: str, tests: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    spec = parse_spec(spec_text, str(tmp_path / "slos.yaml"))
    for rel, content in render_all(spec, "runbooks/").items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(content)
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(tests, sort_keys=False))
    return subprocess.run(
        [binary("promtool"), "test", "rules", "t.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )


def promtool_doc(input_series: list[dict[str, str]], expr_tests: list[dict[str, Any]]) -> dict[str, Any]:
    """A promtool test document over the recording and SLO rule files, 1m intervals."""
    return {
        "rule_files": [f"alerts/{f}" for f in ("triton-recording-rules.yaml", "triton-slo-rules.yaml")],
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": input_series, "promql_expr_test": expr_tests}],
    }


def test_two_clusters_one_burns_pages_for_that_cluster_only(tmp_path: Path) -> None:
    """east fails 1 request in 3 of model m, west serves the same model without error: every burn
    tier fires for east, none for west, and each cluster's error ratio is its own (1/3 and 0)."""
    east = [
        _series(c.NV_REQUEST_SUCCESS, "east", "0+40x90"),
        _series(c.NV_REQUEST_FAILURE, "east", "0+20x90", **{c.LABEL_REASON: "BACKEND"}),
    ]
    west = [_series(c.NV_REQUEST_SUCCESS, "west", "0+60x90")]
    alert = {"alertname": c.ALERT_SLO_ERROR_BUDGET_BURN, "alertstate": "firing"}
    expected = [{**alert, **labels} for labels in EXPECTED_FIRING]
    errors = c.rec_slo_errors("1h")
    firing = {"expr": f'{c.ALERTS_SERIES}{{alertstate="firing"}}', "eval_time": "70m"}
    ratios = [
        {"labels": f'{{cluster="{cl}", model="m", slo="avail"}}', "value": v}
        for cl, v in (("east", 0.333), ("west", 0))
    ]
    tests = promtool_doc(
        [*east, *west],
        [
            {**firing, "exp_samples": _firing(expected)},
            {"expr": f"round({errors}, 0.001)", "eval_time": "70m", "exp_samples": ratios},
        ],
    )
    result = _promtool(tmp_path, TWO_CLUSTERS, tests)
    assert result.returncode == 0, result.stdout + result.stderr
    # the contrast: without cluster_label the same series merge into one model (1 error in 6, both
    # clusters' requests), whose alerts name no cluster: west would be paged with east
    spec_text = TWO_CLUSTERS.replace("cluster_label: cluster\n", "")
    without = _promtool(tmp_path / "single", spec_text, tests)
    out = without.stdout + without.stderr
    assert without.returncode != 0
    assert 'got: {model="m", slo="avail"} 1.67E-01' in out, out
    assert f'alertname="{c.ALERT_SLO_ERROR_BUDGET_BURN}", alertstate="firing", model="m"' in out, out


def test_the_argo_template_can_read_one_cluster_of_a_global_store() -> None:
    """Pointed at a global store, the AnalysisTemplate summed the baseline version of every cluster
    (the fleet journey: compute per inference 11.67 against the canary cluster's own 12.04). With
    cluster_label it has an arg `cluster`, default `.*` (every series: a cluster's own Prometheus has
    no cluster label), and every series of both sides is selected by it."""
    doc = analysis_template(spec_with_cluster())
    args = {a["name"]: a.get("value") for a in doc["spec"]["args"]}
    assert args[CLUSTER] == ".*"
    pinned = pq.selector("", [(CLUSTER, "=~", f"{{{{args.{CLUSTER}}}}}")]).strip("{}")
    for metric in doc["spec"]["metrics"]:
        query = metric["provider"]["prometheus"]["query"]
        sides = query.count('version="{{args.')
        assert sides > 0 and query.count(pinned) == sides, (metric["name"], query)
    unset = analysis_template(parse_spec((REPO / "slos.yaml").read_text()))
    assert CLUSTER not in {a["name"] for a in unset["spec"]["args"]}


_MATCHER = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*\"")


def test_every_label_a_rule_groups_matches_or_sets_is_reserved() -> None:
    """A cluster label named like one the rules use means another thing on some series (round eighteen:
    `namespace`, `pod`, `container`, `deployment` were accepted): the reserved set holds them all."""
    spec = spec_with_cluster()
    used: dict[str, str] = {}
    for file, doc in rule_files(spec, "runbooks/").items():
        for group in doc["groups"]:
            for rule in group["rules"]:
                name = rule.get("record") or rule["alert"]
                labels = {x.strip() for m in _CLAUSE.finditer(rule["expr"]) for x in m.group(2).split(",")}
                labels |= set(_MATCHER.findall(rule["expr"])) | set(rule.get("labels") or {})
                used |= {label: f"{file}: {name}" for label in labels if label}
    unreserved = {label: where for label, where in used.items() if label not in c.RESERVED_LABELS}
    assert unreserved == {CLUSTER: unreserved.get(CLUSTER)}, unreserved
    assert used.keys() >= {c.LABEL_NAMESPACE, c.KSM_LABEL_POD, c.LABEL_FIGURE}  # the walk sees them
