"""The general layers: failure lines recognised by their log FORMAT (severity.py) and failure lines
read by their cause CLASS (classes.py).

Every example here is written from the format's specification or the emitting source's message
format (glog/klog header, GLib's gmessages.c, GStreamer's gst_debug_log_default, Python logging's
default layout, Go's runtime/logrus/zap, the JVM, libstdc++, Kubernetes event reasons, Knative
conditions, HTTP status lines), NOT taken from any corpus log: the point is wording the project has
never collected.
"""

# ruff: noqa: E501 - log lines written from each format are test data

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.classes import cause_class
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.diagnosis.severity import failure_piece, is_failure_line

FAILURE_LINES = [
    # glog / klog
    "E1201 10:00:00.123456    42 widget.cc:17] could not frobnicate the widget",
    "F1201 10:00:00.123456    42 main.go:88] unrecoverable state",
    # GLib
    "(myapp:1234): GLib-GObject-CRITICAL **: 10:00:00.000: g_object_ref: assertion 'G_IS_OBJECT (object)' failed",
    "** (myapp:1234): ERROR **: 10:00:00.000: something broke",
    "** ERROR: <make_bin:42>: Failed to make the bin",
    # GStreamer debug log, ERROR column
    "0:00:02.000000000  1234 0x7f00aa000b70 ERROR          somesink gstsomesink.c:99:gst_some_sink_start:<sink0> cannot start",
    # Python logging and tracebacks
    "ERROR:myservice.loader:cannot read the thing",
    "2026-12-01 10:00:00,123 - myservice - ERROR - cannot read the thing",
    "2026-12-01 10:00:00 [ERROR] cannot read the thing",
    "2026-12-01 10:00:00.123 | CRITICAL | myservice:main:12 - cannot read the thing",
    "ERROR 12-01 10:00:00 worker.py:12] cannot read the thing",
    "Traceback (most recent call last):",
    # ... and its last line pasted alone (traceback.format_exception_only)
    "ValueError: the widget has no frobnicator",
    "mypkg.errors.WidgetError: the widget has no frobnicator",
    "Exception: the widget has no frobnicator",
    # Go runtime, logrus, zap
    "panic: runtime error: index out of range [3] with length 3",
    "fatal error: all goroutines are asleep - deadlock!",
    'time="2026-12-01T10:00:00Z" level=error msg="reconcile failed" controller=thing',
    '{"level":"error","ts":1764583200.0,"msg":"reconcile failed","controller":"thing"}',
    "2026-12-01T10:00:00.000Z\tERROR\tcontroller/thing.go:12\treconcile failed",
    # Java / Scala
    'Exception in thread "main" java.lang.IllegalStateException: no thing',
    "Caused by: java.io.IOException: stream closed",
    # C++
    "terminate called after throwing an instance of 'std::runtime_error'",
    # Kubernetes events, pod states, conditions
    '  Warning  FailedMount  2m (x3 over 6m)  kubelet  MountVolume.SetUp failed for volume "cache"',
    "5m   Warning   BackOff   pod/thing-7d9f   Back-off restarting failed container",
    "thing-7d9f-abcde   0/1   CrashLoopBackOff   5 (30s ago)   4m",
    "thing-7d9f-abcde   0/1   Init:CrashLoopBackOff   3   2m",
    "    reason: Unschedulable",
    # Knative / KServe conditions
    "thing   http://thing.example.com   thing-00001   False   RevisionFailed",
    'Revision "thing-00001" failed with message: Container failed with: boom.',
    # HTTP
    "< HTTP/1.1 503 Service Unavailable",
    "request failed: unexpected status code 502",
]

HEALTHY_LINES = [
    "I1201 10:00:00.123456    42 widget.cc:17] widget ready",
    "W1201 10:00:00.123456    42 widget.cc:17] widget slow",
    "0:00:02.000000000  1234 0x7f00aa000b70 WARN           somesink gstsomesink.c:99:start:<sink0> slow start",
    "0:00:02.000000000  1234 0x7f00aa000b70 INFO           somesink gstsomesink.c:99:start:<sink0> started",
    "INFO:myservice.loader:read the thing",
    "2026-12-01 10:00:00,123 - myservice - WARNING - the thing is large",
    'time="2026-12-01T10:00:00Z" level=info msg="reconciled" controller=thing',
    '{"level":"info","ts":1764583200.0,"msg":"reconciled"}',
    '  Normal   Pulled     2m    kubelet  Successfully pulled image "registry.example/thing:1"',
    "thing-7d9f-abcde   1/1   Running   0   4m",
    "thing   http://thing.example.com   thing-00001   True",
    "< HTTP/1.1 200 OK",
    "log_error: 1",
    "runtime_backend is set to [somebackend]",
    "UserWarning: the widget is slow",
    "the widget raised no ValueError: all good",
    "ErrorCount: 0",
]


@pytest.mark.parametrize("line", FAILURE_LINES)
def test_a_failure_format_is_recognised(line: str) -> None:
    assert is_failure_line(line), line


@pytest.mark.parametrize("line", HEALTHY_LINES)
def test_a_healthy_line_is_not_a_failure(line: str) -> None:
    assert not is_failure_line(line), line


