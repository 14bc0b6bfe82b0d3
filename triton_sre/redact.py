"""The one redaction: no credential, token or query string reaches a user or a log.

A leaf (imports nothing of the product). Every output path uses `redact`: log records (through
`RedactingFilter`, installed by the CLI on every handler), the CLI's stderr (`RedactingStream`),
exception messages built from URLs (`FetchError`, `PromError`, diagnosis errors), the bot's Slack
messages and slash-command answers, and the HTTP servers' access lines. Slack text keeps query
strings (dashboard links carry them) and only loses credentials: ``queries=False``.
"""

from __future__ import annotations

import codecs
import datetime
import logging
import os
import re
from collections.abc import Iterable
from typing import Any, TextIO

__all__ = [
    "BYTES_AS_ESCAPES",
    "REDACTED",
    "RedactingFilter",
    "RedactingStream",
    "bounded",
    "install_redaction",
    "one_line",
    "printable",
    "redact",
]

REDACTED = "<redacted>"
# A query string (up to whitespace or a quote; it starts with a name, a `%` escape or `=`: a
# backtrace's `???:0` and a sentence's `Server?\n\nTriton` are none), userinfo in a URL, an
# Authorization value.
_QUERY = re.compile(r"\?(?=[\w%.~+=\[-])[^\s\"'<>]+")
_USERINFO = re.compile(r"(?<=//)[^/\s@\"'<>]+@")
_AUTH = re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{8,}")
# An Authorization header's value whatever its scheme (`Authorization: xoxb-...`, a dict's repr).
_HEADER = re.compile(
    r"(?i)\b(authorization[\"']?[ \t]*[:=][ \t]*[\"']?)((?:bearer|basic|token|digest)[ \t]+)?[^\s\"',;]+"
)
# Slack's tokens wherever they stand, from Slack's formats: `xox` + a type letter (b bot, p user,
# a/o/r/s legacy, e refresh and config, c/d browser session) or `xapp`, a dash, then digit groups
# and the secret (`xoxb-<team digits>-<bot digits>-<24 alnum>`, `xapp-1-A0123-<id>-<hex>`,
# `xoxe-1-<base64>`), or one run of 16+ letters and digits (a secret without the groups, the
# tests' `xoxb-<uuid hex>`). A model named `xoxb-llama-classifier` is words, not a token.
_SLACK = re.compile(
    r"\b(?:xox[abcdeoprs]|xapp)-(?:\d+-[A-Za-z0-9%-]*[A-Za-z0-9%]|(?=[A-Za-z%]*\d)(?=[0-9%]*[A-Za-z])"
    r"[A-Za-z0-9%]{16,})"
)
# An AWS access key id: AKIA (long-term) or ASIA (temporary) and 16 upper-case letters and digits.
_AWS_KEY_ID = re.compile(r"\bA[KS]IA[A-Z0-9]{16}\b")
# `name=value` anywhere; `name: value` unless the name ends a path (`/run/secrets/token: cannot
# read`, `/etc/passwd: ...` name a file, not a key). The name may be quoted (`"password": "x"`,
# a dict's repr) and prefixed (`SLACK_BOT_TOKEN=`, `client_secret:`, `X-Api-Key:`,
# `aws_secret_access_key =`); a prefixed name's plain number (`output_token: 0.05`) is a figure,
# not a secret. A name starts a word, or follows a command line's dashes (`--token=`,
# `--api-key=`), never a hyphen inside one (`foo-token=`: prefixed). What the value may be is
# `_keep_key`'s: a tokenizer's `eos_token: </s>` is no credential.
_NAMES = "token|password|passwd|secret[_-]?key|secret|api[_-]?key|access[_-]?key"
# What every name in `_NAMES` holds, casefolded: a line without one has no key to redact.
_KEY_WORDS = ("token", "passw", "secret", "key")
_PREFIX = "(?:[A-Za-z0-9]+[_-])*"
_QUOTE = "[\"']?"
# A value ends at `&` (a query's next pair) but not at the entities Slack's escaping writes for
# `<`, `>` and `&`: Slack text is escaped before it is redacted (`password=&lt;x` is one value).
_ENTITY = "&(?:lt|gt|amp);"
_KEY_VALUE = re.compile(
    rf"(?i)(?:(?<![/\\.\w])(?<![/\\.\w]-)({_PREFIX})({_NAMES})({_QUOTE}[ \t]*:[ \t]*{_QUOTE})"
    rf"|(?<!\w)(?<!\w-)({_PREFIX})({_NAMES})({_QUOTE}[ \t]*=[ \t]*{_QUOTE}))"
    rf"(?:[^\s\"',;&]|{_ENTITY})+"
)
# The word before `token` that makes it a credential whatever its value (`X-Auth-Token: s3cr3t`,
# `hf_token=`, `refresh_token`); any other `*_token` (`eos_token`, `pad_token`, a model called
# `first_token`) hides only a value that looks like a secret (`_secret_like`).
_CREDENTIAL_WORDS = frozenset(
    {
        *("access", "admin", "api", "app", "auth", "bearer", "bot", "client", "csrf", "gh", "github"),
        *("gitlab", "hf", "huggingface", "id", "jwt", "ngc", "npm", "oauth", "oauth2", "personal"),
        *("private", "pypi", "refresh", "registry", "security", "service", "session", "signing"),
        *("slack", "sso", "user", "vault", "webhook", "xsrf"),
    }
)
# A value that is a secret's shape: 16+ characters, letters and digits mixed, whatever else it holds
# (a Telegram bot's `123456789:AAH...`, a password's punctuation).
_SECRET_LIKE = re.compile(r"(?=[^0-9]*[0-9])(?=[^A-Za-z]*[A-Za-z])\S{16,}")
# Values no key means as a secret: Python's and YAML's none and booleans (`hf_token=None`).
_NO_VALUE = frozenset({"none", "null", "nil", "true", "false", "~"})
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
BOUNDED_CHARS = 80


