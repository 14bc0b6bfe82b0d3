"""Pure data: what the layers around Triton say, in their own words, and the runbook each means.

Triton is rarely alone: the NGC image's entrypoint (``/opt/nvidia/nvidia_entrypoint.sh`` and
``/opt/nvidia/entrypoint.d``) checks the driver, the GPU and the CPU before Triton starts and
prints a banner; Kubernetes reports a pod that never ran or keeps restarting in the words of the
kubelet (events ``Back-off restarting failed container``, ``Liveness probe failed``, ``Container
X failed liveness probe, will be restarted``, ``Failed to pull image``), the scheduler's fit and
taint plugins (``0/3 nodes are available: 1 Insufficient nvidia.com/gpu``) and the pod status
reasons (``CrashLoopBackOff``, ``ImagePullBackOff``, ``ErrImagePull``, ``OOMKilled``), read in the cell
``kubectl get pods`` prints (`POD_EXIT_RULES`: a container that ended, by its reason, exit code or signal).
Users paste ``kubectl get/describe`` output or ``docker logs`` as "the log"; docs/diagnosis-kubernetes.md
lists every wording Kubernetes prints about a pod and the page each gets. `rules.py` places these rules in
its priority order; ``tests/test_diagnosis_stack.py`` quotes each wording from logs users posted
(``tests/data/logs/dev4/``, never ``heldout4/``).

Below the image, the container runtime: Docker's daemon (moby ``daemon/errors.go``
``could not select device driver %q with capabilities: %v``, ``daemon/runtime_unix.go`` ``unknown or
invalid runtime name: %s``), the NVIDIA Container Toolkit's hook and runtime
(``nvidia-container-cli``'s stage errors in libnvidia-container ``src/cli/configure.c``:
``initialization error: %s``, ``detection error``, ``device error``, ``requirement error``, ``mount
error``, ``ldcache error``; the Go runtime's ``failed to create NVIDIA Container Runtime`` and
``invoking the NVIDIA Container Runtime Hook directly ... is not supported``), CDI
(``unresolvable CDI devices``, ``failed to inject CDI devices``) and containerd's CRI plugin (``no
runtime for "nvidia" is configured``). Each rule keeps its source and the releases it was read in.

The Windows release (``tritonserver<ver>-win.zip``) and Docker on Windows: core builds a backend's
library name per platform (``libtriton_<backend>.so``, ``triton_<backend>.dll`` on Windows) and quotes
the loader's text after ``unable to load shared library:`` (``dlerror()`` on Linux, Windows' system
message for ``LoadLibrary``'s error code otherwise); moby refuses an image built for another OS or
with no variant for the host's platform, and a layer it cannot register.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from triton_sre import conventions as c

__all__ = [
    "CONTAINER_RUNTIME_RULES",
    "FATAL_EXIT_CODES",
    "FATAL_SIGNALS",
    "GPU_OPERATOR_RULES",
    "KSERVE_STORAGE_RULES",
    "PLATFORM_RULES",
    "POD_EXIT_RULES",
    "REGISTRY_RULES",
    "RESTART_RULES",
    "STACK_RULES",
    "WINDOWS_RULES",
    "CauseRule",
    "rx",
    "status_cell",
]


@dataclass(frozen=True, slots=True)
class CauseRule:
    runbook: str
    pattern: re.Pattern[str]
    source: str = "hand"
    """``hand`` for a pattern written from logs, the inventory entry id for an inventory rule, or the
    source files a container-runtime rule was read from."""
    reads_frames: bool = False
    """True for a rule that reads an exception together with its traceback frames (ENOSPC raised inside
    ``multiprocessing``: a full /dev/shm; a shipped backend's own model.py lacking a library's name): its
    match on the whole text decides, where `frames.classify` otherwise lets the exception line decide."""


def rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{a})" for a in alternatives), re.I)


# The container runtime refuses the container before Triton starts. The hook reaching the driver and
# failing (``initialization``/``detection`` errors, an unmet ``cuda>=`` requirement) is the host
# driver's page; the runtime not knowing the GPU at all (no toolkit, runtime not registered, hook
# missing, CDI spec missing, device unknown, mount/ldcache) is the toolkit's.
CONTAINER_RUNTIME_RULES: Final[tuple[CauseRule, ...]] = (
    CauseRule(
        c.RUNBOOK_CUDA_DRIVER_MISMATCH,
        rx(
            # libnvidia-container src/cli/configure.c, v1.0.0 (2018) to v1.17 (2025):
            # "initialization error: %s" around nvml/driver/cuda/load-library errors of nvc_init.
            r"nvidia-container-cli: (initialization|detection) error",
            # The same stage errors quoted without the "nvidia-container-cli: " prefix (a runtime's
            # wrapped message, a cut paste): the stage's cause is the driver's own error, set by
            # src/error.c error_set_nvml/error_set_cuda ("nvml error: %s", "cuda error: %s", whose
            # fallback text is "unknown error"), src/rpc.c ("driver rpc error") and src/driver.c
            # (``xdlopen`` of libnvidia-ml: "load library failed: %s").
            r"\b(initialization|detection) error: (nvml|cuda|driver( rpc)?) error\b",
            r"\b(initialization|detection) error: load library failed: libnvidia-ml",
            # libnvidia-container src/dsl.c / nvidia-container-toolkit internal/requirements
            # (v1.0 to v1.18): NVIDIA_REQUIRE_CUDA is newer than the driver.
            r"requirement error: unsatisfied condition: cuda",
            r"unsatisfied condition: cuda\s*>",
        ),
        "libnvidia-container src/cli/configure.c; nvidia-container-toolkit internal/requirements",
    ),
    CauseRule(
        c.RUNBOOK_GPU_CONTAINER_RUNTIME,
        rx(
            # moby daemon/errors.go (Docker 19.03, the first with --gpus, to moby 2026-08 b985e23).
            # (the driver's empty quotes are often lost in a markdown paste)
            r"could not select device driver (?:\"[^\"\n]*\" )?with capabilities",
            # moby daemon/runtime_unix.go (Docker 23.0 to 2026-08); before 23.0 the daemon said
            # "Unknown runtime specified nvidia" (nvidia-docker#578, 2017).
            r"unknown or invalid runtime name: \S*nvidia",
            r"Unknown runtime specified \S*nvidia",
            # The runtime is registered but the toolkit's binaries are missing or fail.
            r"\"?nvidia-container-(runtime|runtime-hook|cli|toolkit)\"?: executable file not found",
            r"failed to create NVIDIA Container Runtime",
            r"invoking the NVIDIA Container Runtime Hook directly",
            # an old hook refusing NVIDIA_DRIVER_CAPABILITIES=all (nvidia-container-runtime-hook main.go)
            r"\bunknown driver capability\b",
            # libnvidia-container src/cli/configure.c: later stages of the hook.
            r"nvidia-container-cli: (mount|ldcache|device|container|permission) error",
            # runc mounting the node's NVIDIA driver folder into the container (libcontainer/rootfs_linux.go:
            # "mounting %q to rootfs %q at %q caused ...", runc 1.1+ "error mounting %q to rootfs at %q"):
            # the GPU setup's host mount (AKS's /usr/local/nvidia) is missing on the node.
            r"\bmounting \W{0,8}/[^\s\"]*/nvidia\W{0,8} to rootfs\b",
            r"\berror mounting \W{0,8}/[^\s\"]*/nvidia\W{0,8} to rootfs at\b",
            # CDI (tags.cncf.io/container-device-interface pkg/cdi/cache.go, toolkit >= 1.12, Podman >= 4.1).
            r"unresolvable CDI devices",
            # a CDI spec naming a replaced driver's files (crun: "cannot stat `/usr/lib64/libEGL_nvidia..`")
            r"\bcannot stat [`'\"]?/\S*(?:nvidia|libcuda|libnv)\S*\.so\.\d{3}\.\d+",
            r"failed to inject CDI devices",
            # containerd's CRI plugin and the kubelet: the RuntimeClass handler is not configured.
            r"no runtime for \"?nvidia\"? is configured",
            # The same handler missing as the kubelet quotes the CRI runtime's refusal of the pod sandbox
            # ("Failed to create pod sandbox: rpc error: code = Unknown desc = RuntimeHandler \"nvidia\" not
            # supported"; the runtime's source not read here).
            r"RuntimeHandler \"?nvidia\"? not supported",
            r"RuntimeClass \"?nvidia\"? not found",
            # NVML inside a container that started (the container toolkit's troubleshooting notes,
            # cloud-native-docs container-toolkit/troubleshooting.md): "Unknown Error" once the runtime
            # dropped the GPU devices from the container's cgroup (a systemd daemon-reload or a container
            # update with the systemd cgroup driver); "Insufficient Permissions" where SELinux keeps the
            # container from the device files.
            r"Failed to initialize NVML: *(?:Unknown Error|Insufficient Permissions)",
        ),
        "moby daemon/errors.go, daemon/runtime_unix.go; libnvidia-container src/cli/configure.c; runc "
        "libcontainer/rootfs_linux.go; "
        "nvidia-container-toolkit internal/runtime, cmd/nvidia-container-runtime/README.md",
    ),
)

# The GPU operator's validator (gpu-operator cmd/nvidia-validator, v1.7 2021 to v25.x) checks each
# layer of a node's GPU stack in its own init container (driver-validation, toolkit-validation,
# cuda-validation, plugin-validation; the COMPONENT variable names the layer) before any GPU pod can
# run: one that fails means the node cannot give containers a GPU. Its errors are
# "error validating <driver|toolkit|plugin> installation: %w" / "error validating cuda workload: %w",
# its wait loops print "<driver|toolkit> is not ready"; the kubelet cannot even create a validator
# container whose host volume (driver-install-path: /run/nvidia/driver) or runtime hook is missing.
_VALIDATOR = (
    r"\b(?:driver|toolkit|cuda|plugin)-validation\b|\bgpu-operator-validator\b|\bnvidia-operator-validator\b"
    r"|\bnvidia-[\w-]*-validator\b|\bCOMPONENT:\s+(?:driver|toolkit|cuda|plugin)\b"
)
_FAILED_STATE = (
    r"\bReason:\s+(?:CreateContainerError|CreateContainerConfigError|RunContainerError|ContainerCannotRun"
    r"|Error|CrashLoopBackOff|Init:Error|Init:CrashLoopBackOff)\b|\bExit Code:\s+[1-9]"
)
_DRIVER_STAGE = r"(?:\b(?:initialization|detection|requirement) error\b)"
GPU_OPERATOR_RULES: Final[tuple[CauseRule, ...]] = (
    CauseRule(
        c.RUNBOOK_GPU_CONTAINER_RUNTIME,
        rx(
            r"\berror validating (?:driver|toolkit|plugin) installation: ",
            r"\berror validating cuda workload: ",
            r"(?m:^\s*(?:driver|toolkit) is not ready\s*$)",
            # kubelet: "cannot find volume %q to mount into container %q" for the validator's volumes.
            r"cannot find volume \"(?:driver-install-path|run-nvidia[\w-]*)\" to mount into container",
            r"cannot find volume \"[^\"\n]+\" to mount into container"
            r" \"(?:driver|toolkit|cuda|plugin)-validation\"",
            # A pasted `kubectl describe` of a validator pod whose container failed (either order),
            # unless the paste names the driver stage's own error (the hook's detection/initialization
            # error is the driver's page, cuda-driver-mismatch).
            rf"^(?![\s\S]*?{_DRIVER_STAGE})(?=[\s\S]*?(?:{_VALIDATOR}))[\s\S]*?(?:{_FAILED_STATE})",
            rf"^(?![\s\S]*?{_DRIVER_STAGE})(?=[\s\S]*?(?:{_FAILED_STATE}))[\s\S]*?(?:{_VALIDATOR})",
        ),
        "gpu-operator cmd/nvidia-validator/main.go, assets/state-operator-validation; kubelet "
        "pkg/kubelet/kuberuntime (cannot find volume)",
    ),
)

# The registry refuses or cannot serve the image, in the words of the clients that pull it: containerd
# (the CRI plugin every kind/k3s/GKE/EKS node uses) and moby (Docker), and the registry's own
# error codes that both quote. Whatever the orchestrator calls the event, the fix is the image
# reference or the pull credentials (an NGC API key for nvcr.io).
REGISTRY_RULES: Final[tuple[CauseRule, ...]] = (
    CauseRule(
        c.RUNBOOK_IMAGE_PULL_FAILED,
        rx(
            # containerd remotes/docker/authorizer.go (v1.2, 2018, to v2.1): the token challenge of
            # the registry cannot be answered (no scope, no anonymous or OAuth token).
            r"no scope specified for token auth challenge",
            r"failed to fetch (anonymous|oauth) token",
            r"\bfailed to authorize: ",
            # containerd remotes/docker/resolver.go and pkg/cri (v1.3 to v2.1).
            r"failed to resolve reference \\?\"?\S+",
            r"failed to pull and unpack image",
            r"pulling from host \S+ failed with status code",
            # The distribution spec's error codes (registry/api/errcode), as moby and containerd
            # print them: missing or refused credentials, an unknown repository, the pull rate limit.
            r"\bunauthorized: (authentication required|incorrect username or password)",
            r"\bdenied: requested access to the resource is denied",
            r"\btoomanyrequests: ",
            r"\bname unknown: repository name not known",
            # The distribution registry client's UnexpectedHTTPStatusError (registry/client/errors.go,
            # "Received"/"received unexpected HTTP status: %s"), what moby's pull gives for a registry
            # answering a 4xx/5xx without an error body: a registry outage or a proxy in front of it.
            r"\b[Rr]eceived unexpected HTTP status: [45]\d\d\b",
            # moby distribution/pull_v2.go, daemon/images: a pull that began and could not finish.
            r"\berror pulling image configuration\b",
            # BuildKit resolving a Dockerfile's base image in the registry: the vertex is named
            # "[internal] load metadata for <ref>" (dockerfile2llb, ResolveImageConfig's LogName) and
            # the progress display marks it "ERROR"; the build then ends "failed to resolve source
            # metadata for <ref>".
            # (compose prefixes the service: "[ui internal]").
            r"\bERROR:? \[(?:[\w.-]+ )?internal\] load metadata for \S+",
            r"\bfailed to resolve source metadata for \S+",
            r"(?m:^\s*Error pulling image\b)",
        ),
        "containerd remotes/docker/authorizer.go, resolver.go, pkg/cri; distribution "
        "registry/api/errcode; moby distribution/pull_v2.go",
    ),
)

# The image cannot run on this machine's CPU: an image for another architecture. The kernel's
# ENOEXEC ("Exec format error") when execve() meets a binary for another CPU, as runc reports it
# (libcontainer/standard_init_linux.go "exec user process caused: exec format error" up to 1.0,
# "exec <path>: exec format error" from 1.1) and as Python's OSError prints it ([Errno 8]); and
# Docker's own warning when it runs an image whose platform is not the host's (docker/cli
# cli/command/container/create.go, moby daemon/create.go, Docker 20.10 on): every error after it
# is a consequence (an x86 binary, an x86 library path the hook cannot mount).
PLATFORM_RULES: Final[tuple[CauseRule, ...]] = (
    CauseRule(
        c.RUNBOOK_PLATFORM_UNSUPPORTED,
        rx(
            r"\bexec format error\b",
            r"\[Errno 8\] Exec format error",
            r"requested image's platform \(\S+\) does not match the detected host platform",
        ),
        "Linux ENOEXEC strerror; runc libcontainer/standard_init_linux.go; docker/cli "
        "cli/command/container/create.go; moby daemon/create.go",
    ),
)

# KServe's pod mutator adds a ``storage-initializer`` init container to a predictor pod whose
# storageUri is remote, and records the URI in the annotation
# ``internal.serving.kserve.io/storage-initializer-sourceuri`` (``serving.kubeflow.org`` before 0.7;
# pkg/webhook/admission/pod/storage_initializer_injector.go). The containers start only after it has
# downloaded the model, so a scheduled pod (a scheduling failure has its own events, and that page
# ranks first) still ``Pending`` with a cloud source is waiting on the cloud fetch: credentials, role,
# region or reach of the bucket.
_CLOUD_URI = r"(?:s3|gs)://|https://[\w.-]+\.blob\.core\.windows\.net/"
KSERVE_STORAGE_RULES: Final[tuple[CauseRule, ...]] = (
    CauseRule(
        c.RUNBOOK_CLOUD_REPOSITORY_ACCESS,
        re.compile(
            rf"\bstorage-initializer-sourceuri:[ \t]*(?:{_CLOUD_URI})[^\n]*\n(?:[^\n]*\n){{0,40}}?"
            r"Status:[ \t]+Pending[ \t]*$",
            re.I | re.M,
        ),
        "kserve pkg/webhook/admission/pod/storage_initializer_injector.go (the annotation, 0.7 on; "
        "serving.kubeflow.org before); kubectl describe pod's Status (the pod phase)",
    ),
    # The storage initializer found nothing at the model's URI in the store: the URI (bucket, prefix) is
    # wrong, or the credentials it runs with cannot list it. kserve python/storage kserve_storage.py
    # ("Failed to fetch model. No model found in %s.", S3, GCS, Azure, HTTP and Hugging Face handlers);
    # kfserving's storage.py said "Failed to fetch model. The path or model %s does not exist." (KServe's
    # debugging guide). The predictor pod then shows its init container failing (`Init:Error` in `kubectl
    # get pods`): on a KServe predictor pod that init container is the storage initializer (the guide's
    # "Storage Initializer Fails to Download Model"). Once the kubelet restarts it in a loop
    # (`Init:CrashLoopBackOff`) the crash loop's page, which sends the reader to that container's log, wins.
    CauseRule(
        c.RUNBOOK_CLOUD_REPOSITORY_ACCESS,
        rx(
            r"\bFailed to fetch model\. (?:No model found in|The path or model) \S",
            r"(?m:^\S*-predictor(?:-default)?-\S+[ \t]+\d+/\d+[ \t]+Init:Error\b)",
        ),
        "kserve python/storage/kserve_storage/kserve_storage.py; kfserving storage.py; KServe "
        "docs/developer-guide/debugging.md (Init:Error of a predictor pod is its storage initializer)",
    ),
    # The storage initializer (KServe's, and Seldon Core's which runs kfserving's) refuses a model URI
    # whose scheme its Storage.download does not know (a pvc:// path handed on as a bare /mnt/pvc/...,
    # a typo): the repository path itself, before any model or Python code runs.
    CauseRule(
        c.RUNBOOK_REPOSITORY_PATH_INVALID,
        rx(r"\bCannot recognize storage type for \S"),
        "kfserving/kserve python storage.py Storage.download (\"Cannot recognize storage type for %s\")",
    ),
)


# `kubectl get pods`: the STATUS cell of a pod's row (NAME READY STATUS RESTARTS AGE, NAMESPACE first with
# -A). The cell is printPod's reason (kubernetes pkg/printers/internalversion/printers.go): the phase, the
# pod's status reason, SchedulingGated, "Init:" + an init container's reason, "Init:ExitCode:N" /
# "Init:Signal:N", or the last container's waiting or terminated reason, "ExitCode:N", "Signal:N".
def status_cell(reasons: str) -> str:
    """A pod row of `kubectl get pods` whose STATUS cell is one of ``reasons`` (a regex alternation)."""
    return rf"(?m-i:^(?:[\w.-]+[ \t]+)?[\w.-]+[ \t]+\d+/\d+[ \t]+(?:{reasons})[ \t]+\d+)"


FATAL_SIGNALS: Final = r"4|6|7|8|11"
"""The signals that end a program that did something it must not (SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGSEGV):
a crash; 9 (SIGKILL) is a kill, 2 and 15 a stop."""
FATAL_EXIT_CODES: Final = r"132|134|135|136|139"
"""128 + each of `FATAL_SIGNALS`, as a shell, a container runtime or the kubelet reports the status."""
# A container that ended, in the pod's own reasons (a container that never started is pod-start-failed's).
# SIGKILL (9, exit 137) is the kernel's OOM killer or the kubelet; SIGSEGV, SIGABRT, SIGBUS, SIGILL,
# SIGFPE a crash; any other non-zero exit a container that failed and is restarted. A Job
# whose pods kept failing ends "BackoffLimitExceeded" (pkg/controller/job: "Job has reached the specified
# backoff limit").
POD_EXIT_RULES: Final[tuple[CauseRule, ...]] = (
    CauseRule(
        c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
        rx(
            r"(?-i:(?<![\w-])(?:Init:)?(?:Signal:9|ExitCode:137)\b)",
            # the eviction manager (pkg/kubelet/eviction/helpers.go) and the OOM watcher
            # (pkg/kubelet/oom/oom_watcher_linux.go) in their own words; an Evicted pod's STATUS or Reason
            r"\bPod ephemeral local storage usage exceeds the total limit of containers\b",
            r"\bSystem OOM encountered, victim process: ",
            status_cell("Evicted"),
            r"(?m-i:^Reason:[ \t]+Evicted[ \t]*$)",
        ),
        "kubernetes pkg/printers/internalversion/printers.go, pkg/kubelet/eviction/helpers.go, "
        "pkg/kubelet/oom/oom_watcher_linux.go",
    ),
    CauseRule(
        c.RUNBOOK_SERVER_CRASHED,
        rx(rf"(?-i:(?<![\w-])(?:Init:)?(?:Signal:(?:{FATAL_SIGNALS})|ExitCode:(?:{FATAL_EXIT_CODES}))\b)"),
        "kubernetes pkg/printers/internalversion/printers.go",
    ),
    CauseRule(
        c.RUNBOOK_POD_CRASH_LOOPING,
        rx(
            status_cell(r"(?:Init:)?(?:Error|ExitCode:\d+|Signal:\d+)"),
            # kubectl describe's "Reason: Error" over its "Exit Code:" (pkg/describe/describe.go), -o yaml's
            # "reason: Error" under lastState/state "terminated" (a 137 or 139 beside it ranks first)
            r"(?m-i:^[ \t]+[Rr]eason:[ \t]+Error[ \t]*$)",
            # the same field in -o json ("reason": "Error", keys sorted, four spaces) and in compact JSON
            # (jq -c, a collector's line), where only its terminated state places it
            r'(?m-i:^[ \t]+"reason":[ \t]*"Error",?[ \t]*$)',
            r'(?-i:"terminated":\{[^{}]*"reason":"Error")',
            r"\bJob has reached the specified backoff limit\b|(?-i:\bBackoffLimitExceeded\b)",
        ),
        "kubernetes pkg/printers/internalversion/printers.go; kubectl pkg/describe/describe.go; "
        "pkg/controller/job/job_controller.go",
    ),
)

STACK_RULES: Final[tuple[CauseRule, ...]] = (
    *KSERVE_STORAGE_RULES,
    CauseRule(
        c.RUNBOOK_POD_UNSCHEDULABLE,
        rx(
            # (the reasons' list bounded: a line repeating this head would be rescanned from each one)
            r"\d+/\d+ nodes are available: [^\n]{0,1000}"
            r"(Insufficient|didn't match|untolerated taint|had taint)",
            r"Insufficient nvidia\.com/gpu",
            # The filter plugins' reasons that FitError joins after "0/N nodes are available: ", quoted
            # on their own (kubernetes pkg/scheduler/framework/plugins: tainttoleration "node(s) had
            # untolerated taint {k: v}" (1.25 on; before: "node(s) had taint {k: v}, that the pod didn't
            # tolerate"), nodeaffinity, nodeunschedulable, volumebinding, podtopologyspread,
            # interpodaffinity, nodename, nodevolumelimits).
            r"\b\d+ node\(s\) (?:had untolerated taint|had taint\b[^\n]{0,200}didn't tolerate|were"
            r" unschedulable|had volume node affinity conflict|didn't find available persistent volumes"
            r"|exceed max volume count|didn't match (?:Pod's node affinity|PersistentVolume's node"
            r" affinity|pod (?:anti-)?affinity"
            r"|pod topology spread|the requested node name))",
            r"\bpod has unbound immediate PersistentVolumeClaims\b",
            r"\bFailedScheduling\b",
            # The kubelet's own admission check once a pod is bound (pkg/kubelet/lifecycle/predicate.go,
            # InsufficientResourceError, 1.8 on): reason "OutOf" + the resource name, which kubectl shows
            # as the pod's STATUS ("OutOfnvidia.com/gpu", "OutOfcpu"; resource names are lowercase, so
            # not TensorRT's "OutOfMemory") and its message "Node didn't have enough resource: ...".
            r"(?-i:\bOutOf[a-z][\w.\-/]*)",
            r"Node didn't have enough resource: ",
            r"\bPodScheduled\s+False\b",
            # A pod held back by a scheduling gate: printPod shows the PodScheduled condition's reason.
            r"(?-i:\bSchedulingGated\b)",
            # The kubelet's admission of a bound pod (pkg/kubelet/lifecycle/predicate.go "Predicate %s
            # failed"; the device manager's "requested number of devices unavailable for %s", wrapped as
            # "Allocate failed due to %v, which is unexpected", reason UnexpectedAdmissionError): the node
            # the scheduler chose has not got the GPUs or the affinity after all.
            r"(?-i:\bUnexpectedAdmissionError\b)",
            r"\brequested number of devices unavailable for ",
            r"\bPredicate \w+ failed\b",
            status_cell("NodeAffinity"),
            # Not bound to a node: describe's "Node: <none>" above "Status: Pending" (a bound pod pulling its
            # image or mounting its volumes has a node). `get pods`' STATUS "Pending" alone says no more than
            # that no container has a status yet, bound or not: it stays a failure signal of no page.
            r"(?m:^Node:[ \t]+<none>[ \t]*\n(?:[^\n]*\n){0,40}?Status:[ \t]+Pending[ \t]*$)",
        ),
        "kubernetes pkg/scheduler/framework/plugins, pkg/kubelet/lifecycle/predicate.go, "
        "pkg/kubelet/cm/devicemanager/manager.go, pkg/printers/internalversion/printers.go; kubectl "
        "pkg/describe/describe.go",
    ),
    CauseRule(
        c.RUNBOOK_IMAGE_PULL_FAILED,
        rx(
            r"\b(ImagePullBackOff|ErrImagePull|ErrImageNeverPull|InvalidImageName)\b",
            r"Failed to pull image",
            r"Back-off pulling image",
            r"manifest (for \S+ )?(not found|unknown)",
            r"pull access denied",
            # moby's layer store and containerd's unpacker writing a pulled layer (a disk too small for the
            # image: "failed to register layer: ApplyLayer exit status 1 ... no space left on device")
            r"\bfailed to (?:register|extract|apply) layer\b|\bApplyLayer exit status\b",
        ),
    ),
    # The pod is on a node but the kubelet cannot set its container up (sources below; 1.10 to 1.34).
    CauseRule(
        c.RUNBOOK_POD_START_FAILED,
        rx(
            r"\b(?:CreateContainerConfigError|CreateContainerError|RunContainerError)\b",
            # the runtime could not start it (containerd's CRI "StartError", dockershim "ContainerCannotRun"),
            # a lifecycle hook failed (pkg/kubelet/kuberuntime: "PostStartHookError", "PreStartHookError",
            # "PreCreateHookError"; event FailedPostStartHook), or the pod's sandbox (its network, its
            # runtime handler) could not be made: event FailedCreatePodSandBox "Failed to create pod sandbox"
            r"(?-i:\b(?:ContainerCannotRun|StartError|PostStartHookError|PreStartHookError|PreCreateHookError)\b)",
            r"\bFailed(?:Mount|AttachVolume|MapVolume|PostStartHook|CreatePodSandBox)\b",
            r"\bFailed to create pod sandbox: ",
            r"\bMountVolume\.(?:SetUp|MountDevice|WaitForAttach|NewMounter initialization) failed for volume",
            r"\bAttachVolume\.Attach failed for volume",
            r"\bUnable to (?:attach or )?mount volumes: unmounted volumes=",
            r"\bcouldn't find key \S+ in (?:ConfigMap|Secret) ",
            r"\b(?:secret|configmap) \"[^\"\n]+\" not found",
            r"\bcontainer has runAsNonRoot and image (?:will run as root|has non-numeric user)",
            # runc's start of the container's process (libcontainer: "starting container process caused",
            # 1.1+ "unable to start container process:"; Go os/exec on an absolute path): the image's
            # command or entrypoint path does not exist in the container (a volume over its folder).
            r"\b(?:starting container process caused|unable to start container process:)\W{0,8}exec:"
            r" \W{0,8}/[^\s\"]+\W{0,8}: stat /\S+: no such file or directory",
        ),
        "kubernetes pkg/kubelet/container/sync_result.go, pkg/kubelet/kubelet_pods.go (env references), "
        "pkg/volume/util/operationexecutor/operation_generator.go, pkg/kubelet/volumemanager/"
        "volume_manager.go, pkg/kubelet/kuberuntime (the runAsNonRoot check)",
    ),
    *POD_EXIT_RULES,
    *REGISTRY_RULES,
    *PLATFORM_RULES,
    *CONTAINER_RUNTIME_RULES,
    *GPU_OPERATOR_RULES,
    CauseRule(
        c.RUNBOOK_PLATFORM_UNSUPPORTED,
        rx(
            r"Detected NVIDIA [^\n]{0,80}GPU, which is not (yet )?supported",
            r"This container was built for CPUs supporting at least the AVX",
            r"which is lesser than the minimum supported",
            # TensorFlow's fatal CPU check at import (tensorflow/core/platform/cpu_feature_guard.cc, 1.x-2.x),
            # in a TensorFlow backend or a Python model importing tensorflow: the host CPU lacks the set.
            r"The TensorFlow library was compiled to use \S+ instructions, but these aren't available on your"
            r" machine",
        ),
    ),
)

# The Windows release and Docker on Windows (see the module docstring).
_PLATFORM_NAMES = (
    r"(tensorrt_plan|onnxruntime_onnx|pytorch_libtorch|tensorflow_savedmodel|tensorflow_graphdef|ensemble)"
)
WINDOWS_RULES: Final[tuple[CauseRule, ...]] = (
    CauseRule(
        c.RUNBOOK_BACKEND_PLATFORM_MISMATCH,
        rx(rf"unable to find '(lib)?triton_{_PLATFORM_NAMES}\.(so|dll)' for model"),
        "core src/backend_model.cc (library name from the backend field, r21.02 to r23.06 wording)",
    ),
    CauseRule(
        c.RUNBOOK_BACKEND_NOT_FOUND,
        # The library name core looks for, quoted alone (a client's UNAVAILABLE status, a cut
        # paste): the Windows zip ships only some backends (no triton_python.dll before 24.xx).
        rx(r"unable to find '(lib)?triton_[\w-]+\.(so|dll)' for model"),
        "core src/backend_model.cc (library name per platform, r21.02 to r23.06 wording)",
    ),
    CauseRule(
        c.RUNBOOK_PLATFORM_UNSUPPORTED,
        rx(
            # moby daemon/create.go and image import: a Linux image on Windows containers (or back).
            r"image operating system \\?\"?\w+\\?\"? cannot be used on this platform",
            # moby distribution/pull_v2.go: the tag has no image for this OS/architecture.
            r"no matching manifest for [^\n]{1,80}? in the manifest list entries",
        ),
        "moby daemon/create.go; distribution/pull_v2.go",
    ),
    CauseRule(
        c.RUNBOOK_IMAGE_PULL_FAILED,
        rx(
            # moby distribution/xfer/download.go (Windows windowsfilter/hcsshim or Linux overlay):
            # the pulled layer cannot be registered or verified.
            r"failed to register layer: ",
            r"filesystem layer verification failed for digest",
        ),
        "moby distribution/xfer/download.go, distribution/pull_v2.go",
    ),
)

# Kubernetes restarting the container: a probe (a cause of its own), or a crash loop (a symptom:
# any other cause in the same text wins, these come last in the priority order).
RESTART_RULES: Final[tuple[CauseRule, ...]] = (
    CauseRule(
        c.RUNBOOK_POD_PROBE_FAILED,
        rx(
            r"(Liveness|Startup) probe failed",
            r"failed (liveness|startup) probe, will be restarted",
            # pkg/kubelet/prober/prober.go: "%s probe errored: %v" beside "%s probe failed: %s". A readiness
            # probe only takes the pod out of its Service: while a model is not ready it is a consequence.
            r"\b(?:Liveness|Startup) probe errored: ",
        ),
    ),
    CauseRule(
        c.RUNBOOK_POD_CRASH_LOOPING,
        rx(r"\b(Init:)?CrashLoopBackOff\b", r"Back-off restarting failed container"),
    ),
)
