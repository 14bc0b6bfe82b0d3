"""The gameday's fault scenarios: what each injects, how it is undone, and what should page.

A scenario is `inject(ctx)`, `restore(ctx)` and an `Expect`: the alert (name and labels) that
must fire, the runbook id the alert and the bot's diagnosis must name, and the models that must
be READY again once `restore` ran. Every built-in scenario is real on the local Triton 2.51 (CPU,
Python backend); `restore` is the runbook's mitigation where it can be automated. A user adds one
as a small Python file (`load_file`, docs/gamedays.md, examples/gameday_scenario.py).
"""

from __future__ import annotations

import difflib
import importlib.util
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from triton_sre import conventions as c
from triton_sre.checks import ConfigError, check_number
from triton_sre.demo import LLM_MAX_NUM_SEQS, LLM_VLLM, VECTOR_SCALE
from triton_sre.gameday import worse_version
from triton_sre.gameday.context import Context
from triton_sre.gameday.stack import SAMPLE_MODELS, TAIL_MODEL
from triton_sre.redact import bounded

# Models the scenarios load through model control (echo copies, one per scenario: one alert group each).
CORRUPT_MODEL = "gd_corrupt"
UPGRADE_MODEL = "gd_upgrade"
STUCK_MODEL = "gd_stuck"
OUTAGE_MODEL = "gd_outage"
MISSING_MODULE = "triton_sre_gameday_tokenizer_v2"  # the dependency an "upgrade" forgot: not installed
SHM_SIZE = "1m"  # /dev/shm of the restarted Triton: room for one Python model instance (1 MiB each)
SLACK_OUTAGE_SECONDS = 20.0
LOADED_MODELS = (*SAMPLE_MODELS, TAIL_MODEL)  # what the gameday's Triton loads at start
# Steady traffic: every loaded model but the LLM. Its short sequences would take KV slots with few
# blocks, so saturating clients could not hold the cache at 95 %: the KV scenario is its traffic.
STEADY_MODELS = tuple(m for m in LOADED_MODELS if m != LLM_VLLM)


@dataclass(frozen=True)
class Expect:
    """What must happen: `alert` with `labels` fires and names `runbook`; after restore the
    `ready` models are READY and the alert resolved."""

    alert: str
    runbook: str
    labels: Mapping[str, str] = field(default_factory=dict)
    ready: tuple[str, ...] = ()
    detect_timeout: float = 120.0  # seconds from injection to the alert firing in Prometheus
    restore_timeout: float = 180.0  # seconds from restore to READY + resolved


@dataclass(frozen=True)
class Scenario:
    name: str
    injects: str  # one line for --list and the scorecard
    inject: Callable[[Context], Any]
    restore: Callable[[Context], Any]
    expect: Expect


# ------------------------------------------------------------------------ model files
def _broken_model(ctx: Context, model: str, source: bytes) -> None:
    ctx.add_model(model)
    (ctx.model_dir(model) / "1" / "model.py").write_bytes(source)
    status, error = ctx.load(model)
    ctx.say(f"load {model}: HTTP {status} {error.splitlines()[0] if error else ''}".rstrip())


def _fixed_model(ctx: Context, model: str) -> None:
    (ctx.model_dir(model) / "1" / "model.py").write_bytes(ctx.echo_source())
    status, error = ctx.load(model)
    ctx.say(f"load {model}: HTTP {status} {error[:120]}".rstrip())


