"""Fault probes, round nine, what it left open (branch `probes9b`, 2026-12-05): the bot's body cap and
Slack channel names, Kubernetes names in the autoscaling objects, the gameday's HTTP sessions, Grafana
variables in queries and runbook links — docs/failure-behaviour.md, "Fault probes, round nine"."""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from binaries import binary
from grafana_vars import ALL, interpolate
from k8s_schemas import problems
from test_bot_render import alert, payload
from test_security_slack_mrkdwn import LINK, mrkdwn_texts

from triton_sre import conventions as c
from triton_sre.bot.command import resolve_bot_settings
from triton_sre.bot.config import MAX_BODY_BYTES_LIMIT, settings_from_mapping
from triton_sre.bot.enrich import Facts, Links, enrich
from triton_sre.bot.payload import parse_group
from triton_sre.bot.slack import Renderer, escape_mrkdwn
from triton_sre.checks import ConfigError
from triton_sre.cli import build_parser
from triton_sre.gameday import context, observer
from triton_sre.gameday.context import Context
from triton_sre.gameday.observer import Observer
from triton_sre.generate.dashboards import dashboards, iter_targets
from triton_sre.generate.k8s_autoscaling import autoscaling_files, hpa, scaled_object
from triton_sre.httpclient import DeadlineExceeded
from triton_sre.slo import default_spec, spec_from_mapping

PASSWORD = "hunter2-probe9b"


def bot_config(**values: Any) -> dict[str, Any]:
    return {"bot": values}


# -- bot: max_body_bytes -----------------------------------------------------------------------------
@pytest.mark.parametrize("size", [MAX_BODY_BYTES_LIMIT + 1, 99999999999999999999999])
def test_the_bots_body_cap_has_an_upper_bound_named_at_load(size: int) -> None:
    """Before: any size was accepted, and the webhook read a body that large into memory."""
    with pytest.raises(ConfigError) as caught:
        settings_from_mapping(bot_config(max_body_bytes=size), "bot.yaml")
    message = str(caught.value)
    assert "bot.yaml: bot.max_body_bytes" in message
    assert f"from 1 to {MAX_BODY_BYTES_LIMIT}" in message


def test_the_bots_body_cap_at_the_limit_is_accepted() -> None:
    settings = settings_from_mapping(bot_config(max_body_bytes=MAX_BODY_BYTES_LIMIT), "bot.yaml")
    assert settings.max_body_bytes == MAX_BODY_BYTES_LIMIT


# -- bot: Slack channel names ------------------------------------------------------------------------
WRONG_CHANNELS = [
    "#a\nb",
    "#ml pages",
    "#" + "a" * 81,
    "##x",
    "#<!channel>",
    "c0123abcd!",
]


@pytest.mark.parametrize("channel", WRONG_CHANNELS)
def test_a_slack_channel_slack_would_not_know_is_refused_at_load(channel: str) -> None:
    """Before: accepted; every notification to it failed with Slack's `channel_not_found`."""
    with pytest.raises(ConfigError, match=r"^bot.yaml: bot.channel: must be a Slack channel: "):
        settings_from_mapping(bot_config(channel=channel), "bot.yaml")
    route = {"match": {"team": "ml"}, "channel": channel}
    with pytest.raises(ConfigError, match=r"^bot.yaml: bot.routes\[0\].channel: must be a Slack channel"):
        settings_from_mapping(bot_config(channel="#ok", routes=[route]), "bot.yaml")
    with pytest.raises(ConfigError, match=r"^--channel: must be a Slack channel"):
        resolve_bot_settings(build_parser().parse_args(["bot", "--channel", channel]))


@pytest.mark.parametrize(
    "channel",
    [
        *("#triton-alerts", "ml_pages-2", "#運用", "#" + "a" * 80),
        # not how Slack names channels today, but a config that started before the check still starts
        *("#Alerts", "#ml.pages"),
        *("C0123ABCD", "G01ABCDEFG", "D024BE91L", "U0123ABCD", "W0123ABCD"),
    ],
)
def test_a_slack_channel_by_slacks_rules_or_an_id_is_accepted(channel: str) -> None:
    """A user's ID (U…, W… on Enterprise Grid) was refused by the first version of the check: Slack's
    chat.postMessage takes it as the channel and opens the DM with that user."""
    assert settings_from_mapping(bot_config(channel=channel), "bot.yaml").channel == channel


