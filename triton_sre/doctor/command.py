"""`triton-sre doctor`: fetch what Triton (and Prometheus) expose once, run the checks, print them.

Exit codes: 0 every input the spec needs is present, 1 something needed is missing, 2 usage error
or an endpoint that cannot be reached. Base install only (requests, pyyaml).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from triton_sre import conventions as c
from triton_sre.checks import byte_count_arg, path_arg
from triton_sre.config import default_metrics_url
from triton_sre.doctor import promchecks
from triton_sre.doctor.checks import Check, triton_checks
from triton_sre.doctor.facts import ModelFacts, TritonFacts, families_present, model_facts
from triton_sre.doctor.pitfalls import Pitfall, applicable
from triton_sre.durations import seconds_arg
from triton_sre.redact import printable
from triton_sre.slo import DEFAULT_SPEC_FILE, Spec, SpecError, default_spec, load_spec
from triton_sre.triton.client import FetchError, TritonClient
from triton_sre.ttyprogress import colour_on, on_terminal

CONFIG_WORKERS = 4
"""Model configs fetched at once: one call per READY model is inherent (Triton has no call for all
configs), so a 20,000-model server is read over a few kept-alive connections, never one per model."""

_GREEN, _RED, _YELLOW, _RESET = "\033[32m", "\033[31m", "\033[33m", "\033[0m"


class Unreachable(Exception):
    """An endpoint doctor must read did not answer (exit 2)."""


@dataclass
class Report:
    triton_version: str | None
    checks: list[Check]
    pitfalls: list[Pitfall] = field(default_factory=list)

    @property
    def missing(self) -> list[Check]:
        return [check for check in self.checks if check.missing]

    @property
    def exit_code(self) -> int:
        return c.EXIT_FAILURE if self.missing else c.EXIT_OK

    def as_json(self) -> dict[str, Any]:
        return {
            "triton_version": self.triton_version,
            "checks": [check.as_json() for check in self.checks],
            "pitfalls": [p.as_json() for p in self.pitfalls],
        }


def add_doctor_parser(commands: Any, epilog: str) -> None:
    doctor = commands.add_parser(
        "doctor",
        help="say which inputs triton-sre needs are missing, and the exact fix for each",
        description=(
            "Read Triton's /v2, /metrics, repository index, model configs and statistics (and, with "
            "--prometheus-url, Prometheus' targets, configuration, rules and Alertmanagers) and report "
            "one check per input triton-sre uses: ok, what was found, what it affects and the exact "
            "fix (a tritonserver flag, a config.pbtxt parameter, a scrape setting), then the known "
            "pitfalls of this Triton release. See docs/doctor.md."
        ),
        epilog="exit codes: 0 everything needed is present, 1 something needed is missing, "
        f"2 usage error or an endpoint that cannot be reached, {c.EXIT_INTERRUPTED} interrupted (Ctrl-C), "
        f"{c.EXIT_BROKEN_PIPE} stdout closed by its reader",
    )
    doctor.add_argument(
        "--triton-url", required=True, help="Triton's HTTP endpoint, e.g. http://localhost:8000"
    )
    doctor.add_argument(
        "--metrics-url", help=f"Triton's metrics endpoint (default: port {c.TRITON_METRICS_PORT})"
    )
    doctor.add_argument(
        "--prometheus-url", help="also check this Prometheus (jobs, interval, rules, Alertmanager)"
    )
    doctor.add_argument("--alertmanager-url", help="the Alertmanager Prometheus must send alerts to")
    doctor.add_argument(
        "--spec",
        "--slo-file",
        type=path_arg,
        help=f"SLO spec (default: ./{DEFAULT_SPEC_FILE} if present, else the shipped one)",
    )
    doctor.add_argument(
        "--format", choices=["text", "json"], default="text", help="output format (default text)"
    )
    doctor.add_argument(
        "--timeout",
        type=seconds_arg,
        default=c.DEFAULT_TIMEOUT_SECONDS,
        help=f"seconds per request (default {c.DEFAULT_TIMEOUT_SECONDS:g})",
    )
    doctor.add_argument(
        "--max-response-bytes",
        type=byte_count_arg,
        default=c.DEFAULT_MAX_RESPONSE_BYTES,
        help="largest answer read from Triton, as the exporter's max_response_bytes "
        f"(default {c.DEFAULT_MAX_RESPONSE_BYTES}: /metrics of about 35,000 models)",
    )
    doctor.set_defaults(handler=run_doctor)


def _err(message: str) -> None:
    print(f"triton-sre doctor: {message}", file=sys.stderr)


def resolve_spec(path: Path | None) -> Spec:
    if path is not None:
        return load_spec(path)
    local = Path(DEFAULT_SPEC_FILE)
    return load_spec(local) if local.is_file() else default_spec()


def run_doctor(args: argparse.Namespace) -> int:
    try:  # a spec that is missing, a folder, a FIFO or a link loop: `load_spec` says which
        spec = resolve_spec(args.spec)
    except SpecError as exc:
        _err(f"invalid SLO spec: {exc}")
        return c.EXIT_USAGE
    try:
        report = diagnose(
            args.triton_url,
            args.metrics_url,
            spec,
            prometheus_url=args.prometheus_url,
            alertmanager_url=args.alertmanager_url,
            timeout=args.timeout,
            max_response_bytes=args.max_response_bytes,
        )
    except Unreachable as exc:
        _err(str(exc))
        return c.EXIT_USAGE
    if args.format == "json":
        print(json.dumps(report.as_json(), indent=2))
    else:
        print(to_text(report, colour=colour_on(sys.stdout)))
    return report.exit_code


def diagnose(
    triton_url: str,
    metrics_url: str | None,
    spec: Spec,
    *,
    prometheus_url: str | None = None,
    alertmanager_url: str | None = None,
    timeout: float = c.DEFAULT_TIMEOUT_SECONDS,
    max_response_bytes: int = c.DEFAULT_MAX_RESPONSE_BYTES,
) -> Report:
    """Fetch, check, and collect the pitfalls; Unreachable when an endpoint does not answer."""
    from triton_sre.httpclient import new_session

    metrics_url = metrics_url or default_metrics_url(triton_url)
    session = new_session()  # kept alive across the calls (each model's config among them)
    try:
        facts = triton_facts(
            TritonClient(
                triton_url, metrics_url, timeout=timeout, max_bytes=max_response_bytes, session=session
            )
        )
    finally:
        session.close()
    checks = triton_checks(facts, spec)
    queries: list[str] = []
    if prometheus_url:
        prom_checks, queries = prometheus_checks(prometheus_url, spec, metrics_url, alertmanager_url, timeout)
        checks += prom_checks
    return Report(facts.version, checks, applicable(facts, queries))


def triton_facts(client: TritonClient) -> TritonFacts:
    """Everything the Triton-side checks read, fetched once (read-only endpoints only)."""
    from triton_sre.exporter.llm import is_llm_family
    from triton_sre.triton.exposition import ExpositionError, decode_body, iter_parse

    try:
        try:  # the client's bounds: --timeout for the whole answer, at most max_bytes of it
            metadata = client.server_metadata()
        except FetchError as exc:
            if exc.kind == c.FAULT_HTTP_STATUS:
                metadata = {}  # (a restricted metadata API: the version stays unknown)
            elif exc.kind == c.FAULT_PARSE:  # HTML from a proxy, garbage: not Triton's JSON
                hint = "" if exc.message.endswith(")") else " (is it Triton's HTTP port?)"  # or the client's
                raise Unreachable(f"cannot read Triton: {exc.message}{hint}") from None
            else:
                raise
        text = decode_body(client.metrics())
        index = client.repository_index()
        stats, refused = statistics(client, text)
    except ValueError as exc:  # metrics text that is not UTF-8
        raise Unreachable(f"cannot read Triton at {client.triton_url}: {exc}") from None
    except FetchError as exc:
        hint = " (a larger limit: --max-response-bytes)" if exc.kind == c.FAULT_TOO_LARGE else ""
        if exc.target == c.TARGET_METRICS and exc.kind == c.FAULT_CONNECTION:
            # the HTTP API answered: the metrics port is elsewhere (a container's mapping, `stack up`'s)
            hint = " (Triton's HTTP API answered: give its metrics endpoint as --metrics-url)"
        raise Unreachable(f"cannot read Triton: {exc}{hint}") from None
    try:
        llm_models = {
            value
            for chunk in iter_parse(text, keep=is_llm_family)
            for sample in chunk
            for key, value in sample.labels
            if key == c.LABEL_MODEL
        }
    except ExpositionError as exc:  # cut short, CRLF, a proxy's page: what Prometheus rejects too
        raise Unreachable(
            f"cannot read Triton's metrics: {client.metrics_url} is not Prometheus text format: {exc}"
        ) from None
    ready = sorted({e["name"] for e in index if e.get("state") == c.STATE_READY})
    if ready and not text.strip():  # Triton writes every loaded model's request counters
        raise Unreachable(
            f"cannot read Triton's metrics: {client.metrics_url} answered an empty body while "
            f"{len(ready)} model(s) are READY: not this Triton's metrics endpoint (give --metrics-url)"
        )
    progress = on_terminal("doctor", "model configs read")
    try:
        models = [m for m in model_configs(client, ready, progress) if m is not None]
    finally:
        if progress is not None:
            progress.finish()
    memory = {s.get("name") for s in stats if isinstance(s, dict) and s.get(c.STATS_MEMORY_USAGE)}
    gpu_memory = {
        s.get("name")
        for s in stats
        if isinstance(s, dict)
        and any(
            isinstance(m, dict) and m.get("type") == c.MEMORY_TYPE_GPU
            for m in s.get(c.STATS_MEMORY_USAGE) or []
        )
    }
    version = metadata.get("version") if isinstance(metadata, dict) else None
    return TritonFacts(
        version=str(version) if version else None,
        families=families_present(text),
        models=tuple(models),
        llm_models=frozenset(llm_models),
        memory_models=frozenset(str(m) for m in memory),
        gpu_memory_models=frozenset(str(m) for m in gpu_memory),
        stats_refused=refused,
    )


def statistics(client: TritonClient, metrics_text: str) -> tuple[list[Any], str]:
    """The all-model statistics, and "" or why Triton refused them: with model namespacing on (its
    per-model series carry `namespace`) Triton answers them 400, a finding rather than a failure."""
    try:
        return list(client.all_stats()), ""
    except FetchError as exc:
        if exc.kind != c.FAULT_HTTP_STATUS or f'{c.LABEL_NAMESPACE}="' not in metrics_text:
            raise
        return [], f"the statistics were refused: Triton runs with model namespacing ({exc})"


def model_configs(
    client: TritonClient,
    names: Sequence[str],
    progress: Callable[[int, int], None] | None = None,
    workers: int = CONFIG_WORKERS,
) -> Iterator[ModelFacts | None]:
    """Each model's facts from its config, in `names` order (None for a model whose config cannot
    be read: unloaded between the index and this call, not a fault of the setup). `workers`
    threads, each with its own kept-alive session (a requests session is not shared by threads)."""
    from triton_sre.httpclient import new_session

    local = threading.local()
    sessions = []
    lock = threading.Lock()

    def fetch(name: str) -> ModelFacts | None:
        own = getattr(local, "client", None)
        if own is None:
            session = new_session(client.triton_url)
            with lock:
                sessions.append(session)
            own = local.client = replace(client, session=session)
        try:
            return model_facts(name, own.model_config(name))
        except FetchError:
            return None

    try:
        with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="doctor-config") as pool:
            for done, facts in enumerate(pool.map(fetch, names), 1):
                if progress is not None:
                    progress(done, len(names))
                yield facts
    finally:
        for session in sessions:
            session.close()


def prometheus_checks(
    url: str, spec: Spec, metrics_url: str | None, alertmanager_url: str | None, timeout: float
) -> tuple[list[Check], list[str]]:
    """The five Prometheus checks, and every loaded rule's query (for the pitfalls)."""
    from triton_sre.generate.families import rule_files
    from triton_sre.prom import PromError, Prometheus

    prom = Prometheus(url, timeout=timeout)
    try:
        targets_data = prom.api("/api/v1/targets")
        loaded = promchecks.groups_from_api(prom.api("/api/v1/rules"))
        managers = prom.api("/api/v1/alertmanagers").get("activeAlertmanagers")
    except PromError as exc:
        raise Unreachable(str(exc)) from None
    try:
        retained = prom.api("/api/v1/status/runtimeinfo").get("storageRetention")
    except PromError:  # VictoriaMetrics, an old Prometheus: the retention is unknown, not a fault
        retained = None
    try:
        jobs = promchecks.prometheus_jobs(spec, promchecks.targets_from_api(targets_data), metrics_url)
    except promchecks.AnswerShapeError as exc:
        jobs = promchecks.targets_unreadable(spec, str(exc))
    intervals = {job: prom.scrape_interval(job) for job in (spec.triton_job, spec.exporter_job)}
    expected = promchecks.groups_from_rule_files(rule_files(spec))
    active = [
        str(m.get("url")) for m in (managers if isinstance(managers, list) else []) if isinstance(m, dict)
    ]
    checks = [
        jobs,
        promchecks.scrape_interval(spec, intervals, expected),
        promchecks.rules_loaded(spec, loaded, expected),
        promchecks.alertmanager(active, alertmanager_url),
        promchecks.retention(retained if isinstance(retained, str) else None, expected),
    ]
    return checks, [query for _, rules in loaded for _, query in rules]


