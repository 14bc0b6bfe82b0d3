"""Every warning- and error-level wording of Triton's sources (``level_inventory.yaml``) -> its class.

The other side of `inventory` (the wordings that end a model load): what core, the frontends and the
backends write at WARNING or ERROR level, read from the sources across releases (diag34), and whether it is
a failure. The line reader asks `is_serving_line` about an error line no rule explains: a wording of the
``serving`` class (a request's bookkeeping, a client's cancel, an unload, the shutdown) is what a healthy
server writes, not a failure signal. The whole check of the file (every example keeps its class in a real
healthy log) is the tests'.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

import yaml

from triton_sre import conventions as c
from triton_sre.diagnosis.inventory import LazyPattern, template_source

__all__ = [
    "CLASSES",
    "LEVEL_INVENTORY_FILE",
    "LOGGERS",
    "SERVING",
    "SERVING_WORDING",
    "LevelEntry",
    "LevelInventoryError",
    "is_harmless_warning",
    "is_serving_line",
    "is_serving_wording",
    "parse_level_inventory",
]

LEVEL_INVENTORY_FILE: Final = "level_inventory.yaml"
CLASSES: Final = ("harmless", "not-served", "serving", "failure", "relay")
"""harmless: a warning that says nothing failed; not-served: a warning that means the model will not
serve (its runbook); serving: an error line a healthy server writes; failure: a real failure (never an
empty answer); relay: another message's text, no wording of its own."""
LEVELS: Final = ("warning", "error")
_REQUIRED = ("id", "component", "level", "source", "releases", "class", "template", "why")
_OPTIONAL = ("also", "example", "logger", "runbook", "wording_decides")
LOGGERS: Final = ("tensorrt-llm",)
"""A wording not written through Triton's log: ``tensorrt-llm`` is TensorRT-LLM's own logger
(``[TensorRT-LLM][WARNING] <message>``, its ``TLLM_LOG_WARNING`` / ``TLLM_LOG_ERROR``)."""
_RELEASE = re.compile(r"^r\d\d\.\d\d$")
_PLACEHOLDER = re.compile(r"<[^<>]*>")
_LOADER: Final = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class LevelInventoryError(ValueError):
    """The file is malformed; the message names the entry and the field."""


@dataclass(frozen=True, slots=True)
class LevelEntry:
    id: str
    component: str
    level: str
    source: str
    releases: tuple[str, str]
    kind: str
    """The class (`CLASSES`)."""
    template: str
    why: str
    example: str | None = None
    runbook: str | None = None
    also: tuple[str, ...] = ()
    logger: str | None = None
    """Who writes it when not Triton's log (`LOGGERS`); None: a glog line of Triton's log."""
    wording_decides: bool = False
    """Checked before the cause rules: a serving line whose own words read as a failure to them (an ensemble's
    "unable to schedule step", vLLM's `TritonSamplingParams`) or whose value is no model's (a trace file's
    errno); a harmless warning whose words read as a cause though they only name a possibility (TensorRT-LLM's
    "could lead to large runtime memory allocations ... you might run out of memory"), never a consequence a
    failure after it could have (a skipped version folder stays a cause)."""


def _entry(raw: Any, n: int, seen: set[str]) -> LevelEntry:
    if not isinstance(raw, dict):
        raise LevelInventoryError(f"entry {n}: not a mapping")
    name = raw.get("id", f"#{n}")
    missing = [k for k in _REQUIRED if not raw.get(k)]
    unknown = sorted(set(raw) - set(_REQUIRED) - set(_OPTIONAL))
    if missing or unknown:
        raise LevelInventoryError(f"entry {name}: missing {missing or '-'}, unknown {unknown or '-'}")
    if name in seen:
        raise LevelInventoryError(f"entry {name}: id used twice")
    seen.add(name)
    kind, level, runbook = raw["class"], raw["level"], raw.get("runbook")
    releases = raw["releases"]
    problems = [
        f"class {kind!r} is not one of {CLASSES}" if kind not in CLASSES else "",
        f"level {level!r} is not one of {LEVELS}" if level not in LEVELS else "",
        "releases must be two rYY.MM branches, oldest first"
        if not (
            isinstance(releases, list)
            and len(releases) == 2
            and all(_RELEASE.match(str(r)) for r in releases)
        )
        or releases[0] > releases[1]
        else "",
        f"runbook {runbook!r} is not a load-failure runbook"
        if runbook is not None and runbook not in c.LOAD_FAILURE_RUNBOOKS
        else "",
        "a relay has no example; every other class has one"
        if (kind == "relay") == bool(raw.get("example"))
        else "",
        "a not-served warning names its runbook" if kind == "not-served" and not runbook else "",
        f"a {kind} line names no runbook" if kind in ("harmless", "serving", "relay") and runbook else "",
        "a serving line is error-level (a warning is harmless or not-served)"
        if kind == "serving" and level != "error"
        else "",
        f"logger {raw.get('logger')!r} is not one of {LOGGERS}"
        if raw.get("logger") is not None and raw.get("logger") not in LOGGERS
        else "",
        "only a serving line's or a harmless warning's wording decides before the cause rules"
        if raw.get("wording_decides") and kind not in ("serving", "harmless")
        else "",
    ]
    problems = [p for p in problems if p]
    if problems:
        raise LevelInventoryError(f"entry {name}: " + "; ".join(problems))
    return LevelEntry(
        id=name,
        component=raw["component"],
        level=level,
        source=raw["source"],
        releases=(releases[0], releases[1]),
        kind=kind,
        template=raw["template"],
        why=raw["why"],
        example=raw.get("example"),
        runbook=runbook,
        also=tuple(raw.get("also") or ()),
        logger=raw.get("logger"),
        wording_decides=bool(raw.get("wording_decides")),
    )


