"""What Kubernetes says about a pod, in its own wording, as a user pastes it (issue 20, the orchestrator
layer; diag38). Each case is laid out the way kubectl prints it: `kubectl get pods` rows (the printer's
columns NAME READY STATUS RESTARTS AGE, NAMESPACE first with -A), `kubectl describe pod` fields and its
Events table, `-o yaml`. The STATUS cell is printPod's reason (kubernetes
pkg/printers/internalversion/printers.go, v1.24 to v1.34); the event messages are the kubelet's, the
scheduler's and the controllers' (the source of each is on its case). The wordings table with the page
before and after is in docs/diagnosis-coverage.md."""

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

POD = "triton-7d9f8c6b5-x2m4q"


def get_pods(status: str, ready: str = "0/1", restarts: str = "0") -> str:
    """One pod's row under kubectl's header, columns padded the way its tab writer pads them."""
    rows = [("NAME", "READY", "STATUS", "RESTARTS", "AGE"), (POD, ready, status, restarts, "3m")]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    return "".join(
        "   ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() + "\n" for row in rows
    )


def events(kind: str, reason: str, source: str, message: str) -> str:
    """kubectl describe's Events table with one event (pkg/describe/describe.go DescribeEvents)."""
    return (
        "Events:\n"
        "  Type     Reason     Age                From               Message\n"
        "  ----     ------     ----               ----               -------\n"
        f"  {kind:<7}  {reason:<10} 2m (x3 over 4m)    {source:<17}  {message}\n"
    )


def first(text: str) -> tuple[str | None, str]:
    findings = diagnose_events(parse_text(text)).findings
    if not findings:
        return None, ""
    return findings[0].runbook, findings[0].evidence[0].text if findings[0].evidence else ""


# printPod's STATUS cell: the reason of an init container ("Init:" + it, "Init:ExitCode:N", "Init:Signal:N")
# or of the last container that is waiting or terminated ("ExitCode:N" and "Signal:N" when the runtime gave
# no reason); containerd's CRI names a container it could not start "StartError", dockershim
# "ContainerCannotRun"; the kubelet's lifecycle hooks fail as "PostStartHookError" / "PreStartHookError" /
# "PreCreateHookError" (pkg/kubelet/kuberuntime); the kubelet's admission rejects a bound pod as
# "UnexpectedAdmissionError" (the device manager) or "NodeAffinity" (pkg/kubelet/lifecycle/predicate.go);
# the eviction manager leaves "Evicted"; a scheduling gate shows "SchedulingGated".
STATUS_CELLS = [
    ("Error", c.RUNBOOK_POD_CRASH_LOOPING),
    ("ExitCode:1", c.RUNBOOK_POD_CRASH_LOOPING),
    ("Init:Error", c.RUNBOOK_POD_CRASH_LOOPING),
    ("Init:ExitCode:2", c.RUNBOOK_POD_CRASH_LOOPING),
    ("Signal:9", c.RUNBOOK_HOST_RESOURCE_EXHAUSTED),
    ("Init:Signal:9", c.RUNBOOK_HOST_RESOURCE_EXHAUSTED),
    ("Init:ExitCode:137", c.RUNBOOK_HOST_RESOURCE_EXHAUSTED),
    ("Evicted", c.RUNBOOK_HOST_RESOURCE_EXHAUSTED),
    ("Signal:11", c.RUNBOOK_SERVER_CRASHED),
    ("ExitCode:139", c.RUNBOOK_SERVER_CRASHED),
    ("StartError", c.RUNBOOK_POD_START_FAILED),
    ("ContainerCannotRun", c.RUNBOOK_POD_START_FAILED),
    ("PostStartHookError", c.RUNBOOK_POD_START_FAILED),
    ("PreStartHookError", c.RUNBOOK_POD_START_FAILED),
    ("PreCreateHookError", c.RUNBOOK_POD_START_FAILED),
    ("SchedulingGated", c.RUNBOOK_POD_UNSCHEDULABLE),
    ("UnexpectedAdmissionError", c.RUNBOOK_POD_UNSCHEDULABLE),
    ("NodeAffinity", c.RUNBOOK_POD_UNSCHEDULABLE),
]


@pytest.mark.parametrize(("status", "runbook"), STATUS_CELLS)
def test_a_status_cell_of_kubectl_get_pods(status: str, runbook: str) -> None:
    got, quoted = first(get_pods(status, restarts="3 (20s ago)"))
    assert got == runbook
    assert status in quoted, "the finding quotes the pod's row"


def test_the_namespace_column_of_get_pods_all_namespaces() -> None:
    text = (
        "NAMESPACE   NAME                     READY   STATUS       RESTARTS      AGE\n"
        f"ml          {POD}   0/1     StartError   3 (12s ago)   2m\n"
    )
    assert first(text)[0] == c.RUNBOOK_POD_START_FAILED