def corrupt_inject(ctx: Context) -> None:
    # A copy cut short and overwritten with binary bytes, as a broken sync or disk leaves it.
    source = ctx.echo_source()
    _broken_model(ctx, CORRUPT_MODEL, b"\x00\x8b\x1f" + source[: len(source) // 3])


def upgrade_inject(ctx: Context) -> None:
    source = ctx.echo_source()
    _broken_model(ctx, UPGRADE_MODEL, f"import {MISSING_MODULE}  # new in v2\n".encode() + source)


def outage_inject(ctx: Context) -> None:
    ctx.stack.stop("slack-standin")
    ctx.say(f"Slack stand-in stopped; back in {SLACK_OUTAGE_SECONDS:g}s")

    def come_back() -> None:
        time.sleep(SLACK_OUTAGE_SECONDS)
        ctx.stack.start("slack-standin")
        ctx.say("Slack stand-in is back")

    ctx.background("slack-back", come_back)
    source = ctx.echo_source()
    _broken_model(
        ctx, OUTAGE_MODEL, source.replace(b"class TritonPythonModel:", b"class TritonPythonModel(:")
    )


def outage_restore(ctx: Context) -> None:
    ctx.join_background(SLACK_OUTAGE_SECONDS + 60)
    if not ctx.stack.component("slack-standin").alive():
        ctx.stack.start("slack-standin")
    _fixed_model(ctx, OUTAGE_MODEL)


def stuck_inject(ctx: Context) -> None:
    folder = ctx.add_model(STUCK_MODEL)
    (folder / "hold").write_text("initialize() waits while this file exists\n", encoding="utf-8")
    ctx.background("stuck-load", lambda: ctx.load(STUCK_MODEL))


def stuck_restore(ctx: Context) -> None:
    (ctx.model_dir(STUCK_MODEL) / "hold").unlink(missing_ok=True)  # the weights "arrive"
    ctx.join_background(60)


def shm_inject(ctx: Context) -> None:
    # As a container started with a too small --shm-size: Triton restarted in its own mount
    # namespace whose /dev/shm holds one Python model instance.
    ctx.stack.stop("triton")
    wrapper = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
               f'mount -t tmpfs -o size={SHM_SIZE} tmpfs /dev/shm && exec "$0" "$@"']  # fmt: skip
    ctx.stack.start("triton", wrapper)


def restart_triton(ctx: Context) -> None:
    ctx.stack.start("triton")


def crash_and_restart(ctx: Context) -> None:
    """A segmentation fault, then the restart a container runtime would do at once: the same target comes
    back, its counters from 0."""
    ctx.stack.kill_triton_server(signal.SIGSEGV)
    time.sleep(1.0)  # Triton's handler prints its stack and exits
    restart_triton(ctx)


def tail_flag(ctx: Context) -> Path:
    return ctx.model_dir(TAIL_MODEL) / "tail"


def builtin() -> list[Scenario]:
    """The built-in scenarios, in the order a full gameday runs them."""
    unavailable = c.ALERT_MODEL_UNAVAILABLE
    return [
        Scenario(
            "corrupt-model-file",
            f"load a new model {CORRUPT_MODEL} whose model.py is truncated and overwritten with binary "
            "bytes, through model control",
            corrupt_inject,
            lambda ctx: _fixed_model(ctx, CORRUPT_MODEL),
            Expect(
                unavailable, c.RUNBOOK_MODEL_FILE_INVALID, {c.LABEL_MODEL: CORRUPT_MODEL}, (CORRUPT_MODEL,)
            ),
        ),
        Scenario(
            "python-dependency-missing",
            f"load {UPGRADE_MODEL} upgraded to import {MISSING_MODULE}, which is not installed; restore "
            "rolls the code back",
            upgrade_inject,
            lambda ctx: _fixed_model(ctx, UPGRADE_MODEL),
            Expect(
                unavailable, c.RUNBOOK_PYTHON_MODULE_MISSING, {c.LABEL_MODEL: UPGRADE_MODEL}, (UPGRADE_MODEL,)
            ),
        ),
        Scenario(
            "shared-memory-too-small",
            f"restart Triton with a {SHM_SIZE} /dev/shm (own mount namespace, as docker --shm-size): "
            "Python model instances find no shared memory",
            shm_inject,
            restart_triton,
            Expect(unavailable, c.RUNBOOK_SHM_TOO_SMALL, {}, LOADED_MODELS),
        ),
        Scenario(
            "triton-killed",
            "SIGKILL tritonserver under traffic; restore starts it again (counters reset)",
            lambda ctx: ctx.stack.kill_triton_server(),
            restart_triton,
            Expect(c.ALERT_SERVER_DOWN, c.ALERT_RUNBOOKS[c.ALERT_SERVER_DOWN], {}, LOADED_MODELS),
        ),
        Scenario(
            "triton-crash-restarted",
            "SIGSEGV tritonserver under traffic and start it again at once, as a restart policy would: "
            "too quick for TritonServerDown",
            crash_and_restart,
            lambda ctx: None,  # already running again
            Expect(c.ALERT_SERVER_RESTARTED, c.ALERT_RUNBOOKS[c.ALERT_SERVER_RESTARTED], {}, LOADED_MODELS),
        ),
        Scenario(
            "p99-degraded",
            f"every 20th request of {TAIL_MODEL} takes 600 ms instead of 60 ms: p99 over the 500 ms SLO, "
            "average still ~87 ms",
            lambda ctx: tail_flag(ctx).write_text("on\n", encoding="utf-8"),
            lambda ctx: tail_flag(ctx).unlink(missing_ok=True),
            Expect(
                c.ALERT_SLO_LATENCY_BUDGET_BURN,
                c.ALERT_RUNBOOKS[c.ALERT_SLO_LATENCY_BUDGET_BURN],
                {c.LABEL_MODEL: TAIL_MODEL, c.L_SLO: c.SLO_LATENCY, c.L_SEVERITY: c.SEVERITY_PAGE},
                (TAIL_MODEL,),
                restore_timeout=240.0,
            ),
        ),
        Scenario(
            "error-burst",
            f"half of the requests to {VECTOR_SCALE} fail (BACKEND) from 2 more clients: the "
            "availability budget burns",
            lambda ctx: ctx.traffic("errors", {VECTOR_SCALE: 2}, error_fraction=0.5, think_time_s=0.02),
            lambda ctx: ctx.stop_traffic("errors"),
            Expect(
                c.ALERT_SLO_ERROR_BUDGET_BURN,
                c.ALERT_RUNBOOKS[c.ALERT_SLO_ERROR_BUDGET_BURN],
                {c.LABEL_MODEL: VECTOR_SCALE, c.L_SLO: c.SLO_AVAILABILITY, c.L_SEVERITY: c.SEVERITY_PAGE},
                (VECTOR_SCALE,),
            ),
        ),
        Scenario(
            "llm-kv-cache-saturated",
            f"{LLM_MAX_NUM_SEQS * 3} clients stream maximal sequences to {LLM_VLLM}: its KV cache is full "
            "and requests wait",
            lambda ctx: ctx.traffic("kv", {LLM_VLLM: LLM_MAX_NUM_SEQS * 3}, llm_saturate=True),
            lambda ctx: ctx.stop_traffic("kv"),
            Expect(
                c.ALERT_LLM_KV_CACHE_SATURATED,
                c.ALERT_RUNBOOKS[c.ALERT_LLM_KV_CACHE_SATURATED],
                {c.LABEL_MODEL: LLM_VLLM},
                (LLM_VLLM,),
                detect_timeout=180.0,
            ),
        ),
        Scenario(
            "model-stuck-loading",
            f"load {STUCK_MODEL}, whose initialize() waits for weights that do not come; restore lets them "
            "arrive",
            stuck_inject,
            stuck_restore,
            Expect(
                c.ALERT_MODEL_STUCK_LOADING,
                c.ALERT_RUNBOOKS[c.ALERT_MODEL_STUCK_LOADING],
                {c.LABEL_MODEL: STUCK_MODEL},
                (STUCK_MODEL,),
            ),
        ),
        Scenario(
            "rollout-worse-version",
            f"load version {worse_version.CANDIDATE} of {worse_version.MODEL} beside version "
            f"{worse_version.BASELINE}, {worse_version.EXTRA_SECONDS * 1000:g} ms slower an execution, and "
            "split traffic 2:1 between them; restore runs `rollout check` (exit 1 expected), then rolls back",
            worse_version.inject,
            worse_version.restore,
            Expect(
                c.ALERT_ROLLOUT_REGRESSION,
                c.ALERT_RUNBOOKS[c.ALERT_ROLLOUT_REGRESSION],
                {c.LABEL_MODEL: worse_version.MODEL, c.LABEL_VERSION: worse_version.CANDIDATE},
                (worse_version.MODEL,),
                detect_timeout=240.0,
            ),
        ),
        Scenario(
            "exporter-killed",
            "stop the triton-sre exporter; restore starts it again",
            lambda ctx: ctx.stack.stop("exporter"),
            lambda ctx: ctx.stack.start("exporter"),
            Expect(c.ALERT_EXPORTER_DOWN, c.ALERT_RUNBOOKS[c.ALERT_EXPORTER_DOWN]),
        ),
        Scenario(
            "slack-outage",
            f"Slack unreachable for {SLACK_OUTAGE_SECONDS:g}s while {OUTAGE_MODEL} (a syntax error) fails "
            "to load: the bot's outbox must deliver once it is back, exactly once",
            outage_inject,
            outage_restore,
            Expect(unavailable, c.RUNBOOK_PYTHON_MODEL_ERROR, {c.LABEL_MODEL: OUTAGE_MODEL}, (OUTAGE_MODEL,)),
        ),
    ]


# ------------------------------------------------------------------------ user scenarios
class ScenarioFileError(ValueError):
    """A user scenario file that cannot be used (the message says why)."""


MAX_TIMEOUT_S = 86400.0  # a scenario's detect/restore wait: a day is already no gameday


def _expect_of(module: ModuleType, path: Path) -> Expect:
    raw = getattr(module, "expect", None)
    if callable(raw):
        try:
            raw = raw()
        except (Exception, SystemExit) as exc:  # the user's code
            raise ScenarioFileError(f"{path}: expect(): {type(exc).__name__}: {exc}") from None
    if isinstance(raw, Expect):
        raw = {f: getattr(raw, f) for f in Expect.__dataclass_fields__}
    if not isinstance(raw, Mapping):
        raise ScenarioFileError(f"{path}: define `expect` (a dict or gameday.scenarios.Expect)")
    known = {"alert", "runbook", "labels", "ready", "detect_timeout", "restore_timeout"}
    unknown = set(raw) - known
    if unknown or "alert" not in raw or "runbook" not in raw:
        raise ScenarioFileError(
            f"{path}: expect needs 'alert' and 'runbook' (optional: labels, ready, detect_timeout, "
            f"restore_timeout); unknown keys: {sorted(unknown)}"
        )
    try:
        return _checked_expect(raw)
    except ConfigError as exc:
        raise ScenarioFileError(f"{path}: {exc}") from None


def _checked_expect(raw: Mapping[str, Any]) -> Expect:
    """`raw` as an Expect the runner can score, or ConfigError naming the key (`expect.labels`): an
    infinite timeout waited forever, a string `ready` waited for one model per character."""

    def text(key: str, value: Any) -> str:
        if not isinstance(value, str) or not value:
            raise ConfigError(f"expect.{key}: must be a non-empty string, got {bounded(value)}")
        return value

    labels = raw.get("labels") or {}
    if not isinstance(labels, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in labels.items()
    ):
        raise ConfigError(f"expect.labels: must map label names to strings, got {bounded(labels)}")
    ready = raw.get("ready") or ()
    if not isinstance(ready, list | tuple) or not all(isinstance(m, str) and m for m in ready):
        raise ConfigError(f"expect.ready: must be a list of model names, got {bounded(ready)}")
    timeouts = {
        key: check_number(
            f"expect.{key}",
            raw.get(key, getattr(Expect, key)),
            low=0,
            high=MAX_TIMEOUT_S,
            low_inclusive=False,
        )
        for key in ("detect_timeout", "restore_timeout")
    }
    expect = Expect(
        alert=text("alert", raw["alert"]),
        runbook=text("runbook", raw["runbook"]),
        labels=dict(labels),
        ready=tuple(ready),
        **timeouts,
    )
    if expect.runbook not in c.RUNBOOK_IDS:  # no alert or diagnosis names it: it could never pass
        close = difflib.get_close_matches(expect.runbook, sorted(c.RUNBOOK_IDS), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else " (the runbooks/ folder lists them)"
        raise ConfigError(f"expect.runbook: {bounded(expect.runbook)} is no runbook id{hint}")
    return expect


def load_file(path: Path) -> Scenario:
    """A user scenario: a Python file with `inject(ctx)`, `restore(ctx)` and `expect`; optional
    NAME (default: the file's stem) and a docstring whose first line says what it injects."""
    if not path.exists():
        raise ScenarioFileError(f"scenario file {path} does not exist")
    if not path.is_file():
        raise ScenarioFileError(f"scenario file {path} is not a regular file (a directory, a device, a FIFO)")
    spec = importlib.util.spec_from_file_location(f"triton_sre_gameday_user_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ScenarioFileError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:  # the user's code: any error, an exit too, is a bad file
        raise ScenarioFileError(f"{path}: {type(exc).__name__}: {exc}") from None
    inject, restore = getattr(module, "inject", None), getattr(module, "restore", None)
    if not callable(inject) or not callable(restore):
        raise ScenarioFileError(f"{path}: define inject(ctx) and restore(ctx)")
    doc = (module.__doc__ or "").strip().splitlines()
    name = str(getattr(module, "NAME", path.stem)).replace("_", "-")
    if not name or not name.isprintable():
        raise ScenarioFileError(f"{path}: NAME must be a printable, non-empty name, got {name!r}")
    return Scenario(
        name=name,
        injects=doc[0] if doc else f"user scenario {path.name}",
        inject=inject,
        restore=restore,
        expect=_expect_of(module, path),
    )


def load_files(paths: list[Path], builtins: list[Scenario]) -> list[Scenario]:
    """`load_file` of each path; ScenarioFileError when a file's name is a built-in's or an earlier
    file's (`--scenario NAME` would run only one of them)."""
    owners = {s.name: "a built-in scenario" for s in builtins}
    scenarios = []
    for path in paths:
        scenario = load_file(path)
        if scenario.name in owners:
            raise ScenarioFileError(f"{path}: NAME {scenario.name!r} is taken by {owners[scenario.name]}")
        owners[scenario.name] = str(path)
        scenarios.append(scenario)
    return scenarios


def select(scenarios: list[Scenario], names: list[str]) -> list[Scenario]:
    """The named scenarios in the order given (all when `names` is empty); KeyError names a stranger."""
    if not names:
        return scenarios
    by_name = {s.name: s for s in scenarios}
    missing = [n for n in names if n not in by_name]
    if missing:
        raise KeyError(", ".join(missing))
    return [by_name[n] for n in dict.fromkeys(names)]
