"""Pure: lines of a Triton log -> `LogEvent`s.

Understands every shape users paste:

- glog (`E1129 16:25:20.940736 3898 model_lifecycle.cc:642] "..."`), the message quoted and
  `\\n`-escaped (2.4x and later) or unquoted (older releases, multi-line);
- `--log-format=ISO8601` (`2024-11-29T16:25:20Z E 3898 model_lifecycle.cc:642] ...`);
- the startup model status table (`| model | 1 | UNAVAILABLE: ... |`, with continuation rows);
- raw lines Triton's logger does not own: `[libprotobuf ERROR ...]`, `error: creating server: ...`,
  Python tracebacks printed by the backend stub (they continue the event before them);
- copy-paste artifacts: docker/kubectl timestamps, `docker compose` service prefixes,
  `[pod/...]`, syslog prefixes, leading `* ` / `> `, indentation, CRLF, truncated lines.

Input is ``(line_number, text)`` pairs, so a caller may skip lines that cannot matter (see
`scan.py`): a gap in line numbers ends the current event. Nothing here raises on any text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from triton_sre.diagnosis.envelopes import SKIP, Unwrapper
from triton_sre.diagnosis.pastes import retyped
from triton_sre.diagnosis.severity import is_failure_line

__all__ = [
    "MAX_CONTINUATION_CHARS",
    "MAX_CONTINUATION_LINES",
    "STUB_FRAME",
    "LogEvent",
    "classify_line",
    "is_paste_prompt",
    "parse",
    "parse_text",
    "peel_collector_prefix",
    "unquote",
]

MAX_CONTINUATION_LINES = 200
"""Raw lines appended to one event at most (a traceback, a config dump); the rest are dropped."""
MAX_CONTINUATION_CHARS = 32_000
MAX_LINE_CHARS = 64_000
"""Longer lines are cut (a 1 GB line must not become a 1 GB string)."""

LEVEL_INFO = "I"
LEVEL_WARNING = "W"
LEVEL_ERROR = "E"
LEVEL_FATAL = "F"
PROGRESS_MARKS: tuple[str, ...] = (
    "loading: ",
    "successfully loaded",
    "Started GRPCInferenceService",
    "Started HTTPService",
    "TRITONBACKEND_Initialize",
    "TRITONBACKEND_ModelInstanceInitialize",
)
"""Literals of the ``I`` lines that show start-up went on (and which backend and device it uses): the engine
weighs only these ``I`` lines around a CUDA warning, and the chunked scanner keeps them, so both
readers see the same."""
CLOSING_FAILURE = "failed to load '"
"""Core's closing line of a failed load (``failed to load '<model>'``, model_lifecycle.cc), which 2.51 logs
at ``I``: the engine reads it at any level (`reasons.FAILED_BARE`, for a model whose E line is cut off),
so the chunked scanner keeps the ``I`` lines holding it too."""

SOURCE_TABLE = "model-status-table"
SOURCE_PROTOBUF = "libprotobuf"
SOURCE_MAIN = "main"
SOURCE_RAW = ""
SOURCE_OPTION = "server-option"
"""A row of the options table Triton prints at start (only ``server_version`` is kept)."""


@dataclass(frozen=True, slots=True)
class LogEvent:
    """One logical log entry: a log line with its continuation lines, or one status-table row."""

    line: int
    """1-based line number of the event's first line."""
    level: str
    """I, W, E or F; "" for a raw line outside Triton's logger."""
    source: str
    """``file.cc:NNN`` for log lines, `SOURCE_TABLE`, `SOURCE_PROTOBUF`, `SOURCE_MAIN` or ""."""
    message: str
    """Unquoted and unescaped message; continuation lines appended after ``\\n``."""
    text: str
    """The first line as written (copy-paste prefixes removed), for evidence."""
    model: str | None = None
    """Status-table rows only: the model column."""
    version: str | None = None
    """Status-table rows only: the version column (None for ``-``)."""
    cut: bool = False
    """Status-table rows only: the row's last line ends without its border (cut by a terminal or a
    paste), so the message may stop mid-way (`inventory.leading_part_match`)."""


