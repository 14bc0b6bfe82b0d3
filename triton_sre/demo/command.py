"""`triton-sre demo`: the whole local stack on the sample models, with traffic.

It brings up what `triton-sre stack up` brings up — the exporter first, as a sidecar, then the real
Triton, which loads every model through model control once the exporter polls it (so the load
times are measured, see docs/load-times.md), Prometheus with the generated rules, Alertmanager,
the bot and its Slack stand-in — drives concurrent traffic, back to back for as long as it runs, so
batching and queueing happen, prints where to look and, every few seconds, what the exporter
derived (read from its own /metrics, as any client would): batching ratio, where request time
goes, cost per 1k inferences, and the broken models with their runbook ids. Ctrl-C or
`--duration` stops everything it started.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

import requests

from triton_sre import conventions as c
from triton_sre import httpclient
from triton_sre.checks import path_arg
from triton_sre.config import interval_arg
from triton_sre.durations import seconds_arg
from triton_sre.files import make_dirs
from triton_sre.shutdown import stop_on_signals

# An example price so the demo shows cost figures; real deployments set their own in the config.
DEMO_NODE_HOUR_USD = 0.36


def add_demo_parser(commands: Any, epilog: str) -> None:
    demo = commands.add_parser(
        "demo",
        help="run the local stack on sample models with traffic (real Triton, exporter, Prometheus, ...)",
        description=(
            "Start the local stack (the real Triton server from the nvidia-pytriton wheel on the sample "
            "model repository, broken models included; the exporter; Prometheus with the generated rules; "
            "Alertmanager; the Slack bot and its stand-in), drive concurrent traffic so batching and "
            "queueing happen, and print what to look at. Runs until Ctrl-C or --duration, then stops "
            "everything it started."
        ),
        epilog=epilog,
    )
    demo.add_argument(
        "--duration",
        type=seconds_arg,
        default=None,
        help="stop after this many seconds (default: until Ctrl-C)",
    )
    demo.add_argument(
        "--model-repository",
        type=path_arg,
        default=None,
        help="model repository (default: the bundled sample)",
    )
    demo.add_argument(
        "--workdir", type=path_arg, default=None, help="where configs, logs and data go (default: a temp dir)"
    )
    demo.add_argument(
        "--interval",
        type=interval_arg,
        default=2.0,
        help="poll, scrape and rule-evaluation interval (default 2)",
    )
    demo.add_argument(
        "--report-every", type=seconds_arg, default=10.0, help="seconds between status reports (default 10)"
    )
    demo.add_argument(
        "--format", choices=["text", "json"], default="text", help="output format (default text)"
    )
    demo.set_defaults(handler=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    from triton_sre.demo import SAMPLE_REPOSITORY
    from triton_sre.demo.traffic import ContinuousTraffic, TrafficDriver
    from triton_sre.doctor.command import stack_summary
    from triton_sre.stack.components import down
    from triton_sre.stack.local import StackError, StackOptions, up
    from triton_sre.stack.owner import unregister

    out = sys.stdout
    repository = (args.model_repository or SAMPLE_REPOSITORY).absolute()
    if not repository.is_dir():
        print(f"triton-sre demo: model repository {repository} is not a directory", file=sys.stderr)
        return 2
    workdir = (args.workdir or Path(tempfile.mkdtemp(prefix="triton-sre-demo-"))).absolute()
    make_dirs(workdir)
    stop = stop_on_signals()

    def say(text: str) -> None:
        _say(args, out, text)

    opts = StackOptions(
        model_repository=repository,
        workdir=workdir / "stack",
        interval=args.interval,
        group_wait=max(1.0, args.interval),
        exporter_config=_demo_exporter_config(workdir),
    )
    say(f"Starting the local stack on {repository} (workdir {workdir}) ...")
    try:
        # the demo's own stack: stopped when the demo dies, SIGKILL included (stack/owner.py)
        state = up(opts, lambda text: print(f"  {text}", file=sys.stderr, flush=True), owner="demo")
    except StackError as exc:
        print(f"triton-sre demo: the stack did not start: {exc}", file=sys.stderr)
        down(opts.workdir, lambda _text: None)
        unregister(opts.workdir)
        return 1
    components = {comp["name"]: comp for comp in state["components"]}
    triton_url = components["triton"]["url"]
    exporter_url = components["exporter"]["url"]
    prometheus_url = components["prometheus"]["url"]
    driver = ContinuousTraffic(lambda: TrafficDriver(triton_url))  # traffic for as long as the demo runs

    def status() -> dict[str, Any]:
        found = exporter_status(exporter_url, prometheus_url)
        add_ttft_p99(found, prometheus_url)
        return found

    try:
        say(_banner(state, components))
        say("\n".join(stack_summary(state)))  # which inputs Triton lacks (triton-sre doctor)
        log_findings = _diagnose_log(Path(components["triton"]["server_log"]))
        say(_log_findings_text(log_findings, components["triton"]["server_log"]))
        driver.start()
        started = time.monotonic()
        next_report = started + args.report_every
        while not stop.is_set():
            if args.duration is not None and time.monotonic() - started >= args.duration:
                break
            stop.wait(min(1.0, max(0.0, next_report - time.monotonic())))
            if time.monotonic() >= next_report:
                say(_status_text(status()))
                next_report += args.report_every
        driver.stop()
        time.sleep(args.interval * 1.5)  # one more exporter poll after the traffic stopped
        summary = status()
        if args.format == "json":
            summary["urls"] = {name: comp["url"] for name, comp in components.items()}
            summary["log_findings"] = [
                {"model": f.model, "version": f.version, "runbook": f.runbook, "severity": f.severity}
                for f in log_findings
            ]
            json.dump(summary, out, indent=2)
            out.write("\n")
        else:
            say(_status_text(summary))
    finally:
        driver.stop()
        down(opts.workdir, lambda _text: None)
        unregister(opts.workdir)
    say("Stopped everything the demo started.")
    return 0


def _demo_exporter_config(workdir: Path) -> Path:
    """The exporter's config for the demo: an example price, one execution slot per core."""
    path = workdir / "exporter.yaml"
    path.write_text(
        "# written by triton-sre demo: an example price, set yours in your own config\n"
        f"pricing:\n  currency: USD\n  node_hour: {DEMO_NODE_HOUR_USD}\n"
        f"  cpu_execution_slots: {os.cpu_count() or 1}\n",
        encoding="utf-8",
    )
    return path


