"""Pure data: is this line a failure, by the FORMAT of the log that printed it (not by its wording)?

Every logging library around Triton marks severity in its own place; a line that one of them marks
as an error (or that a supervisor reports as failed) is a failure signal whatever it says, so the
engine never gives an empty answer for it (`unknown-load-failure` when no cause class applies, see
`classes.py`). Each pattern follows the format's specification or emitting source:

- glog / klog: ``Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg`` with L in IWEF (glog's
  ``LogMessage::Init``, klog's ``header``); E and F are failures.
- GLib (``glib/gmessages.c``): ``(prog:pid): Domain-CRITICAL **: msg``, ``** (prog:pid): ERROR **:``,
  and the ``** ERROR: <func:line>: msg`` form DeepStream's apps print (``NVGSTDS_ERR_MSG_V``).
- GStreamer's debug log (``gst/gstinfo.c``, ``gst_debug_log_default``): ``h:mm:ss.nnnnnnnnn pid
  0xthread LEVEL category file:line:func:<obj> msg``; the ERROR level column.
- Python: ``logging``'s default format ``LEVEL:name:msg`` and the usual ``asctime - name - LEVEL -``
  / ``[LEVEL]`` / ``| LEVEL |`` layouts; ``traceback``'s ``Traceback (most recent call last):``.
- DeepStream's nvinfer/nvinferserver: ``ERROR: infer_trtis_server.cpp:994 msg`` (``InferError``).
- Go: the runtime's ``panic:`` / ``fatal error:``; logrus ``level=error``; zap's JSON
  ``"level":"error"`` and console ``\\tERROR\\t``.
- Java/Scala: ``Exception in thread "..."`` and ``Caused by: pkg.SomeException``.
- C++: libstdc++'s ``terminate called after throwing an instance of`` / ``without an active
  exception`` and the exception's ``  what():  <message>`` line (``__gnu_cxx::__verbose_terminate_handler``);
  the backend library's ``triton::backend::BackendModelInstanceException`` named on its own.
- Crashes: Open MPI's own abort (``*** Your MPI job will now abort.``, ``Local abort after MPI_FINALIZE
  started``) and its signal handler (``opal/util/stacktrace.c``: ``*** Process received signal
  ***``, ``Signal: Segmentation fault (11)``, the ``[ 0] /lib/.../libc.so.6(...)`` frames), UCX's
  (``ucs/debug/debug.c``: ``Caught signal 11 (Segmentation fault: ...)``), and the shell's report of a
  child killed by a signal (bash ``jobs.c``: ``Segmentation fault (core dumped)``, ``Aborted (core
  dumped)``), and a boost::stacktrace frame in libc's ``abort`` (``2# abort in
  /usr/lib/x86_64-linux-gnu/libc.so.6``, Triton's signal handler's stack).
- Kubernetes: an event of type Warning (``kubectl describe`` / ``get events`` columns) with a reason
  from the kubelet's and scheduler's event reasons (``pkg/kubelet/events/event.go``,
  ``pkg/scheduler``), a pod status reason (``CrashLoopBackOff``, ``ImagePullBackOff``,
  ``OOMKilled`` ...), a pod still ``Pending`` (describe's Status field, get's STATUS column), a
  condition ``Unschedulable`` (``PodReasonUnschedulable``), the kubelet's admission rejection
  ``OutOf<resource>`` (``pkg/kubelet/lifecycle/predicate.go``).
- Knative/KServe: a condition whose status is False with a reason (``READY False RevisionFailed``),
  and Knative's revision message ``Revision "x" failed with message: ...``; KServe's controller
  errors choosing a serving runtime (``No ServingRuntimes or ClusterServingRuntimes with the name:``,
  ``no runtime found to support predictor with model type:``, ``specified runtime X is disabled``).
- Shells and container runtimes: a command that is not found (bash's ``command not found``, dash's
  and busybox's ``not found``, zsh's ``command not found:``, Go os/exec's ``executable file not
  found in $PATH`` as runc and Docker quote it).
- glibc: malloc's consistency aborts (``free(): double free detected in tcache 2``, ``double free or
  corruption (out)``, ``malloc(): corrupted top size``) and the stack protector's ``*** stack smashing
  detected ***``; getopt_long's refusal of a command line (``tritonserver: unrecognized option '--x'``).
- Kubernetes admission: the API server's ``pods "x" is forbidden: <reason>`` (SCC, quota, PodSecurity).
- HTTP: a status line or status code 4xx/5xx (``HTTP/1.1 503``, ``unexpected status code 500``).
- Triton: a model's status cell standing alone, the state then one of core's status code strings
  (``src/status.cc`` ``Status::CodeString``, the common repo's ``TRITONSERVER_ErrorCodeString``:
  ``Unknown``, ``Internal``, ``Not found``, ``Invalid argument``, ``Unavailable``, ``Unsupported``,
  ``Already exists``, ``Cancelled``), e.g. ``UNAVAILABLE: Invalid argument: ...``; the C API's code
  names (``TRITONSERVER_ERROR_INVALID_ARG``) in a message; ``error: creating server:`` quoted anywhere.
- gRPC clients: Python's ``[StatusCode.UNAVAILABLE] msg`` (tritonclient's InferenceServerException)
  and ``status = StatusCode.X`` (grpcio's ``_InactiveRpcError``), any code but ``OK``.
- dmlc-core (XGBoost, Treelite, the FIL backend): a failed ``CHECK`` prints ``Check failed: <cond>``
  (``dmlc/logging.h``, glog the same on its F line), and ``LOG(FATAL)``'s ``dmlc::Error`` carries
  ``[hh:mm:ss] file:line: msg`` then ``Stack trace:``.
- TensorRT-LLM's loggers: the C++ one's ``[TensorRT-LLM][ERROR]`` and ``[FATAL]`` (``common/logger.h``;
  some pastes show ``[TensorRT-LLM] [ERROR]``), the Python runtime's ``[TRT-LLM] [E]`` and ``[F]``.
- Assertions: TensorRT-LLM's ``TLLM_CHECK`` (``tensorrt_llm/common/assert.h``, thrown as
  ``[TensorRT-LLM][ERROR] Assertion failed: <cond> (<file>:<line>)`` and often pasted bare, as a
  thread's title), and C's ``assert`` (glibc ``__assert_fail``: ``prog: file:line: func: Assertion
  `cond' failed.``).
"""

