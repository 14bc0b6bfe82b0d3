"""Pure data: the lines that are failure signals or noise, whatever their cause.

Not causes (those are `rules.py`): a line harmless on every CPU host (never a cause), a generic
summary line (a consequence), a line saying the server itself did not come up, and a backend's
own error line. The engine uses them to decide that a log failed even when no cause rule claims
any of its lines (never an empty answer), and that a noisy healthy log did not (no false alarm).
"""

from __future__ import annotations

import re
from typing import Final

from triton_sre.diagnosis.library_errors import LIBRARY_FAILURE_MARKS, LIBRARY_INFO
from triton_sre.diagnosis.lineshape import PARSER_REFUSAL, join_hand_wraps
from triton_sre.diagnosis.log_layouts import tensorrt
from triton_sre.diagnosis.stack_rules import FATAL_EXIT_CODES, FATAL_SIGNALS
from triton_sre.diagnosis.stack_rules import rx as _rx

__all__ = [
    "AUTOFILL_GAVE_UP",
    "BACKEND_FAILURE",
    "CLIENT_CHANNEL_POLLER",
    "CLIENT_UNREACHABLE",
    "CRASH_SIGNAL",
    "CRASH_WORDING",
    "ENTRYPOINT_DRIVER_BANNER",
    "HARMLESS",
    "HEAP_CHECK_ABORT",
    "HEAP_CORRUPTION_ABORT",
    "HTTP_CLIENT_ERROR",
    "IMPORT_RECOVERED",
    "MPI_OWN_ABORT",
    "PYTHON_FATAL",
    "SERVER_FAILURE",
    "STACK_CHECK_ABORT",
    "STUB_DIED",
    "STUB_PARENT_GONE",
    "SUMMARY",
    "UNCAUGHT_EXCEPTION",
    "backend_failure_piece",
    "crash_report_start",
    "crash_signal_piece",
    "folded_after_harmless",
    "is_backend_failure",
    "is_client_side",
    "is_client_unreachable",
    "is_harmless",
    "is_server_failure",
    "is_summary",
]


# Lines every CPU-only host prints: informational, never a cause.
HARMLESS: Final = _rx(
    r"CudaDriverHelper has not been initialized",
    # The NGC image's start-up scan run as a non-root user (a KServe or Seldon pod): the folder is root's,
    # and the server starts as usual.
    r"^find: '/usr/lib/ssl/private': Permission denied$",
    # Alone, NVML failing is what every CPU host prints; with a reason it is a driver problem.
    r"Failed to initialize NVML(?!: *(Driver/library|Unknown Error|Insufficient Permissions))",
    r"DCGM (unable to start|initialization error)",
    # DCGM's own line before Triton's "DCGM unable to start" (server 7906, a MIG host: tests/data/capacity/
    # mig_dcgm.log): its cache manager, printed without a prefix; Triton goes on without GPU metrics.
    r"^CacheManager Init Failed\. Error: -?\d+$",
    # (not when CUDA says the host's GPUs are there but refused: exclusive-process mode, a device held)
    r"(?i:Unable|failed) to allocate pinned system memory(?![^\n]*\bbusy or unavailable\b)",
    r"CUDA memory pool disabled",
    r"Unable to get (power limit|power usage|energy consumption|memory)",
    r"GPU metrics will not be available",
    r"failed to stop server: .*Exit timeout expired",
    r"Collecting (CPU|GPU) metrics",
    # kubectl logs naming the container it chose in a pod of several (kubectl's logs command, stderr).
    r'^Defaulted container "[^"\n]+" out of: ',
    # The kubelet's own E line for a preStop hook that failed (kuberuntime/kuberuntime_container.go
    # executePreStopHook: klog.ErrorS(err, "PreStop hook failed", "pod", ...) from 1.20's structured logging,
    # `preStop hook for container %q failed: %v` before): it records the FailedPreStopHook event and stops
    # the container all the same, so the hook failing is no failure of the pod, as the event is not (diag45).
    r'^"?PreStop hook failed"? err=',  # (the parser peels the message's opening quote)
    r'^preStop hook for container "[^"\n]+" failed: ',
    # Core logs it at E level and goes on loading (src/model_repository_manager/model_repository_manager.cc,
    # ModelTimestamp::SetModelConfigModifiedTime, r24.08 on) when a model's config came with the load request
    # (PyTriton, the in-process API) and no config file names it.
    r"Failed to set config modification time: model_config_content_name_ is empty",
    # Core's ensemble scheduler (src/ensemble_scheduler/ensemble_scheduler.cc, EnsembleContext) logs it at E
    # level for every ensemble on a host without a usable GPU and goes on without a stream: the ensemble
    # loads (real 2.51 here; a 22.09 CPU quick-start, tests/data/logs/SPLIT.md). A backend's own
    # "unable to create stream: <error>" (no "for") fails its model and stays a cause.
    r"unable to create stream for [^:\n]+: ",
    # Core's CudaMemoryManager destructor at exit (src/cuda_memory_manager.cc, before its has_allocation_
    # guard): finalizing a CUDA pool that was never made (no GPU, or a start-up that failed before it) is
    # CNMEM's NOT_INITIALIZED, printed after the real failure or at any CPU host's exit.
    r"Failed to finalize CUDA memory manager: \[\d+\] CNMEM_STATUS_NOT_INITIALIZED",
    # Core 20.03's dynamic batcher printed its next wait at E level on every scheduling pass
    # (src/core/dynamic_batch_scheduler.cc:571 at r20.03, `LOG_ERROR << "Wait: " << wait_ns << " us"`; gone
    # in r20.03.1): a serving server's debugging line, never a failure.
    r"(?m:^Wait: \d+ us\s*$)",
    *LIBRARY_INFO,
)

