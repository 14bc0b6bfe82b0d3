"""The last resort of a diagnosis: a line whose own WORDS report a failure, in a layout no rule reads.

The engine decides what failed by the log's format (`severity.py`: a level, a banner, a traceback) and
its rules by exact wordings. Every new source the project has scored brought both a wording and a layout
nobody had read (a job scheduler's ``slurmstepd: error:``, a runtime's ``!!!!!!! Segfault encountered
!!!!!!!``, MPI's ``*** Your MPI job will now abort.``), and the answer was empty. Programs of every kind
report failure with a small shared vocabulary (error, failed, fatal, abort, killed, cannot, denied ...);
this module reads it where nothing else found anything:

- only a line that no format marks as INFO or WARNING (`severity.line_level`), and not the first line of
  a Triton ``I``/``W`` event (its level is known: its words are a note, not a failure);
- not where the words say nothing failed (``0 errors``, ``if the load fails``, ``falling back``);
- only after the last line that says the server or its model came up (``successfully loaded``, a READY
  row, ``Application startup complete``): a failure the server went on past is no failure of the start.

The finding quotes the lines, with the page of their cause class (`classes.py`) or the fallback page. It is
critical when a cause class reads a line and the log never says the server or a model came up (a start
that failed, and why); otherwise a warning: a line to read first, not a verdict (a healthy start's noise
reads the same in words no class knows). Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Final

from triton_sre import conventions as c
from triton_sre.diagnosis.classes import cause_class, over_crash
from triton_sre.diagnosis.events import SOURCE_OPTION, SOURCE_TABLE, LogEvent
from triton_sre.diagnosis.frames import classify
from triton_sre.diagnosis.k8s_documents import may_hold_event
from triton_sre.diagnosis.level_inventory import is_harmless_warning, is_serving_line
from triton_sre.diagnosis.lineshape import LEVEL_INFO, LEVEL_WARNING, is_paste_prompt
from triton_sre.diagnosis.log_layouts import QUIET_WORDS
from triton_sre.diagnosis.prefilter import fold, required
from triton_sre.diagnosis.report import Evidence, Finding
from triton_sre.diagnosis.severity import line_level
from triton_sre.diagnosis.signals import is_client_side, is_harmless

__all__ = ["FAILURE_WORDS", "NOT_A_FAILURE", "NOT_COUNTED", "START_SUCCEEDED", "WordedFailures"]

FAILURE_WORDS: Final = re.compile(
    r"\b(?:errors?|errno|err(?=\s*[:=])|failed|failure|fails|fatal|abort(?:ed|ing|s)?|panic(?:ked)?"
    r"|exception|killed|segfault|segmentation fault|core dumped|illegal instructions?|invalid opcode"
    r"|cannot|can't|unable to|could ?n[o']t|not found|no such file|(?:permission|access) denied|refused"
    r"|unauthori[sz]ed|forbidden|is restricted|timed out|crash(?:ed)?|insufficient|out of memory"
    r"|not supported|unsupported|not compatible|incompatible|unrecognized|mismatch(?:ed)?"
    r"|evicted|low on resource|exceeded|not registered"
    r"|unknown (?:flag|option|argument|command|parameter|field)"
    r"|exit(?:ed)?(?: with)? (?:code|status)[ :=]*[1-9]\d*)\b",
    re.I,
)
"""The words programs of every kind use to report a failure (a C library's strerror texts, a shell's
``Killed``, a runtime's abort, an HTTP refusal, a flag parser's refusal), as a reader scanning a log for
trouble reads them."""

NOT_COUNTED: Final = re.compile(
    r"\b(?:no|0|zero|without) (?:errors?|failures?|exceptions?)\b"
    r"|\b(?:errors?|failures?|failed)\s*[:=]\s*0\b"
    r"|\b(?:if|when|unless|in case)\b[^.;]{0,60}\b(?:fails?|errors?)\b|\bon (?:error|failure)\b"
    r"|\berror[- ]level\b",
    re.I,
)
"""Failure words that report none: counted zero, a condition, a log level's name (their span is not read;
the rest is)."""

NOT_A_FAILURE: Final = re.compile(
    r"\bfall(?:ing)? ?back\b|\bignor(?:e|ed|ing)\b|\bretry(?:ing)?\b"
    r"|\b(?:use|using|uses) (?:the )?default\b|\binstead\b"
    # a Python warning (``warnings``' ``file:line: CategoryWarning: message``, a class named ...Warning)
    r"|(?-i:\b[A-Z]\w*Warning\b)"
    # a process stopped on purpose (SIGTERM, SIGINT: a stop, as the engine reads Triton's exit handler's
    # signals), and CUDA's 100, no device, a CPU host's everyday answer
    r"|\bsignal (?:15|2)\b|\bSIG(?:TERM|INT)\b|\b(?:error|err)\b[: =]*100\b(?![.\d])",
    re.I,
)
"""A line that says nothing failed for good: a recovery it announces (what it does instead, the default
it uses, a retry), a warning by its class, a stop asked for, no device on a CPU host."""

_QUIET_LEVEL: Final = re.compile(rf"(?:^|[\s\[|(<])(?:{QUIET_WORDS}|NOTICE|NOTE)(?:[\]|)>:\s]|$)")
"""A level word in capitals below ERROR, in the line's own layout (``[INFO]``, ``WARNING file.py:50 --``,
``NOTE:``) before its failure words: what the line says is a note."""
_HEADING: Final = re.compile(r"^[\w .\-]{0,40}[:{]$|^-{1,2}[A-Za-z][\w-]*\b")
"""A heading or a structure's key (``Error Set:``, ``failed {``), or a command-line option a usage text
lists (``--log-error <boolean>``): it names a section or a setting, not a failure."""

START_SUCCEEDED: Final = re.compile(
    r"successfully loaded|loaded successfully|\|\s*READY\s*\||Started (?:GRPCInferenceService|HTTPService)"
    r"|startup complete|Uvicorn running on|Running on (?:https?://|local URL)|\blistening (?:on|at)\b"
    r"|server is (?:ready|running|up)\b|ready to roll|Successfully loaded servable|Running gRPC ModelServer",
    re.I,
)
"""Lines that say the server, or the model it names, came up (Triton's own and other servers' banners)."""

# The literals each pattern cannot match without (prefilter.required), looked for first: most lines of a big
# log hold none, and a substring test is far cheaper than the case-folding regex.
_FAILURE_LITERALS: Final = tuple(sorted(set().union(*required(FAILURE_WORDS))))
_SUCCESS_LITERALS: Final = tuple(sorted(set().union(*required(START_SUCCEEDED))))
_QUESTION: Final = re.compile(r"\w\?(?:\s|$)")
_MAX_LINES: Final = 3
_MAX_CLASSED: Final = 20
"""Lines read for a cause class, the first three quoted or not (bounded: the rules are many)."""
_MAX_LINE_CHARS: Final = 2000
_MAX_BLOCK_LINES: Final = 400


def _known_quiet(line: str) -> bool:
    """A line the engine already knows says nothing failed: a comment or shell prompt, an inventoried
    harmless line or warning, a healthy server's serving wording."""
    # (every serving wording that decides first, `is_serving_wording`, is a serving line too)
    return is_paste_prompt(line) or is_harmless(line) or is_harmless_warning(line) or is_serving_line(line)