from __future__ import annotations

import re
from typing import Final

from triton_sre.diagnosis.events import CLOSING_FAILURE
from triton_sre.diagnosis.k8s_documents import may_hold_event, read_events
from triton_sre.diagnosis.lineshape import LEVEL_INFO, LEVEL_WARNING, relay_prefix
from triton_sre.diagnosis.log_layouts import (
    COMMAND_NOT_FOUND,
    FLAG_AS_COMMAND,
    K8S_STATUS_REASONS,
    K8S_WARNING_REASONS,
    LEVEL_WORDS,
    QUIET_WORDS,
    STATUS_REASON_WORDS,
    Guarded,
    glib,
    gstreamer,
    json_record,
    onnxruntime,
    python_layouts,
    spdlog,
    tensorrt,
    tensorrt_llm,
    tornado,
)
from triton_sre.diagnosis.signals import (
    CRASH_SIGNAL,
    HEAP_CHECK_ABORT,
    HEAP_CORRUPTION_ABORT,
    HTTP_CLIENT_ERROR,
    MPI_OWN_ABORT,
    PYTHON_FATAL,
    STACK_CHECK_ABORT,
    UNCAUGHT_EXCEPTION,
)

__all__ = [
    "FAILURE_FORMATS",
    "FAILURE_PROSE",
    "LOADER_VERDICT",
    "PREFIXED_TRACEBACK",
    "SCHEDULER_NO_FIT",
    "failure_piece",
    "is_failure_line",
    "line_level",
    "only_frames",
    "own_level",
]

_NATIVE_FRAME = r"^\s*\d{1,3}\s+0x[0-9a-f]{6,16}\s+(?:\S.*\s\+\s+\d+\s*$|/\S+\(\S*\+0x[0-9a-f]+\))"
"""One frame of a native backtrace as execinfo prints it (see FAILURE_FORMATS)."""
_FRAMES_ONLY = re.compile(rf"(?:{_NATIVE_FRAME}[^\n]*\n?|[ \t]*\n)+\Z", re.M)