def to_text(report: Report, *, colour: bool = False) -> str:
    def paint(code: str, text: str) -> str:
        return f"{code}{text}{_RESET}" if colour else text

    # what the servers said (version, family and model names in `found`/`fix`) escaped: a Triton
    # answering `2.51\x1b[2J` must not clear the terminal
    lines = [f"Triton {printable(report.triton_version or '(version unknown)')}"]
    for check in report.checks:
        if check.ok:
            status = paint(_GREEN, "ok     ")
        elif check.needed:
            status = paint(_RED, "MISSING")
        else:
            status = paint(_YELLOW, "absent ")
        lines.append(f"{status} {check.id}: {printable(check.found)}")
        if not check.ok:
            lines.append(f"        affects: {printable('; '.join(check.affects))}")
            lines.append(f"        fix: {printable(check.fix)}")
    if report.pitfalls:
        lines.append("")
        lines.append("Known pitfalls for this server:")
        for p in report.pitfalls:
            lines.append(f"  - {p.title} [{p.releases()}]")
            lines.append(f"    {p.detail}")
            lines.append(f"    source: {p.source}")
    missing = report.missing
    lines.append("")
    lines.append(
        f"{len(missing)} needed input(s) missing: {', '.join(ch.id for ch in missing)}"
        if missing
        else "every input triton-sre needs here is present"
    )
    return "\n".join(lines)