# The generic consequence lines: the cause is elsewhere.
SUMMARY: Final = _rx(
    r"failed to load all models",
    r"No server context available\. Exiting immediately",
    # vllm_backend's answer to a request once its engine failed the health check (src/model.py
    # _check_health, r24.12 on, with ENABLE_VLLM_HEALTH_CHECK): the engine died of something its log said
    # before ("[vllm] Engine is not healthy and model will be unloaded: <traceback>"), not of its settings.
    r"Model is unavailable due to unhealthy vLLM engine",
    # Core's rate limiter (src/rate_limiter.cc, RegisterModelInstance, r22.06 on) undoing an instance whose
    # resources it refused: the refusal ("Resource count for ...") is the load's failure (real 2.51, diag29).
    r"Cannot remove instance from resource manager",
)

ENTRYPOINT_DRIVER_BANNER: Final = (
    r"This container was built for NVIDIA Driver Release",
    r"compatibility mode is UNAVAILABLE",
)
"""The NGC container entrypoint's driver check (its ``ERROR:`` banner before the server starts): a host driver
older than the image's CUDA, or one it cannot read."""

STUB_DIED: Final = r"Stub process [^\n]{0,40}(?:unhealthy|not healthy|exited unexpectedly)"
"""The Python backend's verdict on a stub process that stopped answering (python_be.cc's health check: ``Stub
process '<instance>' is not healthy.``): what killed it is not in the message."""

CRASH_SIGNAL: Final = re.compile(rf"(?m:(?<![^\s\]])Signal \(({FATAL_SIGNALS})\) received\.?\s*$)")
"""Triton's ErrorSignalHandler (src/triton_signal.cc, 20.xx on): "Signal (N) received." and a stack for
SIGSEGV/SIGABRT/SIGBUS/SIGILL/SIGFPE (2 and 15, the exit handler's signals, are a normal stop). Printed
unprefixed, so a paste may fold it under the ``I`` line before it (`crash_signal_piece`)."""


