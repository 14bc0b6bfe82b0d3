"""`triton-sre report`: cost and capacity over a time range, from Prometheus, as Markdown, HTML and CSV.

Exit codes: 0 report written, 2 usage, input or output error (bad time range, Prometheus unreachable
or refusing a query, unreadable SLO file, an --out that cannot be written).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from triton_sre import conventions as c
from triton_sre.checks import out_folder_arg, path_text_arg
from triton_sre.durations import seconds_arg
from triton_sre.redact import bounded
from triton_sre.rfc3339 import LeapSecondError, parse_rfc3339, utc_text

__all__ = ["FORMATS", "add_report_parser", "build_report", "parse_time", "run_report"]

FORMATS = ("md", "html", "csv")
DEFAULT_OUT = "triton-sre-report"
DEFAULT_SCRAPE_INTERVAL_S = 60.0  # Prometheus' own default, when its configuration cannot be read
LATEST_TIME = 253402300799.0  # 9999-12-31T23:59:59Z: the last second a report can print as a date


def add_report_parser(commands: Any, epilog: str) -> None:
    parser = commands.add_parser(
        "report",
        help="cost and capacity report over a time range, from Prometheus",
        description=(
            "Read Triton's and the exporter's metrics for a time range from Prometheus (range queries) "
            "and write, per model: inferences, cost per 1k inferences, share of cost, idle cost, batching "
            "ratio and fill, queue vs compute share, p50/p95/p99 latency (histogram when Triton has "
            "one, else its summaries), and recommendations with the number "
            "and threshold behind each, and per SLO its events, error ratio and budget spent in the range. "
            "Output: report.md (+ PNG charts), report.html (self-contained), models.csv, "
            "recommendations.csv, slos.csv, partial_data.json, and llm_models.csv and unserved_models.csv "
            "when they have rows, in --out. Exit codes: 0 written, 2 usage, "
            "input or output error (e.g. Prometheus unreachable, an --out that cannot be written)."
        ),
        epilog=epilog,
    )
    parser.add_argument(
        "--prometheus-url", required=True, help="Prometheus base URL, e.g. http://localhost:9090"
    )
    parser.add_argument("--start", help="range start: RFC 3339 (2024-05-01T10:00:00Z) or Unix seconds")
    parser.add_argument("--end", help="range end (default now)")
    parser.add_argument(
        "--last", default="1h", help="range length ending at --end when --start is not given (default 1h)"
    )
    parser.add_argument(
        "--step", type=seconds_arg, help="query resolution in seconds (default: range / 2000, at least 1)"
    )
    parser.add_argument(
        "--timeout",
        type=seconds_arg,
        default=c.REPORT_TIMEOUT_SECONDS,
        help=f"seconds each Prometheus query's whole answer may take (default {c.REPORT_TIMEOUT_SECONDS:g})",
    )
    parser.add_argument(
        "--out", type=out_folder_arg, default=DEFAULT_OUT, help=f"output folder (default ./{DEFAULT_OUT})"
    )
    parser.add_argument(
        "--format",
        default="md,html,csv",
        help="comma-separated outputs among md, html, csv (default all three)",
    )
    parser.add_argument(
        "--slo-file",
        "--spec",
        type=path_text_arg,
        help="slos.yaml for the thresholds (batching ratio, min request rate, queue share) and the SLO "
        "section (each SLO's events, error ratio and budget spent in the range; default: the shipped one)",
    )
    parser.add_argument(
        "--scrape-interval",
        help="Prometheus' scrape interval of Triton (e.g. 15s); rate windows are at least four of them. "
        "Default: read from Prometheus' configuration (/api/v1/status/config), else 1m",
    )
    parser.set_defaults(handler=run_report)


def _err(message: str) -> None:
    print(f"triton-sre report: {message}", file=sys.stderr)


def parse_time(value: str) -> float:
    """Unix seconds or RFC 3339 / ISO 8601 (a trailing Z is UTC; no zone means UTC), between
    1970-01-01 and 9999-12-31 UTC (the report prints its range as dates)."""
    shown = bounded(value, yaml_hints=False)  # a command-line argument: no YAML read it
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parse_rfc3339(value).timestamp()
        except LeapSecondError as exc:
            raise ValueError(f"{shown}: {exc}") from None
        except ValueError:
            raise ValueError(f"{shown} is neither Unix seconds nor an RFC 3339 time") from None
    if not math.isfinite(seconds):  # nan and inf parse as floats
        raise ValueError(f"{shown} is not a time: Unix seconds must be a finite number")
    if not 0 <= seconds <= LATEST_TIME:
        raise ValueError(f"{shown} is not a time between 1970-01-01 and 9999-12-31 UTC")
    return seconds


def _thresholds(path: str | None) -> Any:
    from triton_sre.report.recommend import Thresholds
    from triton_sre.slo import load_spec

    if path is None:
        return Thresholds()
    spec = load_spec(path)
    shares = [s.queue_time_share for s in spec.slos if s.type == c.SLO_LATENCY]
    return Thresholds(
        min_request_rate=spec.operational.min_request_rate,
        batching_ratio_max=spec.operational.batching_ratio_max,
        queue_share_high=min(shares) if shares else Thresholds().queue_share_high,
    )


def _slo_spec(path: str | None) -> Any:
    """The SLOs of the report's SLO section: --slo-file's, else the shipped slos.yaml's."""
    from triton_sre.slo import default_spec, load_spec

    return load_spec(path) if path else default_spec()


