"""Fault probes, round nine (branch `probes9`, 2026-12-05): hostile values flowing end to end (model
and job names holding template braces, quotes, `$`, mrkdwn controls), credentials in URLs reaching
an output, answers of odd shape — docs/failure-behaviour.md, "Fault probes, round nine"."""

from __future__ import annotations

import io
import json
import logging
import subprocess
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import redirect_stderr, redirect_stdout
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from binaries import binary
from fake_prometheus import serve
from test_report_answers import healthy
from test_security_slack_mrkdwn import CONTROL, LINK, mrkdwn_texts

from triton_sre import conventions as c
from triton_sre.bot.enrich import Facts, Links, enrich
from triton_sre.bot.payload import describe_change, parse_group
from triton_sre.bot.prom import chart_png
from triton_sre.bot.slack import Renderer
from triton_sre.cli import main
from triton_sre.gameday.observer import Observer, SeenAlert
from triton_sre.redact import install_redaction

PROMTOOL_TIMEOUT = 120
TEMPLATE_MODEL = '{{ query "up" }}'
PASSWORD = "hunter2-probe9"


def generate(tmp_path: Path, spec: dict[str, Any]) -> tuple[int, str, Path]:
    path, out = tmp_path / "slos.yaml", tmp_path / "out"
    path.write_text(yaml.safe_dump(spec))
    stdout, stderr = io.StringIO(), io.StringIO()
    with redirect_stdout(stdout), redirect_stderr(stderr):
        code = main(["generate", "--spec", str(path), "--out", str(out)])
    return code, stderr.getvalue(), out


def promtool_test(folder: Path, name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [binary("promtool"), "test", "rules", name],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=PROMTOOL_TIMEOUT,
    )


def availability(models: list[str]) -> dict[str, Any]:
    return {"name": "avail", "type": c.SLO_AVAILABILITY, "models": models, "objective": 99.9}


# -- generate: names from slos.yaml ------------------------------------------------------------------
def test_a_model_name_holding_template_braces_generates_rules_whose_tests_pass(tmp_path: Path) -> None:
    """Before: `internal error: ValueError: cannot render template 'Model {{ $labels.model }} burns…'`
    (the test's expected annotation was checked for braces after the value was put in). Prometheus
    prints a label value as it is, never expands it: the expected annotation holds the braces."""
    code, err, out = generate(tmp_path, {"slos": [availability([TEMPLATE_MODEL, "plain"])]})
    assert code == 0, err
    tests = out / "alerts" / "tests"
    expected = [
        alert["exp_annotations"]["summary"]
        for test in yaml.safe_load((tests / "triton-slo-rules.test.yaml").read_text())["tests"]
        for case in test.get("alert_rule_test", [])
        for alert in case["exp_alerts"]
    ]
    assert any(summary.startswith(f"Model {TEMPLATE_MODEL} burns") for summary in expected), expected
    result = promtool_test(tests, "triton-slo-rules.test.yaml")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("key", ["triton_job", "exporter_job", "triton_container"])
def test_a_scrape_name_holding_template_braces_is_refused_by_name(tmp_path: Path, key: str) -> None:
    """Before: `exporter_job: 'x {{ query "up" }}'` was written into TritonExporterDown's description,
    which Prometheus expands as a template (the query ran; `generate` itself ended in `internal error`),
    and `triton_job` into the Flagger and Argo templates, which expand `{{ }}` too."""
    spec = {"scrape": {key: f"x {TEMPLATE_MODEL}"}, "slos": [availability(["m"])]}
    code, err, out = generate(tmp_path, spec)
    assert code == 2 and not out.exists(), err
    assert f"scrape.{key}: must not contain '{{{{' or '}}}}'" in err, err
    assert "internal error" not in err


