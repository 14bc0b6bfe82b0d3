"""Pure parts of the bot: payload parsing, enrichment, Block Kit rendering within Slack's limits,
user templates in the sandbox, config validation, the Slack stand-in's enforcement, the chart."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from images import png_content
from rendered_alerts import as_old_rules_rendered, rendered_burn_alert
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from triton_sre import conventions as c
from triton_sre.bot.config import load_bot_config
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.bot.enrich import Facts, Links, enrich, latency_quantiles_shown
from triton_sre.bot.payload import PayloadError, alert_states, describe_change, digest, parse_group
from triton_sre.bot.scaling import ScalingAsk, asks, scaling_exprs, scaling_line
from triton_sre.bot.slack import Renderer, cut_text, fit_blocks
from triton_sre.bot.slack_limits import MAX_BLOCKS, MAX_SECTION_TEXT, validate_blocks
from triton_sre.bot.urls import silence_url
from triton_sre.checks import ConfigError
from triton_sre.diagnosis.catalog import load_catalog
from triton_sre.diagnosis.engine import Evidence, Finding, Report

LINKS = Links(
    runbook_base_url="https://rb.example.com/",
    grafana_url="https://grafana.example.com",
    alertmanager_url="https://am.example.com",
    dashboard_uid_model=c.UID_MODEL_DASHBOARD,
    dashboard_uid_slo=c.UID_SLO_DASHBOARD,
    dashboard_uid_overview=c.UID_OVERVIEW_DASHBOARD,
)


def payload(alerts: list[dict[str, Any]], status: str = "firing", **common: str) -> dict[str, Any]:
    return {
        "version": "4",
        "groupKey": "{}:{x}",
        "status": status,
        "receiver": "bot",
        "groupLabels": {},
        "commonLabels": common,
        "commonAnnotations": {},
        "externalURL": "http://am:9093",
        "alerts": alerts,
    }


def alert(i: int = 0, status: str = "firing", **labels: str) -> dict[str, Any]:
    return {
        "status": status,
        "labels": {"alertname": c.ALERT_MODEL_UNAVAILABLE, "model": f"m{i}", **labels},
        "annotations": {"summary": f"model m{i} down"},
        "fingerprint": f"f{i:05d}",
        "startsAt": "2026-11-29T10:00:00.123Z",
    }


def test_parse_is_lenient_but_refuses_non_notifications() -> None:
    group = parse_group({"alerts": [{"labels": {"alertname": "X"}, "newField": 1}], "futureField": True})
    assert group.status == "firing" and group.alerts[0].name == "X" and group.group_key
    for bad in ([], "x", {"alerts": {}}, {"alerts": ["x"]}):
        with pytest.raises(PayloadError):
            parse_group(bad)


def test_digest_ignores_repeats_and_sees_changes() -> None:
    one = parse_group(payload([alert(0)]))
    assert digest(one) == digest(parse_group(payload([alert(0)])))
    assert digest(one) != digest(parse_group(payload([alert(0), alert(1)])))
    resolved = parse_group(payload([alert(0, status="resolved")], status="resolved"))
    assert digest(one) != digest(resolved)
    assert describe_change(alert_states(one), resolved, "firing").startswith("Resolved")
    two = parse_group(payload([alert(0), alert(1)]))
    assert "Now firing: TritonModelUnavailable (m1)" in describe_change(alert_states(one), two, "firing")


def test_huge_group_stays_within_slack_limits() -> None:
    long = "x" * 9000 + " <https://a.example.com|link> & more"
    alerts = []
    for i in range(300):
        a = alert(i, severity="page", runbook=c.RUNBOOK_PYTHON_MODULE_MISSING)
        a["annotations"] = {
            "summary": long,
            "description": long,
            "runbook_url": f"runbooks/{c.RUNBOOK_PYTHON_MODULE_MISSING}.md",
        }
        a["labels"]["model"] = "m" * 500 + str(i)
        alerts.append(a)
    findings = tuple(
        Finding(
            "m" * 500 + str(i),
            "1",
            c.RUNBOOK_PYTHON_MODULE_MISSING,
            "Python module missing" * 50,
            "critical",
            tuple(Evidence(n, "E" * 3000) for n in range(12)),
            "pip install it " * 400,
        )
        for i in range(300)
    )
    group = parse_group(payload(alerts, alertname=c.ALERT_MODEL_UNAVAILABLE))
    model = enrich(group, Facts(report=Report(findings, ())), LINKS)
    renderer = Renderer()
    blocks = renderer.blocks(model.context())
    assert len(blocks) <= MAX_BLOCKS
    assert validate_blocks(blocks) is None
    for block in blocks:
        if block["type"] == "section" and "text" in block:
            assert len(block["text"]["text"]) <= MAX_SECTION_TEXT
            assert block["text"]["text"].count("```") % 2 == 0
    assert "more alert(s)" in json.dumps(blocks)
    text = renderer.text(model.context())
    assert len(text) <= 3000
    with SlackStandin(token="xoxb-t") as standin:  # and Slack (the stand-in) takes it
        WebClient(token="xoxb-t", base_url=standin.url).chat_postMessage(
            channel="#c", text=text, blocks=blocks
        )


def test_fit_blocks_caps_block_count_and_keeps_buttons() -> None:
    many = [{"type": "section", "text": {"type": "mrkdwn", "text": f"s{i}"}} for i in range(80)]
    buttons = {
        "type": "actions",
        "elements": [
            {
                "type": "button",
                "text": {"type": "plain_text", "text": "b" * 200},
                "url": "https://x.example.com",
            },
            {"type": "button", "text": {"type": "plain_text", "text": "rel"}, "url": "runbooks/x.md"},
        ],
    }
    fitted = fit_blocks([*many, buttons])
    assert len(fitted) == MAX_BLOCKS
    assert fitted[-1]["type"] == "actions" and len(fitted[-1]["elements"]) == 1
    assert "not shown" in json.dumps(fitted[-2])
    assert validate_blocks(fitted) is None


def test_cut_text_never_leaves_half_a_link_or_entity() -> None:
    text = "a" * 2990 + "<https://example.com/very/long|label> &amp; tail"
    cut = cut_text(text, 3000)
    assert len(cut) <= 3000 and "<https" not in cut and cut.endswith("…")
    assert cut_text("a" * 2993 + "&amp;zzzz", 3000).endswith("a…")
    assert cut_text("```" + "x" * 5000, 3000).endswith("```")


def test_message_content_and_buttons() -> None:
    a = alert(0, severity="page", runbook=c.RUNBOOK_UNKNOWN_LOAD_FAILURE, version="1")
    group = parse_group(payload([a], alertname=c.ALERT_MODEL_UNAVAILABLE, model="m0"))
    finding = Finding(
        "m0",
        "1",
        c.RUNBOOK_PYTHON_MODULE_MISSING,
        "A Python module is missing",
        "critical",
        (Evidence(1, "ModuleNotFoundError: No module named 'x'"),),
        "Install it.",
    )
    model = enrich(group, Facts(report=Report((finding,), ()), diagnosis_source="live http://t:8000"), LINKS)
    blocks = Renderer().blocks(model.context())
    shown = json.dumps(blocks)
    assert "A Python module is missing" in shown and "Install it." in shown and "No module named" in shown
    buttons = {
        b["text"]["text"]: b["url"] for blk in blocks if blk["type"] == "actions" for b in blk["elements"]
    }
    assert buttons["Runbook"] == f"https://rb.example.com/{c.RUNBOOK_PYTHON_MODULE_MISSING}.md"
    assert buttons["Grafana dashboard"] == "https://grafana.example.com/d/triton-sre-model?var-model=m0"
    assert buttons["Silence"].startswith("https://am.example.com/#/silences/new?filter=")
    # Without a live answer the exporter's label is the diagnosis, with its one-line fix.
    catalog = load_catalog()
    facts = Facts(titles=catalog.titles, remediations=catalog.remediations)
    fallback = enrich(parse_group(payload([alert(0, runbook=c.RUNBOOK_PYTHON_MODULE_MISSING)])), facts, LINKS)
    assert fallback.alerts[0].findings[0].runbook == c.RUNBOOK_PYTHON_MODULE_MISSING
    fix = catalog[c.RUNBOOK_PYTHON_MODULE_MISSING].remediation
    assert fallback.alerts[0].findings[0].remediation == fix
    assert f":wrench: *Fix:* {fix}" in json.dumps(Renderer().blocks(fallback.context()), ensure_ascii=False)


def test_every_alert_shows_the_one_line_fix_of_its_runbook() -> None:
    """The fix comes from the runbook's front matter, for every alert the generators write."""
    catalog = load_catalog()
    facts = Facts(titles=catalog.titles, remediations=catalog.remediations)
    renderer = Renderer()
    for i, (name, runbook) in enumerate(sorted(c.ALERT_RUNBOOKS.items())):
        a = {"status": "firing", "fingerprint": f"a{i}", "labels": {"alertname": name, "model": "m"}}
        model = enrich(parse_group(payload([a], alertname=name)), facts, LINKS)
        assert model.alerts[0].remediation == catalog[runbook].remediation, name
        shown = json.dumps(renderer.blocks(model.context()), ensure_ascii=False)
        assert f":wrench: *Fix:* {catalog[runbook].remediation}" in shown.replace("&amp;", "&"), name
    # without the catalog there is no line (never an empty one)
    bare = enrich(parse_group(payload([{"labels": {"alertname": c.ALERT_SERVER_DOWN}}])), Facts(), LINKS)
    assert bare.alerts[0].remediation == "" and "*Fix:*" not in json.dumps(renderer.blocks(bare.context()))


