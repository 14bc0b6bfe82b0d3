"""Pure: one line of a log -> what it is, and Triton's own text in it.

A line is a glog line (`E1129 16:25:20.940736 3898 model_lifecycle.cc:642] "..."`), a
`--log-format=ISO8601` line, TensorFlow's own C++ log line, a status-table row or border, a
`[libprotobuf ...]` or `error: ...` line of the server's main, or raw text (a traceback, another
program's output). Log collectors and copy-paste put their own prefixes in front of Triton's text
(timestamps, `[pod/...]`, `docker compose`'s service column, CRI's stream column, Loki's label set,
syslog/journald, quoting, stern's columns, indentation); `classify_line` peels them where Triton's
own text follows, and `peel_collector_prefix` removes the collectors' from any line. Nothing here
raises on any text.
"""

from __future__ import annotations

import re

from triton_sre.diagnosis.pastes import retyped

__all__ = [
    "KIND_BORDER",
    "KIND_LOG",
    "KIND_RAW",
    "KIND_SPECIAL",
    "KIND_TABLE",
    "LEVEL_ERROR",
    "LEVEL_FATAL",
    "LEVEL_INFO",
    "LEVEL_WARNING",
    "MAX_LINE_CHARS",
    "SOURCE_MAIN",
    "SOURCE_PROTOBUF",
    "STATUS_WORDS",
    "TERMINAL_WIDTHS",
    "classify_line",
    "is_paste_prompt",
    "join_hand_wraps",
    "looks_cut",
    "peel_collector_prefix",
    "relay_prefix",
    "stern_columns",
    "stern_head",
    "unquote",
]

MAX_LINE_CHARS = 64_000
"""Longer lines are cut (a 1 GB line must not become a 1 GB string)."""
STATUS_WORDS = r"(?:UNAVAILABLE|READY|Not loaded|LOADING|UNLOADING)"
"""The states a model's row of Triton's status table shows (its ``Status`` cell starts with one)."""

LEVEL_INFO = "I"
LEVEL_WARNING = "W"
LEVEL_ERROR = "E"
LEVEL_FATAL = "F"
SOURCE_PROTOBUF = "libprotobuf"
SOURCE_MAIN = "main"

