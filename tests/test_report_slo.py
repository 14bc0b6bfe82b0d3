"""The report's SLO section for a postmortem (journey25's night): per availability SLO and model, and
per version when a model served several, the events of the range, the error ratio, the budget spent
as a share of the period's budget, and the first and last step above the objective (no Prometheus
needed but for the CLI case, a stand-in on loopback)."""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from fake_prometheus import serve, served
from test_report_answers import healthy, matrix, run

from triton_sre import conventions as c
from triton_sre.generate.slo_rules import bad_reason_matcher, is_bad_reason
from triton_sre.report.figures import ALL_VERSIONS, RangeData, model_table
from triton_sre.report.render import CostReport, slos_csv, to_html, to_markdown
from triton_sre.report.slo import (
    BAD,
    FAILURE,
    SUCCESS,
    SLOSection,
    SLOTable,
    slo_selectors,
    slo_table,
    slo_totals,
)
from triton_sre.slo import default_spec

START, STEP, SECONDS = 1_764_968_100.0, 10.0, 600.0  # 2025-12-05 20:55:00 UTC, ten minutes
TIMES = [START + STEP * i for i in range(int(SECONDS / STEP) + 1)]
SPEC = default_spec()
AVAILABILITY = next(s for s in SPEC.slos if s.type == c.SLO_AVAILABILITY)

# ranker: v1 10 requests/s that all succeed; v2 10 requests/s, failing (a bad reason) from 120 s to
# 420 s, plus 50 failures a bad reason does not count (CANCELED, say: the bad selector leaves them out)
TOTALS = {
    SUCCESS: {"1": 6000.0, "2": 3000.0},
    FAILURE: {"2": 3050.0},
    BAD: {"2": 3000.0},
}
FIRST_BAD, LAST_BAD = START + 130, START + 480  # steps whose trailing window holds v2's failures


def _totals(part: str) -> pd.DataFrame:
    # two servers per version, each half the counts: the section sums the series
    rows = [
        {c.LABEL_MODEL: "ranker", c.LABEL_VERSION: v, c.LABEL_GPU_UUID: g, "increase": n / 2}
        for v, n in TOTALS[part].items()
        for g in ("GPU-a", "GPU-b")
    ]
    return pd.DataFrame(rows)


def _steps(part: str) -> pd.DataFrame:
    def per_step(version: str, t: float) -> float:
        failing = version == "2" and FIRST_BAD <= t <= LAST_BAD
        if part == SUCCESS:
            return 0.0 if failing else 600.0
        return 600.0 if failing else 0.0

    versions = ("1", "2") if part == SUCCESS else ("2",)
    rows = [
        {c.LABEL_MODEL: "ranker", c.LABEL_VERSION: v, "timestamp": t, "value": per_step(v, t)}
        for v in versions
        for t in TIMES
    ]
    return pd.DataFrame(rows)


def _table() -> pd.DataFrame:
    return slo_table(AVAILABILITY, {p: _totals(p) for p in TOTALS}, {p: _steps(p) for p in TOTALS}, SECONDS)


def test_the_nights_slo_rows_per_model_and_version() -> None:
    table = _table().set_index("version")
    assert list(table.index) == [ALL_VERSIONS, "1", "2"]
    allowed = 1 - 99.9 / 100
    requests = 6000 + 3000 + 3050
    expected = requests * (30 * 86400) / SECONDS  # the range's rate over the 30 days
    total, v1, v2 = table.loc[ALL_VERSIONS], table.loc["1"], table.loc["2"]
    assert (total["requests"], total["bad"]) == (requests, 3000)
    assert total["error_ratio"] == pytest.approx(3000 / requests)
    assert total["budget_spent"] == pytest.approx(3000 / (allowed * expected))
    assert (v2["requests"], v2["bad"]) == (6050, 3000)
    assert v2["error_ratio"] == pytest.approx(3000 / 6050)
    assert v2["budget_spent"] == pytest.approx(total["budget_spent"])  # its share of the model's budget
    assert (v1["bad"], v1["error_ratio"], v1["budget_spent"]) == (0, 0, 0)
    assert (total["first_above"], total["last_above"]) == (FIRST_BAD, LAST_BAD)
    assert (v2["first_above"], v2["last_above"]) == (FIRST_BAD, LAST_BAD)
    assert math.isnan(v1["first_above"]) and math.isnan(v1["last_above"])