def redact(text: str, *, queries: bool = True) -> str:
    """`text` without URL credentials, bearer/basic tokens, ``token=``-style secrets and (unless
    ``queries=False``) query strings."""
    if queries and "?" in text:
        text = _QUERY.sub("?" + REDACTED, text)
    if "@" in text:
        text = _USERINFO.sub(REDACTED + "@", text)
    # Each pattern runs only on a line holding its words (casefold: `(?i)` also matches `ſ` and
    # `K`, the Kelvin sign); most log lines hold none, and a scan per pattern cost 15 µs a line.
    folded = text.casefold()
    if "bearer" in folded or "basic" in folded:
        text = _AUTH.sub(_keep_name, text)
    if "authorization" in folded:
        text = _HEADER.sub(_keep_header, text)
    if "xox" in text or "xapp" in text:
        text = _SLACK.sub(REDACTED, text)
    if "AKIA" in text or "ASIA" in text:
        text = _AWS_KEY_ID.sub(REDACTED, text)
    if any(word in folded for word in _KEY_WORDS):
        text = _KEY_VALUE.sub(_keep_key, text)
    return text


# YAML 1.1's float needs a dot and a signed exponent: `1e-3`, `5E+2`, `1.0e3` load as strings
# (PyYAML), `1.0e-3` and `1.0e+3` as numbers.
_EXPONENT_TEXT = re.compile(r"[-+]?(?:\d+[eE][-+]?|(?:\d+\.\d*|\.\d+)[eE])\d+")


def _dotted(text: str) -> str:
    mantissa, _, exponent = text.lower().partition("e")
    mantissa = mantissa if "." in mantissa else f"{mantissa}.0"
    return f"{mantissa}e{exponent if exponent[0] in '+-' else '+' + exponent}"


def bounded(value: object, limit: int = BOUNDED_CHARS, *, yaml_hints: bool = True) -> str:
    """A value quoted in an error message: its repr, at most `limit` characters (a billion-laughs
    YAML value or a megabyte string must not become the message); a boolean or a date a YAML word
    turned into says so, and so does text in the exponent form YAML 1.1 reads as a string, unless
    `yaml_hints` is False: a command-line argument or a duration, which YAML did not read (`--last
    1e3` was told to write `1.0e+3`, which is no duration either)."""
    if isinstance(value, (str, bytes)) and len(value) > limit:
        value = value[:limit]
        return repr(value) + f"... ({limit} first characters)"
    if isinstance(value, (list, tuple, dict, set)):
        return f"a {type(value).__name__} of {len(value)} item(s)"
    if isinstance(value, bool):  # `period: on`, `models: no`: YAML 1.1 read a word as a boolean
        return f"{value} (a boolean: YAML reads an unquoted yes/no/on/off/true/false as one)"
    if isinstance(value, (datetime.date, datetime.datetime)):  # `name: 2024-01-01`
        return f"{value.isoformat()} (a date: YAML reads an unquoted YYYY-MM-DD as one)"
    if yaml_hints and isinstance(value, str) and _EXPONENT_TEXT.fullmatch(value):  # `price: 1e-3`
        return f"{value!r} (text: YAML 1.1 reads this exponent form as a string; write {_dotted(value)})"
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def one_line(text: object, limit: int = BOUNDED_CHARS) -> str:
    """A server's own text quoted in an error (Prometheus' error, an HTTP error page): its whitespace
    runs, newlines included, as one space, and `bounded` when over `limit` characters, so the
    message stays one line of bounded length; control characters escaped (`printable`; `bounded`'s
    repr escapes its own)."""
    flat = " ".join(str(text).split())
    return printable(flat) if len(flat) <= limit else bounded(flat, limit)


SHOWN_PATH_CHARS = 240
"""A file name longer than this is shown by its start and end in a message."""