def _probe_budget(path: str | None) -> float | None:
    """operational.startup_probe_budget of the SLO file, for the startup-probe advice."""
    from triton_sre.slo import load_spec

    return load_spec(path).operational.startup_probe_budget_s if path else None


def build_report(
    prometheus_url: str,
    start: float,
    end: float,
    step: float | None = None,
    thresholds: Any = None,
    scrape_interval: float | None = None,
    triton_job: str = c.DEFAULT_TRITON_JOB,
    probe_budget_s: float | None = None,
    on_note: Callable[[str], None] | None = None,
    timeout: float = c.REPORT_TIMEOUT_SECONDS,
    slo_spec: Any = None,
) -> Any:
    """Query Prometheus and assemble the `CostReport` (charts included); `timeout`: seconds each
    query's whole answer may take.

    Charted rates use a window of at least four scrape intervals (`scrape_interval`, else read from
    Prometheus' configuration for `triton_job`, else 1m). Each query's series are counted before any
    range is read (the SLO section's too, `slo.slo_queries`): without `step`, a query with too many
    series for the default step (TooManySamples) raises it once to the finest step that fits, said
    through `on_note`; with `step`, it is the caller's PromError. The first-response histogram's buckets
    (5 series per model and server) are not counted there: they are read at their own step, the coarser
    of the report's and the one at which they fit (`steps.histogram_step_of`), so the other families'
    figures do not depend on whether a fleet has the histogram. A query read with more series than
    counted (or not counted) makes the report start again at the step that fits (the histogram's own
    step for it).
    """
    from triton_sre.report.figures import HISTOGRAM_BUCKETS
    from triton_sre.report.prom import PrometheusClient, TooManySamples, choose_step
    from triton_sre.report.sections import plan_names
    from triton_sre.report.slo import slo_queries
    from triton_sre.report.steps import fitting, histogram_note, histogram_step_of, raised_note, report_plan
    from triton_sre.ttyprogress import Progress

    chosen = step is None
    step = step or choose_step(start, end)
    client = PrometheusClient(prometheus_url, timeout)
    plan = report_plan(end - start, _cluster(slo_spec))
    counted = {**plan, **(slo_queries(slo_spec, end - start) if slo_spec is not None else {})}
    client.name_plan(plan_names(counted, plan))  # a warning is said per section its query feeds
    counts = {name: client.series_count(query.count, end) for name, query in counted.items()}
    others = {name: series for name, series in counts.items() if name != HISTOGRAM_BUCKETS}
    step = fitting(counted, others, start, end, step, chosen, on_note)
    histogram = plan[HISTOGRAM_BUCKETS].expr
    histogram_step = histogram_step_of(histogram, counts.get(HISTOGRAM_BUCKETS), start, end, step, on_note)
    progress = Progress(sys.stderr) if sys.stderr.isatty() else None
    try:
        while True:  # a query with more series than counted (a fleet growing meanwhile) starts again
            try:
                report = _build(
                    client,
                    plan,
                    counts,
                    start,
                    end,
                    (step, histogram_step),
                    thresholds,
                    scrape_interval,
                    triton_job,
                    probe_budget_s,
                    progress,
                    slo_spec,
                )
                partial, infos = client.notes()  # per report section (report/sections.py)
                return dataclasses.replace(report, partial=partial, infos=infos)
            except TooManySamples as exc:
                if exc.expr == histogram and exc.step is not None and exc.step > histogram_step:
                    histogram_note(exc.series, step, exc.step, on_note)
                    histogram_step = exc.step
                    continue
                if not chosen or exc.step is None or exc.step <= step:
                    raise
                raised_note(exc.series, step, exc.step, on_note)
                step = exc.step
                histogram_step = max(histogram_step, step)
    finally:
        if progress is not None:
            progress.finish()


