"""Pure: one log event read into the `Diagnoser`'s state — the line reader, a mixin of the engine's
`Diagnoser` (engine → linereader → verdicts → blocks).

An event is checked, in this order, against the lines that are harmless on a CPU host (never a cause), the
generic summary lines (``failed to load all models``: a consequence) and the lines that name a model and
its fate (verdicts.py); then its text is classified by `rules.CAUSE_RULES` (first match wins), else by its
cause class (classes.py), else it is a backend's or the server's failure line nothing explains. A cause
names its model (``failed to load 'm' version 1: ...``, a ``.../m/1/model.py`` frame, a python_be.cc
instance name) or waits, model-less, for the model failure that follows (pending.py). Error lines no rule
explains are grouped by template as ``unmatched``, never dropped; a warning naming a cause class becomes
the root cause only when a failure line nothing explains follows it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from triton_sre import conventions as c
from triton_sre.diagnosis.assemble import ModelState, Obs, evidence_text
from triton_sre.diagnosis.blocks import (
    WARNING_BANNER,
    deciding_line,
    event_level,
    fails_beside_warnings,
    quiet_running_compat_banner,
)
from triton_sre.diagnosis.classes import cause_class, over_crash
from triton_sre.diagnosis.continuation import read_continuation
from triton_sre.diagnosis.dropped import is_dropped_setting
from triton_sre.diagnosis.events import SOURCE_OPTION, SOURCE_RAW, SOURCE_TABLE, LogEvent
from triton_sre.diagnosis.frames import classify
from triton_sre.diagnosis.framework_rules import INFO_LEVEL_FAILURE
from triton_sre.diagnosis.gpu_context import GpuContext
from triton_sre.diagnosis.k8s_documents import may_hold_event
from triton_sre.diagnosis.level_inventory import is_harmless_warning, is_serving_line, is_serving_wording
from triton_sre.diagnosis.lineshape import (
    LEVEL_ERROR,
    LEVEL_FATAL,
    LEVEL_INFO,
    LEVEL_WARNING,
    is_paste_prompt,
    join_hand_wraps,
    unquote,
)
from triton_sre.diagnosis.llm_library_rules import VLLM_NO_PLATFORM
from triton_sre.diagnosis.pending import MAX_PENDING
from triton_sre.diagnosis.progress import LoadProgress
from triton_sre.diagnosis.quoted import QuotedComments
from triton_sre.diagnosis.reasons import FAILED_BARE, INSTANCE, STUB, own_part, owning_model, template_of
from triton_sre.diagnosis.releases import ReleaseReader
from triton_sre.diagnosis.report import Evidence
from triton_sre.diagnosis.repositories import RepositoryPaths
from triton_sre.diagnosis.severity import (
    SCHEDULER_NO_FIT,
    failure_piece,
    is_failure_line,
    line_level,
    only_frames,
    own_level,
)
from triton_sre.diagnosis.signals import (
    AUTOFILL_GAVE_UP,
    CLIENT_CHANNEL_POLLER,
    IMPORT_RECOVERED,
    STUB_PARENT_GONE,
    folded_after_harmless,
    is_backend_failure,
    is_client_side,
    is_harmless,
    is_server_failure,
    is_summary,
)
from triton_sre.diagnosis.verdicts import VerdictReader
from triton_sre.diagnosis.worded import WordedFailures

__all__ = ["LineReader"]

MAX_UNMATCHED_TEMPLATES = 200
# Words that make a levelless line a failure report, not a setting (``runtime_backend is set to [vllm]``).
_FAILURE_WORD = re.compile(
    r"\b(error|fail\w*|exception|invalid|cannot|can't|unable|not found|abort\w*|assert\w*|missing|denied)\b",
    re.I,
)
# A pasted line that starts with a failure level word (``ERROR: ...``, ``FATAL ...``): a raw block's first
# line in any case; a later one (the paste's own words came first) in capitals, or an ``Error: <what>`` /
# ``error while|when|during ...`` sentence, a CLI's ``Error for|in|from|on <what>: <err>`` (cobra's ``Error
# for command "stop": no instance found``), DeepStream's ``Error details: <debug>``, or a C++ exception's
# ``  what():  <message>``, not a report's ``Error Set:`` field.
_LEVEL_WORD = (
    r"[ \t]*(?:(?:ERROR|FATAL|CRITICAL)\b|Error:[ \t]+\S|[Ee]rror (?:when|while|during)\b"
    r"|Error (?:for|in|from|on) [^\n:]{1,80}: \S"
    # a GStreamer app's bus handler after its "ERROR from element <name>: <message>" (DeepStream's apps)
    r"|Error details: \S"
    # libstdc++'s verbose terminate handler: the thrown exception's what(), indented under its first line
    r"|what\(\):  \S)"
)
_LEVEL_START = re.compile(rf"(?i:\A[ \t]*(?:ERROR|FATAL|CRITICAL)\b)|^{_LEVEL_WORD}", re.M)
_LEVEL_LINE = re.compile(_LEVEL_WORD)
# Failures their emitters print at INFO, each behind a word it needs (a plain scan before the regex, on every
# I line): the Python stub's own report (pb_stub.cc), its news that the server went away (signals; beside
# another failure, settle.py drops it), TensorFlow's loader status (framework_rules), vLLM's missing
# platform.
_FAILS_AT = (
    ("Python stub", re.compile(r'^"?Failed to (?:pre)?initialize Python stub(?: for auto-complete)?: \S')),
    ("Non-graceful", re.compile(STUB_PARENT_GONE)),
    ("SavedModel load", INFO_LEVEL_FAILURE),
    # vLLM finding no device platform at all (vllm/platforms/__init__.py, 0.8 on): the engine cannot start.
    ("No platform detected", re.compile(VLLM_NO_PLATFORM)),
    # kube-scheduler logs the pod it cannot place at Info (severity.SCHEDULER_NO_FIT).
    ("Unable to schedule", re.compile(SCHEDULER_NO_FIT)),
)
_FAILED_BARE_LINE = re.compile(FAILED_BARE.pattern.replace("^", r"^\s*", 1), re.M)
# A default instance name after its model's: _<group>_<index> when the config has an instance_group, else
# _0 (2.51 names a model's only default instance ``m_0``: TRITONBACKEND_ModelInstanceInitialize: m_0). Any
# other single number is a name (`bert` and `bert_2` are two models).
_INSTANCE_OF = (re.compile(r"_0$"), re.compile(r"_\d+_\d+$"))


class LineReader(VerdictReader):
    """Reads one event into the per-model state the `Diagnoser` holds (`_read`)."""

    _summary: list[Obs]
    _unmatched: dict[str, list[object]]
    _unexplained: list[Obs]
    _unreachable: list[Obs]
    _own_lines: bool
    _warning_causes: list[Obs]
    _worded: WordedFailures
    _gpu: GpuContext
    _progress: LoadProgress
    _quoted: QuotedComments
    _repositories: RepositoryPaths
    _attach_after: tuple[ModelState, Obs] | None
    releases: ReleaseReader
    harmless_lines: int
    serving_lines: int

    def _read(self, event: LogEvent, index: int) -> None:
        quiet = quiet_running_compat_banner(event.message) if event.source == SOURCE_RAW else event.message
        if quiet is not event.message:  # the NGC banner of a container that runs (blocks.py)
            self._gpu.driver_present = True  # (it read the host driver's version: `GpuContext`)
            event = dataclasses.replace(event, message=quiet)
        self._worded.note(event)  # (the last resort's lines: worded.py)
        message = event.message
        level = event_level(event)
        # (a gRPC client's poller line has gpr_log's level too, but it is no line of Triton's)
        self._own_lines = self._own_lines or (bool(level) and not CLIENT_CHANNEL_POLLER.search(message))
        self._gpu.note(event, index)
        self._progress.note(event)
        self._quoted.note(event)
        if event.source in (SOURCE_RAW, SOURCE_OPTION):
            self.releases.note(message)
        if event.source == SOURCE_OPTION:
            return
        if event.source == SOURCE_RAW and "\n" in message:
            # a pasted block of another logger's lines: each of its serving or harmless lines as on its own
            event = self._quiet_lines(event, 0)
            if event.message is not message:
                message = event.message.lstrip("\n")
                if not message.strip():
                    return
                skipped = len(event.message) - len(message)  # blanked lines on top: the block starts lower
                event = dataclasses.replace(
                    event, line=event.line + skipped, message=message, text=message.split("\n", 1)[0]
                )
        if not level and event.source == SOURCE_RAW:
            # Another logger's line with its own level (TensorRT-LLM's, vLLM's, Python logging's ``WARNING``):
            # read at that level, as Triton's own W and I lines are, not as an error.
            level = own_level(message)
        if event.source == SOURCE_TABLE:
            self._feed_table_row(event, index)
            return
        head = message.split("\n", 1)[0]
        if is_dropped_setting(head):  # a setting the server refused and served without (dropped.py)
            level = LEVEL_WARNING
        bare = FAILED_BARE.match(head)  # core's closing line, any level
        if bare is None and "failed to load" in head and "\n" in message:
            # wrapped by hand before the name (24.06's quotes, unclosed on the first line, closed after it)
            bare = FAILED_BARE.match(unquote(join_hand_wraps(message).split("\n", 1)[0]).rstrip('"'))
        below = None
        if bare is None and event.source == SOURCE_RAW and "failed to load" in message:
            # on a later line of a pasted block (the paste's own words first)
            bare = _FAILED_BARE_LINE.search(message)
            if bare is not None:
                below = deciding_line(event, lambda piece: FAILED_BARE.match(piece.strip()) is not None)
        if bare and not (state := self._model(bare["model"])).failed:  # its E line may be cut off
            state.failed = True
            line, text = below or (event.line, evidence_text(event))
            state.add(obs := Obs(index, line, text, LEVEL_ERROR, None, message, True))
            if below is None:
                self._pending.attach(state, obs)
            else:  # its cause may be above it in this block: attached once the block is read
                self._attach_after = (state, obs)
        if level == LEVEL_INFO and any(word in head and fails.search(head) for word, fails in _FAILS_AT):
            level = LEVEL_ERROR
        if level == LEVEL_INFO and not STUB.search(message.split("\n", 1)[0]):
            if IMPORT_RECOVERED.search(message.split("\n", 1)[0]):
                self._pending.drop(lambda o: o.reason.startswith("Traceback"))
            self._feed_info_continuation(event, index)
            return
        if event.source == SOURCE_RAW and is_paste_prompt(message):
            return  # a comment or a shell prompt line in a paste
        if is_harmless(message):
            self.harmless_lines += 1
            if folded_after_harmless(message):
                # A harmless warning does not hide the raw lines pasted after it (a client's error).
                self._feed_info_continuation(event, index)
            return
        if self._pending and level == LEVEL_WARNING and AUTOFILL_GAVE_UP.match(message):
            self._pending.drop(lambda o: o.runbook == c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE)
            return
        if is_summary(head):  # (a consequence on the line; a cause folded under it is still read)
            self._summary.append(Obs(index, event.line, evidence_text(event), level, None, message))
            return
        if self._feed_model_line(event, index):
            return
        if (own := own_part(message, event.text)) is not message:
            event = dataclasses.replace(event, message=own)
            message = own
        # for the signal checks; a Kubernetes Event document's lines are its fields, no person's wraps
        # (joined, its type and reason would no longer be one object's: k8s_documents.py)
        whole = message if may_hold_event(message) else join_hand_wraps(message)
        failing = level in (LEVEL_ERROR, LEVEL_FATAL) or is_failure_line(whole, level)
        if failing and "\n" not in message and is_serving_wording(message):
            self.serving_lines += 1  # a serving line whose own words read as a cause (level_inventory.py)
            return
        # A backtrace without its message: what failed is unknown (its symbols only say what ran).
        frames = failing and only_frames(message)
        runbook = None if frames else classify(message)
        if (
            runbook is not None
            and "\n" not in message
            and is_harmless_warning(message)
            and LEVEL_WARNING in (level, line_level(head))
        ):
            return  # a warning that only names a possibility (level_inventory.yaml's harmless class)
        if (
            runbook == c.RUNBOOK_LLM_BACKEND_CONFIG
            and not failing
            and level != LEVEL_WARNING
            and not (_FAILURE_WORD.search(message) or is_backend_failure(message))
        ):
            runbook = None  # LLM wording counts on an error line or beside failure words, not on a setting
        runbook = over_crash(runbook, message)
        decides: Callable[[str], bool] = lambda piece: classify(piece) == runbook  # noqa: E731
        if (
            runbook is None
            and (failing or is_backend_failure(whole) or is_server_failure(whole))
            and not frames
        ):
            # The class layer: a failure line whose wording no rule knows, read by its cause class.
            runbook = cause_class(message)
            if runbook is not None:
                found = runbook
                decides = lambda piece: cause_class(piece) == found  # noqa: E731
                level = level or LEVEL_ERROR
        elif runbook is None and (level == LEVEL_WARNING or line_level(head) == LEVEL_WARNING):
            self._note_warning_cause(event, index)
        if runbook is None and is_backend_failure(whole):
            # A backend's (TensorRT, ONNX Runtime, libtorch, CUDA) own error line that names no known
            # class: the model its path names failed, else the server-wide finding says so.
            owner = owning_model(message)
            obs = Obs(index, event.line, evidence_text(event), level or LEVEL_ERROR, None, message, True)
            if owner:
                state = self._owned(*owner, message)
                state.failed = True
                state.add(obs)
            else:
                self._server_failures.append(obs)
            return
        if runbook is None and is_server_failure(whole):
            line, text = deciding_line(event, is_server_failure)
            self._server_failures.append(Obs(index, line, text, level or LEVEL_ERROR, None, message, True))
            return
        if runbook is not None:
            line, text = deciding_line(event, decides)
            if not level and WARNING_BANNER.match(text) and not fails_beside_warnings(message):
                level = LEVEL_WARNING  # a pasted tool's own "WARNING:" (Docker CLI, the NGC entrypoint)
            runbook = self._repositories.cause(runbook, message)  # a repository the table lists
            obs = Obs(index, line, text, level or LEVEL_ERROR, runbook, message)
            owner = owning_model(message)
            if owner:
                state = self._owned(*owner, message)
                state.add(obs)
                if STUB.search(message) and not state.failed:
                    state.stuck = True
                return
            named = self._instance_model(message)
            if named is not None:
                state = self._model(named)
                state.add(obs)
                if STUB.search(message) and not state.failed:
                    state.stuck = True
                return
            self._pending.add(obs)
            return
        if failing or (event.source == SOURCE_RAW and _LEVEL_START.search(message)):
            if "\n" not in message and is_serving_line(message):
                # An error line a healthy server writes while it serves or stops (level_inventory.yaml's
                # serving class, read from the sources): a request's bookkeeping, a cancel, an unload, the
                # shutdown. Only here, where no rule explains it: the error it carries may name a cause.
                self.serving_lines += 1
                return
            self._add_unmatched(event)
            # (a leveled line is its own failure: a level word below it does not decide)
            words = _LEVEL_LINE if event.source == SOURCE_RAW else None
            line, text = deciding_line(
                event, lambda piece: failure_piece(piece) is not None or bool(words and words.match(piece))
            )
            if not failing and (found := cause_class(text)) is not None:
                # a level word opening a later line of a pasted block (an installer's "ERROR: The kernel
                # module failed to load"): that line, read by its cause class as a line of its own is
                self._pending.add(Obs(index, line, text, level or LEVEL_ERROR, found, message))
                return
            self._unexplained_line(Obs(index, line, text, level or LEVEL_ERROR, None, message, True))

    def _unexplained_line(self, obs: Obs) -> None:
        """An unexplained error line (never an empty answer); a gRPC client's own line: see finish."""
        if is_client_side(obs.reason):
            self._unreachable = [*self._unreachable, obs][:MAX_PENDING]
            return
        self._raise_warning_causes()
        if len(self._unexplained) < MAX_PENDING:
            self._unexplained.append(obs)

    def _note_warning_cause(self, event: LogEvent, index: int) -> None:
        """A warning whose cause class is known: a root cause only if a failure line follows it."""
        runbook = cause_class(event.message)
        if runbook is not None and "\n" not in event.message and is_harmless_warning(event.message):
            return  # a wording the sources write when nothing failed
        if runbook is not None and len(self._warning_causes) < MAX_PENDING:
            self._warning_causes.append(
                Obs(index, event.line, evidence_text(event), LEVEL_ERROR, runbook, event.message)
            )

    def _raise_warning_causes(self) -> None:
        """A failure line nothing explains follows warnings that name a cause class: the earliest
        of them is the root cause (the failure is its consequence). Where CUDA saw no device (or an
        insufficient driver) while the log needs a GPU, that is the root cause."""
        gpu_cause = self._gpu.take_gpu_cause()
        if gpu_cause is not None:
            self._pending.add(gpu_cause)
            self._warning_causes.clear()
            return
        if self._warning_causes:
            self._pending.add(self._warning_causes[0])
            self._warning_causes.clear()

    def _owned(self, name: str, version: str | None, message: str) -> ModelState:
        """The state of the model a line names. python_be.cc quotes an instance's name as the model's
        (``for model 'm_0_0'``): a name that extends by ``_<group>_<index>`` a model already seen, or the
        model of an instance the line names too (``Stub process 'm_0_0'``), or of a load the log shows
        (``loading: m:2``: explicit model control prints no status table), is that model's instance. Every
        version's instance has that name: a traceback frame in the model's own version folder
        (``/m/2/model.py(23)``) names the version."""
        if name not in self._models:
            for suffix in _INSTANCE_OF:
                if (cut := suffix.search(name)) is None:
                    continue
                model = name[: cut.start()]
                known = model in self._models or self._progress.started(model)
                if known or model == self._instance_model(message):
                    name = model
                    break
        if version is None and "/model.py(" in message:  # every version's instance is `m_0_0`: its
            # traceback's folder says which (a pattern per model name: only on a line holding a frame)
            frame = re.search(rf"/{re.escape(name)}/(\d+)/model\.py\(\d+\)", message)
            version = frame[1] if frame else None
        return self._model(name, version)

    def _instance_model(self, message: str) -> str | None:
        """The model a model-instance name in ``message`` belongs to, if any."""
        m = INSTANCE.search(message)
        if m is None:
            return None
        if m["model"]:
            return m["model"]
        inst = m["inst"]
        # Prefer a model already seen whose name the instance name extends.
        for name in self._models:
            if inst == name or inst.startswith(name + "_"):
                return name
        return inst

    def _feed_info_continuation(self, event: LogEvent, index: int) -> None:
        """Raw lines after an ``I`` line (a shell error, a third-party library's output) can be a cause."""
        event = self._quiet_lines(event, 1)
        found = read_continuation(event, index)
        if found is None:
            return
        if found.obs.runbook is None:
            self._unexplained_line(found.obs)
        elif found.model is not None:
            self._model(found.model, found.version).add(found.obs)
        else:
            self._pending.add(found.obs)

    def _quiet_lines(self, event: LogEvent, first: int) -> LogEvent:
        """Another logger's lines in a block (folded under an I line, or pasted together) that are its serving
        wordings (TensorRT-LLM's "[TensorRT-LLM][ERROR] Missing stats": counted) or warnings that say nothing
        failed (its "[TensorRT-LLM][WARNING] Layer '...' has type 'allocate', which could ... run out of
        memory"), blanked from line `first` on, their line numbers kept: read as on lines of their own."""
        lines = event.message.split("\n")
        serving = [k for k in range(first, len(lines)) if is_serving_wording(lines[k])]
        harmless = [
            k
            for k in range(first, len(lines))
            if is_harmless_warning(lines[k]) and line_level(lines[k]) == LEVEL_WARNING
        ]
        if not serving and not harmless:
            return event
        self.serving_lines += len(serving)
        gone = {*serving, *harmless}
        return dataclasses.replace(
            event, message="\n".join("" if k in gone else t for k, t in enumerate(lines))
        )

    def _add_unmatched(self, event: LogEvent) -> None:
        key = template_of(event)
        entry = self._unmatched.get(key)
        if entry is not None:
            entry[0] = int(entry[0]) + 1  # type: ignore[call-overload]
            return
        if len(self._unmatched) >= MAX_UNMATCHED_TEMPLATES:
            return
        self._unmatched[key] = [1, Evidence(event.line, evidence_text(event))]
