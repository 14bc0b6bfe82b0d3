"""The bot reads the slos.yaml `generate` read (`--slo-file`, or `slo_file:` in its config): the spec's
`cluster_label` names an alert's cluster in the message and narrows the scaling figures, the spec's
`rollout:` section answers `/triton rollout`. Without it: the label `cluster` and the shipped spec."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from fake_prometheus import serve
from test_bot_delivery import SLACK_TOKEN, TOKEN, ok_posts, send
from test_bot_fleet import CountingPrometheus
from test_fault_probes import assert_clean_error, run

from triton_sre import conventions as c
from triton_sre.bot.command import Bot, resolve_bot_settings
from triton_sre.bot.config import BotSettings
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.bot.outbox import Outbox
from triton_sre.bot.payload import parse_group
from triton_sre.bot.receiver import BotServer
from triton_sre.bot.scaling import ScalingAsk, asks
from triton_sre.bot.slack import SlackDelivery
from triton_sre.bot.worker import Worker
from triton_sre.checks import ConfigError
from triton_sre.cli import build_parser
from triton_sre.slo import default_spec

REGION = "region"  # a fleet's own name for its cluster label
SPEC = f"""slos:
  - name: availability
    type: availability
    objective: 99.9
cluster_label: {REGION}
rollout:
  window: 7m
