"""The sidecar stack from local binaries: `triton-sre stack up|status|down`.

Components, started in this order, each detached in its own process group (so `stack up` returns
and `stack down` can stop exactly what it started, children included):

- ``exporter``: ``triton-sre export``, first, as a sidecar starts with Triton: it polls a Triton
  that is not up yet;
- ``triton``: the real tritonserver 2.51 from nvidia-pytriton (``python -m triton_sre.stack.run_triton``)
  with explicit model control; once the exporter has polled it, every model is loaded through
  model control, one at a time, so the exporter measures each load (``triton_sre.stack.loads``);
- ``prometheus`` and ``alertmanager``: Debian's binaries with configs rendered from the same
  templates as deploy/ (``triton_sre.stack.render``) and the rules ``triton-sre generate`` writes;
- ``slack-standin`` (only without ``$SLACK_BOT_TOKEN``): the Slack Web API stand-in, whose log shows
  what would be posted;
- ``bot``: ``triton-sre bot`` (when this installation has it).

The state file ``<workdir>/stack.json`` records every started process with its start time, so a
recycled pid is never signalled (``triton_sre.stack.components``: status and down read it).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import requests

from triton_sre import conventions as c
from triton_sre import httpclient
from triton_sre.durations import format_duration
from triton_sre.files import make_dirs, write_files
from triton_sre.inputs import MAX_SPEC_BYTES, unpiped
from triton_sre.logtail import tail
from triton_sre.shutdown import stops_held, unwinding_on_stop
from triton_sre.slo import Spec, default_spec, load_spec
from triton_sre.stack import owner as ownership
from triton_sre.stack.components import Component, down, load_state, process_start_time, save_state, status
from triton_sre.stack.guard import WorkdirBusy, port_base_problem, workdir_lock
from triton_sre.stack.loads import (
    PACED_INTERVAL_MAX,
    exporter_measured,
    just_before_next_poll,
    load_every_model,
)
from triton_sre.stack.processes import death_signal_hook, free_ports

DEFAULT_WORKDIR = Path.home() / ".cache" / "triton-sre" / "stack"
DEFAULT_CHANNEL = "#triton-alerts"
PROMETHEUS_DEFAULT_RETENTION_S = 15 * 86400.0
"""Prometheus' own `--storage.tsdb.retention.time` default (15d): the stack never keeps less."""
# port offsets from --port-base
PORT_OFFSETS = {
    "triton_http": 0,
    "triton_grpc": 1,
    "triton_metrics": 2,
    "exporter": 3,
    "prometheus": 4,
    "alertmanager": 5,
    "bot": 6,
    "slack_standin": 7,
}



def retention_for(generated: Mapping[str, str]) -> str:
    """Prometheus' retention for the rules `generate` wrote: the longest range they read (the SLO period),
    never below Prometheus' own default, so `doctor`'s retention check passes on this stack."""
    import yaml

    from triton_sre.doctor.promchecks import groups_from_rule_files, longest_range
    from triton_sre.generate.command import ALERTS_DIR

    rules = {
        rel: yaml.safe_load(text)
        for rel, text in generated.items()
        if rel.startswith(f"{ALERTS_DIR}/") and rel.count("/") == 1 and rel.endswith(".yaml")
    }
    return format_duration(max(longest_range(groups_from_rule_files(rules)), PROMETHEUS_DEFAULT_RETENTION_S))

class StackError(RuntimeError):
    """A component did not start; the message carries its log tail."""


@dataclass
class StackOptions:
    model_repository: Path
    workdir: Path
    slo_file: Path | None = None
    port_base: int = 0  # 0: free ports
    interval: float = 15.0  # scrape, rule evaluation and exporter poll, seconds
    group_wait: float = 30.0  # Alertmanager's wait before the first notification of a group
    runbook_base_url: str = c.DEFAULT_RUNBOOK_BASE_URL
    channel: str = DEFAULT_CHANNEL
    timeout: float = 120.0  # per component, to become ready
    exporter_config: Path | None = None  # the exporter's YAML config (pricing); None: none
    models_at_startup: bool = False  # True: Triton loads every model at startup (no load measured)
    triton_args: tuple[str, ...] = ()  # more arguments of run_triton (gameday: explicit model control)


