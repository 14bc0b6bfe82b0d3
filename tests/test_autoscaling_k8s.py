"""The rendered HPA, prometheus-adapter rules and KEDA ScaledObject: valid for every signal, reading
the recording rules the generated rule file records, behaviour from the load time."""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path

import pytest
import yaml
from binaries import binary
from k8s_schemas import problems

from triton_sre import conventions as c
from triton_sre.generate.autoscaling import AUTOSCALING_FILE, autoscaling_groups
from triton_sre.generate.k8s_autoscaling import adapter_rules, autoscaling_files, hpa, quantity, scaled_object
from triton_sre.generate.rulefile import render_yaml
from triton_sre.generate.tests_autoscaling import test_files as autoscaling_test_files
from triton_sre.slo import spec_from_mapping

_SPEC = spec_from_mapping(
    {
        "slos": [{"name": "l", "type": "latency", "objective": 99, "threshold": "500ms"}],
        "autoscaling": [
            {"deployment": f"t-{i}", "signal": s, "max_replicas": 6, "load_time": "90s", "job": f"t-{i}"}
            for i, s in enumerate(c.SIGNALS)
        ]
        + [{"deployment": "sts", "kind": "StatefulSet", "max_replicas": 3}],  # each on its own job
    }
)


@pytest.mark.parametrize("entry", _SPEC.autoscaling, ids=[e.deployment for e in _SPEC.autoscaling])
def test_every_signal_renders_valid_objects(entry) -> None:  # type: ignore[no-untyped-def]
    obj, keda = hpa(entry), scaled_object(entry)
    assert problems(obj) == [] and problems(keda) == []
    target = obj["spec"]["metrics"][0]["external"]["target"]
    assert target["type"] == ("AverageValue" if entry.per_replica else "Value")
    assert keda["spec"]["triggers"][0]["metricType"] == target["type"]
    assert entry.rule in keda["spec"]["triggers"][0]["metadata"]["query"]
    assert obj["spec"]["scaleTargetRef"]["kind"] == entry.kind


def test_behaviour_follows_the_load_time() -> None:
    entry = _SPEC.autoscaling[0]  # 90 s load: startup budget 2 x 90 + 30 = 210 s
    behavior = hpa(entry)["spec"]["behavior"]
    assert {p["periodSeconds"] for p in behavior["scaleUp"]["policies"]} == {210}
    assert behavior["scaleDown"]["stabilizationWindowSeconds"] == 420


def test_the_adapter_and_keda_read_rules_the_rule_file_records() -> None:
    recorded = {r.get("record") for g in autoscaling_groups(_SPEC, "r/")["groups"] for r in g["rules"]}
    config = yaml.safe_load(adapter_rules()["data"]["config.yaml"])
    assert {r["name"]["matches"].strip("^$") for r in config["externalRules"]} <= recorded
    assert {e.rule for e in _SPEC.autoscaling} <= recorded
    assert problems(adapter_rules()) == []


def test_a_wrong_target_type_is_refused_by_the_schema() -> None:
    obj = copy.deepcopy(hpa(_SPEC.autoscaling[0]))
    obj["spec"]["metrics"][0]["external"]["target"]["valu"] = "1"
    assert problems(obj)


def test_quantities_and_files() -> None:
    assert [quantity(v) for v in (0.1, 5, 0.72, 2.5)] == ["100m", "5", "720m", "2500m"]
    files = autoscaling_files(_SPEC)
    assert len(files) == 1 + 2 * len(_SPEC.autoscaling)
    assert (
        autoscaling_files(
            spec_from_mapping({"slos": [{"name": "a", "type": "availability", "objective": 99}]})
        )
        == {}
    )


def test_the_generated_lagging_test_follows_the_load_time(tmp_path: Path) -> None:
    """A 10-minute model load: a startup budget (20m30s) past the lagging test's old fixed 40 samples
    (10m). The test now feeds the signal past the budget, and promtool passes it."""
    spec = spec_from_mapping(
        {
            "slos": [{"name": "a", "type": "availability", "objective": 99.9}],
            "autoscaling": [
                {"deployment": "slow", "max_replicas": 5, "load_time": "10m"},
            ],
        },
        "s.yaml",
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / AUTOSCALING_FILE).write_text(render_yaml(autoscaling_groups(spec, "r/"), "s"))
    tests = autoscaling_test_files(spec, "r/")
    for name, doc in tests.items():
        (tmp_path / "tests" / name).write_text(render_yaml(doc, "s"))
    done = subprocess.run(
        [binary("promtool"), "test", "rules", *tests], cwd=tmp_path / "tests", capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
