"""doctor's LLM-SLO check with large selectors (fleet34): each SLO's selector is prepared once for all the
models (a list's names as a set, a regex compiled) and answers as the per-name `selects` did: a tuple's scan
and `re.fullmatch`, anchored, a regex Python's re cannot read covering nothing."""

from __future__ import annotations

import random
import re

from triton_sre.doctor.facts import ModelFacts
from triton_sre.doctor.llmslo import matcher, uncovered_llm_slos
from triton_sre.slo import ModelSelector, parse_spec


def scanned(models: ModelSelector, name: str) -> bool:
    if models.kind == "all":
        return True
    if models.kind == "list":
        return any(name == listed for listed in models.names)
    try:
        return re.fullmatch(models.regex, name) is not None
    except re.error:
        return False


def test_matcher_answers_as_the_scan() -> None:
    rng = random.Random(34)
    names = [f"m{i}" for i in range(40)] + ["a.b", "a+b", "llm_chat", "llm_chat2", "", "m1 "]
    selectors = [
        ModelSelector("all"),
        ModelSelector("list", names=(*rng.sample(names, 12), "m3", "m3")),  # a name twice
        ModelSelector("list", names=("a.b",)),
        ModelSelector("regex", regex="llm_.*"),
        ModelSelector("regex", regex="m1"),  # anchored: not m10 nor "m1 "
        ModelSelector("regex", regex="a.b"),
        ModelSelector("regex", regex="(?P<x>"),  # unreadable: covers nothing
        ModelSelector("regex", regex=r"\pL+"),  # RE2's class, not Python's: covers nothing here
    ]
    for selector in selectors:
        covers = matcher(selector)
        assert [covers(n) for n in names] == [scanned(selector, n) for n in names], selector
    assert [matcher(selectors[4])(n) for n in ("m1", "m10", "m1 ")] == [True, False, False]


def test_a_list_slo_of_thousands_of_models() -> None:
    team = [f"team_{i:05d}" for i in range(0, 6000, 2)]
    spec = parse_spec(
        "slos:\n  - {name: ttft, type: ttft, models: ["
        + ", ".join(team)
        + "], objective: 99, threshold: 250ms}\n"
    )
    models = [ModelFacts(name=f"team_{i:05d}") for i in range(6000)]
    models.append(ModelFacts(name="team_00002", backend="vllm"))  # an LLM backend's model: not reported
    (slo, kind, _family, named) = uncovered_llm_slos(models, spec)[0]
    assert (slo, kind) == ("ttft", "ttft")
    assert named == team  # the team's plain models, in the server's order
