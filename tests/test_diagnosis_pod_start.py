"""A pod scheduled on a node whose container the kubelet cannot create (issue 20, the orchestrator layer):
volumes that do not mount, Secrets, ConfigMaps or keys that do not exist, a security context the image
breaks. Each wording is the kubelet's (see the rule in diagnosis/stack_rules.py for the source files)."""

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

_EVENTS = (
    "Events:\n"
    "  Type     Reason       Age                From               Message\n"
    "  ----     ------       ----               ----               -------\n"
    "  Normal   Scheduled    3m                 default-scheduler  Successfully assigned ml/triton-0 "
    "to node-1\n"
)


@pytest.mark.parametrize(
    "line",
    [
        '  Warning  FailedMount  45s (x8 over 2m)  kubelet  MountVolume.SetUp failed for volume "models" : '
        'persistentvolumeclaim "triton-models" not found',
        "  Warning  FailedMount  60s  kubelet  Unable to attach or mount volumes: "
        "unmounted volumes=[models], unattached volumes=[models kube-api-access-7zbhd]: "
        "context deadline exceeded",
        "  Warning  FailedAttachVolume  1m  attachdetach-controller  AttachVolume.Attach failed for volume "
        '"pvc-3f2a" : rpc error: code = Internal desc = Could not attach volume',
        '  Warning  Failed  12s (x3 over 40s)  kubelet  Error: secret "ngc-api-key" not found',
        '  Warning  Failed  12s (x3 over 40s)  kubelet  Error: configmap "triton-config" not found',
        "  Warning  Failed  5s  kubelet  Error: couldn't find key AWS_ACCESS_KEY_ID in Secret ml/s3-creds",
        "  Warning  Failed  5s  kubelet  Error: container has runAsNonRoot and image will run as root "
        '(pod: "triton-0_ml(1b2c)", container: triton)',
    ],
)
def test_a_kubelet_event_for_a_container_it_cannot_create(line: str) -> None:
    text = _EVENTS + line + "\n"
    findings = diagnose_events(parse_text(text)).findings
    assert findings and findings[0].runbook == c.RUNBOOK_POD_START_FAILED
    assert findings[0].severity == c.IMPACT_CRITICAL
    assert findings[0].evidence[0].line == 5


@pytest.mark.parametrize(
    "reason", ["CreateContainerConfigError", "CreateContainerError", "RunContainerError"]
)
def test_a_pod_status_reason_in_kubectl_get(reason: str) -> None:
    text = (
        "NAME                      READY   STATUS    RESTARTS   AGE\n"
        f"triton-5f7c9d-xk2p9       0/1     {reason}   0          3m\n"
    )
    findings = diagnose_events(parse_text(text)).findings
    assert [f.runbook for f in findings] == [c.RUNBOOK_POD_START_FAILED]


def test_the_runtimes_own_cause_beside_the_reason_comes_first() -> None:
    """CreateContainerError is the kubelet's reason; the runtime's error it quotes is more specific."""
    text = (
        "    State:          Waiting\n"
        "      Reason:       CreateContainerError\n"
        "  Warning  Failed  3s  kubelet  Error: failed to create containerd task: OCI runtime create failed: "
        "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown\n"
    )
    findings = diagnose_events(parse_text(text)).findings
    assert findings[0].runbook == c.RUNBOOK_CUDA_DRIVER_MISMATCH


def test_a_missing_image_pull_secret_is_the_pull_failure() -> None:
    text = (
        _EVENTS
        + "  Warning  FailedToRetrieveImagePullSecret  2m  kubelet  Unable to retrieve some image pull "
        "secrets (ngc); attempting to pull the image may not succeed.\n"
        + '  Warning  Failed  2m  kubelet  Failed to pull image "nvcr.io/nvidia/tritonserver:24.08-py3": '
        "401 Unauthorized\n"
    )
    findings = diagnose_events(parse_text(text)).findings
    assert findings[0].runbook == c.RUNBOOK_IMAGE_PULL_FAILED


def test_volumes_that_mount_are_no_finding() -> None:
    text = (
        _EVENTS
        + '  Normal   SuccessfulMountVolume  3m  kubelet  MountVolume.SetUp succeeded for volume "models"\n'
        + "  Normal   Pulled  2m  kubelet  Container image already present on machine\n"
        + "  Normal   Started  2m  kubelet  Started container triton\n"
    )
    assert not diagnose_events(parse_text(text)).findings


def test_a_failure_line_naming_a_volume_it_cannot_mount_lands_on_the_page() -> None:
    """The class layer: a wording no rule quotes, read by the page's vocabulary."""
    text = "E1204 10:00:00.000000 1 storage.cc:10] failed to mount volume models: nfs server not responding\n"
    assert diagnose_events(parse_text(text)).findings[0].runbook == c.RUNBOOK_POD_START_FAILED