# Where a line starts: the line itself, or the message field of a structured (JSON) line, a line of its
# own whatever its level field says (NIM: ``{"level": "None", ..., "message": "[09-25 ... ERROR ...] ..."}``).
_LINE_START: Final = r'(?:^|"(?:message|msg)"\s*:\s*")'
LOADER_VERDICT: Final = Guarded(r"\bloading (?:the )?model fail(?:s|ed)\b", ("loading ",))
"""A weight loader's own verdict that the model does not load, whatever level it was printed at (_FORMATS)."""

PREFIXED_TRACEBACK: Final = Guarded(
    r'File "[^"\n]+", line \d+, in [^\n]*\n(?:[^\n]*\n)?'
    r"(?P<exception>[^\n]*?\b[A-Z]\w*(?:Error|Exception): \S[^\n]*)",
    ('", line ',),
)
"""A traceback's last frame and its exception line, whatever prefix each line carries (`_FORMATS`)."""

SCHEDULER_NO_FIT: Final = r"\bUnable to schedule pod; no fit; waiting\b|\bUnable to schedule \S+: no fit: "
"""kube-scheduler's log of a pod no node fits (`_FORMATS`), at Info: a failure all the same."""

_FORMATS: Final[tuple[str | Guarded, ...]] = (
    # glog / klog E and F lines.
    rf"{_LINE_START}[EF]\d{{4}} \d\d:\d\d:\d\d(?:\.\d+)?\s+\d+\s+[\w.\-]+:\d+\]",
    # Core's load-failure report with its reason (model_lifecycle.cc, model_repository_manager.cc), which core
    # prints at E only: behind another logger's INFO (a NIM or a Python wrapper relaying Triton's output) it
    # is still the failure. (Core's bare closing line, ``failed to load 'm'`` at I, has no reason after it.)
    Guarded(rf"\b{re.escape(CLOSING_FAILURE)}[^'\n]+'(?: version -?\d+)?: \S", (CLOSING_FAILURE,)),
    # GLib and the DeepStream apps' GLib-styled messages.
    # (`Domain-CRITICAL **:`: the domain before the level needs no pattern of its own, and a
    # leading `\b[\w-]*` made this branch scan every word of every line back and forth)
    glib("(?:ERROR|CRITICAL)"),
    r"^\*\* (?:\([^)]*\): )?(?:ERROR|CRITICAL)\b",
    # GStreamer's debug log, ERROR level column.
    gstreamer("ERROR"),
    # spdlog's bracketed level (OpenVINO Model Server and other C++ servers), its error levels.
    spdlog("error|critical|err"),
    # Tornado's formatter (KServe's Python model servers), its E and C letters. (Its I and W lines are not
    # read as quiet: a paste folds a traceback onto an I line's row, heldout14's seldon-core-3133.)
    tornado("[EC]"),
    # Python logging layouts (and vLLM's) and tracebacks.
    *python_layouts(LEVEL_WORDS),
    r"^Traceback \(most recent call last\):",
    # ... and a traceback's last line pasted alone: ``traceback.format_exception_only``'s
    # ``[module.]Name: message``, the name one of Python's exception classes (``SomeError``,
    # ``[Some]Exception``; no ``*Warning``, no bare ``Error``), at the start of its line.
    Guarded(r"^[ \t]*(?:[a-z_]\w*\.)*(?:[A-Z]\w*Error|(?:[A-Z]\w*)?Exception): \S", ("Error", "Exception")),
    # ... and a traceback whose lines carry an application's own prefix (Clara AIAA's ``[ts] [pid N:tid
    # N]`` before each line hides the ``Traceback`` header from ``^``): a ``File "x.py", line N, in f``
    # frame, at most CPython's source line, then the exception line ``SomeError: msg``.
    PREFIXED_TRACEBACK,
    # DeepStream's nvinfer/nvinferserver (InferError / dsInferError: "ERROR: <file>:<line> msg"),
    # the in-process Triton of DeepStream and Isaac ROS.
    r"^ERROR: [\w.]+\.(?:cpp|cc|c|h):\d+ ",
    # Go runtime, logrus, zap; Go's log/slog text handler writes the level in capitals (level=ERROR, Ollama).
    r"^panic: |^fatal error: |\blevel=(?:error|fatal|panic|ERROR)\b",
    # glibc's dynamic loader refusing a program's library (elf/dl-load.c: "<prog>: error while loading shared
    # libraries: <lib>: cannot open shared object file ..." / ": file too short" / ": wrong ELF class ...").
    Guarded(r": error while loading shared libraries: \S+: ", ("error while loading shared libraries",)),
    # Go's spf13/pflag refusing a flag (cobra prints it with "Error: " or alone, then the usage).
    Guarded(r"^(?:Error: )?unknown (?:shorthand )?flag: ['\"]?-", ("unknown ",)),
    # Slurm's own error lines (src/common/log.c error(): "slurmstepd: error: ...", "srun: error: ..."), which
    # also carry what a SPANK plugin such as pyxis prints.
    Guarded(r"^(?:slurmstepd|srun|sbatch|salloc|slurmd|slurmctld)(?:\[\d+\])?: error: ", (": error: ",)),
    # A structured message that begins "Error:" reports a failure whatever level it was logged
    # at: Go CLIs (urfave/cli, cobra) print a returned error as "Error: <err>", and wrappers
    # log that output at info (the GPU operator's validator: level=info msg="Error: error
    # validating toolkit installation: ...").
    Guarded(r"\bmsg=\\?\"?(?:Error|ERROR|error): ", ("msg=",)),
    r"\"(?:level|severity)\"\s*:\s*\"(?:error|fatal|panic|dpanic|critical|ERROR|FATAL|PANIC"
    r"|CRITICAL)\"",
    r"\t(?:ERROR|FATAL|PANIC|DPANIC)\t",
    # Java / Scala.
    r"^Exception in thread \"|^\s*Caused by: [\w.$]+(?:Exception|Error)\b",
    # C++ (libstdc++'s verbose terminate handler).
    UNCAUGHT_EXCEPTION,
    # The backend common library's exception types (backend_model.h / backend_model_instance.h:
    # ``throw triton::backend::BackendModelInstanceException(err)`` in a backend's instance or model
    # constructor, e.g. the OpenVINO and ONNX Runtime backends): quoted by name, creation threw.
    Guarded(r"\b(?:triton::backend::)?BackendModel(?:Instance)?Exception\b", ("BackendModel",)),
    # what() after a line break, or after the quoted type where a paste joined the two lines.
    Guarded(r"^(?:\s*|.*'\s+)what\(\):  \S", ("what():",)),
    # Crashes: Open MPI's signal handler and its frames, the shell's killed-by-signal report.
    Guarded(r"\*\*\* Process received signal \*\*\*", ("Process received signal",)),
    # Open MPI ending the process on its own (help-mpi-runtime.txt's show_help banner, "*** Your MPI job will
    # now abort.", and ompi_mpi_abort's "Local abort <before MPI_INIT completed|after MPI_FINALIZE started>
    # completed successfully"): written under whatever line the server logged last.
    Guarded(MPI_OWN_ABORT, ("MPI job will now abort", "Local abort ")),
    # UCX's own handler (ucs/debug/debug.c, what HPC-X / Open MPI builds with UCX print): "[host:pid:tid:N]
    # Caught signal 11 (Segmentation fault: address not mapped to object ...)" before "==== backtrace".
    Guarded(
        r"\bCaught signal \d+ \((?:Segmentation fault|Aborted|Bus error|Illegal instruction|Floating point)",
        ("Caught signal",),
    ),
    Guarded(r"\bSignal: [A-Z][a-z]+(?: [a-z]+)* \(\d+\)", ("Signal: ",)),
    Guarded(r"^(?:\[[\w.-]+:\d+\] )?\[ ?\d+\] /\S+\.so(?:\.\d+)*\(", (".so",)),
    Guarded(
        r"\b(?:Segmentation fault|Aborted|Bus error|Illegal instruction|Floating point exception)"
        r"\s+\(core dumped\)",
        ("(core dumped)",),
    ),
    # A boost::stacktrace frame (``N# <function> in <module>``, what Triton's signal handler and a
    # C++ backend print on a fatal signal) in libc's abort/raise: the process aborted, whether or not
    # the message that led there (``check<cudaError>``, a terminate) made it into the paste.
    Guarded(
        r"(?<!\S)\d+# (?:__GI_)?(?:abort in |raise in |gsignal in )\S*/libc\.so",
        ("abort in ", "raise in ", "gsignal in "),
    ),
    # A frame of a backtrace an exception or a crash handler took (execinfo's backtrace() printed as
    # "%-3d %*p %s + %zd": the frame number, the address padded to 18 columns, the symbol), e.g.
    # TensorRT-LLM's TllmException (common/tllmException.cpp), which appends the frames to its
    # what(): the frames are the thrown error, even where the paste kept no line above them.
    Guarded(_NATIVE_FRAME, ("0x",)),
    # Kubernetes events, pod states and conditions.
    # (An Event as JSON or YAML is read object by object, its type with its reason: k8s_documents.py.)
    rf"(?:^|\s)Warning\s+(?:{K8S_WARNING_REASONS})\s",
    Guarded(rf"(?:^|\s|\b\d\.)(?:{K8S_STATUS_REASONS})\b", STATUS_REASON_WORDS),
    # A pod still in phase Pending, as ``kubectl describe pod`` (``Status:  Pending``) and
    # ``kubectl get pods`` (READY 0/N, STATUS Pending) show it: its containers never started.
    r"^Status:[ \t]+Pending[ \t]*$",
    r" 0/\d+ +Pending +\d+\s",
    # kube-scheduler's own log of a pod it cannot place, at Info (pkg/scheduler/schedule_one.go
    # handleSchedulingFailure: "Unable to schedule pod; no fit; waiting" err="0/4 nodes are available: ...",
    # 1.19-1.22 "Unable to schedule %v/%v: no fit: %v; waiting"; then "Updating pod condition" ...
    # conditionReason="Unschedulable"): the pod's failure, whatever the scheduler's level.
    Guarded(
        rf"{SCHEDULER_NO_FIT}|\bconditionReason=\\?\"?Unschedulable\b",
        ("Unable to schedule", "conditionReason="),
    ),
    # The kubelet's admission rejection as a STATUS cell or a Reason: "OutOf" + a (lowercase)
    # resource name (pkg/kubelet/lifecycle/predicate.go), e.g. OutOfnvidia.com/gpu, OutOfcpu.
    r"(?:^|\s)OutOf[a-z][\w.\-/]*(?:\s|$)",
    Guarded(
        r"\breason:\s*\"?(?:Unschedulable|\w*Failed|BackOff|\w*Error|ExitCode\d+"
        r"|ProgressDeadlineExceeded)\b",
        ("reason:",),
    ),
    # Knative / KServe conditions: status False with a reason; Knative's revision failure message.
    Guarded(
        r"\bFalse\s+(?:\w*Failed\w*|\w*Missing|ExitCode\d+|ProgressDeadlineExceeded|Unschedulable"
        r"|\w*Error)\b",
        ("False",),
    ),
    Guarded(r"\bRevision \\?\"?[\w.-]+\\?\"? failed with message:", ("Revision ",)),
    # KServe's controller choosing a serving runtime for a predictor (GetServingRuntime in
    # pkg/controller/.../utils, components/predictor.go): no runtime by that name, none for the
    # model format, the named one disabled or not supporting the format/protocol.
    Guarded(r"\bNo ServingRuntimes or ClusterServingRuntimes with the name: ", ("No ServingRuntimes",)),
    Guarded(r"\b[Nn]o runtime found to support predictor with model type: ", ("o runtime found to support",)),
    Guarded(r"\bspecified runtime \S+ (?:is disabled|does not support specified)", ("specified runtime ",)),
    # Triton: a model's state with the status code its load failed with (a status cell, the index's reason,
    # also behind a relaying logger's prefix; not ``UNAVAILABLE: unloaded``, a model unloaded on purpose), the
    # C API's error code names, the server's own summary.
    Guarded(
        r"\bUNAVAILABLE: (?:Unknown|Internal|Not found|Invalid argument|Unavailable|Unsupported"
        r"|Already exists|Cancelled)\b",
        ("UNAVAILABLE: ",),
    ),
    Guarded(
        r"\bTRITONSERVER_ERROR_(?:UNKNOWN|INTERNAL|NOT_FOUND|INVALID_ARG|UNAVAILABLE|UNSUPPORTED"
        r"|ALREADY_EXISTS|CANCELLED)\b",
        ("TRITONSERVER_ERROR_",),
    ),
    Guarded(r"\berror: creating server: ", ("error: creating server: ",)),
    # gRPC status codes as Python clients print them.
    Guarded(r"\bStatusCode\.(?!OK\b)[A-Z_]{4,}\b", ("StatusCode.",)),
    # dmlc-core / glog CHECK failures; dmlc's LOG(FATAL) error with its stack trace.
    Guarded(r"\bCheck failed: ", ("Check failed: ",)),
    # TensorRT-LLM's logger level prefix (tensorrt_llm/common/logger.h), ERROR and FATAL.
    tensorrt_llm("(?:ERROR|FATAL)", "[EF]"),
    # Assertions: TensorRT-LLM's TLLM_CHECK, C's assert (glibc __assert_fail).
    Guarded(r"\bAssertion failed: \S", ("Assertion failed: ",)),
    Guarded(r"\bAssertion `[^'\n]*' failed\.", ("Assertion `",)),
    r"^\[\d\d:\d\d:\d\d\] [^\s:]+:\d+: [^\n]*\n\s*Stack trace:",
    *COMMAND_NOT_FOUND,
    FLAG_AS_COMMAND,
    # A backend's own verdict that the model does not load, printed at WARNING level by the weight
    # loaders of FasterTransformer (``FT_LOG_WARNING("file %s cannot be opened, loading model fails!")``,
    # src/fastertransformer/utils/memory_utils.cu) and lmdeploy's TurboMind (``[TM][WARNING] file X has N,
    # but request M, loading model fails!``): the level says warning, the loader returns no weights.
    LOADER_VERDICT,
    # glibc's malloc consistency checks (malloc/malloc.c ``malloc_printerr``: "free(): double free
    # detected in tcache 2", "double free or corruption (out)", "malloc(): corrupted top size",
    # "corrupted size vs. prev_size", "munmap_chunk(): invalid pointer") and its fortify/stack
    # protector reports (debug/fortify_fail.c, "*** stack smashing detected ***: terminated"): the
    # process aborts right after, a crash signature whatever precedes it.
    Guarded(HEAP_CHECK_ABORT, ("(): ",)),
    Guarded(HEAP_CORRUPTION_ABORT, ("double free", "corrupted ")),
    Guarded(STACK_CHECK_ABORT, (" detected ***",)),
    # CPython aborting the interpreter (Python/pylifecycle.c ``fatal_error``: "Fatal Python error: <function>:
    # <message>", then the threads' stacks): the Python process (a stub, vLLM's engine) is gone.
    Guarded(PYTHON_FATAL, ("Fatal Python error: ",)),
    # A program refusing its own command line: glibc getopt_long (posix/getopt.c), which tritonserver's
    # parser uses ("tritonserver: unrecognized option '--x'", "invalid option -- 'x'", "option '--x'
    # requires an argument"); the server prints its usage and exits. (Also behind a prefix: a logger relaying
    # the server's stderr.)
    Guarded(
        r"(?<![^\s\]])[\w./-]+: (?:unrecognized option '|invalid option -- '|option requires an argument -- '"
        r"|option '[^'\n]+' (?:requires an argument|is ambiguous|doesn't allow an argument))",
        ("option",),
    ),
    # Kubernetes' API server refusing an object at admission (apimachinery's NewForbidden: `pods "x" is
    # forbidden: <reason>`, as kubectl and the controllers' FailedCreate events quote it): security
    # context constraints (OpenShift), ResourceQuota ("exceeded quota: ..."), Pod Security admission
    # ("violates PodSecurity"). The orchestrator refused the pod: nothing ran.
    Guarded(r"\b[a-z][\w.]*(?:/[\w.-]+)? \\?\"[^\"\n]*\\?\" is forbidden: ", ('" is forbidden: ',)),
    # HTTP error statuses.
    Guarded(r"\bHTTP/\d(?:\.\d)? [45]\d\d\b", ("HTTP/",)),
    Guarded(
        r"\b(?:unexpected|unsupported|bad|error|failed with) status(?: code)?:? [45]\d\d\b", (" status",)
    ),
    # HTTP clients' error Display (reqwest, requests, httpx): `signals.HTTP_CLIENT_ERROR`.
    *(Guarded(pattern, ("for url",)) for pattern in HTTP_CLIENT_ERROR),
    # NVIDIA NIM's own log header ("[09-25 19:03:45.989 ERROR  nim_sdk::hub::repo file:line] msg").
    Guarded(
        rf"{_LINE_START}\[\d\d-\d\d \d\d:\d\d:\d\d\.\d+ (?:ERROR|CRITICAL|FATAL)\s",
        ("ERROR", "CRITICAL", "FATAL"),
    ),
)