def test_slo_alert_shows_burn_rate_and_budget() -> None:
    labels, annotations = rendered_burn_alert()  # as Prometheus renders the generated rule
    a = {"status": "firing", "fingerprint": "s1", "labels": labels, "annotations": annotations}
    group = parse_group(payload([a], alertname=c.ALERT_SLO_ERROR_BUDGET_BURN))
    from_annotation = enrich(group, Facts(), LINKS)
    assert from_annotation.alerts[0].burn_rate == float(annotations[c.ANNOTATION_BURN_RATE]) > 1
    assert from_annotation.alerts[0].budget_remaining is None
    live = enrich(group, Facts(burn_rates={"s1": 20.0}, budgets_remaining={"s1": 0.25}), LINKS)
    shown = json.dumps(Renderer().blocks(live.context()))
    assert "20.0x" in shown and "25.0%" in shown
    assert c.UID_SLO_DASHBOARD in shown


def test_slo_page_says_which_burn_rate_is_now_and_which_when_it_fired() -> None:
    """The journey's page showed `*Burn rate:* 57.0x over 1h` (the bot's query when it posted) above a
    description saying 59.9x (the alert's value when it fired), and its 6h alert the same 57.0x from 4
    minutes of data: each figure is labelled, and a window holding less data than its length says so."""
    labels, annotations = rendered_burn_alert()
    fired = float(annotations[c.ANNOTATION_BURN_RATE])
    alerts = [
        {
            "status": "firing",
            "fingerprint": "1h",
            "labels": {**labels, c.L_WINDOW: "1h"},
            "annotations": annotations,
        },
        {
            "status": "firing",
            "fingerprint": "6h",
            "labels": {**labels, c.L_WINDOW: "6h"},
            "annotations": annotations,
        },
    ]
    group = parse_group(payload(alerts, alertname=c.ALERT_SLO_ERROR_BUDGET_BURN))
    facts = Facts(burn_rates={"1h": 57.0, "6h": 57.0}, window_data={"6h": 240.0})
    live = enrich(group, facts, LINKS)
    one, six = live.alerts
    assert (one.burn_rate, one.burn_rate_now, one.burn_rate_fired, one.window_data) == (57.0, True, fired, "")
    assert (six.burn_rate_now, six.window_data) == (True, "4 min")
    shown = json.dumps(Renderer().blocks(live.context()), ensure_ascii=False)
    assert f"*Burn rate now:* 57.0x over 1h · {fired:.1f}x when it fired ·" in shown
    assert f"*Burn rate now:* 57.0x over 6h (only 4 min of data so far) · {fired:.1f}x when it fired" in shown
    assert "*Burn rate:*" not in shown
    # without Prometheus the page has the alert's own figure, and says it is from when it fired
    alone = enrich(group, Facts(), LINKS)
    assert [(a.burn_rate, a.burn_rate_now, a.burn_rate_fired) for a in alone.alerts] == [
        (fired, False, None)
    ] * 2
    shown = json.dumps(Renderer().blocks(alone.context()), ensure_ascii=False)
    assert f"*Burn rate when it fired:* {fired:.1f}x over 1h · *Error budget left:*" in shown
    assert "*Burn rate now:*" not in shown and "of data so far" not in shown


