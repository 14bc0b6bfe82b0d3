"""Kubernetes deciding a pod's fate from outside, in its own words (issue 20; diag43): a node lost or shut
down, a pod preempted or left with an unknown container status (pod-disrupted), a pod the API server's
admission refused (pod-admission-refused), a deadline Kubernetes gave up at (pod-deadline-exceeded).

Each case is laid out the way kubectl prints it (`get pods` rows, `describe` fields and Events table,
`-o yaml`, `rollout status`); the source of each wording is named on its case and in
triton_sre/diagnosis/orchestrator_rules.py. The table of every wording with its page before and after is
docs/diagnosis-kubernetes.md."""

# ruff: noqa: E501 - quoted kubectl lines are test data

from __future__ import annotations

import pytest
from test_diagnosis_pod_wordings import POD, _container, events, first, get_pods

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text


def runbooks(text: str) -> list[str]:
    return [f.runbook for f in diagnose_events(parse_text(text)).findings]


# printPod's STATUS cell (pkg/printers/internalversion/printers.go): the pod's own status reason —
# "NodeLost" (pkg/util/node), shown as "Unknown" once such a pod is being deleted; "Terminated" and
# "NodeShutdown" (pkg/kubelet/nodeshutdown; 1.20: "Shutdown"); "Preempting" (pkg/kubelet/preemption);
# "DeadlineExceeded" (pkg/kubelet/active_deadline.go) — or the last container's terminated reason,
# "ContainerStatusUnknown" (pkg/kubelet/status/status_manager.go).
@pytest.mark.parametrize(
    ("status", "runbook"),
    [
        ("NodeLost", c.RUNBOOK_POD_DISRUPTED),
        ("Unknown", c.RUNBOOK_POD_DISRUPTED),
        ("Terminated", c.RUNBOOK_POD_DISRUPTED),
        ("NodeShutdown", c.RUNBOOK_POD_DISRUPTED),
        ("Shutdown", c.RUNBOOK_POD_DISRUPTED),
        ("Preempting", c.RUNBOOK_POD_DISRUPTED),
        ("ContainerStatusUnknown", c.RUNBOOK_POD_DISRUPTED),
        ("DeadlineExceeded", c.RUNBOOK_POD_DEADLINE_EXCEEDED),
    ],
)
def test_a_status_cell_of_kubectl_get_pods(status: str, runbook: str) -> None:
    got, quoted = first(get_pods(status, ready="1/1" if status == "Unknown" else "0/1"))
    assert got == runbook
    assert status in quoted, "the finding quotes the pod's row"


def _pod(status: str, reason: str, message: str) -> str:
    """kubectl describe pod's pod-level fields (pkg/describe/describe.go: Node, Status, Reason, Message)."""
    return (
        f"Name:             {POD}\nNamespace:        ml\nNode:             gpu-node-3/10.0.4.13\n"
        f"Status:           {status}\nReason:           {reason}\nMessage:          {message}\n"
    )


@pytest.mark.parametrize(
    ("text", "runbook", "quoted"),
    [
        # pkg/util/node NodeUnreachablePodReason / NodeUnreachablePodMessage
        (
            _pod("Failed", "NodeLost", f"Node gpu-node-3 which was running pod {POD} is unresponsive"),
            c.RUNBOOK_POD_DISRUPTED,
            "NodeLost",
        ),
        # pkg/kubelet/nodeshutdown nodeShutdownReason / nodeShutdownMessage (1.21 on)
        (
            _pod("Failed", "Terminated", "Pod was terminated in response to imminent node shutdown."),
            c.RUNBOOK_POD_DISRUPTED,
            "Terminated",
        ),
        # pkg/kubelet/nodeshutdown NodeShutdownNotAdmittedReason / nodeShutdownNotAdmittedMessage
        (
            _pod(
                "Failed", "NodeShutdown", "Pod was rejected: Pod was rejected as the node is shutting down."
            ),
            c.RUNBOOK_POD_DISRUPTED,
            "NodeShutdown",
        ),
        # pkg/kubelet/preemption (reason events.PreemptContainer)
        (
            _pod("Failed", "Preempting", "Preempted in order to admit critical pod"),
            c.RUNBOOK_POD_DISRUPTED,
            "Preempting",
        ),
        # pkg/kubelet/active_deadline.go
        (
            _pod(
                "Failed", "DeadlineExceeded", "Pod was active on the node longer than the specified deadline"
            ),
            c.RUNBOOK_POD_DEADLINE_EXCEEDED,
            "DeadlineExceeded",
        ),
    ],
)
def test_kubectl_describe_pod_reason(text: str, runbook: str, quoted: str) -> None:
    """One finding, quoting describe's pod-level Reason line (the Message beside it says the same)."""
    found = diagnose_events(parse_text(text)).findings
    assert [f.runbook for f in found] == [runbook]
    assert found[0].evidence[0].text.split() == ["Reason:", quoted]


