"""Pure: a log line wrapped in a log shipper's JSON record -> the line the program wrote.

Operators often have Triton's output only as their collector stored it, one JSON object per
line: Docker's ``json-file`` driver (``{"log":"E0812 ...\\n","stream":"stderr","time":...}``, what
``/var/lib/docker/containers/<id>/<id>-json.log`` holds), Fluentd and Fluent Bit (``log``),
Google Cloud Logging exports (``textPayload``, or ``jsonPayload.message``), ``journalctl -o json``
(``MESSAGE``), CloudWatch and Elastic exports (``message``, ``@message``, ``_source``). Read as
text, every such line is one opaque JSON string and Triton's own words (level letter, source
file, quoting) are hidden. `unwrap` returns the program's text, split at the newlines a record
may carry (a traceback logged as one record), so the parser reads the same lines as from the
plain log. A line that is not such a record is returned unchanged.
"""

from __future__ import annotations

import json
from typing import Any, Final

__all__ = ["TEXT_FIELDS", "unwrap"]

TEXT_FIELDS: Final = ("log", "textPayload", "MESSAGE", "@message")
"""The shippers' own fields for the program's line (Docker/Fluentd/Fluent Bit, Cloud Logging,
journald, CloudWatch Insights)."""
_SHIPPED_MESSAGE: Final = (
    "logStreamName",
    "ingestionTime",
    "eventId",
    "@timestamp",
    "insertId",
    "kubernetes",
)
"""Keys of a shipper's record (CloudWatch events, Elastic/ECS, Cloud Logging, Fluent Bit's kubernetes
filter) beside which ``message`` is the program's line. Without one, ``message``/``msg`` belong to an
application's own structured log (KServe's or ModelMesh's zap lines carry the error in other
fields): such a line stays whole."""
_NESTED: Final = ("_source", "jsonPayload")
"""Records that keep the program's fields one level down (Elasticsearch hits, Cloud Logging)."""


def _text_of(record: dict[str, Any], shipped: bool) -> str | None:
    for key in TEXT_FIELDS:
        value = record.get(key)
        if isinstance(value, str):
            return value
    if shipped or any(key in record for key in _SHIPPED_MESSAGE):
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
    text = text.rstrip("\r\n")
    return text.split("\n") if "\n" in text else [text]