def standin_notice(log: str | Path) -> str:
    """What `up` says when the bot posts to the Slack stand-in. Worded so that the CLI's stderr
    redaction leaves it whole: "no $SLACK_BOT_TOKEN: posting ..." read as a token's value and was
    printed "<redacted> to the Slack stand-in"."""
    return f"bot: ${c.ENV_SLACK_BOT_TOKEN} is not set: posting to the Slack stand-in, see {log}"


def _fmt_seconds(seconds: float) -> str:
    return f"{int(seconds * 1000)}ms" if seconds < 1 or seconds != int(seconds) else f"{int(seconds)}s"


# ------------------------------------------------------------------------------------- up
class Stack:
    def __init__(self, opts: StackOptions, say: Callable[[str], None], owner: str | None = None) -> None:
        self.opts = opts
        self.say = say
        self.owner = owner  # a command whose own stack this is (gameday, demo): it dies with it
        self.workdir = opts.workdir.absolute()
        self.components: list[Component] = []
        self.info: dict[str, Any] = {}
        self.retention = format_duration(PROMETHEUS_DEFAULT_RETENTION_S)
        names = list(PORT_OFFSETS)
        if opts.port_base:
            self.ports = {n: opts.port_base + off for n, off in PORT_OFFSETS.items()}
        else:
            self.ports = dict(zip(names, free_ports(len(names)), strict=True))

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.ports[name]}"

    # -- files
    def generated_files(self, spec: Spec) -> dict[str, str]:
        """What `triton-sre generate` writes (rules, promtool tests, dashboards), by relative path."""
        from triton_sre.generate.command import render_all

        return render_all(spec, self.opts.runbook_base_url)

    def render(self) -> dict[str, Path]:
        """Rules, dashboards, Prometheus/Alertmanager/Grafana configs and the bot token in the workdir."""
        from triton_sre.stack import render

        spec = load_spec(self.opts.slo_file) if self.opts.slo_file else default_spec()
        generated = self.workdir / "generated"
        rendered = self.generated_files(spec)
        write_files(rendered, generated)
        self.retention = retention_for(rendered)
        secrets_dir = self.workdir / "secrets"
        secrets_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(secrets_dir, 0o700)
        token_file = secrets_dir / "bot_token"
        if not token_file.exists():
            fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32) + "\n")
        topology = render.Topology(
            triton_target=f"127.0.0.1:{self.ports['triton_metrics']}",
            exporter_target=f"127.0.0.1:{self.ports['exporter']}",
            prometheus_target=f"127.0.0.1:{self.ports['prometheus']}",
            alertmanager_target=f"127.0.0.1:{self.ports['alertmanager']}",
            prometheus_url=self.url("prometheus"),
            bot_webhook_url=f"{self.url('bot')}{c.PATH_BOT_ALERTMANAGER}",
            bot_token_file=str(token_file),
            rule_files=tuple(str(p) for p in sorted((generated / "alerts").glob("*.yaml"))),
            dashboards_path=str(generated / "dashboards"),
        )
        interval = _fmt_seconds(self.opts.interval)
        timings = render.Timings(
            scrape_interval=interval,
            scrape_timeout=_fmt_seconds(min(10.0, self.opts.interval * 0.9)),
            evaluation_interval=interval,
            group_wait=_fmt_seconds(self.opts.group_wait),
            group_interval=_fmt_seconds(max(self.opts.group_wait, min(300.0, self.opts.interval * 20))),
        )
        configs = render.render_configs(spec, topology, timings, render.LOCAL_HEADER)
        write_files(configs, self.workdir / "config")
        return {
            "prometheus": self.workdir / "config" / render.PROMETHEUS_FILE,
            "alertmanager": self.workdir / "config" / render.ALERTMANAGER_FILE,
            "token": token_file,
            "generated": generated,
        }

    # -- processes
    def spawn(self, name: str, argv: list[str], url: str, env: Mapping[str, str] | None = None) -> Component:
        logdir = self.workdir / "logs"
        logdir.mkdir(parents=True, exist_ok=True)
        log_path = logdir / f"{name}.log"
        cwd = self.workdir / name
        cwd.mkdir(parents=True, exist_ok=True)
        with log_path.open("ab") as log:
            log.write(f"# triton-sre stack: {' '.join(argv)}\n".encode())
            log.flush()
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                env={**os.environ, **(env or {})},
                start_new_session=True,
                preexec_fn=self.child_setup(),
            )
        start = process_start_time(proc.pid)
        comp = Component(name, proc.pid, start or 0, url, str(log_path), argv)
        self.components.append(comp)
        self.save()
        self.say(f"started {name} (pid {proc.pid}), log {log_path}")
        return comp

    def child_setup(self) -> Callable[[], None] | None:
        """A hook run in each component's process before it starts: none for `stack up`, whose
        components outlive it; an owned stack's get SIGTERM when the owner dies (stack/owner.py)."""
        return death_signal_hook(signal.SIGTERM) if self.owner else None

    def take_ownership(self) -> None:
        """An owned stack: its owner recorded in the state file, the workdir listed, the watchdog
        started, before any component (stack/owner.py). Nothing for `stack up`."""
        if self.owner is None:
            return
        make_dirs(self.workdir)
        self.info[ownership.OWNER_KEY] = me = ownership.this_process(self.owner)
        ownership.register(self.workdir)
        self.save()
        pid = ownership.start_watchdog(self.workdir, me, self.workdir / "logs" / "watchdog.log")
        self.say(f"watchdog (pid {pid}) stops this stack if {self.owner} dies without stopping it")

    def save(self) -> None:
        save_state(self.workdir, self.components, self.info)

    def wait_ready(self, comp: Component, check: Callable[[], bool]) -> None:
        deadline = time.monotonic() + self.opts.timeout
        while True:
            if not comp.alive():
                raise StackError(
                    f"{comp.name} exited while starting (log {comp.log}); last lines:\n{tail(comp.log)}"
                )
            with contextlib.suppress(requests.RequestException, OSError, ValueError):
                if check():
                    self.say(f"{comp.name} ready at {comp.url}")
                    return
            if time.monotonic() > deadline:
                raise StackError(
                    f"{comp.name} not ready after {self.opts.timeout:.0f} s (log {comp.log}); "
                    f"last lines:\n{tail(comp.log)}"
                )
            time.sleep(0.2)

    @staticmethod
    def http_ok(url: str) -> Callable[[], bool]:
        return lambda: httpclient.get(url, timeout=2).status_code == 200

    def up(self) -> dict[str, Any]:
        opts = self.opts
        make_dirs(self.workdir)
        if opts.slo_file is not None:  # a pipe (`--spec <(...)`) is read once: the bot reads a copy
            opts.slo_file = unpiped(opts.slo_file, self.workdir, MAX_SPEC_BYTES)
        files = self.render()
        self.info.update(  # what was set before (a gameday's owner) is kept
            {
                "model_repository": str(opts.model_repository),
                "generated": str(files["generated"]),
                "config": str(self.workdir / "config"),
            }
        )
        exporter = self.start_exporter()
        triton = self.start_triton()
        self.wait_ready(exporter, self.http_ok(f"{exporter.url}{c.PATH_READYZ}"))  # it has polled Triton
        # models Triton loaded at startup (--models-at-startup, --load-model in triton_args) stay so
        if not opts.models_at_startup and not any(a.startswith("--load-model") for a in opts.triton_args):
            paced = opts.interval <= PACED_INTERVAL_MAX
            loads = load_every_model(
                triton.url,
                self.say,
                timeout=opts.timeout,
                before_each=just_before_next_poll(exporter.url, opts.interval) if paced else None,
                measured=exporter_measured(exporter.url, opts.interval) if paced else None,
            )
            self.info["loads"] = [asdict(x) for x in loads]
            self.save()
        # Prometheus
        prometheus_bin = shutil.which("prometheus")
        if prometheus_bin is None:
            raise StackError("Debian's prometheus is not installed (apt-get install prometheus)")
        prometheus = self.spawn(
            "prometheus",
            [
                prometheus_bin,
                f"--config.file={files['prometheus']}",
                f"--storage.tsdb.path={self.workdir / 'prometheus' / 'data'}",
                f"--storage.tsdb.retention.time={self.retention}",
                f"--web.listen-address=127.0.0.1:{self.ports['prometheus']}",
                f"--web.external-url={self.url('prometheus')}/",
                "--web.enable-lifecycle",
                "--log.level=warn",
            ],
            self.url("prometheus"),
        )
        self.wait_ready(prometheus, self.http_ok(f"{prometheus.url}/-/ready"))
        # Alertmanager
        am_bin = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")
        if am_bin is None:
            raise StackError("Debian's prometheus-alertmanager is not installed")
        alertmanager = self.spawn(
            "alertmanager",
            [
                am_bin,
                f"--config.file={files['alertmanager']}",
                f"--storage.path={self.workdir / 'alertmanager' / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.ports['alertmanager']}",
                f"--web.external-url={self.url('alertmanager')}/",
                "--cluster.listen-address=",
                "--log.level=warn",
            ],
            self.url("alertmanager"),
        )
        self.wait_ready(alertmanager, self.http_ok(f"{alertmanager.url}/-/ready"))
        # Slack stand-in and bot
        self.start_bot(files["token"], triton.url, prometheus.url, alertmanager.url)
        return status(self.workdir)

    def start_exporter(self) -> Component:
        """The exporter, before Triton (as a sidecar starts with it): up, not yet ready."""
        opts = self.opts
        exporter = self.spawn(
            "exporter",
            [
                sys.executable, "-m", "triton_sre.cli", "export",
                f"--triton-url={self.url('triton_http')}",
                f"--metrics-url={self.url('triton_metrics')}{c.PATH_METRICS}",
                f"--listen=127.0.0.1:{self.ports['exporter']}",
                f"--interval={opts.interval:g}",
                f"--window={max(60.0, opts.interval * 4):g}",
                *([f"--config={opts.exporter_config}"] if opts.exporter_config else []),
            ],
            self.url("exporter"),
        )  # fmt: skip
        self.wait_ready(exporter, self.http_ok(f"{exporter.url}{c.PATH_HEALTHZ}"))
        return exporter

    def start_triton(self) -> Component:
        """Triton, with explicit model control and no model loaded unless `models_at_startup`."""
        opts = self.opts
        ready_file = self.triton_ready_file()
        mode = "none" if opts.models_at_startup else "explicit"
        triton = self.spawn(
            "triton",
            [
                sys.executable, "-m", "triton_sre.stack.run_triton",
                f"--model-repository={opts.model_repository}",
                f"--workdir={self.workdir / 'triton'}",
                f"--http-port={self.ports['triton_http']}",
                f"--grpc-port={self.ports['triton_grpc']}",
                f"--metrics-port={self.ports['triton_metrics']}",
                f"--ready-file={ready_file}",
                f"--startup-timeout={opts.timeout}",
                f"--model-control-mode={mode}",
                *opts.triton_args,
            ],
            self.url("triton_http"),
        )  # fmt: skip
        self.wait_triton(triton)
        self.save()
        return triton

    def triton_ready_file(self) -> Path:
        """run_triton's ready file, removed: one a runner killed with SIGKILL left behind would be read as
        the next Triton's (its pid and log)."""
        ready_file = self.workdir / "triton" / "ready.json"
        ready_file.unlink(missing_ok=True)
        return ready_file

    def wait_triton(self, triton: Component) -> None:
        """Wait for run_triton's ready file; record tritonserver's own pid, start time and log."""
        ready_file = self.workdir / "triton" / "ready.json"
        self.wait_ready(triton, ready_file.is_file)
        ready = json.loads(ready_file.read_text(encoding="utf-8"))
        triton.extra.update(
            {
                "metrics_url": ready["metrics_url"],
                "server_pid": ready["pid"],
                "server_start_time": process_start_time(int(ready["pid"])),
                "server_log": ready["log"],
            }
        )

    def bot_flags(self) -> list[str]:
        """More flags of the bot: none here (a gameday's stack gives its scaled rollout window)."""
        return []

    def start_bot(self, token_file: Path, triton_url: str, prometheus_url: str, am_url: str) -> None:
        py = sys.executable
        env: dict[str, str] = {}
        if os.environ.get(c.ENV_SLACK_BOT_TOKEN, "").strip():
            self.say(f"bot: posting to Slack with ${c.ENV_SLACK_BOT_TOKEN}")
        else:
            standin = self.spawn(
                "slack-standin",
                [
                    py, "-m", "triton_sre.bot.dev_slack_standin",
                    "--port", str(self.ports["slack_standin"]),
                    "--token", c.SLACK_STANDIN_TOKEN,
                ],
                self.url("slack_standin"),
            )  # fmt: skip
            self.wait_ready(standin, self.http_ok(f"{standin.url}/_standin/calls"))
            standin.extra = {"posts_log": standin.log}
            self.save()
            env = {c.ENV_SLACK_BOT_TOKEN: c.SLACK_STANDIN_TOKEN, c.ENV_SLACK_API_URL: f"{standin.url}/api/"}
            self.say(standin_notice(standin.log))
        argv = [
            py, "-m", "triton_sre.cli", "bot",
            f"--listen=127.0.0.1:{self.ports['bot']}",
            f"--token-file={token_file}",
            f"--outbox={self.workdir / 'bot' / 'outbox.sqlite3'}",
            f"--channel={self.opts.channel}",
            f"--triton-url={triton_url}",
            f"--prometheus-url={prometheus_url}",
            f"--alertmanager-url={am_url}",
        ]  # fmt: skip
        if self.opts.runbook_base_url.startswith(("http://", "https://")):
            argv.append(f"--runbook-base-url={self.opts.runbook_base_url}")
        if self.opts.slo_file:  # the spec the rules came from: its cluster label, its rollout settings
            argv.append(f"--slo-file={self.opts.slo_file.absolute()}")
        argv += self.bot_flags()
        bot = self.spawn("bot", argv, self.url("bot"), env)
        self.wait_ready(bot, self.http_ok(f"{bot.url}{c.PATH_HEALTHZ}"))