# The kubelet's exit code 137 for a container it could not locate: status_manager.go TerminatePod ("... when
# the pod was terminated") and kubelet_pods.go ("... when the pod was deleted.  The container used to be
# Running"); describe's container State and -o yaml's state.terminated (fields in alphabetical order).
CSU_DESCRIBE = _container(
    "Terminated",
    "ContainerStatusUnknown",
    "      Message:      The container could not be located when the pod was deleted.  The container used to be Running\n"
    "      Exit Code:    137\n",
)
CSU_YAML = (
    "    state:\n      terminated:\n        exitCode: 137\n        finishedAt: null\n"
    "        message: The container could not be located when the pod was terminated\n"
    "        reason: ContainerStatusUnknown\n        startedAt: null\n"
)


@pytest.mark.parametrize("text", [CSU_DESCRIBE, CSU_YAML], ids=["describe", "yaml"])
def test_container_status_unknown_is_not_an_oom_kill(text: str) -> None:
    found = runbooks(text)
    assert found[:1] == [c.RUNBOOK_POD_DISRUPTED]
    assert c.RUNBOOK_HOST_RESOURCE_EXHAUSTED not in found, "the kubelet wrote 137 itself: no SIGKILL was seen"


def test_container_status_unknown_beside_an_eviction_is_the_eviction() -> None:
    """The kubelet fills in the unknown status of every container of a pod it evicts: the eviction says why
    (-o yaml of an evicted pod, containerStatuses before the pod's message and reason)."""
    text = (
        "status:\n  containerStatuses:\n  - image: nvcr.io/nvidia/tritonserver:24.08-py3\n"
        "    name: triton\n    ready: false\n    restartCount: 0\n"
        + CSU_YAML
        + "  message: 'Pod ephemeral local storage usage exceeds the total limit of containers 10Gi. '\n"
        "  phase: Failed\n  reason: Evicted\n"
    )
    assert runbooks(text)[:1] == [c.RUNBOOK_HOST_RESOURCE_EXHAUSTED]
    described = (
        "Status:           Failed\nReason:           Evicted\nMessage:          The node was low on resource: memory.\n"
        + CSU_DESCRIBE
    )
    assert runbooks(described)[:1] == [c.RUNBOOK_HOST_RESOURCE_EXHAUSTED]


