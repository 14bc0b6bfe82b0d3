"""Reading one message: which model and version it names, and which runbook its reason means.

The patterns of Triton's failure lines (``failed to load 'm' version 1: ...``, ``Poll failed for
model directory``, an ensemble naming a failed step, a model file's path in a traceback, a stub or
instance name), `classify_reason` / `diagnose_reason` for one reason (the exporter's and lint's
entry point), `index_events` (a live repository index's UNAVAILABLE entries read as status-table
rows) and `template_of`, a line's shape for grouping unexplained errors. The classifiers are
memoized per distinct text: a crash-looping server repeats the same messages.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping

from triton_sre import conventions as c
from triton_sre.diagnosis.events import CLOSING_FAILURE, SOURCE_TABLE, LogEvent
from triton_sre.diagnosis.frames import classify
from triton_sre.diagnosis.hand_rules import STEP_ERROR
from triton_sre.diagnosis.inventory import leading_part_runbook
from triton_sre.diagnosis.lineshape import LEVEL_ERROR, join_hand_wraps
from triton_sre.diagnosis.pastes import retyped
from triton_sre.diagnosis.repeats import memoize_text
from triton_sre.diagnosis.signals import is_harmless, is_summary

__all__ = [
    "ENSEMBLE_CONFIG",
    "ENSEMBLE_DEPENDS",
    "ENSEMBLE_MISSING",
    "ENSEMBLE_VERSION",
    "FAILED_BARE",
    "FAILED_MODEL",
    "FAILED_VERSION",
    "INSTANCE",
    "LOAD_FAILED_API",
    "POLL_FAILED",
    "POLL_MODEL",
    "PY_PATH",
    "STATUS_PREFIX",
    "STUB",
    "VERSION_NOT_PRESENT",
    "classify_reason",
    "diagnose_reason",
    "ensemble_cause",
    "failed_to_load",
    "index_events",
    "own_part",
    "owning_model",
    "template_of",
]

FAILED_VERSION = re.compile(
    r"failed to load '(?P<model>[^']+)' version (?P<version>\d+): (?P<reason>.*)", re.S
)
FAILED_MODEL = re.compile(r"failed to load model '(?P<model>[^']+)': (?P<reason>.*)", re.S)
LOAD_FAILED_API = re.compile(
    r"load failed for model '(?P<model>[^']+)': (?:version (?P<version>\d+)(?: is at \w+ state)?: )?"
    r"(?P<reason>.*)",
    re.S,
)
POLL_FAILED = re.compile(r"Poll failed for model directory '(?P<model>[^']+)': (?P<reason>.*)", re.S)
# Core's closing line for a model whose load failed (model_lifecycle.cc OnLoadFinal, "failed to load
# '<model>'" at I level since the 22.x lifecycle rewrite), after the E line with the reason; a paste may
# hold it alone. It alone still says the model failed (issue #20 item 2: never an empty answer).
FAILED_BARE = re.compile(rf"^{re.escape(CLOSING_FAILURE)}(?P<model>[^']+)'\s*$")
POLL_MODEL = re.compile(r"failed to poll model '(?P<model>[^']+)': (?P<reason>.*)", re.S)
ENSEMBLE_DEPENDS = re.compile(
    r"ensemble '(?P<model>[^']+)' depends on '(?P<dep>[^']+)' which (?:has no loaded version|is not valid)\.?"
    r"(?: Model '[^']+' (?:loading )?failed with error: (?:version (?P<version>\d+) is at \w+ state: )?"
    r"(?P<reason>.*))?",
    re.S,
)
# The step exists but not in the version the ensemble asks for: the ensemble's own config.
ENSEMBLE_VERSION = re.compile(
    r"ensemble '(?P<model>[^']+)' depends on '(?P<dep>[^']+)' "
    r"whose required version (?P<version>\d+) is not loaded"
)
ENSEMBLE_MISSING = re.compile(
    r"ensemble '?(?P<model>[^'\s]+?)'? contains models that are not available or ambiguous: (?P<deps>[^\n]*)"
)
# The ensemble's own config is wrong (a step maps a tensor that does not exist): Triton 2.51 writes
# `in ensemble NAME, ensemble tensor X is mapping to non-existing input Y in model STEP`.
ENSEMBLE_CONFIG = re.compile(r"\bin ensemble '?(?P<model>[^'\s,]+)'?, ")
_STEP_ERROR = re.compile(STEP_ERROR)
VERSION_NOT_PRESENT = re.compile(r"version (?P<version>-?\d+) is specified for model '(?P<model>[^']+)'")
# A model's own file: <repo>/<model>/<version>/<file>.py (not Triton's temporary copy of a cloud
# repository, /tmp/folderXXXXXX/<version>/, whose folder name is not the model's).
# The same shape names the model when a backend's own error quotes the model file it read
# (``Load model from /models/m/1/model.onnx failed``).
PY_PATH = re.compile(
    r"/(?!folder[A-Za-z0-9]{6}/)(?P<model>[^/\s'\"]+)/(?P<version>\d+)/[^/\s'\"()]+"
    r"\.(?:py|onnx|plan|engine|pt|pth|graphdef|savedmodel)\b"
)
# A model's configuration file (``Can't parse /models/m/config.pbtxt as text proto``): the folder names it.
_CONFIG_PATH = re.compile(r"/(?P<model>[^/\s'\"]+)/config\.pbtxt\b")
STUB = re.compile(r"Failed to (pre)?initialize Python stub|Stub process", re.I)
# A model a line names in quotes (the Python stub's ``... for model 'm' specified ...``; core's answer to a
# load request, ``failed to load 'm', no version is available``, model_repository_manager.cc r21.02-r26.06),
# or the ensemble whose dependency check found a cycle: CircularDependencyCheck (core r24.10) names the
# ensemble it started from first, ``circular dependency between ensembles: a -> ... -> b -> a``, once for
# each ensemble of the cycle (inventory core-ensemble-circular).
_NAMED_MODEL = re.compile(
    r"\bmodel '(?P<model>[^'\s/]+)'|\bfailed to load '(?P<loaded>[^'\s/]+)', "
    r"|\bcircular dependency between ensembles: (?P<cycle>[^\s'\"]+) -> "
)
# Model Analyzer's report of its load request (model_analyzer triton/client/client.py: "Model <variant>
# load failed: <error>"), when the error it quotes names no model itself.
_ANALYZER_LOAD = re.compile(r"\bModel (?P<model>[\w.-]+) load failed: ")


def owning_model(message: str) -> tuple[str, str | None] | None:
    """The model (and version) an error event belongs to: a model file its own first line names, else
    a model that line names in quotes, else a model file in the lines attached below it.

    The order matters in verbose logs: the Python stubs of models loading in parallel write to one
    stream, so another stub's traceback frames can land under this stub's line."""
    head = join_hand_wraps(message).split("\n", 1)[0]
    path = PY_PATH.search(head)
    if path is None and (named := _NAMED_MODEL.search(head) or _ANALYZER_LOAD.search(head)) is not None:
        return named["model"] or named["loaded"] or named["cycle"], None
    path = path or PY_PATH.search(message)
    if path is None and (config := _CONFIG_PATH.search(head)) is not None:
        return config["model"], None
    return (path["model"], path["version"]) if path else None


def own_part(message: str, written: str) -> str:
    """A Python stub's error event without the lines another stub wrote into it (the stubs of models
    loading in parallel share one output stream; ``written`` is the event's first line as written).

    A stub line Triton quoted holds its whole traceback escaped, so every raw line after it is another
    writer's. Otherwise, from the first frame of another model's file on, the lines are another's."""
    if "\n" not in message or not STUB.search(message.split("\n", 1)[0]):
        return message
    lines = message.split("\n")
    quoted = written.rstrip()
    if quoted.endswith('"') and "\\n" in quoted:
        quoted = quoted[:-1]
        while quoted.endswith("\\n"):
            quoted = quoted[:-2]  # the message's own trailing newlines (the parser drops them)
        return "\n".join(lines[: quoted.count("\\n") + 1])
    owner = owning_model(message)
    if owner is None:
        return message
    for k, line in enumerate(lines[1:], 1):
        path = PY_PATH.search(line)
        if path is not None and path["model"] != owner[0]:
            return "\n".join(lines[:k])
    return message