@pytest.mark.parametrize("key", ["name", "baseline", "candidate"])
def test_a_rollout_pair_name_holding_template_braces_is_refused_by_name(tmp_path: Path, key: str) -> None:
    """Before: a pair's name, baseline and candidate were written into TritonRolloutRegression's
    summary and description as they were (`Model p {{ query "up" }}: green is worse than blue …`):
    Prometheus would run the query, a lone `{{` made the rule file fail to load; `generate` itself
    ended in `internal error: ValueError: cannot render template`."""
    pair = {"name": "p", "baseline": "blue", "candidate": "green"}
    pair[key] = f"{pair[key]} {TEMPLATE_MODEL}"
    spec = {"slos": [availability(["m"])], "rollout": {"pairs": [pair]}}
    code, err, out = generate(tmp_path, spec)
    assert code == 2 and not out.exists(), err
    assert f"rollout.pairs[0].{key}: must not contain '{{{{' or '}}}}'" in err, err


def test_quotes_and_backslashes_in_the_job_give_llm_rule_tests_promtool_reads(tmp_path: Path) -> None:
    """Before: the LLM rules' promtool test wrote its series' label values unquoted
    (`job="tri"ton\\ x"`): `promtool test rules` failed `parse error: unexpected identifier`."""
    job = 'tri"ton\\ {job}|.* $x <!channel> \u202eé'
    code, err, out = generate(tmp_path, {"scrape": {"triton_job": job}, "slos": [availability(["m"])]})
    assert code == 0, err
    result = promtool_test(out / "alerts" / "tests", "triton-llm-rules.test.yaml")
    assert result.returncode == 0, result.stdout + result.stderr


# -- the bot's chart -------------------------------------------------------------------------------
@pytest.mark.parametrize("model", ["$\\foo$", "a $\\x{$ b"])
def test_the_bots_chart_draws_a_label_value_with_dollars_as_text(model: str) -> None:
    """Before: two `$` made matplotlib read the legend (a model label) or the title (an alert's PromQL)
    as mathtext; `$\\foo$` raised ValueError, the chart was lost with a traceback in the log (the
    report's charts had been fixed the same way, the bot's not)."""
    series = [{"metric": {c.LABEL_MODEL: model}, "values": [[1.7e9, "1"], [1.7e9 + 30, "2"]]}]
    png = chart_png(series, f'TritonX: rate(x{{model="{model}"}}[5m])')
    assert png is not None and png.startswith(b"\x89PNG")


