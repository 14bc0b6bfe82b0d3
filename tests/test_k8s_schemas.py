"""The deploy/k8s objects validate against Kubernetes' and the CRDs' own schemas, and the
validator itself refuses what an API server would refuse."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml
from k8s_schemas import CRD_DIR, crd_sources, problems

REPO = Path(__file__).resolve().parents[1]
K8S = REPO / "deploy" / "k8s"


def _objects() -> list[tuple[str, dict]]:
    return [(f"{p.name}#{i}", d) for p in sorted(K8S.rglob("*.yaml"))
            for i, d in enumerate(yaml.safe_load_all(p.read_text())) if d]  # fmt: skip


@pytest.mark.parametrize("name,obj", _objects(), ids=[n for n, _ in _objects()])
def test_every_deploy_object_validates(name: str, obj: dict) -> None:
    assert problems(obj) == []


def test_every_kept_crd_schema_names_its_source() -> None:
    for source in crd_sources():
        assert (CRD_DIR / source["file"]).is_file()
        assert len(source["commit"]) == 40 and source["tag"].startswith("v")
        assert source["repository"].count("/") == 1
        assert json.loads((CRD_DIR / source["file"]).read_text())["type"] == "object"
    kept = {f.name for f in CRD_DIR.glob("*.json")} - {"sources.json"}
    assert kept == {s["file"] for s in crd_sources()}


def _podmonitor() -> dict:
    return next(d for _, d in _objects() if d["kind"] == "PodMonitor")


def test_validator_refuses_an_unknown_crd_field() -> None:
    obj = copy.deepcopy(_podmonitor())
    obj["spec"]["podMetricsEndpoints"][0]["intervall"] = "15s"
    assert problems(obj) == ["PodMonitor: .spec.podMetricsEndpoints[0].intervall: unknown field"]


def test_validator_refuses_a_wrong_type_in_a_crd() -> None:
    obj = copy.deepcopy(_podmonitor())
    obj["spec"]["podMetricsEndpoints"] = {"port": "x"}
    assert any("is not of type 'array'" in p for p in problems(obj))


def test_validator_refuses_a_wrong_builtin_object() -> None:
    deployment = next(d for _, d in _objects() if d["kind"] == "Deployment")
    obj = copy.deepcopy(deployment)
    obj["spec"]["replicas"] = "two"
    assert problems(obj)
    obj = copy.deepcopy(deployment)
    obj["spec"]["template"]["spec"]["containerz"] = []
    assert problems(obj)
