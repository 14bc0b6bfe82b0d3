"""`triton-sre demo`: a real local Triton with the sample models, the exporter, and traffic.

It prints where to look and, every few seconds, what the exporter derived: batching ratio,
where request time goes, cost per 1k inferences, and the broken models with their runbook ids.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

from triton_sre import conventions as c

# An example price so the demo shows cost figures; real deployments set their own in the config.
DEMO_NODE_HOUR_USD = 0.36


def add_demo_parser(commands: Any, epilog: str) -> None:
    demo = commands.add_parser(
        "demo",
        help="run a real local Triton with sample models, the exporter and traffic",
        description=(
            "Start the real Triton server from the nvidia-pytriton wheel on the sample model repository "
            "(broken models included), start the exporter, drive concurrent traffic so batching and "
            "queueing happen, and print what to look at. Runs until Ctrl-C or --duration."
        ),
        epilog=epilog,
    )
    demo.add_argument(
        "--duration", type=float, default=None, help="stop after this many seconds (default: until Ctrl-C)"
    )
    demo.add_argument(
        "--model-repository", type=Path, default=None, help="model repository (default: the bundled sample)"
    )
    demo.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="where Triton's log and backend dir go (default: a temp dir)",
    )
    demo.add_argument(
        "--exporter-port", type=int, default=0, help="exporter port on 127.0.0.1 (default: a free port)"
    )
    demo.add_argument(
        "--interval", type=float, default=2.0, help="exporter poll interval in seconds (default 2)"
    )
    demo.add_argument("--window", type=float, default=30.0, help="exporter window in seconds (default 30)")
    demo.add_argument(
        "--report-every", type=float, default=10.0, help="seconds between status reports (default 10)"
    )
    demo.add_argument(
        "--format", choices=["text", "json"], default="text", help="output format (default text)"
    )
    demo.set_defaults(handler=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    from triton_sre.config import ExporterSettings
    from triton_sre.demo import SAMPLE_REPOSITORY
    from triton_sre.demo.traffic import TrafficDriver
    from triton_sre.exporter.derive import Pricing
    from triton_sre.exporter.service import Exporter, ExporterServer
    from triton_sre.triton.local import LocalTriton, LocalTritonError

    out = sys.stdout
    repository = args.model_repository or SAMPLE_REPOSITORY
    if not repository.is_dir():
        print(f"triton-sre demo: model repository {repository} is not a directory", file=sys.stderr)
        return 2
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())

    _say(args, out, f"Starting Triton on {repository} ...")
    triton = LocalTriton(model_repository=repository, workdir=args.workdir, exit_on_error=False)
    try:
        triton.start()
    except LocalTritonError as exc:
        print(f"triton-sre demo: Triton did not start: {exc}", file=sys.stderr)
        return 1
    settings = ExporterSettings(
        triton_url=triton.http_url,
        metrics_url=triton.metrics_url,
        listen=f"127.0.0.1:{args.exporter_port}",
        interval=args.interval,
        window=args.window,
        # one execution slot per core: the sample models' instances run in parallel processes
        pricing=Pricing(
            currency="USD", node_hour=DEMO_NODE_HOUR_USD, cpu_execution_slots=os.cpu_count() or 1
        ),
    )
    try:
        server = ExporterServer(Exporter(settings), "127.0.0.1", args.exporter_port)
    except OSError as exc:
        triton.stop()
        print(f"triton-sre demo: exporter cannot listen: {exc.strerror or exc}", file=sys.stderr)
        return 1
    driver = TrafficDriver(triton.http_url)
    try:
        with server:
            driver.start()
            _say(args, out, _banner(triton, server, settings))
            _say(args, out, _write_generated(args.workdir))
            log_findings = _diagnose_log(triton.log_path)
            _say(args, out, _log_findings_text(log_findings, triton.log_path))
            started = time.monotonic()
            next_report = started + args.report_every
            while not stop.is_set():
                if args.duration is not None and time.monotonic() - started >= args.duration:
                    break
                stop.wait(min(1.0, max(0.0, next_report - time.monotonic())))
                if time.monotonic() >= next_report:
                    _say(args, out, _status_text(server.exporter))
                    next_report += args.report_every
            driver.stop()
            server.exporter.poll_once()
            if args.format == "json":
                summary = _status_json(server.exporter, triton, server)
                summary["log_findings"] = [
                    {"model": f.model, "version": f.version, "runbook": f.runbook, "severity": f.severity}
                    for f in log_findings
                ]
                json.dump(summary, out, indent=2)
                out.write("\n")
            else:
                _say(args, out, _status_text(server.exporter))
    finally:
        driver.stop()
        triton.stop()
    _say(args, out, "Stopped Triton and the exporter.")
    return 0


def _diagnose_log(log_path: Path) -> list[Any]:
    """The diagnosis engine over Triton's startup log: catches failures the index never shows
    (a model whose version folders are all non-integer is absent from it)."""
    from triton_sre.diagnosis.command import triage_stream

    with open(log_path, "rb") as log:
        return [f for f in triage_stream(log, {}).findings if f.severity == c.IMPACT_CRITICAL]


def _log_findings_text(findings: list[Any], log_path: Path) -> str:
    lines = [f"Diagnosis of Triton's log (triton-sre triage {log_path}):"]
    for f in findings:
        lines.append(f"  {f.model or '(server)'}: {f.runbook} — {f.remediation}")
    return "\n".join(lines if findings else [*lines, "  no failed model"])


def _write_generated(workdir: Path | None) -> str:
    """Write `triton-sre generate`'s artifacts (from ./slos.yaml if present, else the default) into
    <workdir>/generated, or a temp dir that outlives the demo when no --workdir was given."""
    import tempfile

    from triton_sre.generate.command import default_spec, render_all, write_files
    from triton_sre.generate.slo import SpecError, load_spec

    target = workdir / "generated" if workdir else Path(tempfile.mkdtemp(prefix="triton-sre-demo-generated-"))

    try:
        spec = load_spec("slos.yaml") if Path("slos.yaml").is_file() else default_spec()
    except SpecError as exc:
        return f"Not generating rules and dashboards: {exc}"
    files = render_all(spec)
    write_files(files, target)
    return (
        f"Generated Prometheus rules, promtool tests and Grafana dashboards from {spec.source} "
        f"({len(files)} files) in {target}/alerts and {target}/dashboards."
    )


def _say(args: argparse.Namespace, out: TextIO, text: str) -> None:
    if args.format == "text":
        print(text, file=out, flush=True)
    else:
        print(text, file=sys.stderr, flush=True)


def _banner(triton: Any, server: Any, settings: Any) -> str:
    return "\n".join(
        [
            "",
            "triton-sre demo is running. Look at:",
            f"  Triton HTTP            {triton.http_url}   (try {triton.http_url}/v2/models/stats)",
            f"  Triton metrics         {triton.metrics_url}",
            f"  exporter metrics       {server.url}{c.PATH_METRICS}",
            f"  model states + reasons {server.url}{c.PATH_DEBUG_MODELS}",
            f"  Triton log             {triton.log_path}",
            f"Prices: an example node-hour price of {DEMO_NODE_HOUR_USD} USD (set yours in the config).",
            f"Window {settings.window:g}s, poll every {settings.interval:g}s. Ctrl-C stops everything.",
            "",
        ]
    )


def _fmt(value: float | None, spec: str) -> str:
    """Format a value in a right-aligned column; `-` where there is none."""
    width = int("".join(ch for ch in spec.split(".")[0] if ch.isdigit()) or 0)
    return "-".rjust(width) if value is None else format(value, spec)


def _status_text(exporter: Any) -> str:
    d = exporter.derivation
    if d is None:
        return "(no poll of Triton yet)"
    lines = [f"--- over the last {d.window_seconds:.0f}s (triton_sre_up={int(exporter.up)}) ---"]
    lines.append(
        f"{'model':<22}{'batching':>9}{'fill':>6}{'queue':>8}{'compute':>9}{'ms/req':>8}{'USD/1k':>10}"
    )
    for m in d.models:
        if m.batching_ratio is None and m.stage_seconds is None:
            continue  # no traffic in the window (or a model that never loaded)
        seconds = m.stage_seconds or {}
        fraction = m.stage_fraction or {}
        compute = sum(
            fraction.get(s, 0.0)
            for s in (c.STAGE_COMPUTE_INPUT, c.STAGE_COMPUTE_INFER, c.STAGE_COMPUTE_OUTPUT)
        )
        total_ms = sum(seconds.values()) * 1000 if seconds else None
        lines.append(
            f"{m.model:<22}{_fmt(m.batching_ratio, '9.2f')}{_fmt(m.batch_fill_ratio, '6.2f')}"
            f"{_fmt(fraction.get(c.STAGE_QUEUE) if fraction else None, '8.0%')}"
            f"{_fmt(compute if fraction else None, '9.0%')}{_fmt(total_ms, '8.1f')}"
            f"{_fmt(m.cost_per_1k, '10.3g')}"
        )
    if d.idle_fraction is not None:
        lines.append(f"idle share of the host: {d.idle_fraction:.0%}")
    broken = [s for s in d.states if s.state != c.STATE_READY]
    for s in broken:
        first = s.reason.strip().splitlines()[0] if s.reason.strip() else ""
        lines.append(f"{s.state}: {s.model} v{s.version or '-'}  runbook={s.runbook or '-'}  {first[:90]}")
    return "\n".join(lines)


def _status_json(exporter: Any, triton: Any, server: Any) -> dict[str, Any]:
    d = exporter.derivation
    return {
        "triton_http_url": triton.http_url,
        "exporter_url": server.url,
        "up": exporter.up,
        "window_seconds": d.window_seconds if d else None,
        "idle_fraction": d.idle_fraction if d else None,
        "models": [
            {
                "model": m.model,
                "version": m.version,
                "batching_ratio": m.batching_ratio,
                "batch_fill_ratio": m.batch_fill_ratio,
                "stage_seconds": dict(m.stage_seconds or {}),
                "stage_fraction": dict(m.stage_fraction or {}),
                "cost_per_1k_inferences": m.cost_per_1k,
            }
            for m in (d.models if d else ())
        ],
        "states": [
            {"model": s.model, "version": s.version, "state": s.state, "runbook": s.runbook}
            for s in (d.states if d else ())
        ],
    }
