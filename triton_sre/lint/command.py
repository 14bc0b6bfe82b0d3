"""`triton-sre lint MODEL_REPOSITORY`: check a model repository before Triton starts.

Exit codes as `triage`: 0 clean (or only warnings), 1 a model would fail to load, 2 usage or input
error (not a directory, unreadable SLO file, serving interpreter that does not run).
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from triton_sre import conventions as c
from triton_sre.checks import path_text_arg, runbook_base_arg
from triton_sre.lint.issue import TARGET_CPU, TARGET_GPU, LintOptions
from triton_sre.redact import printable
from triton_sre.ttyprogress import colour_on

if TYPE_CHECKING:  # the checks are imported when lint runs, not when the CLI builds its parser
    from triton_sre.lint.runner import LintResult

__all__ = ["add_lint_parser", "render", "run_lint"]

DEFAULT_SLO_FILE = "slos.yaml"


def add_lint_parser(commands: Any, epilog: str) -> None:
    parser = commands.add_parser(
        "lint",
        help="check a Triton model repository before Triton starts",
        description=(
            "Statically check a local Triton model repository: layout, config.pbtxt against Triton's "
            "schema, batching, placement, ensembles, version policies and Python model imports. Problems "
            "Triton fails on carry the runbook id `triage` gives for the same failure; problems Triton "
            "accepts but that cost money or latency are warnings. Exit codes: 0 clean or only warnings, "
            "1 a model would fail to load, 2 usage or input error."
        ),
        epilog=epilog,
    )
    parser.add_argument(
        "repository", metavar="MODEL_REPOSITORY", type=path_text_arg, help="local model repository folder"
    )
    parser.add_argument(
        "--target", choices=[TARGET_CPU, TARGET_GPU], default=TARGET_GPU, help="deployment host (default gpu)"
    )
    parser.add_argument("--gpus", type=int, default=1, help="GPUs on a GPU host (default 1)")
    parser.add_argument(
        "--slo-file",
        "--spec",
        type=path_text_arg,
        help=f"SLO spec for the queue-delay check (default ./{DEFAULT_SLO_FILE} when present)",
    )
    parser.add_argument("--python", help="serving interpreter: check Python models' imports against it")
    parser.add_argument(
        "--backend-directory", help="Triton's --backend-directory: check each model's backend is installed"
    )
    parser.add_argument(
        "--format", choices=["text", "json", "markdown"], default="text", help="output format (default text)"
    )
    parser.add_argument("--runbook-base-url", type=runbook_base_arg, help="link runbooks as <URL><id>.md")
    parser.add_argument(
        "--runbooks",
        type=path_text_arg,
        help=f"runbook folder (default: ${c.ENV_RUNBOOKS_DIR}, else the packaged runbooks/)",
    )
    parser.add_argument(
        "--load-seconds",
        action="append",
        default=[],
        metavar="MODEL=SECONDS",
        help="a measured load time (triton_sre_model_load_seconds, `triton-sre report`); repeatable. "
        "Warns when 2 x the slowest + 30 s exceeds operational.startup_probe_budget of the SLO file",
    )
    parser.add_argument(
        "--release",
        metavar="YY.MM",
        help="check the repository against this NGC release's container (Python, ONNX Runtime, TensorRT, "
        "backends): the models that will not load after the upgrade",
    )
    parser.add_argument(
        "--from-release",
        metavar="YY.MM",
        help="with --release: the release the repository runs on today (TensorRT plans to rebuild)",
    )
    parser.set_defaults(handler=run_lint)


def _err(message: str) -> None:
    print(f"triton-sre lint: {message}", file=sys.stderr)


def _latency_thresholds(path: str | None) -> tuple[tuple[str | None, float, float], ...]:
    from triton_sre.slo import load_spec

    if path is None:
        if not Path(DEFAULT_SLO_FILE).is_file():
            return ()
        path = DEFAULT_SLO_FILE
    spec = load_spec(path)
    return tuple(
        (slo.models.pattern, slo.threshold_s, slo.queue_time_share)
        for slo in spec.slos
        if slo.type == c.SLO_LATENCY
    )


# File names are bytes; Python decodes undecodable ones with lone surrogates (surrogateescape).
_SURROGATE = re.compile("[\ud800-\udfff]")


def display(text: str) -> str:
    """`text` with each byte that is not UTF-8 written as ``\\xNN``: valid Unicode, no surrogates."""
    if not _SURROGATE.search(text):
        return text
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that did not come from a file name
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _strict_json(value: Any) -> Any:
    """`value` made valid for strict JSON consumers: strings through `display`; a dict string that
    needed escaping also gets ``<key>_b64``, its exact bytes in base64 (lossless)."""
    if isinstance(value, str):
        return display(value)
    if isinstance(value, list):
        return [_strict_json(v) for v in value]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out[display(key)] = _strict_json(item)
            if isinstance(item, str) and _SURROGATE.search(item):
                raw = item.encode("utf-8", "surrogateescape")
                out[f"{display(key)}_b64"] = base64.b64encode(raw).decode("ascii")
        return out
    return value


def _load_seconds(values: list[str]) -> dict[str, float]:
    loads: dict[str, float] = {}
    for value in values:
        model, sep, seconds = value.rpartition("=")
        try:
            number = float(seconds)
        except ValueError:
            number = math.nan
        if not sep or not model or not math.isfinite(number) or number < 0:
            raise ValueError(f"--load-seconds: expected MODEL=SECONDS (e.g. resnet50=42.5), got {value!r}")
        loads[model] = number
    return loads


def _releases(target: str | None, source: str | None) -> tuple[Any, Any]:
    """--release and --from-release -> their component-table rows; KeyError names the known releases."""
    from triton_sre.lint.components import release

    for flag, given in (("--release", target), ("--from-release", source)):
        if given is not None and not given.strip():  # `--release "$RELEASE"` with the variable unset
            raise ValueError(f"{flag} is empty: give a release like 25.01")
    if source and not target:
        raise ValueError("--from-release needs --release")
    if not target:
        return None, None
    return release(target), release(source) if source else None


def _probe_budget(path: str | None) -> float:
    """operational.startup_probe_budget of the SLO file (./slos.yaml when present, else the default)."""
    from triton_sre.alerting_spec import Operational
    from triton_sre.slo import load_spec

    if path is None and Path(DEFAULT_SLO_FILE).is_file():
        path = DEFAULT_SLO_FILE
    operational = load_spec(path).operational if path else Operational()
    return operational.startup_probe_budget_s


def render(result: LintResult, fmt: str, base_url: str | None = None, *, colour: bool = False) -> str:
    from triton_sre.diagnosis.render import to_json, to_markdown, to_text

    report = result.report
    if fmt == "json":
        body = to_json(report, base_url)
        for finding, where in zip(body["findings"], result.locations(), strict=True):
            finding.update(where)
        # triage's "release" is the one its log names; lint's is the one it checked against (--release)
        body["release"] = result.release
        body["server_version"] = result.server_version
        body["from_release"] = result.from_release
        body["repository"] = str(result.repository)
        body["models"] = result.models
        return json.dumps(_strict_json(body), indent=2) + "\n"
    against = _against(result)
    if not report.findings:
        clean = f"{result.repository}: {result.models} model(s) checked{against}, no problem found.\n"
        return _terminal_safe(f"### Triton repository lint\n\n{clean}" if fmt == "markdown" else clean)
    head = f"Checked{against}.\n" if against else ""
    if fmt == "markdown":
        return _terminal_safe(
            to_markdown(report, base_url).replace(
                "### Triton triage", "### Triton repository lint" + (f"\n\n{head}" if head else ""), 1
            )
        )
    return _terminal_safe(head + to_text(report, base_url, colour=colour), colour=colour)


def _against(result: LintResult) -> str:
    """ " against release 25.01 (tritonserver 2.54), upgrading from 24.10" for --release, else ""."""
    if result.release is None:
        return ""
    server = f" (tritonserver {result.server_version})" if result.server_version else ""
    source = ""
    if result.from_release:  # YY.MM: the text order is the time order
        way = "downgrading" if result.from_release > result.release else "upgrading"
        source = f", {way} from {result.from_release}"
    return f" against release {result.release}{server}{source}"


def _terminal_safe(text: str, *, colour: bool = False) -> str:
    """`display(text)` with every control character (a folder named `m<ESC>[2J`, a config's name)
    escaped (`\\x1b[2J`), line by line; with `colour`, the renderer's own colour codes are kept."""
    from triton_sre.diagnosis.render import _COLOURS, _DIM, _RESET

    text = display(text)
    own = re.compile("|".join(re.escape(code) for code in (*_COLOURS.values(), _DIM, _RESET)))
    lines = []
    for line in text.split("\n"):
        if colour:
            pieces, at = [], 0
            for match in own.finditer(line):
                pieces += [printable(line[at : match.start()]), match.group()]
                at = match.end()
            lines.append("".join([*pieces, printable(line[at:])]))
        else:
            lines.append(printable(line))
    return "\n".join(lines)


def run_lint(args: argparse.Namespace) -> int:
    from triton_sre.diagnosis.catalog import CatalogError, load_catalog
    from triton_sre.lint.pydeps import ProbeError, probe, required_imports
    from triton_sre.lint.repository import SchemaMissing, load_repository
    from triton_sre.lint.runner import lint
    from triton_sre.slo import SpecError

    if args.gpus < 0:
        _err("--gpus must be >= 0")
        return c.EXIT_USAGE
    try:
        catalog = load_catalog(args.runbooks)
        repo = load_repository(args.repository)
        thresholds = _latency_thresholds(args.slo_file)
        loads = _load_seconds(args.load_seconds)
        budget = _probe_budget(args.slo_file) if loads else None
    except CatalogError as exc:
        _err(f"runbook catalog: {exc}")
        return c.EXIT_USAGE
    except (NotADirectoryError, SchemaMissing, SpecError, OSError, ValueError) as exc:
        _err(str(exc))
        return c.EXIT_USAGE
    try:
        target, source = _releases(args.release, args.from_release)
    except (KeyError, ValueError) as exc:
        _err(str(exc.args[0]) if exc.args else str(exc))
        return c.EXIT_USAGE
    missing: dict[str, tuple[str, ...]] | None = None
    if args.python:
        needed = required_imports(repo)
        try:
            absent = probe(args.python, {s.module for sites in needed.values() for s in sites})
        except ProbeError as exc:
            _err(f"--python: {exc}")
            return c.EXIT_USAGE
        missing = {m: tuple(s.module for s in sites if s.module in absent) for m, sites in needed.items()}
    backends = None
    if args.backend_directory:
        root = Path(args.backend_directory)
        if not root.is_dir():
            _err(f"--backend-directory {root}: not a directory")
            return c.EXIT_USAGE
        backends = frozenset(p.name for p in root.iterdir() if p.is_dir())
    options = LintOptions(
        target=args.target,
        gpus=args.gpus if args.target == TARGET_GPU else 0,
        latency_thresholds=thresholds,
        missing_modules=missing,
        backends=backends,
        load_seconds=loads or None,
        startup_probe_budget_s=budget,
        release=target,
        from_release=source,
    )
    result = lint(repo, options, catalog.titles)
    out = sys.stdout
    out.write(render(result, args.format, args.runbook_base_url, colour=colour_on(out)))
    out.flush()
    return c.EXIT_FAILURE if result.has_failure else c.EXIT_OK