def crash_report_start(message: str) -> int | None:
    """The index, among ``message``'s lines after its first, of Triton's crash report folded under a leveled
    line (None when there is none). The ErrorSignalHandler writes ``Signal (N) received.`` and the stack
    unprefixed on a line of their own, from whichever thread faulted: no logger's message goes on into them.
    A Python stub's error whose request then crashed the server (2.51, a model_warmup sample whose execute
    raises) reads as two events, the model's error and the crash, and the error names the cause. glibc's
    heap and stack aborts (``double free or corruption (out)``, written to the terminal by malloc's and
    fortify's checks) are no logger's either: 2.51 printed one under ``error: creating server: ...`` after a
    failed start-up, and that crash is a finding of its own, not more of the load failure's message."""
    if "\n" not in message or not any(word in message for word in _REPORT_WORDS):
        return None  # (every error event passes here: most are one line with no crash)
    lines = message.split("\n")
    return next((k for k in range(1, len(lines)) if _REPORT_LINE.match(lines[k])), None)


MPI_OWN_ABORT: Final = (
    r"\bLocal abort (?:before|after) MPI_(?:INIT|FINALIZE)\b|^\*\*\* Your MPI job will now abort\."
)
"""Open MPI ending the process on its own (help-mpi-runtime.txt's banner, ompi_mpi_abort's "Local abort
... completed successfully"): a failure line by its format too (`severity.py`), under whatever came before."""
_FATAL_NAME = r"(?:Segmentation fault|Aborted|Bus error|Illegal instruction|Floating point exception)"
_FATAL_SIG = r"SIG(?:SEGV|ABRT|BUS|ILL|FPE)"
STUB_PARENT_GONE: Final = r"\bNon-graceful termination detected\b"
"""The Python backend's stub finding its parent gone (python_backend src/pb_stub.cc, the health loop's
``kill(parent_pid, 0)`` failing, r21.08 on; printed at INFO): the server process died without shutting its
stubs down, crashed or killed, whatever else the paste kept of it."""