EVENTS = [
    # pkg/controller/util/node/controller_utils.go MarkPodsNotReady
    ("Warning", "NodeNotReady", "node-controller", "Node is not ready", c.RUNBOOK_POD_DISRUPTED),
    # pkg/controller/tainteviction (a Normal event)
    (
        "Normal",
        "TaintManagerEviction",
        "taint-eviction-controller",
        f"Marking for deletion Pod ml/{POD}",
        c.RUNBOOK_POD_DISRUPTED,
    ),
    # pkg/scheduler/framework/preemption: Eventf(victim, preemptor, Normal, "Preempted", "Preempting", "Preempted by pod %v on node %v")
    (
        "Normal",
        "Preempted",
        "default-scheduler",
        "Preempted by pod 6f1c9a2e-3b4d-4e8f-9a7b-1c2d3e4f5a6b on node gpu-node-1",
        c.RUNBOOK_POD_DISRUPTED,
    ),
    # pkg/kubelet/preemption
    (
        "Warning",
        "Preempting",
        "kubelet",
        "Preempted in order to admit critical pod",
        c.RUNBOOK_POD_DISRUPTED,
    ),
    # pkg/kubelet/active_deadline.go (a Normal event) and pkg/controller/job
    (
        "Normal",
        "DeadlineExceeded",
        "kubelet",
        "Pod was active on the node longer than the specified deadline",
        c.RUNBOOK_POD_DEADLINE_EXCEEDED,
    ),
    (
        "Warning",
        "DeadlineExceeded",
        "job-controller",
        "Job was active longer than specified deadline",
        c.RUNBOOK_POD_DEADLINE_EXCEEDED,
    ),
    # pkg/controller/replicaset "Error creating: %v" around the API server's admission refusals:
    # resourcequota (exceeded, and a quota that needs limits the pod does not set), limitranger, Pod
    # Security admission, a validating webhook
    (
        "Warning",
        "FailedCreate",
        "replicaset-controller",
        'Error creating: pods "triton-7d9f8c6b5-8kq2m" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=4, limited: requests.nvidia.com/gpu=4',
        c.RUNBOOK_POD_ADMISSION_REFUSED,
    ),
    (
        "Warning",
        "FailedCreate",
        "replicaset-controller",
        'Error creating: pods "triton-7d9f8c6b5-8kq2m" is forbidden: failed quota: compute: must specify limits.memory,requests.memory',
        c.RUNBOOK_POD_ADMISSION_REFUSED,
    ),
    (
        "Warning",
        "FailedCreate",
        "replicaset-controller",
        'Error creating: pods "triton-7d9f8c6b5-8kq2m" is forbidden: maximum memory usage per Container is 16Gi, but limit is 64Gi',
        c.RUNBOOK_POD_ADMISSION_REFUSED,
    ),
    (
        "Warning",
        "FailedCreate",
        "replicaset-controller",
        'Error creating: pods "triton-7d9f8c6b5-8kq2m" is forbidden: [minimum cpu usage per Container is 1, but request is 500m, memory max limit to request ratio per Container is 2, but provided ratio is 4.000000]',
        c.RUNBOOK_POD_ADMISSION_REFUSED,
    ),
    (
        "Warning",
        "FailedCreate",
        "replicaset-controller",
        'Error creating: pods "triton-7d9f8c6b5-8kq2m" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true (pod or container "triton" must set securityContext.runAsNonRoot=true)',
        c.RUNBOOK_POD_ADMISSION_REFUSED,
    ),
    (
        "Warning",
        "FailedCreate",
        "replicaset-controller",
        'Error creating: admission webhook "validate.kyverno.svc-fail" denied the request: resource Pod/ml/triton-7d9f8c6b5-8kq2m was blocked due to the following policies',
        c.RUNBOOK_POD_ADMISSION_REFUSED,
    ),
]


@pytest.mark.parametrize(("kind", "reason", "source", "message", "runbook"), EVENTS)
def test_an_event_of_a_controller_the_scheduler_or_the_kubelet(
    kind: str, reason: str, source: str, message: str, runbook: str
) -> None:
    text = events(kind, reason, source, message)
    assert runbooks(text)[:1] == [runbook]
    assert message[:30] in first(text)[1]


def test_kubectl_apply_refused_by_a_limit_range() -> None:
    """kubectl's error for a bare pod (apimachinery NewForbidden), LimitRange's "No limit is specified"."""
    text = (
        'Error from server (Forbidden): error when creating "triton-pod.yaml": pods "triton" is forbidden: '
        "maximum nvidia.com/gpu usage per Container is 1.  No limit is specified\n"
    )
    assert first(text)[0] == c.RUNBOOK_POD_ADMISSION_REFUSED


DEPLOY_PROGRESS = (
    "Conditions:\n  Type           Status  Reason\n  ----           ------  ------\n"
    "  Available      True    MinimumReplicasAvailable\n  Progressing    False   ProgressDeadlineExceeded\n"
)


@pytest.mark.parametrize(
    "text",
    [
        DEPLOY_PROGRESS,
        # kubectl pkg/polymorphichelpers/rollout_status.go
        'Waiting for deployment "triton" rollout to finish: 0 of 1 updated replicas are available...\n'
        'error: deployment "triton" exceeded its progress deadline\n',
        # -o yaml's condition message (pkg/controller/deployment/util: "ReplicaSet %q has timed out progressing.")
        '  - lastTransitionTime: "2026-12-04T08:12:40Z"\n    message: ReplicaSet "triton-7d9f8c6b5" has timed out progressing.\n'
        '    reason: ProgressDeadlineExceeded\n    status: "False"\n    type: Progressing\n',
    ],
    ids=["describe-deploy", "rollout-status", "yaml"],
)
def test_a_rollout_past_its_progress_deadline(text: str) -> None:
    assert first(text)[0] == c.RUNBOOK_POD_DEADLINE_EXCEEDED