# A model instance named in a line (``Stub process 'm_0_0' is not healthy``, ``instance group m_0 of
# model m``): Triton names instances <model>_<group>[_<index>].
INSTANCE = re.compile(
    r"(?:Stub process|model instance|instance) '(?P<inst>[^'\s]+?)(?:_\d+){1,2}'"
    r"|instance group \S+ of model '?(?P<model>[^'\s]+?)'?(?:\s|$)"
)
STATUS_PREFIX = re.compile(r"^(UNAVAILABLE|Not loaded|LOADING|UNLOADING):\s*", re.S)


def classify_reason(reason: str) -> str | None:
    """Classify one failure reason; an ensemble naming a failed step is an ensemble failure."""
    if ENSEMBLE_DEPENDS.search(reason) or ENSEMBLE_MISSING.search(reason):
        return c.RUNBOOK_ENSEMBLE_DEPENDENCY
    found = classify(reason)
    if found is None and "\n" in reason:
        # Old fixed-width status tables wrap words across rows; try the text glued back.
        found = classify(reason.replace("\n", ""))
    return found


def ensemble_cause(message: str) -> tuple[str, str] | None:
    """(ensemble, runbook) for a message core prefixed with ``in ensemble 'X', `` (ensemble_scheduler.cc
    FinishEnsemble, on whatever failed the request), not a step's load failure quoted by the ensemble.

    The rest names the cause when it is a step's own error (a Python model's exception, its shared
    memory): the prefix only says where the step ran. Otherwise it is the ensemble's wiring."""
    m = ENSEMBLE_CONFIG.search(message)
    if m is None or FAILED_VERSION.search(message) or FAILED_MODEL.search(message):
        return None
    if _STEP_ERROR.match(message, m.end()):
        return m["model"], classify(message[m.end() :]) or c.RUNBOOK_UNKNOWN_LOAD_FAILURE
    return m["model"], classify(message) or c.RUNBOOK_ENSEMBLE_DEPENDENCY