# classify_line kinds
KIND_LOG = "log"
KIND_TABLE = "table"
KIND_BORDER = "border"
KIND_SPECIAL = "special"
KIND_RAW = "raw"

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
# tritonserver's command-line parser refusing the command line (server src/command_line_parser.cc, main.cc):
# after the usage text, `Bad option: "--flag".` (a --trace-config setting: `"--trace-config [triton,]rate"`;
# an OpenTelemetry variable: `"OTEL_BSP_MAX_QUEUE_SIZE"`) and the parser's reason on the next line; or
# `Failed to build Triton option:` and the reason; or a check of the flags together (below). main's own
# words, like `error: creating server`.
PARSER_REFUSAL = re.compile(
    r'Bad option: "(?:--?[\w-]+(?: (?:triton,|opentelemetry,)?[\w-]+)?|OTEL_\w+)"\.'
    r"|Failed to build Triton option:"
    # The checks after the flags are read (r19.05 on), printed as bare as `Bad option` after the usage:
    r"|Unexpected argument: \S|Error: (?:Use of '--load-model' requires|Incompatible flags --)"
    r"|The server cannot listen to \w+ requests"
)
# Prefixes log collectors add in front of every line (a raw line loses them too: `peel_collector_prefix`).
_COLLECTOR_PREFIXES = (
    # docker logs -t, kubectl logs --timestamps, journald/ISO timestamps, Python logging timestamps
    re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\s+"),
    # `aws logs tail`'s default (detailed) format puts the log stream's name after the timestamp: a SageMaker
    # endpoint's "<variant>/<EC2 instance id>[/<container>]", ECS awslogs' "<prefix>/<container>/<task id>"
    # (the lookahead fails a line with no "/" in its first word in one pass, not one try per character)
    re.compile(r"(?=[\w.-]*/)[A-Za-z][\w.-]*(?:/[\w.-]+)*/(?:i-[0-9a-f]{8,17}|[0-9a-f]{32})(?:/[\w.-]+)? "),
    # Kubernetes' CRI log file (/var/log/pods, /var/log/containers): after the timestamp, the stream and
    # F (a full line) or P (a part of a line the runtime split)
    re.compile(r"(?:stdout|stderr) [FP] "),
    # kubectl logs --prefix
    re.compile(r"\[pod/[^\]]*\]\s*"),
    # ROS 2 launch's per-process prefix: "[component_container-1] " (the executable's name and its
    # instance number, as Isaac ROS pastes show every line of an in-process Triton)
    re.compile(r"\[[A-Za-z_][\w.]*-\d+\] ?"),
    # `cat -n`'s line number, "     12\t" (before compose's column: "12\t|" is no service's name)
    re.compile(r" *\d+\t"),
    # docker compose service prefix: "triton-1  | "; `docker service logs` (Swarm) names the task and its
    # node: "triton_triton.1.x7k2m9q4p1ab@node-1    | "
    re.compile(r"[A-Za-z0-9][\w.@-]*[ \t]+\|\s?"),
    # Loki's logcli (default output): the stream's label set after the timestamp, '{app="triton"} '
    re.compile(r'\{(?:[A-Za-z_][\w.]*="(?:[^"\\\n]|\\.)*"(?:,\s*)?)*\}\s+'),
    # syslog and `journalctl` (short): "Jan 29 12:00:00 host triton[123]: " (the pid, or the kernel's
    # "host kernel: ", tells it from `ts`'s bare time before a line that starts "x failed: ")
    re.compile(r"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d [\w.-]+ (?:[\w./-]+\[\d+\]|kernel): "),
    # `journalctl -o short-iso` after its timestamp: "host tritonserver[123]: "
    re.compile(r"[\w.-]+ [\w./-]+\[\d+\]: "),
    # a bare syslog-style time (moreutils' `ts`) and a bracketed timestamp (supervisors, wrappers' tee)
    re.compile(r"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d "),
    re.compile(r"\[\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\] ?"),
    # Ray's prefix on a worker's or a Serve replica's output: "(ServeReplica:app:Triton pid=4567) ",
    # "(pid=4567, ip=10.0.0.5) "
    re.compile(r"\((?:[\w:.\-]+ )?pid=\d+(?:, ip=[\d.]+)?\) "),
    # a quoted reply on GitHub, a forum or in mail: "> " (nested: "> > ")
    re.compile(r">(?: ?>)* ?"),
    # grep's file name (with -n, its line number; ":" on a match, "-" on a context line):
    # "logs/triton.log:12:"
    re.compile(r"[\w./-]+\.(?:log|txt|out|err)(?:[:-]\d+(?=[:-](?!\d\d[-:])))?[:-]"),
)
_STERN_COLUMNS = r"[a-z0-9]+(?:[-.][a-z0-9]+)+ [a-z0-9]+(?:[-_.][a-z0-9]+)* "
_STERN_WHOLE = re.compile(_STERN_COLUMNS)
# ... and those that copy-paste adds, peeled only where a line Triton wrote follows.
_PREFIXES = (
    *_COLLECTOR_PREFIXES,
    # stern's default template, "<pod> <container> " (a pod name is DNS-1123 lowercase with a hyphen or a
    # dot), with `--timestamps` a timestamp after them; kept only where Triton's own line or table follows,
    # as every peel here (`stern_columns`: the
    # parser then peels the same columns from that pod's other lines)
    re.compile(_STERN_COLUMNS + r"(?=(?:\d{4}-\d\d-\d\dT\S+ )?(?:[IWEF]\d{4} |[|+]))"),
    # a Python logging wrapper's fields after its timestamp: "- tritonserver - INFO - " (its level is the
    # wrapper's, so a line of its own keeps them)
    re.compile(r"-\s[\w.]+\s-\s(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\s-\s"),
    # grep -n's line number without a file name ("12:" on a match, "13-" on a context line): kept only
    # before Triton's own text (a time such as "12:34:56" starts other lines)
    re.compile(r"\d+[:-](?=[IWEF]\d{4} |\d{4}-\d\d-\d\dT|[|+]|error: |\[libprotobuf )"),
    # quoting and bullets from chat, mail and tickets
    re.compile(r"\s*(?:[>*]\s?)+\s*"),
    # plain indentation (last: it may only hide a log line, never a table row or an error: line)
    re.compile(r"\s+"),
)
_ESCAPE = re.compile(r"\\(.)", re.S)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'"}


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
    if m or PARSER_REFUSAL.match(s):
        return KIND_SPECIAL, (LEVEL_ERROR, SOURCE_MAIN, s)
    return None