@pytest.mark.parametrize(
    "status", ["Running", "Completed", "Init:0/1", "PodInitializing", "ContainerCreating", "Terminating"]
)
def test_a_healthy_or_progressing_pod_gives_no_finding(status: str) -> None:
    ready = "1/1" if status in ("Running", "Terminating") else "0/1"
    assert not diagnose_events(parse_text(get_pods(status, ready))).findings


def test_a_cell_word_outside_the_status_column_is_no_finding() -> None:
    """'Error' or 'Evicted' decide only in the STATUS cell of a pod's row, not in prose."""
    assert first("the Error budget panel shows Evicted requests at 3/4 of 12 replicas\n")[0] != (
        c.RUNBOOK_POD_CRASH_LOOPING
    )


# kubectl describe pod (staging/src/k8s.io/kubectl/pkg/describe/describe.go): a container's State and Last
# State with their Reason and Exit Code; the pod's own Node, Status, Reason and Message.
def _container(state: str, reason: str, extra: str = "") -> str:
    return (
        "Containers:\n  triton:\n    Image:          nvcr.io/nvidia/tritonserver:24.08-py3\n"
        f"    State:          {state}\n      Reason:       {reason}\n{extra}"
        "    Ready:          False\n    Restart Count:  0\n"
    )


@pytest.mark.parametrize(
    ("text", "runbook", "quoted"),
    [
        (_container("Terminated", "Error", "      Exit Code:    1\n"), c.RUNBOOK_POD_CRASH_LOOPING, "Error"),
        (
            _container(
                "Terminated",
                "StartError",
                "      Message:      failed to create containerd task: failed to create shim task: "
                "OCI runtime create failed: runc create failed: unable to start container process: "
                'exec: "tritonserver ": '
                "executable file not found in $PATH: unknown\n      Exit Code:    128\n",
            ),
            c.RUNBOOK_POD_START_FAILED,
            "StartError",
        ),
        (
            _container("Waiting", "CrashLoopBackOff")
            + "    Last State:     Terminated\n      Reason:       ContainerCannotRun\n"
            + "      Exit Code:    128\n",
            c.RUNBOOK_POD_START_FAILED,
            "ContainerCannotRun",
        ),
        (
            f"Name:             {POD}\nNamespace:        ml\nNode:             <none>\n"
            "Labels:           app=triton\nStatus:           Pending\n",
            c.RUNBOOK_POD_UNSCHEDULABLE,
            "Pending",
        ),
        (
            "Status:           Failed\nReason:           UnexpectedAdmissionError\n"
            "Message:          Pod was rejected: Allocate failed due to requested number of devices "
            "unavailable "
            "for nvidia.com/gpu. Requested: 1, Available: 0, which is unexpected\n",
            c.RUNBOOK_POD_UNSCHEDULABLE,
            "UnexpectedAdmissionError",
        ),
        (
            "Status:           Failed\nReason:           Evicted\n",
            c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
            "Evicted",
        ),
    ],
)
def test_kubectl_describe_pod(text: str, runbook: str, quoted: str) -> None:
    got, line = first(text)
    assert got == runbook
    assert quoted in line


def test_a_bound_pod_still_pending_is_not_unschedulable() -> None:
    """A pod on a node that is pulling its image shows Status: Pending too: the pull is the page."""
    text = (
        f"Name:             {POD}\nNode:             gpu-node-1/10.0.0.7\nStatus:           Pending\n"
        + events(
            "Warning",
            "Failed",
            "kubelet",
            'Failed to pull image "nvcr.io/nvidia/tritonserver:24.08-py": '
            "rpc error: code = NotFound desc = failed to pull and unpack image",
        )
    )
    assert first(text)[0] == c.RUNBOOK_IMAGE_PULL_FAILED


def test_yaml_terminated_reason_error() -> None:
    """-o yaml's lastState.terminated (fields in alphabetical order: exitCode before reason)."""
    text = (
        "    lastState:\n      terminated:\n        containerID: containerd://4f1c\n        exitCode: 1\n"
        '        finishedAt: "2024-05-02T10:11:12Z"\n        reason: Error\n'
    )
    assert first(text)[0] == c.RUNBOOK_POD_CRASH_LOOPING