def _say(args: argparse.Namespace, out: TextIO, text: str) -> None:
    print(text, file=out if args.format == "text" else sys.stderr, flush=True)


def _banner(state: dict[str, Any], components: dict[str, dict[str, Any]]) -> str:
    lines = ["", "triton-sre demo is running. Look at:"]
    for name, comp in components.items():
        lines.append(f"  {name:<14} {comp['url']:<26} log {comp['log']}")
    exporter = components["exporter"]["url"]
    lines += [
        f"  exporter metrics       {exporter}{c.PATH_METRICS}",
        f"  model states + reasons {exporter}{c.PATH_DEBUG_MODELS}",
        f"  alerts firing          {components['prometheus']['url']}/alerts",
        f"  generated rules and dashboards: {state.get('generated', '-')}",
        f"Prices: an example node-hour price of {DEMO_NODE_HOUR_USD} USD (set yours in the exporter config).",
        "Ctrl-C stops everything.",
        "",
    ]
    return "\n".join(lines)


def p99_by_model(prometheus_url: str) -> dict[tuple[str, str], float]:
    """(model, version) -> current p99 request latency in ms, from the recording rule; {} when
    Prometheus has none yet (or cannot be asked)."""
    name = c.rec_latency_quantile(c.REC_LEVEL_MODEL, c.LATENCY_REQUEST)
    try:
        body = httpclient.get(
            f"{prometheus_url}/api/v1/query",
            params={"query": f'{name}{{{c.LABEL_QUANTILE}="{c.DEFAULT_SLO_QUANTILE}"}}'},
            timeout=10,
        ).json()
        result = body["data"]["result"]
    except (requests.RequestException, ValueError, KeyError):
        return {}
    return {
        (r["metric"].get(c.LABEL_MODEL, ""), r["metric"].get(c.LABEL_VERSION, "")): (
            float(r["value"][1]) * 1000
        )
        for r in result
    }