def classify_row(reason: str, cut: bool) -> str | None:
    """A status cell's runbook; a cell the log shows cut (`LogEvent.cut`) that no rule claims is read
    by the inventory template it is a leading part of."""
    found = classify_reason(reason)
    if found is None and cut:
        found = leading_part_runbook(reason.replace("\n", ""))
    return found


def diagnose_reason(reason: str) -> str:
    """The runbook id for one UNAVAILABLE reason; the fallback id when no rule explains it."""
    return classify_reason(reason) or c.RUNBOOK_UNKNOWN_LOAD_FAILURE


# A crash-looping server repeats the same messages: each distinct text is classified once
# (a bounded memo of these pure functions, see repeats.py).
classify = memoize_text(classify)
is_harmless = memoize_text(is_harmless)
is_summary = memoize_text(is_summary)
classify_reason = memoize_text(classify_reason)


_TPL_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")
_TPL_PATH = re.compile(r"(?:[\w.\-]*/)+[\w.\-]+")
_TPL_HEX = re.compile(r"0x[0-9a-fA-F]+")
_TPL_NUM = re.compile(r"\d+")


def template_of(event: LogEvent) -> str:
    """A line's shape: level, source file and message with values replaced by placeholders."""
    source = re.sub(r":\d+$", "", event.source)
    message = event.message.split("\n", 1)[0][:300]
    message = _TPL_QUOTED.sub("'<s>'", message)
    message = _TPL_PATH.sub("<path>", message)
    message = _TPL_HEX.sub("<hex>", message)
    message = _TPL_NUM.sub("<n>", message)
    prefix = f"{event.level or '-'} {source}] " if source else f"{event.level or '-'} "
    return prefix + message.strip()


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # C0 controls and DEL; tab and line feed stay


def failed_to_load(state: object, reason: object) -> bool:
    """An index entry UNAVAILABLE for a failure: not a version unloaded on purpose or retired by the version
    policy (reason `unloaded`; journey25: rolling out v2 with `latest: 1` paged for v1, and rolling back
    for v2, as `unknown-load-failure`)."""
    return state == c.STATE_UNAVAILABLE and str(reason or "").strip() != c.REASON_UNLOADED


def index_events(index: Iterable[Mapping[str, object]]) -> Iterator[LogEvent]:
    """The UNAVAILABLE entries of ``POST /v2/repository/index`` as the status-table rows a log prints."""
    for position, entry in enumerate(index, 1):
        if not failed_to_load(entry.get("state"), entry.get("reason")):
            continue
        name = str(entry.get("name", ""))
        version = str(entry.get("version") or "") or None
        # the server's text, shown on a terminal: escape sequences and control characters go, as a log's do
        reason = _CONTROL.sub("", retyped(str(entry.get("reason") or "")))
        name = _CONTROL.sub("", retyped(name))
        text = f"{name} v{version or '-'}: UNAVAILABLE: {reason.splitlines()[0] if reason else ''}"
        yield LogEvent(
            line=position,
            level=LEVEL_ERROR,
            source=SOURCE_TABLE,
            message=f"UNAVAILABLE: {reason}",
            text=text,
            model=name,
            version=version,
        )