def test_the_bots_chart_of_values_no_axis_can_span_is_skipped_with_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Before: samples of ±1e308 (finite: Prometheus answers them) raised `ValueError: arange: cannot
    compute length` out of the tick locator: `chart failed` with a traceback in the bot's log. NaN and
    ±Inf samples are gaps; a chart with no finite sample is not posted."""

    def series(*values: str) -> list[dict[str, Any]]:
        return [
            {"metric": {c.LABEL_MODEL: "m"}, "values": [[1.7e9 + 30 * i, v] for i, v in enumerate(values)]}
        ]

    with caplog.at_level("WARNING"):
        assert chart_png(series("1e308", "-1e308"), "t") is None
    assert [r.getMessage() for r in caplog.records if "chart skipped" in r.getMessage()], caplog.text
    assert not [r for r in caplog.records if r.exc_info]
    assert chart_png(series("NaN", "+Inf", "-Inf"), "t") is None
    png = chart_png(series("1", "+Inf", "NaN", "2"), "t")
    assert png is not None and png.startswith(b"\x89PNG")


# -- the bot's Slack text: every label value escaped ------------------------------------------------
MENTION = "<!channel> <http://evil.example|x> <@U1>"


@pytest.mark.parametrize("alertname", [c.ALERT_MODEL_UNAVAILABLE, c.ALERT_SLO_ERROR_BUDGET_BURN, "Custom"])
def test_no_label_value_pings_or_links_in_the_bots_message(alertname: str) -> None:
    """Before: the `version`, `window` and `runbook` labels went into the message's mrkdwn sections,
    and `severity` into the notification text (what Slack shows in push notifications and parses for
    mentions), without escaping: `severity: page<!channel>` pinged the channel, `version` rendered a
    link the alert did not carry. The earlier test escaped model, instance, summary and description."""
    labels = {
        c.LABEL_ALERTNAME: alertname,
        **{
            name: f"x{MENTION}"
            for name in (c.LABEL_MODEL, c.LABEL_VERSION, c.L_SEVERITY, c.LABEL_INSTANCE, c.LABEL_CLUSTER)
        },
        c.L_SLO: f"s{MENTION}",
        c.L_WINDOW: f"5m{MENTION}",
        c.L_RUNBOOK: f"r{MENTION}",
    }
    alert = {
        "status": "firing",
        "labels": labels,
        "annotations": {"summary": MENTION, c.ANNOTATION_BURN_RATE: "2"},
        "fingerprint": "f1",
        "startsAt": "2026-11-29T10:00:00Z",
    }
    body = {
        "version": c.AM_WEBHOOK_VERSION,
        "groupKey": f"k{MENTION}",
        "status": "firing",
        "receiver": "bot",
        "groupLabels": labels,
        "commonLabels": labels,
        "commonAnnotations": {},
        "externalURL": "http://am.example:9093",
        "alerts": [alert],
    }
    group = parse_group(body)
    context = enrich(group, Facts(), Links(runbook_base_url="https://rb.example/")).context()
    renderer = Renderer()
    texts = [
        *mrkdwn_texts(renderer.blocks(context)),
        renderer.text(context),
        renderer.update({**context, "change": describe_change([], group, None)}),
    ]
    assert any("&lt;!channel&gt;" in text for text in texts)
    for text in texts:
        assert not CONTROL.search(text), text
        for target, _label in LINK.findall(text):  # links only to where the bot's own links go
            assert urlsplit(target).hostname in {"rb.example", "am.example"}, text


# -- log lines: values cannot forge a line -----------------------------------------------------------
def test_a_newline_in_a_logged_value_cannot_forge_a_log_line() -> None:
    """Before: the bot logs each group's key and change (`group %s: posted …`), and the webhook's
    `version`, as they came: a label value or a key holding `\n2026-12-05 … ERROR …` wrote a log
    line of its own (a forged ERROR a log alert would act on); a channel name with a newline split
    the start line. Every handler's RedactingFilter now shows control characters as escapes; a
    traceback keeps its lines."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    install_redaction([handler])
    logger = logging.getLogger("triton_sre.probe9")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        forged = "k\n2026-12-05 17:00:00,000 ERROR triton_sre.bot.worker: forged\r\x1b[2J"
        logger.warning("group %s: posted %s", forged, "#c")
        try:
            raise ValueError("inner")
        except ValueError:
            logger.exception("group %s: chart failed", "g")
    finally:
        logger.removeHandler(handler)
    lines = stream.getvalue().splitlines()
    shown = "k\\n2026-12-05 17:00:00,000 ERROR triton_sre.bot.worker: forged\\r\\x1b[2J"
    assert lines[0] == f"WARNING group {shown}: posted #c"
    assert lines[1] == "ERROR group g: chart failed" and lines[2].startswith("Traceback")
    assert not [line for line in lines if line.startswith("2026-12-05")]


# -- report: credentials in the Prometheus URL -------------------------------------------------------
def test_the_reports_source_line_carries_no_credentials(tmp_path: Path) -> None:
    """Before: `source: http://admin:<password>@host:port` in report.md and report.html (the URL was
    kept as given for that line; every error message was already redacted)."""
    httpd = serve(lambda query, stamps: healthy(query, stamps))
    try:
        url = f"http://admin:{PASSWORD}@127.0.0.1:{httpd.server_address[1]}"
        out = tmp_path / "report"
        stdout, stderr = io.StringIO(), io.StringIO()
        argv = ["report", "--prometheus-url", url, "--start", "1000", "--end", "1060", "--step", "10"]
        with redirect_stdout(stdout), redirect_stderr(stderr):
            code = main([*argv, "--out", str(out)])
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert code == 0, stderr.getvalue()
    written = {f.name: f.read_text() for f in out.iterdir() if f.suffix in (".md", ".html", ".csv")}
    assert {"report.md", "report.html"} <= set(written)
    for name, text in written.items():
        assert PASSWORD not in text, name
    assert "@127.0.0.1" in written["report.md"]  # the server is still named


