"""Pure data: the layouts in which the logging libraries around Triton print a line's level, as regex
builders, and the wordings `severity.py` and `classes.py` share.

`severity.py` reads a failure by these layouts (its docstring names each format's specification or emitting
source); `line_level` reads the quieter levels through the same builders, so one layout is written once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

__all__ = [
    "COMMAND_NOT_FOUND",
    "FLAG_AS_COMMAND",
    "K8S_STATUS_REASONS",
    "K8S_WARNING_REASONS",
    "LEVEL_WORDS",
    "QUIET_WORDS",
    "STATUS_REASON_WORDS",
    "Guarded",
    "glib",
    "gstreamer",
    "json_record",
    "onnxruntime",
    "python_layouts",
    "spdlog",
    "tensorrt_llm",
    "tornado",
]

# The reasons of Kubernetes' Warning events (kubelet pkg/kubelet/events/event.go, the scheduler, the
# controllers) and of a pod's container states, as kubectl prints them. Not FailedPreStopHook: the kubelet
# runs the preStop hook only when it stops the container, records its failure as a Warning event
# ("PreStopHook failed" from 1.22, before that the handler's "Exec lifecycle hook (...) failed - error: ...")
# and stops the container all the same (kuberuntime_container.go executePreStopHook, then StopContainer):
# the hook failing is no failure of the pod, its start or its model.
K8S_WARNING_REASONS = (
    r"Failed(?!PreStopHook\b)\w*|BackOff|Unhealthy|Evicted|ErrImageNeverPull|InspectFailed|NodeNotReady|"
    r"OOMKill\w*|SystemOOM|Preempt\w*|NetworkNotReady|ProbeError|\w*Error"
)
K8S_STATUS_REASONS = (
    r"(?:Init:)?CrashLoopBackOff|ImagePullBackOff|ErrImagePull|ErrImageNeverPull|InvalidImageName|"
    r"CreateContainerConfigError|CreateContainerError|RunContainerError|ContainerCannotRun|"
    r"OOMKilled|Init:Error|Init:OOMKilled|Evicted|(?:Pod)?Unschedulable"
)
# A pod status reason: each of K8S_STATUS_REASONS holds one of these words (its guard, see `Guarded`).
STATUS_REASON_WORDS: Final = (
    "BackOff",
    "ErrImage",
    "InvalidImageName",
    "Container",
    "OOMKilled",
    "Init:Error",
    "Evicted",
    "Unschedulable",
)
LEVEL_WORDS: Final = r"(?:ERROR|CRITICAL|FATAL|PANIC|SEVERE|EMERG|ALERT)"
"""The level words of loggers other than Triton's that mark a failure."""


QUIET_WORDS: Final = r"(?:WARNING|WARN|INFO|DEBUG|TRACE)"
"""The level words below ERROR that the layouts below print (GStreamer's column says WARN for warning)."""


_NOT_RELAYED: Final = rf"(?![^\S\n]*[-|]?[^\S\n]*std(?:err|out)[^\S\n]*[-|][^\S\n]*{QUIET_WORDS}\b)"
"""After a level word: not a stream's relay of a line that has its own, quieter level."""


def python_layouts(words: str) -> tuple[str, ...]:
    """Python logging's layouts with the level ``words`` (a regex group): the default ``LEVEL:name:msg``,
    ``asctime - name - LEVEL -`` / ``[LEVEL]`` / loguru's ``| LEVEL |``, and vLLM's ``LEVEL mm-dd hh:mm``."""
    return (
        rf"^{words}:[\w.<>-]*:",
        rf"^(?:\S+ ){{0,3}}\S*\d\d:\d\d:\d\d\S*\s*(?:[-|:,]\s*(?:[\w.\[\]-]+\s*[-"
        rf"|:]\s*)?)?\[?{words}\]?(?:\s|:|$){_NOT_RELAYED}",
        # ... and the same layouts once a collector's timestamp prefix is peeled off.
        rf"^[-|]\s*(?:[\w.:\[\]<>-]+\s*[-|]\s*)?{words}\s*[-|:]{_NOT_RELAYED}",
        rf"^\[{words}\]|\|\s*{words}\s*\|{_NOT_RELAYED}|^{words}\s+\d\d-\d\d \d\d:\d\d",
        # A logger relaying a stream line by line (FastChat's StreamToLogger: every stderr line at ERROR,
        # "| ERROR | stderr | INFO:     Started server process"): the relayed line's own level is the line's.
        rf"\|\s*[A-Z]+\s*\|\s*std(?:err|out)\s*\|\s*{words}\b",
    )


def gstreamer(words: str) -> str:
    """GStreamer's debug log line with the level column ``words``."""
    return rf"^\d+:\d\d:\d\d\.\d+\s+\d+\s+0x[0-9a-fA-F]+\s+{words}\s"


def glib(words: str) -> str:
    """GLib's default handler's level (``Domain-LEVEL **:``, the ``**`` on ERROR, CRITICAL, WARNING)."""
    return rf"{words} \*\*:"


