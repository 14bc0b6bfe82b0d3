"""Kubernetes' structured output read as kubectl and the kubelet mean it (diag45): an Event as `kubectl get
events -o json` / `-o yaml` prints it, as events.k8s.io/v1 names its fields, and as an event exporter writes
it on one JSON line. The event's type and reason decide together, as in describe's Events table
(tests/test_diagnosis_pod_wordings.py): a Warning with a failure's reason is a failure, a FailedPreStopHook
alone is none (the kubelet stops the container all the same: kuberuntime_container.go executePreStopHook),
and a Normal event never is one by its type.

kubectl's JSON printer indents Go's encoding by four spaces with the keys of an object sorted (it prints the
unstructured object, a map), which `json.dumps(indent=4, sort_keys=True)` writes the same; -o yaml goes
through sigs.k8s.io/yaml (keys sorted, two spaces, a list's `- ` at its key's indentation), written out here.
The core/v1 Event's fields: k8s.io/api core/v1 types.go (involvedObject, reason, message, source,
firstTimestamp, lastTimestamp, count, type, eventTime, reportingComponent, reportingInstance)."""

# ruff: noqa: E501 - quoted kubectl output is test data

from __future__ import annotations

import json

import pytest
from test_diagnosis_pod_wordings import POD, PRE_STOP_MESSAGES

from triton_sre import conventions as c
from triton_sre.diagnosis import k8s_documents
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

UID = "5c1e2f3a-8b7d-4e6f-9a0b-1c2d3e4f5a6b"
BACK_OFF = f"Back-off restarting failed container triton in pod {POD}_ml({UID})"


def findings(text: str) -> list[tuple[str, str]]:
    return [(f.runbook, f.evidence[0].text if f.evidence else "") for f in diagnose_events(parse_text(text)).findings]


def event(kind: str, reason: str, message: str, n: int = 1) -> dict[str, object]:
    """One core/v1 Event as the API server returns it for the kubelet's event about the pod's container."""
    return {
        "apiVersion": "v1",
        "count": n,
        "eventTime": None,
        "firstTimestamp": "2024-05-02T10:11:12Z",
        "involvedObject": {
            "apiVersion": "v1",
            "fieldPath": "spec.containers{triton}",
            "kind": "Pod",
            "name": POD,
            "namespace": "ml",
            "resourceVersion": "48213",
            "uid": UID,
        },
        "kind": "Event",
        "lastTimestamp": "2024-05-02T10:11:12Z",
        "message": message,
        "metadata": {
            "creationTimestamp": "2024-05-02T10:11:12Z",
            "name": f"{POD}.17cb9a1f2e3d4c5{n}",
            "namespace": "ml",
            "resourceVersion": f"4821{n}",
            "uid": f"0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5{n}",
        },
        "reason": reason,
        "reportingComponent": "kubelet",
        "reportingInstance": "gpu-node-1",
        "source": {"component": "kubelet", "host": "gpu-node-1"},
        "type": kind,
    }


def get_events_json(*events: dict[str, object]) -> str:
    """`kubectl get events -o json`: a List of the events."""
    doc = {"apiVersion": "v1", "items": list(events), "kind": "List", "metadata": {"resourceVersion": ""}}
    return json.dumps(doc, indent=4, sort_keys=True) + "\n"


def get_events_yaml(kind: str, reason: str, message: str) -> str:
    """`kubectl get events -o yaml` of one event (sigs.k8s.io/yaml; a message with `: ` single-quoted)."""
    quoted = f"'{message}'" if ": " in message or message.startswith(("'", '"')) else message
    return (
        "apiVersion: v1\nitems:\n- apiVersion: v1\n  count: 1\n  eventTime: null\n"
        '  firstTimestamp: "2024-05-02T10:11:12Z"\n  involvedObject:\n    apiVersion: v1\n'
        "    fieldPath: spec.containers{triton}\n    kind: Pod\n"
        f"    name: {POD}\n    namespace: ml\n    resourceVersion: \"48213\"\n    uid: {UID}\n"
        f'  kind: Event\n  lastTimestamp: "2024-05-02T10:11:12Z"\n  message: {quoted}\n  metadata:\n'
        f'    creationTimestamp: "2024-05-02T10:11:12Z"\n    name: {POD}.17cb9a1f2e3d4c5b\n'
        f'    namespace: ml\n    resourceVersion: "48214"\n    uid: 0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d\n'
        f"  reason: {reason}\n  reportingComponent: kubelet\n  reportingInstance: gpu-node-1\n"
        f"  source:\n    component: kubelet\n    host: gpu-node-1\n  type: {kind}\n"
        'kind: List\nmetadata:\n  resourceVersion: ""\n'
    )