def test_a_budget_read_from_minutes_of_data_says_so() -> None:
    """journey25's page, 17 s into the fault on a stack up for a minute: `*Error budget left:* none,
    overspent (-22370.6%)` beside a burn rate saying "only 17 s of data so far". The budget's period holds
    no more data than the window: the figure is those seconds projected over 30 days, and says so."""
    labels, annotations = rendered_burn_alert()
    a = {"status": "firing", "fingerprint": "s1", "labels": labels, "annotations": annotations}
    group = parse_group(payload([a], alertname=c.ALERT_SLO_ERROR_BUDGET_BURN))
    facts = Facts(burn_rates={"s1": 224.7}, budgets_remaining={"s1": -223.706}, window_data={"s1": 17.0})
    shown = json.dumps(Renderer().blocks(enrich(group, facts, LINKS).context()), ensure_ascii=False)
    assert "(only 17 s of data so far)" in shown
    assert "overspent (-22370.6%) as if the whole SLO period went like its 17 s of data" in shown
    full = Facts(burn_rates={"s1": 224.7}, budgets_remaining={"s1": 0.25})
    shown = json.dumps(Renderer().blocks(enrich(group, full, LINKS).context()), ensure_ascii=False)
    assert "*Error budget left:* 25.0% (SLO" in shown and "as if" not in shown


