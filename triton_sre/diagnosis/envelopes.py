"""Pure: a log line wrapped in a log shipper's JSON record -> the line the program wrote.

Operators often have Triton's output only as their collector stored it, one JSON object per
line: Docker's ``json-file`` driver (``{"log":"E0812 ...\\n","stream":"stderr","time":...}``, what
``/var/lib/docker/containers/<id>/<id>-json.log`` holds), Fluentd and Fluent Bit (``log``),
Google Cloud Logging exports (``textPayload``, or ``jsonPayload.message``), ``journalctl -o json``
(``MESSAGE``), CloudWatch and Elastic exports (``message``, ``@message``, ``_source``), Loki's
``logcli query -o jsonl`` (``line``, beside ``labels`` and ``timestamp``), and CSV exports' rows
(CloudWatch Logs Insights, Kibana, Datadog: the time, then the line in the last column). Read as
text, every such line is one opaque JSON string and Triton's own words (level letter, source
file, quoting) are hidden. `unwrap` returns the program's text, split at the newlines a record
may carry (a traceback logged as one record), so the parser reads the same lines as from the
plain log. A line that is not such a record is returned unchanged.
"""

from __future__ import annotations

import csv
import json
import re
from typing import Any, Final

__all__ = ["SHIPPER_KEYS", "SKIP", "TEXT_FIELDS", "Unwrapper", "may_hold_record", "unwrap", "unwrap_csv"]

TEXT_FIELDS: Final = ("log", "textPayload", "MESSAGE", "@message")
"""The shippers' own fields for the program's line (Docker/Fluentd/Fluent Bit, Cloud Logging,
journald, CloudWatch Insights)."""
SHIPPER_KEYS: Final = frozenset(
    {"logStreamName", "ingestionTime", "eventId", "@timestamp", "insertId", "logName", "kubernetes"}
)
"""Keys of a shipper's record (CloudWatch events, Elastic/ECS, Cloud Logging, Fluent Bit's kubernetes
filter), never of an application's own log: beside one, ``message`` is the program's line (without one,
``message``/``msg`` belong to an application's structured log, as KServe's or ModelMesh's zap lines, which
carry the error in other fields: such a line stays whole), and in a pretty-printed document one says it
is a log export."""
_NESTED: Final = ("_source", "jsonPayload")
"""Records that keep the program's fields one level down (Elasticsearch hits, Cloud Logging)."""


def _text_of(record: dict[str, Any], shipped: bool) -> str | None:
    for key in TEXT_FIELDS:
        value = record.get(key)
        if isinstance(value, str):
            return value
    if "labels" in record or "timestamp" in record:
        value = record.get("line")  # Loki's `logcli query -o jsonl`
        if isinstance(value, str):
            return value
    if shipped or not SHIPPER_KEYS.isdisjoint(record):
        value = record.get("message")
        if isinstance(value, str):
            return value
    if not shipped:
        for key in _NESTED:
            inner = record.get(key)
            if isinstance(inner, dict):
                return _text_of(inner, True)
    return None


def unwrap(line: str) -> list[str] | None:
    """The program's lines inside a shipper's JSON record, or None when ``line`` is no such record
    (then the caller keeps ``line`` as it is). A record in a JSON array export may end with a comma."""
    s = line.strip()
    if s.endswith(","):
        s = s[:-1]
    if len(s) < 8 or s[0] != "{" or s[-1] != "}" or '"' not in s[1:3]:
        return None
    try:
        record = json.loads(s)
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than the parser's stack
        return None
    if not isinstance(record, dict):
        return None
    text = _text_of(record, False)
    if text is None:
        return None
    return _lines(text)


def _lines(text: str) -> list[str]:
    text = text.rstrip("\r\n")
    return text.split("\n") if "\n" in text else [text]


SKIP: Final = "skip"
"""`Unwrapper.read`'s answer for a line of a pretty-printed export that holds none of the program's text."""

