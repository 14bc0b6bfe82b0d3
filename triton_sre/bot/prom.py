"""The bot's chart PNG over a range query (queries go through the shared client, triton_sre/prom.py).

The chart needs pandas and matplotlib (the [bot] extra); should either fail to import, or
without ``--prometheus-url``, `chart_png` returns None and the bot posts no chart.
"""

from __future__ import annotations

import io
import logging
import math
import warnings
from collections.abc import Mapping
from typing import Any

from triton_sre import conventions as c
from triton_sre.mplconfig import drawn
from triton_sre.namespacing import label_pairs, model_name, shared_names

log = logging.getLogger(__name__)

CHART_WINDOW_SECONDS = 3600
CHART_STEP_SECONDS = 30
MAX_SERIES = 8
LEGEND_CHARS = 60
MODEL_KEY = (c.LABEL_MODEL, c.LABEL_NAMESPACE)


def chart_png(series: list[Any], title: str) -> bytes | None:
    """A PNG line chart of range-query results (pandas frame -> matplotlib); None when empty or the
    optional chart libraries are missing."""
    if not series:
        return None
    try:
        from triton_sre.mplconfig import use_writable_config_dir

        use_writable_config_dir()  # before matplotlib's import reads it
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import pandas as pd
    except ImportError:
        log.info("chart skipped: pandas/matplotlib cannot be imported")
        return None
    shown = series[:MAX_SERIES]
    columns = {}
    for item, label in zip(shown, legend_labels([item.get("metric", {}) for item in shown]), strict=True):
        points = {pd.to_datetime(float(t), unit="s", utc=True): float(v) for t, v in item.get("values", [])}
        columns[label] = pd.Series(points, dtype="float64")
    # NaN and ±Inf samples (a ratio over no traffic, a division by zero) are gaps, not points
    frame = pd.DataFrame(columns).sort_index().replace([math.inf, -math.inf], math.nan)
    if frame.empty or frame.isna().all().all():
        return None
    fig, ax = plt.subplots(figsize=(8, 3.2), dpi=100)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # numpy's overflow words before the ValueError
            return _draw(fig, ax, frame, title)
    except (ValueError, OverflowError) as exc:  # finite values no axis can span (±1e308)
        log.warning("chart skipped: its values cannot be drawn: %s", exc)
        return None
    finally:
        plt.close(fig)


def legend_labels(metrics: list[Mapping[str, str]]) -> list[str]:
    """Each series' legend: its labels but `__name__`, at most LEGEND_CHARS, one per series. A model
    name of two namespaces (Triton's model namespacing) reads `<namespace>::<model>` (../namespacing.py)
    and comes first: the repository paths ran the two past the cut, one legend, one line for both."""
    shared = shared_names(label_pairs(metrics))
    labels: list[str] = []
    for metric in metrics:
        model = metric.get(c.LABEL_MODEL, "")
        named = model_name(metric, shared)
        hidden = {"__name__", *(MODEL_KEY if named != model else ())}
        parts = [named] if named != model else []
        parts += [f"{k}={v}" for k, v in sorted(metric.items()) if k not in hidden]
        label = (",".join(parts) or "value")[:LEGEND_CHARS]
        while label in labels:  # still alike within the cut: told apart, never drawn as one
            label += "'"
        labels.append(label)
    return labels


def _draw(fig: Any, ax: Any, frame: Any, title: str) -> bytes:
    for column in frame.columns:
        # label values and the title (an alert's PromQL) as text, never mathtext (`$` escaped)
        ax.plot(frame.index.to_pydatetime(), frame[column].to_numpy(), linewidth=1.5, label=drawn(column))
    ax.set_title(drawn(title, 90), fontsize=10)
    ax.set_xlabel("UTC")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png")
    return out.getvalue()