def _unmistakable(kind: str, s: str) -> bool:
    """Server lines no traceback indents: the status table and main's and protobuf's own words."""
    return (
        kind in (KIND_BORDER, KIND_TABLE)
        or s.startswith(("error: creating server", "[libprotobuf "))
        or PARSER_REFUSAL.match(s) is not None
    )


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


def stern_columns(raw: str, peeled: str) -> str | None:
    """The ``<pod> <container> `` columns stern printed before ``peeled`` (what `classify_line` read in
    ``raw``), or None. Seen once before Triton's own line, the same literal columns are that pod's on its
    other lines too (a traceback, a third-party message), where nothing after them says so."""
    line = retyped(raw.rstrip("\r\n"))
    if len(peeled) >= len(line) or not line.endswith(peeled):
        return None
    return stern_head(line[: len(line) - len(peeled)])


def stern_head(s: str) -> str | None:
    """The stern-shaped ``<pod> <container> `` columns ``s`` starts with (a pod name has a hyphen/dot)."""
    m = _STERN_WHOLE.match(s)
    return m.group(0) if m else None


_MIN_WRAP = 60
TERMINAL_WIDTHS = frozenset({80, 100, 120, 132, 160, 200})
"""Widths terminals and mail clients cut lines at most often (`looks_cut`)."""
# Lines that start on their own, never the rest of a cut line: indented text (one blank is the cut's), a
# traceback's header and frames, an exception line, pybind11's "At:", libstdc++'s terminate handler.
_EXCEPTION = r"[\w.]*(?:Error|Exception)\b"
_OWN_LINE = re.compile(
    rf"\t| {{2}}|Traceback \(|At:|During handling|The above exception|{_EXCEPTION}|terminate called "
)
_EXCEPTION_HEAD = re.compile(_EXCEPTION)
# The rest of a CamelCase name cut mid-way ("'Inference" | "Request'"): a capital word that a quote or
# bracket closes, not a sentence's first word (a blank follows that).
_CAMEL_REST = re.compile(r"[A-Z][A-Za-z0-9_]*(?:['\")\].,:;(]|$)")
_MID_WORD = re.compile(r"[a-z0-9_)\]}'\",.;:/-]")
# A cut inside a quoted name: the line ends in a quote it opened (an odd count of quotes), and the piece
# closes it before any blank ("failed to load 'Deep" | "Seek-R1-Distill-Qwen-1.5B' version 1: ...").
_OPEN_QUOTE_END = re.compile(r"'[^'\s]*$")
_QUOTE_CLOSE = re.compile(r"[^'\s]+'")
_HAS_WORD = re.compile(r"[A-Za-z0-9]")


# A line break a person put inside a message, the rest indented under it (a list item, a code comment, a
# mail reply): "Python model file not" then "  found in '...'". The rest goes on with a word, a quote (a
# shell's backtick too: "version" | "  `GLIBC_2.32' not found") or a path; a native backtrace's frame
# (" 1 0x7f... symbol", "#3 ..."), a Python frame and "At:" do not.
_HAND_WRAP = re.compile(r"(?<=\S)[ \t]*\n[ \t]+(?=[A-Za-z'\"`/(])(?!File \"|At:|\S+\.py\(\d+\): )")