_GLOG = re.compile(r"([IWEF])(\d{4}) (\d\d:\d\d:\d\d(?:\.\d+)?)\s+(\d+) ([^\s\]]+)\](?: (.*)|$)", re.S)
_ISO = re.compile(
    r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)? ([IWEF]) (\d+) ([^\s\]]+)\](?: (.*)|$)",
    re.S,
)
# TensorFlow's C++ logging (tsl/platform/default/logging.cc, TF 1.x-2.x), as the TensorFlow backend and TF
# Serving print it: "2026-12-02 05:01:02.000000: W tensorflow/stream_executor/...cc:64] msg". Its level
# letter decides as glog's does (a CPU host's "Could not load dynamic library" is a W line, not a failure).
_TFLOG = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: ([IWEF]) ([^\s\]]+:\d+)\](?: (.*)|$)", re.S)
_PROTOBUF = re.compile(r"\[libprotobuf (ERROR|WARNING|FATAL|INFO)[^\]]*\]\s?(.*)", re.S)
_MAIN_ERROR = re.compile(r"error: (creating server|.*)", re.S)
# Prefixes log collectors add in front of every line (a raw line loses them too: `peel_collector_prefix`).
_COLLECTOR_PREFIXES = (
    # docker logs -t, kubectl logs --timestamps, journald/ISO timestamps, Python logging timestamps
    re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\s+"),
    # Kubernetes' CRI log file (/var/log/pods, /var/log/containers): after the timestamp, the stream and
    # F (a full line) or P (a part of a line the runtime split)
    re.compile(r"(?:stdout|stderr) [FP] "),
    # kubectl logs --prefix
    re.compile(r"\[pod/[^\]]*\]\s*"),
    # ROS 2 launch's per-process prefix: "[component_container-1] " (the executable's name and its
    # instance number, as Isaac ROS pastes show every line of an in-process Triton)
    re.compile(r"\[[A-Za-z_][\w.]*-\d+\] ?"),
    # docker compose service prefix: "triton-1  | "
    re.compile(r"[A-Za-z0-9][\w.-]*\s+\|\s?"),
    # Loki's logcli (default output): the stream's label set after the timestamp, '{app="triton"} '
    re.compile(r'\{(?:[A-Za-z_][\w.]*="(?:[^"\\\n]|\\.)*"(?:,\s*)?)*\}\s+'),
    # syslog and `journalctl` (short): "Jan 29 12:00:00 host triton[123]: "
    re.compile(r"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ [^\s:]+: "),
    # `journalctl -o short-iso` after its timestamp: "host tritonserver[123]: "
    re.compile(r"[\w.-]+ [\w./-]+\[\d+\]: "),
    # a quoted reply on GitHub, a forum or in mail: "> " (nested: "> > ")
    re.compile(r">(?: ?>)* ?"),
)
# ... and those that copy-paste adds, peeled only where a line Triton wrote follows.
_PREFIXES = (
    *_COLLECTOR_PREFIXES,
    # stern's default template, "<pod> <container> " (a pod name is DNS-1123 lowercase with a hyphen or a
    # dot); kept only where Triton's own line or table follows, as every peel here
    re.compile(r"[a-z0-9]+(?:[-.][a-z0-9]+)+ [a-z0-9]+(?:[-_.][a-z0-9]+)* (?=[IWEF]\d{4} |[|+])"),
    # quoting and bullets from chat, mail and tickets
    re.compile(r"\s*(?:[>*]\s?)+\s*"),
    # plain indentation (last: it may only hide a log line, never a table row or an error: line)
    re.compile(r"\s+"),
)
_ESCAPE = re.compile(r"\\(.)", re.S)
_STATUS_WORD = re.compile(r"(UNAVAILABLE|READY|Not loaded|LOADING|UNLOADING)\b")
# A status cell pasted without the start of its row (the model and version columns cut off):
# ``UNAVAILABLE: Unknown: [22:10:17] /rapids_triton/bui |``, its wrapped rows following.
_CUT_ROW = re.compile(r"(UNAVAILABLE|Not loaded): .*\|\s*$")
# A row pasted without its leading border (`` preprocessing  | 1 | UNAVAILABLE: ... |``): core's
# TablePrinter opens every row with ``|``, so a raw line with the model, version and status columns in
# that order is still a row. The status cell may itself hold ``|`` (a Python ``type | type`` error).
_LEAD_CUT_ROW = re.compile(r"\s*([^|\s][^|]*?)\s*\|\s*(\d+|-)\s*\|\s*((?:UNAVAILABLE|Not loaded): .*)$")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'"}
STUB_FRAME = r"(?:<frozen [\w.]+>|\S+)\(\d+\): <?[\w.]+>?"
"""A frame of the Python stub's traceback (pybind11's "At:" block: ``  <file>.py(<line>): <function>``,
``<frozen importlib._bootstrap>(703): _load_unlocked``); `frames` reads the same shape."""
_STUB_FRAME = re.compile(STUB_FRAME + "$")