def _cluster(slo_spec: Any) -> tuple[str, ...]:
    """The spec's cluster label, as the labels the report's rows keep (none without one)."""
    return (slo_spec.cluster_label,) if slo_spec is not None and slo_spec.cluster_label else ()


def _build(
    client: Any,
    plan: Any,
    counts: dict[str, int | None],
    start: float,
    end: float,
    steps: tuple[float, float],
    thresholds: Any,
    scrape_interval: float | None,
    triton_job: str,
    probe_budget_s: float | None,
    progress: Any,
    slo_spec: Any = None,
) -> Any:
    """The report at `steps`: the report's step, and the one the histogram's buckets are read at."""
    from triton_sre.durations import format_duration, parse_duration
    from triton_sre.promql import counter_rate
    from triton_sre.report.capacity import FAMILIES as CAPACITY_FAMILIES
    from triton_sre.report.capacity import REDUCED as CAPACITY_REDUCED
    from triton_sre.report.capacity import capacity_section, fold_valid, reduced_series
    from triton_sre.report.charts import draw_all
    from triton_sre.report.figures import (
        HISTOGRAM_BUCKETS,
        RangeData,
        integrate,
        model_rows,
        model_table,
        pivot_rates,
    )
    from triton_sre.report.increases import increase_rows
    from triton_sre.report.llm import TOKEN_FAMILIES, TTFT_P99_FRAME, llm_table, ttft_p99_expr
    from triton_sre.report.namespaces import (
        clusters_of,
        in_clusters,
        last_sample_expr,
        qualified,
        qualify,
        shared_names,
        silent_clusters,
    )
    from triton_sre.report.prom import each, frame_of, rate_window
    from triton_sre.report.queries import CONFIG_FAMILIES, MODEL_NAMESPACE, THROUGHPUT
    from triton_sre.report.recommend import recommend
    from triton_sre.report.render import CostReport
    from triton_sre.report.sections import LLM, MODELS, SLOS, family_sections
    from triton_sre.report.slo import slo_section
    from triton_sre.report.slo_text import with_unserved
    from triton_sre.report.unserved import slo_unserved, unserved_table

    step, histogram_step = steps
    if progress is not None:
        queries = iter(range(1, 1 << 62))
        client.on_query = lambda: progress.show(
            f"report: {next(queries):,} range queries read ({step:g}s step)"
        )

    def frame(name: str) -> Any:
        return client.frame_range(plan[name].expr, start, end, step, counts.get(name))

    # Triton's counters, the histogram's buckets and the LLM token counters are only needed as their
    # increase per series: reduced as read, no frame
    # (and by cluster, with the spec's cluster_label: a row per cluster, as the rules judge each apart)
    cluster = _cluster(slo_spec)
    keep = (c.LABEL_MODEL, c.LABEL_VERSION, c.LABEL_GPU_UUID, c.LABEL_NAMESPACE, *cluster)
    reduced = {family: keep for family in (*c.PER_MODEL_COUNTERS, *TOKEN_FAMILIES)}
    # the SLO section filters the request counters by the rules' job and failure reasons (report/slo.py);
    # the recommendations leave failures REJECTED/CANCELED in the queue out of the batching bound
    reduced[c.NV_REQUEST_SUCCESS] = (*keep, c.LABEL_JOB)
    reduced[c.NV_REQUEST_FAILURE] = (*keep, c.LABEL_JOB, c.LABEL_REASON)
    reduced[HISTOGRAM_BUCKETS] = (*keep, c.LABEL_LE)
    increases = {
        family: increase_rows(
            client.read_increases(
                plan[family].expr,
                start,
                end,
                histogram_step if family == HISTOGRAM_BUCKETS else step,
                labels,
                counts.get(family),
            )
        )
        for family, labels in reduced.items()
    }

    def one_sample(family: str) -> Any:
        """The frame of the one sample per series the capacity section reads (`reduced_series`)."""
        expr, series = plan[family].expr, counts.get(family)
        return frame_of(
            reduced_series(
                family, client.read_reduced(expr, start, end, step, None, each(fold_valid), series)
            )
        )

    # the capacity families but the energy cost: reduced as read to one sample per series
    capacity_frames = {family: one_sample(family) for family in CAPACITY_REDUCED}
    # the model config's facts: the range's last sample per model (the config the advice is about)
    config_frames = {family: one_sample(family) for family in CONFIG_FAMILIES}
    skip = {*increases, *capacity_frames, *config_frames, THROUGHPUT}
    frames = {name: frame(name) for name in plan if name not in skip} | config_frames
    capacity_frames.update({family: frames.pop(family) for family in CAPACITY_FAMILIES if family in frames})
    ttft = ttft_p99_expr(end - start, triton_job, cluster)
    frames[TTFT_P99_FRAME] = client.frame_range(client.named(ttft, TTFT_P99_FRAME, LLM), end, end, step)
    # same-named models of two namespaces (Triton's model namespacing) are rows of their own; the SLO
    # section keeps the rules' level, the model name (its own `increases`)
    slo_increases = increases
    slo_states = capacity_frames[c.M_MODEL_STATE]  # the rules judge bare names per cluster
    shared = shared_names([*increases.values(), *frames.values(), *capacity_frames.values()])
    increases, frames = qualify(increases, shared), qualify(frames, shared)
    capacity_frames = qualify(capacity_frames, shared)
    # a global store's clusters: `<cluster>/<model>` rows once it holds two (report/namespaces.py)
    label = cluster[0] if cluster else None
    clusters = clusters_of([*increases.values(), *frames.values(), *capacity_frames.values()], label)
    increases = {name: in_clusters(f, label, clusters) for name, f in increases.items()}
    frames = {name: in_clusters(f, label, clusters) for name, f in frames.items()}
    capacity_frames = {name: in_clusters(f, label, clusters) for name, f in capacity_frames.items()}
    data = RangeData(start, end, step, frames, increases)
    table, summary = model_table(data)
    recs = recommend(table, summary.idle_fraction, thresholds)
    scrape = scrape_interval or client.scrape_interval(triton_job) or DEFAULT_SCRAPE_INTERVAL_S
    window = format_duration(rate_window(step, scrape))
    rate = counter_rate(c.NV_INFERENCE_COUNT, [], window, (*MODEL_NAMESPACE, *cluster))
    throughput = client.frame_range(
        client.named(rate, THROUGHPUT, *family_sections(THROUGHPUT)),
        start,
        end,
        step,
        counts.get(THROUGHPUT),
    )
    throughput = in_clusters(qualified(throughput, shared), label, clusters)
    charts = draw_all(model_rows(table), pivot_rates(throughput), summary.currency)
    cost = integrate(data.frame(c.M_COST_PER_HOUR), step)  # a Series per model (the main table's cost)
    llm = llm_table(frames, cost, end - start, increases)
    capacity = capacity_section(capacity_frames, step, probe_budget_s)
    unserved = unserved_table(capacity.states, capacity_frames[c.M_MODEL_UNAVAILABLE])
    slos = None
    if slo_spec is not None:  # its per-step queries feed it (their rate window is the charts')
        with client.feeding(SLOS):
            slos = slo_section(client, slo_spec, (start, end, step), window, slo_increases, counts)
        states = slo_unserved(slo_states, slo_spec.cluster_label)  # no data is no met objective (slo_text)
        slos = with_unserved(dataclasses.replace(slos, unserved=states), slo_spec.slos)
    silent = []
    if label and len(clusters) > 1:  # a cluster whose samples stopped: said, not read as a quiet one
        last_expr = client.named(last_sample_expr(label, triton_job), "last sample per cluster", MODELS)
        last = client.frame_range(last_expr, start, end, step)
        after = max(3 * step, parse_duration(c.CLUSTER_SILENT_AFTER, "silent"))
        silent = silent_clusters(last, label, end, after)
    parts = (table, summary, recs, charts, llm, capacity, slos, unserved, silent)
    return CostReport(start, end, step, client.source_url, *parts)


