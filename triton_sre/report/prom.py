"""Prometheus HTTP API range queries -> long pandas DataFrames (one row per sample)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
import requests
import yaml

__all__ = ["MAX_POINTS", "PromError", "PrometheusClient", "choose_step", "rate_window"]

MAX_POINTS = 2000
"""Samples per series a range query asks for (Prometheus refuses more than 11,000)."""
TIMEOUT_S = 30.0


class PromError(RuntimeError):
    """Prometheus could not be reached or refused a query."""


def choose_step(start: float, end: float, min_step: float = 1.0) -> float:
    """The query resolution: at most `MAX_POINTS` samples, never finer than ``min_step`` seconds."""
    return max(min_step, math.ceil((end - start) / MAX_POINTS))


def rate_window(step: float, scrape_interval: float) -> float:
    """Seconds of a rate() window at `step`, as Grafana's $__rate_interval: at least four scrape
    intervals (a window holding one or two samples makes a rate flicker between 0 and double)."""
    return max(step + scrape_interval, 4 * scrape_interval)


@dataclass
class PrometheusClient:
    url: str
    timeout: float = TIMEOUT_S

    def scrape_interval(self, job: str) -> float | None:
        """Seconds between scrapes of `job` (else the global interval) from Prometheus' loaded
        configuration (/api/v1/status/config); None when Prometheus does not say."""
        from triton_sre.generate.slo import SpecError, parse_duration

        try:
            response = requests.get(f"{self.url.rstrip('/')}/api/v1/status/config", timeout=self.timeout)
            config = yaml.safe_load(response.json()["data"]["yaml"])
        except (requests.RequestException, ValueError, KeyError, TypeError, yaml.YAMLError):
            return None
        if not isinstance(config, dict):
            return None
        interval = (config.get("global") or {}).get("scrape_interval", "1m")
        for scrape in config.get("scrape_configs") or []:
            if isinstance(scrape, dict) and scrape.get("job_name") == job and scrape.get("scrape_interval"):
                interval = scrape["scrape_interval"]
        try:
            return parse_duration(str(interval), "scrape_interval")
        except SpecError:
            return None

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