def test_a_ratio_at_the_objective_is_not_above_it() -> None:
    """A step whose error ratio equals the allowed ratio is within the objective."""
    steps = {
        SUCCESS: pd.DataFrame({"model": "m", "version": "1", "timestamp": TIMES, "value": 999.0}),
        FAILURE: pd.DataFrame({"model": "m", "version": "1", "timestamp": TIMES, "value": 1.0}),
        BAD: pd.DataFrame({"model": "m", "version": "1", "timestamp": TIMES, "value": 1.0}),
    }
    totals = {
        p: pd.DataFrame([{"model": "m", "version": "1", "increase": 1.0 if p != SUCCESS else 999.0}])
        for p in steps
    }
    row = slo_table(AVAILABILITY, totals, steps, SECONDS).iloc[0]
    assert row["version"] == "1" and row["error_ratio"] == pytest.approx(0.001)
    assert math.isnan(row["first_above"])


def test_a_store_without_failure_series_gives_rows_with_no_bad_event() -> None:
    """No nv_inference_request_failure series in the range (none read, or none of the rules' job): the
    section still has the model's rows, 0 bad events, rather than the report ending in an internal
    error (an empty failure total could not be added to the success total's model/version index)."""
    empty = pd.DataFrame(columns=["increase"])
    totals = {SUCCESS: _totals(SUCCESS), FAILURE: empty, BAD: empty}
    steps = {SUCCESS: _steps(SUCCESS), FAILURE: pd.DataFrame(), BAD: pd.DataFrame()}
    table = slo_table(AVAILABILITY, totals, steps, SECONDS).set_index("version")
    assert list(table.index) == [ALL_VERSIONS, "1", "2"]
    assert table.loc[ALL_VERSIONS, "requests"] == 9000 and (table["bad"] == 0).all()


def test_the_section_reads_the_alert_rules_events() -> None:
    """The same job, model and bad-reason matchers as the generated rules: CANCELED is not bad."""
    selectors = slo_selectors(SPEC, AVAILABILITY)
    assert selectors[BAD] == (
        f'{c.NV_REQUEST_FAILURE}{{{c.LABEL_JOB}="{SPEC.triton_job}", '
        f'{c.LABEL_REASON}!="{c.FAILURE_REASON_CANCELED}"}}'
    )
    assert selectors[SUCCESS] == f'{c.NV_REQUEST_SUCCESS}{{{c.LABEL_JOB}="{SPEC.triton_job}"}}'


def _report() -> CostReport:
    table, summary = model_table(RangeData(START, START + SECONDS, STEP, {}, {}))
    section = SLOSection((SLOTable(AVAILABILITY, _table()),), "1m", SECONDS, "slos.yaml")
    return CostReport(START, START + SECONDS, STEP, "http://prometheus", table, summary, [], slos=section)


def test_markdown_and_html_show_the_section() -> None:
    report = _report()
    budget = f"{3000 / (0.001 * 12050 * 30 * 86400 / SECONDS) * 100:.3g}%"
    markdown = to_markdown(report)
    section = markdown.split("## SLOs", 1)[1]
    assert "| ranker | all | 12,050 | 3,000 | 24.9% | " + budget in section
    assert (
        "| ranker | 2 | 6,050 | 3,000 | 49.6% | " + budget + " | 2025-12-05 20:57:10 | 2025-12-05 21:03:00 |"
        in section
    )
    assert "assuming the event rate of these 10.0 min holds over the whole period" in section
    assert "events: requests (successes and failures); bad: failures with the SLO's bad reasons" in section
    html = to_html(report)
    assert "<h2>SLOs</h2>" in html and "2025-12-05 20:57:10" in html and budget in html


