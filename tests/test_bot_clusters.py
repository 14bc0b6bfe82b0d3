"""One bot for a fleet of clusters (clusters29): one Alertmanager, one bot, several clusters. With only
`triton_url` the bot diagnosed every cluster's unavailable model on one Triton. The config's
`clusters` maps the alert's cluster label value to that cluster's Triton (and Prometheus): east is the
shared real Triton, west a local server answering Triton's HTTP API, the global `triton_url` a third
(it must not be asked for either cluster). Alerts go through the real Alertmanager."""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from test_bot_alertmanager import (
    CHANNEL,
    RUNBOOK_BASE,
    SLACK_TOKEN,
    WEBHOOK_TOKEN,
    Alertmanager,
    new_case,
    posts,
    unavailable_alert,
    wait_until,
)
from test_bot_receiver import SIGNING_SECRET, slash

from triton_sre import conventions as c
from triton_sre.bot.command import Bot
from triton_sre.bot.config import BotSettings, ClusterEntry, settings_from_mapping
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.bot.outbox import Outbox
from triton_sre.bot.payload import parse_group
from triton_sre.bot.slack import SlackDelivery
from triton_sre.bot.worker import Worker
from triton_sre.checks import ConfigError
from triton_sre.demo import BROKEN_MISSING_MODULE
from triton_sre.stack.processes import free_ports

CLUSTER = c.LABEL_CLUSTER  # no slo_file: the bot reads the default cluster label


class ApiStandin:
    """A local server answering Triton's HTTP API (an empty repository index, server metadata) and
    Prometheus' query API (no series); records each path asked."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, body: Any) -> None:
                standin.paths.append(self.path)
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.do_GET()

            def do_GET(self) -> None:
                if self.path.startswith("/api/v1/query_range"):
                    self._answer({"status": "success", "data": {"resultType": "matrix", "result": []}})
                elif self.path.startswith("/api/v1/"):
                    self._answer({"status": "success", "data": {"resultType": "vector", "result": []}})
                elif self.path.startswith("/v2/repository/index"):
                    self._answer([])
                else:
                    self._answer({"name": "triton", "version": "2.51.0", "extensions": []})

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_the_clusters_mapping_is_read_and_each_mistake_names_its_key() -> None:
    doc = {"bot": {"clusters": {"east": {"triton_url": "http://triton.east:8000"}}}}
    doc["bot"]["clusters"]["west"] = {
        "triton_url": "http://t.west:8000",
        "prometheus_url": "http://p.west:9090",
    }
    settings = settings_from_mapping(doc, "bot.yaml")
    assert settings.clusters == {
        "east": ClusterEntry("http://triton.east:8000"),
        "west": ClusterEntry("http://t.west:8000", "http://p.west:9090"),
    }
    mistakes = {
        "bot.yaml: bot.clusters.east: unknown key 'url'": {"east": {"url": "http://x:1"}},
        "bot.yaml: bot.clusters.east: triton_url: missing": {"east": {"prometheus_url": "http://x:1"}},
        "bot.yaml: bot.clusters.east.triton_url": {"east": {"triton_url": "triton.east"}},
        "bot.yaml: bot.clusters.west.prometheus_url": {
            "west": {"triton_url": "http://x:1", "prometheus_url": 3}
        },
        "bot.yaml: bot.clusters.east: must be a mapping": {"east": "http://x:1"},
        "bot.yaml: bot.clusters: a cluster name must be a non-empty string": {
            1: {"triton_url": "http://x:1"}
        },
        "bot.yaml: bot.clusters: must be a non-empty mapping": ["east"],
    }
    for message, clusters in mistakes.items():
        with pytest.raises(ConfigError) as caught:
            settings_from_mapping({"bot": {"clusters": clusters}}, "bot.yaml")
        assert str(caught.value).startswith(message), caught.value


def test_an_alerts_cluster_picks_its_triton_and_prometheus_before_the_fleet_and_the_global_urls() -> None:
    east, west = (
        ClusterEntry("http://triton.east:8000"),
        ClusterEntry("http://t.west:8000", "http://p.west:9090"),
    )
    settings = BotSettings(
        triton_url="http://triton.global:8000",
        prometheus_url="http://prometheus.global:9090",
        clusters={"east": east, "west": west},
    )
    instance = {c.LABEL_INSTANCE: "triton-0:8003"}  # the same instance name in every cluster
    assert settings.triton_url_for({**instance, CLUSTER: "east"}) == east.triton_url
    assert settings.triton_url_for({**instance, CLUSTER: "west"}) == west.triton_url
    assert settings.triton_url_for({**instance, CLUSTER: "north"}) == settings.triton_url  # not mapped
    assert settings.triton_url_for(instance) == settings.triton_url  # single-URL configuration
    assert settings.prometheus_url_for({CLUSTER: "west"}) == west.prometheus_url
    assert settings.prometheus_url_for({CLUSTER: "east"}) == settings.prometheus_url  # a global store


def _burn_group(cluster: str) -> dict[str, Any]:
    """Alertmanager's webhook body of one SLO page of model ranker in `cluster`."""
    labels = {
        c.LABEL_ALERTNAME: c.ALERT_SLO_ERROR_BUDGET_BURN,
        c.L_SLO: "availability",
        c.L_WINDOW: "1h",
        c.LABEL_MODEL: "ranker",
        CLUSTER: cluster,
        c.L_SEVERITY: c.SEVERITY_PAGE,
    }
    alert = {"status": c.AM_STATUS_FIRING, "labels": labels, "annotations": {}, "fingerprint": cluster}
    return {
        "version": "4",
        "groupKey": f"{{}}:{{{CLUSTER}={cluster}}}",
        "status": c.AM_STATUS_FIRING,
        "receiver": "bot",
        "groupLabels": {CLUSTER: cluster},
        "commonLabels": labels,
        "commonAnnotations": {},
        "externalURL": "",
        "alerts": [{**alert, "startsAt": "2026-12-06T10:00:00Z"}],
    }


