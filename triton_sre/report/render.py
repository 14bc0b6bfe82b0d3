"""The report as Markdown (PNG files beside it), one self-contained HTML page, and CSV.

The HTML template runs in jinja2's `SandboxedEnvironment` with autoescaping: model names and
labels come from Prometheus, so they are data, never markup. Charts are embedded as data: URIs.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from jinja2.sandbox import SandboxedEnvironment

from triton_sre import mdtext
from triton_sre.report.capacity import CapacitySection, advice, tables
from triton_sre.report.charts import CHARTS
from triton_sre.report.figures import ALL_VERSIONS, Summary
from triton_sre.report.llm import LLM_HEADERS
from triton_sre.report.recommend import Recommendation
from triton_sre.report.slo import SLOSection
from triton_sre.report.slo_text import HEADERS as SLO_HEADERS
from triton_sre.report.slo_text import section_intro, slo_blocks, slo_frame
from triton_sre.report.unserved import CAUSE, NO_REASON, NOT_SERVED_RUNBOOK
from triton_sre.report.unserved import COLUMNS as UNSERVED_COLUMNS
from triton_sre.rfc3339 import utc_text

__all__ = [
    "HEADERS",
    "VERSIONS_TOGETHER",
    "CostReport",
    "llm_csv",
    "recommendations_csv",
    "slos_csv",
    "table_notes",
    "to_csv",
    "to_html",
    "to_markdown",
]

HEADERS = {
    "model": "model",
    "version": "version",
    "inferences": "inferences",
    "requests_per_s": "req/s",
    "cost": "cost",
    "cost_per_1k": "cost / 1k inf.",
    "cost_share": "share of cost",
    "idle_cost": "idle cost",
    "batching_ratio": "batching ratio",
    "batch_fill": "batch fill",
    "queue_share": "queue share",
    "compute_share": "compute share",
    "queue_step": "queues most in",
    "split_from": "split from",
    "avg_latency_ms": "avg ms",
    "p50_ms": "p50 ms",
    "p95_ms": "p95 ms",
    "p99_ms": "p99 ms",
    "latency_source": "quantiles from",
}
_PERCENT = {"cost_share", "batch_fill", "queue_share", "compute_share"}
_MONEY = {"cost", "cost_per_1k", "idle_cost", "cost_per_1m_input_tokens", "cost_per_1m_output_tokens"}


@dataclass
class CostReport:
    start: float
    end: float
    step: float
    source: str
    table: pd.DataFrame
    summary: Summary
    recommendations: Sequence[Recommendation]
    charts: Mapping[str, bytes] = field(default_factory=dict)
    llm: pd.DataFrame = field(default_factory=pd.DataFrame)  # LLM models (report/llm.py)
    capacity: CapacitySection | None = None
    slos: SLOSection | None = None  # the SLO section (report/slo.py)
    # models the index lists with no version READY at the range's end (report/unserved.py)
    unserved: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(UNSERVED_COLUMNS)))
    # clusters of a global store whose samples stopped before the range's end (report/namespaces.py)
    silent: Sequence[str] = ()
    # (section, "<queries>: <warning>") of the answers Prometheus marked as possibly partial (`warnings`),
    # per report section the queries feed (report/sections.py)
    partial: tuple[tuple[str, str], ...] = ()
    infos: tuple[tuple[str, str], ...] = ()  # the same of `infos` (PromQL's annotations: not partial data)


def fmt(column: str, value: object) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if column in ("model", "version", "latency_source", "queue_step", "split_from"):
        return str(value) or "–"
    number = float(value)  # type: ignore[arg-type]
    if column in _PERCENT:
        return f"{number * 100:.1f}%"
    if column in _MONEY:
        return f"{number:.6f}" if abs(number) < 1 else f"{number:,.2f}"
    if column in ("inferences", "input_tokens", "output_tokens"):
        return f"{number:,.0f}"
    return f"{number:,.2f}"


def _rows(report: CostReport) -> list[list[str]]:
    return [[fmt(col, row[col]) for col in HEADERS] for row in report.table.to_dict("records")]


def table_notes(table: pd.DataFrame) -> list[str]:
    """Sentences under the models table: each row whose batching ratio counts failed executions."""
    notes = []
    for row in table.to_dict("records"):
        failures, ratio, version = row.get("failures"), row.get("batching_ratio"), row.get("version")
        never = row.get("failures_never_executed")
        if isinstance(failures, float) and isinstance(never, float) and math.isfinite(never):
            failures -= never  # rejected, cancelled or OTHER: no execution to count
        if (
            not failures
            or failures <= 0
            or not isinstance(ratio, float)
            or not math.isfinite(ratio)
            or version == ALL_VERSIONS
        ):
            continue  # a model's total: its versions' rows say it
        name = f"{row['model']} v{version}" if version else str(row["model"])
        notes.append(
            f"{name}: batching ratio {ratio:.2f} is lowered by its {failures:,.0f} failed requests: Triton "
            "counts a failed batch as an execution, its requests not as inferences."
        )
    if "version" in table.columns:
        rows_of = table["model"].value_counts()
        alone = table[(table["version"] == ALL_VERSIONS) & table["model"].map(rows_of).eq(1)]
        notes += [f"{model}: {VERSIONS_TOGETHER}" for model in alone["model"]]
    return notes


VERSIONS_TOGETHER = (
    f"an ensemble with several versions, its row (version {ALL_VERSIONS}) is every version's: Triton counts "
    "an ensemble's requests of every version on one version's series, so they are not told apart."
)
"""The note under the models table of an ensemble's row whose versions are not told apart (figures.py)."""


