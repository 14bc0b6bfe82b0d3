"""Triton's summary quantiles on VictoriaMetrics (vm25): Triton writes NaN for a summary with no
request in its window; VictoriaMetrics drops NaN samples, so the raw series keeps answering the last
finite quantile after the traffic stopped. Every quantile the generated rules, dashboards, bot and
report read is trusted only while its last sample is as recent as its summary's `_count`'s (fleet26;
before, while `_count` rose in the last 2m): on the real store a model gives no figure from the
first scrape after Triton's window emptied, a sparse one (a request a minute) keeps its own.
"""

from __future__ import annotations

import time
from pathlib import Path

import yaml
from test_bot_render import _latency_alert, payload
from victoria import exposition, victoria_metrics

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.bot.config import BotSettings
from triton_sre.bot.enrich import Links, enrich
from triton_sre.bot.outbox import Outbox
from triton_sre.bot.payload import parse_group
from triton_sre.bot.queries import latency_now_expr
from triton_sre.bot.slack import SlackDelivery
from triton_sre.bot.worker import Worker
from triton_sre.generate.command import render_all
from triton_sre.slo import parse_spec

REPO = Path(__file__).resolve().parents[1]
STEP = 15  # seconds between the imported scrapes
IDLE_AFTER = 300  # the busy model's last request, seconds after the start
END = 900


def _scrapes(every: int, quantile_us: float, busy_until: float) -> dict[str, list]:
    """One model's summary as scraped every STEP s: a request every `every` s until `busy_until`,
    the quantile is `quantile_us` while a request is in Triton's 60 s window, NaN after (as 2.51 writes)."""
    count, points, quantiles = 0, [], []
    for t in range(0, END + 1, STEP):
        if t <= busy_until:
            count += STEP // every if every <= STEP else int(t % every == 0)
        in_window = t <= busy_until + c.TRITON_SUMMARY_MAX_AGE_S
        points.append((t, count))
        quantiles.append((t, quantile_us if in_window else float("nan")))
    return {"count": points, "quantile": quantiles}


def _import(vm, start: float, until: float = float("inf")) -> None:
    lines = []
    models = {"busy": (1, 900_000.0, IDLE_AFTER), "sparse": (60, 40_000.0, END)}  # sparse: 1 a minute
    for model, (every, quantile_us, busy_until) in models.items():
        series = _scrapes(every, quantile_us, busy_until)
        base = {c.LABEL_JOB: c.DEFAULT_TRITON_JOB, c.LABEL_INSTANCE: "triton-0:8002", c.LABEL_MODEL: model}
        base[c.LABEL_VERSION] = "1"
        for family in (c.NV_REQUEST_SUMMARY_US, c.NV_QUEUE_SUMMARY_US):
            counts = [(start + t, v) for t, v in series["count"]]
            lines += exposition(f"{family}_count", base, counts)
            for q in c.TRITON_SUMMARY_QUANTILES:
                points = [(start + t, v) for t, v in series["quantile"]]
                lines += exposition(family, {**base, c.LABEL_QUANTILE: q}, points)
        lines += exposition(c.NV_REQUEST_SUCCESS, base, [(start + t, v) for t, v in series["count"]])
    kept = [line for line in lines if " nan " not in line.lower() and int(line.split()[-1]) <= until * 1000]
    vm.import_samples(kept)


def _models(vm, expr: str, at: float) -> dict[str, float]:
    return {r["metric"].get(c.LABEL_MODEL, ""): float(r["value"][1]) for r in vm.query(expr, at)}


