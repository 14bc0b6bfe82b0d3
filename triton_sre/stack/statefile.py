"""The stack's state file (``<workdir>/stack.json``) read back, checked before anything is signalled.

`stack status`, `stack down`, `stack up` and `gameday --attach` read the processes a `stack up`
recorded. A file that is not what `save_state` writes (truncated by a full disk, edited by hand,
another program's JSON) is a `StateFileError` (exit 2) naming the file and the field, never a traceback; and
a pid that cannot be one component's process group (0, 1 or negative: `killpg(0)` signals the
caller's own group, `killpg(1)` init's) is refused, so `stack down` never signals them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from triton_sre.checks import ConfigError
from triton_sre.inputs import MAX_CONFIG_BYTES, read_bounded
from triton_sre.redact import bounded

__all__ = ["StateFileError", "read_state", "signallable"]

_TEXT_FIELDS = ("name", "url", "log")


class StateFileError(ConfigError):
    """The state file is unreadable or not what `stack up` writes: a ConfigError, so every command
    reading it (stack, demo, gameday) says so on one line and exits 2."""


def signallable(pid: object) -> bool:
    """A pid a component's process group can have: an int above 1 (not a bool)."""
    return isinstance(pid, int) and not isinstance(pid, bool) and pid > 1


def read_state(path: Path) -> dict[str, Any] | None:
    """The state file's object with its ``components`` checked; None when there is no file."""
    if not path.exists() and not path.is_symlink():
        return None
    try:  # a regular file of at most a megabyte (`stack up` writes a few kilobytes)
        raw = json.loads(read_bounded(path, MAX_CONFIG_BYTES).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise StateFileError(f"{path}: not a stack state file: {bounded(str(exc))}") from None
    if not isinstance(raw, dict):
        raise StateFileError(f"{path}: not a stack state file: a JSON {type(raw).__name__}, not an object")
    components = raw.get("components", [])
    if not isinstance(components, list):
        raise StateFileError(f"{path}: components: expected a list, got {bounded(components)}")
    for number, item in enumerate(components):
        problem = _component_problem(item)
        if problem:
            raise StateFileError(f"{path}: components[{number}]: {problem}")
    return raw


def _component_problem(item: object) -> str | None:
    if not isinstance(item, dict):
        return f"expected an object, got {bounded(item)}"
    for key in _TEXT_FIELDS:
        if not isinstance(item.get(key), str):
            return f"{key}: expected a string, got {bounded(item.get(key))}"
    if not signallable(item.get("pid")):
        return f"pid: expected a process id above 1, got {bounded(item.get('pid'))}"
    start = item.get("start_time")
    if not isinstance(start, int) or isinstance(start, bool) or start < 0:
        return f"start_time: expected a whole number >= 0, got {bounded(start)}"
    argv = item.get("argv")
    if not isinstance(argv, list) or not all(isinstance(arg, str) for arg in argv):
        return f"argv: expected a list of strings, got {bounded(argv)}"
    if not isinstance(item.get("extra", {}), dict):
        return f"extra: expected an object, got {bounded(item.get('extra'))}"
    unknown = sorted(set(item) - {*_TEXT_FIELDS, "pid", "start_time", "argv", "extra"})
    if unknown:
        return f"unknown field {bounded(unknown[0])}"
    return None