UNSERVED_INTRO = (
    "The repository index lists these models with no version READY on any server at the end of the "
    "range: Triton refuses their requests before counting them per model, so they have no row above."
)


def _unserved_rows(report: CostReport) -> list[list[str]]:
    return [[str(row[k]) or "–" for k in UNSERVED_COLUMNS] for row in report.unserved.to_dict("records")]


def _llm_rows(report: CostReport) -> list[list[str]]:
    return [[fmt(col, row[col]) for col in LLM_HEADERS] for row in report.llm.to_dict("records")]


PARTIAL = "partial data in"
"""Each line of a section whose figures may be incomplete: ``partial data in <section>``."""
PARTIAL_WHY = (
    "Prometheus answered some queries with warnings (a store or shard not answering, a limit hit): "
    "the figures of the sections named below may be incomplete"
)
INFO = "Prometheus info in"


def _summary_lines(report: CostReport) -> list[tuple[str, str]]:
    s = report.summary
    unit = f" {s.currency}" if s.currency else ""
    lines = [
        (
            "range",
            f"{utc_text(report.start)} → {utc_text(report.end)} "
            f"({s.seconds / 60:.1f} min, step {report.step:g} s)",
        ),
        ("source", report.source),
        ("models with traffic or cost", str(s.models)),
        ("inferences", f"{s.inferences:,.0f}"),
    ]
    for name, value, text in (
        ("server cost", s.server_cost, f"{s.server_cost or 0:.6f}{unit}"),
        ("idle cost", s.idle_cost, f"{s.idle_cost or 0:.6f}{unit}"),
        ("idle share", s.idle_fraction, f"{(s.idle_fraction or 0) * 100:.1f}%"),
    ):
        if value is not None:
            lines.append((name, text))
        elif name in s.no_data:
            lines.append((name, f"no data: {s.no_data[name]}"))
    if report.partial:
        lines.append(("partial data", PARTIAL_WHY))
    lines += [(f"{PARTIAL} {section}", note) for section, note in report.partial]
    lines += [(f"{INFO} {section}", note) for section, note in report.infos]
    return lines


def _rec_text(r: Recommendation) -> str:
    value = f"{r.value:.3g}"
    return f"{r.action} — {r.metric} {value} {r.comparison} {r.threshold:g}: {r.why}"


def to_markdown(report: CostReport, chart_files: Mapping[str, str] | None = None) -> str:
    esc = mdtext.text

    out = ["# Triton cost and capacity report", ""]
    out += [f"- **{k}**: {esc(v)}" for k, v in _summary_lines(report)]
    out += ["", "## Models", ""]
    out.append("| " + " | ".join(HEADERS.values()) + " |")
    out.append("| " + " | ".join("---" if k in ("model", "version") else "---:" for k in HEADERS) + " |")
    out += ["| " + " | ".join(esc(cell) for cell in row) + " |" for row in _rows(report)]
    if report.table.empty:
        out.append("\nNo model served or cost anything in this range.")
    notes = [*report.silent, *table_notes(report.table)]
    if notes:
        out.append("")
        out += [f"- {esc(note)}" for note in notes]
    if not report.unserved.empty:
        out += ["", "## Models not served", "", UNSERVED_INTRO, ""]
        out.append("| " + " | ".join(UNSERVED_COLUMNS) + " |")
        out.append("| " + " | ".join("---" for _ in UNSERVED_COLUMNS) + " |")
        out += ["| " + " | ".join(esc(cell) for cell in row) + " |" for row in _unserved_rows(report)]
        if (report.unserved[CAUSE] == NOT_SERVED_RUNBOOK).any():
            out += ["", esc(NO_REASON)]
    if not report.llm.empty:
        out += ["", "## LLM models", ""]
        out.append("| " + " | ".join(LLM_HEADERS.values()) + " |")
        out.append("| " + " | ".join("---" if k == "model" else "---:" for k in LLM_HEADERS) + " |")
        out += ["| " + " | ".join(esc(cell) for cell in row) + " |" for row in _llm_rows(report)]
    out += ["", "## Recommendations", ""]
    if report.recommendations:
        for r in report.recommendations:
            out.append(f"- **{esc(r.subject or 'server')}** `{r.id}`: {esc(_rec_text(r))}")
    else:
        out.append("None: no threshold was crossed.")
    out += _slo_markdown(report.slos, esc)
    out += _capacity_markdown(report.capacity, esc)
    if chart_files:
        out += ["", "## Charts", ""]
        out += [f"![{CHARTS[name]}]({path})" for name, path in chart_files.items()]
    return "\n".join(out) + "\n"


