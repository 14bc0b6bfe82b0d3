"""The rules' prefilter (diagnosis/prefilter.py) never rejects a text its pattern matches.

`frames._first_rule` skips a rule of `rules.CAUSE_RULES` when the folded text lacks a word of one of
the sets `prefilter.required` derived from its pattern. Skipping is only right when such a text cannot
match: checked here on every inventory example, on texts generated from each pattern's own parse tree
(random case, the non-ASCII characters IGNORECASE equates with ASCII letters), on every corpus log
line (slow), and `_first_rule` against the plain first-match loop on the corpus's texts.
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import pytest

from triton_sre.diagnosis import frames, prefilter
from triton_sre.diagnosis.inventory import ENTRIES
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.diagnosis.rules import CAUSE_RULES

if sys.version_info >= (3, 11):
    from re import _parser as sre
else:  # pragma: no cover
    import sre_parse as sre

LOGS = Path(__file__).resolve().parent / "data" / "logs"
PLAN = frames._plan()[1]


def _passes(needs: tuple[frozenset[str], ...], text: str) -> bool:
    folded = prefilter.fold(text)
    return all(any(word in folded for word in need) for need in needs)


def _rejecting(text: str) -> list[tuple[frames.CauseRule, tuple[frozenset[str], ...]]]:
    """The rules whose prefilter rejects ``text``."""
    return [(rule, needs) for rule, needs in PLAN if not _passes(needs, text)]


def _naive_first(text: str) -> frames.CauseRule | None:
    return next((rule for rule in CAUSE_RULES if rule.pattern.search(text)), None)


def test_every_rule_has_a_plan_in_order() -> None:
    assert [rule for rule, _needs in PLAN] == list(CAUSE_RULES)
    filtered = sum(1 for _rule, needs in PLAN if needs)
    assert filtered >= 0.9 * len(CAUSE_RULES)  # the filter is worth having
    assert all(word == word.lower() and word.isascii() for _r, needs in PLAN for n in needs for word in n)


def test_fold_keeps_every_ascii_letter_ignorecase_matches() -> None:
    """Every code point IGNORECASE matches with an ASCII character folds to that character, one for one."""
    everything = "".join(chr(cp) for cp in range(sys.maxunicode + 1))
    for ascii_char in map(chr, range(128)):
        for m in re.finditer(re.escape(ascii_char), everything, re.I):
            assert prefilter.fold(m.group()) == ascii_char.lower(), (hex(ord(m.group())), ascii_char)
    long = [cp for cp in range(sys.maxunicode + 1) if len(prefilter.fold(chr(cp))) != 1]
    assert long == []


def test_known_constructs() -> None:
    assert prefilter.required(re.compile(r"foo\d+bar")) == (frozenset({"foo"}), frozenset({"bar"}))
    assert prefilter.required(re.compile(r"(?:Alpha|Beta)x?")) == (frozenset({"alpha", "beta"}),)
    assert prefilter.required(re.compile(r"(?:Alpha|\d)")) == ()
    assert prefilter.required(re.compile(r"(?:gamma)?delta|epsilon")) == (frozenset({"delta", "epsilon"}),)
    assert prefilter.required(re.compile(r"(?!zeta)[a-z]+(?=eta)\b")) == ()
    assert prefilter.required(re.compile(r"(x)\1")) == (frozenset({"x"}),)
    assert prefilter.required(re.compile("\u00e9t\u00e9 done")) == (frozenset({" done"}), frozenset({"t"}))


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.id)
def test_inventory_examples_are_never_rejected_by_a_matching_rule(entry) -> None:
    texts = [entry.example, *(comp.example for comp in entry.competes)]
    for text in texts:
        for rule, _needs in _rejecting(text):
            assert rule.pattern.search(text) is None, (rule.source, rule.runbook, text)
        assert frames._planned_first_rule(text) is _naive_first(text)


# The characters IGNORECASE takes for an ASCII letter besides its two cases (what `fold` maps).
_ODD_CASE = {"i": "\u0130\u0131", "s": "\u017f", "k": "\u212a"}
_POOL = "abcxyzABCXYZ019 _-./:'\"\n\t\u00e9\u0130\u0131\u017f\u212a"


def _sample(items, rnd: random.Random, ignorecase: bool, tail: list[str]) -> str:
    """A random text built to match ``items`` (a parse tree); positive lookaheads' texts go to ``tail``."""
    out: list[str] = []
    for op, av in items:
        if op is sre.LITERAL:
            ch = chr(av)
            if ignorecase and rnd.random() < 0.5:
                ch = rnd.choice(ch.swapcase() + _ODD_CASE.get(ch.lower(), ""))
            out.append(ch)
        elif op is sre.NOT_LITERAL:
            out.append(rnd.choice([ch for ch in _POOL if ord(ch) != av]))
        elif op is sre.ANY:
            out.append(rnd.choice(_POOL.replace("\n", "")))
        elif op is sre.IN:
            out.append(_class_char(av, rnd))
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", sre.MAX_REPEAT)):
            low, high, body = av
            count = rnd.randint(low, min(high, low + 2))
            out.extend(_sample(body, rnd, ignorecase, tail) for _ in range(count))
        elif op is sre.SUBPATTERN:
            add = av[1]
            out.append(_sample(av[-1], rnd, ignorecase or bool(add & re.I), tail))
        elif op is getattr(sre, "ATOMIC_GROUP", None):
            out.append(_sample(av, rnd, ignorecase, tail))
        elif op is sre.BRANCH:
            out.append(_sample(rnd.choice(av[1]), rnd, ignorecase, tail))
        elif op is sre.ASSERT and av[0] == 1:
            tail.append(_sample(av[1], rnd, ignorecase, tail))
    return "".join(out)


