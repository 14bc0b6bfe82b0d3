"""Prometheus' `warnings` and `infos` (a `status: success` answer that may be partial: a store not
answering, a limit hit, a PromQL annotation) are kept by the shared client and shown by the report,
`rollout check` and the bot, never read silently. Against a loopback stand-in answering Prometheus'
JSON with them at the body's top level, as Prometheus, Thanos and Mimir write them."""

from __future__ import annotations

import io
import json
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

from fake_prometheus import served
from test_report_answers import healthy

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.prom import Prometheus
from triton_sre.report import sections
from triton_sre.report.render import PARTIAL

STORE_DOWN = "partial response: store 10.0.0.7:10901 unreachable (http://admin:hunter2@store:10901)"
NOT_A_COUNTER = 'PromQL info: metric might not be a counter, name does not end in _total: "x"'


def _warn_on(query_starts: str) -> Any:
    def warn(query: str) -> dict[str, Any]:
        if query.startswith(query_starts):
            return {"warnings": [STORE_DOWN], "infos": [NOT_A_COUNTER]}
        return {}

    return warn


def test_the_client_keeps_the_warnings_of_range_and_instant_answers_redacted() -> None:
    def answer(query: str, stamps: list[float]) -> Any:
        return {"resultType": "matrix", "result": [{"metric": {"a": "b"}, "values": [[stamps[0], "1"]]}]}

    with served(answer, instant=[{"metric": {}, "value": [1, "2"]}], warn=_warn_on("up")) as url:
        prom = Prometheus(url)
        # the range path (decoded series by series) read the answer and its warnings: before, its
        # tail check refused Prometheus' own layout as "not a Prometheus API answer"
        assert prom.query_range("up", 1000, 1010, 10) == [{"metric": {"a": "b"}, "values": [[1000, "1"]]}]
        assert prom.instant("up") == 2.0
        assert prom.instant("other") == 2.0
    assert prom.warnings == [("up", STORE_DOWN.replace("admin:hunter2", "<redacted>"))]
    assert prom.infos == [("up", NOT_A_COUNTER)]
    assert "hunter2" not in repr(prom.warnings)


def test_warnings_a_proxy_writes_inside_data_are_kept_too() -> None:
    def answer(query: str, stamps: list[float]) -> bytes:
        series = {"metric": {}, "values": [[stamps[0], "1"]]}
        data = {"resultType": "matrix", "result": [series], "warnings": [STORE_DOWN]}
        return json.dumps({"status": "success", "data": data}).encode()

    with served(answer) as url:
        prom = Prometheus(url)
        assert len(prom.query_range("up", 1000, 1010, 10)) == 1
    assert [text for _, text in prom.warnings] == [STORE_DOWN.replace("admin:hunter2", "<redacted>")]


def _report(tmp_path: Path, warn: Any) -> tuple[Path, str]:
    out = tmp_path / "report"
    stdout, stderr = io.StringIO(), io.StringIO()
    argv = ["report", "--start", "1000", "--end", "1060", "--step", "10"]
    with served(healthy, warn=warn) as url, redirect_stdout(stdout), redirect_stderr(stderr):
        code = main([*argv, "--prometheus-url", url, "--out", str(out)])
    assert code == c.EXIT_OK, stderr.getvalue()
    return out, stderr.getvalue()


def test_the_report_names_the_sections_resting_on_partial_data(tmp_path: Path) -> None:
    """reportsplit: before, the line named the metric family (`partial data (…): nv_inference_count: …`)
    and left the reader to know what it feeds; now each section its query feeds has its line."""
    out, stderr = _report(tmp_path, _warn_on(c.NV_INFERENCE_COUNT))
    md, html = (out / "report.md").read_text(), (out / "report.html").read_text()
    redacted = STORE_DOWN.replace("admin:hunter2", "<redacted>")
    for section in (sections.MODELS, sections.RECOMMENDATIONS, sections.CHARTS):
        assert f"- **{PARTIAL} {section}**: {c.NV_INFERENCE_COUNT}: {redacted.split(' (')[0]}" in md
        assert f"<dt>{PARTIAL} {section}</dt><dd>{c.NV_INFERENCE_COUNT}: partial response: store" in html
        assert f"partial data in {section}: {c.NV_INFERENCE_COUNT}: partial response" in stderr
    assert f"**{PARTIAL} {sections.SLOS}**" not in md and f"**{PARTIAL} {sections.CAPACITY}**" not in md
    assert f"- **Prometheus info in {sections.MODELS}**: {c.NV_INFERENCE_COUNT}: PromQL info: metric" in md
    assert "http://&lt;redacted&gt;@store:10901" in html
    said = json.loads((out / "partial_data.json").read_text())
    assert said["partial_data"] == {
        section: [f"{c.NV_INFERENCE_COUNT}: {redacted}"]
        for section in (sections.MODELS, sections.RECOMMENDATIONS, sections.CHARTS)
    }
    assert said["prometheus_info"][sections.MODELS] == [f"{c.NV_INFERENCE_COUNT}: {NOT_A_COUNTER}"]
    assert "hunter2" not in md + html + stderr + json.dumps(said)