def exporter_line(kind: str, reason: str, message: str) -> str:
    """An event exporter's JSON line: the Event in its Go struct's field order, one object a line."""
    record = event(kind, reason, message)
    order = ("metadata", "involvedObject", "reason", "message", "source", "firstTimestamp", "lastTimestamp",
             "count", "type", "eventTime", "reportingComponent", "reportingInstance")  # fmt: skip
    return json.dumps({key: record[key] for key in order}, separators=(",", ":")) + "\n"


def events_k8s_io(kind: str, reason: str, note: str) -> str:
    """`kubectl get events.v1.events.k8s.io -o json` of one event: `regarding` and `note` (events.k8s.io/v1)."""
    record = {
        "action": "Killing",
        "apiVersion": "events.k8s.io/v1",
        "deprecatedCount": 1,
        "eventTime": None,
        "kind": "Event",
        "metadata": {"name": f"{POD}.17cb9a1f2e3d4c5b", "namespace": "ml"},
        "note": note,
        "reason": reason,
        "regarding": {"fieldPath": "spec.containers{triton}", "kind": "Pod", "name": POD, "namespace": "ml"},
        "reportingController": "kubelet",
        "reportingInstance": "gpu-node-1",
        "type": kind,
    }
    return get_events_json(record)


LAYOUTS = {
    "get-events-json": lambda kind, reason, message: get_events_json(event(kind, reason, message)),
    "get-events-yaml": get_events_yaml,
    "exporter-line": exporter_line,
    "events.k8s.io": events_k8s_io,
    "type-first-line": lambda kind, reason, message: json.dumps(
        {"type": kind, "reason": reason, "message": message, "involvedObject": {"kind": "Pod", "name": POD}}
    )
    + "\n",
}