def test_slos_csv_has_a_row_per_model_and_version() -> None:
    rows = list(csv.DictReader(io.StringIO(slos_csv(_report()))))
    assert [(r["slo"], r["model"], r["version"]) for r in rows] == [
        (AVAILABILITY.name, "ranker", v) for v in (ALL_VERSIONS, "1", "2")
    ]
    v2 = rows[2]
    assert (v2["bad"], v2["first_above"], v2["last_above"]) == (
        "3000",
        "2025-12-05T20:57:10Z",
        "2025-12-05T21:03:00Z",
    )
    assert float(v2["budget_spent"]) == pytest.approx(3000 / (0.001 * 12050 * 30 * 86400 / SECONDS), rel=1e-5)
    assert rows[1]["first_above"] == ""


def test_totals_keep_the_rules_job_models_and_bad_reasons() -> None:
    """The report's request counters, read once with labels job and reason, filtered as the rules'
    matchers select: another job's series and CANCELED failures are not the SLO's bad events."""
    job, other = SPEC.triton_job, "not-" + SPEC.triton_job
    failure = pd.DataFrame(
        [
            {c.LABEL_MODEL: "m", c.LABEL_VERSION: "1", c.LABEL_JOB: job, c.LABEL_REASON: r, "increase": n}
            for r, n in ((c.FAILURE_REASONS[0], 5.0), (c.FAILURE_REASON_CANCELED, 7.0))
        ]
        + [
            {
                c.LABEL_MODEL: "m",
                c.LABEL_VERSION: "1",
                c.LABEL_JOB: other,
                c.LABEL_REASON: "",
                "increase": 100.0,
            }
        ]
        + [{c.LABEL_MODEL: "n", c.LABEL_VERSION: "1", c.LABEL_JOB: job, c.LABEL_REASON: "", "increase": 11.0}]
    )
    success = pd.DataFrame([{c.LABEL_MODEL: "m", c.LABEL_VERSION: "1", c.LABEL_JOB: job, "increase": 88.0}])
    increases = {c.NV_REQUEST_FAILURE: failure, c.NV_REQUEST_SUCCESS: success}
    totals = slo_totals(SPEC, AVAILABILITY, increases, {"m"})
    assert totals[BAD]["increase"].sum() == (5.0 if c.FAILURE_REASONS[0] != c.FAILURE_REASON_CANCELED else 0)
    assert totals[FAILURE]["increase"].sum() == 12.0 and totals[SUCCESS]["increase"].sum() == 88.0
    assert slo_totals(SPEC, AVAILABILITY, increases, None)[BAD]["increase"].sum() == 16.0  # n's too


@pytest.mark.parametrize("bad_reasons", [None, (c.FAILURE_REASON_CANCELED,), tuple(c.FAILURE_REASONS[:2])])
def test_the_python_reason_filter_is_the_rules_matcher(bad_reasons: tuple[str, ...] | None) -> None:
    """is_bad_reason answers as bad_reason_matcher's PromQL matcher does, for each of Triton's reasons
    and a series without one."""
    slo = replace(AVAILABILITY, bad_reasons=bad_reasons)
    label, op, value = bad_reason_matcher(slo)
    assert label == c.LABEL_REASON
    for reason in (*c.FAILURE_REASONS, ""):
        matched = reason != value if op == "!=" else re.fullmatch(str(value), reason) is not None
        assert is_bad_reason(slo, reason) == matched, (bad_reasons, reason)


