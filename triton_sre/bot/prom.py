"""Prometheus HTTP API reads for the bot (instant and range queries) and the optional chart PNG.

The chart needs pandas and matplotlib (runtime dependencies); should either fail to import, or
without ``--prometheus-url``, `chart_png` returns None and the bot posts no chart.
"""

from __future__ import annotations

import io
import logging
import math
import time
from typing import Any

import requests

log = logging.getLogger(__name__)

CHART_WINDOW_SECONDS = 3600
CHART_STEP_SECONDS = 30
MAX_SERIES = 8


class PromError(Exception):
    pass


class Prometheus:
    def __init__(self, url: str, timeout: float = 5.0) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.session = requests.Session()

    def _get(self, path: str, params: dict[str, Any]) -> Any:
        try:
            response = self.session.get(f"{self.url}{path}", params=params, timeout=self.timeout)
            data = response.json()
        except (requests.RequestException, ValueError) as exc:
            raise PromError(f"{path}: {type(exc).__name__}: {exc}") from exc
        if response.status_code != 200 or data.get("status") != "success":
            raise PromError(f"{path}: HTTP {response.status_code}: {data.get('error', '')}")
        return data["data"]

    def instant(self, expr: str) -> float | None:
        """The first sample of an instant query (None when the result is empty or not finite)."""
        data = self._get("/api/v1/query", {"query": expr})
        for item in data.get("result", []):
            value = float(item["value"][1])
            return value if math.isfinite(value) else None
        return None

    def vector(self, expr: str) -> list[tuple[dict[str, str], float]]:
        """Every (labels, value) of an instant query; non-finite values are left out."""
        data = self._get("/api/v1/query", {"query": expr})
        out = []
        for item in data.get("result", []):
            value = float(item["value"][1])
            if math.isfinite(value):
                out.append((dict(item.get("metric", {})), value))
        return out

    def range(
        self, expr: str, seconds: int = CHART_WINDOW_SECONDS, step: int = CHART_STEP_SECONDS
    ) -> list[Any]:
        end = time.time()
        data = self._get(
            "/api/v1/query_range", {"query": expr, "start": end - seconds, "end": end, "step": step}
        )
        return list(data.get("result", []))


def chart_png(series: list[Any], title: str) -> bytes | None:
    """A PNG line chart of range-query results (pandas frame -> matplotlib); None when empty or the
    optional chart libraries are missing."""
    if not series:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import pandas as pd
    except ImportError:
        log.info("chart skipped: pandas/matplotlib cannot be imported")
        return None
    columns = {}
    for item in series[:MAX_SERIES]:
        metric = item.get("metric", {})
        label = ",".join(f"{k}={v}" for k, v in sorted(metric.items()) if k != "__name__") or "value"
        points = {pd.to_datetime(float(t), unit="s", utc=True): float(v) for t, v in item.get("values", [])}
        columns[label[:60]] = pd.Series(points, dtype="float64")
    frame = pd.DataFrame(columns).sort_index()
    if frame.empty:
        return None
    fig, ax = plt.subplots(figsize=(8, 3.2), dpi=100)
    try:
        for column in frame.columns:
            ax.plot(frame.index.to_pydatetime(), frame[column].to_numpy(), linewidth=1.5, label=column)
        ax.set_title(title[:90], fontsize=10)
        ax.set_xlabel("UTC")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
        fig.tight_layout()
        out = io.BytesIO()
        fig.savefig(out, format="png")
        return out.getvalue()
    finally:
        plt.close(fig)