def join_hand_wraps(text: str) -> str:
    """``text`` (a multi-line event) with the lines a person wrapped by hand joined back with a blank;
    ``text`` itself, at the cost of two substring tests, when no line of it is indented."""
    if "\n " not in text and "\n\t" not in text:
        return text
    return _HAND_WRAP.sub(" ", text)


def looks_cut(before: str, piece: str, piece_width: int) -> int | None:
    """The width ``before`` was cut at when ``piece`` (a raw line ``piece_width`` wide as written) reads as
    the rest of it, as a terminal, an editor or a mail client hard-wraps: the piece is no longer (a cut
    line's rest or middle), goes on mid-word or after the cut's blank, and starts no line of its own
    (indentation, a traceback's or an exception's). Rows of a column listing (``kubectl get``) all have one
    width, padded with runs of blanks: never a middle piece. None: not a cut."""
    width = len(before)
    if width < _MIN_WRAP or piece_width > width or not piece:
        return None
    if _OWN_LINE.match(piece) and not (before.endswith(": ") and _EXCEPTION_HEAD.match(piece)):
        return None  # (an exception goes on a line the cut left at its separator: "Internal: " | "OSError")
    if piece_width == width and ("   " in before or "   " in piece):
        return None
    goes_on = (
        before[-1] == " "
        or piece[0] == " "
        or _MID_WORD.match(piece) is not None
        or (before[-1].islower() and _CAMEL_REST.match(piece) is not None)
        or (
            before.count("'") % 2 == 1
            and _OPEN_QUOTE_END.search(before) is not None
            and _QUOTE_CLOSE.match(piece) is not None
        )
    )
    return width if goes_on and _HAS_WORD.search(piece) else None


# A shell prompt before the command a user ran: ``$ cmd``, bash's default ``[user@host dir]$ cmd`` and
# Debian's ``user@host:~/dir$ cmd`` (``#`` for root). The command is what the user typed: ``${VAR}`` there
# is the shell's expansion, not a template left unfilled. A command pasted without its prompt reads the same
# when it starts with a container or cluster client and its subcommand (``kubectl -n ns logs ${POD}``); the
# clients' own messages put a colon after their name (``docker: Error response from daemon``).
_PROMPT = re.compile(
    # (a prompt of the working folder alone, with the last exit status some shells show: "~ [1]$ ")
    # (conda's and venv's "(env) " before a user@host prompt)
    r"\s*(?:#(?!\d+ ERROR: )|\$ |(?:\([\w.-]+\) )*\[[\w.-]+@[\w.-]+[^\]\n]*\][$#] "
    r"|(?:\([\w.-]+\) )*[\w.-]+@[\w.-]+:[^\s$#]*[$#] "
    r"|[~/][^\s$#]* (?:\[\d+\])?[$#] "
    r"|(?:sudo )?(?:kubectl|oc|docker|podman|helm|nerdctl|crictl) (?:-\S+ )*[a-z][\w-]* )"
)


def is_paste_prompt(s: str) -> bool:
    """A comment or a shell-prompt line in a paste: it says what was run, never what failed."""
    return _PROMPT.match(s) is not None


def peel_collector_prefix(s: str) -> str:
    """``s`` without the prefixes log collectors add (docker/kubectl timestamps, ``[pod/...]``,
    CRI's stream column, ``docker compose``'s ``NAME  | ``), as `scan_prefixes.strip_prefixes` removes
    the most common before parsing."""
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


