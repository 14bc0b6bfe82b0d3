"""One real Prometheus (Debian's) for the test session, scraping the shared real Triton and an
in-process exporter with the generated rules loaded, after mixed traffic (streamed LLM requests
included) until every model has answered enough requests for the checks.

Registered in conftest.py, so every module using the `live` fixture shares the one instance.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, Any

import pytest
import requests
import yaml
from binaries import binary, stop

from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.demo import LLM_TRTLLM, LLM_VLLM, SLOW_MODEL, TAIL_MODEL, TEXT_ECHO, VECTOR_SCALE
from triton_sre.demo.traffic import TrafficDriver
from triton_sre.exporter.service import Exporter, ExporterServer
from triton_sre.generate.command import render_all
from triton_sre.pricing import Pricing
from triton_sre.slo import default_spec
from triton_sre.stack.local_triton import LocalTriton
from triton_sre.stack.processes import free_port


class Prom:
    def __init__(self, url: str) -> None:
        self.url = url

    def query(self, expr: str, at: float | None = None) -> list[dict[str, Any]]:
        params: dict[str, Any] = {"query": expr}
        if at is not None:  # evaluate at that time (later tests may have sent other traffic since)
            params["time"] = at
        response = requests.get(f"{self.url}/api/v1/query", params=params, timeout=10)
        body = response.json()
        assert response.status_code == 200 and body["status"] == "success", f"{expr}\n-> {body}"
        result: list[dict[str, Any]] = body["data"]["result"]
        return result

    def wait_for(self, expr: str, timeout: float = 30.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while True:
            result = self.query(expr)
            if result or time.monotonic() > deadline:
                return result
            time.sleep(0.5)


def serve_text(body: Callable[[], str]) -> ThreadingHTTPServer:
    """A loopback HTTP server answering every GET with `body()` as Prometheus text (a scrape
    target for a real Prometheus); `shutdown()` it when done."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            data = body().encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def start_prometheus(
    work: Path, config: dict[str, Any], port: int, *extra: str
) -> tuple[subprocess.Popen, IO[bytes]]:
    """Debian's Prometheus on 127.0.0.1:`port` with `config`, data and log under `work` (`extra`:
    more flags, e.g. --web.enable-remote-write-receiver)."""
    (work / "prometheus.yml").write_text(yaml.safe_dump(config))
    log = (work / "prometheus.log").open("wb")
    proc = subprocess.Popen(
        [
            binary("prometheus"),
            f"--config.file={work / 'prometheus.yml'}",
            f"--storage.tsdb.path={work / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--log.level=warn",
            *extra,
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    return proc, log


def wait_ready(proc: subprocess.Popen, work: Path, port: int) -> Prom:
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            if requests.get(f"{url}/-/ready", timeout=1).status_code == 200:
                return Prom(url)
        except requests.RequestException:
            pass
        assert proc.poll() is None and time.monotonic() < deadline, (work / "prometheus.log").read_text()
        time.sleep(0.2)


@contextlib.contextmanager
def private_prometheus(
    work: Path, spec: Any, triton: Any, *, rules: bool = False, rule_files: Sequence[Path] = ()
) -> Iterator[tuple[Prom, ExporterServer]]:
    """A private Prometheus scraping `triton`'s metrics port and an exporter of it (started here, the
    live tests' settings) every second, both stopped on the way out (the report's real-Triton tests);
    with `rules`, `spec`'s generated rules loaded (the dashboards' panels read the recording rules), and
    `rule_files` too, evaluated every second."""
    exporter_port, port = free_port(), free_port()
    loaded: list[str] = []
    if rules:
        for rel, content in render_all(spec).items():
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            (work / rel).write_text(content)
        loaded = [str(p) for p in sorted((work / "alerts").glob("*.yaml"))]
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "900ms"},
        "rule_files": [*loaded, *(str(f) for f in rule_files)],
        "scrape_configs": [
            {
                "job_name": spec.triton_job,
                "static_configs": [{"targets": [triton.metrics_url.split("//", 1)[1].split("/", 1)[0]]}],
            },
            {"job_name": spec.exporter_job, "static_configs": [{"targets": [f"127.0.0.1:{exporter_port}"]}]},
        ],
    }
    proc, log = start_prometheus(work, config, port)
    exporter: ExporterServer | None = None
    try:
        prom = wait_ready(proc, work, port)
        exporter = ExporterServer(Exporter(exporter_settings(triton)), "127.0.0.1", exporter_port).start()
        yield prom, exporter
    finally:
        stop_prometheus(proc, log)
        if exporter is not None:
            exporter.stop()


def scraped_after(prom: Prom, job: str, at: float, timeout: float = 30.0) -> None:
    """Until Prometheus holds a scrape of `job` taken after `at`."""
    deadline = time.monotonic() + timeout
    while not prom.query(f'timestamp(up{{job="{job}"}}) > {at}'):
        assert time.monotonic() < deadline, f"no scrape of {job} after {at}"
        time.sleep(0.2)


def stop_prometheus(proc: subprocess.Popen, log: IO[bytes]) -> None:
    stop(proc)
    log.close()