CRASH_WORDING: Final = (
    # Triton's ErrorSignalHandler (server src/triton_signal.cc, 20.xx on); its stack when the paste lost the
    # signal line: boost::stacktrace's frame 0 is the handler in the server binary, frame 1 the kernel's
    # signal return in libc (no other stack of the server starts so).
    CRASH_SIGNAL.pattern,
    r"(?m:^ ?0# [^\n]* in \S*tritonserver\s*\n ?1# [^\n]* in \S*/libc\.so\.6\s*$)",
    # The shell's report of its child (bash jobs.c, strsignal's names): "Segmentation fault (core dumped)",
    # a script's "line 12:  4211 Aborted  (core dumped) tritonserver ...", the name alone on its line (also
    # a line the parser folded under a user's sentence above it).
    rf"\b{_FATAL_NAME}\b[^\n]{{0,200}}\(core dumped\)",
    rf"\bline \d+: +\d+ {_FATAL_NAME}\b",
    rf"(?m:^\s*{_FATAL_NAME}\s*$)",
    # Open MPI's handler (opal/util/stacktrace.c "Signal: Segmentation fault (11)") and its launcher
    # (ORTE/PRRTE errmgr "... exited on signal 11 (Segmentation fault)."), UCX's (ucs/debug/debug.c
    # "Caught signal 11 (Segmentation fault: ...)").
    rf"\bSignal: {_FATAL_NAME} \((?:{FATAL_SIGNALS})\)",
    rf"\bnoticed that process rank \d+ with PID \d+ on node \S+\s+exited on signal (?:{FATAL_SIGNALS})\b",
    rf"\bCaught signal (?:{FATAL_SIGNALS}) \("
    r"(?:Segmentation fault|Aborted|Bus error|Illegal instruction|Floating point)",
    # Abseil's failure signal handler (absl/debugging/failure_signal_handler.cc, TensorFlow and XLA:
    # "*** SIGSEGV received at time=... on cpu N ***"), glog's (src/signalhandler.cc: "*** SIGSEGV (@0x0)
    # received by PID 7 (TID ...) ...; stack trace: ***", "*** Aborted at 1700000000 (unix time) try ..."),
    # CPython's faulthandler ("Fatal Python error: Segmentation fault"), PaddlePaddle's
    # (paddle/fluid/platform/init.cc: "FatalError: `Segmentation fault` is detected by the operating
    # system.").
    rf"\*\*\* {_FATAL_SIG} received at time=",
    rf"\*\*\* {_FATAL_SIG} \(@0x[0-9a-f]+\) received by PID \d+",
    r"\*\*\* Aborted at \d+ \(unix time\) try ",
    rf"\bFatal Python error: {_FATAL_NAME}\b",
    r"\bFatalError: `(?:Segmentation fault|Illegal instruction|Erroneous arithmetic operation|Aborted)` "
    r"is detected by the operating system",
    # The banner the PyTorch-era engines' processes print on SIGSEGV before frames of the shape
    # 'File "<unknown>", line 0, in <symbol>' (vLLM, SGLang, TensorRT-LLM and Megatron workers as users
    # paste it; which library writes it was not read here).
    r"!!!!!!! Segfault encountered !!!!!!!",
    # Go's runtime on a fatal signal in cgo or Go code (runtime/signal_unix.go: "SIGILL: illegal instruction",
    # "SIGSEGV: segmentation violation", then "PC=..."), as go-llama/LocalAI backends print it.
    r"\bSIG(?:ILL: illegal instruction|SEGV: segmentation violation|BUS: bus error|FPE: floating-point"
    r" exception)\b",
    # AWS's C runtime (aws-c-common's fatal assert: "Fatal error condition occurred in <file>:<line>: <expr>",
    # then "Exiting Application" and abort()): Triton's S3 file system links it.
    r"\bFatal error condition occurred in \S+:\d+: ",
    # The kernel's note of a user process's fault (arch/x86/mm/fault.c show_signal_msg, in dmesg), and of a
    # trap that sends SIGILL or SIGFPE (arch/x86/kernel/traps.c: "traps: <comm>[<pid>] trap invalid opcode
    # ip:... in <library>"); a supervisor's report of a child that exited on such a signal (Node's exit
    # event as Scrypted prints it: "exited null SIGILL").
    r"\btraps: \S+\[\d+\] trap (?:invalid opcode|divide error)\b",
    rf"\bexited\b[^\n]{{0,20}}\b{_FATAL_SIG}\b",
    r"\[\d+\]: segfault at [0-9a-f]+ ip [0-9a-f]+ sp [0-9a-f]+ error \d+",
    # A status 128 + a fatal signal (132 SIGILL, 134 SIGABRT, 135 SIGBUS, 136 SIGFPE, 139 SIGSEGV) as the
    # container runtime, kubectl, compose and a pod's status report it; Go's os/exec ("signal: segmentation
    # fault (core dumped)") and Python's subprocess ("died with <Signals.SIGSEGV: 11>", "exit status -11").
    rf"\b(?:exit(?:ed)?(?: with)? (?:code|status)|Exit Code:|exitCode\"?:)\s*(?:{FATAL_EXIT_CODES})\b",
    rf"\bExited \((?:{FATAL_EXIT_CODES})\)",
    # Windows: a process ended by an unhandled exception exits with its NTSTATUS (ntstatus.h), printed
    # unsigned or signed by the parent (Jan's "Nitro exited with code: 3221225501"): 0xC0000005 access
    # violation, 0xC000001D illegal instruction, 0xC0000409 stack buffer overrun, 0xC00000FD stack overflow.
    r"\b(?:exit(?:ed)?(?: with)? (?:code|status)|exit ?code)[\"':= ]*(?:3221225477|-1073741819|0xC0000005"
    r"|3221225501|-1073741795|0xC000001D|3221226505|-1073740791|0xC0000409|3221225725|-1073741571"
    r"|0xC00000FD)\b",
    r"\bsignal: (?:segmentation fault|aborted|bus error|illegal instruction|floating point exception)\b",
    rf"\bdied with <Signals\.{_FATAL_SIG}: \d+>",
    rf"\breturned non-zero exit status -(?:{FATAL_SIGNALS})\b",
    # A launcher built on Python's subprocess reports the negative return code as it is: ROS 2 launch
    # (launch/actions/execute_local.py, "process has died [pid N, exit code -11, cmd '...']").
    rf"\bexit (?:code|status):? -(?:{FATAL_SIGNALS})\b",
    STUB_PARENT_GONE,
    # GDB's report of a fatal signal (gdb/infrun.c print_signal_received_reason: "Thread 7 \"tritonserver\"
    # received signal SIGSEGV, Segmentation fault.", "Program received signal ..."; corelow.c on a core file:
    # "Program terminated with signal SIGSEGV, Segmentation fault.").
    rf"\b(?:Program|Thread \d+(?: \"[^\"\n]*\")?) (?:received|terminated with) signal {_FATAL_SIG}, ",
)
"""The words in which a process's death on a fatal signal (SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGFPE) is
reported: by Triton itself, the shell, a launcher, a library's own handler, the kernel, or an exit status.
2 and 15 are a stop, 9 (137) is the OOM killer's (host-resource-exhausted)."""