def exporter_status(exporter_url: str, prometheus_url: str | None = None) -> dict[str, Any]:
    """What the exporter derived, read from its /metrics and /debug/models like any client; with
    `prometheus_url`, each model's current p99 request latency (Triton's summary, via the rules)."""
    from triton_sre.triton.exposition import parse

    text = httpclient.get(f"{exporter_url}{c.PATH_METRICS}", timeout=10).text
    debug = httpclient.get(f"{exporter_url}{c.PATH_DEBUG_MODELS}", timeout=10).json()
    models: dict[tuple[str, str], dict[str, Any]] = {}
    server: dict[str, float] = {}
    for sample in parse(text):
        labels = dict(sample.labels)
        if c.LABEL_MODEL not in labels or c.LABEL_VERSION not in labels:
            server[sample.name] = sample.value
            continue
        row = models.setdefault(
            (labels[c.LABEL_MODEL], labels[c.LABEL_VERSION]),
            {
                "model": labels[c.LABEL_MODEL],
                "version": labels[c.LABEL_VERSION],
                "stage_seconds": {},
                "stage_fraction": {},
            },
        )
        if sample.name == c.M_BATCHING_RATIO:
            row["batching_ratio"] = sample.value
        elif sample.name == c.M_BATCH_FILL_RATIO:
            row["batch_fill_ratio"] = sample.value
        elif sample.name == c.M_COST_PER_1K:
            row["cost_per_1k_inferences"] = sample.value
        elif sample.name == c.M_REQUEST_STAGE_SECONDS:
            row["stage_seconds"][labels[c.L_STAGE]] = sample.value
        elif sample.name == c.M_REQUEST_STAGE_FRACTION:
            row["stage_fraction"][labels[c.L_STAGE]] = sample.value
        else:
            _llm_sample(row, sample.name, labels, sample.value)
    p99 = p99_by_model(prometheus_url) if prometheus_url else {}
    for key, row in models.items():
        row["p99_ms"] = p99.get(key)
    return {
        "up": server.get(c.M_UP) == 1.0,
        "window_seconds": server.get(c.M_WINDOW_SECONDS),
        "idle_fraction": server.get(c.M_IDLE_COST_FRACTION),
        "models": [m for _, m in sorted(models.items()) if "batching_ratio" in m or m["stage_seconds"]],
        "states": debug.get("models", []),
    }


def _llm_sample(row: dict[str, Any], name: str, labels: dict[str, str], value: float) -> None:
    """The exporter's LLM figures of one model version, into row["llm"]."""
    if name == c.M_LLM_TOKENS_PER_SECOND:
        row.setdefault("llm", {})[f"tokens_per_second_{labels.get(c.L_DIRECTION)}"] = value
    elif name == c.M_COST_PER_1M_TOKENS:
        row.setdefault("llm", {})[f"cost_per_1m_{labels.get(c.L_DIRECTION)}_tokens"] = value
    elif name == c.M_LLM_KV_CACHE_UTILIZATION:
        row.setdefault("llm", {})["kv_cache_utilization"] = value
    elif name == c.M_LLM_TTFT_SECONDS:
        row.setdefault("llm", {})["ttft_seconds_average"] = value
    elif name == c.M_LLM_REQUESTS:
        row.setdefault("llm", {})[f"requests_{labels.get(c.L_STATE)}"] = value


def add_ttft_p99(status: dict[str, Any], prometheus_url: str) -> None:
    """Each LLM model's TTFT p99 from the LLM recording rule in Prometheus (absent without data)."""
    from triton_sre.bot.llm import TTFT_P99, figure_exprs
    from triton_sre.prom import PromError, Prometheus

    prom = Prometheus(prometheus_url)
    for m in status["models"]:
        if "llm" not in m:
            continue
        try:
            value = prom.instant(figure_exprs(m["model"], m["version"])[TTFT_P99])
        except PromError:
            value = None
        if value is not None:
            m["llm"]["ttft_p99_seconds"] = value