_TRITON_START = re.compile(
    r"(?<=\s)(?:[IWEF]\d{4} |\d{4}-\d\d-\d\d(?:T| \d\d:)|\[libprotobuf |\+---|\| "
    r"|\[TensorRT-LLM\]|\[TRT-LLM\] |[A-Z]{4,8} \d\d-\d\d |Traceback |Usage: tritonserver |Bad option: "
    r"|Failed to build )"
)
"""Where a line of Triton's may start inside another's (confirmed by `_match_log`, `_PROTOBUF`,
`_TABLE_BORDER`, `_BACKEND_LOG` or `_TRACEBACK_HEAD`)."""
_TABLE_BORDER = re.compile(rf"\+(?:-+\+){{2,}}\s*$|\|\s*[^|\s]+\s*\|\s*\d+\s*\|\s*{STATUS_WORDS}\b")
"""A whole border of one of Triton's startup tables (models, backends, options): ``+----+----+``, or a row
of its model table (``| m | 1 | READY |``)."""
_BACKEND_LOG = re.compile(
    r"\[TensorRT-LLM\] ?\[(?:TRACE|DEBUG|INFO|WARNING|ERROR|FATAL)\]"
    r"|\[TRT-LLM\] (?:\[MPI_Rank \d+\] )?\[[VIWEF]\]"
    r"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[?[\w.-]+:\d+\]"
)
"""The loggers of the LLM backends, whose lines reach Triton's stdout with their own level: TensorRT-LLM's
C++ logger (``common/logger.h``: ``[TensorRT-LLM][INFO] ``), its Python runtime's
(``tensorrt_llm/logger.py``: ``[TRT-LLM] [W] ``, ``[MPI_Rank N] `` before the letter in a multi-rank world)
and vLLM's (``INFO 01-31 22:08:42 llm_engine.py:649] ``, the file bracketed from 0.8)."""
_TRACEBACK_HEAD = re.compile(r"Traceback \(most recent call last\):\s*$")
"""CPython's traceback, as a Python model's stub prints it to Triton's stderr: a relay's prefix only behind an
INFO or DEBUG (a program's own ``logger.exception`` prints its traceback at ERROR: that level is its own)."""
_QUIET_LEVEL = re.compile(r"\b(?:DEBUG|INFO)\b")
_USAGE_HEAD = re.compile(r"Usage: tritonserver \[options\]\s*$")
"""The first line main prints when it refuses its command line (before the usage and `PARSER_REFUSAL`)."""
_RELAYED_HEAD = re.compile(
    "|".join(
        f"(?:{p.pattern})"
        for p in (_GLOG, _ISO, _TFLOG, _PROTOBUF, _TABLE_BORDER, _USAGE_HEAD, PARSER_REFUSAL)
    )
    + f"|(?P<backend>{_BACKEND_LOG.pattern})|(?P<traceback>{_TRACEBACK_HEAD.pattern})",
    re.S,
)
"""The heads that confirm a relay's start (`relay_prefix`), in one pattern: one match per candidate."""
_RELAY_LEVEL = re.compile(r"\b(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\b")
_DIGITS = re.compile(r"\d+")
_RELAY_WIDTH = 160
"""A relay's prefix is at most this wide (a level, a timestamp, a file and line)."""


def relay_prefix(s: str, start: int | None = None) -> tuple[re.Pattern[str], int] | None:
    """Where ``s`` is another program's log line carrying a line of Triton's (a NIM's
    ``ERROR 2025-04-24 22:49:44.266 nimutils.py:68] I0424 ...``): a pattern for that logger's prefix, its
    digits free (every line it relays starts the same way), and where Triton's line starts (``start``
    when the caller knows it). Only a prefix with a level word in it: that level is the relay's, not the
    line's."""
    if start is None:
        level = _RELAY_LEVEL.search(s, 0, _RELAY_WIDTH)
        if level is None:
            return None  # (most lines: no level word, so no relay, and no start to look for)
        for m in _TRITON_START.finditer(s, max(1, level.end()), _RELAY_WIDTH + 1):
            at = m.start()
            head = _RELAYED_HEAD.match(s, at)
            if head is None:
                continue
            # (not that logger quoting its own line: ``[TensorRT-LLM][ERROR] x: [TensorRT-LLM][ERROR] y``)
            if head["backend"] is not None and _BACKEND_LOG.search(s, 0, at):
                continue
            if head["traceback"] is not None and not _QUIET_LEVEL.search(s, 0, at):
                continue
            start = at
            break
        else:
            return None
    if not 0 < start <= _RELAY_WIDTH or not _RELAY_LEVEL.search(s, 0, start):
        return None
    parts = _DIGITS.split(s[:start])
    return re.compile(r"\d+".join(re.escape(part) for part in parts)), start