FAILURE_FORMATS: Final = re.compile(
    "|".join(f"(?:{f.pattern if isinstance(f, Guarded) else f})" for f in _FORMATS), re.M
)
"""Every format's failure pattern in one regex (what `is_failure_line` answers, read faster below)."""

# (literals, regex) pairs: the hot loops below unpack plain tuples rather than call `Guarded.search`
_GUARDED: Final = tuple((f.literals, f.regex) for f in _FORMATS if isinstance(f, Guarded))
_UNGUARDED: Final = re.compile("|".join(f"(?:{f})" for f in _FORMATS if isinstance(f, str)), re.M)


def _marked(text: str) -> bool:
    if may_hold_event(text):
        # Kubernetes Event objects (kubectl get events -o json/-o yaml, an exporter's line): a Warning with a
        # failure's reason is one, and an event's reason line is not read by the line formats below.
        reading = read_events(text)
        if reading.failing is not None:
            return True
        text = reading.rest
    if _UNGUARDED.search(text) is not None:
        return True
    return any(
        any(literal in text for literal in literals) and pattern.search(text) is not None
        for literals, pattern in _GUARDED
    )


# Levelless failure prose (issue 20 item 2): a line no logging format marks, whose words report that a
# process or step failed. Read only where no level was given (a W line "failed to get power usage" is
# Triton's metrics noise, not this): "failed to <verb> ...: <why>" / "... from ..." opening a line (Go
# and C++ servers printing a returned error: Triton's `failed to start Vertex AI service: ...`), a
# child's exit report (Model Analyzer's `Running perf_analyzer failed with exit status 1 : ...`), a
# supervisor's (PyTriton's `Triton Inference Server exited with failure`, Azure ML's `Container has
# crashed`), and an error object's JSON "message" that begins "Error: ".
_PROSE_PATTERNS: Final = (
    Guarded(r"^(?:Error: )?[Ff]ailed to [a-z]+ [^\n]*?(?:: |\bfrom\b)", ("ailed to ",)),
    Guarded(r"\bfailed with exit (?:status|code) [1-9]\d*\b", ("failed with exit ",)),
    Guarded(r"\bexited with failure\b", ("exited with failure",)),
    Guarded(r"\b(?:[Cc]ontainer|[Pp]rocess|[Ss]erver|[Ww]orker) has crashed\b", (" has crashed",)),
    Guarded(r'"message"\s*:\s*"(?:Error|ERROR): ', ('"message"',)),
    # An error word followed by a status constant: a C API's result code (GXF's ``loadExtensions Error:
    # GXF_FAILURE``, CUDA's ``CUDA_ERROR_NO_DEVICE``, NCCL's ``ncclSystemError`` is not one).
    Guarded(r"\b[Ee]rror: [A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]\b", ("rror: ",)),
)
_PROSE: Final = tuple((f.literals, f.regex) for f in _PROSE_PATTERNS)

