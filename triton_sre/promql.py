"""The one PromQL string quoter: label values in rules, alerts, the bot's queries and silence links.

PromQL string literals (and Alertmanager matchers, which take the same syntax) escape backslash,
double quote and newline.
"""

from __future__ import annotations

__all__ = ["escape", "q"]


def escape(value: str) -> str:
    """The inside of a double-quoted PromQL string (no quotes)."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def q(value: str) -> str:
    """A PromQL double-quoted string literal."""
    return f'"{escape(value)}"'
