"""TritonClusterSilent (journey28): on a global store, a cluster whose Prometheus died kept its last
samples for the 5m lookback, then its SLO series vanished and its firing pages resolved as if the
cluster were healthy. With `cluster_label` the SLO rule file has a group that names such a cluster
(seen within the spec's longest SLO period, no SLO recording for 2m); promtool, two clusters, east's
series stop. The SLO and overview dashboards list it with the alert's own expression."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml
from binaries import binary
from test_cluster_label import CLUSTER, TWO_CLUSTERS, _promtool, _series, promtool_doc

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.slo import parse_spec


def _firing_at(minute: int, expected: list[dict[str, str]]) -> dict[str, object]:
    alert = {"alertname": c.ALERT_CLUSTER_SILENT, "alertstate": "firing"}
    samples = [
        {"labels": pq.selector(c.ALERTS_SERIES, pq.equal(sorted({**alert, **labels}.items()))), "value": 1}
        for labels in expected
    ]
    selector = pq.selector(c.ALERTS_SERIES, pq.equal(alert.items()))
    return {"expr": selector, "eval_time": f"{minute}m", "exp_samples": samples}


def test_a_cluster_whose_recordings_stop_is_named_past_an_hour(tmp_path: Path) -> None:
    """An outage longer than an hour must not resolve by itself (it did at 1h30m: "seen" looked back an
    hour): east is still named 70 minutes after its last recording."""
    east = [_series(c.NV_REQUEST_SUCCESS, "east", "0+40x30 _x90")]  # east's Prometheus dies at 30m
    west = [_series(c.NV_REQUEST_SUCCESS, "west", "0+60x120")]
    page = {CLUSTER: "east", c.L_SEVERITY: c.SEVERITY_PAGE}
    tests = promtool_doc(
        [*east, *west],
        [
            _firing_at(30, []),  # both clusters report
            _firing_at(34, []),  # east's last samples still answer (5m lookback)
            _firing_at(40, [page]),
            _firing_at(90, [page]),
            _firing_at(110, [page]),
        ],
    )
    result = _promtool(tmp_path, TWO_CLUSTERS, tests)
    assert result.returncode == 0, result.stdout + result.stderr


SHORT_PERIOD = TWO_CLUSTERS.replace("min_request_rate: 0.1}", "min_request_rate: 0.1, period: 3d}")


def test_a_silent_cluster_is_named_for_the_longest_slo_period_then_forgotten(tmp_path: Path) -> None:
    """The window is the spec's longest SLO period (3d here, its shortest allowed): east, dead at 30m,
    still pages at 3d (a dead cluster keeps paging); a cluster removed on purpose drops out once no SLO
    period holds its data (3d after its last recording). The group alone, fed the recorded SLO parts
    (what a global ruler receives): three days of the whole SLO file at 1m would take minutes."""
    from triton_sre.generate.cluster_silent import cluster_group, seen_window

    spec = parse_spec(SHORT_PERIOD)
    assert seen_window(spec) == "3d"
    longer = SHORT_PERIOD + "  - {name: b, type: availability, objective: 99}\n"  # the default period
    assert seen_window(parse_spec(longer)) == c.DEFAULT_SLO_PERIOD
    (tmp_path / "clusters.yaml").write_text(yaml.safe_dump({"groups": [cluster_group(spec, "runbooks/")]}))
    part = c.rec_slo_part(c.SLO_PART_SUCCESS)
    labels = {c.L_SLO: "avail", c.LABEL_MODEL: "m"}
    steps = 3 * 24 * 60 + 60
    inputs = [
        {"series": pq.selector(part, pq.equal(sorted({**labels, CLUSTER: name}.items()))), "values": values}
        for name, values in (("east", f"1x30 _x{steps - 30}"), ("west", f"1x{steps}"))
    ]
    page = {CLUSTER: "east", c.L_SEVERITY: c.SEVERITY_PAGE}
    cases = [_firing_at(20, []), _firing_at(40, [page]), _firing_at(3 * 24 * 60, [page])]
    cases.append(_firing_at(3 * 24 * 60 + 40, []))
    doc = {"rule_files": ["clusters.yaml"], "evaluation_interval": "1m", "tests": [
        {"interval": "1m", "input_series": inputs, "promql_expr_test": cases}
    ]}  # fmt: skip
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    run = [binary("promtool"), "test", "rules", "t.yaml"]
    result = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def _silent_panels(spec_text: str) -> list[str]:
    from triton_sre.generate.dash_slo import SILENT_CLUSTERS
    from triton_sre.generate.dashboards import dashboards, iter_targets

    boards = dashboards(parse_spec(spec_text)).values()
    return [t["expr"] for b in boards for panel, t in iter_targets(b) if panel["title"] == SILENT_CLUSTERS]


def test_the_slo_and_overview_dashboards_list_the_silent_cluster_not_the_live_one(tmp_path: Path) -> None:
    """The "Silent clusters" table (SLO dashboard and overview) runs the alert's expression: on
    Prometheus' engine (promtool) over the generated rules it lists east once east's recordings stop,
    never west; a spec without cluster_label has no such panel."""
    from triton_sre.generate.cluster_silent import cluster_group

    group = cluster_group(parse_spec(TWO_CLUSTERS), "runbooks/")
    assert group is not None
    (query, again) = _silent_panels(TWO_CLUSTERS)
    assert query == again == group["rules"][-1]["expr"]
    assert _silent_panels(TWO_CLUSTERS.replace(f"{c.LABEL_CLUSTER}_label: {CLUSTER}\n", "")) == []
    east = [_series(c.NV_REQUEST_SUCCESS, "east", "0+40x30 _x90")]
    west = [_series(c.NV_REQUEST_SUCCESS, "west", "0+60x120")]
    silent = [{"labels": pq.selector("", pq.equal([(CLUSTER, "east")])), "value": 1}]
    rows = [
        {"expr": query, "eval_time": f"{minute}m", "exp_samples": expected}
        for minute, expected in ((20, []), (40, silent), (110, silent))
    ]
    result = _promtool(tmp_path, TWO_CLUSTERS, promtool_doc([*east, *west], rows))
    assert result.returncode == 0, result.stdout + result.stderr


def test_only_a_spec_with_a_cluster_label_has_the_group() -> None:
    from triton_sre.generate.slo_rules import slo_groups

    with_label = parse_spec(TWO_CLUSTERS)
    names = [g["name"] for g in slo_groups(with_label, "runbooks/")["groups"]]
    assert names[-1] == c.CLUSTER_GROUP
    without = parse_spec(TWO_CLUSTERS.replace(f"{c.LABEL_CLUSTER}_label: {CLUSTER}\n", ""))
    assert without.cluster_label is None
    assert c.CLUSTER_GROUP not in [g["name"] for g in slo_groups(without, "runbooks/")["groups"]]


def test_the_alert_pages_with_its_runbook_and_the_cluster_in_its_text() -> None:
    from triton_sre.generate.cluster_silent import cluster_group

    group = cluster_group(parse_spec(TWO_CLUSTERS), "runbooks/")
    assert group is not None
    (marker, alert) = group["rules"]
    assert marker["record"] == c.REC_CLUSTER_REPORTING
    assert alert["labels"] == {c.L_SEVERITY: c.SEVERITY_PAGE}
    assert alert["annotations"]["runbook_url"] == f"runbooks/{c.ALERT_RUNBOOKS[c.ALERT_CLUSTER_SILENT]}.md"
    assert all(f"$labels.{CLUSTER}" in alert["annotations"][k] for k in ("summary", "description"))


def test_each_recorded_name_is_grouped_on_its_own() -> None:
    """A spec with an LLM SLO beside another records two SLO part names; `present_over_time` over a
    selector of both dropped the names and two series shared a label set (promtool: "vector cannot
    contain metrics with the same labelset", a drawn spec in the fresh-clone CI). Each name is grouped
    by cluster on its own."""
    from triton_sre.generate.cluster_silent import cluster_group

    spec = TWO_CLUSTERS + f"  - {{name: t, type: {c.SLO_TTFT}, objective: 99, threshold: 250ms}}\n"
    group = cluster_group(parse_spec(spec), "runbooks/")
    assert group is not None
    expr = " ".join(rule["expr"] for rule in group["rules"])  # the marker's and the alert's "recent"
    names = {c.rec_slo_part(c.SLO_PART_SUCCESS), c.rec_slo_part(c.SLO_PART_TOTAL)}
    assert "__name__" not in expr
    assert all(expr.count(f"present_over_time({name}[") == 2 for name in names), expr
