"""The report's SLO section laid out (report/slo.py computes it; render.py places it in Markdown,
HTML and CSV): the column headers, cells, the lines under the title, each table's title saying what
its events are, and slos.csv's frame."""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, TypeVar

import pandas as pd

from triton_sre import conventions as c
from triton_sre.report.slo import COLUMNS, SLI_HISTOGRAM, SLI_REQUESTS, SLI_SLICES, SLOSection, SLOTable
from triton_sre.slo import SLO, window_seconds

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")

HEADERS = {
    "model": "model",
    "version": "version",
    "requests": "events",
    "bad": "bad",
    "error_ratio": "error ratio",
    "budget_spent": "budget spent",
    "first_above": "first step above objective",
    "last_above": "last step above objective",
}


def _clock(ts: float) -> str:
    return (
        "–" if not math.isfinite(ts) else pd.Timestamp(ts, unit="s", tz="UTC").strftime("%Y-%m-%d %H:%M:%S")
    )


def _cell(column: str, value: Any) -> str:
    if column in ("model", "version"):
        return str(value) or "–"
    if column in ("first_above", "last_above"):
        return _clock(float(value))
    number = float(value)
    if not math.isfinite(number):
        return "–"
    if column in ("requests", "bad"):
        return f"{number:,.0f}"
    if column == "error_ratio":
        return f"{number * 100:.3g}%"
    return f"{number * 100:.3g}%"  # budget spent


def section_intro(section: SLOSection) -> list[str]:
    """The lines under the section's title: where the SLOs come from, what the columns assume."""
    lines = [
        f"SLOs of {section.source}; events as the alert rules count them, per model (each table says "
        "which: requests, a histogram's observations or time slices).",
        f"Budget spent: bad / (allowed ratio × expected requests over the SLO's period), assuming the "
        f"event rate of these {section.seconds / 60:.1f} min holds over the whole period; a version's "
        "share is of its model's budget.",
        f"First and last step above objective: steps whose error ratio over the trailing {section.window} "
        f"is above the allowed ratio (errors began up to {section.window} before the first; ended before "
        "the last).",
    ]
    if any(table.unserved for table in section.tables):
        lines.append(
            "A model an SLO covers that no server served at the end of the range (Models not served) is a "
            "row of 0 events, 'no data: not served': Triton failed its requests before counting them, so "
            "its objective is not met as far as the counters can tell, never 100 %."
        )
    return lines


def sli_text(table: SLOTable) -> str:
    """What `table`'s events are and which are bad, as its rules count them (and, for time slices on
    Triton's summaries, what the figure is not)."""
    slo = table.slo
    ms = f"{slo.threshold_s * 1000:g} ms"
    if table.sli == SLI_REQUESTS:
        return "events: requests (successes and failures); bad: failures with the SLO's bad reasons"
    if table.sli == SLI_HISTOGRAM:
        family = (
            c.LLM_SLO_HISTOGRAMS[slo.type][0]
            if slo.type in c.LLM_SLO_TYPES
            else (c.NV_FIRST_RESPONSE_HISTOGRAM_MS)
        )
        return f"events: observations of {family}; bad: those above {ms} (count minus the {ms} bucket)"
    quantile = c.quantile_name(slo.quantile)
    words = {
        c.LATENCY_SOURCE_SUMMARY: f"Triton's {quantile} summary at the slice's end (its sliding window of "
        "about a minute, the worst server): not the slice's own quantile, nor a count of slow requests",
        c.LATENCY_SOURCE_HISTOGRAM: f"the slice's {quantile} from the histogram (histogram_quantile)",
        c.LATENCY_SOURCE_AVERAGE: "the slice's average latency (a model with neither summary nor histogram)",
    }
    judged = "; ".join(words.get(source, source) for source in table.sources) or "no slice with traffic"
    return (
        f"events: {slo.time_slice} slices with traffic, per model; bad: a slice whose latency is above "
        f"{ms}, by {judged}"
    )


def empty_text(table: SLOTable, seconds: float) -> str:
    """What a table without rows says: a range shorter than one time slice has no slice to judge
    (not "no request": the live 2.51 report of 16 s said that of models serving all along)."""
    if table.sli == SLI_SLICES and seconds < window_seconds(table.slo.time_slice):
        return (
            f"The range ({seconds:g} s) is shorter than one {table.slo.time_slice} slice: no slice to "
            "judge (a longer range, or a shorter time_slice)."
        )
    return "No request of its models in this range."


def slo_blocks(section: SLOSection) -> list[tuple[str, list[list[str]], str]]:
    """(title, rows of cells under `HEADERS`, what it says when no model had events: "" when some did)
    per SLO; a model not served has a row of no data even then."""
    blocks = []
    for table in section.tables:
        slo = table.slo
        where = "" if table.cluster is None else f" in cluster {table.cluster or '(none)'}"
        title = (
            f"{slo.name}{where}: {slo.objective}% over {slo.period} ({slo.models.describe()}), "
            f"allowed error ratio {float(slo.budget) * 100:g}%; {sli_text(table)}"
        )
        rows = [[_cell(k, row[k]) for k in HEADERS] for row in table.rows.to_dict("records")]
        rows += [[m, "–", "0", "–", NOT_SERVED.format(state=s), "–", "–", "–"] for m, s in table.unserved]
        blocks.append((title, rows, empty_text(table, section.seconds) if table.rows.empty else ""))
    return blocks


