"""Pure: lines of a Triton log -> `LogEvent`s.

Understands every shape users paste:

- glog (`E1129 16:25:20.940736 3898 model_lifecycle.cc:642] "..."`), the message quoted and
  `\\n`-escaped (2.4x and later) or unquoted (older releases, multi-line);
- `--log-format=ISO8601` (`2024-11-29T16:25:20Z E 3898 model_lifecycle.cc:642] ...`);
- the startup model status table (`| model | 1 | UNAVAILABLE: ... |`, with continuation rows);
- raw lines Triton's logger does not own: `[libprotobuf ERROR ...]`, `error: creating server: ...`,
  Python tracebacks printed by the backend stub (they continue the event before them);
- copy-paste artifacts: collectors' prefixes, quoting, indentation, CRLF, truncated lines (each
  line's shape is `lineshape`'s), shippers' JSON records (`envelopes`).

Input is ``(line_number, text)`` pairs, so a caller may skip lines that cannot matter (see
`scan.py`): a gap in line numbers ends the current event. Nothing here raises on any text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from triton_sre.diagnosis.envelopes import SKIP, Unwrapper, may_hold_record
from triton_sre.diagnosis.events import (
    SOURCE_OPTION,
    SOURCE_RAW,
    SOURCE_TABLE,
    LogEvent,
)
from triton_sre.diagnosis.glued import split_glued
from triton_sre.diagnosis.lineshape import (
    KIND_BORDER,
    KIND_LOG,
    KIND_SPECIAL,
    KIND_TABLE,
    LEVEL_ERROR,
    LEVEL_INFO,
    MAX_LINE_CHARS,
    STATUS_WORDS,
    TERMINAL_WIDTHS,
    is_paste_prompt,
    looks_cut,
    unquote,
)
from triton_sre.diagnosis.log_layouts import LEVEL_WORDS
from triton_sre.diagnosis.prefixes import PrefixReader
from triton_sre.diagnosis.repositories import OPTION_PREFIX as REPOSITORY_ROW
from triton_sre.diagnosis.severity import is_failure_line, line_level

__all__ = [
    "MAX_CONTINUATION_CHARS",
    "MAX_CONTINUATION_LINES",
    "STUB_FRAME",
    "parse",
    "parse_text",
]

MAX_CONTINUATION_LINES = 200
"""Raw lines appended to one event at most (a traceback, a config dump); the rest are dropped."""
MAX_CONTINUATION_CHARS = 32_000
_MAX_WIDTHS = 64
"""A paste's first non-blank line comes within its first lines (a reader that skips lines starts later)."""

_STATUS_WORD = re.compile(rf"{STATUS_WORDS}\b")
# A status cell pasted without the start of its row (the model and version columns cut off):
# ``UNAVAILABLE: Unknown: [22:10:17] /rapids_triton/bui |``, its wrapped rows following.
_CUT_ROW = re.compile(r"(UNAVAILABLE|Not loaded): .*\|\s*$")
# A row pasted without its leading border (`` preprocessing  | 1 | UNAVAILABLE: ... |``): core's
# TablePrinter opens every row with ``|``, so a raw line with the model, version and status columns in
# that order is still a row. The status cell may itself hold ``|`` (a Python ``type | type`` error).
# (Each blank run is matched once: a lazy cell before ``\s*\|`` rescans a long run of blanks from every
# character, quadratic on a padded cell.)
_LEAD_CUT_ROW = re.compile(
    r"\s*([^|\s](?:[^|]*[^|\s])?)\s*\|\s*(\d+|-)\s*\|\s*((?:UNAVAILABLE|Not loaded): .*)$"
)
_OTHER_LOGGER = re.compile(rf"{LEVEL_WORDS}: \S")
"""Another program's failure line (``ERROR: illegal value '' specified for bool flag 'x'``, gflags): never
part of the message of an ``I`` or ``W`` line of Triton's before it."""
_TABLE_REST = re.compile(r"[-+]+$|\s*(?:Status\s*)?\|$")
STUB_FRAME = r"(?:<frozen [\w.]+>|\S+)\(\d+\): <?[\w.]+>?"
"""A frame of the Python stub's traceback (pybind11's "At:" block: ``  <file>.py(<line>): <function>``,
``<frozen importlib._bootstrap>(703): _load_unlocked``); `frames` reads the same shape."""
_STUB_FRAME = re.compile(STUB_FRAME + "$")


