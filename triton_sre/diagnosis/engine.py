"""Pure diagnosis: an UNAVAILABLE reason (or log text) -> the runbook id that explains it.

Rules are ordered: the first whose pattern matches wins, most specific first. Text no rule
explains maps to the fallback `unknown-load-failure`, never to a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from triton_sre import conventions as c


@dataclass(frozen=True, slots=True)
class ReasonRule:
    runbook: str
    pattern: re.Pattern[str]


REASON_RULES: tuple[ReasonRule, ...] = (
    ReasonRule(c.RUNBOOK_PYTHON_MODULE_MISSING, re.compile(r"\b(ModuleNotFoundError|ImportError)\b")),
    ReasonRule(
        c.RUNBOOK_VERSION_DIR_INVALID,
        re.compile(r"at least one version must be available|fails to convert to integral number"),
    ),
    # A Python traceback pointing into the model's own code: the model raised.
    ReasonRule(c.RUNBOOK_PYTHON_MODEL_ERROR, re.compile(r"\bAt:\s*\n\s+\S*model\.py\(\d+\)")),
)


def diagnose_reason(reason: str) -> str:
    """The runbook id for one UNAVAILABLE reason; the fallback id when no rule explains it."""
    for rule in REASON_RULES:
        if rule.pattern.search(reason):
            return rule.runbook
    return c.RUNBOOK_UNKNOWN_LOAD_FAILURE
