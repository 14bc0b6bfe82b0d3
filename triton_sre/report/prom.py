"""Prometheus range queries -> long pandas DataFrames (one row per sample); the HTTP client is shared."""

from __future__ import annotations

import math

import pandas as pd

from triton_sre.prom import PromError, Prometheus

__all__ = ["MAX_POINTS", "PromError", "PrometheusClient", "choose_step", "rate_window"]

MAX_POINTS = 2000
"""Samples per series a range query asks for (Prometheus refuses more than 11,000)."""
TIMEOUT_S = 30.0


def choose_step(start: float, end: float, min_step: float = 1.0) -> float:
    """The query resolution: at most `MAX_POINTS` samples, never finer than ``min_step`` seconds."""
    return max(min_step, math.ceil((end - start) / MAX_POINTS))


def rate_window(step: float, scrape_interval: float) -> float:
    """Seconds of a rate() window at `step`, as Grafana's $__rate_interval: at least four scrape
    intervals (a window holding one or two samples makes a rate flicker between 0 and double)."""
    return max(step + scrape_interval, 4 * scrape_interval)


class PrometheusClient(Prometheus):
    """The shared client (triton_sre/prom.py) with the report's timeout and range queries as frames."""

    def __init__(self, url: str, timeout: float = TIMEOUT_S) -> None:
        super().__init__(url, timeout)

    def frame_range(self, expr: str, start: float, end: float, step: float) -> pd.DataFrame:
        """Columns: every label of the series, then ``timestamp`` (s) and ``value`` (float)."""
        rows: list[dict[str, object]] = []
        for series in self.query_range(expr, start, end, step):
            labels = series["metric"]
            for ts, value in series["values"]:
                rows.append({**labels, "timestamp": float(ts), "value": float(value)})
        return pd.DataFrame(rows)