@pytest.mark.parametrize(
    ("kind", "reason", "source", "message", "runbook"),
    [
        # pkg/kubelet/prober/prober.go "%s probe errored: %v"
        (
            "Warning",
            "Unhealthy",
            "kubelet",
            "Liveness probe errored: rpc error: code = NotFound desc = failed to exec in container: "
            "container "
            "is in CONTAINER_EXITED state",
            c.RUNBOOK_POD_PROBE_FAILED,
        ),
        # pkg/kubelet/kuberuntime/kuberuntime_container.go, FailedPostStartHook with the hook's handler error
        (
            "Warning",
            "FailedPostStartHook",
            "kubelet",
            'Exec lifecycle hook ([/bin/sh -c /opt/warmup.sh]) for Container "triton" in Pod '
            f"\"{POD}_ml(5c1e)\" failed - error: command '/bin/sh -c /opt/warmup.sh' exited with 1: "
            ', message: ""',
            c.RUNBOOK_POD_START_FAILED,
        ),
        # pkg/kubelet/kuberuntime/kuberuntime_manager.go "Failed to create pod sandbox: %v"
        (
            "Warning",
            "FailedCreatePodSandBox",
            "kubelet",
            "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for "
            "sandbox "
            '"9b2f": plugin type="calico" failed (add): error getting ClusterInformation: connection is '
            "unauthorized: Unauthorized",
            c.RUNBOOK_POD_START_FAILED,
        ),
        # pkg/kubelet/eviction/helpers.go
        (
            "Warning",
            "Evicted",
            "kubelet",
            "Pod ephemeral local storage usage exceeds the total limit of containers 10Gi.",
            c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
        ),
        # pkg/kubelet/oom/oom_watcher_linux.go "System OOM encountered, victim process: %s, pid: %d"
        (
            "Warning",
            "SystemOOM",
            "kubelet",
            "System OOM encountered, victim process: tritonserver, pid: 41234",
            c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
        ),
        # pkg/kubelet/cm/devicemanager: the device plugin's GPUs gone between scheduling and admission
        (
            "Warning",
            "UnexpectedAdmissionError",
            "kubelet",
            "Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. "
            "Requested: 1, Available: 0, which is unexpected",
            c.RUNBOOK_POD_UNSCHEDULABLE,
        ),
        # pkg/kubelet/lifecycle/predicate.go "Predicate %s failed"
        ("Warning", "NodeAffinity", "kubelet", "Predicate NodeAffinity failed", c.RUNBOOK_POD_UNSCHEDULABLE),
        # pkg/controller/job: the Job's pods kept failing
        (
            "Warning",
            "BackoffLimitExceeded",
            "job-controller",
            "Job has reached the specified backoff limit",
            c.RUNBOOK_POD_CRASH_LOOPING,
        ),
    ],
)
def test_an_event_of_the_kubelet_or_a_controller(
    kind: str, reason: str, source: str, message: str, runbook: str
) -> None:
    got, line = first(events(kind, reason, source, message))
    assert got == runbook
    assert message[:30] in line


def test_a_readiness_probe_alone_stays_a_consequence() -> None:
    """Readiness failing while a model loads or failed takes the pod out of its Service; it names no page
    (a readiness rule lowered the blind sets' total by two: listed first, it hid the cause beside it)."""
    text = events(
        "Warning", "Unhealthy", "kubelet", "Readiness probe failed: HTTP probe failed with statuscode: 400"
    )
    assert first(text)[0] not in (c.RUNBOOK_POD_PROBE_FAILED, c.RUNBOOK_POD_CRASH_LOOPING)


def test_the_cause_in_the_same_paste_ranks_before_the_pods_exit() -> None:
    """A container that exited (Error) because Triton could not load a model: Triton's line decides."""
    text = (
        _container("Terminated", "Error", "      Exit Code:    1\n")
        + "E1202 10:09:40.123456 1 model_lifecycle.cc:638] failed to load 'resnet' version 1: Internal: "
        "unable to create stream: the provided PTX was compiled with an unsupported toolchain.\n"
    )
    assert first(text)[0] == c.RUNBOOK_CUDA_DRIVER_MISMATCH


def test_healthy_events_give_no_finding() -> None:
    text = (
        events("Normal", "Scheduled", "default-scheduler", f"Successfully assigned ml/{POD} to gpu-node-1")
        + "  Normal   Pulled     2m                 kubelet            Container image "
        '"nvcr.io/nvidia/tritonserver:24.08-py3" already present on machine\n'
        "  Normal   Created    2m                 kubelet            Created container: triton\n"
        "  Normal   Started    2m                 kubelet            Started container triton\n"
    )
    assert not diagnose_events(parse_text(text)).findings


def _event_rows(*rows: tuple[str, str, str, str]) -> str:
    """kubectl describe's Events table with several events, in the order the kubelet recorded them."""
    head = events(*rows[0])
    return head + "".join(f"  {k:<7}  {r:<10} 2m (x3 over 4m)    {s:<17}  {m}\n" for k, r, s, m in rows[1:])