def _burn(annotations: dict[str, str]) -> float | None:
    labels = rendered_burn_alert()[0]
    a = {"status": "firing", "fingerprint": "s1", "labels": labels, "annotations": annotations}
    return enrich(parse_group(payload([a])), Facts(), LINKS).alerts[0].burn_rate


def test_burn_rate_is_read_from_its_annotation_and_from_old_rules_text_only_without_it() -> None:
    _labels, annotations = rendered_burn_alert()
    value = float(annotations[c.ANNOTATION_BURN_RATE])
    # the annotation, not the text: a description saying otherwise is not read
    assert _burn({**annotations, c.ANNOTATION_BURN_RATE: "31.7"}) == 31.7
    # rules generated before the annotation existed: the figure in their description
    old = as_old_rules_rendered(annotations)
    assert c.ANNOTATION_BURN_RATE not in old
    assert f"is {annotations[c.ANNOTATION_BURN_RATE]}x" in old["description"]
    assert _burn(old) == value
    # a bad value is no value (never a guess from the text)
    for bad in ("", "NaN", "+Inf", "fast"):
        assert _burn({**annotations, c.ANNOTATION_BURN_RATE: bad}) is None, bad
    assert _burn({k: v for k, v in old.items() if k != "description"}) is None


def _latency_alert(slo_name: str, quantile: str | None = None) -> dict[str, Any]:
    """A firing latency burn alert with the annotations `triton-sre generate` gives it."""
    from triton_sre.generate import slo_rules
    from triton_sre.slo import default_spec

    spec = default_spec()
    slo = next(s for s in spec.slos if s.name == slo_name)
    if quantile is not None:
        slo = dataclasses.replace(slo, quantile=quantile)
    rule = slo_rules.burn_alerts(slo, "runbooks/")[0]
    return {
        "status": "firing",
        "fingerprint": "l1",
        "labels": {**rule["labels"], "alertname": rule["alert"], "model": "tail_model"},
        "annotations": rule["annotations"],
    }


