"""PNG charts of the report (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

import io
import math

from triton_sre.mplconfig import drawn, use_writable_config_dir

use_writable_config_dir()  # before matplotlib's import reads $MPLCONFIGDIR

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

__all__ = ["CHARTS", "draw_all"]

CHARTS = {
    "cost_by_model": "Cost by model (busy vs idle share)",
    "cost_per_1k": "Cost per 1k inferences",
    "throughput": "Inferences per second",
    "time_split": "Where request time goes",
}
DPI = 100
MAX_MODELS = 40
"""Models drawn per chart (the rest are in the tables)."""
LABEL_CHARS = 40
"""A model name's characters drawn on a chart (7 inches wide): a longer one is cut (`…`). 48 wide
letters (`W` × 48) already left the time-split chart no room: `Tight layout not applied`."""


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=DPI)
    plt.close(fig)
    return buf.getvalue()


def _empty(fig: Figure, ax: plt.Axes, text: str) -> bytes:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="grey")
    ax.set_axis_off()
    return _png(fig)


def _label(model: object) -> str:
    """A model name as drawn (`mplconfig.drawn`: control characters as escapes, ``$`` as itself, cut
    past LABEL_CHARS: a 10,000-character name left the chart no room to draw)."""
    return drawn(model, LABEL_CHARS)


def _top(title: str, shown: int, of: int) -> str:
    return title if shown >= of else f"{title} (top {shown} of {of:,} models)"


def draw_all(table: pd.DataFrame, throughput: pd.DataFrame, currency: str | None) -> dict[str, bytes]:
    """The report's charts. Past `MAX_MODELS` models each chart shows the first `MAX_MODELS` of the
    table (its order: cost, then inferences) or the busiest in throughput, and its title says so:
    drawing every model was 42 of the report's 79 s at 200 models (tick labels laid out one by one),
    and 20,000 models make a PNG 900,000 pixels high that no one reads. Model names are drawn as
    `_label` gives them: escapes for control characters, ``$`` as itself."""
    unit = currency or "cost"
    charts: dict[str, bytes] = {}
    of = len(table)
    table = table.head(MAX_MODELS)
    served = len(throughput.columns)
    if served > MAX_MODELS:
        busiest = throughput.sum().sort_values(ascending=False, kind="stable").index[:MAX_MODELS]
        keep = set(busiest)
        throughput = throughput[[column for column in throughput.columns if column in keep]]
    models = [_label(model) for model in table["model"].tolist()]
    height = max(2.5, 0.45 * len(models) + 1.2)

    fig, ax = plt.subplots(figsize=(7, height))
    cost = table["cost"].fillna(0.0)
    idle = table["idle_cost"].fillna(0.0)
    if cost.sum() > 0:
        ax.barh(models, cost - idle, label="busy", color="#4c72b0")
        ax.barh(models, idle, left=cost - idle, label="idle share", color="#dd8452")
        ax.set_xlabel(unit)
        ax.invert_yaxis()
        ax.legend(loc="lower right")
        ax.set_title(_top(CHARTS["cost_by_model"], len(models), of))
        charts["cost_by_model"] = _png(fig)
    else:
        charts["cost_by_model"] = _empty(fig, ax, "no cost metrics (no pricing configured)")

    fig, ax = plt.subplots(figsize=(7, height))
    per_1k = table["cost_per_1k"]
    if per_1k.notna().any():
        ax.barh(models, per_1k.fillna(0.0), color="#55a868")
        ax.set_xlabel(f"{unit} per 1k inferences")
        ax.invert_yaxis()
        ax.set_title(_top(CHARTS["cost_per_1k"], len(models), of))
        charts["cost_per_1k"] = _png(fig)
    else:
        charts["cost_per_1k"] = _empty(fig, ax, "no cost per 1k inferences")

    # One legend entry per line: up to MAX_MODELS of them, in columns, and the chart as tall as they need
    # (40 entries in one column did not fit a 3.2-inch chart: matplotlib warned and cut the layout).
    series = len(throughput.columns)
    columns = 1 if series <= 8 else 2 if series <= 20 else 3
    fig, ax = plt.subplots(figsize=(7, max(3.2, 1.6 + 0.2 * math.ceil(series / columns))))
    if not throughput.empty:
        start = throughput.index.min()
        for model in throughput.columns:
            ax.plot(throughput.index - start, throughput[model], label=_label(model))
        ax.set_xlabel("seconds since the start of the range")
        ax.set_ylabel("inferences/s")
        ax.legend(fontsize="small", ncol=columns)
        ax.set_title(_top(CHARTS["throughput"], len(throughput.columns), served))
        charts["throughput"] = _png(fig)
    else:
        charts["throughput"] = _empty(fig, ax, "no inferences in the range")

    fig, ax = plt.subplots(figsize=(7, height))
    queue = table["queue_share"].fillna(0.0)
    compute = table["compute_share"].fillna(0.0)
    other = (1.0 - queue - compute).clip(lower=0.0)
    ax.barh(models, queue, label="queue", color="#c44e52")
    ax.barh(models, compute, left=queue, label="compute", color="#4c72b0")
    ax.barh(models, other, left=queue + compute, label="other", color="#bbbbbb")
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of request time")
    ax.invert_yaxis()
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=3, fontsize="small")
    ax.set_title(_top(CHARTS["time_split"], len(models), of))
    charts["time_split"] = _png(fig)
    return charts
