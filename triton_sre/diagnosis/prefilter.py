"""Pure: the literal words a regular expression cannot match without, to skip its search cheaply.

`frames` tries `rules.CAUSE_RULES` (hundreds of patterns) in order on every text; most texts name
none of most rules' words. `required` reads a compiled pattern once (its parse tree, `re._parser`)
and returns sets of lowercase literal strings: any match contains a string of each set (no set when
it cannot say: the rule is always searched); `fold` lowers a text the same way. A rule with a set
sharing nothing with the words present in the folded text cannot match it, so the first rule that
matches is the same with or without the filter.

Conservative by construction: only runs of ASCII literal characters are read; a class, a dot, an
escape class (``\\d``), a zero-width assertion (``\\b``, ``^``), a lookaround, a back-reference, a
conditional group, a non-ASCII literal or an optional part ends a run or gives nothing. Lowering both
sides covers IGNORECASE (and a case-sensitive literal is lowered alike on both sides); the four
non-ASCII characters Python's IGNORECASE equates with an ASCII letter (dotted and dotless i, long s,
the Kelvin sign) are mapped to that letter before lowering (`tests/test_diagnosis_prefilter.py`
checks every code point).
"""

from __future__ import annotations

import re

try:  # Python 3.11+
    from re import _parser as _sre
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _sre  # type: ignore[no-redef]

__all__ = ["fold", "required"]

Words = frozenset[str]

_REPEATS = tuple(
    op
    for op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, getattr(_sre, "POSSESSIVE_REPEAT", None))
    if op is not None
)
_ATOMIC = getattr(_sre, "ATOMIC_GROUP", None)

# Non-ASCII characters that IGNORECASE matches with an ASCII letter (re's case-fold equivalences):
# U+0130 İ and U+0131 ı ~ i, U+017F ſ ~ s, U+212A Kelvin sign ~ k. İ is also the one character whose
# lowercase is two characters long; mapped first, every character lowers to exactly one.
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


def fold(text: str) -> str:
    """``text`` lowered so that an ASCII literal a pattern matches (in any case) is a substring of it."""
    if text.isascii():
        return text.lower()
    return text.translate(_FOLD).lower()


def _key(words: Words) -> tuple[int, int]:
    """How selective a set of words is: the longer its shortest word, then the fewer words, the better."""
    return (min(map(len, words)), -len(words))


def _sequence(items: list[tuple[object, object]] | _sre.SubPattern) -> list[Words]:
    """What a sequence of nodes requires: each literal run and each part's requirements, all of them."""
    clauses: list[Words] = []
    run: list[str] = []
    for op, av in items:
        if op is _sre.LITERAL and isinstance(av, int) and av < 128:
            run.append(chr(av).lower())
            continue
        if run:
            clauses.append(frozenset(("".join(run),)))
            run = []
        clauses.extend(_node(op, av))
    if run:
        clauses.append(frozenset(("".join(run),)))
    return clauses


def _node(op: object, av: object) -> list[Words]:
    if op is _sre.SUBPATTERN:
        return _sequence(av[-1])  # type: ignore[index]
    if _ATOMIC is not None and op is _ATOMIC:
        return _sequence(av)  # type: ignore[arg-type]
    if op in _REPEATS:
        low, _high, body = av  # type: ignore[misc]
        return _sequence(body) if low >= 1 else []
    if op is _sre.BRANCH:
        words: set[str] = set()
        for alternative in av[1]:  # type: ignore[index]
            clauses = _sequence(alternative)
            if not clauses:
                return []  # an alternative that requires nothing: the branch requires nothing
            words |= max(clauses, key=_key)
        return [frozenset(words)]
    return []  # a class, any character, an assertion, a lookaround, a back-reference, a conditional


def required(pattern: re.Pattern[str]) -> tuple[Words, ...]:
    """Sets of lowercase ASCII words: every match of ``pattern`` contains a word of each set (at most
    two sets, the most selective first); empty when nothing can be said (always search it)."""
    tree = _sre.parse(pattern.pattern, pattern.flags)  # it compiled: it parses
    return tuple(sorted(dict.fromkeys(_sequence(tree)), key=_key, reverse=True)[:2])