def _llm_lines(status: dict[str, Any]) -> list[str]:
    rows = [m for m in status["models"] if "llm" in m]
    if not rows:
        return []
    header = f"{'LLM model':<22}{'tok/s in':>9}{'tok/s out':>10}{'TTFT p99':>10}{'KV %':>6}{'USD/1M out':>11}"
    lines = [header]
    for m in rows:
        llm = m["llm"]
        ttft = llm.get("ttft_p99_seconds")
        kv = llm.get("kv_cache_utilization")
        lines.append(
            f"{m['model']:<22}{_fmt(llm.get('tokens_per_second_input'), '9.0f')}"
            f"{_fmt(llm.get('tokens_per_second_output'), '10.0f')}"
            f"{_fmt(ttft * 1000 if ttft is not None else None, '8.0f')}{'ms' if ttft is not None else '  '}"
            f"{_fmt(kv * 100 if kv is not None else None, '6.0f')}"
            f"{_fmt(llm.get('cost_per_1m_output_tokens'), '11.3g')}"
        )
    return lines


def _fmt(value: float | None, spec: str) -> str:
    """Format a value in a right-aligned column; `-` where there is none."""
    width = int("".join(ch for ch in spec.split(".")[0] if ch.isdigit()) or 0)
    return "-".rjust(width) if value is None else format(value, spec)


def _status_text(status: dict[str, Any]) -> str:
    window = status.get("window_seconds")
    lines = [f"--- over the last {window or 0:.0f}s (triton_sre_up={int(status['up'])}) ---"]
    lines.append(
        f"{'model':<22}{'batching':>9}{'fill':>6}{'queue':>8}{'compute':>9}{'ms/req':>8}{'p99 ms':>8}"
        f"{'USD/1k':>10}"
    )
    compute_stages = (c.STAGE_COMPUTE_INPUT, c.STAGE_COMPUTE_INFER, c.STAGE_COMPUTE_OUTPUT)
    for m in status["models"]:
        fraction = m["stage_fraction"]
        seconds = m["stage_seconds"]
        lines.append(
            f"{m['model']:<22}{_fmt(m.get('batching_ratio'), '9.2f')}"
            f"{_fmt(m.get('batch_fill_ratio'), '6.2f')}"
            f"{_fmt(fraction.get(c.STAGE_QUEUE), '8.0%')}"
            f"{_fmt(sum(fraction.get(s, 0.0) for s in compute_stages) if fraction else None, '9.0%')}"
            f"{_fmt(sum(seconds.values()) * 1000 if seconds else None, '8.1f')}"
            f"{_fmt(m.get('p99_ms'), '8.1f')}"
            f"{_fmt(m.get('cost_per_1k_inferences'), '10.3g')}"
        )
    lines += _llm_lines(status)
    if status.get("idle_fraction") is not None:
        lines.append(f"idle share of the host: {status['idle_fraction']:.0%}")
    for s in status["states"]:
        if s["state"] != c.STATE_READY:
            first = s["reason"].strip().splitlines()[0] if s["reason"].strip() else ""
            where = f"{s['model']} v{s['version'] or '-'}"
            lines.append(f"{s['state']}: {where}  runbook={s['runbook'] or '-'}  {first[:90]}")
    return "\n".join(lines)


def _diagnose_log(log_path: Path) -> list[Any]:
    """The diagnosis engine over Triton's startup log: catches failures the index never shows
    (a model whose version folders are all non-integer is absent from it)."""
    from triton_sre.diagnosis.api import diagnose_stream
    from triton_sre.diagnosis.catalog import CatalogError, load_catalog

    try:
        catalog = load_catalog()
        titles, remediations = catalog.titles, catalog.remediations
    except CatalogError:
        titles, remediations = {}, {}  # runbook ids without their fixes
    with open(log_path, "rb") as log:
        report = diagnose_stream(log, titles, remediations)
    return [f for f in report.findings if f.severity == c.IMPACT_CRITICAL]


def _log_findings_text(findings: list[Any], log_path: str) -> str:
    lines = [f"Diagnosis of Triton's log (triton-sre triage {log_path}):"]
    for f in findings:
        lines.append(f"  {f.model or '(server)'}: {f.runbook} — {f.remediation}")
    return "\n".join(lines if findings else [*lines, "  no failed model"])
