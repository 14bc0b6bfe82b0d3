"""`triton-sre stack up|status|down`: the sidecar stack from local binaries (see stack/local.py)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from triton_sre import conventions as c
from triton_sre.checks import path_arg, runbook_base_arg
from triton_sre.config import interval_arg
from triton_sre.durations import seconds_arg


def _workdir_arg(parser: argparse.ArgumentParser) -> None:
    from triton_sre.stack.local import DEFAULT_WORKDIR

    parser.add_argument(
        "--workdir",
        type=path_arg,
        default=DEFAULT_WORKDIR,
        help=f"state file, configs, logs and data of the stack (default {DEFAULT_WORKDIR})",
    )


def add_stack_parser(commands: Any, epilog: str) -> None:
    stack = commands.add_parser(
        "stack",
        help="run the sidecar stack (Triton, exporter, Prometheus, Alertmanager, bot) from local binaries",
        description=(
            "The docker-compose topology without Docker: the real Triton from nvidia-pytriton, the exporter, "
            "Debian's prometheus and prometheus-alertmanager with configs rendered from the templates of "
            "deploy/, and the Slack bot (posting to a local Slack stand-in unless $SLACK_BOT_TOKEN is set). "
            "`up` returns once every component is ready and leaves them running; `down` stops them."
        ),
        epilog=epilog,
    )
    actions = stack.add_subparsers(dest="stack_command", metavar="ACTION", parser_class=type(stack))
    actions.required = True

    up = actions.add_parser(
        "up",
        help="start the stack and wait until every component is ready",
        epilog=f"{epilog}; 1 when a component did not become ready (what started is stopped)",
    )
    up.add_argument(
        "--model-repository",
        type=path_arg,
        default=None,
        help="model repository (default: the bundled sample)",
    )
    _workdir_arg(up)
    up.add_argument(
        "--slo-file",
        "--spec",
        type=path_arg,
        default=None,
        help="SLO spec for the rules and the bot (default: the shipped slos.yaml)",
    )
    up.add_argument(
        "--port-base",
        type=int,
        default=0,
        help="ports N (Triton HTTP), N+1 gRPC, N+2 metrics, N+3 exporter, N+4 Prometheus, "
        "N+5 Alertmanager, N+6 bot, N+7 Slack stand-in (default: free ports)",
    )
    up.add_argument(
        "--interval",
        type=interval_arg,
        default=15.0,
        help="seconds between scrapes, rule evaluations and exporter polls (default 15)",
    )
    up.add_argument(
        "--group-wait",
        type=seconds_arg,
        default=30.0,
        help="Alertmanager's wait before notifying a new alert group, seconds (default 30)",
    )
    up.add_argument(
        "--runbook-base-url",
        type=runbook_base_arg,
        default=c.DEFAULT_RUNBOOK_BASE_URL,
        help=f"prefix of the alerts' runbook links (default {c.DEFAULT_RUNBOOK_BASE_URL})",
    )
    up.add_argument("--channel", default=None, help="Slack channel of the bot (default #triton-alerts)")
    up.add_argument(
        "--timeout",
        type=seconds_arg,
        default=120.0,
        help="seconds each component has to become ready (default 120)",
    )
    up.add_argument(
        "--exporter-config",
        type=Path,
        default=None,
        help="the exporter's YAML config, e.g. pricing (see `triton-sre export --help`)",
    )
    up.add_argument(
        "--models-at-startup",
        action="store_true",
        help="let Triton load every model at startup (faster; but those loads are over before Triton "
        "answers, so no load time is measured). Default: the exporter starts first, then Triton with "
        "explicit model control, and the stack loads each model once the exporter polls it",
    )
    up.add_argument(
        "--gameday",
        action="store_true",
        help="start the stack `triton-sre gameday --attach DIR` runs scenarios against: the gameday's "
        "models with explicit model control, rules time-scaled by --gameday-scale, 1 s intervals "
        "(--model-repository, --interval, --group-wait and --slo-file do not apply)",
    )
    up.add_argument(
        "--gameday-scale",
        type=float,
        default=None,
        help="with --gameday: divide every rule `for:` and range by this (default: gameday's default)",
    )
    up.add_argument("--format", choices=["text", "json"], default="text", help="output format (default text)")
    up.set_defaults(handler=run_up)

    st = actions.add_parser(
        "status",
        help="list the components, their PIDs and URLs",
        epilog=f"{epilog}; status: 0 every component is up, 1 no stack in the workdir or a component is down",
    )
    _workdir_arg(st)
    st.add_argument("--format", choices=["text", "json"], default="text", help="output format (default text)")
    st.set_defaults(handler=run_status)

    dn = actions.add_parser("down", help="stop everything `stack up` started", epilog=epilog)
    _workdir_arg(dn)
    dn.set_defaults(handler=run_down)


def _say(text: str) -> None:
    print(f"triton-sre stack: {text}", file=sys.stderr, flush=True)


def run_up(args: argparse.Namespace) -> int:
    from triton_sre.config import load_config
    from triton_sre.demo import SAMPLE_REPOSITORY
    from triton_sre.slo import SpecError
    from triton_sre.stack.local import DEFAULT_CHANNEL, StackError, StackOptions, up

    repository: Path = (args.model_repository or SAMPLE_REPOSITORY).absolute()
    if not repository.is_dir():
        print(f"triton-sre stack up: model repository {repository} is not a directory", file=sys.stderr)
        return c.EXIT_USAGE
    if args.exporter_config is not None:  # checked here (exit 2), not by an exporter that dies at start
        load_config(args.exporter_config)
    if args.slo_file is not None and not (args.slo_file.is_file() or args.slo_file.is_fifo()):  # or a pipe
        print(f"triton-sre stack up: SLO file {args.slo_file} does not exist", file=sys.stderr)
        return c.EXIT_USAGE
    if args.port_base < 0 or args.port_base > 65535 - 8:
        print("triton-sre stack up: --port-base must be 0..65527", file=sys.stderr)
        return c.EXIT_USAGE
    opts = StackOptions(
        model_repository=repository,
        workdir=args.workdir.absolute(),
        slo_file=args.slo_file,
        port_base=args.port_base,
        interval=args.interval,
        group_wait=args.group_wait,
        runbook_base_url=args.runbook_base_url,
        channel=args.channel or DEFAULT_CHANNEL,
        timeout=args.timeout,
        exporter_config=args.exporter_config.absolute() if args.exporter_config else None,
        models_at_startup=args.models_at_startup,
    )
    if args.gameday_scale is not None and not args.gameday:
        print("triton-sre stack up: --gameday-scale needs --gameday", file=sys.stderr)
        return c.EXIT_USAGE
    from triton_sre.gameday.scaling import factor_problem

    if args.gameday_scale is not None and (problem := factor_problem("--gameday-scale", args.gameday_scale)):
        print(f"triton-sre stack up: {problem}", file=sys.stderr)
        return c.EXIT_USAGE
    try:
        state = _up_gameday(opts.workdir, args.gameday_scale) if args.gameday else up(opts, _say)
    except SpecError as exc:
        print(f"triton-sre stack up: invalid SLO spec: {exc}", file=sys.stderr)
        return c.EXIT_USAGE
    except StackError as exc:
        print(f"triton-sre stack up: {exc}", file=sys.stderr)
        return c.EXIT_FAILURE
    from triton_sre.doctor.command import stack_summary

    for line in stack_summary(state, args.slo_file):  # which inputs Triton lacks (triton-sre doctor)
        _say(line)
    _print(state, args.format, header="The triton-sre stack is up. Look at:")
    return c.EXIT_OK


def _up_gameday(workdir: Path, factor: float | None) -> dict[str, object]:
    """The gameday's stack (gameday/stack.py), left running for `gameday --attach`."""
    from triton_sre.gameday.scaling import Scale
    from triton_sre.gameday.stack import build_repository, gameday_options, start_stack
    from triton_sre.stack.components import load_state, status
    from triton_sre.stack.local import StackError

    scale = Scale() if factor is None else Scale(factor=factor)
    if any(x.alive() for x in load_state(workdir)):  # before its model folder is rebuilt
        raise StackError(f"a stack is already running in {workdir}; stop it first: triton-sre stack down")
    repository = build_repository(workdir / "models")
    start_stack(gameday_options(workdir, repository, scale), scale, _say)
    _say(f"gameday stack: {scale.describe()}; run scenarios with: triton-sre gameday --attach {workdir}")
    return status(workdir)