# -- bot: a runbook label that is no runbook id ------------------------------------------------------
RUNBOOK_BASE = "https://rb.example/runbooks/"


def unavailable_group(runbook: str) -> Any:
    return parse_group(payload([alert(**{c.L_RUNBOOK: runbook})]))


def rendered(runbook: str) -> tuple[list[str], list[tuple[str, str]], str]:
    context = enrich(unavailable_group(runbook), Facts(), Links(runbook_base_url=RUNBOOK_BASE)).context()
    blocks = Renderer().blocks(context)
    texts = mrkdwn_texts(blocks)
    return texts, [pair for text in texts for pair in LINK.findall(text)], json.dumps(blocks)


@pytest.mark.parametrize("runbook", ["../../admin/delete?x=1", "not-a-runbook", "phish<x>|y", "%2e%2e/evil"])
def test_a_runbook_label_that_is_no_runbook_id_is_text_not_a_link(runbook: str) -> None:
    """Before: any `runbook` label became `<base><value>.md`, a link (and a Runbook button) to a path of
    the alert writer's choosing on the runbook host."""
    texts, links, whole = rendered(runbook)
    assert not [target for target, _ in links if target.startswith(RUNBOOK_BASE)], links
    assert RUNBOOK_BASE not in whole  # no button either
    shown = escape_mrkdwn(runbook)
    assert any(shown in text for text in texts), texts  # named, as text


def test_a_known_runbook_id_is_still_a_link() -> None:
    _, links, whole = rendered(c.RUNBOOK_GPU_OUT_OF_MEMORY)
    page = f"{RUNBOOK_BASE}{c.RUNBOOK_GPU_OUT_OF_MEMORY}.md"
    assert page in [target for target, _ in links], links
    assert json.dumps(page) in whole


# -- generate: the HPA's job selector is a Kubernetes label value ------------------------------------
# apimachinery's IsValidLabelValue, written out here so the test does not read the code it checks
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


def scaled(job: str | None, triton_job: str = c.DEFAULT_TRITON_JOB) -> dict[str, Any]:
    entry: dict[str, Any] = {"deployment": "gpu", "max_replicas": 4}
    if job is not None:
        entry["job"] = job
    slos = [{"name": "avail", "type": c.SLO_AVAILABILITY, "objective": 99.9}]
    return {"scrape": {"triton_job": triton_job}, "slos": slos, "autoscaling": [entry]}


@pytest.mark.parametrize("job", ["monitoring/triton", 'tri"ton', "triton x", "-triton", "t" * 64, "é"])
def test_an_autoscaling_job_no_hpa_can_select_gives_a_note_not_an_hpa(job: str) -> None:
    """Before: written into the HPA's `matchLabels: {job: …}`, which the API server refuses at apply
    time (a PodMonitor's job is `namespace/name`). Then refused where the spec loads, which stopped
    every command (bot, report, generate) of a spec that loaded before, KEDA's users' included
    (review23). Now the spec loads, the ScaledObject passes the schemas and the HPA file is a note."""
    for mapping in (scaled(job), scaled(None, triton_job=job)):
        spec = spec_from_mapping(mapping, "slos.yaml")
        (entry,) = spec.autoscaling
        assert entry.job == job
        assert problems(scaled_object(entry)) == []
        files = autoscaling_files(spec)
        note = files[f"{c.K8S_AUTOSCALING_DIR}/gpu-hpa.yaml"]
        assert yaml.safe_load(note) is None  # comments only: nothing the API server would refuse
        assert "No HorizontalPodAutoscaler for gpu" in note and json.dumps(job) in note
        assert "gpu-keda.yaml" in note
        assert yaml.safe_load(files[f"{c.K8S_AUTOSCALING_DIR}/gpu-keda.yaml"])["kind"] == "ScaledObject"