def tensorrt_llm(words: str, letters: str) -> str:
    """TensorRT-LLM's logger level prefixes: the C++ one's (``common/logger.h``; some pastes show
    ``[TensorRT-LLM] [X]``) and its Python runtime's (``tensorrt_llm/logger.py``: ``[TRT-LLM] [W] ``, with
    ``[MPI_Rank N] `` between when the world has more than one rank), whose levels are one letter."""
    return rf"\[TensorRT-LLM\] ?\[{words}\]|\[TRT-LLM\] (?:\[MPI_Rank \d+\] )?\[{letters}\]"


def tensorrt(words: str, letters: str) -> str:
    """TensorRT's own logger as its Python bindings and samples print it: ``[11/18/2021-21:30:49] [TRT] [I]``
    (TensorRT 8 on), trtexec's and the samples' ``[I] [TRT]``, and TensorRT 7's ``[TensorRT] INFO:``."""
    return rf"\[TRT\] \[{letters}\]|\[{letters}\] \[TRT\]|\[TensorRT\] {words}\b"


def json_record(words: str) -> str:
    """A program's own structured log record, one JSON object a line, with its level under a logging key
    first: NIM for LLMs' JSON lines (``{"level": "INFO", "time": ..., "file_path": ..., "message": ...}``),
    zap's (KServe, ModelMesh: ``{"level":"info","ts":...}``), structlog's and python-json-logger's
    (``levelname``). The level word in any case."""
    return rf'^\s*\{{\s*"(?:level|levelname|severity|lvl)"\s*:\s*"(?i:{words})"'


def spdlog(words: str) -> str:
    """spdlog's bracketed layouts as C++ servers set them (OpenVINO Model Server's ``[%Y-%m-%d %H:%M:%S.%e]
    [%t][%n][%l][%s:%#] %v``: ``[2025-01-15 15:45:46.463][100][modelmanager][warning][modelmanager.cpp:1354]
    ...``, older releases without the time; spdlog's default ``[time] [logger] [level] msg``): the level is a
    bracketed word after one to four bracketed fields at the start of the line."""
    return rf"^(?:\[[^\]\n]{{1,40}}\] ?){{1,4}}\[(?i:{words})\]"


def onnxruntime(letters: str) -> str:
    """ONNX Runtime's default log sink (core/common/logging/sinks/ostream_sink.cc: ``<time>
    [W:onnxruntime:<logger id>, <file>:<line> <function>] <message>``): a one-letter level (V I W E F)."""
    return rf"\[{letters}:onnxruntime:[^,\]\n]*, "


def tornado(letters: str) -> str:
    """Tornado's default log formatter (tornado/log.py LogFormatter: ``[%(levelname)1.1s %(asctime)s
    %(module)s:%(lineno)d]``, dates as ``%y%m%d %H:%M:%S``), as KServe's Python model servers print it:
    ``[E 211213 04:25:33 __main__:37] fail to load model``; a one-letter level (D I W E C)."""
    return rf"^\[{letters} \d{{6}} \d\d:\d\d:\d\d [\w.<>-]+:\d+\]"


@dataclass(frozen=True)
class Guarded:
    """A format pattern that cannot match without one of its ``literals``: read only on a text holding one.

    Speed only (the same answer as the pattern alone): ``in`` is a plain C scan, while a regex that starts
    with ``\\b`` or an alternation gets no prefix scan and is tried at every position of every line.
    """

    pattern: str
    literals: tuple[str, ...]
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "regex", re.compile(self.pattern, re.M))

    def search(self, text: str) -> re.Match[str] | None:
        """The pattern's first match in ``text``, tried only when a literal is there."""
        return self.regex.search(text) if any(one in text for one in self.literals) else None


COMMAND_NOT_FOUND: Final = (
    # A shell or a container runtime that cannot find the command it was asked to run: bash
    # (``bash: x: command not found``; a script's ``f.sh: line 9: exec: x: not found``), dash and
    # busybox ash (``sh: 1: x: not found``, ``sh: x: not found``), zsh (``zsh: command not found:
    # x``), and Go's os/exec ErrNotFound as runc/Docker/containerd quote it (``exec: "x": executable
    # file not found in $PATH``).
    r"^\S*(?:sh|bash)(?:: line \d+|: \d+)?: (?:exec: )?[^\s:]+: (?:command )?not found\s*$",
    r"^zsh: command not found: ",
    r"exec: \"[^\"\n]+\": executable file not found in \$PATH",
)
"""The shells' and container runtimes' command-not-found wordings (`classes.py` names their class)."""
FLAG_AS_COMMAND: Final = (
    r"^\S*(?:sh|bash)(?:: line \d+|: \d+)?: exec: -[^\s:]*: (?:invalid option|not found)\s*$"
)
"""An image's entrypoint (``exec "$@"``) given the server's flags without the server: the shell's ``exec``
refuses the first flag (bash: ``exec: --: invalid option``; dash: ``exec: --model-repository=/m: not
found``)."""