def test_a_warning_is_said_in_the_sections_its_queries_feed_and_no_other(tmp_path: Path) -> None:
    """The model states feed the models not served, the SLOs' not-served rows and the capacity section;
    an SLO's per-step query (its PromQL built at the rate window, named by none of the plan) the SLOs."""

    def warn(query: str) -> dict[str, Any]:
        state = query.startswith(c.M_MODEL_STATE) or query.startswith(
            f"max by (model, namespace) ({c.M_MODEL_STATE}"
        )
        per_step = "increase(" in query and c.NV_REQUEST_FAILURE in query
        return (
            {"warnings": [STORE_DOWN if state else "shard 3 hit its series limit"]}
            if state or per_step
            else {}
        )

    out, stderr = _report(tmp_path, warn)
    said = json.loads((out / "partial_data.json").read_text())["partial_data"]
    assert set(said) == {sections.UNSERVED, sections.SLOS, sections.CAPACITY}
    assert said[sections.CAPACITY] == [
        f"{c.M_MODEL_STATE}: {STORE_DOWN.replace('admin:hunter2', '<redacted>')}"
    ]
    per_step = [note for note in said[sections.SLOS] if note.endswith("shard 3 hit its series limit")]
    assert len(per_step) == 1 and per_step[0].startswith("sum by (")  # one line for its queries, cut
    assert f"partial data in {sections.MODELS}:" not in stderr


def test_a_report_of_answers_without_warnings_has_no_partial_note(tmp_path: Path) -> None:
    out = tmp_path / "report"
    stderr = io.StringIO()
    argv = ["report", "--start", "1000", "--end", "1060", "--step", "10", "--format", "md"]
    with served(healthy) as url, redirect_stdout(io.StringIO()), redirect_stderr(stderr):
        assert main([*argv, "--prometheus-url", url, "--out", str(out)]) == c.EXIT_OK
    assert PARTIAL not in (out / "report.md").read_text()
    assert "partial data" not in stderr.getvalue()


def _everywhere_one(query: str, stamps: list[float]) -> Any:
    """Every range query: one series of 1 at every step (both sides equal: a pass)."""
    return {"resultType": "matrix", "result": [{"metric": {}, "values": [[t, "1"] for t in stamps]}]}


def _check(
    warn: Any, fmt: str, capsys: Any, instant: list[dict[str, Any]] | None = None
) -> tuple[int, str, str]:
    with served(_everywhere_one, warn=warn, instant=instant) as url:
        argv = ["rollout", "check", "--prometheus", url, "--model", "m", "--baseline-version", "1"]
        code = main([*argv, "--candidate-version", "2", "--window", "5m", "--format", fmt])
    out, err = capsys.readouterr()
    return code, out, err


def _said(key: str, text: str) -> Any:
    return lambda query: {key: [text]}


def test_a_rollout_pass_on_partial_data_is_inconclusive_and_carries_the_warnings(capsys: Any) -> None:
    code, out, err = _check(None, "json", capsys)
    assert code == c.EXIT_OK, err  # the same answers without warnings: a pass
    assert "warnings" not in json.loads(out)
    code, out, err = _check(_said("warnings", STORE_DOWN), "json", capsys)
    assert code == c.EXIT_INCONCLUSIVE, err
    body = json.loads(out)
    assert body["verdict"] == c.ROLLOUT_INCONCLUSIVE
    assert "partial" in body["reason"]
    assert {w["text"] for w in body["warnings"]} == {STORE_DOWN.replace("admin:hunter2", "<redacted>")}
    assert "hunter2" not in out
    code, out, _ = _check(_said("warnings", STORE_DOWN), "text", capsys)
    assert code == c.EXIT_INCONCLUSIVE
    assert out.splitlines()[0].startswith(f"rollout {c.ROLLOUT_INCONCLUSIVE.upper()}: ")
    assert "Prometheus warning: partial response: store 10.0.0.7:10901 unreachable" in out


def test_a_rollout_pass_with_promql_infos_stays_a_pass_and_shows_them(capsys: Any) -> None:
    """An info (PromQL's "metric might not be a counter", which a rate of a Triton counter may carry)
    is no partial data: said, the verdict kept."""
    code, out, err = _check(_said("infos", NOT_A_COUNTER), "json", capsys)
    assert code == c.EXIT_OK, err
    body = json.loads(out)
    assert body["verdict"] == c.ROLLOUT_PASS and "warnings" not in body
    assert {i["text"] for i in body["infos"]} == {NOT_A_COUNTER}
    code, out, _ = _check(_said("infos", NOT_A_COUNTER), "text", capsys)
    assert code == c.EXIT_OK
    assert f"Prometheus info: {NOT_A_COUNTER}" in out


