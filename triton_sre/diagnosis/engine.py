"""Pure diagnosis: log events (or an UNAVAILABLE reason) -> findings with runbook ids.

`Diagnoser` consumes `LogEvent`s one at a time (constant memory in the log's length: state is
per model, plus bounded lists) and `finish()` returns a `Report`:

- every event is first checked against the lines that are harmless on a CPU host (never a
  cause) and the generic summary lines (``failed to load all models``: a consequence);
- a model and version are taken from the event when it names them (``failed to load 'm' version
  1: ...``, ``Poll failed for model directory 'm'``, a status-table row, a ``.../m/1/model.py``
  path in a traceback), the text is classified by `rules.CAUSE_RULES` (first match wins, so no two
  runbooks claim the same line);
- lines without a model (a libprotobuf error, ``ERROR: Failed to create instance: ...``, a stub
  line) are attached to the model whose failure follows them with the same cause or text;
- per model, the most specific cause wins; an ensemble that failed because a step failed is
  a consequence and is listed after the step's own finding;
- error lines nothing explains are grouped by template as ``unmatched``, never dropped.

`diagnose_reason` is the one-reason form the exporter uses for its ``runbook`` label.

This module reads events; `reasons.py` reads one message, `assemble.py` turns the collected state
into ordered findings, `report.py` holds the result types (re-exported here).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping

from triton_sre import conventions as c
from triton_sre.diagnosis.assemble import FindingBuilder, ModelState, Obs, evidence_text, stub_lock_abort
from triton_sre.diagnosis.blocks import (
    WARNING_BANNER,
    deciding_line,
    event_level,
    fails_beside_warnings,
    folded_line,
    quiet_running_compat_banner,
)
from triton_sre.diagnosis.classes import cause_class, over_crash
from triton_sre.diagnosis.continuation import read_continuation
from triton_sre.diagnosis.gpu_context import GpuContext
from triton_sre.diagnosis.lineshape import (
    LEVEL_ERROR,
    LEVEL_FATAL,
    LEVEL_INFO,
    LEVEL_WARNING,
    is_paste_prompt,
    join_hand_wraps,
    unquote,
)
from triton_sre.diagnosis.logparse import SOURCE_OPTION, SOURCE_RAW, SOURCE_TABLE, LogEvent, parse
from triton_sre.diagnosis.pending import MAX_PENDING, PendingCauses
from triton_sre.diagnosis.progress import LoadProgress
from triton_sre.diagnosis.quoted import QuotedComments
from triton_sre.diagnosis.reasons import (
    FAILED_BARE,
    INSTANCE,
    STUB,
    classify,
    classify_reason,
    diagnose_reason,
    index_events,
    is_harmless,
    is_summary,
    own_part,
    owning_model,
    template_of,
)
from triton_sre.diagnosis.releases import ReleaseReader
from triton_sre.diagnosis.report import Evidence, Finding, Report, Unmatched
from triton_sre.diagnosis.severity import failure_piece, is_failure_line, line_level, only_frames, own_level
from triton_sre.diagnosis.signals import (
    AUTOFILL_GAVE_UP,
    CLIENT_CHANNEL_POLLER,
    IMPORT_RECOVERED,
    crash_report_start,
    folded_after_harmless,
    is_backend_failure,
    is_client_side,
    is_server_failure,
)
from triton_sre.diagnosis.verdicts import VerdictReader

__all__ = [
    "Diagnoser",
    "Evidence",
    "Finding",
    "Report",
    "Unmatched",
    "classify_reason",
    "diagnose_events",
    "diagnose_index",
    "diagnose_reason",
    "template_of",
]

MAX_UNMATCHED_TEMPLATES = 200
# Words that make a levelless line a failure report, not a setting (``runtime_backend is set to [vllm]``).
_FAILURE_WORD = re.compile(
    r"\b(error|fail\w*|exception|invalid|cannot|can't|unable|not found|abort\w*|assert\w*|missing|denied)\b",
    re.I,
)
# A pasted line that starts with a failure level word (``ERROR: ...``, ``FATAL ...``): a raw block's first
# line in any case; a later one (the paste's own words came first) in capitals, or an ``Error: <what>`` /
# ``error while|when|during ...`` sentence, or a C++ exception's ``  what():  <message>``, not a report's
# ``Error Set:`` field.
_LEVEL_WORD = (
    r"[ \t]*(?:(?:ERROR|FATAL|CRITICAL)\b|Error:[ \t]+\S|[Ee]rror (?:when|while|during)\b"
    # libstdc++'s verbose terminate handler: the thrown exception's what(), indented under its first line
    r"|what\(\):  \S)"
)
_LEVEL_START = re.compile(rf"(?i:\A[ \t]*(?:ERROR|FATAL|CRITICAL)\b)|^{_LEVEL_WORD}", re.M)
_LEVEL_LINE = re.compile(_LEVEL_WORD)
_FAILED_BARE_LINE = re.compile(FAILED_BARE.pattern.replace("^", r"^\s*", 1), re.M)
# A default instance name after its model's: _<group>_<index> when the config has an instance_group, else
# _0 (2.51 names a model's only default instance ``m_0``: TRITONBACKEND_ModelInstanceInitialize: m_0). Any
# other single number is a name (`bert` and `bert_2` are two models).
_INSTANCE_OF = (re.compile(r"_0$"), re.compile(r"_\d+_\d+$"))


class Diagnoser(VerdictReader):
    """Feed events in log order, then `finish()`. Holds per-model state only."""

    def __init__(
        self, titles: Mapping[str, str] | None = None, remediations: Mapping[str, str] | None = None
    ) -> None:
        # Both from the runbook catalog (front matter), given by the caller: this module reads no file.
        self._titles = dict(titles or {})
        self._remediations = dict(remediations or {})
        self._models: dict[str, ModelState] = {}
        self._pending = PendingCauses()  # model-less causes waiting for a model failure (pending.py)
        self._summary: list[Obs] = []
        self._server_failures: list[Obs] = []  # the server (or its GPUs) failed; nothing explains it
        self._unmatched: dict[str, list[object]] = {}
        self._unexplained: list[Obs] = []  # error lines no rule explains (bounded)
        self._last_ready = -1  # the index of the last status-table row saying READY
        self._unreachable: list[Obs] = []  # a client's "cannot reach the server" lines
        self._own_lines = False  # a line of Triton's own logger was seen
        self._warning_causes: list[Obs] = []  # warnings naming a cause class, until a failure follows
        self._gpu = GpuContext()  # what CUDA said of the GPU (gpu_context.py)
        self._progress = LoadProgress()  # loads the log starts and never ends (progress.py)
        self._quoted = QuotedComments()  # an input made only of comment lines (quoted.py)
        self._index = 0
        self._attach_after: tuple[ModelState, Obs] | None = None
        self.releases = ReleaseReader()  # the log's release (`diagnose_index`: the live server's)
        self.harmless_lines = 0

    # -- feeding ---------------------------------------------------------------------------------
    def feed_all(self, events: Iterable[LogEvent]) -> Diagnoser:
        for event in events:
            self.feed(event)
        return self

    def feed(self, event: LogEvent) -> None:
        if event.level == LEVEL_ERROR and (k := crash_report_start(event.message)) is not None:
            # Triton's crash report folded under an error (a stub's, whose request crashed the server): an
            # event of its own, so the error names the cause (signals.py). Under an info line (the server
            # stopping) the crash stays with the line it followed: its wording is read with it.
            lines = event.message.split("\n")
            at = folded_line(event, k, lines[k])[0]
            self._feed(dataclasses.replace(event, message="\n".join(lines[:k])))
            event = LogEvent(at, "", SOURCE_RAW, "\n".join(lines[k:]), lines[k].strip())
        self._feed(event)

    def _feed(self, event: LogEvent) -> None:
        self._index += 1
        self._attach_after = None
        self._read(event, self._index)
        if self._attach_after is not None:  # a model's bare verdict below its cause, in one pasted block
            self._pending.attach(*self._attach_after)

    def _read(self, event: LogEvent, index: int) -> None:
        quiet = quiet_running_compat_banner(event.message) if event.source == SOURCE_RAW else event.message
        if quiet is not event.message:  # the NGC banner of a container that runs (blocks.py)
            event = dataclasses.replace(event, message=quiet)
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
        if not level and event.source == SOURCE_RAW:
            # Another logger's line with its own level (TensorRT-LLM's, vLLM's, Python logging's ``WARNING``):
            # read at that level, as Triton's own W and I lines are, not as an error.
            level = own_level(message)
        if event.source == SOURCE_TABLE:
            self._feed_table_row(event, index)
            return
        head = message.split("\n", 1)[0]
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
        whole = join_hand_wraps(message)  # for the signal checks
        failing = level in (LEVEL_ERROR, LEVEL_FATAL) or is_failure_line(whole, level)
        # A backtrace without its message: what failed is unknown (its symbols only say what ran).
        frames = failing and only_frames(message)
        runbook = None if frames else classify(message)
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
            self._add_unmatched(event)
            # (a leveled line is its own failure: a level word below it does not decide)
            words = _LEVEL_LINE if event.source == SOURCE_RAW else None
            line, text = deciding_line(
                event, lambda piece: failure_piece(piece) is not None or bool(words and words.match(piece))
            )
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
        found = read_continuation(event, index)
        if found is None:
            return
        if found.obs.runbook is None:
            self._unexplained_line(found.obs)
        elif found.model is not None:
            self._model(found.model, found.version).add(found.obs)
        else:
            self._pending.add(found.obs)

    def _add_unmatched(self, event: LogEvent) -> None:
        key = template_of(event)
        entry = self._unmatched.get(key)
        if entry is not None:
            entry[0] = int(entry[0]) + 1  # type: ignore[call-overload]
            return
        if len(self._unmatched) >= MAX_UNMATCHED_TEMPLATES:
            return
        self._unmatched[key] = [1, Evidence(event.line, evidence_text(event))]

    # -- results ---------------------------------------------------------------------------------
    def _driver_failure(self) -> None:
        """CUDA found the driver insufficient and nothing else failed: the driver's finding where the
        log needs a GPU or stops at the driver check (`GpuContext.driver_cause`), never on a CPU
        server's log that went on."""
        driver = self._gpu.driver_cause()
        if driver is None:
            return
        if self._pending.unattached() or self._server_failures or self._unexplained or self._summary:
            return
        if any(self._gpu.outranks_driver(state) for state in self._models.values()):
            return
        self._pending.add(driver)

    def finish(self) -> Report:
        if quoted := self._quoted.lines():
            # Every line was a comment: the log they quote (read once; its own comments stay comments).
            again = Diagnoser(self._titles, self._remediations)
            again._quoted.close()
            return again.feed_all(parse(quoted)).finish()
        self._driver_failure()
        release = self.releases.release
        builder = FindingBuilder(
            self._models, self._pending.unattached(), self._server_failures, self._summary,
            self._unexplained + ([] if self._own_lines else self._unreachable),
            titles=self._titles, remediations=self._remediations, release=release,
            # a load the log started and never finished is no model the table vouches for: its error
            # line may be why (the table then lists only some models), so nothing is disproved
            last_ready=-1 if self._progress.still_loading() else self._last_ready,
        )  # fmt: skip
        unmatched = [
            Unmatched(template, int(entry[0]), entry[1])  # type: ignore[call-overload, arg-type]
            for template, entry in self._unmatched.items()
        ]
        unmatched.sort(key=lambda u: (-u.count, u.example.line))
        found = builder.assemble()
        loading = self._progress.still_loading({f.model for f in found if f.model})
        open_loads = self._progress.still_loading()  # every load the log leaves open, explained or not
        if open_loads and any(f.runbook == c.RUNBOOK_SERVER_CRASHED for f in found):
            # The loads did not outlive the log: the process died while they ran, and their backends are the
            # first suspects of the crash; a model whose own error came first is named too (its load never
            # ended: the crash is what the loading was doing, not another failure).
            found = tuple(_crashed_while_loading(f, open_loads) for f in found)
            loading = ()
        if found and (lock_abort := stub_lock_abort(found, open_loads)) != found:
            found, loading = lock_abort, ()
        if (stopping := self._progress.stopping_line) is not None:
            found = _crashes_while_stopping(found, stopping)
        return Report(found, tuple(unmatched), self.harmless_lines, self._index, release, loading)


