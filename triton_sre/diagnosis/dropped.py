"""Pure: a start-up setting the server refused and then served without. The server is healthy otherwise, so
the finding is a warning (server-option-invalid), and its fix names the setting and its value.

``--http-header-forward-pattern``: server src/command_line_parser.cc prefixes the pattern with ``(?i)`` (HTTP
headers match case-insensitively; gRPC's pattern is taken as given) and src/http_server.cc builds an
``re2::RE2`` from it. re2 (re2.cc ``RE2::Init``) logs a pattern it cannot parse as ``Error parsing
'<pattern>': <code text>[: <the part it failed on>]`` (the pattern cut at 100 characters with ``...``),
unprefixed, and the server starts anyway: every request then logs ``Invalid RE2: ...`` and forwards no
header (Triton 2.51, the diag31 sweep). The code texts are re2 regexp.cc's ``kErrorStrings``.
"""

from __future__ import annotations

import dataclasses
import re

from triton_sre import conventions as c
from triton_sre.diagnosis.report import Finding

__all__ = ["HEADER_PATTERN_REFUSED", "is_dropped_setting", "name_dropped_settings"]

_RE2_CODE_TEXTS = (
    "unexpected error",
    "invalid escape sequence",
    "invalid character class",  # (and "... range")
    "missing ]",
    "missing )",
    "unexpected )",
    "trailing \\",
    "no argument for repetition operator",
    "invalid repetition size",
    "bad repetition operator",
    "invalid perl operator",
    "invalid UTF-8",
    "invalid named capture group",
    "pattern too large - compile failed",
)
HEADER_PATTERN_REFUSED = re.compile(
    r"\bError parsing '\(\?i\)(?P<pattern>[^\n]*)': (?P<reason>(?:"
    + "|".join(re.escape(text) for text in _RE2_CODE_TEXTS)
    + r")[^\n]*)"
)
"""re2's refusal of the HTTP header-forward pattern (its ``(?i)`` is Triton's, not the user's)."""
_FLAG = "--http-header-forward-pattern"


def is_dropped_setting(text: str) -> bool:
    return "Error parsing '(?i)" in text and HEADER_PATTERN_REFUSED.search(text) is not None


def name_dropped_settings(found: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """Each server-wide finding quoting re2's refusal: its fix names the flag, the pattern, re2's reason."""
    out = []
    for f in found:
        m = next(
            (HEADER_PATTERN_REFUSED.search(e.text) for e in f.evidence if is_dropped_setting(e.text)), None
        )
        if m is not None and f.model is None and f.runbook == c.RUNBOOK_SERVER_OPTION_INVALID:
            pattern, reason = m["pattern"], m["reason"].split(": ", 1)[0]
            fix = (
                f"{_FLAG} {pattern!r} is not a pattern re2 accepts ({reason}): the server serves, but "
                "its HTTP endpoint forwards no header to the models. Fix the pattern (re2 syntax; Triton "
                "adds (?i), so it matches any case) and restart."
            )
            f = dataclasses.replace(f, remediation=fix)
        out.append(f)
    return tuple(out)