def _bot_message(url: str, tmp_path: Path, name: str) -> tuple[Any, str]:
    """The worker's facts and the rendered message's mrkdwn of one availability burn alert."""
    from test_security_slack_mrkdwn import mrkdwn_texts

    from triton_sre.bot.config import BotSettings
    from triton_sre.bot.enrich import enrich
    from triton_sre.bot.outbox import Outbox
    from triton_sre.bot.payload import parse_group
    from triton_sre.bot.slack import Renderer, SlackDelivery
    from triton_sre.bot.worker import Worker

    labels = {
        "alertname": c.ALERT_SLO_ERROR_BUDGET_BURN,
        "slo": "availability",
        "window": "5m",
        "model": "m",
        "severity": c.SEVERITY_PAGE,
    }
    group = parse_group(
        {"alerts": [{"labels": labels, "fingerprint": "f1", "annotations": {}}], "commonLabels": labels}
    )
    settings = BotSettings(channel="#c", prometheus_url=url)
    worker = Worker(settings, Outbox(tmp_path / f"{name}.sqlite3"), SlackDelivery("xoxb-unused"), {})
    facts = worker.facts(group)
    context = enrich(group, facts, worker.links).context()
    return facts, "\n".join(mrkdwn_texts(Renderer().blocks(context)))


def test_the_bots_message_says_its_figures_may_be_partial(tmp_path: Path) -> None:
    vector = [{"metric": {}, "value": [1, "2"]}]
    with served(_everywhere_one, instant=vector) as url:
        facts, text = _bot_message(url, tmp_path, "clean")
    assert facts.burn_rates and "partial" not in text
    with served(_everywhere_one, instant=vector, warn=_said("warnings", STORE_DOWN)) as url:
        facts, text = _bot_message(url, tmp_path, "partial")
    assert facts.burn_rates  # the figures are still shown
    redacted = STORE_DOWN.replace("admin:hunter2", "&lt;redacted&gt;")
    assert f"Figures may be partial: {redacted}" in text
    assert "hunter2" not in text
    with served(_everywhere_one, instant=vector, warn=_said("infos", NOT_A_COUNTER)) as url:
        _, text = _bot_message(url, tmp_path, "infos")
    assert "partial" not in text  # an info is no partial data


def test_the_rollout_slash_commands_answer_ends_naming_the_warnings() -> None:
    from triton_sre.prom import Prometheus
    from triton_sre.rollout.live import model_answer
    from triton_sre.slo import default_spec

    now = [{"metric": {}, "value": [1, str(time.time())]}]
    versions = [{"metric": {c.LABEL_VERSION: v}, "value": [1, "1"]} for v in ("1", "2")]

    def served_versions(query: str) -> list[dict[str, Any]]:
        return now if query == "vector(time())" else versions

    with served(_everywhere_one, instant=served_versions) as url:
        clean = model_answer(Prometheus(url), "m", default_spec())
    assert clean and not any("partial" in line for line in clean)
    with served(_everywhere_one, instant=served_versions, warn=_said("warnings", STORE_DOWN)) as url:
        lines = model_answer(Prometheus(url), "m", default_spec())
    assert lines[:-1] == clean
    assert lines[-1] == "Figures may be partial: " + STORE_DOWN.replace("admin:hunter2", "<redacted>")


def test_the_bots_partial_line_stays_within_slacks_context_text(tmp_path: Path) -> None:
    """Forty distinct warnings of 1,000 characters: the line names three, cut, under Slack's 3,000."""
    from triton_sre.rollout.live import PARTIAL_SHOWN

    many = [f"store {i} unreachable " + "x" * 1000 for i in range(40)]
    vector = [{"metric": {}, "value": [1, "2"]}]
    with served(_everywhere_one, instant=vector, warn=lambda query: {"warnings": many}) as url:
        facts, text = _bot_message(url, tmp_path, "many")
    assert len(facts.partial) == PARTIAL_SHOWN
    line = next(line for line in text.splitlines() if "Figures may be partial" in line)
    assert "store 0 unreachable" in line and len(line) < 3000


def test_a_warning_on_every_answer_names_every_section(tmp_path: Path) -> None:
    """A store down for every query: the client's first 20 (query, warning) pairs were the series
    counts read before any range; each section the answers feed is named, each warning once per
    section with the queries that carried it."""
    out, _stderr = _report(tmp_path, lambda query: {"warnings": [STORE_DOWN]})
    said = json.loads((out / "partial_data.json").read_text())["partial_data"]
    assert set(said) >= {
        sections.MODELS,
        sections.UNSERVED,
        sections.LLM,
        sections.RECOMMENDATIONS,
        sections.SLOS,
        sections.CAPACITY,
        sections.CHARTS,
    }
    assert all(len(notes) == 1 and "more): partial response: store" in notes[0] for notes in said.values())
