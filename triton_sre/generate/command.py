"""`triton-sre generate`: slos.yaml -> alerts/*.yaml, alerts/tests/*.yaml, dashboards/*.json.

Each file is written as it is rendered, a piece at a time, to a temp file next to its place
(files.StagedFiles), and the changed ones are renamed into place only once every file rendered:
nothing is written unless the whole spec is valid and renders. The temp files a run killed outright left
(SIGKILL) are removed by the next run, `--check` included. The same input always gives
byte-identical files. `--check` writes nothing, compares each file with the one on disk as it is
rendered, and exits 1 naming every file that is missing or differs.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

from triton_sre import conventions as c
from triton_sre.checks import path_arg, runbook_base_arg
from triton_sre.files import StagedFiles
from triton_sre.generate import families
from triton_sre.generate.rulefile import ReadGraph, Writer, YamlListWriter
from triton_sre.shutdown import unwinding_on_stop
from triton_sre.slo import DEFAULT_SPEC_FILE, Spec, SpecError, load_spec, spec_warnings

DEFAULT_SPEC = DEFAULT_SPEC_FILE
ALERTS_DIR = "alerts"
TESTS_DIR = "alerts/tests"
DASHBOARDS_DIR = "dashboards"
TESTS_KEY = "tests"  # a promtool test file's list of test groups
RULES_KEY = "groups"  # a rule file's list of rule groups (its only key)
_NEVER = 2**31 - 1  # the largest threshold gc.set_threshold takes (a C int)


@contextlib.contextmanager
def no_full_collections() -> Iterator[None]:
    """No full (oldest-generation) garbage collection while the spec's documents are built.

    `generate` held every document it built until it wrote them (millions of dicts and lists at
    thousands of SLOs, none garbage); CPython's full collection walked every one of them each time:
    at 10,000 SLOs 24 full collections took 14 s of 67 (bench/RESULTS.md, nineteenth session). Now
    each document is written as it is built, but the spec and the rule documents (held until deploy/
    is written) are still walked: without this, 10,000 SLOs took ~1 s more CPU (31.1-31.8 s against
    30.0-30.8 s, "generate without holding every document"). The young generations are still
    collected, so short-lived cycles are freed as before; the threshold is restored after (nested uses
    keep the outer one's)."""
    before = gc.get_threshold()
    gc.set_threshold(before[0], before[1], _NEVER)
    try:
        yield
    finally:
        gc.set_threshold(*before)


class _Text(io.StringIO):
    """A file rendered in memory (render_all): closing it keeps its text."""

    def __init__(self, files: dict[str, str], rel: str) -> None:
        super().__init__()
        self.files, self.rel = files, rel

    def close(self) -> None:
        self.files[self.rel] = self.getvalue()
        super().close()


class _InMemory:
    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    def open(self, rel: str) -> _Text:
        return _Text(self.texts, rel)


def render_all(spec: Spec, base_url: str = c.DEFAULT_RUNBOOK_BASE_URL) -> dict[str, str]:
    """Relative path -> file content for every generated artifact but deploy/ (what `generate`
    writes, rendered in memory)."""
    files = _InMemory()
    emit(spec, base_url, files, deploy=False)
    return dict(sorted(files.texts.items()))


class Files(Protocol):
    def open(self, rel: str) -> Writer: ...


def emit(spec: Spec, base_url: str, files: Files, deploy: bool = True) -> None:
    """Render every generated file into `files`, a piece at a time, each document built when its
    turn comes and dropped once written: the rule files a rule group at a time, each group written
    to its alerts/ file and to deploy/'s PrometheusRule as it is built (only what the promtool tests'
    evaluation order needs is kept of it: ReadGraph), the rest of deploy/, then the tests a family
    at a time, a test group at a time (the SLO family's are built an SLO at a time), then the
    dashboards.

    Rule families (and their promtool tests) are registered in generate/families.py (FAMILIES),
    dashboards in generate/dashboards.py (DASHBOARDS). Dashboards (grafanalib) and deploy/ (jinja2)
    are imported here, not at the top: the CLI builds this command's parser for every command, and
    only generate needs them (the [generate] extra).
    """
    from triton_sre.generate import dashboards

    source = spec.origin_name
    with no_full_collections():
        streams = families.test_streams(spec, base_url, _rule_files(spec, base_url, files, deploy))
        if deploy:
            from triton_sre.stack.render import deploy_pieces

            for rel, pieces in deploy_pieces(spec, base_url, prometheus_rule=False):
                _write(files, rel, pieces)
        for heads, groups in streams:
            _write_tests(files, source, heads, groups)
        for name, board in dashboards.dashboards(spec, base_url).items():
            _write(files, f"{DASHBOARDS_DIR}/{name}", [dashboards.render_json(board)])


def _rule_files(spec: Spec, base_url: str, files: Files, deploy: bool) -> ReadGraph:
    """alerts/'s rule files and (with `deploy`) deploy/'s PrometheusRule, every group written to both
    as it is built and then dropped; what the tests need of the groups is returned."""
    source = spec.origin_name
    graph = ReadGraph()
    both = None
    if deploy:
        from triton_sre.stack.render import K8S_PROMETHEUSRULE_FILE, prometheus_rule_writer

        both = prometheus_rule_writer(spec, files.open(f"{c.DEPLOY_DIR}/{K8S_PROMETHEUSRULE_FILE}"))
    for family in families.FAMILIES:
        out = YamlListWriter(files.open(f"{ALERTS_DIR}/{family.file}"), source, {}, (RULES_KEY,))
        for group in graph.passing(family.file, families.rule_groups(family, spec, base_url)):
            out.add(group)
            if both is not None:
                both.add(group)
        out.close()
    if both is not None:
        both.close()
    return graph


def _write(files: Files, rel: str, pieces: Iterable[str]) -> None:
    out = files.open(rel)
    for piece in pieces:
        out.write(piece)
    out.close()


def _write_tests(files: Files, source: str, heads: dict[str, Any], groups: Iterator[tuple[str, Any]]) -> None:
    """One family's promtool test files, open together, each group written as soon as it is built."""
    out = {
        name: YamlListWriter(files.open(f"{TESTS_DIR}/{name}"), source, head, (TESTS_KEY,))
        for name, head in heads.items()
    }
    for name, group in groups:
        out[name].add(group)
    for file in out.values():
        file.close()


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
    gen.add_argument(
        "--spec",
        "--slo-file",
        type=path_arg,
        default=Path(DEFAULT_SPEC),
        help="SLO spec, - for standard input (default: ./slos.yaml)",
    )
    gen.add_argument("--out", type=path_arg, default=Path("."), help="directory to write into (default: .)")
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
    out: Path = args.out
    with unwinding_on_stop(), StagedFiles(out, write=not args.check) as files:  # SIGTERM: no temps left
        emit(spec, base, files)  # + deploy/ (compose, k8s)
        written = [] if args.check else files.commit()
    for path in files.swept:  # (a run killed outright leaves its temp files: files.sweep_leftovers)
        print(f"triton-sre generate: removed {path}, a temp file a killed run left", file=sys.stderr)
    names = sorted(files.names)
    if args.check:
        stale = sorted(files.stale)
        if stale:
            print(
                f"triton-sre generate --check: {len(stale)} generated file(s) are stale or missing; "
                f"run `triton-sre generate --spec {args.spec}`:",
                file=sys.stderr,
            )
            for rel in stale:
                print(f"  {out / rel}", file=sys.stderr)
            return c.EXIT_FAILURE
        print(f"{len(names)} generated files are up to date with {args.spec}")
        return c.EXIT_OK
    print(f"generated {len(names)} files from {args.spec} into {out}/ ({len(written)} changed)")
    for rel in names:
        print(f"  {out / rel}")
    return c.EXIT_OK
