"""Prometheus HTTP API range queries -> long pandas DataFrames (one row per sample)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
import requests

__all__ = ["MAX_POINTS", "PromError", "PrometheusClient", "choose_step"]

MAX_POINTS = 2000
"""Samples per series a range query asks for (Prometheus refuses more than 11,000)."""
TIMEOUT_S = 30.0


class PromError(RuntimeError):
    """Prometheus could not be reached or refused a query."""


def choose_step(start: float, end: float, min_step: float = 1.0) -> float:
    """The query resolution: at most `MAX_POINTS` samples, never finer than ``min_step`` seconds."""
    return max(min_step, math.ceil((end - start) / MAX_POINTS))


@dataclass
class PrometheusClient:
    url: str
    timeout: float = TIMEOUT_S

    def query_range(self, expr: str, start: float, end: float, step: float) -> pd.DataFrame:
        """Columns: every label of the series, then ``timestamp`` (s) and ``value`` (float)."""
        try:
            response = requests.get(
                f"{self.url.rstrip('/')}/api/v1/query_range",
                params={"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step:g}"},
                timeout=self.timeout,
            )
        except requests.RequestException as exc:
            raise PromError(f"cannot reach Prometheus at {self.url}: {exc}") from None
        try:
            body = response.json()
        except ValueError:
            raise PromError(f"{self.url}: HTTP {response.status_code}, not a Prometheus API answer") from None
        if response.status_code != 200 or body.get("status") != "success":
            raise PromError(f"query {expr!r}: {body.get('error') or response.status_code}")
        rows: list[dict[str, object]] = []
        for series in body["data"]["result"]:
            labels = series["metric"]
            for ts, value in series["values"]:
                rows.append({**labels, "timestamp": float(ts), "value": float(value)})
        return pd.DataFrame(rows)