def test_failure_piece_quotes_the_marked_line_of_a_block() -> None:
    block = "some banner\n  Warning  Unhealthy  1m  kubelet  Readiness probe failed: refused\nafter"
    assert failure_piece(block) == "Warning  Unhealthy  1m  kubelet  Readiness probe failed: refused"
    assert failure_piece("all fine\nstill fine") is None


# Wording written from each class's definition, in no corpus: (line, the runbook of its class).
CLASS_CASES = [
    (
        'Failed to pull image "registry.example/team/thing:7": rpc error: not found',
        c.RUNBOOK_IMAGE_PULL_FAILED,
    ),
    ("could not resolve the image digest for registry.example/thing:7", c.RUNBOOK_IMAGE_PULL_FAILED),
    ("registry.example responded: unauthorized to access repository team/thing", c.RUNBOOK_IMAGE_PULL_FAILED),
    ("0/3 nodes are available: 3 Insufficient example.com/accelerator.", c.RUNBOOK_POD_UNSCHEDULABLE),
    ("pod could not be scheduled on any node pool", c.RUNBOOK_POD_UNSCHEDULABLE),
    (
        "the device has compute capability 3.0, below the minimum 6.0 this build requires",
        c.RUNBOOK_PLATFORM_UNSUPPORTED,
    ),
    ("exec /usr/bin/thing: exec format error", c.RUNBOOK_PLATFORM_UNSUPPORTED),
    ("the installed driver is too old for this runtime", c.RUNBOOK_CUDA_DRIVER_MISMATCH),
    ("GPU 0: out of memory while allocating 2.00 GiB for weights", c.RUNBOOK_GPU_OUT_OF_MEMORY),
    ("worker exited: std::bad_alloc", c.RUNBOOK_HOST_RESOURCE_EXHAUSTED),
    ("failed to deserialize the plan: built for another device", c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE),
    (
        "libfoo_runtime.so.7: cannot open shared object file: No such file or directory",
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
    ),
    ("plugin ABI version mismatch: host 3, plugin 2", c.RUNBOOK_LIBRARY_VERSION_MISMATCH),
    ("ModuleNotFoundError: No module named 'thinglib'", c.RUNBOOK_PYTHON_MODULE_MISSING),
    ('no such element factory "thingfilter"!', c.RUNBOOK_BACKEND_NOT_FOUND),
    ("requested runtime 'thingrt' not registered", c.RUNBOOK_BACKEND_NOT_FOUND),
    ("input 0: dtype float16 does not match the expected float32", c.RUNBOOK_DATATYPE_MISMATCH),
    (
        "input 'pixels' shape [1,3,224] does not match expected [1,3,224,224]",
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
    ),
    ("invalid dimensions for output 'scores'", c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH),
    ("open /models/thing/weights.bin: permission denied", c.RUNBOOK_PERMISSION_DENIED),
    ("s3 bucket models-prod: connection timed out", c.RUNBOOK_CLOUD_REPOSITORY_ACCESS),
    ("open /models/thing/1/weights.bin: no such file or directory", c.RUNBOOK_MODEL_FILE_MISSING),
    ("the model path /models/thing does not exist", c.RUNBOOK_MODEL_FILE_MISSING),
    # The vocabulary each runbook's Meaning gives its class, in wordings no rule knows (thirty-seventh session).
    ("worker: could not select device driver for the accelerator request", c.RUNBOOK_GPU_CONTAINER_RUNTIME),
    ("nvidia-container-cli: mount error: file creation failed", c.RUNBOOK_GPU_CONTAINER_RUNTIME),
    ("unknown runtime specified: nvidia (daemon has no such entry)", c.RUNBOOK_GPU_CONTAINER_RUNTIME),
    ("error: unresolvable CDI devices example.com/gpu=all", c.RUNBOOK_GPU_CONTAINER_RUNTIME),
    ("runtime compute cap 61 is not compatible with this build", c.RUNBOOK_PLATFORM_UNSUPPORTED),
    ("kernels for sm_61 are not supported by this wheel", c.RUNBOOK_PLATFORM_UNSUPPORTED),
    ("this release does not support the current GPU generation", c.RUNBOOK_PLATFORM_UNSUPPORTED),
    ("the AVX2 instruction set is required by this build", c.RUNBOOK_PLATFORM_UNSUPPORTED),
    ("RuntimeError: no CUDA GPUs are available to the worker", c.RUNBOOK_CUDA_DRIVER_MISMATCH),
    ("setup: found no NVIDIA driver on this system", c.RUNBOOK_CUDA_DRIVER_MISMATCH),
    ("probe: nvidia-smi failed with status 9", c.RUNBOOK_CUDA_DRIVER_MISMATCH),
    ("engine: cuInit returned error 999", c.RUNBOOK_CUDA_DRIVER_MISMATCH),
    ("CUDA initialization failed in worker 2", c.RUNBOOK_CUDA_DRIVER_MISMATCH),
    ("writer: /dev/shm has only 67108864 bytes, the ring needs more", c.RUNBOOK_SHM_TOO_SMALL),
    ("ring: failed to allocate 2 GiB under /dev/shm/ring-7", c.RUNBOOK_SHM_TOO_SMALL),
    ("the shared memory segment is too small for 4 ranks", c.RUNBOOK_SHM_TOO_SMALL),
    ("please increase the container's --shm-size and retry", c.RUNBOOK_SHM_TOO_SMALL),
    ("not enough GPU memory to hold the weights (needs 30 GiB)", c.RUNBOOK_GPU_OUT_OF_MEMORY),
    ("device memory exhausted while building the cache", c.RUNBOOK_GPU_OUT_OF_MEMORY),
    ("scheduler: no available memory for the cache blocks", c.RUNBOOK_GPU_OUT_OF_MEMORY),
    ("listener: port 9000 already in use by another process", c.RUNBOOK_SERVER_PORT_IN_USE),
    ("bind(): EADDRINUSE on 0.0.0.0:9000", c.RUNBOOK_SERVER_PORT_IN_USE),
]