def _class_of(text: str) -> str | None:
    """The page of a line's known wording (`frames.classify`, a crash's cause first) or its cause class."""
    return over_crash(classify(text), text) or cause_class(text)


class WordedFailures:
    """Collects, in log order, the first lines after the last start-up success whose words report failure."""

    def __init__(self) -> None:
        self._lines: list[Evidence] = []
        self._classed: tuple[str, Evidence] | None = None  # the first such line a cause class reads
        self._came_up = False  # some line said the server or a model came up
        self._warned: tuple[str, Evidence] | None = None  # the first warning a cause class reads
        self._read = 0  # such lines read for a class
        self._open = True

    def close(self) -> None:
        """Read nothing more: a re-read of quoted comments (`quoted.py`) is no log of its own whose words
        could decide (the chunked scanner leaves only the comments of a log whose I lines it skipped)."""
        self._open = False
        self._forget()

    def _forget(self) -> None:
        self._lines = []
        self._classed = None
        self._warned = None
        self._read = 0

    def note(self, event: LogEvent) -> None:
        if not self._open:
            return
        if event.source == SOURCE_TABLE:  # a status row: READY is a model that came up; others are read
            if event.message.startswith("READY"):  # by the engine (a row is never an empty answer)
                self._forget()
                self._came_up = True
            return
        if event.source == SOURCE_OPTION:
            return
        if may_hold_event(event.message):
            return  # a Kubernetes Event or pod document: its reader (k8s_documents.py) decides
        lines = event.message.split("\n")[:_MAX_BLOCK_LINES]
        # A line with a known level (Triton's I, W, E, F) was read by the engine at that level, which
        # decided it: only the raw lines folded under it (other programs' output) are read here.
        first = 1 if event.level else 0
        before = ""
        for k, raw in enumerate(lines):
            line = raw.strip()[:_MAX_LINE_CHARS]
            if not line:
                before = ""
                continue
            # an indented line under another is its sentence wrapped: read with the words it continues
            said, before = (f"{before} {line}" if before and raw[:1] in " \t" else line), line
            folded = fold(line)
            if any(w in folded for w in _SUCCESS_LITERALS) and START_SUCCEEDED.search(line):
                self._forget()
                self._came_up = True
                continue
            if k < first or (len(self._lines) >= _MAX_LINES and self._classed) or self._read >= _MAX_CLASSED:
                if k == 0 and event.level == LEVEL_WARNING:
                    self._warning(event, line)
                continue
            if not any(w in folded for w in _FAILURE_LITERALS):
                if "warn" in folded and line_level(line) == LEVEL_WARNING:
                    self._warning(event, line, k)  # (a warning without failure words may name a cause)
                continue
            read = NOT_COUNTED.sub(lambda m: " " * len(m[0]), line)  # (offsets kept)
            if (words := FAILURE_WORDS.search(read)) is None or NOT_A_FAILURE.search(said):
                continue
            at = len(said) - len(line) + words.start()  # the failure word's offset in what the line says
            if _QUIET_LEVEL.search(said, 0, at) or _HEADING.match(line) or is_client_side(line):
                continue
            level = line_level(line)
            if level == LEVEL_WARNING:
                self._warning(event, line, k)
            if level in (LEVEL_INFO, LEVEL_WARNING) or _known_quiet(line):
                continue
            if _QUESTION.search(line) and ":" not in line:
                continue  # (a question in prose is a person's; a program's "Out of memory? X: y" is not)
            text = event.text if k == 0 and event.text else line
            evidence = Evidence(event.line + k, text.strip()[:_MAX_LINE_CHARS])
            if len(self._lines) < _MAX_LINES:
                self._lines.append(evidence)
            if self._classed is None:
                self._read += 1
                if (runbook := _class_of(said)) is not None:
                    self._classed = (runbook, evidence)

    def _warning(self, event: LogEvent, line: str, k: int = 0) -> None:
        """A warning line: kept when a cause class reads it, the first one, until a line says the start
        went on (a server that warns and then never comes up: the warning is the one lead)."""
        if self._warned is not None or self._read >= _MAX_CLASSED or _known_quiet(line):
            return
        self._read += 1
        if (runbook := _class_of(line)) is not None:
            text = event.text if k == 0 and event.text else line
            self._warned = (runbook, Evidence(event.line + k, text.strip()[:_MAX_LINE_CHARS]))

    def finding(self, titles: dict[str, str], remediations: dict[str, str]) -> tuple[Finding, ...]:
        """The finding for a log with no other finding (none when no line's words report a failure)."""
        if self._lines:
            runbook, quoted = c.RUNBOOK_UNKNOWN_LOAD_FAILURE, list(self._lines)
            if self._classed is not None:
                runbook, deciding = self._classed
                if deciding not in quoted:
                    quoted.append(deciding)
            severity = c.IMPACT_CRITICAL if self._classed and not self._came_up else c.IMPACT_WARNING
            message = (self._classed[1] if self._classed else quoted[0]).text
            note = (
                "No line of this log is in a format triton-sre reads as a failure, but these lines' own "
                "words report one, after the last sign that the server started: read them first."
            )
        elif self._warned is not None:
            runbook, warned = self._warned
            quoted, severity, message = [warned], c.IMPACT_WARNING, warned.text
            note = (
                "Nothing in this log failed in a format triton-sre reads, and nothing says the server or its "
                "model came up; this warning names a cause: read it first."
            )
        else:
            return ()
        remediation = f"{note} {remediations.get(runbook, '')}".strip()
        title = titles.get(runbook, runbook)
        return (Finding(None, None, runbook, title, severity, tuple(quoted), remediation, message=message),)