def run_status(args: argparse.Namespace) -> int:
    from triton_sre.stack.components import status
    from triton_sre.stack.owner import orphaned

    workdir = args.workdir.absolute()
    state = status(workdir)
    # stacks elsewhere whose owner (gameday, demo) died without stopping them: named with the command
    state["orphaned"] = [_orphan_row(path, raw) for path, raw in orphaned(exclude=workdir)]
    _print(state, args.format)
    return c.EXIT_OK if state["running"] else c.EXIT_FAILURE


def _orphan_row(workdir: Path, raw: dict[str, Any]) -> dict[str, Any]:
    from triton_sre.stack.components import Component
    from triton_sre.stack.owner import OWNER_KEY

    running = [x["name"] for x in raw.get("components", []) if Component(**x).alive()]
    return {"workdir": str(workdir), OWNER_KEY: raw.get(OWNER_KEY), "running": running}


def run_down(args: argparse.Namespace) -> int:
    from triton_sre.stack.components import down
    from triton_sre.stack.guard import WorkdirBusy, workdir_lock
    from triton_sre.stack.owner import orphaned, owner_running, stop_orphaned, unregister

    workdir = args.workdir.absolute()
    if busy := owner_running(workdir):  # a gameday's or demo's stack, stopped by it when it ends
        print(f"triton-sre stack down: {busy}", file=sys.stderr)
        return c.EXIT_FAILURE
    try:
        # not while a `stack up` is starting there (it would record processes after this stopped them)
        with workdir_lock(workdir) if workdir.is_dir() else contextlib.nullcontext():
            stopped = down(workdir, _say)
        unregister(workdir)
    except WorkdirBusy as exc:
        print(f"triton-sre stack down: {exc}", file=sys.stderr)
        return c.EXIT_FAILURE
    print(f"stopped {len(stopped)} component(s)" + (f": {', '.join(stopped)}" if stopped else ""))
    for path, raw in orphaned(exclude=workdir):  # a stack its gameday or demo did not stop (SIGKILL)
        _say(f"{path}: a stack whose owner ({_owner(raw)}) is gone: stopping it")
        others = stop_orphaned(path, _say)
        print(f"stopped {len(others)} component(s) in {path}" + (f": {', '.join(others)}" if others else ""))
    return c.EXIT_OK


