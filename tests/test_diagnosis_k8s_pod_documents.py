"""A pod pasted as `kubectl get pod -o json` / `-o yaml` (and as one compact JSON line, `jq -c` or a collector's
record) lands on the page the describe table gives the same state (diag45): the fields are k8s.io/api core/v1
types.go's (status.phase, reason, message, conditions[].type/status/reason/message, containerStatuses[].state
and lastState with waiting.reason/message and terminated.exitCode/reason, ready, restartCount), the reasons the
kubelet's (CrashLoopBackOff, ImagePullBackOff, ErrImagePull, CreateContainerConfigError: pkg/kubelet/images and
kuberuntime; OOMKilled and Error from the runtime; Evicted: pkg/kubelet/eviction; ContainerStatusUnknown:
status_manager.go) and the scheduler's (PodScheduled False Unschedulable, SchedulingGated).

-o json is Go's encoding indented by four spaces with sorted keys (`json.dumps(indent=4, sort_keys=True)`
writes it the same); -o yaml is sigs.k8s.io/yaml (keys sorted, a list's `- ` at its key's indentation, strings
that would read as another type double-quoted: `status: "True"`, times), written here through PyYAML with
go-yaml's quoting."""

# ruff: noqa: E501 - quoted kubectl output is test data

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml
from test_diagnosis_pod_wordings import POD

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

UID = "5c1e2f3a-8b7d-4e6f-9a0b-1c2d3e4f5a6b"
IMAGE = "nvcr.io/nvidia/tritonserver:24.08-py3"
BACK_OFF = f"back-off 1m20s restarting failed container=triton pod={POD}_ml({UID})"
NOT_READY = "containers with unready status: [triton]"


def _condition(kind: str, status: str, reason: str = "", message: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"lastProbeTime": None, "lastTransitionTime": "2024-05-02T10:09:00Z"}
    out.update({"message": message} if message else {})
    out.update({"reason": reason} if reason else {})
    return {**out, "status": status, "type": kind}


def pod(phase: str, container: dict[str, Any] | None, ready: bool = False, **status: Any) -> dict[str, Any]:
    """A pod of one Triton container, scheduled on gpu-node-3 unless its conditions say otherwise."""
    conditions = status.pop("conditions", None) or [
        _condition("Initialized", "True"),
        _condition("Ready", "True") if ready else _condition("Ready", "False", "ContainersNotReady", NOT_READY),
        _condition("ContainersReady", "True")
        if ready
        else _condition("ContainersReady", "False", "ContainersNotReady", NOT_READY),
        _condition("PodScheduled", "True"),
    ]
    body: dict[str, Any] = {"conditions": conditions, "phase": phase, "qosClass": "Burstable", **status}
    spec: dict[str, Any] = {"containers": [{"image": IMAGE, "name": "triton"}], "restartPolicy": "Always"}
    if container is not None:
        body["containerStatuses"] = [container]
        body.update({"hostIP": "10.0.4.13", "podIP": "10.244.3.17", "startTime": "2024-05-02T10:09:00Z"})
        spec["nodeName"] = "gpu-node-3"
    meta = {"name": POD, "namespace": "ml", "uid": UID}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": body}


def container(state: dict[str, Any], last: dict[str, Any] | None = None, restarts: int = 4, ready: bool = False):
    return {
        "containerID": "containerd://4f1c9e",
        "image": IMAGE,
        "imageID": "nvcr.io/nvidia/tritonserver@sha256:9b1e",
        "lastState": last or {},
        "name": "triton",
        "ready": ready,
        "restartCount": restarts,
        "started": ready,
        "state": state,
    }


def terminated(code: int, reason: str, message: str = "") -> dict[str, Any]:
    out = {"containerID": "containerd://4f1c9e", "exitCode": code, "finishedAt": "2024-05-02T10:11:10Z"}
    out.update({"message": message} if message else {})
    return {"terminated": {**out, "reason": reason, "startedAt": "2024-05-02T10:10:40Z"}}


def waiting(reason: str, message: str = "") -> dict[str, Any]:
    return {"waiting": {"message": message, "reason": reason} if message else {"reason": reason}}


def as_json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=4, sort_keys=True) + "\n"


def as_yaml(doc: dict[str, Any]) -> str:
    text = yaml.safe_dump(doc, default_flow_style=False, sort_keys=True, width=80)
    return re.sub(r"'(True|False|\d{4}-\d\d-\d\dT[\d:]+Z|\d+|)'", r'"\1"', text)  # go-yaml's double quotes


def as_line(doc: dict[str, Any]) -> str:
    return json.dumps(doc, separators=(",", ":")) + "\n"


LAYOUTS = {"json": as_json, "yaml": as_yaml, "compact-json": as_line}