def _slo_markdown(section: SLOSection | None, esc: Callable[[str], str]) -> list[str]:
    if section is None:
        return []
    out = ["", "## SLOs", ""]
    out += [f"- {esc(line)}" for line in section_intro(section)]
    for title, rows, empty in slo_blocks(section):
        out += ["", f"### {esc(title)}", ""]
        if empty:  # no events (a model not served may still have its row)
            out.append(esc(empty))
        if not rows:
            continue
        if empty:
            out.append("")
        out.append("| " + " | ".join(SLO_HEADERS.values()) + " |")
        out.append(
            "| " + " | ".join("---" if k in ("model", "version") else "---:" for k in SLO_HEADERS) + " |"
        )
        out += ["| " + " | ".join(esc(cell) for cell in row) + " |" for row in rows]
    return out


def _capacity_markdown(section: CapacitySection | None, esc: Callable[[str], str]) -> list[str]:
    if section is None or section.empty:
        return []
    out = ["", "## Capacity", ""]
    out += [f"- {esc(line)}" for line in advice(section)]
    for title, headers, rows in tables(section):
        if not rows:
            continue
        out += ["", f"### {title}", "", "| " + " | ".join(headers) + " |"]
        out.append("| " + " | ".join("---" if i == 0 else "---:" for i in range(len(headers))) + " |")
        out += ["| " + " | ".join(esc(cell) for cell in row) + " |" for row in rows]
    return out