# The lines a library prints just before it aborts the process, failure lines by their format
# (`severity.py`) and the crash page's (`crash_rules.py`): libstdc++'s verbose terminate handler, glibc's
# malloc consistency checks (malloc/malloc.c ``malloc_printerr``) and fortify/stack protector
# (debug/fortify_fail.c), CPython's ``fatal_error`` (Python/pylifecycle.c).
UNCAUGHT_EXCEPTION: Final = r"terminate called (?:after throwing an instance of|without an active exception)"
HEAP_CHECK_ABORT: Final = (
    r"^(?:free|malloc|realloc|calloc|munmap_chunk|malloc_consolidate|_int_free|_int_malloc)\(\): "
    r"(?:double free|invalid|corrupted|memory corruption|unaligned)"
)
HEAP_CORRUPTION_ABORT: Final = (
    r"\bdouble free or corruption \(|^corrupted (?:size vs\. prev_size|double-linked list)"
)
STACK_CHECK_ABORT: Final = r"\*\*\* (?:stack smashing|buffer overflow) detected \*\*\*"
PYTHON_FATAL: Final = r"(?<![^\s\]])Fatal Python error: "
# A crash report's first line on a line of its own (`crash_report_start`): Triton's handler, glibc's aborts.
_REPORT_WORDS: Final = ("Signal (", "free", "corrupt", "detected ***")
_REPORT_LINE = re.compile(
    rf"\s*(?:{CRASH_SIGNAL.pattern}|(?:{HEAP_CHECK_ABORT})|(?:{HEAP_CORRUPTION_ABORT})|{STACK_CHECK_ABORT})"
)