def test_the_cli_writes_the_section_from_prometheus(tmp_path: Path) -> None:
    """Through the CLI: the request counters' reasons and job kept, the per-step query asked, slos.csv
    written."""
    seen: list[str] = []

    def series(name: str, per_step: float, stamps: list[float], **labels: str) -> tuple[dict, list[str]]:
        values = [str(per_step * i) for i in range(len(stamps))]
        base = {"__name__": name, c.LABEL_MODEL: "m", c.LABEL_VERSION: "1", c.LABEL_JOB: SPEC.triton_job}
        return {**base, **labels}, values

    def answer(query: str, stamps: list[float]) -> object:
        if query == c.NV_REQUEST_FAILURE:  # 2 failures a step of a bad reason, 1 CANCELED
            bad = next(r for r in c.FAILURE_REASONS if r != c.FAILURE_REASON_CANCELED)
            return matrix(
                [
                    series(query, 2.0, stamps, **{c.LABEL_REASON: bad}),
                    series(query, 1.0, stamps, **{c.LABEL_REASON: c.FAILURE_REASON_CANCELED}),
                ],
                stamps,
            )
        if query == c.NV_REQUEST_SUCCESS:
            return matrix([series(query, 10.0, stamps)], stamps)
        return healthy(query, stamps)

    httpd = serve(answer, seen=seen)
    try:
        code, _out, err = run(f"http://127.0.0.1:{httpd.server_address[1]}", tmp_path)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert code == c.EXIT_OK, err
    rows = list(csv.DictReader((tmp_path / "slos.csv").open(encoding="utf-8")))
    row = next(r for r in rows if r["slo"] == AVAILABILITY.name)
    # 6 steps: 60 successes, 18 failures, 12 of them bad
    assert (row["model"], row["version"], row["requests"], row["bad"]) == ("m", "1", "78", "12")
    assert "## SLOs" in (tmp_path / "report.md").read_text(encoding="utf-8")
    assert any(q.startswith(f"sum by ({c.LABEL_MODEL}, {c.LABEL_VERSION}) (increase(") for q in seen)


def test_a_regex_selector_is_matched_by_prometheus() -> None:
    """`models: {regex: …}`: the models are the ones Prometheus' RE2 matcher selects (one instant
    query with the rules' matchers), not a Python re-reading of the pattern."""
    from triton_sre.report.prom import PrometheusClient
    from triton_sre.report.slo import _models
    from triton_sre.slo import ModelSelector

    seen: list[str] = []
    vector = [{"metric": {c.LABEL_MODEL: "llm-a"}, "value": [START, "1"]}]
    httpd = serve(lambda q, s: matrix([], s), instant=vector, seen=seen)
    try:
        client = PrometheusClient(f"http://127.0.0.1:{httpd.server_address[1]}")
        slo = replace(AVAILABILITY, models=ModelSelector("regex", regex="llm-.*"))
        assert _models(client, SPEC, slo, START + SECONDS, SECONDS) == {"llm-a"}
        listed = replace(AVAILABILITY, models=ModelSelector("list", names=("a", "b")))
        assert _models(client, SPEC, listed, START + SECONDS, SECONDS) == {"a", "b"}
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert seen == [
        f"count by ({c.LABEL_MODEL}) (last_over_time({c.NV_REQUEST_SUCCESS}"
        f'{{{c.LABEL_JOB}="{SPEC.triton_job}", {c.LABEL_MODEL}=~"llm-.*"}}[{SECONDS:.0f}s]))'
    ]


def test_the_slo_reads_are_sized_by_their_counted_series(tmp_path: Path) -> None:
    """The SLO section's range queries are read with the series counted before the step was chosen,
    as the models table's are: each in one slice of the whole range (61 points). Before, each was
    read without its count: a first slice of 10 points to learn it, then the rest (two queries)."""
    asked: list[tuple[str, int]] = []

    def answer(query: str, stamps: list[float]) -> object:
        asked.append((query, len(stamps)))
        return healthy(query, stamps)

    one = [{"metric": {}, "value": [1600, "1"]}]  # every count: one series
    with served(answer, instant=one) as url:
        code, _out, err = run(url, tmp_path, "--start", "1000", "--end", "1600")
    assert code == c.EXIT_OK, err
    step_query = f"sum by ({c.LABEL_MODEL}, {c.LABEL_VERSION}) (increase("
    per_step = [n for q, n in asked if q.startswith(step_query)]
    assert per_step and per_step == [61] * len(per_step), per_step
    assert [n for q, n in asked if q == c.NV_INFERENCE_COUNT] == [61]  # the models table's, as before