def unquote(message: str) -> str:
    """Triton 2.4x quotes messages and escapes newlines; undo that (tolerating a cut-off end)."""
    if not message.startswith('"'):
        return message
    body = message[1:]
    if (body.endswith('"') and not body.endswith('\\"')) or (body.endswith('\\"') and body.endswith('\\\\"')):
        body = body[:-1]
    if "\\" not in body:
        return body
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), "\\" + m.group(1)), body)


# classify_line kinds
KIND_LOG = "log"
KIND_TABLE = "table"
KIND_BORDER = "border"
KIND_SPECIAL = "special"
KIND_RAW = "raw"


def _match_log(s: str) -> tuple[str, str, str] | None:
    m = _GLOG.match(s)
    if m:
        return m.group(1), m.group(5), (m.group(6) or "")
    m = _ISO.match(s)
    if m:
        return m.group(1), m.group(3), (m.group(4) or "")
    m = _TFLOG.match(s)
    if m:
        return m.group(1), m.group(2), (m.group(3) or "")
    return None


def _match_other(s: str) -> tuple[str, tuple[str, str, str] | None] | None:
    if s.startswith("+-"):
        return KIND_BORDER, None
    if s.startswith("|"):
        return KIND_TABLE, None
    m = _PROTOBUF.match(s)
    if m:
        level = {"ERROR": LEVEL_ERROR, "FATAL": LEVEL_FATAL, "WARNING": LEVEL_WARNING}.get(m.group(1), "I")
        return KIND_SPECIAL, (level, SOURCE_PROTOBUF, m.group(2))
    m = _MAIN_ERROR.match(s)
    if m:
        return KIND_SPECIAL, (LEVEL_ERROR, SOURCE_MAIN, s)
    return None


def _unmistakable(kind: str, s: str) -> bool:
    """Server lines no traceback indents: the status table and main's and protobuf's own words."""
    return kind in (KIND_BORDER, KIND_TABLE) or s.startswith(("error: creating server", "[libprotobuf "))


def classify_line(raw: str) -> tuple[str, str, tuple[str, str, str] | None]:
    """``(kind, line without paste prefixes, (level, source, message) or None)``."""
    s = raw.rstrip("\r\n")
    if len(s) > MAX_LINE_CHARS:
        s = s[:MAX_LINE_CHARS]
    s = retyped(s)
    found = _match_log(s)
    if found:
        return KIND_LOG, s, found
    other = _match_other(s)
    if other:
        return other[0], s, other[1]
    # Peel copy-paste prefixes, but only keep the peeled form when it is then recognisable:
    # an indented traceback line must stay as it is.
    t = s
    for _ in range(4):
        for index, prefix in enumerate(_PREFIXES):
            m = prefix.match(t)
            if m and m.end() > 0:
                t = t[m.end() :]
                found = _match_log(t)
                if found:
                    return KIND_LOG, t, found
                # Indentation only hides a log line or the status table (a Markdown code block indents the
                # whole paste; an indented "error:" is part of a traceback); a collector's prefix or a
                # quote mark may hide any line.
                other = _match_other(t)
                if other and (index < len(_PREFIXES) - 1 or _unmistakable(other[0], t)):
                    return other[0], t, other[1]
                break
        else:
            break
    # A raw line keeps its indentation (a traceback's), not a collector's prefix: the chunk
    # scanner strips those too, so both read the same text.
    return KIND_RAW, peel_collector_prefix(s), None