def test_latency_alert_shows_the_current_p99_and_the_slo_quantile_against_the_threshold() -> None:
    a = _latency_alert("latency")
    group = parse_group(payload([a], alertname=c.ALERT_SLO_LATENCY_BUDGET_BURN))
    assert latency_quantiles_shown(group.alerts[0]) == ["0.99"]
    model = enrich(group, Facts(latency_now={"l1": {"0.99": 0.6123}}), LINKS)
    assert model.alerts[0].latency is not None
    assert model.alerts[0].latency.line == "p99 now 612 ms (SLO on p99) vs threshold 500 ms"
    renderer = Renderer()
    assert "p99 now 612 ms (SLO on p99) vs threshold 500 ms" in json.dumps(renderer.blocks(model.context()))
    assert "vs threshold 500 ms" in renderer.text(model.context())
    # an SLO on p95: both are shown; nothing from Prometheus: said so
    b = _latency_alert("latency", quantile="0.95")
    group = parse_group(payload([b], alertname=c.ALERT_SLO_LATENCY_BUDGET_BURN))
    assert latency_quantiles_shown(group.alerts[0]) == ["0.99", "0.95"]
    both = enrich(group, Facts(latency_now={"l1": {"0.99": 0.2, "0.95": 0.0415}}), LINKS)
    assert both.alerts[0].latency.line == "p99 now 200 ms, p95 now 42 ms (SLO on p95) vs threshold 500 ms"
    unknown = enrich(group, Facts(), LINKS).alerts[0].latency
    assert unknown.line == "current latency n/a (SLO on p95) vs threshold 500 ms"
    # none because the model had no request in the quantiles' window: said so (vm25)
    idle = enrich(group, Facts(latency_idle=frozenset({"l1"})), LINKS).alerts[0].latency
    window = c.SUMMARY_OBSERVED_WINDOW
    assert idle.line == f"no request in the last {window} (idle) (SLO on p95) vs threshold 500 ms"
    # other alerts have no latency line
    assert enrich(parse_group(payload([alert(0)])), Facts(), LINKS).alerts[0].latency is None


def test_queue_and_latency_alerts_say_how_many_replicas_the_scaling_signal_asks_for() -> None:
    asked = [ScalingAsk("triton", 5.0, 2.0), ScalingAsk("", 3.0, None)]
    line = "the scaling signal asks for 5 replicas of triton (2 serving); 3 replicas"
    assert scaling_line(asked) == line and scaling_line([]) == ""
    group = parse_group(payload([_latency_alert("latency")], alertname=c.ALERT_SLO_LATENCY_BUDGET_BURN))
    model = enrich(group, Facts(latency_now={"l1": {"0.99": 0.6123}}, replicas={"l1": asked}), LINKS)
    assert model.alerts[0].scaling == line
    assert f"*Scaling:* {line}" in json.dumps(Renderer().blocks(model.context()))
    assert line in Renderer().text(model.context())
    # other alerts never show it, even with figures
    other = parse_group(payload([alert(0)]))
    assert enrich(other, Facts(replicas={other.alerts[0].fingerprint: asked}), LINKS).alerts[0].scaling == ""


def test_scaling_figures_are_narrowed_to_the_alerts_job_and_cluster() -> None:
    desired, serving = scaling_exprs({"job": "triton", "cluster": "eu", "model": "m"})
    assert desired == f'{c.REC_AUTOSCALE_DESIRED}{{job="triton", cluster="eu"}}'
    assert serving == f'{c.REC_SERVING_REPLICAS}{{job="triton", cluster="eu"}}'
    assert scaling_exprs({})[0] == c.REC_AUTOSCALE_DESIRED
    found = asks(
        [({"job": "a", "deployment": "x"}, 2.0), ({"job": "b", "deployment": "y"}, 4.0)],
        [({"job": "a"}, 1.0), ({"job": "b"}, 3.0)],
    )
    assert found == [ScalingAsk("y", 4.0, 3.0), ScalingAsk("x", 2.0, 1.0)]


def test_silence_url_escapes_matchers() -> None:
    group = parse_group(payload([alert(0)], alertname="A", model='we"ird'))
    url = silence_url(group, "https://am.example.com/")
    assert url.startswith("https://am.example.com/#/silences/new?filter=%7B")
    assert "%5C%22" in url  # the quote in the label value is escaped
    assert silence_url(group, None).startswith("http://am:9093/#/silences/new?")  # Alertmanager's externalURL
    assert silence_url(parse_group({**payload([alert(0)], a="b"), "externalURL": ""}), None) == ""


