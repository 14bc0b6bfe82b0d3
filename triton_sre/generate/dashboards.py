"""The dashboard registry: every Grafana dashboard `triton-sre generate` writes under dashboards/,
and their JSON rendering. To add a dashboard: write `generate/dash_<name>.py` with a builder
`(spec, base_url) -> dashboard JSON model` on the helpers of panels.py, and add it to DASHBOARDS.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from triton_sre import conventions as c
from triton_sre.generate import dash_capacity, dash_llm, dash_model, dash_overview, dash_slo
from triton_sre.slo import Spec

Builder = Callable[[Spec, str], dict[str, Any]]  # (spec, runbook base url) -> dashboard JSON model

# File name (under dashboards/) -> builder
DASHBOARDS: dict[str, Builder] = {
    "triton-overview.json": dash_overview.overview,
    "triton-model.json": lambda spec, base_url: dash_model.model(spec),
    "triton-slo.json": lambda spec, base_url: dash_slo.slo(spec),
    dash_llm.FILE: lambda spec, base_url: dash_llm.llm(spec),
    "triton-capacity.json": lambda spec, base_url: dash_capacity.capacity(spec),
}


def dashboards(spec: Spec, base_url: str = c.DEFAULT_RUNBOOK_BASE_URL) -> dict[str, dict[str, Any]]:
    """File name (under dashboards/) -> dashboard JSON model."""
    return {name: build(spec, base_url) for name, build in DASHBOARDS.items()}


def render_json(dashboard: dict[str, Any]) -> str:
    return json.dumps(dashboard, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def iter_targets(dashboard: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(panel, target) for every query of every panel, rows included."""
    for panel in dashboard.get("panels", []):
        for target in panel.get("targets", []):
            yield panel, target
        for inner in panel.get("panels", []):
            for target in inner.get("targets", []):
                yield inner, target