FAILURE_PROSE: Final = re.compile("|".join(f"(?:{f.pattern})" for f in _PROSE_PATTERNS), re.M)
"""The `_PROSE` patterns in one regex (what `is_failure_line` adds on a levelless line, read faster below)."""


def _prose(text: str) -> bool:
    return any(
        any(literal in text for literal in literals) and pattern.search(text) is not None
        for literals, pattern in _PROSE
    )


def is_failure_line(text: str, level: str = "") -> bool:
    """True when some line of ``text`` is marked as a failure by its log format, or, where the line has
    no level (``level`` empty), its words report a failure (`_PROSE`)."""
    return _marked(text) or (not level and _prose(text))


def failure_piece(block: str) -> str | None:
    """The first line of a pasted block that its format marks as a failure (or whose words report one)."""
    if may_hold_event(block) and (event := read_events(block).failing) is not None:
        return event.reason_line
    pieces = [piece.strip() for piece in block.split("\n")]
    for piece in pieces:
        if _marked(piece):
            return piece
    for piece in pieces:
        if piece and _prose(piece):
            return piece
    # A traceback whose lines carry a prefix: no single line is marked, its exception line decides.
    found = PREFIXED_TRACEBACK.search(block)
    return found["exception"].strip() if found else None


def only_frames(text: str) -> bool:
    """True when ``text`` is nothing but native backtrace frames: a failure whose message the paste
    lost. Symbol names in frames are context (the code that ran), never a cause."""
    return _FRAMES_ONLY.match(text.strip("\n")) is not None