@pytest.mark.parametrize(("line", "runbook"), CLASS_CASES)
def test_cause_class_lands_on_the_page_of_its_definition(line: str, runbook: str) -> None:
    assert cause_class(line) == runbook, line


def test_cause_class_precedence_specific_before_generic() -> None:
    # A shared object that cannot be opened is a library, although "No such file" follows.
    assert cause_class("libbar.so: cannot open shared object file: No such file or directory") == (
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH
    )
    # A registry denial is the image, although "denied" is also a permission word.
    assert cause_class("failed to pull image: registry access denied") == c.RUNBOOK_IMAGE_PULL_FAILED
    # A driver "version insufficient" is the driver, not the scheduler's Insufficient <resource>.
    assert cause_class("driver version is insufficient for this runtime") == c.RUNBOOK_CUDA_DRIVER_MISMATCH
    # A region a client registers at request time is no /dev/shm mount: its words are not the class's.
    assert cause_class("unable to find system shared memory region: 'input_data'") is None
    # The container runtime's "device driver" is the runtime, not the driver's version.
    assert cause_class("could not select device driver with capabilities: gpu") == (
        c.RUNBOOK_GPU_CONTAINER_RUNTIME
    )
    # /dev/shm without space is the shared-memory mount before the host's disk.
    assert cause_class("write /dev/shm/seg: no space left on device") == c.RUNBOOK_SHM_TOO_SMALL
    assert cause_class("everything went fine") is None


def _top(text: str) -> tuple[str | None, bool]:
    report = diagnose_events(parse_text(text))
    return (report.findings[0].runbook if report.findings else None), report.has_failure


@pytest.mark.parametrize("line", FAILURE_LINES)
def test_every_failure_format_gets_a_finding(line: str) -> None:
    runbook, failed = _top(line + "\n")
    assert runbook is not None and failed, line


def test_a_healthy_log_in_these_formats_stays_clean() -> None:
    runbook, failed = _top("\n".join(HEALTHY_LINES) + "\n")
    assert runbook is None and not failed


def test_an_unknown_format_failure_lands_on_its_class_page() -> None:
    text = "\n".join(
        [
            "2026-12-01 10:00:00,001 - loader - INFO - starting",
            "2026-12-01 10:00:01,002 - loader - ERROR - input 'pixels' shape [1,3] does not match expected [1,3,8]",
        ]
    )
    assert _top(text) == (c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH, True)


def test_a_warning_naming_a_cause_is_the_root_cause_when_a_failure_follows() -> None:
    warn = '0:00:00.010000000  77 0x55aa00000010 WARN  FACTORY gstfactory.c:1:make: no such element factory "thingfilter"!'
    fail = "** ERROR: <build:12>: Failed to build the pipeline"
    assert _top(f"{warn}\n{fail}\n") == (c.RUNBOOK_BACKEND_NOT_FOUND, True)
    # Without the failure, the warning alone is no error finding.
    assert _top(f"{warn}\n")[1] is False


def test_llm_wording_on_a_settings_line_is_no_cause() -> None:
    assert _top("app  | runtime_backend is set to [vllm]\n") == (None, False)
    runbook, failed = _top("E1201 10:00:00.000000 1 model.py:1] vLLM engine failed: bad engine args\n")
    assert runbook == c.RUNBOOK_LLM_BACKEND_CONFIG and failed


def test_a_backend_library_naming_another_library_is_a_missing_dependency() -> None:
    # Core quotes dlerror(): when it names another library than the backend's own libtriton_<name>.so,
    # the backend was found and one of its dependencies was not.
    row = "| m | 1 | UNAVAILABLE: Not found: unable to load backend library: libbar_codec.so.2: cannot open shared object file: No such file or directory |"
    assert _top(f"| Model | Version | Status |\n{row}\n")[0] == c.RUNBOOK_LIBRARY_VERSION_MISMATCH
    own = "| m | 1 | UNAVAILABLE: Not found: unable to load backend library: /opt/b/thing/libtriton_thing.so: cannot open shared object file: No such file or directory |"
    assert _top(f"| Model | Version | Status |\n{own}\n")[0] == c.RUNBOOK_BACKEND_NOT_FOUND