UNSCHEDULABLE = (
    "0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are available: "
    "4 No preemption victims found for incoming pod."
)
PULL_NOT_FOUND = (
    'rpc error: code = NotFound desc = failed to pull and unpack image "nvcr.io/nvidia/tritonserver:24.08-py": '
    'failed to resolve reference "nvcr.io/nvidia/tritonserver:24.08-py": nvcr.io/nvidia/tritonserver:24.08-py: not found'
)
EVICTED = (
    "The node was low on resource: memory. Threshold quantity: 100Mi, available: 91204Ki. Container triton "
    "was using 14Gi, request is 8Gi, has larger consumption of memory. "
)
UNKNOWN_STATUS = {
    "terminated": {
        "exitCode": 137,
        "finishedAt": None,
        "message": "The container could not be located when the pod was terminated",
        "reason": "ContainerStatusUnknown",
        "startedAt": None,
    }
}

CASES = {
    "crash-loop-error-1": (pod("Running", container(waiting("CrashLoopBackOff", BACK_OFF), terminated(1, "Error"))), c.RUNBOOK_POD_CRASH_LOOPING),
    "crash-loop-oom-137": (pod("Running", container(waiting("CrashLoopBackOff", BACK_OFF), terminated(137, "OOMKilled"))), c.RUNBOOK_HOST_RESOURCE_EXHAUSTED),
    "crash-loop-error-137": (pod("Running", container(waiting("CrashLoopBackOff", BACK_OFF), terminated(137, "Error"))), c.RUNBOOK_HOST_RESOURCE_EXHAUSTED),
    "crash-loop-error-139": (pod("Running", container(waiting("CrashLoopBackOff", BACK_OFF), terminated(139, "Error"))), c.RUNBOOK_SERVER_CRASHED),
    "terminated-error-1": (pod("Failed", container(terminated(1, "Error"), restarts=0)), c.RUNBOOK_POD_CRASH_LOOPING),
    "image-pull-back-off": (pod("Pending", container(waiting("ImagePullBackOff", 'Back-off pulling image "nvcr.io/nvidia/tritonserver:24.08-py"'), restarts=0)), c.RUNBOOK_IMAGE_PULL_FAILED),
    "err-image-pull": (pod("Pending", container(waiting("ErrImagePull", PULL_NOT_FOUND), restarts=0)), c.RUNBOOK_IMAGE_PULL_FAILED),
    "config-error": (pod("Pending", container(waiting("CreateContainerConfigError", 'secret "ngc-api-key" not found'), restarts=0)), c.RUNBOOK_POD_START_FAILED),
    "unschedulable": (pod("Pending", None, conditions=[_condition("PodScheduled", "False", "Unschedulable", UNSCHEDULABLE)]), c.RUNBOOK_POD_UNSCHEDULABLE),
    "scheduling-gated": (pod("Pending", None, conditions=[_condition("PodScheduled", "False", "SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates")]), c.RUNBOOK_POD_UNSCHEDULABLE),
    "evicted": (pod("Failed", container(UNKNOWN_STATUS, restarts=0), message=EVICTED, reason="Evicted"), c.RUNBOOK_HOST_RESOURCE_EXHAUSTED),
    "evicted-no-statuses": (pod("Failed", None, message="Pod ephemeral local storage usage exceeds the total limit of containers 10Gi. ", reason="Evicted"), c.RUNBOOK_HOST_RESOURCE_EXHAUSTED),
    "status-unknown": (pod("Running", container(UNKNOWN_STATUS, restarts=0)), c.RUNBOOK_POD_DISRUPTED),
}  # fmt: skip


def first(text: str) -> str | None:
    found = diagnose_events(parse_text(text)).findings
    return found[0].runbook if found else None


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_pod_document_lands_on_its_page(case: str, layout: str) -> None:
    doc, runbook = CASES[case]
    assert first(LAYOUTS[layout](doc)) == runbook


HEALTHY = {
    "running-ready": pod("Running", container({"running": {"startedAt": "2024-05-02T10:09:30Z"}}, restarts=0, ready=True), ready=True),
    "running-loading": pod("Running", container({"running": {"startedAt": "2024-05-02T10:09:30Z"}}, restarts=0)),
    "creating": pod("Pending", container(waiting("ContainerCreating"), restarts=0)),
    "completed": pod("Succeeded", container(terminated(0, "Completed"), restarts=0)),
}  # fmt: skip


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("case", sorted(HEALTHY))
def test_a_healthy_or_progressing_pod_gives_no_finding(case: str, layout: str) -> None:
    """Running with ready true and restartCount 0 is healthy; a container still loading (ready false, the
    Ready condition ContainersNotReady), one being created and a completed one name no fault."""
    assert first(LAYOUTS[layout](HEALTHY[case])) is None


def test_kubectl_get_pods_o_json_lists_a_healthy_pod_beside_a_failing_one() -> None:
    healthy = HEALTHY["running-ready"]
    failing = CASES["crash-loop-error-139"][0]
    text = as_json({"apiVersion": "v1", "items": [healthy, failing], "kind": "List", "metadata": {"resourceVersion": ""}})
    assert first(text) == c.RUNBOOK_SERVER_CRASHED
