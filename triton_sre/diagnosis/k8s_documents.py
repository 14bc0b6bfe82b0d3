"""Pure: Kubernetes' structured output read object by object, as the API types mean it.

Users paste Kubernetes state as structured documents too: ``kubectl get events -o json`` / ``-o yaml`` (a
``List`` of core/v1 ``Event`` objects; kubectl writes JSON indented by four spaces and YAML by two, both with
the keys sorted), ``kubectl get events.events.k8s.io`` (events.k8s.io/v1: ``regarding`` and ``note`` for
``involvedObject`` and ``message``), and an event exporter's JSON line, one event per line in its Go struct's
key order (``{"metadata":...,"involvedObject":...,"reason":...,"message":...,...,"type":"Warning"}``).

An event's ``type`` is only ``Normal`` or ``Warning`` (k8s.io/api core/v1 types.go EventTypeNormal,
EventTypeWarning), and what went wrong is its ``reason``: a Warning event is a failure when its reason is one
of `log_layouts.K8S_WARNING_REASONS`, as the ``kubectl describe`` Events table is read (so the kubelet's
``FailedPreStopHook`` alone is none, diag44), and a Normal event never is one by its type. The reader needs
the object around a field, so it reads indentation rather than parsing: a paste is often cut (one item of
``items``, a trailing comma, ``...`` for the fields left out) and must still read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from triton_sre.diagnosis.log_layouts import K8S_WARNING_REASONS

__all__ = ["EventReading", "K8sEvent", "may_hold_event", "read_events"]

_WARNING_REASON: Final = re.compile(K8S_WARNING_REASONS)
_EVENT_KEYS: Final = ("involvedObject", "regarding")
"""The key only an Event object has: core/v1's ``involvedObject``, events.k8s.io/v1's ``regarding``."""
_EVENT_KEY_WORDS: Final = ("involvedObject", '"regarding"', "regarding:")
"""The same keys as a document writes them (not the English word "regarding" in prose)."""
_EVENT_TYPES: Final = frozenset({"Normal", "Warning"})
# One field of a pretty-printed document: JSON's `"key": value,` or YAML's `key: value` (`- key: value` for a
# list's item), the value empty when the field opens an object or a list.
_JSON_FIELD: Final = re.compile(r'(\s*)"([\w.-]+)"\s*:\s*(.*?),?\s*$')
_YAML_FIELD: Final = re.compile(r"(\s*)(- +)?([\w.-]+):(?:[ \t]+(.*?))?\s*$")


@dataclass(frozen=True)
class K8sEvent:
    """One Event object: its type, reason and message, and the line that carries its reason (quoted as the
    finding's evidence; for an event on one JSON line, that line)."""

    type: str
    reason: str
    message: str
    reason_line: str

    @property
    def failing(self) -> bool:
        """A Warning whose reason is a failure's (`K8S_WARNING_REASONS`); never a Normal event."""
        return self.type == "Warning" and _WARNING_REASON.fullmatch(self.reason) is not None


@dataclass(frozen=True)
class EventReading:
    """The events of a text and the text without their reason lines (which the line formats of severity.py
    must not read by themselves: ``reason: BackOff`` in an Event is decided by the event's type)."""

    events: tuple[K8sEvent, ...]
    rest: str

    @property
    def failing(self) -> K8sEvent | None:
        return next((event for event in self.events if event.failing), None)


def may_hold_event(text: str) -> bool:
    """Whether ``text`` may hold an Event object (a plain scan, before any reading)."""
    return "reason" in text and any(key in text for key in _EVENT_KEY_WORDS)


def read_events(text: str) -> EventReading:
    """The Event objects in ``text`` (one-line JSON records and pretty-printed JSON or YAML documents)."""
    lines = text.split("\n")
    found: list[K8sEvent] = []
    dropped: set[int] = set()
    for line in lines:
        if line.lstrip().startswith("{") and line.rstrip().rstrip(",").endswith("}"):
            found.extend(_one_line(line))
    for fields in _objects(lines):
        event = _event(fields, lines)
        if event is not None:
            found.append(event)
            dropped.add(fields["reason"][1])
    rest = "\n".join(line for number, line in enumerate(lines) if number not in dropped) if dropped else text
    return EventReading(tuple(found), rest)


def _one_line(line: str) -> Iterator[K8sEvent]:
    try:
        record = json.loads(line.strip().rstrip(","))
    except (ValueError, RecursionError):
        return
    stack: list[Any] = [record]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            values = {key: value for key, value in item.items() if isinstance(value, str)}
            if _is_event(item.keys(), values):
                text = values.get("message", values.get("note", ""))
                yield K8sEvent(values["type"], values["reason"], text, line.strip())
            stack.extend(value for value in item.values() if isinstance(value, (dict, list)))


def _is_event(keys: Any, values: dict[str, str]) -> bool:
    return (
        values.get("type") in _EVENT_TYPES
        and "reason" in values
        and (any(key in keys for key in _EVENT_KEYS) or values.get("kind") == "Event")
    )


def _event(fields: dict[str, tuple[str, int]], lines: list[str]) -> K8sEvent | None:
    values = {key: value for key, (value, _) in fields.items()}
    if not _is_event(fields.keys(), values):
        return None
    message = values.get("message", values.get("note", ""))
    return K8sEvent(values["type"], values["reason"], message, lines[fields["reason"][1]].strip())


def _objects(lines: list[str]) -> Iterator[dict[str, tuple[str, int]]]:
    """Each object's scalar fields (key -> (value unquoted, line number)), by indentation: an object's
    fields share one indentation; a line less indented (a JSON brace too) or a YAML list item ends it."""
    open_: dict[int, dict[str, tuple[str, int]]] = {}
    for number, line in enumerate(lines):
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        for depth in [d for d in open_ if d > indent]:
            yield open_.pop(depth)
        field = _JSON_FIELD.fullmatch(line) or None
        item = False
        if field is not None:
            key, value = field.group(2), field.group(3)
        elif (yaml := _YAML_FIELD.fullmatch(line)) is not None:
            item = yaml.group(2) is not None
            indent += len(yaml.group(2) or "")
            key, value = yaml.group(3), yaml.group(4) or ""
        else:
            continue  # a brace, a list's scalar item, a wrapped value: the depth above closed what it ends
        if item and indent in open_:
            yield open_.pop(indent)
        open_.setdefault(indent, {}).setdefault(key, (_unquoted(value), number))
    yield from open_.values()


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        if value[0] == '"':
            try:
                loaded = json.loads(value)
            except ValueError:
                return value[1:-1]
            return loaded if isinstance(loaded, str) else value[1:-1]
        return value[1:-1].replace("''", "'")
    return value
