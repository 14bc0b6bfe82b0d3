"""Pure: the report's sections each query feeds, and Prometheus' warnings and infos said per section
(reportsplit).

Prometheus answers `status: success` with `warnings` when a result may be partial (a store or shard
not answering, a limit hit). A warning names a query; what a reader needs is which part of the report
may be incomplete. Each query of the report's plan knows the sections its answer feeds
(`family_sections`: a counter of the models table feeds the table, its recommendations and charts, the
request counters the SLOs too); the report's client keeps each warning with them
(`report.prom.PrometheusClient`), and `by_section` writes one note per section and distinct text,
naming the queries that carried it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from triton_sre import conventions as c

__all__ = [
    "CAPACITY",
    "CHARTS",
    "LLM",
    "MODELS",
    "ORDER",
    "RECOMMENDATIONS",
    "SLOS",
    "UNSERVED",
    "Said",
    "by_section",
    "family_sections",
    "notes_json",
    "plan_names",
]

MODELS, UNSERVED, LLM = "Models", "Models not served", "LLM models"
RECOMMENDATIONS, SLOS, CAPACITY, CHARTS = "Recommendations", "SLOs", "Capacity", "Charts"
ORDER = (MODELS, UNSERVED, LLM, RECOMMENDATIONS, SLOS, CAPACITY, CHARTS)
"""The sections in the report's order (`render.to_markdown`)."""
_TABLE = (MODELS, RECOMMENDATIONS, CHARTS)  # the models table's figures, judged and drawn
NAMED = 3
COUNTED = " (series count)"
"""After the name of a query's count, read before it to choose the step."""
"""Queries a note names before `+N more`."""

Said = tuple[tuple[str, ...], str, str]
"""(the sections a query feeds, its name in the report's plan, the text Prometheus said)."""


def family_sections(name: str) -> tuple[str, ...]:
    """The sections fed by the plan's query `name` (a metric family, `queries.THROUGHPUT`, an SLO's)."""
    from triton_sre.report.capacity import FAMILIES as CAPACITY_FAMILIES
    from triton_sre.report.llm import TOKEN_FAMILIES
    from triton_sre.report.queries import THROUGHPUT

    if name in (c.NV_REQUEST_SUCCESS, c.NV_REQUEST_FAILURE):  # the availability SLOs' totals too
        return (*_TABLE, SLOS)
    if name == c.M_MODEL_STATE:  # the load times' state now; which models are not served, per SLO too
        return (UNSERVED, SLOS, CAPACITY)
    if name == c.M_MODEL_UNAVAILABLE:
        return (UNSERVED,)
    if name in CAPACITY_FAMILIES:
        return (CAPACITY,)
    if name in TOKEN_FAMILIES:
        return (LLM,)
    if name == c.M_COST_PER_HOUR:  # the LLM section's cost per token
        return (*_TABLE, LLM)
    if name == THROUGHPUT:
        return (CHARTS,)
    return _TABLE


def plan_names(counted: Mapping[str, Any], plan: Iterable[str]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """PromQL -> (name, sections) of each query of `counted` (the report's plan and its SLO section's:
    `RangeQuery` by name; those not in `plan` feed the SLOs) and of the count read before it (``<name>
    (series count)``): an expression two names share feeds the sections of both."""
    plan = set(plan)
    # the one answer of no query: the scrape interval, the rate window of the charts and SLOs per step
    out: dict[str, tuple[str, tuple[str, ...]]] = {
        "": ("scrape interval (/api/v1/status/config)", (SLOS, CHARTS))
    }
    for name, query in counted.items():
        sections = family_sections(name) if name in plan else (SLOS,)
        for expr, named in ((query.expr, name), (query.count, f"{name}{COUNTED}")):
            if expr:
                first, had = out.get(expr, (named, ()))
                out[expr] = (first, (*had, *(s for s in sections if s not in had)))
    return out


def by_section(said: Iterable[Said]) -> tuple[tuple[str, str], ...]:
    """(section, ``"<queries>: <text>"``) per section the queries fed and distinct text, in the report's
    order (a section not in `ORDER` after them); the queries by name, at most `NAMED` then `+N more`."""
    grouped: dict[str, dict[str, list[str]]] = {}
    for sections, name, text in said:
        for section in sections:
            names = grouped.setdefault(section, {}).setdefault(text, [])
            if name not in names:
                names.append(name)
    order = {section: i for i, section in enumerate(ORDER)}
    notes = []
    for section in sorted(grouped, key=lambda s: order.get(s, len(ORDER))):
        for text, names in grouped[section].items():
            names.sort(key=lambda name: name.endswith(COUNTED))  # the queries read first, then counts
            more = f" (+{len(names) - NAMED} more)" if len(names) > NAMED else ""
            notes.append((section, f"{', '.join(names[:NAMED])}{more}: {text}"))
    return tuple(notes)


def notes_json(partial: Iterable[tuple[str, str]], infos: Iterable[tuple[str, str]]) -> str:
    """`partial_data.json`: the notes of `by_section` per section, warnings and infos apart."""
    out: dict[str, dict[str, list[str]]] = {"partial_data": {}, "prometheus_info": {}}
    for key, notes in (("partial_data", partial), ("prometheus_info", infos)):
        for section, note in notes:
            out[key].setdefault(section, []).append(note)
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"
