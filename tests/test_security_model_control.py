"""The exporter, the bot, report, doctor, triage and rollout never ask Triton to load or unload a model.

Only `gameday` and `stack up` (on the stack they start) call model control, through
`stack/loads.py`'s `control_url`. Proven twice: the command modules never import the two modules
that post to it, and a recording proxy in front of the real Triton sees every request each
read-only command sends over a run (the exporter's polls, doctor, triage --triton-url, the bot's
diagnosis of an UNAVAILABLE model and its `diagnose` slash command) and none is a load or unload.
`report` and `rollout` take no Triton URL at all: they read Prometheus only.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from faultproxy import FaultProxy
from test_bot_render import alert, payload
from test_redaction_paths import SIGNING_SECRET, SLACK_TOKEN, WEBHOOK_TOKEN, cli, notify, slash

from triton_sre.demo import BROKEN_INIT
from triton_sre.stack.loads import control_url
from triton_sre.stack.local_triton import LocalTriton

ROOT = Path(__file__).resolve().parents[1]
MODEL_CONTROL = re.compile(r"^/v2/repository/models/[^?]+/(?:load|unload)(?:\?|$)")
CONTROL_MODULES = ("triton_sre.stack.loads", "triton_sre.gameday.context")
READ_ONLY_COMMANDS = (
    "triton_sre.exporter.service",
    "triton_sre.exporter.endpoints",
    "triton_sre.bot.command",
    "triton_sre.bot.receiver",
    "triton_sre.bot.worker",
    "triton_sre.report.command",
    "triton_sre.doctor.command",
    "triton_sre.diagnosis.command",
    "triton_sre.rollout.check",
)


def control_calls(proxy: FaultProxy) -> list[str]:
    return [path for path in proxy.requests if MODEL_CONTROL.match(path)]


@pytest.mark.parametrize("module", READ_ONLY_COMMANDS)
def test_read_only_commands_never_import_model_control(module: str) -> None:
    code = f"import sys, {module}; print(sorted(m for m in {CONTROL_MODULES!r} if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
        check=True,
    )
    assert done.stdout.strip() == "[]", done.stdout


def test_only_the_stack_builds_a_model_control_url() -> None:
    """A second place writing `/load` or `/unload` after a repository path would escape the test above."""
    builders = sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "triton_sre").rglob("*.py")
        if "repository/models/" in path.read_text(encoding="utf-8")
    )
    assert builders == ["triton_sre/stack/loads.py"]
    users = sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "triton_sre").rglob("*.py")
        if "control_url(" in path.read_text(encoding="utf-8")
    )
    assert users == ["triton_sre/gameday/context.py", "triton_sre/stack/loads.py"]


@pytest.fixture
def proxy(triton: LocalTriton) -> Iterator[FaultProxy]:
    with FaultProxy(triton.http_url) as recording:
        yield recording


def test_the_recording_proxy_sees_a_load(proxy: FaultProxy) -> None:
    """The control: a load posted through the proxy is what the other tests look for."""
    requests.post(control_url(proxy.url, BROKEN_INIT, "load"), timeout=30)
    assert control_calls(proxy) == [f"/v2/repository/models/{BROKEN_INIT}/load"]


def test_exporter_polls_never_control_models(proxy: FaultProxy, triton: LocalTriton) -> None:
    from triton_sre.config import ExporterSettings
    from triton_sre.exporter.service import Exporter

    exporter = Exporter(ExporterSettings(triton_url=proxy.url, metrics_url=triton.metrics_url, interval=0.2))
    for _ in range(3):
        assert exporter.poll_once() is not None
    assert proxy.requests, "the exporter read nothing through the proxy"
    assert control_calls(proxy) == []


def test_doctor_and_live_triage_never_control_models(proxy: FaultProxy, triton: LocalTriton) -> None:
    doctor = cli("doctor", "--triton-url", proxy.url, "--metrics-url", triton.metrics_url)
    triage = cli("triage", "--triton-url", proxy.url, "--format", "json")
    assert doctor.returncode in (0, 1), doctor.stderr
    assert triage.returncode in (0, 1), triage.stderr
    assert BROKEN_INIT in triage.stdout  # triage read the index: the broken model is a finding
    assert sum(proxy.requests.values()) >= 2
    assert control_calls(proxy) == []


def test_the_bot_never_controls_models(proxy: FaultProxy, tmp_path: Path) -> None:
    from triton_sre.bot.command import Bot
    from triton_sre.bot.config import BotSettings
    from triton_sre.bot.dev_slack_standin import SlackStandin

    group = payload([alert(0, model=BROKEN_INIT, severity="page")], model=BROKEN_INIT)
    settings = BotSettings(channel="#t", listen="127.0.0.1:0", triton_url=proxy.url)
    outbox = tmp_path / "outbox.sqlite3"
    with (
        SlackStandin(token=SLACK_TOKEN) as standin,
        Bot(settings, outbox, WEBHOOK_TOKEN, SLACK_TOKEN, standin.url, SIGNING_SECRET) as bot,
    ):
        notify(bot, standin, group)
        assert BROKEN_INIT in slash(bot, f"diagnose {BROKEN_INIT}")
    assert sum(proxy.requests.values()) >= 2  # the worker's diagnosis and the slash command's
    assert control_calls(proxy) == []


@pytest.mark.parametrize("command", [("report",), ("rollout", "check")])
def test_report_and_rollout_take_no_triton_url(command: tuple[str, ...]) -> None:
    done = cli(*command, "--help")
    assert done.returncode == 0
    assert "--prometheus-url" in done.stdout and "--triton-url" not in done.stdout
