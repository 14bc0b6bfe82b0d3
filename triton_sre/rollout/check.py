"""`triton-sre rollout check`: the canary verdict from Prometheus (raw Triton metrics, no rules needed).

I/O edge of the rollout package: builds the sides from the flags, runs one range query per figure
and side (triton_sre/prom.py), hands the samples to model.judge and prints the verdict.
Exit codes: 0 pass, 1 fail, 3 inconclusive (too little traffic, or --deadline reached before every
query was answered), 2 usage error (Prometheus unreachable included).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from array import array
from pathlib import Path
from typing import Any

from triton_sre import conventions as c
from triton_sre.checks import name_arg, path_arg
from triton_sre.durations import duration_arg, format_duration, parse_duration, seconds_arg
from triton_sre.prom import PromError, Prometheus
from triton_sre.redact import bounded, printable
from triton_sre.rollout.instant import default_step, dynamic_batcher, ensembles, replaced_pods, restarts
from triton_sre.rollout.live import MAX_POINTS_PER_READ, collect, serving_clusters, smallest_step
from triton_sre.rollout.model import NO_DATA, Verdict, judge, with_ensembles, with_restarts
from triton_sre.rollout.namespaces import mixed_namespaces_note, side_namespaces, with_namespaces
from triton_sre.rollout.sides import Side, in_cluster, model_sides, parse_selector, version_sides
from triton_sre.rollout.spec import RolloutSpec
from triton_sre.slo import DEFAULT_SPEC_FILE, SpecError, default_spec, load_spec

DEFAULT_DEADLINE_S = 60.0
"""The whole check's default deadline: ~18 queries, each answered in well under a second by a
healthy Prometheus; one answering each just under --timeout (10 s) would take three minutes."""
EXIT_BY_VERDICT = {
    c.ROLLOUT_PASS: c.EXIT_OK,
    c.ROLLOUT_FAIL: c.EXIT_FAILURE,
    c.ROLLOUT_INCONCLUSIVE: c.EXIT_INCONCLUSIVE,
}


def add_rollout_parser(commands: Any, epilog: str) -> None:
    rollout = commands.add_parser(
        "rollout",
        help="safe rollouts: compare a candidate (version, blue/green model, pods) with its baseline",
        description="Canary verdicts for Triton model versions, blue/green pairs and container upgrades.",
        epilog=epilog,
    )
    actions = rollout.add_subparsers(dest="rollout_command", metavar="ACTION", required=True)
    check = actions.add_parser(
        "check",
        help="pass / fail / inconclusive verdict from Prometheus",
        description=(
            "Compare the candidate with the baseline over --window from Triton's raw metrics in Prometheus: "
            "error ratio, p99/p50 request latency, queue share, compute time per inference, batching ratio, "
            "LLM TTFT and time per output token. A figure fails when the candidate is worse by more than its "
            "margin (slos.yaml rollout.margins) and a one-sided Mann-Whitney test on per-interval samples "
            "gives p < alpha. Exit codes: 0 pass, 1 fail, 3 inconclusive (too little traffic on a side, or "
            "--deadline reached before every query was answered), 2 usage error."
        ),
        epilog=epilog,
    )
    check.add_argument(
        "--prometheus", "--prometheus-url", dest="prometheus", required=True, help="Prometheus base URL"
    )
    check.add_argument("--model", type=name_arg, help="the model whose two versions are compared")
    check.add_argument("--baseline-version", type=name_arg, help="the version serving today")
    check.add_argument("--candidate-version", type=name_arg, help="the new version")
    check.add_argument("--baseline-model", type=name_arg, help="blue/green: the model name serving today")
    check.add_argument("--candidate-model", type=name_arg, help="blue/green: the new model name")
    check.add_argument(
        "--pair",
        type=name_arg,
        help="blue/green: the name of a pair in the spec's rollout.pairs (instead of both models)",
    )
    check.add_argument(
        "--baseline-selector",
        type=name_arg,
        help='pods: label matchers of the old pods, e.g. pod=~"triton-stable-.*"',
    )
    check.add_argument("--candidate-selector", type=name_arg, help="pods: label matchers of the new pods")
    check.add_argument(
        "--window",
        type=duration_arg,
        default=None,
        help="how far back to compare, a duration such as 15m (default: rollout.window, 15m)",
    )
    check.add_argument(
        "--step",
        type=duration_arg,
        default=None,
        help=(
            "sample interval, a duration such as 30s (default: window / 30, at least 3 scrapes, "
            "read from the samples' own spacing; at most 1,000,000 points per window)"
        ),
    )
    check.add_argument(
        "--job", type=name_arg, help="Triton's scrape job (default: the spec's scrape.triton_job)"
    )
    check.add_argument(
        "--cluster",
        type=name_arg,
        help=(
            "on a global store (Thanos, Mimir, VictoriaMetrics, a remote-write receiver): compare only this "
            "cluster's series, by the spec's cluster_label (default label: cluster); without it the sides "
            "sum every cluster's series"
        ),
    )
    check.add_argument(
        "--spec",
        "--slo-file",
        type=path_arg,
        default=None,
        help=f"SLO spec with the margins (default ./{DEFAULT_SPEC_FILE} if present)",
    )
    check.add_argument(
        "--timeout", type=seconds_arg, default=10.0, help="seconds per Prometheus query (default 10)"
    )
    check.add_argument(
        "--deadline",
        type=seconds_arg,
        default=DEFAULT_DEADLINE_S,
        help=(
            f"seconds for the whole check, every query together (default {DEFAULT_DEADLINE_S:g}): past it "
            "the check stops, shows what it read, names the queries it did not get to and exits 3"
        ),
    )
    check.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    check.set_defaults(handler=run_check)


def _pair_models(name: str, rs: RolloutSpec) -> tuple[str, str]:
    """(baseline, candidate) model names of the declared pair `name`; SpecError if none is."""
    for pair in rs.pairs:
        if pair.name == name:
            return pair.baseline, pair.candidate
    declared = ", ".join(p.name for p in rs.pairs) or "none declared"
    raise SpecError(f"--pair {name!r}: not a pair of the spec's rollout.pairs ({declared})")


NAME_FLAGS = (
    "model",
    "baseline_version",
    "candidate_version",
    "baseline_model",
    "candidate_model",
    "pair",
    "baseline_selector",
    "candidate_selector",
    "job",
    "cluster",
)


def _check_utf8(args: argparse.Namespace) -> None:
    """SpecError for a name flag holding bytes that are not UTF-8 (Python keeps them as surrogates):
    it could not be sent in a query (it was `internal error: UnicodeEncodeError`)."""
    for name in NAME_FLAGS:
        value = getattr(args, name, None)
        if value and any("\ud800" <= char <= "\udfff" for char in value):
            shown = bounded(value.encode("utf-8", "surrogateescape"))[1:]  # the bytes given: 'm\xff'
            raise SpecError(f"--{name.replace('_', '-')}: not valid UTF-8: {shown}")


def _sides(args: argparse.Namespace, job: str, rs: RolloutSpec) -> tuple[Side, Side]:
    """The two sides from exactly one of the three flag pairs (or --pair); SpecError naming the
    problem otherwise."""
    _check_utf8(args)
    versions = (args.baseline_version, args.candidate_version)
    models = (args.baseline_model, args.candidate_model)
    if args.pair:
        if any(models):
            raise SpecError("--pair names both models: give it without --baseline-/--candidate-model")
        models = _pair_models(args.pair, rs)
    selectors = (args.baseline_selector, args.candidate_selector)
    given = [
        name
        for name, pair in (("version", versions), ("model", models), ("selector", selectors))
        if any(pair)
    ]
    if len(given) != 1:
        raise SpecError(
            "give exactly one pair: --baseline/--candidate-version, -model or -selector, or --pair"
        )
    kind = given[0]
    pair = {"version": versions, "model": models, "selector": selectors}[kind]
    if not all(pair):
        raise SpecError(f"--baseline-{kind} and --candidate-{kind} go together")
    if kind == "version":
        if not args.model:
            raise SpecError("--baseline-version/--candidate-version need --model")
        return version_sides(job, args.model, *versions)
    if kind == "model":
        return model_sides(job, *models)
    job_m = (c.LABEL_JOB, "=", job)
    model_m = ((c.LABEL_MODEL, "=", args.model),) if args.model else ()
    try:
        return tuple(Side(s, (job_m, *model_m, *parse_selector(s))) for s in selectors)  # type: ignore[return-value]
    except ValueError as exc:
        raise SpecError(str(exc)) from None


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "s":
        return f"{value * 1e3:.2f} ms"
    return f"{value:.4g}"


def render_text(verdict: Verdict) -> str:
    """The verdict for a terminal: names from the flags shown escaped (`printable`), as any text is."""
    cand, base = printable(verdict.candidate.label), printable(verdict.baseline.label)
    lines = [
        f"rollout {verdict.verdict.upper()}: {cand} vs {base}: {printable(verdict.reason)}",
        f"requests/s: baseline {verdict.request_rate[0]:.3g}, candidate {verdict.request_rate[1]:.3g}",
        "",
        f"{'figure':<22} {'baseline':>12} {'candidate':>12} {'difference':>12} {'margin':>10} {'p':>8}"
        "  verdict",
    ]
    for r in verdict.figures:
        unit = r.figure.unit
        margin = f"{r.margin:.0%}" if r.figure.relative else f"{r.margin:g}"
        p = "-" if r.p_value is None else f"{r.p_value:.3g}"
        diff = r.difference
        diff_text = "-" if diff is None else (f"{diff * 1e3:+.2f} ms" if unit == "s" else f"{diff:+.4g}")
        lines.append(
            f"{r.figure.name:<22} {_fmt(r.baseline, unit):>12} {_fmt(r.candidate, unit):>12} "
            f"{diff_text:>12} {margin:>10} {p:>8}  {r.verdict if r.verdict != NO_DATA else 'no data'}"
        )
    return "\n".join(lines)


def run_check(args: argparse.Namespace) -> int:
    spec_path = args.spec or (Path(DEFAULT_SPEC_FILE) if Path(DEFAULT_SPEC_FILE).is_file() else None)
    spec = load_spec(spec_path) if spec_path else default_spec()
    rs = spec.rollout
    job = args.job or spec.triton_job
    sides = _sides(args, job, rs)
    if args.cluster:
        sides = in_cluster(sides, spec.cluster_label or c.LABEL_CLUSTER, args.cluster)
    if set(sides[0].matchers) == set(sides[1].matchers):  # it could only pass: nothing to compare
        raise SpecError(
            f"the baseline and the candidate are the same series ({printable(sides[0].label)}): "
            "nothing to compare"
        )
    window_s: float = args.window or parse_duration(rs.window, "rollout.window")
    step_s: float | None = args.step
    if step_s is not None and step_s < (finest := smallest_step(window_s)):
        step, window, smallest = (format_duration(x) for x in (step_s, window_s, finest))
        print(
            f"triton-sre rollout check: --step {step}: a {window} window would need more than "
            f"{MAX_POINTS_PER_READ:,} points per figure; the smallest step for it is {smallest}",
            file=sys.stderr,
        )
        return c.EXIT_USAGE
    prom = Prometheus(args.prometheus, timeout=args.timeout, budget=args.deadline)
    not_read: list[tuple[str, str]] = []
    namespaces: tuple[list[str], ...] | None = None
    stopped: list[array[float]] = []
    try:
        step_s = step_s or default_step(prom, job, window_s, sides[0].matchers)
        label = spec.cluster_label or c.LABEL_CLUSTER
        samples = collect(
            prom,
            sides,
            window_s,
            step_s,
            spec.latency_metrics,
            not_read,
            label,
            exporter_job=spec.exporter_job,
            stopped=stopped,
        )
    except PromError as exc:
        print(f"triton-sre rollout check: {exc}", file=sys.stderr)
        return c.EXIT_USAGE
    batcher = None
    if not not_read:
        try:
            batcher = dynamic_batcher(
                prom, sides, spec.cluster_label or c.LABEL_CLUSTER, exporter_job=spec.exporter_job
            )
        except PromError as exc:  # the figures are read: the verdict stands, as if no exporter said
            print(f"triton-sre rollout check: dynamic batching not read: {exc}", file=sys.stderr)
    verdict = judge(*sides, samples, rs, batcher, stopped)
    if not args.cluster:
        _several_clusters_note(prom, sides, spec, window_s)
    if not not_read:
        try:
            counts = restarts(prom, sides, window_s), replaced_pods(prom, sides, window_s)
            verdict = with_restarts(verdict, *counts)
        except PromError as exc:  # read after the figures: the verdict stands without it
            print(f"triton-sre rollout check: restarts not read: {exc}", file=sys.stderr)
        try:
            marked = ensembles(
                prom, sides, spec.cluster_label or c.LABEL_CLUSTER, exporter_job=spec.exporter_job
            )
            verdict = with_ensembles(verdict, marked)
        except PromError as exc:
            print(f"triton-sre rollout check: ensembles not read: {exc}", file=sys.stderr)
        try:
            namespaces = side_namespaces(prom, sides, window_s)
        except PromError as exc:
            print(f"triton-sre rollout check: namespaces not read: {exc}", file=sys.stderr)
            if verdict.verdict == c.ROLLOUT_PASS:
                verdict = dataclasses.replace(verdict, verdict=c.ROLLOUT_INCONCLUSIVE, reason=UNREAD_PASS)
        else:
            verdict = _namespaces_said(verdict, namespaces)
    if not_read:
        verdict = _unfinished(verdict, args.deadline, len(not_read))
    if prom.warnings and verdict.verdict == c.ROLLOUT_PASS:
        verdict = dataclasses.replace(verdict, verdict=c.ROLLOUT_INCONCLUSIVE, reason=PARTIAL_PASS)
    said = {"warnings": prom.warnings, "infos": prom.infos}
    if args.format == "json":
        body = verdict.as_dict()
        if namespaces is not None and any(namespaces):
            body["namespaces"] = dict(zip(("baseline", "candidate"), namespaces, strict=True))
        if not_read:
            body["not_read"] = [{"figure": name, "side": side} for name, side in not_read]
        body |= {key: [{"query": q, "text": t} for q, t in found] for key, found in said.items() if found}
        print(json.dumps(body, indent=2))
    else:
        print(render_text(verdict))
        if not_read:
            print(f"\nnot read: {', '.join(f'{name} ({side})' for name, side in not_read)}")
        notes = [f"Prometheus {key[:-1]}: {text}" for key, found in said.items() for _, text in found]
        if notes:
            print("\n" + "\n".join(printable(note) for note in notes))
    return EXIT_BY_VERDICT[verdict.verdict]


def _several_clusters_note(prom: Prometheus, sides: tuple[Side, Side], spec: Any, window_s: float) -> None:
    """On stderr: the sides' models (each side's `model=` matcher: one for versions, two blue/green,
    none for a selector naming no model) served requests in several clusters of the store and no
    --cluster was given (journey28: on a global store the sides summed east's failing canary with
    west's healthy one)."""
    models = sorted({v for s in sides for name, op, v in s.matchers if (name, op) == (c.LABEL_MODEL, "=")})
    served: dict[str, list[str]] = {}
    try:
        for model in models:
            served[model] = serving_clusters(prom, model, spec, window_s)
    except PromError as exc:
        print(f"triton-sre rollout check: clusters not read: {exc}", file=sys.stderr)
        return
    clusters = sorted({cluster for found in served.values() for cluster in found})
    if len(clusters) > 1:
        label = spec.cluster_label or c.LABEL_CLUSTER
        names = " and ".join(printable(model) for model, found in served.items() if found)
        print(
            f"triton-sre rollout check: {names} served requests in {len(clusters)} clusters "
            f"({label}: {printable(', '.join(clusters))}) and no --cluster was given: each side sums "
            "them; give --cluster to judge one",
            file=sys.stderr,
        )


def _namespaces_said(verdict: Verdict, namespaces: tuple[list[str], ...]) -> Verdict:
    """`with_namespaces`, its note also on stderr (as the clusters' one) for a pipeline's log."""
    judged = with_namespaces(verdict, namespaces)
    if judged is not verdict:
        print(f"triton-sre rollout check: {mixed_namespaces_note(verdict, namespaces)}", file=sys.stderr)
    return judged


UNREAD_PASS = (
    "no figure is worse beyond its margin, but the namespaces each side served in could not be read: "
    "a side may sum two models of one name (model namespacing), and a pass on such a sum is not a pass"
)
PARTIAL_PASS = (
    "no figure is worse beyond its margin, but Prometheus warned that its answers may be partial "
    "(a store or shard not answering, a limit hit): a pass on partial data is not a pass"
)


def _unfinished(verdict: Verdict, deadline_s: float, missing: int) -> Verdict:
    """The verdict of a check stopped by --deadline: inconclusive, whatever the figures read say (a
    figure read may already fail: named)."""
    failed = [r.figure.name for r in verdict.figures if r.verdict == c.ROLLOUT_FAIL]
    reason = f"--deadline {deadline_s:g}s reached with {missing} queries not read; judged on what was read"
    if failed:
        reason += f" (already worse beyond the margin: {', '.join(failed)})"
    return dataclasses.replace(verdict, verdict=c.ROLLOUT_INCONCLUSIVE, reason=reason)