@pytest.mark.parametrize("job", ["triton", "kube.triton_gpu-0", "T" * 63, "9"])
def test_an_accepted_autoscaling_job_gives_an_hpa_the_api_server_accepts(job: str) -> None:
    (entry,) = spec_from_mapping(scaled(job), "slos.yaml").autoscaling
    obj = hpa(entry)
    selected = obj["spec"]["metrics"][0]["external"]["metric"]["selector"]["matchLabels"][c.LABEL_JOB]
    assert selected == job and len(selected) <= 63 and LABEL_VALUE.fullmatch(selected)
    assert problems(obj) == [] and problems(scaled_object(entry)) == []


# -- generate: Grafana variables in the dashboards' queries ------------------------------------------
JOB = 'tri"ton\\ x{y}|.*'  # a backtick is left (docs/failure-behaviour.md)
EXPORTER = 'monitoring/"sre"\\'
INSTANCES = ['h"1:8002', "a\\b|c.*"]
MODELS = ['m"q', "$\\foo$", "{x}.*"]
CLUSTER = 'eu"1\\'


def _selection(board: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    multi = {v["name"] for v in board["templating"]["list"] if v.get("multi")}
    selection: dict[str, Any] = {
        "__rate_interval": "5m",
        "job": JOB,
        "exporter_job": EXPORTER,
        "cluster": CLUSTER,
        "instance": INSTANCES,
        "model": MODELS if "model" in multi else MODELS[0],
        "slo": ALL,
    }
    return selection, multi


def _queries(board: dict[str, Any]) -> list[str]:
    exprs = [target["expr"] for _, target in iter_targets(board)]
    for variable in board["templating"]["list"]:
        found = re.fullmatch(r"label_values\((.+), \w+\)", str(variable.get("query", "")))
        if found:
            exprs.append(found.group(1))
    return exprs


def test_the_dashboards_queries_read_any_variable_value_as_that_value(tmp_path: Path) -> None:
    """Before: `job=~"$job"`: Grafana's Prometheus escaping covers backslashes (and, for multi-value
    variables, regex marks), never a `"`: a job named `tri"ton` ended the string, every panel failed
    to parse. Then `job=${job:json}`: Grafana's current json format writes a single value unquoted
    (`job=triton`), no panel parsed. Now `` job=~`${job:regex}` `` and `` model=~`${model:regex}` ``
    (generated JSON interpolated as Grafana does, every query checked by promtool and its matchers
    read back)."""
    spec = replace(default_spec(), cluster_label="region")
    rules, regexes, literal_jobs = [], [], set()
    for name, board in dashboards(spec).items():
        selection, multi = _selection(board)
        for i, expr in enumerate(_queries(board)):
            sent = interpolate(expr, selection, multi)
            rules.append({"record": f"probe:{name.split('.')[0].replace('-', '_')}:{i}", "expr": sent})
            literal_jobs |= {json.loads(m) for m in re.findall(r'\bjob=("(?:[^"\\]|\\.)*")', sent)}
            found = re.findall(r"\b(instance|model|job|region)=~`([^`]*)`", sent)
            regexes += [(label, regex, selection[c.LABEL_MODEL]) for label, regex in found]
    path = tmp_path / "queries.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]}))
    checked = subprocess.run(
        [binary("promtool"), "check", "rules", str(path)], capture_output=True, text=True, timeout=120
    )
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]
    assert literal_jobs <= {spec.triton_job}  # autoscaling's own job, no variable
    jobs_read = set()
    for label, regex, models in regexes:
        chosen = {c.LABEL_INSTANCE: INSTANCES, c.LABEL_MODEL: models, "region": [CLUSTER]}
        if label == c.LABEL_JOB:
            (job,) = [j for j in (JOB, EXPORTER) if re.fullmatch(regex, j)]
            jobs_read.add(job)
            continue
        values = [chosen[label]] if isinstance(chosen[label], str) else chosen[label]
        assert all(re.fullmatch(regex, value) for value in values), (label, regex)
        assert not [v for v in ("ab|c", "a\\bXc", "mXq", "\\foo", "{x}y") if re.fullmatch(regex, v)], regex
    assert jobs_read == {JOB, EXPORTER} and {r[0] for r in regexes} == {*chosen, c.LABEL_JOB}