_QUIET_LAYOUTS: Final = re.compile(
    "|".join(
        f"(?:{pattern})"
        for pattern in (
            *python_layouts(QUIET_WORDS),
            gstreamer(QUIET_WORDS),
            glib("WARNING"),
            tensorrt_llm(QUIET_WORDS, "[WIV]"),
            tensorrt(QUIET_WORDS, "[WIV]"),
            onnxruntime("[WIV]"),
            spdlog(QUIET_WORDS),
            json_record(QUIET_WORDS),
        )
    )
)
_QUIET_WORD: Final = re.compile(rf"\b(?i:{QUIET_WORDS})\b|(?<=\[)[WIV](?=\]|:onnxruntime:)")


def line_level(line: str) -> str:
    """The level below ERROR that one raw line's own logging format gives it (TensorRT-LLM's
    ``[TensorRT-LLM][WARNING]``, vLLM's ``WARNING 01-31 22:08:42 f.py:1]``, Python logging's layouts,
    GStreamer's WARN column, GLib's ``-WARNING **:``): `LEVEL_WARNING` or `LEVEL_INFO` (INFO, DEBUG,
    TRACE: as Triton's own ``I`` lines), else "" (an error level, or none known). A line that a failure
    format marks (a loader's "loading model fails") or whose words report one (`_PROSE`: a supervisor's
    "Triton Inference Server exited with failure" at WARNING) or that is Triton's crash report ("Signal (11)
    received.") is no quieter for its prefix, nor is a line another logger relays (`lineshape.relay_prefix`:
    that level is the relay's, not the line's)."""
    found = _QUIET_LAYOUTS.search(line)
    if found is None or _marked(line) or _marked(rest := line[found.end() :].lstrip()) or _prose(rest):
        return ""
    if CRASH_SIGNAL.search(rest):  # Triton's own crash report, relayed from its stderr at INFO
        return ""
    if relay_prefix(line) is not None:
        return ""
    word = _QUIET_WORD.search(line, found.start(), found.end())
    if word is None:
        return ""
    return LEVEL_WARNING if word[0].upper().startswith("W") else LEVEL_INFO


def own_level(text: str) -> str:
    """The level of a raw block by its lines' own formats: known only when every line has one below ERROR
    (`line_level`); `LEVEL_WARNING` when one of them is a warning, else `LEVEL_INFO`. Else ""."""
    levels = {line_level(line.strip()) for line in text.split("\n") if line.strip()}
    if not levels or "" in levels:
        return ""
    return LEVEL_WARNING if LEVEL_WARNING in levels else LEVEL_INFO
