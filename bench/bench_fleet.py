"""Benchmark: the generated rules and dashboards on a fleet, in a real Prometheus.

A simulated fleet of Triton-shaped endpoints (default 20 × 100 models × 2 versions; `/metrics`
from `tests/synthetic.py`, counters growing with time, summaries on; statistics, index
and configs as in `bench_poll.py`), one real `triton-sre export` process per endpoint, and one
real Prometheus (Debian's binary) scraping all of them every `--scrape` seconds with the rules
`triton-sre generate` renders from the default spec. After `--duration` seconds it reports:

- each rule group's evaluation time (Prometheus's own `prometheus_rule_group_last_duration_seconds`,
  the worst over the run) against its interval (target: at most 10 %), and the worst and the
  median after `--warmup` seconds (the first evaluations also create every recorded series);
- each rule's worst evaluation time (the rules API), to show what a slow group is made of;
- the series the recording rules add per model version;
- the time of every dashboard query, as Grafana would send it (range query over the last hour,
  the fleet's whole model list selected): target at most 1 s each.

    python bench/bench_fleet.py [--endpoints 20] [--models 100] [--versions 2] [--duration 420] [--victoria]

`--victoria` (issue 24) also runs VictoriaMetrics (scraping the same targets) and vmalert (the same
rule files) side by side over the same run, and reports their group evaluation times (vmalert's
`vmalert_iteration_duration_seconds`), the same dashboard queries against VictoriaMetrics, and the
resident memory of each engine's processes.

Everything listens on 127.0.0.1 and stops at the end.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import requests
import yaml
from bench_poll import FakeTritonHandler, index_payload, stats_payload
from synthetic import triton_metrics_payload  # bench_poll put tests/ on sys.path

from triton_sre import conventions as c
from triton_sre.generate import dashboards
from triton_sre.generate.command import render_all
from triton_sre.slo import default_spec
from triton_sre.stack.processes import free_port

GROWTH_PER_SECOND = 1 / 3600  # counters grow by their starting value every hour


class GrowingPayload:
    """A synthetic `/metrics` body whose counters grow linearly with time (summaries' quantiles fixed)."""

    def __init__(self, text: str) -> None:
        counters: set[str] = set()
        self.lines: list[tuple[str, float, bool]] = []
        for line in text.splitlines():
            if line.startswith("# TYPE "):
                _, _, name, typ = line.split(" ", 3)
                if typ == "counter":
                    counters.add(name)
                elif typ == "summary":
                    counters.update((f"{name}_count", f"{name}_sum"))
                self.lines.append((line, math.nan, False))
            elif line.startswith("#") or not line:
                self.lines.append((line, math.nan, False))
            else:
                prefix, value = line.rsplit(" ", 1)
                name = prefix.split("{", 1)[0]
                self.lines.append((prefix, float(value) if value != "Nan" else math.nan, name in counters))

    def render(self, elapsed: float) -> bytes:
        factor = 1 + elapsed * GROWTH_PER_SECOND
        out = []
        for prefix, value, grows in self.lines:
            if math.isnan(value):
                out.append(prefix if not prefix or prefix[0] == "#" else f"{prefix} Nan")
            elif grows:
                out.append(f"{prefix} {int(value * factor)}")
            else:
                out.append(f"{prefix} {value:g}")
        return ("\n".join(out) + "\n").encode()


def serve_fleet(endpoints: int, models: int, versions: int, ports_out: multiprocessing.Queue) -> None:
    """One process, one loopback HTTP server per simulated Triton."""
    started = time.monotonic()
    index = index_payload(models, versions)
    servers = []
    for e in range(endpoints):
        payload = GrowingPayload(triton_metrics_payload(models, versions, seed=1000 + e))

        class Handler(FakeTritonHandler):
            metrics = payload
            index_body = index

            def metrics_body(self) -> bytes:
                return self.metrics.render(time.monotonic() - started)

            def stats_body(self) -> bytes:
                return stats_payload(models, versions, int((time.monotonic() - started) // 15))

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        servers.append(httpd)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
    ports_out.put([s.server_address[1] for s in servers])
    while True:
        time.sleep(3600)


def wait_http(url: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if requests.get(url, timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.5)
    raise SystemExit(f"bench_fleet: {url} did not answer within {timeout:.0f} s")


def query(prom: str, expr: str) -> list[dict[str, Any]]:
    body = requests.get(f"{prom}/api/v1/query", params={"query": expr}, timeout=60).json()
    if body.get("status") != "success":
        raise SystemExit(f"bench_fleet: query failed: {expr}\n{body}")
    result: list[dict[str, Any]] = body["data"]["result"]
    return result


def track_rules(prom: str, worst: dict[tuple[str, str], float]) -> None:
    """Keep each rule's worst `evaluationTime` (Prometheus's rules API), keyed by group and rule
    (a rule is its record/alert name plus its labels: the stage rules share one name)."""
    groups = requests.get(f"{prom}/api/v1/rules", timeout=30).json()["data"]["groups"]
    for group in groups:
        for rule in group["rules"]:
            labels = ",".join(f"{k}={v}" for k, v in sorted(rule.get("labels", {}).items()) if k != "slo")
            key = (group["name"], rule["name"] + (f"{{{labels}}}" if labels else ""))
            worst[key] = max(worst.get(key, 0.0), float(rule.get("evaluationTime", 0.0)))


def rss_mb(pid: int) -> float:
    """Resident memory of a process (Linux /proc), MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def start_victoria(
    work: Path, scrape: dict[str, Any], rule_files: list[Path], interval: str
) -> tuple[str, list]:
    """VictoriaMetrics scraping `scrape`'s targets and vmalert evaluating `rule_files` every
    `interval` against it (alerts notified to a closed loopback port: only evaluation is measured)."""
    (work / "vm-scrape.yml").write_text(yaml.safe_dump(scrape))
    vm_port, vmalert_port = free_port(), free_port()
    vm = f"http://127.0.0.1:{vm_port}"
    procs = [
        subprocess.Popen(
            ["victoria-metrics", f"-storageDataPath={work / 'vm-data'}",
             f"-httpListenAddr=127.0.0.1:{vm_port}", f"-promscrape.config={work / 'vm-scrape.yml'}",
             "-loggerLevel=ERROR"],
            stdout=(work / "vm.log").open("wb"), stderr=subprocess.STDOUT,
        )
    ]  # fmt: skip
    try:
        wait_http(f"{vm}/health", 60)
    except SystemExit:
        procs[0].kill()
        raise
    procs.append(
        subprocess.Popen(
            ["vmalert", *(f"-rule={f}" for f in rule_files), f"-datasource.url={vm}",
             f"-remoteWrite.url={vm}", f"-notifier.url=http://127.0.0.1:{free_port()}",
             f"-evaluationInterval={interval}",
             f"-httpListenAddr=127.0.0.1:{vmalert_port}", "-loggerLevel=ERROR"],
            stdout=(work / "vmalert.log").open("wb"), stderr=subprocess.STDOUT,
        )
    )  # fmt: skip
    try:
        wait_http(f"http://127.0.0.1:{vmalert_port}/health", 60)
    except SystemExit:
        for proc in procs:
            proc.kill()
        raise
    return vm, procs, vmalert_port


def vmalert_groups(port: int) -> dict[str, tuple[float, float]]:
    """Group -> (average, worst quantile) iteration seconds, from vmalert's own metrics."""
    text = requests.get(f"http://127.0.0.1:{port}/metrics", timeout=30).text
    sums: dict[str, float] = {}
    counts: dict[str, float] = {}
    worst: dict[str, float] = {}
    for line in text.splitlines():
        if not line.startswith("vmalert_iteration_duration_seconds"):
            continue
        name_labels, value = line.rsplit(" ", 1)
        group = name_labels.split('group="', 1)[-1].split('"', 1)[0]
        if name_labels.startswith("vmalert_iteration_duration_seconds_sum"):
            sums[group] = float(value)
        elif name_labels.startswith("vmalert_iteration_duration_seconds_count"):
            counts[group] = float(value)
        elif 'quantile="' in name_labels and value != "NaN":
            worst[group] = max(worst.get(group, 0.0), float(value))
    return {g: (sums[g] / counts[g] if counts.get(g) else math.nan, worst.get(g, math.nan)) for g in sums}


def time_dashboards(url: str, spec: Any) -> list[tuple[float, str, str, int]]:
    """Every dashboard query as a range query over the last hour (step 15 s), slowest first."""
    end = time.time()
    timings = []
    for board, title, expr in dashboard_queries(spec):
        started = time.perf_counter()
        body = requests.get(
            f"{url}/api/v1/query_range",
            params={"query": expr, "start": end - 3600, "end": end, "step": "15"},
            timeout=120,
        ).json()
        took = time.perf_counter() - started
        if body.get("status") != "success":
            raise SystemExit(f"bench_fleet: dashboard query failed ({board} / {title}): {body}")
        timings.append((took, board, title, len(body["data"]["result"])))
    return sorted(timings, reverse=True)


def dashboard_queries(spec: Any) -> list[tuple[str, str, str]]:
    """(dashboard, panel title, expression) with the variables as a fleet-wide view sets them."""
    substitutions = {
        "$__rate_interval": "1m",  # 4 × the 15 s scrape interval, as Grafana computes it
        "$job": c.DEFAULT_TRITON_JOB,
        "$instance": ".*",
        "$slo": ".*",
    }
    out = []
    for name, board in dashboards.dashboards(spec).items():
        # the per-model dashboard shows one model; the others every model of the fleet
        model = "model_0000" if name == "triton-model.json" else ".*"
        for panel, target in dashboards.iter_targets(board):
            expr = target["expr"]
            for var, value in {**substitutions, "$model": model}.items():
                expr = expr.replace(var, value)
            out.append((name, panel["title"], expr))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoints", type=int, default=20)
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--versions", type=int, default=2)
    parser.add_argument("--scrape", type=float, default=15.0, help="scrape and evaluation interval, s")
    parser.add_argument("--duration", type=float, default=420.0, help="seconds of scraping before measuring")
    parser.add_argument(
        "--warmup", type=float, default=60.0, help="seconds after which evaluations count as steady state"
    )
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument(
        "--victoria", action="store_true", help="also VictoriaMetrics + vmalert, side by side"
    )
    args = parser.parse_args()
    prometheus = shutil.which("prometheus")
    if not prometheus:
        raise SystemExit("bench_fleet: needs Debian's prometheus (apt-get install prometheus)")

    work = Path(tempfile.mkdtemp(prefix="bench-fleet-"))
    procs: list[subprocess.Popen[bytes]] = []
    ports_q: multiprocessing.Queue = multiprocessing.Queue()
    fleet = multiprocessing.Process(
        target=serve_fleet, args=(args.endpoints, args.models, args.versions, ports_q), daemon=True
    )
    fleet.start()
    try:
        triton_ports: list[int] = ports_q.get(timeout=300)
        exporter_targets = []
        for port in triton_ports:
            listen = f"127.0.0.1:{free_port()}"
            exporter_targets.append(listen)
            log = (work / f"exporter-{port}.log").open("wb")
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable, "-m", "triton_sre.cli", "export",
                        f"--triton-url=http://127.0.0.1:{port}",
                        f"--metrics-url=http://127.0.0.1:{port}/metrics",
                        f"--listen={listen}", f"--interval={args.scrape:g}", "--window=60",
                    ],
                    stdout=log, stderr=subprocess.STDOUT,
                )
            )  # fmt: skip
        spec = default_spec()
        for rel, content in render_all(spec).items():
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            (work / rel).write_text(content)
        interval = f"{args.scrape:g}s"
        prom_port = free_port()
        prom = f"http://127.0.0.1:{prom_port}"
        config = {
            "global": {
                "scrape_interval": interval,
                "evaluation_interval": interval,
                "scrape_timeout": interval,
            },
            "rule_files": [str(p) for p in sorted((work / "alerts").glob("*.yaml"))],
            "scrape_configs": [
                {
                    "job_name": spec.triton_job,
                    "static_configs": [{"targets": [f"127.0.0.1:{p}" for p in triton_ports]}],
                },
                {"job_name": spec.exporter_job, "static_configs": [{"targets": exporter_targets}]},
                {"job_name": "prometheus", "static_configs": [{"targets": [f"127.0.0.1:{prom_port}"]}]},
            ],
        }
        (work / "prometheus.yml").write_text(yaml.safe_dump(config))
        procs.append(
            subprocess.Popen(
                [
                    prometheus, f"--config.file={work / 'prometheus.yml'}",
                    f"--storage.tsdb.path={work / 'data'}", f"--web.listen-address=127.0.0.1:{prom_port}",
                    "--log.level=warn",
                ],
                stdout=(work / "prometheus.log").open("wb"), stderr=subprocess.STDOUT,
            )
        )  # fmt: skip
        wait_http(f"{prom}/-/ready", 60)
        prom_proc = procs[-1]
        if args.victoria:
            scrape_global = {k: v for k, v in config["global"].items() if k != "evaluation_interval"}
            vm_scrape = {"global": scrape_global, "scrape_configs": config["scrape_configs"][:2]}
            vm, vm_procs, vmalert_port = start_victoria(
                work, vm_scrape, [Path(f) for f in config["rule_files"]], interval
            )
            procs.extend(vm_procs)
        model_versions = args.endpoints * args.models * args.versions
        print(
            f"fleet: {args.endpoints} endpoints x {args.models} models x {args.versions} versions "
            f"= {model_versions} model versions, {args.endpoints} exporters, scrape/eval every {interval}",
            flush=True,
        )
        worst: dict[str, float] = {}
        steady: dict[str, list[float]] = {}
        worst_rule: dict[tuple[str, str], float] = {}
        started = time.monotonic()
        deadline = started + args.duration
        while time.monotonic() < deadline:
            time.sleep(min(args.scrape, max(0.0, deadline - time.monotonic())))
            warm = time.monotonic() - started >= args.warmup
            for r in query(prom, "prometheus_rule_group_last_duration_seconds"):
                group = r["metric"]["rule_group"].split(";", 1)[-1]
                worst[group] = max(worst.get(group, 0.0), float(r["value"][1]))
                if warm:
                    steady.setdefault(group, []).append(float(r["value"][1]))
            track_rules(prom, worst_rule)
            remaining = max(0, int(deadline - time.monotonic()))
            print(f"  ... {remaining:4d} s left; worst group evaluation so far "
                  f"{max(worst.values(), default=0) * 1000:.0f} ms", flush=True)  # fmt: skip

        up = query(prom, "sum by (job) (up)")
        print("targets up: " + ", ".join(f"{r['metric']['job']}={float(r['value'][1]):.0f}" for r in up))
        print(f"\nrule groups (evaluation time over {args.duration:.0f} s; target <= 10 % of {interval}; "
              f"steady = after {args.warmup:.0f} s):")  # fmt: skip
        print(f"  {'group':<40} {'rules':>5} {'worst':>10} {'share':>7} {'steady worst':>13} {'median':>10}")
        groups = requests.get(f"{prom}/api/v1/rules", timeout=30).json()["data"]["groups"]
        for group in groups:
            seconds = worst.get(group["name"], float("nan"))
            share = seconds / float(group["interval"])
            later = sorted(steady.get(group["name"], [])) or [float("nan")]
            steady_share = later[-1] / float(group["interval"])
            flag = "" if steady_share <= 0.10 else "  OVER"
            rules_n = len(group["rules"])
            last, median = later[-1], later[len(later) // 2]
            print(f"  {group['name']:<40} {rules_n:>5} {seconds * 1000:>8.1f}ms {share:>6.1%} "
                  f"{last * 1000:>8.1f}ms {steady_share:>4.0%} {median * 1000:>8.1f}ms{flag}")  # fmt: skip
        print("\nslowest rules (worst evaluation over the run; what each group's time is made of):")
        for (group_name, rule_name), seconds in sorted(worst_rule.items(), key=lambda kv: -kv[1])[:12]:
            print(f"  {seconds * 1000:8.1f} ms  {group_name:<36} {rule_name}")
        recorded = query(prom, 'count by (__name__) ({__name__=~".+:.+"})')
        total = sum(float(r["value"][1]) for r in recorded)
        print(
            f"\nrecording-rule series: {total:.0f} in {len(recorded)} rules = "
            f"{total / model_versions:.1f} per model version"
        )
        top = sorted(recorded, key=lambda r: -float(r["value"][1]))[:5]
        for r in top:
            print(f"  {r['metric']['__name__']:<70} {float(r['value'][1]):>7.0f}")

        print("\ndashboard queries (range query over the last hour, step 15 s; target <= 1 s):")
        timings = time_dashboards(prom, spec)
        over = [t for t in timings if t[0] > 1.0]
        print(f"  {len(timings)} queries; slowest {timings[0][0] * 1000:.0f} ms, "
              f"median {timings[len(timings) // 2][0] * 1000:.0f} ms, over 1 s: {len(over)}")  # fmt: skip
        for took, board, title, series in timings[:8]:
            print(f"  {took * 1000:8.0f} ms  {series:5d} series  {board} / {title}")
        print(f"\nmemory: prometheus {rss_mb(prom_proc.pid):.0f} MB RSS")
        if args.victoria:
            print(f"\nVictoriaMetrics + vmalert, same fleet, rules and interval {interval}:")
            print(f"  {'group':<40} {'average':>10} {'worst q':>10} {'share':>7}")
            for group, (average, worst_q) in sorted(vmalert_groups(vmalert_port).items()):
                share = worst_q / args.scrape
                print(f"  {group:<40} {average * 1000:>8.1f}ms {worst_q * 1000:>8.1f}ms {share:>6.1%}")
            vm_timings = time_dashboards(vm, spec)
            print(f"  dashboard queries: slowest {vm_timings[0][0] * 1000:.0f} ms, "
                  f"median {vm_timings[len(vm_timings) // 2][0] * 1000:.0f} ms, "
                  f"over 1 s: {len([t for t in vm_timings if t[0] > 1.0])}")  # fmt: skip
            for took, board, title, series in vm_timings[:5]:
                print(f"  {took * 1000:8.0f} ms  {series:5d} series  {board} / {title}")
            vm_mb, vmalert_mb = rss_mb(procs[-2].pid), rss_mb(procs[-1].pid)
            print(f"  memory: victoria-metrics {vm_mb:.0f} MB + vmalert {vmalert_mb:.0f} MB RSS")
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        fleet.terminate()
        if args.keep:
            print(f"work directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
