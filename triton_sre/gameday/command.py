"""`triton-sre gameday`: inject named faults into a local stack under traffic and score the response.

It starts its own stack (`stack up`'s components: real Triton, exporter, Prometheus with the
generated rules scaled in time, Alertmanager, the bot and its Slack stand-in), drives steady
traffic, runs the scenarios one at a time and prints a scorecard. Whatever happens (a failed
scenario, Ctrl-C, SIGTERM), the running scenario is restored and everything it started is stopped.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from triton_sre import conventions as c
from triton_sre.checks import path_arg
from triton_sre.files import make_dirs
from triton_sre.redact import printable

DEFAULT_SCALE = 20.0
WARMUP_SECONDS = 15.0  # traffic before the first injection, so rates and windows have data
PAUSE_SECONDS = 3.0  # between two scenarios
STEADY_THINK_S = 0.05


def add_gameday_parser(commands: Any, epilog: str) -> None:
    from triton_sre.gameday.scorecard import FORMATS

    gd = commands.add_parser(
        "gameday",
        help="inject named faults into a local stack under traffic; score detection, diagnosis, recovery",
        description=(
            "Start the local stack (as `stack up`, with rule durations scaled down and model control on), "
            "drive steady traffic, and run fault scenarios one at a time: corrupted model file, missing "
            "Python dependency, too little shared memory, Triton killed, Triton crashed and restarted at "
            "once, p99 degraded, error burst, LLM KV cache full, model stuck loading, a slower version "
            "rolled out, exporter killed, Slack outage. For each: seconds until the "
            "alert fired in Prometheus, reached Alertmanager and the bot's Slack message; whether alert and "
            "diagnosis named the expected runbook; whether the restore brought the models back to READY and "
            "the alert resolved; whether a message was lost or posted twice. The stack is always stopped "
            "at the end, also on Ctrl-C."
        ),
        epilog=f"{epilog}; 1 also when a scenario was not detected, diagnosed wrong, not restored or lost "
        "a message (see docs/gamedays.md)",
    )
    gd.add_argument("--list", action="store_true", help="list the scenarios and what each injects, then exit")
    gd.add_argument(
        "--scenario", action="append", default=[], metavar="NAME", help="run this scenario (repeatable)"
    )
    gd.add_argument(
        "--scenario-file",
        action="append",
        default=[],
        type=path_arg,
        metavar="FILE",
        help="a Python file with inject(ctx), restore(ctx) and expect (repeatable; see docs/gamedays.md)",
    )
    gd.add_argument(
        "--workdir",
        type=path_arg,
        default=None,
        help="keep the stack's files and logs here (default: a temp dir)",
    )
    gd.add_argument(
        "--attach",
        type=path_arg,
        default=None,
        metavar="DIR",
        help="run against the stack `triton-sre stack up --gameday --workdir DIR` left running, and leave "
        "it running (its scale is the one it was started with)",
    )
    gd.add_argument(
        "--scale",
        type=float,
        default=DEFAULT_SCALE,
        help=f"divide every rule `for:` and PromQL range by this (default {DEFAULT_SCALE:g})",
    )
    gd.add_argument("--format", choices=FORMATS, default="text", help="scorecard format (default text)")
    gd.set_defaults(handler=run_gameday)


def _scenarios(args: argparse.Namespace) -> list[Any]:
    """The scenarios to run: --scenario names (built-in or from files); without any, the files'
    scenarios when --scenario-file is given, else every built-in one (--list: all of them)."""
    from triton_sre.gameday.scenarios import builtin, load_files, select

    builtins = builtin()
    users = load_files(args.scenario_file, builtins)
    catalog = builtins + users
    if args.scenario:
        return select(catalog, args.scenario)
    return catalog if args.list or not users else users


def _list(scenarios: list[Any], fmt: str) -> None:
    if fmt == "json":
        rows = [
            {
                "name": s.name,
                "injects": s.injects,
                "expected_alert": s.expect.alert,
                "expected_runbook": s.expect.runbook,
                "labels": dict(s.expect.labels),
            }
            for s in scenarios
        ]
        print(json.dumps({"scenarios": rows}, indent=2))
        return
    for s in scenarios:  # a scenario file's text, shown escaped (`printable`) as every line of ours
        labels = ",".join(f'{k}="{v}"' for k, v in s.expect.labels.items())
        print(printable(s.name), f"    injects: {printable(s.injects)}", sep="\n")
        print(f"    expects: {printable(f'{s.expect.alert}{{{labels}}} -> {s.expect.runbook}')}")


def _say(text: str) -> None:
    """One line on stderr; what came from arguments, scenario files or servers shown escaped."""
    print(f"triton-sre gameday: {printable(text)}", file=sys.stderr, flush=True)


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"{os.cpu_count()} cores, load average {one:.1f} (1 min) / {five:.1f} (5 min)"


def _option_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the options, checked alike with and without --list (which took
    `--scale 0` without a word)."""
    from triton_sre.gameday.scaling import factor_problem

    if problem := factor_problem("--scale", args.scale):
        return problem
    if args.attach is not None and args.workdir is not None:
        return "--attach and --workdir exclude each other"
    if args.attach is not None and not args.attach.is_dir():  # a mistyped path: usage, like --workdir's
        return f"--attach {args.attach.absolute()}: no such directory"
    return None