def test_an_idle_summary_gives_no_quantile_on_victoria_metrics(tmp_path: Path) -> None:
    spec = parse_spec((REPO / "slos.yaml").read_text())
    files = render_all(spec, "runbooks/")
    rules = {}
    for name in ("alerts/triton-recording-rules.yaml", "alerts/triton-slo-rules.yaml"):
        for group in yaml.safe_load(files[name])["groups"]:
            for rule in group["rules"]:
                rules.setdefault((rule.get("record"), (rule.get("labels") or {}).get(c.LABEL_QUANTILE)), rule)
    request_p99 = rules[(c.rec_latency_quantile(c.REC_LEVEL_INSTANCE, c.LATENCY_REQUEST), "0.99")]["expr"]
    queue_p99 = rules[(c.rec_latency_quantile(c.REC_LEVEL_INSTANCE, c.LATENCY_QUEUE), "0.99")]["expr"]
    slice_bad = rules[(c.REC_SLO_SLICE_BAD, None)]["expr"]
    ms = [(c.LABEL_JOB, "=", c.DEFAULT_TRITON_JOB)]
    panel = pq.summary_quantile(c.NV_REQUEST_SUMMARY_US, ms, "0.99", (c.LABEL_MODEL,))
    start = (int(time.time()) // 60) * 60 - 3600  # a past hour VictoriaMetrics accepts
    raw = pq.selector(c.NV_REQUEST_SUMMARY_US, [(c.LABEL_QUANTILE, "=", "0.99")])
    with victoria_metrics(tmp_path / "vm") as vm:
        _import(vm, start)
        busy, idle = start + IDLE_AFTER - 30, start + IDLE_AFTER + 240
        in_window = start + IDLE_AFTER + c.TRITON_SUMMARY_MAX_AGE_S  # the last finite quantile scraped
        just_idle = in_window + 2 * STEP  # two scrapes of NaN: dropped, `_count` still scraped
        # the store's behaviour this guards against: four minutes idle, the raw series still answers
        assert _models(vm, raw, idle)["busy"] == 900_000.0
        assert _models(vm, raw, just_idle)["busy"] == 900_000.0
        for expr in (request_p99, queue_p99, panel):
            assert set(_models(vm, expr, busy)) == {"busy", "sparse"}, expr
            assert set(_models(vm, expr, in_window)) == {"busy", "sparse"}, expr
            # the 2m `_count` gate kept the busy model's last quantile here, 60 s past Triton's window
            assert set(_models(vm, expr, just_idle)) == {"sparse"}, expr
            assert set(_models(vm, expr, idle)) == {"sparse"}, expr
        assert _models(vm, request_p99, idle)["sparse"] == 0.04
        assert _models(vm, slice_bad, busy) == {"busy": 1.0, "sparse": 0.0}
        assert _models(vm, slice_bad, just_idle) == {"sparse": 0.0}
        assert _models(vm, slice_bad, idle) == {"sparse": 0.0}
        for quantile in ("0.9", "0.999"):  # the bot reads Triton's summary for unrecorded quantiles
            assert _models(vm, latency_now_expr("busy", quantile), busy), quantile
            assert not _models(vm, latency_now_expr("busy", quantile), just_idle), quantile
            assert not _models(vm, latency_now_expr("busy", quantile), idle), quantile
            assert _models(vm, latency_now_expr("sparse", quantile), idle), quantile


def test_the_bot_says_idle_instead_of_a_stale_latency(tmp_path: Path) -> None:
    """The bot's worker against a real VictoriaMetrics, 240 s after the busy model's last request:
    no latency figure, and the line says why; the sparse model is not called idle."""
    now = time.time()
    start = now - IDLE_AFTER - 240
    alerts = []
    for model in ("busy", "sparse"):
        alert = _latency_alert("latency")
        alert["labels"][c.LABEL_MODEL], alert["fingerprint"] = model, model
        alerts.append(alert)
    group = parse_group(payload(alerts, alertname=c.ALERT_SLO_LATENCY_BUDGET_BURN))
    with victoria_metrics(tmp_path / "vm") as vm:
        _import(vm, start, until=now)
        worker = Worker(
            BotSettings(channel="#c", prometheus_url=vm.url),
            Outbox(tmp_path / "o.sqlite3"),
            SlackDelivery("xoxb-unused"),
            {},
        )
        facts = worker.facts(group)
    assert facts.latency_idle == {"busy"}
    lines = {view.model: view.latency.line for view in enrich(group, facts, Links()).alerts}
    assert lines["busy"].startswith(f"no request in the last {c.SUMMARY_OBSERVED_WINDOW} (idle)")
    assert lines["sparse"].startswith("current latency n/a")  # no recorded p99 here: no vmalert ran