# Lines that say the server itself did not come up, lost its GPUs, or runs without a model a client
# asked for: whatever else the log holds, a log with one of these is a failed log and gets at least one
# finding.
SERVER_FAILURE: Final = _rx(
    r"^error: creating server\b",
    # tritonserver's own command-line parser refusing a value (`lineshape.PARSER_REFUSAL`): never started.
    rf"^(?:{PARSER_REFUSAL.pattern})",
    r"\bCUDA failed to initialize\b",
    r"failed to initialize CUDA\b",
    r"Unable to find CUDA driver",
    r"no CUDA-capable device",
    r"CUDA driver version is insufficient",
    r"Failed to initialize NVML: ",
    r"NVML[_ ](ERROR|error)\w*",
    r"unable to get number of CUDA devices",
    # The process ended with a non-zero status, as docker compose, kubectl describe and a pod's
    # status (KServe's lastFailureInfo) report it; 137 (SIGKILL) is a cause rule of its own.
    r"\bexited with code [1-9]\d*",
    r"\bExit Code:\s+[1-9]\d*",
    r"\bexitCode\"?:\s*[1-9]\d*",
    r"\bReason:\s+(Error|ContainerCannotRun|StartError)\b",
    # KServe's model status (pkg/apis/serving/v1beta1 FailureInfo, ModelState): the controller
    # writes lastFailureInfo only when a model failed, and FailedToLoad / a FailureReason say so
    # even when the message it quotes holds only the runtime's I lines (an OOM kill leaves no E line).
    r"\blastFailureInfo\b\"?:",
    r"\b(activeModelState|targetModelState)\"?:\s*\"?FailedToLoad\b",
    r"\breason\"?:\s*\"?(ModelLoadFailed|RuntimeUnhealthy|NoSupportingRuntime|RuntimeNotRecognized|InvalidPredictorSpec)\b",
    # The process crashed (`CRASH_WORDING`; behind a prefix too: a logger relaying Triton's stderr at INFO
    # does not make the crash an info).
    *CRASH_WORDING,
    # Open MPI in front of the server (TensorRT-LLM's launch_triton_server.py runs one tritonserver per rank
    # under mpirun): the fatal error handler (ompi errhandler_predefined.c: "*** An error occurred in
    # MPI_Init_thread", "*** MPI_ERRORS_ARE_FATAL ..."), an abort before or after MPI_Init finished
    # (help-mpi-runtime.txt; MPI initialised again after MPI_FINALIZE, "Your MPI job will now abort.", as a
    # backend that finalised MPI at an unload meets it at the next load), a rank that died (ORTE/PRRTE
    # errmgr: "<launcher> noticed that process rank <r> with PID <p> on node <n> exited on signal <s>
    # (<name>)."; 2 and 15 are a stop), the job aborted
    # after a rank's non-zero exit (help-errmgr-base.txt), and mpirun's refusals before any rank ran.
    r"^\*\*\* An error occurred in MPI_\w+|\*\*\* MPI_ERRORS_ARE_FATAL\b",
    MPI_OWN_ABORT,
    r"\b(?:mpirun|mpiexec|orterun|prterun|prte) noticed that process rank \d+ with PID \d+ on node \S+"
    r"\s+exited on signal (?!(?:2|15)\b)\d+",
    r"\bPrimary job\s+terminated normally, but \d+ process(?:es)? returned\b",
    r"\b(?:mpirun|mpiexec|orterun|prterun) detected that one or more processes exited with non-zero status\b",
    r"\bThere are not enough slots available in the system to satisfy the \d+",
    r"\b(?:mpirun|mpiexec|orterun|prterun) has detected an attempt to run as root\b",
    # bash's job report of a child killed by SIGKILL ("webui.sh: line 255: 34389 Killed  python3 ..."): the
    # OOM killer or a script's own kill -9 (heldout23's cmssw-37767) read the same, so no page by itself.
    r"\bline \d+: +\d+ Killed\b",
    # Ray Serve's controller on a deployment whose replicas never started (serve/_private/deployment_state.py:
    # "The deployment failed to start N times in a row. This may be due to a problem with its constructor or
    # initial health check failing."; application_state.py: "Failed to update the deployments [...]", and
    # the status DEPLOY_FAILED), as `serve status` and a RayService's status print it: the cause is the
    # replica's own log.
    r"\bThe deployment failed to start \d+ times in a row\b|\bFailed to update the deployments \[",
    r"(?-i:\bDEPLOY_FAILED\b)",
    # ModelMesh's runtime adapter (kserve/modelmesh-runtime-adapter, <runtime>-adapter/server/
    # server.go, 2021 on): "Failed to load Model due to Triton runtime error: %s" when the runtime's
    # RepositoryModelLoad fails ("... adapter error" for its own steps, MLServer/OVMS/TorchServe alike).
    # The quoted error may name a cause; a dropped connection (``rpc error: ... EOF``) does not.
    r"\bFailed to load Model due to \w+ (runtime|adapter) error\b",
    # A request for a model the server does not serve, as a client quotes it: core's GetModel
    # (src/model_repository_manager/model_repository_manager.cc, "Request for unknown model: 'm' is not
    # found" / "... has no available versions", r22.06 on; server src/core from r20.08 with other reasons)
    # and the server's "Inference request for unknown model 'm'" (src/core, r19.03-r20.03). The server runs
    # without the model, whose load failed or was never made: the cause is in its log from its start.
    r"\b(?:Inference r|R)equest for unknown model\b",
    # The container runtime refused the container (docker CLI / compose / the OCI runtime's hook).
    r"\bError response from daemon: ",
    r"\bOCI runtime (create|exec) failed\b",
    r"\berror running hook\b",
)

