"""VictoriaMetrics and vmalert (Debian's victoria-metrics package) for the issue-24 tests: a
single-node store on 127.0.0.1 with its data under a temporary directory, series imported in the
Prometheus text format with timestamps, and vmalert replaying rule files over a past time range.
A missing binary fails the test (tests/binaries.py); every process started here is stopped here.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests
from binaries import binary, stop

from triton_sre import promql as pq
from triton_sre.stack.processes import free_port


class Victoria:
    def __init__(self, url: str) -> None:
        self.url = url

    def import_samples(self, lines: Sequence[str]) -> None:
        """Prometheus text lines `name{labels} value timestamp_ms`, then flush them to search."""
        body = "\n".join(lines) + "\n"
        response = requests.post(f"{self.url}/api/v1/import/prometheus", data=body.encode(), timeout=60)
        assert response.status_code == 204, response.text
        self.flush()

    def flush(self) -> None:
        requests.get(f"{self.url}/internal/force_flush", timeout=30).raise_for_status()
        requests.get(f"{self.url}/internal/resetRollupResultCache", timeout=30).raise_for_status()

    def query(self, expr: str, at: float) -> list[dict[str, Any]]:
        params = {"query": expr, "time": at, "nocache": "1"}
        response = requests.get(f"{self.url}/api/v1/query", params=params, timeout=30)
        body = response.json()
        assert response.status_code == 200 and body["status"] == "success", f"{expr}\n-> {body}"
        result: list[dict[str, Any]] = body["data"]["result"]
        return result


@contextmanager
def victoria_metrics(work: Path, *extra: str) -> Iterator[Victoria]:
    """A single-node VictoriaMetrics on a free loopback port; stopped on exit."""
    work.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = (work / "victoria-metrics.log").open("wb")
    proc = subprocess.Popen(
        [
            binary("victoria-metrics"),
            f"-storageDataPath={work / 'vm-data'}",
            f"-httpListenAddr=127.0.0.1:{port}",
            "-retentionPeriod=100y",
            "-search.latencyOffset=0s",
            "-search.disableCache",  # vmalert replay reads what it wrote a moment before
            "-loggerLevel=ERROR",
            *extra,
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if requests.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, (
                work / "victoria-metrics.log"
            ).read_text()
            time.sleep(0.2)
        yield Victoria(url)
    finally:
        stop(proc)
        log.close()


@contextmanager
def vmagent(work: Path, scrape_config: Mapping[str, Any], remote_write_url: str) -> Iterator[None]:
    """vmagent scraping as `scrape_config` (a Prometheus scrape configuration) and remote-writing every
    sample to `remote_write_url` (a store's /api/v1/write); stopped on exit."""
    work.mkdir(parents=True, exist_ok=True)
    config = work / "scrape.yaml"
    config.write_text(json.dumps(scrape_config))  # JSON is YAML
    log = (work / "vmagent.log").open("wb")
    proc = subprocess.Popen(
        [
            binary("vmagent"),
            f"-promscrape.config={config}",
            f"-remoteWrite.url={remote_write_url}",
            f"-remoteWrite.tmpDataPath={work / 'buffer'}",
            "-remoteWrite.flushInterval=200ms",
            f"-httpListenAddr=127.0.0.1:{free_port()}",
            "-loggerLevel=ERROR",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        time.sleep(0.2)
        assert proc.poll() is None, (work / "vmagent.log").read_text()
        yield
    finally:
        stop(proc)
        log.close()


def exposition(metric: str, labels: Mapping[str, str], points: Sequence[tuple[float, float]]) -> list[str]:
    """Import lines for one series: (unix seconds, value) points."""
    series = pq.selector(metric, pq.equal(labels.items()))
    return [f"{series} {value:.12g} {round(ts * 1000)}" for ts, value in points]


def replay(vm: Victoria, rule_files: Sequence[Path], start: float, end: float, work: Path) -> str:
    """vmalert's replay mode: every rule of `rule_files` evaluated at each interval in [start, end],
    reading from and writing (recorded series, ALERTS) to `vm`. Returns vmalert's output."""

    def iso(t: float) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))

    result = subprocess.run(
        [
            binary("vmalert"),
            *(f"-rule={f}" for f in rule_files),
            f"-datasource.url={vm.url}",
            f"-remoteWrite.url={vm.url}",
            f"-replay.timeFrom={iso(start)}",
            f"-replay.timeTo={iso(end)}",
            "-replay.disableProgressBar",
            "-replay.rulesDelay=2s",
            "-remoteWrite.flushInterval=100ms",
            "-evaluationInterval=1m",
            f"-httpListenAddr=127.0.0.1:{free_port()}",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=work,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    vm.flush()
    return result.stdout + result.stderr