def _class_char(items, rnd: random.Random) -> str:
    if items and items[0][0] is sre.NEGATE:
        return rnd.choice(_POOL)  # may not match: such samples are dropped
    op, av = rnd.choice(items)
    if op is sre.LITERAL:
        return chr(av)
    if op is sre.RANGE:
        return chr(rnd.randint(*av))
    if op is sre.CATEGORY:
        name = str(av).lower()
        return "7" if "digit" in name else " " if "space" in name else "q" if "not" not in name else "-"
    return rnd.choice(_POOL)


def test_generated_matches_pass_their_rules_prefilter() -> None:
    rnd = random.Random(20261204)
    sampled = 0
    for rule, needs in PLAN:
        tree = sre.parse(rule.pattern.pattern, rule.pattern.flags)
        matched = 0
        for _ in range(30):
            tail: list[str] = []
            body = _sample(tree, rnd, bool(rule.pattern.flags & re.I), tail)
            for text in (body, "\n".join([*tail, body]), body + " " + " ".join(tail)):
                if rule.pattern.search(text):
                    matched += 1
                    assert _passes(needs, text), (rule.source, rule.runbook, text)
        sampled += matched > 0
    assert sampled >= 0.9 * len(PLAN), sampled  # the generator reaches (almost) every rule


def _corpus_texts() -> list[str]:
    texts: list[str] = []
    for path in sorted(LOGS.rglob("*.log")):
        texts.extend(e.message for e in parse_text(path.read_text(encoding="utf-8", errors="replace")))
    return list(dict.fromkeys(texts))


def test_first_rule_equals_the_plain_loop_on_corpus_messages() -> None:
    texts = _corpus_texts()
    assert len(texts) > 1000
    for text in texts:
        assert frames._planned_first_rule(text) is _naive_first(text), text


@pytest.mark.slow
def test_no_corpus_line_is_rejected_by_a_matching_rule() -> None:
    lines = {line for p in LOGS.rglob("*.log") for line in p.read_text(errors="replace").splitlines()}
    assert len(lines) > 5000
    for line in lines:
        for rule, _needs in _rejecting(line):
            assert rule.pattern.search(line) is None, (rule.source, rule.runbook, line)


def test_the_plan_is_used_once_the_plain_texts_are_spent(monkeypatch) -> None:
    """A short triage never pays for the plan; a long run (a fleet exporter) uses it; same answers."""
    planned: list[str] = []

    def counting(text: str):
        planned.append(text)
        return planned_first_rule(text)

    planned_first_rule = frames._planned_first_rule
    monkeypatch.setattr(frames, "_plain_left", [2])
    monkeypatch.setattr(frames, "_planned_first_rule", counting)
    texts = _corpus_texts()[:5]
    answers = [frames._first_rule(text) for text in texts]
    assert planned == texts[2:]
    assert answers == [_naive_first(text) for text in texts]
