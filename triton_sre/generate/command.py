"""`triton-sre generate`: slos.yaml -> alerts/*.yaml, alerts/tests/*.yaml, dashboards/*.json.

Everything is rendered in memory first; nothing is written unless the whole spec is valid, and
the same input always gives byte-identical files. `--check` writes nothing and exits 1 naming
every file that is missing or differs.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from triton_sre import conventions as c
from triton_sre.checks import runbook_base_arg
from triton_sre.files import stale_files, write_files
from triton_sre.generate import families
from triton_sre.generate.rulefile import render_yaml
from triton_sre.slo import DEFAULT_SPEC_FILE, Spec, SpecError, load_spec, spec_warnings

DEFAULT_SPEC = DEFAULT_SPEC_FILE
ALERTS_DIR = "alerts"
TESTS_DIR = "alerts/tests"
DASHBOARDS_DIR = "dashboards"
_NEVER = 2**31 - 1  # the largest threshold gc.set_threshold takes (a C int)


@contextlib.contextmanager
def no_full_collections() -> Iterator[None]:
    """No full (oldest-generation) garbage collection while the spec's documents are built.

    `generate` holds every document it builds until it writes them (millions of dicts and lists at
    thousands of SLOs, none garbage). CPython's full collection walks every one of them each time, and
    the longer the run the more often it comes: at 10,000 SLOs 24 full collections took 14 s of 67
    (bench/RESULTS.md, nineteenth session), more than linear in SLOs. The young generations are
    still collected, so short-lived cycles are freed as before; the threshold is restored after
    (nested uses keep the outer one's)."""
    before = gc.get_threshold()
    gc.set_threshold(before[0], before[1], _NEVER)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def render_all(spec: Spec, base_url: str = c.DEFAULT_RUNBOOK_BASE_URL) -> dict[str, str]:
    """Relative path -> file content for every generated artifact.

    Rule families (and their promtool tests) are registered in generate/families.py (FAMILIES),
    dashboards in generate/dashboards.py (DASHBOARDS). Dashboards are imported here, not at the top:
    the CLI builds this command's parser for every command, and only generate needs grafanalib.
    """
    from triton_sre.generate import dashboards  # grafanalib: the [generate] extra

    source = Path(spec.source).name
    files: dict[str, str] = {}
    with no_full_collections():
        rules = families.rule_files(spec, base_url)
        for name, doc in rules.items():
            files[f"{ALERTS_DIR}/{name}"] = render_yaml(doc, source)
        for name, doc in families.test_files(spec, base_url, rules).items():
            files[f"{TESTS_DIR}/{name}"] = render_yaml(doc, source)
        for name, board in dashboards.dashboards(spec, base_url).items():
            files[f"{DASHBOARDS_DIR}/{name}"] = dashboards.render_json(board)
    return dict(sorted(files.items()))


def add_generate_parser(commands: Any, epilog: str) -> None:
    gen = commands.add_parser(
        "generate",
        help="generate recording rules, SLO burn-rate and operational alerts, promtool tests, dashboards",
        description=(
            "Read the SLO spec and write alerts/*.yaml (Prometheus rules), alerts/tests/*.yaml (promtool "
            "unit tests), dashboards/*.json (Grafana) and deploy/ (the stack's Prometheus, Alertmanager, "
            "Grafana and Kubernetes files) under --out. Output is deterministic. With --check "
            "nothing is written and the exit code is 1 if any file is missing or stale."
        ),
        epilog=f"{epilog}; with --check, 1 means generated files are stale",
    )
    gen.add_argument("--spec", type=Path, default=Path(DEFAULT_SPEC), help="SLO spec (default: ./slos.yaml)")
    gen.add_argument("--out", type=Path, default=Path("."), help="directory to write into (default: .)")
    gen.add_argument(
        "--runbook-base-url",
        type=runbook_base_arg,
        default=c.DEFAULT_RUNBOOK_BASE_URL,
        help=(
            "prefix of every alert's runbook_url, e.g. https://github.com/ORG/REPO/blob/main/runbooks/ "
            f"(default: the repository path {c.DEFAULT_RUNBOOK_BASE_URL})"
        ),
    )
    gen.add_argument("--check", action="store_true", help="exit 1 if the files on disk are not up to date")
    gen.set_defaults(handler=run_generate)


def run_generate(args: argparse.Namespace) -> int:
    with no_full_collections():  # the spec's documents too, and deploy/
        return _generate(args)


def _generate(args: argparse.Namespace) -> int:
    try:
        spec = load_spec(args.spec)
    except SpecError as exc:
        print(f"triton-sre generate: invalid SLO spec: {exc}", file=sys.stderr)
        return c.EXIT_USAGE
    for warning in [*spec_warnings(spec), *families.warnings(spec)]:
        print(f"triton-sre generate: warning: {warning}", file=sys.stderr)
    base = str(args.runbook_base_url)  # not empty, no template braces (checks.runbook_base_arg)
    from triton_sre.stack.render import deploy_files  # jinja2: the [generate] extra

    files = {**render_all(spec, base), **deploy_files(spec, base)}  # + deploy/ (compose, k8s)
    out: Path = args.out
    if args.check:
        stale = stale_files(files, out)
        if stale:
            print(
                f"triton-sre generate --check: {len(stale)} generated file(s) are stale or missing; "
                f"run `triton-sre generate --spec {args.spec}`:",
                file=sys.stderr,
            )
            for rel in stale:
                print(f"  {out / rel}", file=sys.stderr)
            return c.EXIT_FAILURE
        print(f"{len(files)} generated files are up to date with {args.spec}")
        return c.EXIT_OK
    written = write_files(files, out)
    print(f"generated {len(files)} files from {args.spec} into {out}/ ({len(written)} changed)")
    for rel in files:
        print(f"  {out / rel}")
    return c.EXIT_OK
