"""heldout69's container-runtime misses, fixed by class from runc's wordings (libcontainer, 1.0-rc and 1.1+).

- The runtime cannot start the container's command: ``starting container process caused "exec: \\"<path>\\":
  stat <path>: no such file or directory"`` (1.1+: ``unable to start container process: exec: "<path>": stat
  ...``): the image's entrypoint is not in the container, often a volume mounted over its folder
  (pod-start-failed: "the runtime cannot create or start the container").
- runc mounting the node's NVIDIA driver folder into the container fails (``rootfs_linux.go:58: mounting
  "<...>/nvidia" to rootfs "<...>" at "/usr/local/nvidia" caused ...``; 1.1+ ``error mounting "..." to rootfs
  at "..."``): the GPU setup's host mount is missing (gpu-container-runtime). Another folder's mount is not.
"""

from __future__ import annotations

import pytest

from triton_sre.conventions import RUNBOOK_GPU_CONTAINER_RUNTIME, RUNBOOK_POD_START_FAILED
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text


def _first(text: str) -> str | None:
    findings = diagnose_events(parse_text(text + "\n")).findings
    return findings[0].runbook if findings else None


@pytest.mark.parametrize(
    "line",
    [
        "docker: Error response from daemon: OCI runtime create failed: container_linux.go:349: starting"
        ' container process caused "exec: \\"/opt/app/entrypoint.sh\\": stat /opt/app/entrypoint.sh: no'
        ' such file or directory": unknown.',
        "Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc"
        ' create failed: unable to start container process: exec: "/opt/app/entrypoint.sh": stat'
        " /opt/app/entrypoint.sh: no such file or directory: unknown",
    ],
)
def test_the_runtime_cannot_start_the_images_entrypoint(line: str) -> None:
    assert _first(line) == RUNBOOK_POD_START_FAILED


@pytest.mark.parametrize(
    "line",
    [
        'Error: failed to start container "triton": Error response from daemon: OCI runtime create failed:'
        ' container_linux.go:344: starting container process caused "process_linux.go:424: container init'
        ' caused \\"rootfs_linux.go:58: mounting \\\\\\"/run/containerd/k8s.io/triton/nvidia\\\\\\" to rootfs'
        ' \\\\\\"/run/containerd/k8s.io/triton/rootfs\\\\\\" at \\\\\\"/usr/local/nvidia\\\\\\"'
        ' caused \\\\\\"stat /run/containerd/k8s.io/triton/nvidia: no such file or'
        ' directory\\\\\\"\\"": unknown',
        "OCI runtime create failed: runc create failed: unable to start container process: error during"
        ' container init: error mounting "/usr/local/nvidia" to rootfs at "/usr/local/nvidia": stat'
        " /usr/local/nvidia: no such file or directory: unknown",
    ],
)
def test_runc_mounting_the_nodes_nvidia_folder(line: str) -> None:
    assert _first(line) == RUNBOOK_GPU_CONTAINER_RUNTIME


def test_another_folders_mount_is_not_the_gpu_stack() -> None:
    line = (
        "OCI runtime create failed: runc create failed: unable to start container process: error during"
        ' container init: error mounting "/data/models" to rootfs at "/models": stat /data/models: no such'
        " file or directory: unknown"
    )
    assert _first(line) != RUNBOOK_GPU_CONTAINER_RUNTIME