def test_user_templates_override_and_broken_ones_fall_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model = enrich(parse_group(payload([alert(0)])), Facts(), LINKS).context()
    (tmp_path / "message.json.j2").write_text(
        '[{"type": "section", "text": {"type": "mrkdwn", "text": {{ ("custom " ~ title) | tojson }}}}]'
    )
    assert Renderer(str(tmp_path)).blocks(model)[0]["text"]["text"].startswith("custom ")
    # The sandbox refuses attribute tricks; the built-in template takes over and the alert still goes out.
    (tmp_path / "message.json.j2").write_text("{{ ''.__class__.__mro__[1].__subclasses__() }}")
    blocks = Renderer(str(tmp_path)).blocks(model)
    assert blocks[0]["type"] == "header"
    assert "failed" in caplog.text or "invalid" in caplog.text
    (tmp_path / "message.json.j2").write_text("not json")
    assert Renderer(str(tmp_path)).blocks(model)[0]["type"] == "header"


def test_config_validation_names_file_and_key(tmp_path: Path) -> None:
    good = tmp_path / "bot.yaml"
    good.write_text(
        "bot:\n  channel: '#default'\n  routes:\n    - match: {team: ml}\n      channel: '#ml'\n"
        "    - match_re: {severity: 'page|critical'}\n      channel: '#pages'\n"
        "  fleet:\n    - instance: 'a:8003'\n      triton_url: http://a:8000\n"
    )
    settings = load_bot_config(good)
    assert settings.channel_for({"team": "ml", "severity": "page"}) == "#ml"
    assert settings.channel_for({"severity": "page"}) == "#pages"
    assert settings.channel_for({"severity": "pager"}) == "#default"
    assert settings.triton_url_for({"instance": "a:8003"}) == "http://a:8000"
    assert settings.triton_url_for({"instance": "b:8003"}) is None
    cases = {
        "bot:\n  chanel: x\n": "bot: unknown key 'chanel'",
        "bot:\n  routes:\n    - channel: x\n": "bot.routes[0]: needs match or match_re",
        "bot:\n  routes: {a: b}\n": "bot.routes: must be a list of routes",
        "bot:\n  routes: [x]\n": "bot.routes[0]: must be a mapping with channel and match/match_re",
        "bot:\n  routes:\n    - match: {a: b}\n": "bot.routes[0]: channel: missing",
        "bot:\n  routes:\n    - {channel: x, when: y}\n": "bot.routes[0]: unknown key 'when'",
        "bot:\n  fleet: x\n": "bot.fleet: must be a list of {instance|job, triton_url}",
        "bot:\n  fleet: [x]\n": "bot.fleet[0]: must be a mapping",
        "bot:\n  fleet:\n    - job: j\n": "bot.fleet[0]: triton_url: missing",
        "bot:\n  fleet:\n    - triton_url: http://x\n": "bot.fleet[0]: needs instance or job",
        "bot:\n  routes:\n    - match_re: {a: '('}\n      channel: x\n": "bot.routes[0].match_re.a",
        "bot:\n  fleet:\n    - job: j\n      triton_url: ftp://x\n": "bot.fleet[0].triton_url",
        "bot:\n  retry_max_seconds: -1\n": "bot.retry_max_seconds",
        "bot: [1\n": "invalid YAML",
    }
    for text, message in cases.items():
        path = tmp_path / "bad.yaml"
        path.write_text(text)
        with pytest.raises(ConfigError) as raised:
            load_bot_config(path)
        assert str(path) in str(raised.value) and message in str(raised.value), str(raised.value)


@pytest.mark.filterwarnings("ignore:The top-level `text` argument is missing")
def test_standin_enforces_slack_limits() -> None:
    with SlackStandin(token="xoxb-t") as standin:
        client = WebClient(token="xoxb-t", base_url=standin.url)
        section = {"type": "section", "text": {"type": "mrkdwn", "text": "x"}}
        cases = [
            ({"blocks": [section] * 51, "text": "t"}, "invalid_blocks"),
            (
                {
                    "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "x" * 3001}}],
                    "text": "t",
                },
                "invalid_blocks",
            ),
            ({"text": "x" * 40001}, "msg_too_long"),
            ({"text": ""}, "no_text"),
        ]
        for kwargs, error in cases:
            with pytest.raises(SlackApiError) as raised:
                client.chat_postMessage(channel="#c", **kwargs)
            assert raised.value.response["error"] == error
        with pytest.raises(SlackApiError) as raised:
            client.chat_update(channel="#c", ts="1.2", text="x")
        assert raised.value.response["error"] == "message_not_found"
        assert len(standin.calls()) == 5