def test_a_ten_thousand_character_model_name_leaves_the_reports_charts_room_to_draw(tmp_path: Path) -> None:
    """Before: the name was drawn whole as a tick label: matplotlib printed `UserWarning: Tight layout
    not applied. The left and right margins cannot be made large enough …` (with its file and line)
    on the report's stderr and drew charts with no room for the bars. Names are cut to 80 characters
    on charts (`mplconfig.drawn`); tables and CSV keep them whole."""
    model = "m" * 10_000
    httpd = serve(lambda query, stamps: healthy(query, stamps, model=model))
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        out = tmp_path / "report"
        stdout, stderr = io.StringIO(), io.StringIO()
        argv = ["report", "--prometheus-url", url, "--start", "1000", "--end", "1060", "--step", "10"]
        with warnings.catch_warnings(record=True) as caught, redirect_stdout(stdout), redirect_stderr(stderr):
            warnings.simplefilter("always")
            code = main([*argv, "--out", str(out)])
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert code == 0, stderr.getvalue()
    assert not [str(w.message) for w in caught if "layout" in str(w.message).lower()]
    assert model in (out / "models.csv").read_text()


# -- gameday's observer: answers of another shape ----------------------------------------------------
def _answering(answers: dict[str, Callable[[], tuple[int, Any]]]) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            status, body = answers[self.path.split("?")[0]]()
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


FIRING = {
    "labels": {c.LABEL_ALERTNAME: c.ALERT_SERVER_DOWN, "job": "t"},
    "annotations": {},
    "state": "firing",
}


@pytest.mark.parametrize(
    ("prometheus", "alertmanager"),
    [
        ((503, {"status": "error", "errorType": "unavailable", "error": "x"}), (503, {"error": "x"})),
        ((200, {"status": "success", "data": None}), (200, {"code": 600, "message": "x"})),
        ((200, {"status": "success", "data": {"alerts": None}}), (200, ["not an alert", 5, None])),
        ((200, [1, 2]), (200, "text")),
    ],
)
def test_the_gameday_observer_keeps_its_alerts_through_an_answer_of_another_shape(
    prometheus: tuple[int, Any], alertmanager: tuple[int, Any]
) -> None:
    """Before: Alertmanager's error object (a mapping, iterated as its keys) or Prometheus' `data: null`
    raised AttributeError out of the observer's thread, which died: the gameday saw no alert again and
    scored every later scenario undetected; a Prometheus error answer read as "no alert firing" ended
    every alert seen."""
    state = {"bad": False}
    good_prometheus = (200, {"status": "success", "data": {"alerts": [FIRING]}})
    good_alertmanager = (200, [FIRING])
    answers = {
        "/api/v1/alerts": lambda: prometheus if state["bad"] else good_prometheus,
        "/api/v2/alerts": lambda: alertmanager if state["bad"] else good_alertmanager,
    }
    for url in _answering(answers):
        observer = Observer(url, url, None)
        observer.poll_once()
        key = SeenAlert(c.ALERT_SERVER_DOWN, (("job", "t"),))
        assert observer.timeline.prometheus[key].spans[-1][1] is None  # open: firing
        state["bad"] = True
        observer.poll_once()  # raised before
        assert set(observer.timeline.errors) == {"prometheus", "alertmanager"}
        for table in (observer.timeline.prometheus, observer.timeline.alertmanager):
            assert table[key].spans[-1][1] is None, table  # not ended by an answer that says nothing
        state["bad"] = False
        observer.poll_once()
        assert observer.timeline.prometheus[key].spans[-1][1] is None