@pytest.mark.parametrize("message", PRE_STOP_MESSAGES, ids=["1.22-on", "before-1.22"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_failed_pre_stop_hook_event_alone_is_no_failure(layout: str, message: str) -> None:
    assert findings(LAYOUTS[layout]("Warning", "FailedPreStopHook", message)) == []


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_warning_event_reads_as_its_describe_row(layout: str) -> None:
    """The kubelet's BackOff (pkg/kubelet/kuberuntime: "Back-off restarting failed container %s in pod %s")
    is the crash loop, as the same event in describe's table."""
    (first, quoted), *_ = findings(LAYOUTS[layout]("Warning", "BackOff", BACK_OFF))
    assert first == c.RUNBOOK_POD_CRASH_LOOPING
    assert "Back-off restarting" in quoted or "BackOff" in quoted


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_warning_with_a_failure_reason_no_rule_knows_is_still_a_failure(layout: str) -> None:
    """A Warning whose reason is a failure's (log_layouts.K8S_WARNING_REASONS) gives a finding even where no
    rule knows its message: the reason's line is quoted."""
    got = findings(LAYOUTS[layout]("Warning", "FailedSync", "error determining status: rpc error: code = Unknown"))
    assert got, "a Warning with a failure's reason is a failure"
    assert "FailedSync" in got[0][1] or "error determining status" in got[0][1]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_normal_event_is_no_failure_by_its_type(layout: str) -> None:
    for reason, message in [
        ("Scheduled", f"Successfully assigned ml/{POD} to gpu-node-1"),
        ("Pulled", 'Container image "nvcr.io/nvidia/tritonserver:24.08-py3" already present on machine'),
        ("Started", "Started container triton"),
        ("Killing", "Stopping container triton"),
    ]:
        assert findings(LAYOUTS[layout]("Normal", reason, message)) == [], reason


def test_the_normal_events_of_a_pods_start_in_one_list() -> None:
    text = get_events_json(
        event("Normal", "Scheduled", f"Successfully assigned ml/{POD} to gpu-node-1", 1),
        event("Normal", "Pulling", 'Pulling image "nvcr.io/nvidia/tritonserver:24.08-py3"', 2),
        event("Normal", "Created", "Created container: triton", 3),
        event("Normal", "Started", "Started container triton", 4),
    )
    assert findings(text) == []


def test_a_pre_stop_hook_beside_the_crash_loop_in_one_list_is_the_crash_loop() -> None:
    text = get_events_json(
        event("Normal", "Killing", "Stopping container triton", 1),
        event("Warning", "FailedPreStopHook", "PreStopHook failed", 2),
        event("Warning", "BackOff", BACK_OFF, 3),
    )
    assert findings(text)[0][0] == c.RUNBOOK_POD_CRASH_LOOPING


def test_an_events_reason_line_is_read_with_its_type() -> None:
    """In -o yaml the reason line alone reads as a failure (`reason: BackOff`); in an Event it is the type's."""
    reading = k8s_documents.read_events(get_events_yaml("Normal", "BackOff", "Back-off pulling image"))
    assert [(e.type, e.reason, e.failing) for e in reading.events] == [("Normal", "BackOff", False)]
    assert "reason: BackOff" not in reading.rest
    warning = k8s_documents.read_events(get_events_yaml("Warning", "BackOff", BACK_OFF))
    assert warning.failing is not None and warning.failing.reason_line == "reason: BackOff"


def test_a_cut_paste_of_one_item_still_reads() -> None:
    """One item of `items` pasted with its trailing comma, the List around it left out."""
    whole = get_events_json(event("Warning", "FailedPreStopHook", "PreStopHook failed"))
    lines = whole.split("\n")
    item = "\n".join(lines[3 : lines.index("        }") + 1]) + ",\n"
    assert item.lstrip().startswith("{") and item.rstrip().endswith("},")
    assert [e.reason for e in k8s_documents.read_events(item).events] == ["FailedPreStopHook"]
    assert findings(item) == []


def test_a_normal_back_off_in_yaml_is_not_failing_by_its_reason_line() -> None:
    """`reason: BackOff` alone is a failure's line (severity.py); in a Normal Event it is not (the kubelet's
    image back-off is Normal: its message is read by the pull rules, not by the reason's line)."""
    text = get_events_yaml("Normal", "BackOff", "Started container triton")
    assert findings(text) == []
    assert findings(text.replace("type: Normal", "type: Warning"))


# The kubelet's own journal (journalctl -u kubelet): klog's header, then since 1.20's structured logging the
# message quoted and its key/value pairs (kuberuntime_container.go executePreStopHook: klog.ErrorS(err,
# "PreStop hook failed", "pod", ..., "podUID", ..., "containerName", ..., "containerID", ...)); before, the
# formatted `preStop hook for container %q failed: %v` (quoted from a 1.6 node in kubernetes#39170).
JOURNAL = "May 02 10:11:12 gpu-node-1 kubelet[1234]: "
PRE_STOP_LINES = [
    JOURNAL + 'E0502 10:11:12.345678    1234 kuberuntime_container.go:669] "PreStop hook failed" '
    "err=\"command '/bin/sh -c sleep 5 && kill -TERM 1' exited with 137: \" "
    f'pod="ml/{POD}" podUID="{UID}" containerName="triton" containerID="containerd://4f1c9e"',
    'E0502 10:11:12.345678    1234 kuberuntime_container.go:669] "PreStop hook failed" '
    'err="Get \\"http://10.244.3.17:8000/drain\\": dial tcp 10.244.3.17:8000: connect: connection refused" '
    f'pod="ml/{POD}" podUID="{UID}" containerName="triton" containerID="containerd://4f1c9e"',
    'E1218 22:36:58.022261    1356 kuberuntime_container.go:462] preStop hook for container "triton" failed: '
    "rpc error: code = 2 desc = container not running (bc860557d431)",
]


@pytest.mark.parametrize("line", PRE_STOP_LINES, ids=["journal", "structured", "before-1.20"])
def test_the_kubelets_own_pre_stop_hook_line_is_no_failure(line: str) -> None:
    assert findings(line + "\n") == []


@pytest.mark.parametrize("line", PRE_STOP_LINES, ids=["journal", "structured", "before-1.20"])
def test_beside_the_kubelets_crash_loop_line_the_crash_loop_decides(line: str) -> None:
    """pkg/kubelet/pod_workers.go: klog.ErrorS(err, "Error syncing pod, skipping", "pod", ..., "podUID", ...)."""
    crash = (
        'E0502 10:12:40.123456    1234 pod_workers.go:1298] "Error syncing pod, skipping" err="failed to '
        '\\"StartContainer\\" for \\"triton\\" with CrashLoopBackOff: \\"back-off 20s restarting failed '
        f'container=triton pod={POD}_ml({UID})\\"" pod="ml/{POD}" podUID="{UID}"'
    )
    assert findings(line + "\n" + crash + "\n")[0][0] == c.RUNBOOK_POD_CRASH_LOOPING
