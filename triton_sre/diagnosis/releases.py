"""Pure: which Triton release a log comes from, and what is known about a finding in that release.

The release is read from what the server prints (first match wins, the log is not searched
further): the NGC banner (``NVIDIA Release 24.08 (build 107631420)``, ``Triton Server Version
2.49.0``) and the options table (``| server_version | 2.50.0 |``); `server_release_from_version`
maps a server version to its NGC release (2.7.0 = 21.02, monthly since; 21.01 had no release).

Where the server prints neither, the container image the log runs names it: ``docker run ...
nvcr.io/nvidia/tritonserver:24.08-py3``, kubelet's ``Container image "...:24.03-py3" already present``,
a Dockerfile's ``FROM``. `ReleaseReader` takes that release only when the log names one release of
the server image and no other (a paste that tried three tags names none of them); the client SDK
image (``-py3-sdk``) is no server.

`ngc_requirements` adds what the release needs of the host (CUDA, driver, compute capability) to a
driver or GPU finding. `KNOWN_ISSUES` ties a finding (its runbook and a wording in its evidence) in a
range of releases to the public issue or document that describes it and the release that changes it;
`advice` returns the sentences to append to the finding's one-line fix. Each entry names its source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from triton_sre import conventions as c
from triton_sre.diagnosis import ngc_requirements

__all__ = [
    "KNOWN_ISSUES",
    "KnownIssue",
    "ReleaseReader",
    "advice",
    "image_release_in",
    "release_in",
    "server_release_from_version",
    "server_version_of_release",
]

_NGC_RELEASE = re.compile(r"\bNVIDIA Release (\d\d)\.(\d\d)\b")
_SERVER_VERSION = re.compile(r"(?:Triton Server Version|server_version)\s*\|?\s*(\d+)\.(\d+)\.\d+")
# the server image's tag: "tritonserver:24.08-py3", "-trtllm-python-py3", "-py3-igpu", "20.03.1-py3"
_IMAGE_TAG = re.compile(r"\btritonserver:(\d\d)\.(\d\d)(?:\.\d+)?(-[\w.-]*)?")


_SKIPPED_2_60 = 60
"""From 2.60.0 on, one month later again: there was no 25.07 release (2.59.0 is 25.06, the release notes
go on with 25.08; 2.75.0 is 26.11, github.com/triton-inference-server/server/releases/tag/v2.75.0)."""


def server_release_from_version(major: int, minor: int) -> str | None:
    """The NGC release (``YY.MM``) of a Triton server version, for 2.7.0 (21.02) and later."""
    if major != 2 or minor < 7:
        return None
    # 2.7 -> 21.02: one month (21.01) had no release; nor had 25.07.
    months = minor + 7 + (minor >= _SKIPPED_2_60)
    return f"{20 + (months - 1) // 12:02d}.{(months - 1) % 12 + 1:02d}"


def server_version_of_release(release: str) -> str | None:
    """The Triton server version (``2.N``) of an NGC release ``YY.MM`` from 21.02 on (the inverse of
    `server_release_from_version`); None for earlier, skipped (25.07) or malformed releases."""
    m = re.fullmatch(r"(\d\d)\.(\d\d)", release)
    if m is None or release == "25.07":
        return None
    minor = (int(m.group(1)) - 20) * 12 + int(m.group(2)) - 7
    minor -= minor > _SKIPPED_2_60
    return f"2.{minor}" if minor >= 7 else None


def release_in(text: str) -> str | None:
    """The NGC release a line names, if it is a banner or server-version line."""
    m = _NGC_RELEASE.search(text)
    if m:
        return f"{m.group(1)}.{m.group(2)}"
    m = _SERVER_VERSION.search(text)
    if m:
        return server_release_from_version(int(m.group(1)), int(m.group(2)))
    return None


def image_release_in(text: str) -> set[str]:
    """The NGC releases of the Triton server images a line names (the SDK image is no server)."""
    return {
        f"{m.group(1)}.{m.group(2)}" for m in _IMAGE_TAG.finditer(text) if "sdk" not in (m.group(3) or "")
    }


class ReleaseReader:
    """The release a log comes from, read line by line: the server's own word first (the first
    banner or ``server_version`` line), else the one server image the log names."""

    __slots__ = ("_images", "_printed")

    def __init__(self) -> None:
        self._printed: str | None = None
        self._images: set[str] = set()

    def note(self, text: str) -> None:
        if self._printed is not None:
            return
        self._printed = release_in(text)
        if self._printed is None and len(self._images) < 2 and "tritonserver:" in text:
            self._images |= image_release_in(text)

    def note_version(self, version: str) -> None:
        """The version a live server reports (``GET /v2``: ``2.51.0``)."""
        m = re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)?(?:[.+-]\S*)?", version.strip())
        if m and self._printed is None:
            self._printed = server_release_from_version(int(m.group(1)), int(m.group(2)))

    @property
    def release(self) -> str | None:
        if self._printed is not None:
            return self._printed
        return next(iter(self._images)) if len(self._images) == 1 else None


@dataclass(frozen=True, slots=True)
class KnownIssue:
    runbooks: tuple[str, ...]
    """The findings it explains (a crash may read as the backend's own or as an unknown failure)."""
    wording: re.Pattern[str]
    """Matched against the finding's evidence and message."""
    first: str
    """First affected release (``YY.MM``), inclusive."""
    last: str
    """Last affected release, inclusive."""
    advice: str
    source: str


KNOWN_ISSUES: Final[tuple[KnownIssue, ...]] = (
    KnownIssue(
        (c.RUNBOOK_LIBRARY_VERSION_MISMATCH,),
        re.compile(r"could not be parsed as XGBoost model", re.I),
        "21.08",
        "24.02",
        "In this release the FIL backend reads XGBoost JSON older than 1.7 only; 24.03 and later "
        "read XGBoost 1.7+ JSON (24.10+ also UBJSON): re-save the model with xgboost<1.7 or upgrade.",
        "https://github.com/triton-inference-server/fil_backend/blob/main/docs/model_support.md#version-compatibility",
    ),
    KnownIssue(
        (c.RUNBOOK_LIBRARY_VERSION_MISMATCH,),
        re.compile(r"different (major )?(version of )?Treelite", re.I),
        "24.03",
        "99.12",
        "From 24.03 the FIL backend loads Treelite checkpoints of Treelite 3.9 or 4.x only: re-export "
        "the checkpoint with a matching Treelite, or ship the XGBoost/LightGBM model file instead.",
        "https://github.com/triton-inference-server/fil_backend/blob/main/docs/model_support.md#version-compatibility",
    ),
    KnownIssue(
        (c.RUNBOOK_PYTHON_MODULE_MISSING,),
        re.compile(r"\$\$TRITON_MODEL_DIRECTORY", re.I),
        "00.01",
        "21.08",
        "Releases before 21.09 do not expand $$TRITON_MODEL_DIRECTORY in EXECUTION_ENV_PATH: give an "
        "absolute path, or upgrade to 21.09 or later.",
        "https://github.com/triton-inference-server/server/pull/3314",
    ),
    KnownIssue(
        (c.RUNBOOK_BACKEND_NOT_FOUND,),
        re.compile(r"\bmodel\.py\b", re.I),
        "23.10",
        "23.10",
        "23.10 names a missing backend as '<backend>/model.py' (its new Python-based-backend lookup): "
        "the backend the config names is what is missing from the backends directory; 23.11 and later "
        "word it correctly.",
        "https://github.com/triton-inference-server/server/blob/r23.10/RELEASE.md#known-issues",
    ),
    # The Python backend's custom metrics (python_backend, from 23.05): two crashes reported on 26.01.
    KnownIssue(
        # server#8662: at shutdown the stub's destructor runs before the MetricFamily objects are gone.
        (c.RUNBOOK_UNKNOWN_LOAD_FAILURE,),
        re.compile(r"MetricFamily|python::Metric::Clear\b", re.I),
        "23.05",
        "26.08",
        "A crash in the Python backend's custom-metrics code at shutdown (the stub's destructor runs "
        "before the model's MetricFamily objects are freed, server#8662): inference is not affected; "
        "26.09 fixes it (python_backend#429): upgrade, or drop the custom metrics.",
        "https://github.com/triton-inference-server/server/releases/tag/v2.73.0",
    ),
    KnownIssue(
        # server#8663: a Metric shared across stub processes observed after its model was reloaded; still
        # open after 26.09 (server#8892 tracks the fix in core#471).
        (c.RUNBOOK_UNKNOWN_LOAD_FAILURE,),
        re.compile(r"python::Metric::Observe|CustomMetricsMess", re.I),
        "23.05",
        "99.12",
        "A crash in the Python backend's custom-metrics code after a model reload (a metric observed "
        "through state the reload freed, server#8663, open; no fixing release yet): restart the server "
        "instead of reloading models that register custom metrics, or drop the metrics.",
        "https://github.com/triton-inference-server/server/issues/8663",
    ),
    KnownIssue(
        (c.RUNBOOK_UNKNOWN_LOAD_FAILURE,),
        re.compile(r"onnxruntime_providers_tensorrt|TensorrtExecutionProvider", re.I),
        "24.03",
        "24.03",
        "24.03's ONNX Runtime segfaults with the TensorRT execution provider when several instances of "
        "a model load on one GPU (microsoft/onnxruntime#20089): load models serially and keep one "
        "instance per GPU, or use a later release.",
        "https://github.com/triton-inference-server/server/releases/tag/v2.44.0",
    ),
    KnownIssue(
        # The preprocessing model.py's ValueError: the Python backend's status of a raised exception.
        (c.RUNBOOK_PYTHON_MODEL_ERROR,),
        re.compile(r"rope_scaling", re.I),
        "24.09",
        "24.09",
        "The 24.09 TensorRT-LLM image ships a transformers release older than 4.43, which rejects "
        "Llama 3.1's rope_scaling (NVIDIA/TensorRT-LLM#2121): `pip install -U transformers` in the image.",
        "https://github.com/triton-inference-server/server/releases/tag/v2.50.0",
    ),
    KnownIssue(
        (c.RUNBOOK_PLATFORM_UNSUPPORTED,),
        re.compile(r"GPU instances not supported", re.I),
        "00.01",
        "99.12",
        "On Jetson the Python backend is built without GPU support in every release (docs/user_guide/"
        "jetson.md): use KIND_CPU for Python models.",
        "https://github.com/triton-inference-server/server/blob/main/docs/user_guide/jetson.md",
    ),
    # From here on: the "Known Issues" of Triton's own release notes (RELEASE.md on the r22.05-r23.10
    # branches, docs/introduction/release_notes.md on r24.12-r25.01, or the GitHub release page from 23.11
    # on), each keyed on the wording the failure prints.
    KnownIssue(
        # PyTorch (1.11+, NGC 22.02+) refuses the pre-1.4 "model.json" TorchScript archive with this
        # misleading message (pytorch/pytorch#77840): a model from another framework release.
        (c.RUNBOOK_LIBRARY_VERSION_MISMATCH,),
        re.compile(r"Legacy model format is not supported", re.I),
        "22.02",
        "99.12",
        "From 22.02 the PyTorch backend cannot read TorchScript saved in the legacy format (PyTorch 1.2 "
        "or older, NGC 19.09 or earlier), whatever the message says about mobile: load the model in a "
        "recent PyTorch and save it again with torch.jit.save.",
        "https://github.com/triton-inference-server/server/blob/r22.05/RELEASE.md#known-issues",
    ),
    KnownIssue(
        # server#6202: the bundled opentelemetry-cpp crashes the server after its OTLP exporter times out.
        (c.RUNBOOK_UNKNOWN_LOAD_FAILURE,),
        re.compile(r"OTLP HTTP Client|otlp_http_(?:client|exporter)", re.I),
        "23.04",
        "23.08",
        "OpenTelemetry tracing (added in 23.04) can segfault the server once the OTLP exporter cannot "
        "reach its collector (server#6202): make the collector endpoint reachable or run with "
        "--trace-config mode=triton, or move to 23.09 or later, whose notes no longer list it.",
        "https://github.com/triton-inference-server/server/blob/r23.08/RELEASE.md#known-issues",
    ),
    KnownIssue(
        # The TensorRT backend's check (tensorrt_backend src/instance_state.cc, from 24.08) of a
        # reformat-free tensor; the engine gives no more specific runbook for it.
        (c.RUNBOOK_UNKNOWN_LOAD_FAILURE,),
        re.compile(r"uses a (?:non-)?linear IO format, but 'is_non_linear_format_io'", re.I),
        "24.08",
        "99.12",
        "With auto-complete disabled, a TensorRT engine whose tensors use a reformat-free (non-linear) "
        "layout loads only when config.pbtxt sets is_non_linear_format_io: true on exactly those "
        "inputs/outputs: fix the flag on the tensor the error names, or drop --disable-auto-complete-config.",
        "https://github.com/triton-inference-server/server/releases/tag/v2.51.0",
    ),
    KnownIssue(
        # DCGM's NVSwitch module crashing in libnvidia-nscq (the stack in server#7952) on NVSwitch hosts;
        # first listed in the 25.01 notes (not in 24.12's), still in 25.08's, no fix named.
        (c.RUNBOOK_UNKNOWN_LOAD_FAILURE,),
        re.compile(r"libnvidia-nscq|libdcgmmodulenvswitch|nscq_session_path_observe", re.I),
        "25.01",
        "99.12",
        "This segfault comes from DCGM's NVSwitch monitoring (libnvidia-nscq) inside Triton's GPU "
        "metrics, typically at shutdown, not from a model: start tritonserver with "
        "--allow-gpu-metrics=false on NVSwitch systems and scrape GPU metrics with dcgm-exporter instead.",
        "https://github.com/triton-inference-server/server/releases/tag/v2.56.0",
    ),
    KnownIssue(
        # The 22.09-23.02 notes (qa/L0_custom_ops preloads libpython, DLIS-4152): a custom-op library
        # built in the PyTorch container against another Python than the server's.
        (c.RUNBOOK_LIBRARY_VERSION_MISMATCH,),
        re.compile(r"undefined symbol: _?Py[A-Z_]\w*"),
        "22.09",
        "23.02",
        "The release notes of 22.09-23.02 list PyTorch custom operators failing to load on undefined "
        "Python symbols: start tritonserver with the matching libpython first in LD_PRELOAD (for example "
        "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libpython3.8.so.1:<your custom op .so>).",
        "https://github.com/triton-inference-server/server/blob/r22.09/RELEASE.md#known-issues",
    ),
    KnownIssue(
        # server#4566, listed in the 22.07 notes only: the abort is inside TensorRT.
        (c.RUNBOOK_UNKNOWN_LOAD_FAILURE,),
        re.compile(r"Signal \(6\) received(?s:.*)(?:libnvinfer|libtriton_tensorrt)", re.I),
        "22.07",
        "22.07",
        "The 22.07 release notes list inference on several instances of a TensorRT model aborting with "
        "signal 6 inside TensorRT (server#4566): use one instance per GPU (instance_group count 1) or "
        "move to 22.08 or later.",
        "https://github.com/triton-inference-server/server/blob/r22.07/RELEASE.md#known-issues",
    ),
    KnownIssue(
        # The 23.10 notes and every later list read (24.10, 24.12, 25.01); no fix named. Triton's
        # handler's stack through the TensorRT-LLM backend, or the shell's report of the core dump.
        (c.RUNBOOK_UNKNOWN_LOAD_FAILURE, c.RUNBOOK_LLM_BACKEND_CONFIG),
        re.compile(
            r"(?s)(?=.*(?:Signal \((?:6|11)\) received|core dumped|Segmentation fault))"
            r"(?=.*(?:libtriton_tensorrtllm|inflight_batcher_llm|tensorrt_llm::))",
        ),
        "23.10",
        "99.12",
        "Release notes from 23.10 on list a core dump of the TensorRT-LLM backend at server shutdown "
        "(teardown only, inference is not affected): if the crash came while the server was stopping "
        "(after 'Waiting for in-flight requests to complete'), this is that known issue, not the model.",
        "https://github.com/triton-inference-server/server/blob/r23.10/RELEASE.md#known-issues",
    ),
    KnownIssue(
        # The 24.10-25.03 notes (vllm-project/vllm#6766): explicit model control with the default
        # multiprocessing executor and tensor_parallel_size > 1 fails at initialize.
        (c.RUNBOOK_UNKNOWN_LOAD_FAILURE, c.RUNBOOK_LLM_BACKEND_CONFIG),
        re.compile(r"could not acquire lock for <_io\.BufferedWriter name='<stdout>'>"),
        "24.10",
        "25.03",
        "The 24.10-25.03 release notes list vLLM models with tensor_parallel_size > 1 failing at "
        "initialize with this interpreter-shutdown error when the server runs with "
        '--model-control-mode=explicit: set "distributed_executor_backend": "ray" in model.json.',
        "https://github.com/triton-inference-server/server/blob/r25.01/docs/introduction/release_notes.md",
    ),
    KnownIssue(
        # The 23.04 and 23.05 notes ("Tensorflow backend no longer supports TensorFlow version 1"); core's
        # CheckTFSpecializedBackendName (src/backend_config.cc, core#182) refuses
        # --backend-config=tensorflow,version=1 at model load with this message, in every release since.
        (c.RUNBOOK_UNKNOWN_LOAD_FAILURE,),
        re.compile(r"no longer supports Tensorflow 1", re.I),
        "23.04",
        "99.12",
        "From 23.04 Triton ships TensorFlow 2 only: drop --backend-config=tensorflow,version=1 from the "
        "command line (TensorFlow 2 loads most TensorFlow 1 SavedModels and GraphDefs); a model that "
        "needs TensorFlow 1 ops (tf.contrib) must be re-exported with TensorFlow 2 or served from 23.03 "
        "or earlier.",
        "https://github.com/triton-inference-server/server/blob/r23.04/RELEASE.md#known-issues",
    ),
    KnownIssue(
        # The 24.12 and 25.01 notes ("Restart support was temporarily removed for Python models"):
        # python_backend r24.06 (PR #364) dropped the restart of a dead stub in execute ("Stub process is
        # unhealthy and it will be restarted." up to r24.05); not back on main (server#8604). The error
        # is the one every later request gets (stub_launcher.cc / python_be.cc), not a load failure;
        # through an ensemble: "[500] in ensemble '<e>', Stub process '<i>' is not healthy." (server#8518).
        (c.RUNBOOK_PYTHON_MODEL_ERROR, c.RUNBOOK_ENSEMBLE_DEPENDENCY),
        re.compile(
            r"(?s)\A(?!.*(?:failed to load|Failed to (?:pre)?initialize|ModelInstanceInitialize))"
            r".*Stub process (?:'[^'\n]+' )?is not healthy"
        ),
        "24.06",
        "99.12",
        "From 24.06 the Python backend no longer restarts a stub that died while serving (the release "
        "notes' 'Restart support was temporarily removed for Python models'; server#8604): every later "
        "request to that instance fails this way while /v2/health still answers 200, until the model is "
        "loaded again (POST /v2/repository/models/<model>/load with --model-control-mode=explicit) or the "
        "server restarts; find what killed the stub (dmesg, the container's OOM kills) first.",
        "https://github.com/triton-inference-server/server/blob/r24.12/docs/introduction/release_notes.md#known-issues",
    ),
    KnownIssue(
        # The 24.12 and 25.01 notes list the Python backend's Windows gaps (GPU tensors, metrics, custom
        # execution environments, the load/unload APIs); stub_launcher.cc refuses EXECUTION_ENV_PATH on
        # Windows with this message from python_backend r24.02 to main.
        (c.RUNBOOK_PYTHON_MODULE_MISSING, c.RUNBOOK_UNKNOWN_LOAD_FAILURE),
        re.compile(r"Custom execution environments are not currently supported on Windows", re.I),
        "24.02",
        "99.12",
        "The Python backend's Windows build runs no custom execution environment (listed in the release "
        "notes' known issues with GPU tensors, metrics and the model load/unload APIs): remove "
        "EXECUTION_ENV_PATH from config.pbtxt and install the model's packages into the Python the server "
        "uses, or serve the model from the Linux container.",
        "https://github.com/triton-inference-server/server/blob/r24.12/docs/introduction/release_notes.md#known-issues",
    ),
)


def advice(runbook: str, text: str, release: str | None) -> str | None:
    """Known-issue sentences for a finding of ``runbook`` whose evidence/message is ``text``."""
    if release is None:
        return None
    notes = [
        f"{issue.advice} (Triton {release}; see {issue.source})"
        for issue in KNOWN_ISSUES
        if runbook in issue.runbooks and issue.first <= release <= issue.last and issue.wording.search(text)
    ]
    needs = ngc_requirements.advice(runbook, text, release)  # what the release needs of the host
    if needs:
        notes.append(needs)
    return " ".join(notes) or None