_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Triton cost and capacity report</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #222; max-width: 1200px; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; }
table { border-collapse: collapse; font-size: 12px; }
th, td { padding: 4px 8px; border-bottom: 1px solid #ddd; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
th { background: #f3f3f3; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 16px; }
dt { font-weight: 600; } dd { margin: 0; }
.rec { margin: 6px 0; } .rec code { background: #f3f3f3; padding: 0 4px; }
.num { font-weight: 600; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; }
.charts figure { margin: 0; } .charts img { max-width: 560px; border: 1px solid #eee; }
</style></head><body>
<h1>Triton cost and capacity report</h1>
<dl>{% for k, v in summary %}<dt>{{ k }}</dt><dd>{{ v }}</dd>{% endfor %}</dl>
<h2>Models</h2>
{% if rows %}
<div style="overflow-x: auto"><table>
<thead><tr>{% for h in headers %}<th>{{ h }}</th>{% endfor %}</tr></thead>
<tbody>{% for row in rows %}<tr>{% for cell in row %}<td>{{ cell }}</td>{% endfor %}</tr>{% endfor %}</tbody>
</table></div>
{% else %}<p>No model served or cost anything in this range.</p>{% endif %}
{% for note in notes %}<p>{{ note }}</p>{% endfor %}
{% if unserved_rows %}<h2>Models not served</h2><p>{{ unserved_intro }}</p>
<table><thead><tr>{% for h in unserved_headers %}<th>{{ h }}</th>{% endfor %}</tr></thead>
<tbody>{% for row in unserved_rows %}<tr>{% for cell in row %}<td>{{ cell }}</td>{% endfor %}</tr>
{% endfor %}</tbody></table>{% if unserved_no_reason %}<p>{{ unserved_no_reason }}</p>{% endif %}{% endif %}
{% if llm_rows %}<h2>LLM models</h2>
<div style="overflow-x: auto"><table>
<thead><tr>{% for h in llm_headers %}<th>{{ h }}</th>{% endfor %}</tr></thead>
<tbody>{% for row in llm_rows %}<tr>{% for cell in row %}<td>{{ cell }}</td>{% endfor %}</tr>
{% endfor %}</tbody>
</table></div>{% endif %}
<h2>Recommendations</h2>
{% for r in recs %}
<div class="rec"><strong>{{ r.subject or "server" }}</strong> <code>{{ r.id }}</code>: {{ r.action }} —
{{ r.metric }} <span class="num">{{ "%.3g"|format(r.value) }}</span> {{ r.comparison }}
<span class="num">{{ "%g"|format(r.threshold) }}</span>: {{ r.why }}</div>
{% else %}<p>None: no threshold was crossed.</p>{% endfor %}
{% if slos is not none %}<h2>SLOs</h2>
{% for line in slo_intro %}<p>{{ line }}</p>{% endfor %}
{% for title, rows, empty in slos %}<h3>{{ title }}</h3>{% if empty %}<p>{{ empty }}</p>{% endif %}
{% if rows %}<table><thead><tr>{% for h in slo_headers %}<th>{{ h }}</th>{% endfor %}</tr></thead>
<tbody>{% for row in rows %}<tr>{% for cell in row %}<td>{{ cell }}</td>{% endfor %}</tr>{% endfor %}</tbody>
</table>{% endif %}{% endfor %}{% endif %}
{% if capacity %}<h2>Capacity</h2>
{% for line in capacity_advice %}<p>{{ line }}</p>{% endfor %}
{% for title, headers, rows in capacity %}{% if rows %}<h3>{{ title }}</h3>
<table><thead><tr>{% for h in headers %}<th>{{ h }}</th>{% endfor %}</tr></thead>
<tbody>{% for row in rows %}<tr>{% for cell in row %}<td>{{ cell }}</td>{% endfor %}</tr>{% endfor %}</tbody>
</table>{% endif %}{% endfor %}{% endif %}
<h2>Charts</h2>
<div class="charts">{% for title, uri in charts %}
<figure><img alt="{{ title }}" src="{{ uri }}"><figcaption>{{ title }}</figcaption></figure>{% endfor %}
</div>
</body></html>
"""


def to_html(report: CostReport) -> str:
    env = SandboxedEnvironment(autoescape=True)
    template = env.from_string(_HTML)
    charts = [
        (CHARTS[name], "data:image/png;base64," + base64.b64encode(png).decode("ascii"))
        for name, png in report.charts.items()
    ]
    return template.render(
        summary=_summary_lines(report),
        headers=list(HEADERS.values()),
        rows=_rows(report),
        notes=[*report.silent, *table_notes(report.table)],
        recs=report.recommendations,
        charts=charts,
        llm_headers=list(LLM_HEADERS.values()),
        llm_rows=_llm_rows(report),
        unserved_headers=list(UNSERVED_COLUMNS),
        unserved_rows=_unserved_rows(report),
        unserved_intro=UNSERVED_INTRO,
        unserved_no_reason=NO_REASON if (report.unserved[CAUSE] == NOT_SERVED_RUNBOOK).any() else "",
        capacity=tables(report.capacity) if report.capacity and not report.capacity.empty else [],
        capacity_advice=advice(report.capacity) if report.capacity else [],
        slos=slo_blocks(report.slos) if report.slos is not None else None,
        slo_intro=section_intro(report.slos) if report.slos is not None else [],
        slo_headers=list(SLO_HEADERS.values()),
    )


# A cell starting with one of these is a formula to a spreadsheet (=HYPERLINK(...), +cmd|...):
# written after an apostrophe, as OWASP's CSV-injection advice says, it stays text.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _neutral(value: object) -> object:
    return f"'{value}" if isinstance(value, str) and value.startswith(_FORMULA_START) else value


def csv_text(frame: pd.DataFrame, **options: Any) -> str:
    """`frame` as CSV (RFC 4180), every text cell a spreadsheet would evaluate neutralised."""
    safe = frame.copy()
    for column in safe.columns:
        if not pd.api.types.is_numeric_dtype(safe[column]):
            safe[column] = safe[column].map(_neutral)
    safe.columns = [_neutral(str(column)) for column in safe.columns]
    # RFC 4180's CRLF rows: a cell holding a bare CR or LF is then quoted, so it cannot split a row
    return str(safe.to_csv(index=False, lineterminator="\r\n", **options))


def to_csv(report: CostReport) -> str:
    return csv_text(report.table, float_format="%.6g")


def unserved_csv(report: CostReport) -> str:
    return csv_text(report.unserved)


def llm_csv(report: CostReport) -> str:
    return csv_text(report.llm, float_format="%.6g")


def recommendations_csv(report: CostReport) -> str:
    columns = ["model", "version", "id", "action", "metric", "value", "comparison", "threshold", "why"]
    return csv_text(pd.DataFrame([r.as_dict() for r in report.recommendations], columns=columns))


def slos_csv(report: CostReport) -> str:
    """slos.csv: a row per SLO, model and version (step times RFC 3339, empty when none)."""
    frame = slo_frame(report.slos) if report.slos is not None else slo_frame(SLOSection())
    return csv_text(frame, float_format="%.6g")
