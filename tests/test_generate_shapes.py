"""The promtool SLO scenarios are predicted and their input series built once per SLO shape
(calc.shape, tests_slo_series.py: issue 28 item 7): SLOs differing only by name and models share
the work, and nothing of one SLO leaks into another's scenarios, in one spec or across specs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from triton_sre.generate import families
from triton_sre.generate.rulefile import render_yaml
from triton_sre.slo import parse_spec

REPO = Path(__file__).resolve().parents[1]


def _spec_text(prefix: str) -> str:
    """Two SLOs of each shape, and one covering every model (it judges the others' tracks)."""
    return f"""
scrape: {{latency_metrics: [summary, histogram]}}
slos:
  - {{name: {prefix}-avail-1, type: availability, models: [{prefix}-m1], objective: 99.9, period: 30d}}
  - {{name: {prefix}-avail-2, type: availability, models: [{prefix}-m2], objective: 99.9, period: 30d}}
  - {{name: {prefix}-lat-1, type: latency, models: [{prefix}-m1], objective: 99, threshold: 500ms}}
  - {{name: {prefix}-lat-2, type: latency, models: ["{prefix}-m[23]"], objective: 99, threshold: 500ms}}
  - {{name: {prefix}-all, type: availability, models: all, objective: 99, period: 30d}}
"""


def _render(prefix: str) -> str:
    spec = parse_spec(_spec_text(prefix), "shapes.yaml")
    return "".join(render_yaml(doc, "shapes.yaml") for doc in families.test_files(spec, "runbooks/").values())


def test_slos_of_one_shape_share_predictions_but_keep_their_own_names() -> None:
    _render("aaa")  # fills the shape caches with another fleet's names
    text = _render("bbb")
    assert "aaa" not in text
    for name in ("bbb-avail-1", "bbb-avail-2", "bbb-lat-1", "bbb-lat-2", "bbb-all", "bbb-m1", "bbb-m2"):
        assert f"name: '{name}: " in text or f"model: {name}" in text, name
    # the same bytes as a process that never saw the other fleet
    code = f"import sys; sys.path.insert(0, {str(REPO / 'tests')!r}); import test_generate_shapes as t;"
    fresh = subprocess.run(
        [sys.executable, "-c", code + " sys.stdout.write(t._render('bbb'))"],
        check=True,
        capture_output=True,
        text=True,
        cwd=REPO,
    ).stdout
    assert text == fresh