def run_gameday(args: argparse.Namespace) -> int:
    from triton_sre.gameday.scenarios import ScenarioFileError

    try:
        scenarios = _scenarios(args)
    except ScenarioFileError as exc:
        _say(str(exc))
        return c.EXIT_USAGE
    except KeyError as exc:
        _say(f"unknown scenario {exc.args[0]} (see --list)")
        return c.EXIT_USAGE
    if problem := _option_problem(args):
        _say(problem)
        return c.EXIT_USAGE
    if args.list:
        _list(scenarios, args.format)
        return c.EXIT_OK
    if args.attach is not None:
        workdir = args.attach.absolute()
    else:
        workdir = (args.workdir or Path(tempfile.mkdtemp(prefix="triton-sre-gameday-"))).absolute()
        make_dirs(workdir)
    try:
        with _one_gameday(workdir, attach=args.attach is not None):
            return _run(scenarios, workdir, args.scale, args.format, attach=args.attach is not None)
    except _Busy as exc:
        _say(str(exc))
        return c.EXIT_USAGE


GAMEDAY_LOCK = ".gameday.lock"


class _Busy(RuntimeError):
    """The workdir is another gameday's, or holds a running stack this gameday would replace."""


@contextlib.contextmanager
def _one_gameday(workdir: Path, attach: bool) -> Iterator[None]:
    """Hold the workdir for the whole run. A second gameday on the workdir of one running rebuilt its
    model repository under its Triton, failed to start its stack, and stopped the first one's whole
    stack on the way out (round sixteen, continued): refused now before anything is touched."""
    from triton_sre.stack.components import load_state
    from triton_sre.stack.guard import WorkdirBusy, workdir_lock

    try:
        with workdir_lock(workdir, GAMEDAY_LOCK):
            running = [] if attach else [x.name for x in load_state(workdir / "stack") if x.alive()]
            if running:
                raise _Busy(
                    f"a stack is already running in {workdir / 'stack'} ({', '.join(running)}); attach to it "
                    f"(--attach {workdir / 'stack'}), stop it (triton-sre stack down --workdir "
                    f"{workdir / 'stack'}) or use another --workdir"
                )
            yield
    except WorkdirBusy as exc:
        raise _Busy(
            f"another gameday runs in {workdir} ({exc.holder}): wait for it, or use another --workdir"
        ) from None


def _run(scenarios: list[Any], workdir: Path, factor: float, fmt: str, attach: bool = False) -> int:
    """Run the scenarios on a stack started here in workdir/stack (stopped at the end), or, with
    `attach`, on the running stack in workdir (left running)."""
    from triton_sre.gameday import runner, scorecard
    from triton_sre.gameday.context import Context
    from triton_sre.gameday.observer import Observer
    from triton_sre.gameday.scaling import Scale
    from triton_sre.gameday.scenarios import STEADY_MODELS
    from triton_sre.gameday.stack import attach_stack, build_repository, gameday_options, start_stack
    from triton_sre.stack.components import down
    from triton_sre.stack.local import StackError
    from triton_sre.stack.owner import unregister

    interrupted = threading.Event()
    meta: dict[str, Any] = {}

    def on_signal(signum: int, _frame: Any) -> None:
        if interrupted.is_set():
            return  # cleanup is under way: a second Ctrl-C must not cut it short
        interrupted.set()
        meta["signal"] = signum  # the exit code: 128 + it (scorecard.exit_code)
        _say(f"signal {signum}: restoring the running scenario and stopping the stack")
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    scale = Scale(factor=factor)
    meta.update(timings=f"{scale.describe()}; Alertmanager group_wait 1s", load=_load(), workdir=str(workdir))
    results: list[runner.Result] = []
    stack_dir = workdir if attach else workdir / "stack"
    started = time.monotonic()
    observer = None
    ctx = None
    try:
        if attach:
            stack, repository = attach_stack(stack_dir, lambda text: _say(f"  {text}"))
            meta["timings"] = f"{stack.scale.describe()}; Alertmanager group_wait 1s"
            _say(f"attached to the stack in {stack_dir} ({stack.scale.describe()})")
        else:
            repository = build_repository(workdir / "models")
            _say(f"starting the stack in {stack_dir} ({scale.describe()})")
            stack = start_stack(
                gameday_options(stack_dir, repository, scale),
                scale,
                lambda text: _say(f"  {text}"),
                owner="gameday",  # its own: stopped when it dies, SIGKILL included (stack/owner.py)
            )
        ctx = Context(stack, repository, _say)
        names = {comp.name: comp.url for comp in stack.components}
        observer = Observer(names["prometheus"], names["alertmanager"], names.get("slack-standin")).start()
        ctx.traffic(
            "steady", {m: 1 for m in STEADY_MODELS} | {STEADY_MODELS[0]: 2}, think_time_s=STEADY_THINK_S
        )
        _say(f"steady traffic on {', '.join(STEADY_MODELS)}; warming up {WARMUP_SECONDS:g}s")
        time.sleep(WARMUP_SECONDS)
        for scenario in scenarios:
            if dead := runner.died(ctx):  # the next scenarios would only wait out their timeouts
                _say(f"{dead}: not running {scenario.name} or any after it")
                meta["error"] = dead[:500]
                break
            results.append(runner.run(scenario, ctx, observer.timeline, _say, interrupted.is_set))
            time.sleep(PAUSE_SECONDS)
    except StackError as exc:
        _say(f"cannot attach: {exc}" if attach else f"the stack did not start: {exc}")
        meta["error"] = str(exc)[:500]
    except KeyboardInterrupt:
        meta["interrupted"] = True
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)
        if ctx is not None:
            ctx.stop_all_traffic()
            ctx.join_background(5)
        if observer is not None:
            observer.stop()
        if attach:
            if ctx is not None:
                _say(f"leaving the stack running; stop it: triton-sre stack down --workdir {stack_dir}")
        else:
            down(stack_dir, lambda text: _say(f"  {text}"))
            unregister(stack_dir)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    meta["total_seconds"] = time.monotonic() - started
    meta["load_at_end"] = _load()
    sys.stdout.write(scorecard.render(results, meta, fmt))
    return scorecard.exit_code(results, meta, len(scenarios))