def test_chart_png_from_a_range_result() -> None:
    from triton_sre.bot.prom import chart_png

    series = [
        {"metric": {"model": "m"}, "values": [[1_800_000_000 + 30 * i, str(i % 7)] for i in range(120)]}
    ]
    png = chart_png(series, "test")
    assert png is not None
    png_content(png)  # a chart: decodes, is a sensible size, is not blank
    assert chart_png([], "empty") is None


def test_outbox_coalesces_a_group_and_keeps_its_retry_schedule(tmp_path: Path) -> None:
    from triton_sre.bot.outbox import Outbox

    outbox = Outbox(tmp_path / "o.sqlite3")
    first = outbox.enqueue("g", {"n": 1}, now=100.0)
    outbox.retry_later(first, 200.0, "Slack down")
    other = outbox.enqueue("h", {"n": 9}, now=100.0)
    latest = outbox.enqueue("g", {"n": 2}, now=150.0)
    due, _ = outbox.next_due(now=160.0)
    assert due is not None and due.id == other  # g waits for its backoff although a newer one arrived
    outbox.mark_done(other)
    assert outbox.next_due(now=160.0) == (None, 200.0)
    due, _ = outbox.next_due(now=200.0)
    assert due is not None and due.id == latest and due.payload == {"n": 2} and due.attempts == 1
    assert [n["state"] for n in outbox.notifications("g")] == [c.BOT_OUTBOX_SUPERSEDED, c.BOT_OUTBOX_PENDING]
    outbox.save_message("g", "#c", "1.1", "firing", "d", [], due.id)
    outbox.close()
    reopened = Outbox(tmp_path / "o.sqlite3")  # survives a restart
    assert reopened.message("g") is not None and reopened.pending() == 0


def test_an_alert_of_one_cluster_names_the_cluster() -> None:
    """Rules generated with cluster_label keep the cluster on the alert: the message says which."""
    a = _latency_alert("latency")
    a["labels"][c.LABEL_CLUSTER] = "eu-west"
    model = enrich(parse_group(payload([a], alertname=c.ALERT_SLO_LATENCY_BUDGET_BURN)), Facts(), LINKS)
    assert model.title.endswith("in cluster eu-west")
    assert "cluster `eu-west`" in json.dumps(Renderer().blocks(model.context()))
    # without the label nothing about clusters is said
    plain = enrich(parse_group(payload([_latency_alert("latency")])), Facts(), LINKS)
    assert "cluster" not in plain.title and "cluster `" not in json.dumps(Renderer().blocks(plain.context()))


def test_a_server_down_alert_shows_the_logs_server_finding_else_the_models_that_stopped_it() -> None:
    down = {**alert(0), "labels": {"alertname": c.ALERT_SERVER_DOWN, "job": "triton"}}
    group = parse_group(payload([down], alertname=c.ALERT_SERVER_DOWN))

    def finding(model: str | None, runbook: str, severity: str = "critical") -> Finding:
        return Finding(model, "1" if model else None, runbook, runbook, severity, (Evidence(1, "x"),), "fix")

    def shown(*findings: Finding) -> list[str]:
        view = enrich(group, Facts(report=Report(findings, ()), diagnosis_source="log t.log"), LINKS)
        return [f.runbook for a in view.alerts for f in a.findings]

    crash = finding(None, c.RUNBOOK_SERVER_CRASHED)
    model = finding("m0", c.RUNBOOK_PYTHON_MODULE_MISSING)
    assert shown(model, crash) == [c.RUNBOOK_SERVER_CRASHED]  # what the log says of the server itself
    # --exit-on-error: one model's failed load ended the server; a warning is never the reason
    assert shown(model, finding(None, c.RUNBOOK_CUDA_DRIVER_MISMATCH, "warning")) == [
        c.RUNBOOK_PYTHON_MODULE_MISSING
    ]
    assert shown() == []
    # a restart in place reads the same log
    for name in (c.ALERT_SERVER_RESTARTED, c.ALERT_CONTAINER_RESTARTED):
        restarted = {**down, "labels": {"alertname": name, "job": "triton"}}
        group = parse_group(payload([restarted], alertname=name))
        assert shown(model, crash) == [c.RUNBOOK_SERVER_CRASHED], name