def summary_lines(triton_url: str, metrics_url: str | None, spec: Spec | None = None) -> list[str]:
    """A few lines for `stack up` and `demo`: what is missing, or that nothing is (never raises)."""
    try:
        report = diagnose(triton_url, metrics_url, spec or default_spec())
    except Unreachable as exc:
        return [f"doctor: {exc}"]
    missing = report.missing
    head = f"doctor: Triton {report.triton_version}, {len(report.checks)} checks"
    if not missing:
        return [head + ": every input triton-sre needs is present"]
    lines = [head + f", {len(missing)} needed input(s) missing: {', '.join(ch.id for ch in missing)}"]
    lines += [f"  {ch.id}: {ch.fix}" for ch in missing]
    lines.append(f"  details: triton-sre doctor --triton-url {triton_url}")
    return lines


def stack_summary(state: dict[str, Any], spec_file: Path | None = None) -> list[str]:
    """`summary_lines` for the Triton of a local stack's state (`stack up`, `demo`)."""
    triton = next((comp for comp in state.get("components", []) if comp.get("name") == "triton"), None)
    if triton is None:
        return []
    try:
        spec = load_spec(spec_file) if spec_file is not None else None
    except SpecError as exc:
        return [f"doctor: invalid SLO spec: {exc}"]
    return summary_lines(triton["url"], triton.get("metrics_url"), spec)