def _table_cells(s: str) -> list[str]:
    body = s.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    return body.split("|")


class _Parser(PrefixReader):
    def __init__(self) -> None:
        super().__init__()
        self.cur: list[object] | None = None  # [line, level, source, text, parts, chars, model, version]
        self.last_line = 0
        self.in_model_table = False
        self.last_cell = ""
        self.cut = False
        """The status cell of the last table row as printed (padding kept), for `_continue_cell`."""
        self.prev_raw = ""
        """The line fed before this one, as written (read only where a raw line may go on it: `_wrapped`)."""
        self.wrap_counts: dict[int, int] = {}
        """Widths of lines a raw line continued (`_wrapped`)."""
        self.widest = 0
        """The widest line so far, as written: a terminal that cut lines at a width leaves none wider."""
        self.quoted = False
        """The current log event's message is quoted (24.06+): a wrapped piece ends with its closing quote."""
        self.prompt = False
        """The current event is a shell prompt's command: no line goes on it but its own cut rest."""

    def _flush(self) -> LogEvent | None:
        cur = self.cur
        self.cur = None
        if cur is None:
            return None
        line, level, source, text, parts, _chars, model, version = cur
        assert isinstance(parts, list)
        message = "\n".join(parts)
        if source == SOURCE_TABLE:
            message = message.strip("\n")
        return LogEvent(
            line=int(line),  # type: ignore[call-overload]
            level=str(level),
            source=str(source),
            message=message,
            text=str(text),
            model=model,  # type: ignore[arg-type]
            version=version,  # type: ignore[arg-type]
            cut=source == SOURCE_TABLE and self.cut,
        )

    def _start(
        self,
        line: int,
        level: str,
        source: str,
        text: str,
        message: str,
        model: str | None = None,
        version: str | None = None,
    ) -> None:
        self.cur = [line, level, source, text, [message], len(message), model, version]
        self.cut = False
        self.last_cell = ""
        self.quoted = False
        self.prompt = False

    def _wrapped(self, before: str, piece: str, piece_width: int) -> bool:
        """Whether ``piece`` goes on the line before it (`lineshape.looks_cut`), cut at a terminal's width."""
        width = looks_cut(before, piece, piece_width)
        return width is not None and self._cut_at(width)

    def _row_wrapped(self, before: str, raw: str) -> bool:
        """Whether ``raw`` is the rest of the table line before it (no wider), cut at a terminal's width."""
        width = len(before.rstrip("\r\n"))
        return bool(raw.strip()) and len(raw.rstrip("\r\n")) <= width and self._cut_at(width)

    def _cut_at(self, width: int) -> bool:
        """Whether a line that filled ``width`` was cut there: a common terminal width, or one another line
        was cut at already; never a width an earlier line exceeds (a terminal cutting there would have cut
        that line too). Counts the width seen."""
        if self.widest > width:
            return False
        seen = self.wrap_counts.get(width, 0)
        if seen or len(self.wrap_counts) < _MAX_WIDTHS:
            self.wrap_counts[width] = seen + 1
        return seen >= 1 or width in TERMINAL_WIDTHS

    def _join(self, piece: str, blank: bool) -> None:
        """``piece`` appended to the current line, as it was before the cut."""
        cur = self.cur
        assert cur is not None
        parts = cur[4]
        assert isinstance(parts, list)
        gap = " " if blank else ""
        room = MAX_LINE_CHARS - len(str(parts[-1])) - len(gap)
        if room <= 0:
            return  # a line rejoined is cut where the scanner cuts one written whole
        piece = piece[:room]
        if len(parts) == 1:  # the evidence: the line as written
            cur[3] = f"{str(cur[3]).rstrip()}{gap}{piece}"
        if self.quoted:
            piece = unquote('"' + piece)
        parts[-1] = f"{str(parts[-1]).rstrip()}{gap}{piece}"
        cur[5] = int(cur[5]) + len(gap) + len(piece)  # type: ignore[call-overload]

    def _append(self, piece: str) -> None:
        cur = self.cur
        if cur is None:
            return
        parts = cur[4]
        assert isinstance(parts, list)
        chars = int(cur[5])  # type: ignore[call-overload]
        if len(parts) > MAX_CONTINUATION_LINES or chars > MAX_CONTINUATION_CHARS:
            return
        parts.append(piece)
        cur[5] = chars + len(piece) + 1

    def _continue_cell(self, cell: str) -> None:
        """A continuation row of the status cell. Core's TablePrinter (common's table_printer.cc)
        cuts a cell line every `share` characters, mid-word, and prints each piece padded to the
        column (`` piece |``); a line of the message after a newline starts a row of its own. So
        when the row before filled its column (same width, text up to the padding space) this row
        is the same line going on and is joined with no separator; otherwise it is the message's
        next line and keeps its own indentation (pybind11's "At:" frames stay frames)."""
        prev, self.last_cell = self.last_cell, cell
        piece = (cell[1:] if cell.startswith(" ") else cell).rstrip()
        cur = self.cur
        assert cur is not None
        parts = cur[4]
        assert isinstance(parts, list)
        full = len(prev) == len(cell) > 2 and prev.endswith(" ") and prev[-3:-1] != "  "
        if full and piece and parts[-1]:
            # A piece that ends in its column's last position with a blank: the blank is the text's.
            gap = " " if prev[-2] == " " else ""
            parts[-1] = f"{parts[-1]}{gap}{piece}"
            cur[5] = int(cur[5]) + len(gap) + len(piece)  # type: ignore[call-overload]
            return
        self._append(piece)

    def skip(self, number: int) -> None:
        """Line ``number`` holds none of the program's text (a log export's own key or bracket): the lines
        around it stay contiguous."""
        self.last_line = number

    def feed(self, number: int, raw: str) -> Iterator[LogEvent]:
        contiguous = 0 <= number - self.last_line <= 1  # 0: another line of the same JSON record
        self.last_line = number
        raw = self._unindent(number, raw)
        before, self.prev_raw = self.prev_raw, raw
        if len(raw) > self.widest:  # (its line end counted: measured without it only here)
            self.widest = max(self.widest, len(raw.rstrip("\r\n")))
        if not contiguous:
            ev = self._flush()
            if ev:
                yield ev
            self.in_model_table = False
        kind, s, fields = yield from self._peel(number, raw, before)
        if kind in (KIND_LOG, KIND_SPECIAL):
            ev = self._flush()
            if ev:
                yield ev
            self.in_model_table = False
            assert fields is not None
            level, source, message = fields
            # Stripped inside the quotes as well: a quoted message ("... are: ") reads as its unquoted
            # form, whose trailing blanks the line's end already dropped.
            quoted = kind == KIND_LOG and message.lstrip().startswith('"')
            message = unquote(message.strip()).strip() if kind == KIND_LOG else message.strip()
            self._start(number, level, source, s, message)
            self.quoted = quoted
            return
        if kind == KIND_BORDER:
            if self.cur is not None:
                ev = self._flush()
                if ev:
                    yield ev
            return
        if kind == KIND_TABLE:
            cells = _table_cells(s)
            if len(cells) >= 3 and [c.strip() for c in cells[:3]] == ["Model", "Version", "Status"]:
                ev = self._flush()
                if ev:
                    yield ev
                self.in_model_table = True
                return
            if not self.in_model_table:
                # A row pasted without its header still says what it is by its status column; so does a
                # status cell's continuation row whose first row the paste cut, by the Python stub's
                # traceback frame it holds ("|  |  |   /x/base_model.py(80): initialize |").
                status_cells = "|".join(cells[2:]).strip()
                if len(cells) >= 3 and _STATUS_WORD.match(status_cells):
                    self.in_model_table = True
                elif (
                    len(cells) >= 3
                    and not cells[0].strip()
                    and not cells[1].strip()
                    and _STUB_FRAME.match(status_cells)
                ):
                    ev = self._flush()
                    if ev:
                        yield ev
                    self.in_model_table = True
                    self._start(number, LEVEL_ERROR, SOURCE_TABLE, s, status_cells)
                    self.last_cell = "|".join(cells[2:])
                    return
                else:
                    ev = self._flush()
                    if ev:
                        yield ev
                    if is_failure_line(raw.strip()):
                        # Not a table: a log layout with ``|`` columns (loguru's ``time | LEVEL | ...``).
                        self._start(number, "", SOURCE_RAW, s, raw.strip())
                        return
                    if len(cells) == 1 and cells[0].strip():
                        # One cell: a border in front of a line (a quoted block, a boxed paste, a
                        # rendered status cell), not a row: the line itself, for the rules to read.
                        self._start(number, "", SOURCE_RAW, s, cells[0].strip())
                        return
                    if len(cells) >= 2 and cells[0].strip() == "server_version":
                        value = cells[1].strip()
                        yield LogEvent(number, LEVEL_INFO, SOURCE_OPTION, f"server_version {value}", s)
                    elif len(cells) >= 2 and cells[0].strip().startswith(REPOSITORY_ROW):
                        # a repository the server was given (repositories.py tells it from a model's file)
                        row = f"{cells[0].strip()} {cells[1].strip()}"
                        yield LogEvent(number, LEVEL_INFO, SOURCE_OPTION, row, s)
                    return
            if len(cells) == 2 and cells[0].strip() and s.rstrip().endswith("|"):
                # A whole row of two columns (its closing border there, so not a row cut short): the
                # options table that follows the model table ("| exit_timeout | 30 |"), not a model.
                ev = self._flush()
                if ev:
                    yield ev
                self.in_model_table = False
                return
            if len(cells) < 3:
                # A row cut short by a truncated paste: keep what is there.
                cells = [*cells, "", ""][:3]
            model, version = cells[0].strip(), cells[1].strip()
            status = "|".join(cells[2:]).strip()
            cell = "|".join(cells[2:])
            if not model and not version:
                if self.cur is not None and self.cur[2] == SOURCE_TABLE:
                    self._continue_cell(cell)
                    self.cut = not s.rstrip().endswith("|")
                return
            ev = self._flush()
            if ev:
                yield ev
            level = LEVEL_INFO if status.startswith("READY") else LEVEL_ERROR
            self._start(
                number,
                level,
                SOURCE_TABLE,
                s,
                status,
                model=model,
                version=None if version in ("", "-") else version,
            )
            self.cut = not s.rstrip().endswith("|")
            self.last_cell = cell
            return
        # A raw line: it continues the current log event (a traceback, an unquoted multi-line
        # message); otherwise it stands alone. A comment or shell-prompt line (``# ...``) never
        # takes the lines after it: they are what the paste is about.
        if is_paste_prompt(s):
            ev = self._flush()
            if ev:
                yield ev
            self._start(number, "", SOURCE_RAW, s, s.strip())
            self.prompt = True  # it takes only its own rest, where a terminal cut it (`_wrapped`)
            return
        # (Tried on the line as pasted too: the peeled one may have lost the model and version
        # columns to the ``docker compose`` prefix pattern, ``NAME  | ``.)
        lead = (_LEAD_CUT_ROW.match(s) or _LEAD_CUT_ROW.match(raw)) if "|" in s else None
        if lead:
            ev = self._flush()
            if ev:
                yield ev
            self.in_model_table = True
            version = lead.group(2)
            status = lead.group(3).rstrip().rstrip("|").strip()
            self._start(
                number,
                LEVEL_ERROR,
                SOURCE_TABLE,
                s,
                status,
                model=lead.group(1),
                version=None if version == "-" else version,
            )
            return
        if _CUT_ROW.match(s.strip()):
            ev = self._flush()
            if ev:
                yield ev
            self.in_model_table = True
            self._start(number, LEVEL_ERROR, SOURCE_TABLE, s, s.strip().rstrip("|").strip())
            return
        cur = self.cur
        row_cut = cur is not None and cur[2] == SOURCE_TABLE and self.cut
        rest = row_cut or (_TABLE_REST.match(s) is not None and before.lstrip()[:1] in ("+", "|"))
        if rest and self._row_wrapped(before, raw):
            if not row_cut:
                return  # the rest of a border or of the header row a terminal cut at its width
            # The rest of a status row a terminal cut at its width: the cell goes on (to the row's border).
            piece = s.rstrip()
            self.cut = not piece.endswith("|")
            self.last_cell += piece if self.cut else s.rstrip("\r\n")[:-1]  # as printed: padding kept
            self._join(piece if self.cut else piece[:-1].rstrip(), before.endswith(" "))
            return
        if self.cur is not None and self.cur[2] != SOURCE_TABLE:
            if self.cur[4] == [""] and s.strip() and (s.lstrip()[:1] == '"' or self.cur[1] in ("E", "F")):
                # A header whose message is on the next line (a paste wrapped right after ``] ``): a
                # quoted line (as Triton writes messages since 24.06), or any line after an E or F
                # header, is its message, and the evidence shows both. (An I header before prose is not.)
                self.cur[4] = [unquote(s.strip()).strip()]
                self.cur[3] = f"{str(self.cur[3]).rstrip()} {s.strip()}"
                self.quoted = s.lstrip()[:1] == '"'
                return
            # (a line that carries a collector's prefix of its own was written as a line, not cut from one)
            line, before = raw.rstrip("\r\n"), before.rstrip("\r\n")
            if (self.cur[1] in (LEVEL_INFO, "W") and _OTHER_LOGGER.match(s)) or (
                not self.cur[1] and line_level(s.strip())
            ):
                # ... and a line another logger marks INFO or WARNING of its own (vLLM's ``INFO 02-20 21:47:29
                # model_runner.py:977]``, a JSON record's level) is a line of its own, not more of a pasted
                # block's message: one program's whole output under ``kubectl logs`` is many lines.
                ev = self._flush()
                if ev:
                    yield ev
                self._start(number, "", SOURCE_RAW, s, s.strip())
                return
            peeled = len(s) < len(line) and line.endswith(s)
            if not peeled and self._wrapped(before, s, len(line)):
                self._join(s, before.endswith(" "))
                return
            if not self.prompt:
                self._append(s)
                return
        ev = self._flush()
        if ev:
            yield ev
        if s.strip():
            self._start(number, "", SOURCE_RAW, s, s.strip())

    def close(self) -> Iterator[LogEvent]:
        ev = self._flush()
        if ev:
            yield ev


def parse(lines: Iterable[tuple[int, str]]) -> Iterator[LogEvent]:
    """Events from numbered lines (numbers increase; a gap ends the current event). A line that is a log
    shipper's JSON record, or a pretty-printed export's text field, is read as the program's lines inside it
    (`envelopes`)."""
    parser = _Parser()
    unwrapper = Unwrapper()
    for number, raw in lines:
        if not (unwrapper.in_export or may_hold_record(raw)):
            for line in split_glued(raw):  # (one line but where two processes wrote into it)
                yield from parser.feed(number, line)
            continue
        entering = not unwrapper.in_export
        pieces = unwrapper.read(raw)
        if entering and unwrapper.in_export:
            yield from parser.close()  # the export's opening brackets are no part of its first line's event
        if pieces is None:
            for line in split_glued(raw):
                yield from parser.feed(number, line)
        elif pieces is SKIP:
            parser.skip(number)
        else:
            for piece in pieces:  # a shipper's JSON record: the program's own lines, under its number
                yield from parser.feed(number, piece)
    yield from parser.close()


def parse_text(text: str) -> list[LogEvent]:
    """All events of a log held in memory (tests, pasted snippets). Lines end at ``\\n`` only, as in files."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return list(parse(enumerate(lines, 1)))
