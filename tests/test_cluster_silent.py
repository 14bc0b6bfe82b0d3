"""TritonClusterSilent (journey28): on a global store, a cluster whose Prometheus died kept its last
samples for the 5m lookback, then its SLO series vanished and its firing pages resolved as if the
cluster were healthy. With `cluster_label` the SLO rule file has a group that names such a cluster
(seen within the last hour, no SLO recording for 2m); promtool, two clusters, east's series stop."""

from __future__ import annotations

from pathlib import Path

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


def test_a_cluster_whose_recordings_stop_is_named_until_an_hour_later(tmp_path: Path) -> None:
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
            _firing_at(100, []),  # an hour after east's last recording: not seen any more
        ],
    )
    result = _promtool(tmp_path, TWO_CLUSTERS, tests)
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
    (alert,) = group["rules"]
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
    expr = group["rules"][0]["expr"]
    names = {c.rec_slo_part(c.SLO_PART_SUCCESS), c.rec_slo_part(c.SLO_PART_TOTAL)}
    assert "__name__" not in expr
    assert all(expr.count(f"present_over_time({name}[") == 2 for name in names), expr
