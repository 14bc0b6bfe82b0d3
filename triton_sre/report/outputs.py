"""The files a report writes in --out for the formats asked (md: report.md and its PNG charts; html:
report.html; csv: models.csv, recommendations.csv, partial_data.json and the optional sections' CSVs),
published all at once (publish.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from triton_sre.report.publish import publish
from triton_sre.report.render import (
    llm_csv,
    recommendations_csv,
    slos_csv,
    to_csv,
    to_html,
    to_markdown,
    unserved_csv,
)
from triton_sre.report.sections import notes_json


def write_report(report: Any, out: Path, formats: tuple[str, ...]) -> list[Path]:
    """The report's files in `out`, published all at once (publish.py): the paths written."""
    files: dict[str, str | bytes] = {}
    if "md" in formats:
        charts = {name: f"charts/{name}.png" for name in report.charts}
        files.update({charts[name]: png for name, png in report.charts.items()})
        files["report.md"] = to_markdown(report, charts)
    if "html" in formats:
        files["report.html"] = to_html(report)
    if "csv" in formats:
        files["models.csv"] = to_csv(report)
        files["recommendations.csv"] = recommendations_csv(report)
        files["partial_data.json"] = notes_json(report.partial, report.infos)  # always: none is said
        if report.slos is not None:
            files["slos.csv"] = slos_csv(report)
        if not report.llm.empty:
            files["llm_models.csv"] = llm_csv(report)
        if not report.unserved.empty:
            files["unserved_models.csv"] = unserved_csv(report)
    return publish(out, files)