def up(opts: StackOptions, say: Callable[[str], None], owner: str | None = None) -> dict[str, Any]:
    """Start the stack; on failure stop what was started and raise StackError. With `owner` (the
    command's name: demo) the stack is the calling process's and stops when it dies (stack/owner.py)."""
    workdir = opts.workdir.absolute()
    make_dirs(workdir)
    try:
        with workdir_lock(workdir):  # one `stack up` at a time per workdir (stack/guard.py)
            running = [x for x in load_state(workdir) if x.alive()]
            if running:
                raise StackError(
                    f"a stack is already running in {workdir} ({', '.join(x.name for x in running)}); "
                    f"run `triton-sre stack down --workdir {shlex.quote(str(workdir))}` first"
                )
            down(workdir, lambda _: None)  # leftovers of a crashed stack
            stack = Stack(opts, say, owner)
            if opts.port_base and (problem := port_base_problem(opts.port_base, stack.ports)):
                raise StackError(problem)
            stack.take_ownership()
            # SIGTERM and SIGHUP unwind as Ctrl-C does (their default action left what was started
            # running); the cleanup runs to its end whatever signal comes next
            with unwinding_on_stop():
                try:
                    return stack.up()
                except BaseException:
                    with stops_held():
                        down(workdir, say)
                    raise
    except WorkdirBusy as exc:
        raise StackError(str(exc)) from None
