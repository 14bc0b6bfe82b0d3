"""The stack a gameday runs against: `stack up`'s components, time-scaled, with model control.

`GamedayStack` is `stack.local.Stack` with three differences: the rule files it renders are
scaled (gameday/scaling.py), Triton runs with explicit model control (every model of the
repository loaded at start, the scenarios load and unload more), and components can be stopped
and started again one by one (the state file stays right, so `triton-sre stack down --workdir`
still stops exactly what runs). Its model repository is built in the workdir: some of the demo's
sample models and the gameday's own (gameday/models/).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
from collections.abc import Callable, Sequence
from pathlib import Path

from triton_sre import conventions as c
from triton_sre.demo import LLM_VLLM, SAMPLE_REPOSITORY, SLOW_MODEL, TEXT_ECHO, VECTOR_SCALE
from triton_sre.gameday.scaling import Scale, scale_rules
from triton_sre.generate.command import ALERTS_DIR
from triton_sre.generate.families import rule_files
from triton_sre.generate.rulefile import render_yaml
from triton_sre.slo import Spec, default_spec, load_spec
from triton_sre.stack.components import (
    STATE_FILE,
    Component,
    down,
    load_state,
    process_start_time,
    stop_with_server,
)
from triton_sre.stack.local import Stack, StackError, StackOptions
from triton_sre.stack.owner import owner_running
from triton_sre.stack.statefile import StateFileError, read_state

GAMEDAY_MODELS = Path(__file__).resolve().parent / "models"
ECHO_TEMPLATE = "gd_echo"
TAIL_MODEL = "gd_tail"
LLM_DECODE_MS = 50.0
_DECODE_PARAM = re.compile(r'("DECODE_MS_PER_TOKEN"\s*value:\s*\{\s*string_value:\s*")[0-9.]+(")')
SAMPLE_MODELS = (VECTOR_SCALE, TEXT_ECHO, SLOW_MODEL, LLM_VLLM)
SCALED_HEADER = (
    "Rendered by `triton-sre gameday`: the generated rules with durations scaled; see the scorecard."
)


def build_repository(path: Path) -> Path:
    """The gameday's model repository: sample models and gd_tail (all loaded at start)."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    for name in SAMPLE_MODELS:
        shutil.copytree(SAMPLE_REPOSITORY / name, path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(
        GAMEDAY_MODELS / TAIL_MODEL, path / TAIL_MODEL, ignore=shutil.ignore_patterns("__pycache__")
    )
    _slow_decode(path / LLM_VLLM / "config.pbtxt")
    return path


def _slow_decode(config: Path) -> None:
    """The sample LLM decodes a token in 2 ms: its KV slots turn over faster than a Python client on
    a busy two-core host resubmits, so the cache never stays full for a `for:`. The gameday's copy
    decodes in LLM_DECODE_MS (a slower device): a saturating sequence lasts seconds, the
    cache stays full while clients wait, and the TPOT SLO (100 ms) still holds."""
    text, n = _DECODE_PARAM.subn(rf"\g<1>{LLM_DECODE_MS:g}\g<2>", config.read_text(encoding="utf-8"))
    if n != 1:
        raise ValueError(f"{config}: no DECODE_MS_PER_TOKEN parameter")
    config.write_text(text, encoding="utf-8")


def add_echo_model(repository: Path, name: str) -> Path:
    """A copy of gd_echo under `name` in the repository (not loaded): returns its folder."""
    target = repository / name
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(GAMEDAY_MODELS / ECHO_TEMPLATE, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def triton_args() -> tuple[str, ...]:
    return ("--model-control-mode=explicit", "--load-model=*")


class GamedayStack(Stack):
    """`Stack` with scaled rules and components that can be stopped and started again."""

    def __init__(
        self, opts: StackOptions, scale: Scale, say: Callable[[str], None], owner: str | None = None
    ) -> None:
        super().__init__(opts, say, owner)
        self.scale = scale
        self.stopped: set[str] = set()  # components a scenario stopped (or whose server it killed)

    def generated_files(self, spec: Spec) -> dict[str, str]:
        """Only the rule files, scaled (dashboards and promtool tests take minutes on a busy host
        and a gameday reads neither)."""
        source = spec.origin_name
        return {
            f"{ALERTS_DIR}/{name}": f"# {SCALED_HEADER}\n" + render_yaml(scale_rules(doc, self.scale), source)
            for name, doc in rule_files(spec, self.opts.runbook_base_url).items()
        }

    def bot_flags(self) -> list[str]:
        """The rollout window the scaled rules were generated with: the bot judged `/triton rollout`
        and a TritonRolloutRegression alert over the spec's unscaled one (15m for the rules' 45s)."""
        spec = load_spec(self.opts.slo_file) if self.opts.slo_file else default_spec()
        return [f"--rollout-window={self.scale.rollout_window(spec.rollout.window)}"]

    # -- one component at a time
    def component(self, name: str) -> Component:
        for comp in self.components:
            if comp.name == name:
                return comp
        raise StackError(f"no component {name!r} in this stack")

    def stop(self, name: str) -> None:
        self.stopped.add(name)
        stop_with_server(self.component(name))

    def died(self) -> list[str]:
        """`name (pid N), log L` of each component not running that no scenario stopped: Triton's
        server counts (its runner may outlive it). A gameday whose Prometheus died waited out every
        detection timeout and scored its scenarios "not detected", the dead component unsaid."""
        dead = []
        for comp in self.components:
            if comp.name in self.stopped:
                continue
            server, start = comp.extra.get("server_pid"), comp.extra.get("server_start_time")
            if not comp.alive():
                dead.append(f"{comp.name} (pid {comp.pid}), log {comp.log}")
            elif isinstance(server, int) and isinstance(start, int) and process_start_time(server) != start:
                dead.append(f"{comp.name} (server pid {server}), log {comp.log}")
        return dead

    def kill_triton_server(self, signum: int = signal.SIGKILL) -> int:
        """Signal tritonserver itself (not its runner): SIGKILL as the OOM killer would, SIGSEGV as a crash
        (Triton's own handler prints ``Signal (11) received.`` and its stack, then exits)."""
        comp = self.component("triton")
        pid = comp.extra.get("server_pid")
        if not isinstance(pid, int):
            raise StackError("the Triton component has no server pid")
        self.stopped.add("triton")
        os.kill(pid, signum)
        return pid

    def start(self, name: str, wrapper: Sequence[str] = ()) -> Component:
        """Start a stopped component again with its recorded argv (prefixed by `wrapper`)."""
        old = self.component(name)
        if old.alive():
            self.stop(name)
        self.stopped.discard(name)
        argv = [x for x in old.argv]
        if old.extra.get("wrapped"):
            argv = argv[int(old.extra["wrapped"]) :]
        self.components.remove(old)
        if name == "triton":
            self.triton_ready_file()
        comp = self.spawn(name, [*wrapper, *argv], old.url, self._env_of(name))
        if wrapper:
            comp.extra["wrapped"] = len(wrapper)
        if name == "triton":
            self.wait_triton(comp)
        else:
            self.wait_ready(comp, self._ready_check(name, comp))
        self.save()
        return comp

    def _env_of(self, name: str) -> dict[str, str] | None:
        if name != "bot":
            return None
        standin = next((x for x in self.components if x.name == "slack-standin"), None)
        if standin is None:
            return None
        return {c.ENV_SLACK_BOT_TOKEN: c.SLACK_STANDIN_TOKEN, c.ENV_SLACK_API_URL: f"{standin.url}/api/"}

    def _ready_check(self, name: str, comp: Component) -> Callable[[], bool]:
        paths = {
            "exporter": c.PATH_READYZ,
            "prometheus": "/-/ready",
            "alertmanager": "/-/ready",
            "slack-standin": "/_standin/calls",
            "bot": c.PATH_HEALTHZ,
        }
        return self.http_ok(f"{comp.url}{paths[name]}")


GAMEDAY_INFO = "gameday"  # the state file's key of a stack a gameday can attach to


def gameday_options(stack_dir: Path, repository: Path, scale: Scale) -> StackOptions:
    """The stack a gameday needs: time-scaled intervals, a 1 s group_wait, explicit model control."""
    return StackOptions(
        model_repository=repository,
        workdir=stack_dir,
        interval=scale.interval_seconds,
        group_wait=1.0,
        timeout=300.0,
        triton_args=triton_args(),
    )


def start_stack(
    opts: StackOptions, scale: Scale, say: Callable[[str], None], owner: str | None = None
) -> GamedayStack:
    """Start the gameday stack in opts.workdir; on failure stop what was started and raise.

    The state file records the ports and the scale, so a later `gameday --attach` can run
    scenarios against this stack (`stack up --gameday` leaves one running). With `owner` (the
    command's name), the stack is the calling process's: recorded as its owner, watched, and
    stopped when that process dies, SIGKILL included (stack/owner.py); `release` at its end."""
    workdir = opts.workdir.absolute()
    running = [x for x in load_state(workdir) if x.alive()]
    if running:
        raise StackError(
            f"a stack is already running in {workdir} ({', '.join(x.name for x in running)}); "
            f"stop it first: triton-sre stack down --workdir {workdir}"
        )
    down(workdir, lambda _: None)
    (workdir / "triton" / "ready.json").unlink(missing_ok=True)
    stack = GamedayStack(opts, scale, say, owner)
    stack.take_ownership()
    try:
        stack.up()
        scaled = {"scale": scale.factor, "interval": scale.interval_seconds}
        stack.info.update({"ports": dict(stack.ports), GAMEDAY_INFO: scaled})
        stack.save()
    except BaseException:
        down(workdir, say)
        raise
    return stack


def attach_stack(stack_dir: Path, say: Callable[[str], None]) -> tuple[GamedayStack, Path]:
    """The running stack `stack up --gameday` (or a gameday) left in `stack_dir`, and its model
    repository; StackError when there is none or it cannot run scenarios."""
    workdir = stack_dir.absolute()
    try:
        raw = read_state(workdir / STATE_FILE)  # its components checked: no pid 0 is ever signalled
    except StateFileError as exc:
        raise StackError(f"cannot read the stack's state: {exc}") from None
    if raw is None:
        raise StackError(
            f"no stack in {workdir}: start one with `triton-sre stack up --gameday --workdir {workdir}`"
        )
    info = raw.get(GAMEDAY_INFO)
    if not isinstance(info, dict) or not isinstance(raw.get("ports"), dict):
        raise StackError(
            f"the stack in {workdir} was started without --gameday: its rules are not time-scaled, its "
            "Triton lacks the gameday's models and model control; stop it (`triton-sre stack down "
            f"--workdir {workdir}`) and start it with `triton-sre stack up --gameday`"
        )
    if busy := owner_running(workdir):  # another gameday's own stack: stopped when that one ends
        raise StackError(f"{busy}; `stack up --gameday` starts a stack to attach to")
    components = load_state(workdir)
    dead = [x.name for x in components if not x.alive()]
    if dead or not components:
        raise StackError(
            f"the stack in {workdir} is not running ({', '.join(dead) or 'no component'} down): "
            f"`triton-sre stack down --workdir {workdir}`, then `stack up --gameday` again"
        )
    scale = Scale(factor=float(info["scale"]), interval_seconds=float(info["interval"]))
    repository = Path(raw["model_repository"])
    stack = GamedayStack(gameday_options(workdir, repository, scale), scale, say)
    stack.ports = {str(k): int(v) for k, v in raw["ports"].items()}
    stack.components = components
    stack.info = {k: v for k, v in raw.items() if k != "components"}
    return stack, repository