def diagnose_events(
    events: Iterable[LogEvent],
    titles: Mapping[str, str] | None = None,
    remediations: Mapping[str, str] | None = None,
) -> Report:
    """Diagnose a whole sequence of events."""
    return Diagnoser(titles, remediations).feed_all(events).finish()


def diagnose_index(
    index: Iterable[Mapping[str, object]],
    titles: Mapping[str, str] | None = None,
    remediations: Mapping[str, str] | None = None,
    server_version: str | None = None,
) -> Report:
    """Findings for a live server from ``POST /v2/repository/index`` entries (UNAVAILABLE ones);
    ``server_version`` (``GET /v2``'s) names the release."""
    diagnoser = Diagnoser(titles, remediations)
    if server_version:
        diagnoser.releases.note_version(server_version)
    return dataclasses.replace(diagnoser.feed_all(index_events(index)).finish(), live=True)


def _crashed_while_loading(finding: Finding, loading: tuple[str, ...]) -> Finding:
    if finding.runbook != c.RUNBOOK_SERVER_CRASHED:
        return finding
    names = ", ".join(loading)
    one = len(loading) == 1
    suspects = "that model's backend is the first suspect" if one else "their backends are the first suspects"
    note = f"It crashed while loading {names}: {suspects}."
    return dataclasses.replace(finding, remediation=f"{note} {finding.remediation}".strip())


def _crashes_while_stopping(found: tuple[Finding, ...], stopping: int) -> tuple[Finding, ...]:
    """A crash after the server began to stop ended a server that served no more: a warning (its exit
    status is still not 0, which a restart policy or a job may count), listed after what failed."""
    out = []
    for f in found:
        late = bool(f.evidence) and f.evidence[0].line > stopping
        if f.runbook == c.RUNBOOK_SERVER_CRASHED and f.model is None and late:
            note = (
                f"It crashed after the server began to stop (line {stopping}): no request was being served, "
                "but the exit status is not 0."
            )
            fix = f"{note} {f.remediation}".strip()
            f = dataclasses.replace(f, severity=c.IMPACT_WARNING, remediation=fix)
        out.append(f)
    return tuple(sorted(out, key=lambda f: f.severity != c.IMPACT_CRITICAL))
