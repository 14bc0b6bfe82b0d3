"""Repeated messages are classified once: a bounded memo for the engine's pure text functions.

A crash-looping server writes the same failure again and again (the same model, the same
reason, only the timestamp and the line number change). The diagnosis rules are pure functions
of the message text and cost tens of microseconds per message (dozens of case-insensitive
regular expressions); a 100 MB log made mostly of such lines spent almost all its time there.

The memo is keyed on the exact message, not on a looser template: rules and the model/version
extraction read the values in the message (model names, versions, sizes), so only an identical
text is guaranteed the identical answer. Timestamps and thread ids are not part of the message,
so a crash loop's repeats hit the memo. Memory is bounded: at most `MAX_ENTRIES` texts of at
most `MAX_TEXT_CHARS` characters per function (longer texts are computed every time), oldest
entries dropped first. `disabled()` turns every memo off (the slow path, for differential tests
and benchmarks).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import TypeVar

__all__ = ["MAX_ENTRIES", "MAX_TEXT_CHARS", "disabled", "memoize_text"]

MAX_ENTRIES = 2048
MAX_TEXT_CHARS = 2048

T = TypeVar("T")

_state = {"enabled": True}
_caches: list[dict[str, object]] = []


def memoize_text(fn: Callable[[str], T]) -> Callable[[str], T]:
    """``fn`` (a pure function of one string) with a bounded memo of its answers."""
    cache: dict[str, T] = {}

    @functools.wraps(fn)
    def cached(text: str) -> T:
        try:
            return cache[text]
        except KeyError:
            pass
        value = fn(text)
        if len(text) <= MAX_TEXT_CHARS and _state["enabled"]:
            if len(cache) >= MAX_ENTRIES:
                # Oldest first; tolerate another thread evicting the same entry.
                cache.pop(next(iter(cache), ""), None)
            cache[text] = value
        return value

    cached.cache = cache  # type: ignore[attr-defined]
    _caches.append(cache)  # type: ignore[arg-type]
    return cached


@contextlib.contextmanager
def disabled() -> Iterator[None]:
    """Every memo empty and off inside the block: each call computes its answer (the slow path)."""
    previous = _state["enabled"]
    _state["enabled"] = False
    for cache in _caches:
        cache.clear()
    try:
        yield
    finally:
        _state["enabled"] = previous