"""
DEPLOYMENT = "triton-eu"


def _spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "slos.yaml"
    path.write_text(SPEC)
    return path


def _settings(*argv: str) -> BotSettings:
    return resolve_bot_settings(build_parser().parse_args(["bot", "--channel", "#c", *argv]))


def _queue_alert(case: str) -> dict[str, Any]:
    labels = {
        c.LABEL_ALERTNAME: c.ALERT_QUEUE_TIME_HIGH,
        c.LABEL_JOB: c.DEFAULT_TRITON_JOB,
        c.LABEL_MODEL: case,
        REGION: "eu-1",
        c.L_SEVERITY: c.SEVERITY_TICKET,
    }
    return {
        "version": "4",
        "groupKey": f"{{}}:{{model={case}}}",
        "status": c.AM_STATUS_FIRING,
        "receiver": "bot",
        "groupLabels": {c.LABEL_MODEL: case},
        "commonLabels": labels,
        "commonAnnotations": {},
        "externalURL": "",
        "alerts": [
            {
                "status": c.AM_STATUS_FIRING,
                "labels": labels,
                "annotations": {"summary": f"queue time high {case}"},
                "fingerprint": case,
                "startsAt": "2026-12-05T10:00:00Z",
            }
        ],
    }


def _post(settings: BotSettings, tmp_path: Path) -> tuple[str, list[str]]:
    """The message the bot posts for a queue alert labelled `region: eu-1`, and the PromQL it sent."""
    seen: list[str] = []
    sample = {c.LABEL_JOB: c.DEFAULT_TRITON_JOB, REGION: "eu-1", c.L_DEPLOYMENT: DEPLOYMENT}
    prometheus = serve(lambda _q, _t: {}, instant=[{"metric": sample, "value": [0, "5"]}], seen=seen)
    url = f"http://127.0.0.1:{prometheus.server_address[1]}"
    try:
        with SlackStandin(token=SLACK_TOKEN) as standin:
            configured = BotSettings(**{**settings.__dict__, "listen": "127.0.0.1:0", "prometheus_url": url})
            with Bot(configured, tmp_path / "o.sqlite3", TOKEN, SLACK_TOKEN, standin.url) as bot:
                case = uuid.uuid4().hex[:8]
                send(bot, _queue_alert(case))
                assert standin.wait_for(lambda: bool(ok_posts(standin, case)), 10)
                return json.dumps(ok_posts(standin, case)[0].params), seen
    finally:
        prometheus.shutdown()
        prometheus.server_close()


def test_the_specs_cluster_label_names_the_cluster_and_narrows_the_scaling_figures(tmp_path: Path) -> None:
    message, seen = _post(_settings("--slo-file", str(_spec_file(tmp_path))), tmp_path)
    assert f"{c.ALERT_QUEUE_TIME_HIGH}: " in message and " in cluster eu-1" in message
    scaling = [q for q in seen if c.REC_AUTOSCALE_DESIRED in q or c.REC_SERVING_REPLICAS in q]
    assert scaling and all(f'{REGION}="eu-1"' in q and f'{c.LABEL_JOB}="triton"' in q for q in scaling)
    assert f"5 replicas of {DEPLOYMENT} (5 serving)" in message


def test_without_a_spec_the_bot_reads_the_label_cluster_as_before(tmp_path: Path) -> None:
    settings = _settings()
    assert settings.spec is None and settings.cluster_label == c.LABEL_CLUSTER
    message, seen = _post(settings, tmp_path)
    assert "in cluster" not in message
    scaling = [q for q in seen if c.REC_AUTOSCALE_DESIRED in q]
    assert scaling and not any(REGION in q for q in scaling)


def test_asks_pair_each_deployment_with_the_servers_of_its_own_cluster() -> None:
    desired = [({c.LABEL_JOB: "a", REGION: "eu", c.L_DEPLOYMENT: "x"}, 2.0)]
    desired.append(({c.LABEL_JOB: "a", REGION: "us", c.L_DEPLOYMENT: "y"}, 4.0))
    serving = [({c.LABEL_JOB: "a", REGION: "eu"}, 1.0), ({c.LABEL_JOB: "a", REGION: "us"}, 3.0)]
    assert asks(desired, serving, REGION) == [ScalingAsk("y", 4.0, 3.0), ScalingAsk("x", 2.0, 1.0)]
    # read by the label `cluster`, the two regions' servers fall together: x would show y's 3
    assert asks(desired, serving)[1] == ScalingAsk("x", 2.0, 3.0)


def test_the_rollout_answer_uses_the_specs_rollout_section(tmp_path: Path) -> None:
    prometheus = serve(lambda _q, _t: {"resultType": "matrix", "result": []})
    url = f"http://127.0.0.1:{prometheus.server_address[1]}"
    answers = []
    try:
        for argv in (["--slo-file", str(_spec_file(tmp_path))], []):
            settings = _settings("--listen", "127.0.0.1:0", "--prometheus-url", url, *argv)
            server = BotServer(settings, Outbox(tmp_path / f"o{len(answers)}.sqlite3"), TOKEN).start()
            try:
                answers.append(server.command("rollout m"))
            finally:
                server.stop()
    finally:
        prometheus.shutdown()
        prometheus.server_close()
    assert "in the last 7m " in answers[0]
    assert f"in the last {default_spec().rollout.window} " in answers[1]
    assert default_spec().rollout.window != "7m"


def test_the_flag_wins_over_the_configs_slo_file(tmp_path: Path) -> None:
    other = tmp_path / "other.yaml"
    other.write_text(SPEC.replace(f"cluster_label: {REGION}", "cluster_label: k8s_cluster"))
    config = tmp_path / "bot.yaml"
    config.write_text(f"bot:\n  slo_file: {other}\n")
    assert _settings("--config", str(config)).cluster_label == "k8s_cluster"
    flagged = _settings("--config", str(config), "--slo-file", str(_spec_file(tmp_path)))
    assert flagged.cluster_label == REGION and flagged.slo_spec().rollout.window == "7m"


@pytest.mark.parametrize("content", ["slos: []\n", None])
def test_a_bad_slo_file_is_one_line_and_exit_2(tmp_path: Path, content: str | None) -> None:
    path = tmp_path / "slos.yaml"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ConfigError, match=r"slos\.yaml"):
        _settings("--slo-file", str(path))
    code, out, err = run(["bot", "--channel", "#c", "--slo-file", str(path)], tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, "slos.yaml")
    assert len([line for line in err.splitlines() if line.strip()]) == 1 and out == "", err
    with pytest.raises(ConfigError, match=r"^--slo-file: "):
        _settings("--slo-file", "")


@pytest.mark.parametrize("with_spec", [True, False])
def test_stack_up_gives_the_bot_its_spec_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_spec: bool
) -> None:
    from triton_sre.stack.components import Component
    from triton_sre.stack.local import Stack, StackOptions

    spec_file = _spec_file(tmp_path) if with_spec else None
    opts = StackOptions(model_repository=tmp_path, workdir=tmp_path / "stack", slo_file=spec_file)
    stack = Stack(opts, lambda _text: None)
    spawned: dict[str, list[str]] = {}

    def spawn(name: str, argv: list[str], url: str, env: Any = None) -> Component:
        spawned[name] = argv
        return Component(name=name, pid=0, start_time=0, url=url, log="", argv=argv)

    monkeypatch.setattr(stack, "spawn", spawn)
    monkeypatch.setattr(stack, "wait_ready", lambda _comp, _check: None)
    monkeypatch.setenv(c.ENV_SLACK_BOT_TOKEN, SLACK_TOKEN)
    stack.start_bot(tmp_path / "token", "http://t:8000", "http://p:9090", "http://am:9093")
    argv = spawned["bot"]
    settings = resolve_bot_settings(build_parser().parse_args(argv[argv.index("bot") :]))
    assert settings.cluster_label == (REGION if with_spec else c.LABEL_CLUSTER)
    assert (settings.spec is not None) == with_spec


class _RegionalPrometheus(CountingPrometheus):
    """A global store holding one model's SLO series in two regions: a query naming region `west`
    gets west's figure; one naming no region gets the first series, east's (what Prometheus answers)."""

    def instant(self, expr: str, at: float | None = None) -> float:
        self.queries.append(expr)
        return 1.0 if f'{REGION}="west"' in expr else 67.9


def test_an_slo_alerts_burn_and_budget_are_read_for_its_cluster(tmp_path: Path) -> None:
    """The fleet journey: west's ticket (burning 1.0x over 3d) was posted with `Burn rate: 67.9x over
    3d · Error budget left: none, overspent (-6686.3%)`, east's figures, read from the global store
    without the alert's cluster."""
    labels = {
        c.LABEL_ALERTNAME: c.ALERT_SLO_ERROR_BUDGET_BURN,
        c.L_SLO: "availability",
        c.L_WINDOW: "3d",
        c.LABEL_MODEL: "ranker",
        REGION: "west",
        c.L_SEVERITY: c.SEVERITY_TICKET,
    }
    payload = {**_queue_alert("ranker"), "commonLabels": labels}
    payload["alerts"] = [{**payload["alerts"][0], "labels": labels}]
    settings = _settings("--slo-file", str(_spec_file(tmp_path)), "--prometheus-url", "http://127.0.0.1:9")
    worker = Worker(settings, Outbox(tmp_path / "o.sqlite3"), SlackDelivery("xoxb-unused"), {})
    prom = _RegionalPrometheus()
    worker.prometheus = prom  # type: ignore[assignment]
    facts = worker.facts(parse_group(payload))
    assert facts.burn_rates == {"ranker": 1.0} and facts.budgets_remaining == {"ranker": 1.0}
    assert prom.queries and all(f'{REGION}="west"' in q for q in prom.queries), prom.queries