def _now(prometheus_url: str, timeout: float) -> tuple[float, str]:
    """Now by Prometheus' clock (`time()` there) and where it was read: a range ending at this machine's
    clock, minutes ahead, ended past the data (the missing minutes divided every rate: 10 minutes ahead
    on `--last 1h` read 10 req/s as 8.3). This machine's clock when Prometheus does not answer (the
    report's first query then says why)."""
    from triton_sre.prom import PromError, Prometheus

    try:
        return Prometheus(prometheus_url, timeout).now(), "by Prometheus' clock"
    except PromError:
        return time.time(), "on this machine"


def run_report(args: argparse.Namespace) -> int:
    from triton_sre.durations import parse_duration
    from triton_sre.prom import PromError
    from triton_sre.report.outputs import write_report
    from triton_sre.report.prom import MAX_SAMPLES_PER_QUERY, smallest_step
    from triton_sre.slo import SpecError

    formats = tuple(f.strip() for f in args.format.split(",") if f.strip())
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        _err(f"--format: {', '.join(unknown) or 'empty'}: choose among {', '.join(FORMATS)}")
        return c.EXIT_USAGE
    try:
        end, clock = (parse_time(args.end), "") if args.end else _now(args.prometheus_url, args.timeout)
        start = parse_time(args.start) if args.start else end - parse_duration(args.last, "--last")
        thresholds = _thresholds(args.slo_file)
        budget = _probe_budget(args.slo_file)
        slo_spec = _slo_spec(args.slo_file)
        scrape = parse_duration(args.scrape_interval, "--scrape-interval") if args.scrape_interval else None
    except (ValueError, SpecError, OSError) as exc:
        _err(str(exc))
        return c.EXIT_USAGE
    if start < 0:
        _err(f"--last {bounded(args.last)} reaches before 1970-01-01 (Unix time 0): give a shorter one")
        return c.EXIT_USAGE
    if start >= end:
        if args.end:
            _err("the range is empty: --start must be before --end")
        else:  # --end is now: a start in the future (a wrong day, a clock) is no empty range given
            now = utc_text(end)
            _err(f"--start {utc_text(start)} is in the future (--end defaults to now, {now} {clock})")
        return c.EXIT_USAGE
    if args.step is not None and args.step <= 0:
        _err("--step must be > 0")
        return c.EXIT_USAGE
    if args.step is not None and args.step < smallest_step(start, end):
        _err(
            f"--step {args.step:g}: the range would need more than {MAX_SAMPLES_PER_QUERY:,} points per "
            f"series (what the report reads per query); the smallest step for this range is "
            f"{smallest_step(start, end):g}s"
        )
        return c.EXIT_USAGE
    try:
        report = build_report(
            args.prometheus_url,
            start,
            end,
            args.step,
            thresholds,
            scrape,
            probe_budget_s=budget,
            on_note=_err,
            timeout=args.timeout,
            slo_spec=slo_spec,
        )
    except PromError as exc:
        _err(str(exc))
        return c.EXIT_USAGE
    from triton_sre.shutdown import unwinding_on_stop

    try:
        with unwinding_on_stop():  # SIGTERM or SIGHUP while writing: no temp file left in --out
            written = write_report(report, Path(args.out), formats)
    except OSError as exc:
        from triton_sre.redact import shown_path

        _err(f"cannot write to {shown_path(exc.filename or args.out)}: {exc.strerror or exc}")
        return c.EXIT_USAGE  # an output that cannot be written, as every command says it
    if report.table.empty:
        _err(
            "no model served or cost anything in the range (is Prometheus scraping Triton and the exporter?)"
        )
    for said, notes in (("partial data", report.partial), ("Prometheus info", report.infos)):
        for section, note in notes:  # per report section (report/sections.py)
            _err(f"{said} in {section}: {note}")
    s = report.summary
    print(
        f"{s.models} model(s), {s.inferences:,.0f} inferences, "
        f"{len(report.recommendations)} recommendation(s)"
    )
    for path in written:
        if path.suffix != ".png":
            print(path)
    return c.EXIT_OK