def _queries(standin: ApiStandin) -> list[str]:
    return [urllib.parse.unquote_plus(p) for p in standin.paths if p.startswith("/api/v1/query")]


def test_a_clusters_own_prometheus_is_read_without_the_cluster_label(tmp_path: Path) -> None:
    """A cluster's own Prometheus has no cluster label on its series (its external labels are added to
    what it remote-writes): west's figures are asked there without `cluster="west"`; east, with no
    Prometheus of its own, is read on the global store, narrowed to east."""
    west_prometheus, global_prometheus = ApiStandin(), ApiStandin()
    try:
        settings = BotSettings(
            prometheus_url=global_prometheus.url,
            clusters={"west": ClusterEntry("http://127.0.0.1:9", west_prometheus.url)},
        )
        worker = Worker(settings, Outbox(tmp_path / "o.sqlite3"), SlackDelivery("xoxb-unused"), {})
        worker.facts(parse_group(_burn_group("west")))
        west = _queries(west_prometheus)
        assert west and not [q for q in west if f"{CLUSTER}=" in q], west
        assert _queries(global_prometheus) == []
        worker.facts(parse_group(_burn_group("east")))
        east = _queries(global_prometheus)
        assert east and all(f'{CLUSTER}="east"' in q for q in east), east
        assert len(_queries(west_prometheus)) == len(west)
    finally:
        west_prometheus.stop()
        global_prometheus.stop()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory, triton: Any) -> Iterator[dict[str, Any]]:
    workdir = tmp_path_factory.mktemp("bot-clusters")
    west, west_prometheus, elsewhere = ApiStandin(), ApiStandin(), ApiStandin()
    with SlackStandin(token=SLACK_TOKEN) as slack:
        settings = BotSettings(
            channel=CHANNEL,
            listen="127.0.0.1:0",
            runbook_base_url=RUNBOOK_BASE,
            triton_url=elsewhere.url,
            prometheus_url=elsewhere.url,
            clusters={
                "east": ClusterEntry(triton.http_url),
                "west": ClusterEntry(west.url, west_prometheus.url),
            },
            retry_base_seconds=0.2,
            retry_max_seconds=1.0,
        )
        bot = Bot(settings, workdir / "outbox.sqlite3", WEBHOOK_TOKEN, SLACK_TOKEN, slack.url, SIGNING_SECRET)
        bot.start()
        (unused,) = free_ports(1)
        am = Alertmanager(workdir / "am", bot.url, f"http://127.0.0.1:{unused}")
        try:
            yield {
                "bot": bot,
                "am": am,
                "slack": slack,
                "west": west,
                "west_prometheus": west_prometheus,
                "elsewhere": elsewhere,
                "east": triton,
            }
        finally:
            am.stop()
            bot.stop()
            for standin in (west, west_prometheus, elsewhere):
                standin.stop()