# What the checks downstream need of the mixed traffic: every model answered and seen by the rules,
# a few injected failures, and enough tail_model requests (1 in 20 slow) for its p99 to be a slow one.
MIN_ANSWERED = 30
MIN_FAILED = 5
MIN_TAIL_ANSWERED = 150


def wait_for_traffic(driver: TrafficDriver, prom: Prom, triton_job: str, timeout: float = 55.0) -> None:
    """Until the traffic is enough for the checks (above) and Prometheus' request-rate rule has a
    series for every model; at most `timeout` (the driver stops by itself at 60 s)."""
    deadline = time.monotonic() + timeout
    rule = f'{c.rec_requests(c.REC_LEVEL_MODEL)}{{job="{triton_job}"}} > 0'
    while time.monotonic() < deadline:
        results = driver.results()
        answered = all(r.total >= MIN_ANSWERED for r in results.values())
        failed = sum(r.failed for r in results.values()) >= MIN_FAILED
        tail = results[TAIL_MODEL].ok >= MIN_TAIL_ANSWERED
        if answered and failed and tail:
            seen = {r["metric"].get(c.LABEL_MODEL) for r in prom.query(rule)}
            if seen >= set(results):
                return
        time.sleep(0.5)


def wait_scraped_and_evaluated_after(
    prom: Prom, stopped: float, triton_job: str, timeout: float = 30.0
) -> None:
    """Until Prometheus has scraped the exporter's poll after `stopped`, scraped Triton, then
    evaluated the rules on those scrapes: the last traffic is in every rule's samples."""
    deadline = time.monotonic() + timeout
    scraped = f'{c.M_LAST_SUCCESS} > {stopped} and on() (timestamp(up{{job="{triton_job}"}}) > {stopped})'
    while not prom.query(scraped):
        assert time.monotonic() < deadline, "no scrape after the traffic stopped"
        time.sleep(0.2)
    after = time.time()
    evaluated = f"timestamp({c.rec_requests(c.REC_LEVEL_MODEL)}) > {after}"
    while not prom.query(evaluated):
        assert time.monotonic() < deadline, "no rule evaluation after the last scrape"
        time.sleep(0.2)


def exporter_settings(triton: LocalTriton) -> ExporterSettings:
    """The exporter of the live tests: 1 s polls of `triton`, a 5-minute window, a priced 2-slot node."""
    return ExporterSettings(
        triton_url=triton.http_url,
        metrics_url=triton.metrics_url,
        interval=1.0,
        window=300.0,
        pricing=Pricing(currency="USD", node_hour=0.36, cpu_execution_slots=2),
    )


@pytest.fixture(scope="session")
def live(triton: LocalTriton, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Prometheus + exporter + mixed traffic (with backend failures) on the shared Triton."""
    work = tmp_path_factory.mktemp("prometheus")
    spec = default_spec()
    for rel, content in render_all(spec).items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(content)
    settings = exporter_settings(triton)
    # The exporter starts once Prometheus is up (below): its window then begins with Prometheus' first
    # scrape of it, so the report over the scraped range and the exporter cover the same span (a cold
    # Prometheus start-up of several seconds otherwise lands in the exporter's window only).
    exporter_port = free_port()
    port = free_port()
    triton_target = triton.metrics_url.split("//", 1)[1].split("/", 1)[0]
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "900ms"},
        "rule_files": [str(p) for p in sorted((work / "alerts").glob("*.yaml"))],
        "scrape_configs": [
            {"job_name": spec.triton_job, "static_configs": [{"targets": [triton_target]}]},
            {
                "job_name": spec.exporter_job,
                "static_configs": [{"targets": [f"127.0.0.1:{exporter_port}"]}],
            },
        ],
    }
    proc, log = start_prometheus(work, config, port)
    driver = TrafficDriver(
        triton.http_url,
        {VECTOR_SCALE: 4, SLOW_MODEL: 2, TEXT_ECHO: 1, TAIL_MODEL: 1, LLM_VLLM: 2, LLM_TRTLLM: 2},
        error_fraction=0.05,
        max_duration_s=60,
    )
    exporter: ExporterServer | None = None
    try:
        prom = wait_ready(proc, work, port)
        exporter = ExporterServer(Exporter(settings), "127.0.0.1", exporter_port).start()
        assert prom.wait_for(f'up{{job="{spec.exporter_job}"}} == 1'), "exporter not scraped"
        assert prom.wait_for(f'up{{job="{spec.triton_job}"}} == 1'), "Triton not scraped"
        driver.start()
        wait_for_traffic(driver, prom, spec.triton_job)
        driver.stop()
        stopped = time.time()
        exporter.exporter.poll_once()
        wait_scraped_and_evaluated_after(prom, stopped, spec.triton_job)
        settled = time.time()  # later tests may send more traffic: compare windows ending here
        derivation = exporter.exporter.derivation  # the exporter's view at `settled` (its window moves on)
        yield {
            "prom": prom,
            "exporter": exporter,
            "work": work,
            "spec": spec,
            "triton": triton,
            "settled": settled,
            "derivation": derivation,
        }
    finally:
        driver.stop()
        stop_prometheus(proc, log)
        if exporter is not None:
            exporter.stop()
