"""Pure: which ttft / time_per_output_token SLOs name loaded models that no LLM backend serves.

Those SLOs read only the vLLM and TensorRT-LLM histograms (`conventions.LLM_SLO_HISTOGRAMS`), so a team's
own streaming model (a decoupled Python model) gives them no series: the SLO never alerts and `generate`
cannot know it. `doctor`'s `llm-metrics` check reports them with the live server's models in hand.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from triton_sre import conventions as c
from triton_sre.doctor.facts import ModelFacts
from triton_sre.slo import ModelSelector, Spec


def uncovered_llm_slos(
    models: Iterable[ModelFacts], spec: Spec | None
) -> list[tuple[str, str, str, list[str]]]:
    """(SLO, type, the family it reads, models) for each LLM SLO naming loaded models (by list or regex:
    `all` names none in particular) that serve no LLM backend's metrics."""
    plain = [m.name for m in models if not m.llm_flavor]
    out = []
    for slo in spec.slos if spec is not None else ():
        if slo.type not in c.LLM_SLO_TYPES or slo.models.kind == "all":
            continue
        covers = matcher(slo.models)  # prepared once per SLO: a list's names as a set, a regex compiled
        names = [name for name in plain if covers(name)]
        if names:
            out.append((slo.name, slo.type, c.LLM_SLO_HISTOGRAMS[slo.type][0], names))
    return out


def selects(models: ModelSelector, name: str) -> bool:
    """The SLO's `models` covers `name` (a list, or its anchored regex read by Python's re)."""
    return matcher(models)(name)


def matcher(models: ModelSelector) -> Callable[[str], bool]:
    """`selects` of one selector, prepared for many names: a list's names looked up in a set (a tuple's
    scan made a list of 5,000 names against 10,000 models 1.3 s, fleet34), a regex compiled once."""
    if models.kind == "all":
        return lambda name: True
    if models.kind == "list":
        return frozenset(models.names).__contains__
    try:
        pattern = re.compile(models.regex)
    except re.error:  # RE2 syntax Python's re does not read: no claim either way
        return lambda name: False
    return lambda name: pattern.fullmatch(name) is not None