# A backend's own error line (not Triton's): the model load failed even when the wording names no known
# class and no Triton line is around it. From the sources that print them: onnxruntime_backend
# src/onnxruntime_utils.h (RETURN_IF_ORT_ERROR: "onnx runtime error <code>: <msg>"), ONNX Runtime's
# Python binding ("[ONNXRuntimeError] : <code> : <STATUS> : <msg>"), the TensorRT logger ("[TRT] [E]",
# "[TensorRT] ERROR", the samples' and trtexec's logger "[E] [TRT]" / "[F] [TRT]", TensorRT 8+'s
# "Error Code <n>: <Kind> (<msg>)" from "[file.cpp::func::line]"),
# libtorch (c10::Error, the TorchScript interpreter), the CUDA runtime ("CUDA error: <text>").
BACKEND_FAILURE: Final = _rx(
    r"onnx runtime error \d+: ",
    r"\[ONNXRuntimeError\] : \d+ : [A-Z_]+ : ",
    tensorrt("ERROR", "[EF]"),
    r"\bTRT ERROR\b",
    r"\[[\w.]+\.cpp::[\w:~]+::\d+\] Error Code \d+: ",
    r"\bc10::Error\b|The following operation failed in the TorchScript interpreter",
    r"\bCUDA error: \w",
    r"\bcudaError\w+\b|\bCUDA_ERROR_\w+\b",
    # TensorRT's runtime cannot rebuild an engine's plugin layers, printed bare by older releases or
    # an application's own logger: the legacy IPluginFactory engine (TensorRT <= 7, IRuntime::
    # deserializeCudaEngine without a factory), and the plugin registry's lookups (getPluginCreator,
    # safeDeserializationUtils / pluginV2Runner "Cannot deserialize plugin"). No page covers a
    # plugin library that is not loaded: unknown-load-failure, never an empty answer.
    r"Serialized engine contains plugin, but no plugin factory was provided",
    r"\bgetPluginCreator could not find plugin\b",
    r"\bCannot deserialize plugin\b",
    *LIBRARY_FAILURE_MARKS,
)


# Lines that take back an error printed before them.
# Core's autofiller (src/core/autofill.cc, r20.xx to r21.xx) probes a model without a config by trying
# each platform in turn: the TensorRT probe deserializes every file of the version directory as a plan,
# so TensorRT's logger prints its magic-tag / deserialize errors for any file that is not one. When no
# platform fits it says so and goes on with a simple config: those errors were the probe's, not the load's.
AUTOFILL_GAVE_UP = re.compile(r"^Autofiller failed to detect the platform for ")
# A backend's report that the pipeline file it was importing did load: DALI's LoadModel (dali_backend
# src/dali_model.h) tries model.dali, then autoserializing it as Python, then dali.py, swallowing each
# failure (a traceback such as importlib's "'NoneType' object has no attribute 'loader'" for a file
# that is no module), and logs "DALI pipeline from file <path> loaded successfully." when one worked.
IMPORT_RECOVERED = re.compile(r"\bpipeline from file \S+ loaded successfully")