# pkg/kubelet/kuberuntime/kuberuntime_container.go executePreStopHook: the kubelet runs the preStop hook
# while it stops a container, records a failure as a Warning event FailedPreStopHook (its message
# "PreStopHook failed" since the secret-leak fix, 1.22 on; before, the handler's own message of
# pkg/kubelet/lifecycle/handlers.go) and stops the container all the same: no failure of the pod's start,
# its run or its model.
PRE_STOP = "FailedPreStopHook"
PRE_STOP_MESSAGES = [
    "PreStopHook failed",
    'Exec lifecycle hook ([/bin/sh -c sleep 5 && kill -TERM 1]) for Container "triton" in Pod '
    f"\"{POD}_ml(5c1e)\" failed - error: command '/bin/sh -c sleep 5 && kill -TERM 1' exited with 137: "
    ', message: ""',
]


def _get_events(reason: str, message: str) -> str:
    """`kubectl get events` (and `kubectl events`): LAST SEEN TYPE REASON OBJECT MESSAGE."""
    return (
        "LAST SEEN   TYPE      REASON              OBJECT                           MESSAGE\n"
        f"12s         Normal    Killing             pod/{POD}    Stopping container triton\n"
        f"10s         Warning   {reason:<19} pod/{POD}    {message}\n"
    )


@pytest.mark.parametrize("message", PRE_STOP_MESSAGES)
@pytest.mark.parametrize("layout", ["describe", "get events"])
def test_a_failed_pre_stop_hook_alone_is_no_failure(layout: str, message: str) -> None:
    if layout == "describe":
        text = _event_rows(
            ("Normal", "Killing", "kubelet", "Stopping container triton"),
            ("Warning", PRE_STOP, "kubelet", message),
        )
    else:
        text = _get_events(PRE_STOP, message)
    report = diagnose_events(parse_text(text))
    assert not report.has_failure
    assert all(f.severity != c.IMPACT_CRITICAL for f in report.findings)  # at most a warning
    # ... as a hook that failed on start is: the same table with FailedPostStartHook fails
    assert diagnose_events(parse_text(text.replace(PRE_STOP, "FailedPostStartHook"))).has_failure


@pytest.mark.parametrize(
    ("text", "runbook", "quoted"),
    [
        # the container was OOM-killed; the kubelet then stopped it and its hook failed
        (
            _container("Waiting", "CrashLoopBackOff")
            + "    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n"
            + _event_rows(("Warning", PRE_STOP, "kubelet", "PreStopHook failed")),
            c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
            "OOMKilled",
        ),
        (
            _event_rows(
                ("Warning", PRE_STOP, "kubelet", "PreStopHook failed"),
                (
                    "Warning",
                    "BackOff",
                    "kubelet",
                    f"Back-off restarting failed container triton in pod {POD}",
                ),
            ),
            c.RUNBOOK_POD_CRASH_LOOPING,
            "Back-off restarting",
        ),
        # a liveness probe's kill runs the hook too (kuberuntime_manager.go: "Container %s failed liveness
        # probe, will be restarted", then killContainer)
        (
            _event_rows(
                (
                    "Warning",
                    "Unhealthy",
                    "kubelet",
                    'Liveness probe failed: Get "http://10.0.3.17:8000/v2/health/'
                    'live": context deadline exceeded (Client.Timeout exceeded while awaiting headers)',
                ),
                ("Normal", "Killing", "kubelet", "Container triton failed liveness probe, will be restarted"),
                ("Warning", PRE_STOP, "kubelet", "PreStopHook failed"),
            ),
            c.RUNBOOK_POD_PROBE_FAILED,
            "probe",
        ),
        (
            "E1202 10:09:40.123456 1 model_lifecycle.cc:638] failed to load 'resnet' version 1: Internal: "
            "unable to create stream: the provided PTX was compiled with an unsupported toolchain.\n"
            + _get_events(PRE_STOP, "PreStopHook failed"),
            c.RUNBOOK_CUDA_DRIVER_MISMATCH,
            "PTX",
        ),
    ],
)
def test_a_failed_pre_stop_hook_beside_a_real_failure_reads_as_that_failure(
    text: str, runbook: str, quoted: str
) -> None:
    assert diagnose_events(parse_text(text)).has_failure
    got, line = first(text)
    assert got == runbook
    assert quoted in line and PRE_STOP not in line


def test_an_unexplained_error_line_beside_a_failed_pre_stop_hook_still_fails() -> None:
    """An E line no rule explains (core's load verdict with a reason no page knows) keeps its finding."""
    text = (
        "E1207 10:09:40.123456 1 model_lifecycle.cc:638] failed to load 'resnet' version 1: Internal: "
        "initialize() returned an unexpected value\n" + _get_events(PRE_STOP, "PreStopHook failed")
    )
    report = diagnose_events(parse_text(text))
    assert report.has_failure
    assert report.findings[0].model == "resnet"
    assert all(PRE_STOP not in e.text for f in report.findings for e in f.evidence)