def _owner(raw: dict[str, Any]) -> str:
    from triton_sre.stack.owner import OWNER_KEY

    owner = raw.get(OWNER_KEY) or {}
    return f"{owner.get('command', 'its owner')}, pid {owner.get('pid')}"


def _print(state: dict[str, Any], fmt: str, header: str | None = None) -> None:
    if fmt == "json":
        json.dump(state, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    for row in state.get("orphaned", []):
        print(
            f"a stack whose owner ({_owner(row)}) is gone in {row['workdir']}: "
            f"{', '.join(row['running']) or 'nothing'} running; stop it: triton-sre stack down "
            f"--workdir {row['workdir']}"
        )
    if not state["components"]:
        print(f"no stack in {state['workdir']}")
        return
    if header:
        print(header)
    for comp in state["components"]:
        alive = "up  " if comp["alive"] else "DOWN"
        print(f"  {comp['name']:<14}{alive} pid {comp['pid']:<8}{comp['url']:<28}log {comp['log']}")
    urls = {comp["name"]: comp["url"] for comp in state["components"]}
    looks = [
        ("Triton model statistics", "triton", "/v2/models/stats"),
        ("exporter metrics", "exporter", c.PATH_METRICS),
        ("model states and reasons", "exporter", c.PATH_DEBUG_MODELS),
        ("Prometheus alerts", "prometheus", "/alerts"),
        ("Alertmanager", "alertmanager", "/#/alerts"),
    ]
    for label, name, path in looks:
        if name in urls:
            print(f"  {label:<26}{urls[name]}{path}")
    for comp in state["components"]:
        # status() flattens a component's extra keys into its row (as `stack status --format json` shows)
        if comp["name"] == "triton" and comp.get("metrics_url"):
            print(f"  {'Triton metrics':<26}{comp['metrics_url']}")
        if comp["name"] == "triton" and comp.get("server_log"):
            # the component's own log is run_triton's two lines; tritonserver's is the one to triage
            print(f"  {'tritonserver log (triage)':<26}{comp['server_log']}")
    for comp in state["components"]:
        if comp["name"] == "slack-standin":
            print(f"  {'what would be posted':<26}{comp['log']}")
    failed = [x["model"] for x in state.get("loads", []) if not x["ok"]]
    if state.get("loads"):
        print(
            f"  models loaded after the exporter started: {len(state['loads']) - len(failed)}"
            + (f"; failed to load: {', '.join(failed)}" if failed else "")
        )
    if "generated" in state:
        print(f"  rules and dashboards: {state['generated']} (import the dashboards in Grafana)")
    print(f"Stop it with: triton-sre stack down --workdir {state['workdir']}")