NOT_SERVED = "no data: not served ({state})"
STATUS = "status"  # slos.csv's column: empty for a row of events, NOT_SERVED for a model not served


def covers(slo: SLO, model: str) -> bool:
    """Whether `slo`'s models include `model` (its regex fully anchored, as the rules' `=~`)."""
    if slo.models.kind == "list":
        return model in slo.models.names
    return slo.models.kind == "all" or re.fullmatch(slo.models.regex, model) is not None


def with_unserved(section: SLOSection, slos: Sequence[SLO]) -> SLOSection:
    """`section` with each model of `section.unserved` on the first table of each SLO covering it in its
    cluster (`SLOTable.unserved`) when no table of that SLO and cluster has events of it: its requests
    failed before Triton counted any (journey26's refused config), so it has no data, which is not a met
    objective (Sloth and Pyrra show no data, not 100 %). An SLO with no table in that cluster (no series
    there: its only model refused) gets an empty one. `slos`: the spec's, in order."""
    # Grouped once (fleet34): each SLO looked for its tables among all of them, and each of its clusters
    # among its tables and the unserved models (2,000 SLOs x 10 clusters: 4.5 s, quadratic in the SLOs).
    by_slo = _grouped((t.slo.name, t) for t in section.tables)
    unserved_in = _grouped((k, (model, state)) for k, model, state in section.unserved)
    tables: list[SLOTable] = []
    for slo in slos:
        own = list(by_slo.get(slo.name, ()))
        clusters = {t.cluster for t in own}
        extra = {k for k, model, _ in section.unserved if k not in clusters and covers(slo, model)}
        own += [SLOTable(slo, pd.DataFrame(columns=list(COLUMNS)), _sli(slo), (), k) for k in extra]
        own_in = _grouped((t.cluster, t) for t in own)
        done: set[str | None] = set()
        for table in sorted(own, key=lambda t: "" if t.cluster is None else t.cluster):  # stable
            if table.cluster not in done:
                done.add(table.cluster)
                seen = {str(m) for t in own_in[table.cluster] for m in t.rows["model"]}
                rows = tuple(
                    (model, state)
                    for model, state in unserved_in.get(table.cluster, ())
                    if model not in seen and covers(slo, model)
                )
                table = dataclasses.replace(table, unserved=rows)
            tables.append(table)
    return dataclasses.replace(section, tables=tuple(tables))


def _grouped(pairs: Iterable[tuple[K, T]]) -> dict[K, list[T]]:
    """key -> its items, in the order given."""
    groups: dict[K, list[T]] = {}
    for key, item in pairs:
        groups.setdefault(key, []).append(item)
    return groups


def _sli(slo: SLO) -> str:
    """How a table of `slo` without events would count them (report/slo.py's latency_tables)."""
    if slo.type == c.SLO_AVAILABILITY:
        return SLI_REQUESTS
    if slo.type in c.LLM_SLO_TYPES or slo.latency_sli == c.LATENCY_SLI_HISTOGRAM:
        return SLI_HISTOGRAM
    return SLI_SLICES


def slo_frame(section: SLOSection) -> pd.DataFrame:
    """Every SLO's rows in one frame (column ``slo`` first, then ``cluster`` when the spec has a
    cluster label; step times as RFC 3339)."""
    frames = [
        table.rows.assign(
            first_above=table.rows["first_above"].map(_rfc3339),
            last_above=table.rows["last_above"].map(_rfc3339),
        ).assign(
            slo=table.slo.name,
            objective_percent=float(table.slo.objective),
            period=table.slo.period,
            sli=table.sli,
            cluster=table.cluster,
            status="",
        )
        for table in section.tables
    ]
    frames += [_unserved_frame(table) for table in section.tables if table.unserved]
    clusters = ["cluster"] if any(table.cluster is not None for table in section.tables) else []
    columns = ["slo", *clusters, "objective_percent", "period", "sli", *COLUMNS, STATUS]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def _unserved_frame(table: SLOTable) -> pd.DataFrame:
    """slos.csv's rows of `table`'s models not served: 0 events, no figure, the status saying why."""
    return pd.DataFrame(
        {
            "slo": table.slo.name,
            "objective_percent": float(table.slo.objective),
            "period": table.slo.period,
            "sli": table.sli,
            "cluster": table.cluster,
            "model": [model for model, _ in table.unserved],
            "version": "",
            "requests": 0.0,
            "bad": math.nan,
            "error_ratio": math.nan,
            "budget_spent": math.nan,
            "first_above": "",
            "last_above": "",
            STATUS: [NOT_SERVED.format(state=state) for _, state in table.unserved],
        }
    )


def _rfc3339(ts: float) -> str:
    return (
        "" if not math.isfinite(ts) else pd.Timestamp(ts, unit="s", tz="UTC").strftime("%Y-%m-%dT%H:%M:%SZ")
    )