# A row of a CSV export whose first column is the record's time: CloudWatch Logs Insights' "Download table
# (CSV)" (`@timestamp,@message`), Kibana's and Datadog's CSV reports. (Not Python logging's
# `2024-07-23 19:39:35,070 - ...`: there the comma starts the milliseconds.)
_CSV_ROW = re.compile(
    r'"?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d| UTC)?"?,(?!\d{3}\b)'
)
_CSV_HEADER = re.compile(r'"?@?(?:timestamp|time|date)"?,"?@?[\w.]+"?(?:,"?@?[\w.]+"?)*\s*$', re.I)


def _csv_lead(line: str) -> bool:
    """``line`` may be a CSV export's row (its time first) or header (its time column's name first)."""
    lead = line[:1]
    return (lead.isdigit() or lead in '"@tTdD') and "," in line


def may_hold_record(line: str) -> bool:
    """Whether ``line`` may be a shipper's JSON record, a line of a pretty-printed export (its key lines are
    indented, or start with their quote) or a CSV export's row: only such lines go to `Unwrapper.read`."""
    return (line[:1] in '{ \t"' and '"' in line) or _csv_lead(line)


def unwrap_csv(line: str) -> list[str] | str | None:
    """The program's lines in a CSV export's row (its last column, quotes undone), `SKIP` for its header
    (``@timestamp,@message``), or None."""
    if not _CSV_ROW.match(line):
        return SKIP if _CSV_HEADER.match(line) else None
    try:
        fields = next(csv.reader([line]))
    except (csv.Error, StopIteration):  # a field past the csv module's size limit
        return None
    return _lines(fields[-1]) if len(fields) >= 2 else None


_STRING = r'"(?:[^"\\\n]|\\.)*"'
_TEXT_KEYS = "|".join(re.escape(key) for key in (*TEXT_FIELDS, "message"))
_KEY_TEXT = re.compile(rf'\s*"({_TEXT_KEYS})"\s*:\s*({_STRING})\s*,?\s*$')
_KEY_OTHER = re.compile(
    rf'\s*"[^"\n]*"\s*:\s*(?:{_STRING}|-?[\d.eE+-]+|true|false|null|\{{\}}?|\[\]?)\s*,?\s*$'
)
_BRACKETS = re.compile(r"\s*[\[\]{}]+,?\s*$")
_EXPORT_KEYS: Final = SHIPPER_KEYS | frozenset(TEXT_FIELDS)
"""Keys that say a pretty-printed document is a log export (Cloud Logging's "Download" JSON, CloudWatch,
Elastic): from one of them on, the export's own lines are skipped and its text fields read."""


class Unwrapper:
    """Reads a log line by line: a shipper's one-line JSON record (`unwrap`), and a pretty-printed export
    (an indented JSON array of records, as Cloud Logging downloads it), whose text fields are the
    program's lines and whose other lines (keys, braces) are the export's own. ``message`` counts as text
    only inside such an export; outside one, no line is skipped."""

    def __init__(self) -> None:
        self.in_export = False

    def read(self, line: str) -> list[str] | str | None:
        """The program's lines in ``line``; `SKIP` for an export's own line; None: ``line`` as written."""
        if _csv_lead(line):
            pieces = unwrap_csv(line)
            if pieces is not None:
                return pieces
        if line.startswith("{"):
            pieces = unwrap(line)
            if pieces is not None:
                return pieces
        if '"' not in line and not self.in_export:
            return None
        m = _KEY_TEXT.match(line)
        if m and (self.in_export or m.group(1) != "message"):
            try:
                text = json.loads(m.group(2))
            except ValueError:  # not JSON's escapes (a Windows path pasted as `"log": "C:\models"`)
                text = None
            if not isinstance(text, str):
                return None  # the line as written; an export's state does not change
            self.in_export = True
            return _lines(text)
        if self.in_export and (_BRACKETS.match(line) or _KEY_OTHER.match(line)):
            return SKIP
        m = _KEY_OTHER.match(line)
        if m and line.split('"', 2)[1] in _EXPORT_KEYS:
            self.in_export = True
            return SKIP
        self.in_export = False
        return None