@pytest.mark.triton
def test_each_clusters_unavailable_model_is_diagnosed_on_its_own_triton(fleet: dict[str, Any]) -> None:
    east_case, west_case = new_case(), new_case()
    fleet["am"].post(*unavailable_alert(east_case, **{CLUSTER: "east"}))
    fleet["am"].post(*unavailable_alert(west_case, **{CLUSTER: "west"}))
    (east,) = wait_until(lambda: posts(fleet["slack"], east_case), 20, "east's message")
    shown = json.dumps(east.params)
    assert f"live {fleet['east'].http_url}" in shown  # the real Triton of east named the cause
    assert f"{RUNBOOK_BASE}{c.RUNBOOK_PYTHON_MODULE_MISSING}.md" in shown
    (west,) = wait_until(lambda: posts(fleet["slack"], west_case), 20, "west's message")
    assert "/v2/repository/index" in fleet["west"].paths  # west's Triton was asked
    assert f"live {fleet['east'].http_url}" not in json.dumps(west.params)  # and east's answer not used
    # west's chart (the alert's generatorURL expression) asked west's own Prometheus; east, which has
    # none of its own, the global one
    wait_until(lambda: any("query_range" in p for p in fleet["west_prometheus"].paths), 10, "west's chart")
    wait_until(lambda: any("query_range" in p for p in fleet["elsewhere"].paths), 10, "east's chart")
    assert not [p for p in fleet["elsewhere"].paths if not p.startswith("/api/v1/")]  # no Triton asked there


@pytest.mark.triton
def test_slash_commands_with_a_cluster_ask_that_clusters_triton_and_prometheus(fleet: dict[str, Any]) -> None:
    bot: Bot = fleet["bot"]
    east = slash(bot, f"diagnose {BROKEN_MISSING_MODULE} east").json()["text"]
    assert c.RUNBOOK_PYTHON_MODULE_MISSING in east
    asked = len(fleet["west"].paths)
    west = slash(bot, f"diagnose {BROKEN_MISSING_MODULE} west").json()["text"]
    assert f"Triton at {fleet['west'].url} does not know a model `{BROKEN_MISSING_MODULE}`" in west
    assert len(fleet["west"].paths) > asked
    # /triton rollout <model> west reads west's own Prometheus, whose series carry no cluster label
    before = len(_queries(fleet["west_prometheus"]))
    assert slash(bot, "rollout ranker west").status_code == 200
    rollout = _queries(fleet["west_prometheus"])[before:]
    assert rollout and not [q for q in rollout if f"{CLUSTER}=" in q], rollout
    assert not [p for p in fleet["elsewhere"].paths if not p.startswith("/api/v1/")]


def test_config_example_in_the_module_docstring_loads(tmp_path: Path) -> None:
    """The documented example (the config module's docstring) is a config the bot accepts."""
    import yaml

    from triton_sre.bot import config

    text = config.__doc__.split("```yaml\n")[1].split("```")[0]
    settings = settings_from_mapping(yaml.safe_load(text), "example")
    assert settings.clusters["east"].triton_url.startswith("http://")