# -- gameday: the project's HTTP client for the observer and model control ---------------------------
TRICKLE_BYTE_S = 0.25  # under every per-read timeout: only a deadline on the whole answer ends it
SHORT_DEADLINE_S = 1.0


@contextmanager
def serving(
    behaviour: Callable[[BaseHTTPRequestHandler], None],
) -> Iterator[tuple[str, list[dict[str, str]]]]:
    """A server on 127.0.0.1 answering every GET and POST with `behaviour`; its URL and the headers of
    each request it got."""
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            seen.append(dict(self.headers))
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            with suppress(OSError):
                behaviour(self)

        do_POST = do_GET

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", seen
    finally:
        httpd.shutdown()
        httpd.server_close()


def trickle(handler: BaseHTTPRequestHandler) -> None:
    body = json.dumps({"status": "success", "data": {"alerts": []}, "pad": "x" * 16}).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    for byte in body:  # a whole, valid answer: one byte at a time
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()
        time.sleep(TRICKLE_BYTE_S)


def redirect_to(url: str) -> Callable[[BaseHTTPRequestHandler], None]:
    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(307)  # 307 keeps the method: a load's POST would be sent on
        handler.send_header("Location", url + handler.path)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    return answer


def elsewhere(handler: BaseHTTPRequestHandler) -> None:
    body = b"[]"
    handler.send_response(200)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


class _Stack:
    def __init__(self, url: str) -> None:
        self._url = url

    def url(self, name: str) -> str:
        return self._url


def test_the_gameday_observer_ends_a_trickling_answer_at_its_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Before: a plain `requests` session: each read waited at most HTTP_TIMEOUT, so an answer one
    byte every 0.25 s held a poll ~18 s (both APIs); the observer saw nothing meanwhile."""
    monkeypatch.setattr(observer, "HTTP_TIMEOUT", SHORT_DEADLINE_S)
    with serving(trickle) as (url, _):
        watcher = Observer(url, url, None)
        started = time.monotonic()
        watcher.poll_once()
        took = time.monotonic() - started
    assert took < 4 * SHORT_DEADLINE_S, took
    assert watcher.timeline.errors == {"alertmanager": "timed out", "prometheus": "timed out"}


def test_the_gameday_observer_follows_no_redirect_to_another_host() -> None:
    """Before: followed: another host's alerts were read as the stack's own."""
    with serving(elsewhere) as (other, hits), serving(redirect_to(other)) as (url, _):
        host = url.split("//", 1)[1]
        watcher = Observer(f"http://sre:{PASSWORD}@{host}", f"http://sre:{PASSWORD}@{host}", None)
        watcher.poll_once()
    assert hits == []
    assert set(watcher.timeline.errors) == {"alertmanager", "prometheus"}
    assert all("HTTP 307" in text and PASSWORD not in text for text in watcher.timeline.errors.values())


def test_gamedays_model_load_ends_a_trickling_answer_at_its_deadline(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Before: `requests.post(..., timeout=300)`: a load answered one byte every 0.25 s was waited for
    whole (a per-read timeout), however long."""
    monkeypatch.setattr(context, "LOAD_TIMEOUT", SHORT_DEADLINE_S)
    with serving(trickle) as (url, _):
        ctx = Context(_Stack(url), tmp_path, lambda _: None)  # type: ignore[arg-type]
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded):
            ctx.load("m")
        took = time.monotonic() - started
    assert took < 3 * SHORT_DEADLINE_S, took


def test_gamedays_model_load_follows_no_redirect_to_another_host(tmp_path: Path) -> None:
    """Before: a 307 from the server sent the load's POST on to the other host."""
    with serving(elsewhere) as (other, hits), serving(redirect_to(other)) as (url, _):
        ctx = Context(_Stack(url), tmp_path, lambda _: None)  # type: ignore[arg-type]
        status, _ = ctx.load("m")
        assert ctx.states() == {}  # the index's redirect is not followed either
    assert status == 307 and hits == []