@pytest.mark.parametrize(
    ("why", "runbook"),
    [
        (
            events(
                "Warning",
                "FailedCreate",
                "replicaset-controller",
                'Error creating: pods "triton-7d9f8c6b5-8kq2m" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=4, limited: requests.nvidia.com/gpu=4',
            ),
            c.RUNBOOK_POD_ADMISSION_REFUSED,
        ),
        (
            events(
                "Warning",
                "FailedScheduling",
                "default-scheduler",
                "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
            ),
            c.RUNBOOK_POD_UNSCHEDULABLE,
        ),
        (get_pods("CrashLoopBackOff", restarts="5 (40s ago)"), c.RUNBOOK_POD_CRASH_LOOPING),
    ],
    ids=["quota", "unschedulable", "crash-loop"],
)
def test_a_deadline_ranks_after_what_kept_the_pods_from_becoming_ready(why: str, runbook: str) -> None:
    """The deadline says Kubernetes gave up, not why: the pods' own finding comes first, pasted before or
    after it (two commands' outputs: two findings), and claims a block pasted as one (one finding)."""
    deploy = "$ kubectl describe deploy triton\n" + DEPLOY_PROGRESS
    pods = "$ kubectl get pods\n" + why
    for text in (deploy + pods, pods + deploy):
        assert runbooks(text) == [runbook, c.RUNBOOK_POD_DEADLINE_EXCEEDED]
    assert runbooks(DEPLOY_PROGRESS + why)[:1] == [runbook]


def test_grpc_deadline_exceeded_is_not_a_kubernetes_deadline() -> None:
    """gRPC-Go's `code = DeadlineExceeded` inside a probe's or a pull's error is that probe's or pull's page."""
    probe = events(
        "Warning",
        "Unhealthy",
        "kubelet",
        "Liveness probe errored: rpc error: code = DeadlineExceeded desc = context deadline exceeded",
    )
    assert runbooks(probe)[:1] == [c.RUNBOOK_POD_PROBE_FAILED]
    pull = events(
        "Warning",
        "Failed",
        "kubelet",
        'Failed to pull image "nvcr.io/nvidia/tritonserver:24.08-py3": rpc error: code = DeadlineExceeded desc = context deadline exceeded',
    )
    assert c.RUNBOOK_POD_DEADLINE_EXCEEDED not in runbooks(pull)


def test_a_healthy_pods_tolerations_and_words_in_prose_are_no_finding() -> None:
    """Every pod carries the 300 s not-ready/unreachable tolerations (DefaultTolerationSeconds); 'Unknown',
    'Terminated' or 'Preempting' outside a STATUS cell or a pod's Reason decide nothing."""
    healthy = (
        f"Name:             {POD}\nNode:             gpu-node-1/10.0.0.7\nStatus:           Running\n"
        "Tolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s\n"
        "                             node.kubernetes.io/unreachable:NoExecute op=Exists for 300s\n"
        "    State:          Running\n    Last State:     Terminated\n      Reason:       Completed\n      Exit Code:    0\n"
    )
    assert runbooks(healthy) == []
    assert runbooks("the model state is Unknown until the Terminated replica is replaced\n") == []


def test_a_replica_failure_condition_alone_is_not_this_page_but_openshifts_scc_refusal_is() -> None:
    """The Deployment's ReplicaFailure condition names no cause (not pod-admission-refused); OpenShift's SCC
    admission (apiserver-library-go sccadmission) refusing the pod is (heldout19's seldon-core-3019, labelled
    the fallback before this page existed, is pinned in BLIND_LABEL_SUPERSEDED)."""
    condition = "Conditions:\n  Type             Status  Reason\n  ----             ------  ------\n  ReplicaFailure   True    FailedCreate\n"
    assert c.RUNBOOK_POD_ADMISSION_REFUSED not in runbooks(condition)
    scc = 'Error creating: pods "triton-7d9f-" is forbidden: unable to validate against any security context constraint: []\n'
    assert runbooks(scc)[:1] == [c.RUNBOOK_POD_ADMISSION_REFUSED]