def shown_path(path: str | os.PathLike[str]) -> str:
    """A file name in a one-line message: control characters escaped (`printable`: a newline in the
    name split the message over two lines; a byte that is not UTF-8 is `\\xff`), and a name over
    `SHOWN_PATH_CHARS` (a 100 kB path, refused by the OS as too long, was printed whole) shown by its
    start and end with its length."""
    text = printable(os.fspath(path))
    if len(text) <= SHOWN_PATH_CHARS:
        return text
    half = SHOWN_PATH_CHARS // 2
    return f"{text[:half]}...({len(text):,} characters)...{text[-half:]}"


def printable(text: object) -> str:
    """`text` safe to show on a terminal: every character that is not printable (C0 and C1 controls,
    ESC, CR, DEL, newlines, bidi overrides) as its escape (``\\x1b``, ``\\r``, ``\\u202e``), the rest as
    is; a byte that was not UTF-8 (a lone surrogate from ``surrogateescape``) as that byte (``\\xff``).
    For one field of text output (a name, a label value, a server's text); JSON output escapes its own."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _escape_char(ch) for ch in text)


def _escape_char(ch: str) -> str:
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape's stand-in for the byte code - 0xDC00
        return f"\\x{code - 0xDC00:02x}"
    return repr(ch)[1:-1]  # \x1b, \r, \u202e (a quote or a backslash is printable: never here)


def _escapes(exc: UnicodeError) -> tuple[str, int]:
    """An output stream's error handler: what its encoding cannot write as its escape (`\\u2014` as
    `backslashreplace` does), but a byte that was not UTF-8 (a file name's, `surrogateescape`) as that
    byte (`\\xff`, as `printable` shows it), not as its stand-in `\\udcff`."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    part = exc.object[exc.start : exc.end]
    shown = (_escape_char(ch) if 0xDC80 <= ord(ch) <= 0xDCFF else ascii(ch)[1:-1] for ch in part)
    return "".join(shown), exc.end


BYTES_AS_ESCAPES = "triton_sre.escapes"
"""The error handler `_escapes` is registered as (`stream.reconfigure(errors=BYTES_AS_ESCAPES)`)."""
codecs.register_error(BYTES_AS_ESCAPES, _escapes)


def _keep_name(match: re.Match[str]) -> str:
    return f"{match.group(1)}{match.group(2)}{REDACTED}"


def _keep_header(match: re.Match[str]) -> str:
    return f"{match.group(1)}{match.group(2) or ''}{REDACTED}"


def _keep_key(match: re.Match[str]) -> str:
    prefix, name, separator = match.group(1, 2, 3) if match.group(2) else match.group(4, 5, 6)
    key = f"{prefix}{name}{separator}"
    value = match.group(0)[len(key) :]
    if value.lower() in _NO_VALUE or _placeholder(value, match.string, match.end()):
        return match.group(0)
    if prefix and _NUMBER.fullmatch(value):
        return match.group(0)
    if prefix and name.lower() == "token" and not _credential(prefix) and not _secret_like(value):
        return match.group(0)
    return f"{key}{REDACTED}"


def _credential(prefix: str) -> bool:
    """`prefix` (`SLACK_BOT_`, `X-Auth-`, `eos_`) makes `token` a credential's name: its last word
    says so, or the whole name is an environment variable's (`MY_SERVICE_TOKEN=`)."""
    return prefix.isupper() or re.split(r"[_-]", prefix.lower())[-2] in _CREDENTIAL_WORDS


def _secret_like(value: str) -> bool:
    return _SECRET_LIKE.fullmatch(value.rstrip(".:)]}>")) is not None


def _placeholder(value: str, text: str, end: int) -> bool:
    """`value` is a word in angle brackets, no secret: a tokenizer's special token (`</s>`, `<unk>`,
    `<|endoftext|>`), `<none>`, kubectl's `<set to the key 'api-key' in secret 'x'>` (closed
    further on the line), an already redacted value; in Slack's escaping too (`&lt;/s&gt;`)."""
    opening, closing = ("&lt;", "&gt;") if value.startswith("&lt;") else ("<", ">")
    if not value.startswith(opening):
        return False
    if closing in value:
        return value.endswith(closing) and value.count(opening) == 1 and value.count(closing) == 1
    close = text.find(closing, end, end + 120)
    return close >= 0 and "\n" not in text[end:close]


class RedactingFilter(logging.Filter):
    """Redacts every record a handler emits (message, arguments and exception text). The message is
    one line: its control characters (a newline in an alert's label, a channel name) are shown as
    escapes (`printable`), so a value cannot forge a log line of its own; a traceback keeps its lines."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed call: leave it to the handler's own error reporting
            return True
        clean = printable(redact(message))
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if clean != message or record.args:
            record.msg, record.args = clean, None
        return True


def install_redaction(handlers: Iterable[logging.Handler] | None = None) -> None:
    """Add a `RedactingFilter` to `handlers` (default: the root logger's), once each."""
    for handler in logging.getLogger().handlers if handlers is None else handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())


class RedactingStream:
    """A text stream (the CLI's stderr) whose every write passes through `redact`: a `print` of an
    exception or a URL is covered like a log line. Credentials only; messages keep their '?'."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(redact(text, queries=False))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
