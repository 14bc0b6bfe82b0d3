"""The generated rules on a second engine (issue 24): every rule file loads in vmalert, and on the
two-cluster series of tests/test_cluster_label.py, vmalert against VictoriaMetrics records the same
figures and the alert expressions select the same (cluster, model, tier) that fire under promtool.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
import yaml
from binaries import binary
from test_cluster_label import CLUSTER, EXPECTED_FIRING, TWO_CLUSTERS, spec_with_cluster
from victoria import exposition, replay, victoria_metrics

from triton_sre import conventions as c
from triton_sre.generate.command import render_all
from triton_sre.generate.families import rule_files
from triton_sre.generate.rulefile import render_yaml
from triton_sre.slo import parse_spec

REPO = Path(__file__).resolve().parents[1]


def _dry_run(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [binary("vmalert"), "-dryRun", f"-rule={path}"], capture_output=True, text=True, timeout=120
    )


def test_vmalert_dry_run_loads_every_generated_rule_file(tmp_path: Path) -> None:
    """The shipped files and the files of the spec with cluster_label set: vmalert parses every
    expression with its MetricsQL engine and every annotation template; a broken file fails."""
    shipped = sorted((REPO / "alerts").glob("*.yaml"))
    assert len(shipped) == len(rule_files(parse_spec((REPO / "slos.yaml").read_text())))
    clustered = []
    for name, doc in rule_files(spec_with_cluster(), "runbooks/").items():
        clustered.append(tmp_path / name)
        clustered[-1].write_text(render_yaml(doc, "slos.yaml"))
    failures = [
        f"{p}: {r.stdout[-2000:]}{r.stderr[-2000:]}"
        for p in shipped + clustered
        if (r := _dry_run(p)).returncode
    ]
    assert not failures, "\n".join(failures)
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        yaml.safe_dump({"groups": [{"name": "g", "rules": [{"alert": "A", "expr": "sum by (x (y)"}]}]})
    )
    assert _dry_run(broken).returncode != 0


def _points(start: float, per_minute: float) -> list[tuple[float, float]]:
    return [(start + 60 * i, per_minute * i) for i in range(91)]  # the promtool series '0+Nx90'


@pytest.mark.slow
def test_vmalert_on_victoria_metrics_fires_what_prometheus_fires(tmp_path: Path) -> None:
    spec = parse_spec(TWO_CLUSTERS, str(tmp_path / "slos.yaml"))
    for rel, content in render_all(spec, "runbooks/").items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(content)
    slo_file = tmp_path / "alerts" / "triton-slo-rules.yaml"
    start = (int(time.time()) // 60) * 60 - 3 * 3600  # a past range VictoriaMetrics accepts
    base = {c.LABEL_JOB: c.DEFAULT_TRITON_JOB, c.LABEL_INSTANCE: "triton-0:8002", c.LABEL_MODEL: "m"}
    base |= {c.LABEL_VERSION: "1"}
    lines = exposition(c.NV_REQUEST_SUCCESS, {**base, CLUSTER: "east"}, _points(start, 40))
    lines += exposition(
        c.NV_REQUEST_FAILURE, {**base, CLUSTER: "east", c.LABEL_REASON: "BACKEND"}, _points(start, 20)
    )
    lines += exposition(c.NV_REQUEST_SUCCESS, {**base, CLUSTER: "west"}, _points(start, 60))
    at = start + 70 * 60
    with victoria_metrics(tmp_path / "vm") as vm:
        vm.import_samples(lines)
        replay(vm, [slo_file], start, start + 90 * 60, tmp_path)
        # the recorded figures are Prometheus's (promtool: 0.333 and 0 at 70m)
        errors = {
            r["metric"][CLUSTER]: r["value"][1]
            for r in vm.query(f"round({c.rec_slo_errors('1h')}, 0.001)", at)
        }
        assert errors == {"east": "0.333", "west": "0"}
        # each burn alert's expression, evaluated by MetricsQL on vmalert's recorded series
        fired = []
        for group in yaml.safe_load(slo_file.read_text())["groups"]:
            for rule in (r for r in group["rules"] if "alert" in r):
                for result in vm.query(rule["expr"], at):
                    fired.append({**result["metric"], **rule["labels"]})
    key = lambda labels: sorted(labels.items())  # noqa: E731
    assert sorted(fired, key=key) == sorted(EXPECTED_FIRING, key=key)
