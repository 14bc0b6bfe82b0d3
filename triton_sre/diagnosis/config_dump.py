"""Pure data: is this line a configuration key or value echoed in a config dump (not an event)?

Triton and the tools around it print configurations as they read or complete them: core's
``Server side auto-completed config:`` and the verbose model-config dumps are protobuf text format
(``key: "EXECUTION_ENV_PATH"``, ``string_value: "$$TRITON_MODEL_DIRECTORY/env.tar.gz"``, ``kind:
KIND_GPU``, ``dims: -1``), a backend's ``backend configuration:`` is JSON, and ``kubectl get -o yaml``
is YAML. Such a line names a setting, it reports nothing: a config key that reads like a cause (an
execution environment, a path, a backend name) must not decide a finding. Only lines the log marks
as failures decide (`severity.py`), so a dump line that its format marks as one (a YAML status
``reason: CrashLoopBackOff``) stays an event.

The shape, from the formats' grammars: one field per line, a bare or quoted key, ``:``, then ONE
scalar (a quoted string, a number, an enum or boolean identifier); or a line that only opens or
closes a message, list or map (or holds a one-line message, ``value: {string_value: "..."}``).
A sentence after a colon (``ImportError: No module named x``) is not a scalar, so it never reads as
config.
"""

from __future__ import annotations

import re
from typing import Final

from triton_sre.diagnosis.severity import is_failure_line

__all__ = ["blank_config_lines", "is_config_line"]

# Keys whose value is a report, not a setting (a status dump's ``message: "failed to load ..."``).
_REPORT_KEYS = r"(?:error|errors|message|msg|reason|exception|status|state|stderr|log)"

_CONFIG_LINE: Final = re.compile(
    r"^\s*(?:-\s+)?"
    rf"(?!\"?{_REPORT_KEYS}\"?\s*:)"
    r"(?:\"[\w.$/-]+\"|'[\w.$/-]+'|[A-Za-z_][\w.-]*)\s*:\s*"
    r"(?:\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*'|-?\d[\w.+-]*|[A-Za-z_][\w.-]*|\{[^{}\n]*\}|\[\s*\])\s*,?\s*$"
    r"|^\s*(?:[A-Za-z_][\w.-]*\s*:?\s*)?[{\[]\s*$"
    r"|^\s*[}\]]\s*,?\s*$",
    re.I,
)


def is_config_line(line: str) -> bool:
    """True for a line that only echoes a configuration field (or opens/closes a block)."""
    return _CONFIG_LINE.match(line) is not None and not is_failure_line(line.strip())


def blank_config_lines(lines: list[str]) -> list[str]:
    """``lines`` with each config-dump line emptied (positions kept, so offsets still point home)."""
    return ["" if is_config_line(line) else line for line in lines]