# A client's report that it could not reach the server at all, as tritonclient (``[StatusCode.UNAVAILABLE]
# msg``) and grpcio's ``_InactiveRpcError`` (``status = StatusCode.UNAVAILABLE`` then ``details = "..."``)
# print it: gRPC core's load-balancing policies fail a call with "failed to connect to all addresses" when
# no address is reachable (pick_first/round_robin), the socket says "Connection refused". In a paste that
# holds Triton's own lines (a docker compose or kubectl paste of several services), that is another
# service's symptom of a server it does not reach, not a model load failure (issue #20 item 3).
CLIENT_UNREACHABLE: Final = re.compile(
    r"\bStatusCode\.UNAVAILABLE\b[^\n]{0,40}(?:\n[^\n]{0,20}details = )?[^\n]{0,40}?"
    r"(?:failed to connect to all addresses|Connection refused)",
    re.I,
)


# HTTP clients' error Display for a 4xx/5xx answer: Rust reqwest ("HTTP status client error (451 Unavailable
# For Legal Reasons) for url (...)"), Python requests' raise_for_status ("403 Client Error: Forbidden for url:
# ...") and httpx's ("Client error '403 Forbidden' for url '...'"). Each names the URL it asked ("for url").
HTTP_CLIENT_ERROR: Final = (
    r"\bHTTP status (?:client|server) error \([45]\d\d\b[^)\n]*\) for url\b",
    r"\b[45]\d\d (?:Client|Server) Error: [^\n]*\bfor url: ",
    r"\b(?:Client|Server) error '[45]\d\d [^'\n]*' for url '",
)
"""An HTTP client's error for a refused request: a failure signal (`severity.py`) and, for a model store's
URL, a cause class (`classes.py`)."""


# gRPC core's client channel backup poller (src/core/ext/filters/client_channel/backup_poller.cc, later
# src/core/client_channel/backup_poller.cc; grpc/grpc pull 12732): a timer thread that polls a client
# channel's pollset while no call polls it, logging a failed poll as "Run client channel backup poller: {...
# pollset_work ...}" (epoll_wait's "Bad file descriptor" in a process forked after it opened a channel,
# grpc/grpc issue 22508). It is a gRPC client's line, from whatever process talks to the server, like
# CLIENT_UNREACHABLE: in a paste that holds Triton's own lines it is not the server's failure.
CLIENT_CHANNEL_POLLER: Final = re.compile(r"\bRun client channel backup poller\b")


def is_client_unreachable(text: str) -> bool:
    return CLIENT_UNREACHABLE.search(text) is not None


def is_client_side(text: str) -> bool:
    """A gRPC client's own line: it could not reach the server, or its channel's poller failed."""
    return is_client_unreachable(text) or CLIENT_CHANNEL_POLLER.search(text) is not None


def is_harmless(text: str) -> bool:
    """A harmless line, also when a person wrapped it by hand (``Unable to`` | ``  allocate pinned ...``)."""
    if HARMLESS.search(text) is not None:
        return True
    joined = join_hand_wraps(text)
    return joined is not text and HARMLESS.search(joined) is not None


def folded_after_harmless(text: str) -> bool:
    """Raw lines folded under a harmless line (`is_harmless(text)`, not checked again here) that are not
    harmless themselves: the log going on past the warning (a client's error pasted after it, libstdc++'s
    ``terminate called ...`` under ``CudaDriverHelper has not been initialized.``). The line's own words
    wrapped by hand are no lines after it."""
    joined = join_hand_wraps(text)
    return "\n" in joined and not is_harmless(joined.split("\n", 1)[1])


def is_summary(text: str) -> bool:
    return SUMMARY.search(text) is not None


def is_backend_failure(text: str) -> bool:
    return BACKEND_FAILURE.search(text) is not None


def backend_failure_piece(block: str) -> str | None:
    """The first line of a pasted block that is a backend's own error line (`BACKEND_FAILURE`)."""
    for piece in block.split("\n"):
        if BACKEND_FAILURE.search(piece):
            return piece.strip()
    return None


def crash_signal_piece(block: str) -> str | None:
    """The line of a pasted block that is Triton's crash report (`CRASH_SIGNAL`)."""
    m = CRASH_SIGNAL.search(block)
    return m.group(0).strip() if m else None


def is_server_failure(text: str) -> bool:
    return SERVER_FAILURE.search(text) is not None