# A shell prompt before the command a user ran: ``$ cmd``, bash's default ``[user@host dir]$ cmd`` and
# Debian's ``user@host:~/dir$ cmd`` (``#`` for root). The command is what the user typed: ``${VAR}`` there
# is the shell's expansion, not a template left unfilled. A command pasted without its prompt reads the same
# when it starts with a container or cluster client and its subcommand (``kubectl -n ns logs ${POD}``); the
# clients' own messages put a colon after their name (``docker: Error response from daemon``).
_PROMPT = re.compile(
    r"\s*(?:#|\$ |\[[\w.-]+@[\w.-]+[^\]\n]*\][$#] |[\w.-]+@[\w.-]+:[^\s$#]*[$#] "
    r"|(?:sudo )?(?:kubectl|oc|docker|podman|helm|nerdctl|crictl) (?:-\S+ )*[a-z][\w-]* )"
)


def is_paste_prompt(s: str) -> bool:
    """A comment or a shell-prompt line in a paste: it says what was run, never what failed."""
    return _PROMPT.match(s) is not None


def peel_collector_prefix(s: str) -> str:
    """``s`` without the prefixes log collectors add (docker/kubectl timestamps, ``[pod/...]``,
    CRI's stream column, ``docker compose``'s ``NAME  | ``), as `scan.strip_prefixes` removes the most
    common before parsing."""
    for _ in range(4):
        for prefix in _COLLECTOR_PREFIXES:
            m = prefix.match(s)
            if m and m.end() > 0:
                end = m.end()
                while end > 1 and s[end - 1] in " \t" and s[end - 2] in " \t":
                    end -= 1  # one separator, not the line's own indentation
                s = s[end:]
                break
        else:
            return s
    return s


def _table_cells(s: str) -> list[str]:
    body = s.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    return body.split("|")


class _Parser:
    def __init__(self) -> None:
        self.cur: list[object] | None = None  # [line, level, source, text, parts, chars, model, version]
        self.last_line = 0
        self.in_model_table = False
        self.table_header_seen = False
        self.last_cell = ""
        self.cut = False
        """The status cell of the last table row as printed (padding kept), for `_continue_cell`."""

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
        if not contiguous:
            ev = self._flush()
            if ev:
                yield ev
            self.in_model_table = False
        kind, s, fields = classify_line(raw)
        if kind in (KIND_LOG, KIND_SPECIAL):
            ev = self._flush()
            if ev:
                yield ev
            self.in_model_table = False
            assert fields is not None
            level, source, message = fields
            # Stripped inside the quotes as well: a quoted message ("... are: ") reads as its unquoted
            # form, whose trailing blanks the line's end already dropped.
            message = unquote(message.strip()).strip() if kind == KIND_LOG else message.strip()
            self._start(number, level, source, s, message)
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
                elif len(cells) >= 3 and not cells[0].strip() and not cells[1].strip() and _STUB_FRAME.match(
                    status_cells
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
            yield LogEvent(number, "", SOURCE_RAW, s, s.strip(), None, None)
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
        if self.cur is not None and self.cur[2] != SOURCE_TABLE:
            if self.cur[4] == [""] and s.strip() and (s.lstrip()[:1] == "\"" or self.cur[1] in ("E", "F")):
                # A header whose message is on the next line (a paste wrapped right after ``] ``): a
                # quoted line (as Triton writes messages since 24.06), or any line after an E or F
                # header, is its message, and the evidence shows both. (An I header before prose is not.)
                self.cur[4] = [unquote(s.strip()).strip()]
                self.cur[3] = f"{str(self.cur[3]).rstrip()} {s.strip()}"
                return
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
        # (a JSON record starts a line; an export's key lines are indented, or start with their quote)
        if not (unwrapper.in_export or (raw[:1] in '{ \t"' and '"' in raw)):
            yield from parser.feed(number, raw)
            continue
        entering = not unwrapper.in_export
        pieces = unwrapper.read(raw)
        if entering and unwrapper.in_export:
            yield from parser.close()  # the export's opening brackets are no part of its first line's event
        if pieces is None:
            yield from parser.feed(number, raw)
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