def parse_level_inventory(text: str) -> tuple[LevelEntry, ...]:
    """Validated entries of a level inventory document (its YAML text)."""
    doc = yaml.load(text, Loader=_LOADER)  # a safe loader (CSafeLoader or SafeLoader)
    if not isinstance(doc, dict) or doc.get("schema") != 1 or not isinstance(doc.get("entries"), list):
        raise LevelInventoryError("expected a mapping with schema: 1 and a list of entries")
    seen: set[str] = set()
    return tuple(_entry(raw, n, seen) for n, raw in enumerate(doc["entries"], 1))


_ENTRY_START = re.compile(r"^- ", re.M)
"""Where an entry of the ``entries`` list starts in the file: a top-level ``- `` line."""
# `ENTRIES` (every entry, checked) is the module's `__getattr__`: parsed at its first use.


@functools.cache
def _text() -> str:
    return resources.files(__package__).joinpath(LEVEL_INVENTORY_FILE).read_text(encoding="utf-8")


@functools.cache
def _entries() -> tuple[LevelEntry, ...]:
    return parse_level_inventory(_text())


def _entries_marked(text: str, field: str) -> tuple[LevelEntry, ...]:
    """The entries of a level inventory document whose own block names ``field`` and sets it, each block
    parsed and checked alone (about 2 ms for the twelve ``wording_decides`` ones, against 25 ms for the whole
    file): the document cut before each top-level ``- `` after its ``entries:`` line. A block that does not
    read as one entry (another layout) falls back to the whole parse; tests check both give the same."""
    _head, found, body = text.partition("\nentries:\n")
    blocks = [b for b in _ENTRY_START.split(body) if field in b] if found else None
    items = [yaml.load("- " + b, Loader=_LOADER) for b in blocks or ()]  # a safe loader, as the whole parse's
    if blocks is None or not all(
        isinstance(i, list) and len(i) == 1 and isinstance(i[0], dict) for i in items
    ):
        return tuple(e for e in parse_level_inventory(text) if getattr(e, field))
    seen: set[str] = set()
    return tuple(e for n, i in enumerate(items, 1) if getattr(e := _entry(i[0], n, seen), field))


@functools.cache
def _deciding() -> tuple[LevelEntry, ...]:
    """The entries whose wording decides before the cause rules, parsed alone (every failure line asks)."""
    return _entries_marked(_text(), "wording_decides")


def __getattr__(name: str) -> Any:
    if name == "ENTRIES":
        return _entries()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Wordings:
    """Which of some templates a text holds: each template's longest literal piece (lowercased) found in the
    text first, then its regex (compiled at its first use). One alternation of all 212 took 0.3 ms on a
    100-character line and 16 ms on a 2,000-character one; the substring checks take microseconds."""

    __slots__ = ("_entries", "_rules")

    def __init__(self, entries: Callable[[], tuple[LevelEntry, ...]]) -> None:
        self._entries = entries  # (read at the first search)
        self._rules: tuple[tuple[str, LazyPattern], ...] | None = None

    def rules(self) -> tuple[tuple[str, LazyPattern], ...]:
        if self._rules is None:
            self._rules = tuple(
                (
                    max(_PLACEHOLDER.split(e.template), key=len).strip().rstrip(".; ").lower(),
                    LazyPattern(template_source(e.template), re.I),
                )
                for e in self._entries()
            )
        return self._rules

    def search(self, text: str) -> bool:
        low = text.lower()
        return any(piece in low and regex.search(text) is not None for piece, regex in self.rules())


SERVING: Final = _Wordings(lambda: tuple(e for e in _entries() if e.kind == "serving"))
"""Any wording a healthy server writes at error level (the ``serving`` class), anywhere in a text."""
SERVING_WORDING: Final = _Wordings(lambda: tuple(e for e in _deciding() if e.kind == "serving"))
"""The serving wordings checked before the cause rules: their own words read as a cause to them, or the value
they carry is no model's (a trace file's errno)."""


HARMLESS_WORDING: Final = _Wordings(lambda: tuple(e for e in _deciding() if e.kind == "harmless"))
"""The harmless warnings whose words read as a cause though they only name a possibility."""


def is_harmless_warning(text: str) -> bool:
    """A warning-level line whose wording the sources write when nothing failed and whose words only name a
    possibility (`LevelEntry.wording_decides`: TensorRT-LLM's "... you might run out of memory"): no cause,
    and no root cause of a failure after it."""
    return HARMLESS_WORDING.search(text)


def is_serving_line(text: str) -> bool:
    """An error line whose wording is one a healthy server writes while it serves or stops (``serving``).
    Asked about a line no cause rule explains: the error a serving line carries (a request's CUDA error) can
    still name a cause."""
    return SERVING.search(text)


def is_serving_wording(text: str) -> bool:
    """A serving line whose wording decides before the cause rules (`LevelEntry.wording_decides`)."""
    return SERVING_WORDING.search(text)
