"""The report's SLO section for latency and LLM SLOs, as their rules judge them, against a real
Prometheus holding ten minutes of series (backfilled):

- `hist`: Triton's first-response histogram, 1 request in 10 above 500 ms for the first 19 scrapes
  (request-based: bad = count - the 500 ms bucket); its summary reads bad too, but a model with the
  histogram is judged on it, not on slices (`latency_sli: auto`, as the rules' `or on (model)`);
- `slow`: only Triton's p99 summary, above 500 ms for the first 5 minutes (time slices, summary);
- `avg`: neither, an average of 600 ms until 120 s, then 100 ms (time slices on the average);
- `llm`: vLLM's TTFT histogram, 2 of 4 first tokens above 250 ms in 10 scrapes, and its time per
  output token always within 100 ms.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from backfilled_prometheus import Series, aligned_past, backfilled

from triton_sre import conventions as c
from triton_sre.report.figures import RangeData, model_table
from triton_sre.report.prom import PrometheusClient
from triton_sre.report.render import CostReport, slos_csv, to_markdown
from triton_sre.report.slo import (
    SLI_HISTOGRAM,
    SLI_SLICES,
    SLOSection,
    SLOTable,
    slices_tables,
    slo_section,
)
from triton_sre.slo import default_spec

SPEC = default_spec()
SCRAPE, SCRAPES = 15.0, 40  # ten minutes
T0 = aligned_past()
END = T0 + SCRAPE * SCRAPES
TTFT, TPOT = (c.LLM_SLO_HISTOGRAMS[kind][0] for kind in (c.SLO_TTFT, c.SLO_TPOT))
HIST = c.NV_FIRST_RESPONSE_HISTOGRAM_MS
SUMMARY = c.NV_REQUEST_SUMMARY_US


def _counter(per_scrape: Callable[[int], float]) -> list[tuple[float, float]]:
    """A counter from 0 at T0 rising by `per_scrape(i)` at scrape i (1..SCRAPES)."""
    total, samples = 0.0, [(T0, 0.0)]
    for i in range(1, SCRAPES + 1):
        total += per_scrape(i)
        samples.append((T0 + SCRAPE * i, total))
    return samples


def _gauge(value: Callable[[int], float]) -> list[tuple[float, float]]:
    return [(T0 + SCRAPE * i, value(i)) for i in range(SCRAPES + 1)]


def _labels(model: str, **more: str) -> dict[str, str]:
    return {c.LABEL_JOB: SPEC.triton_job, c.LABEL_MODEL: model, c.LABEL_VERSION: "1", **more}


def _summary(model: str, slow_until: float) -> list[Series]:
    p99 = _labels(model, quantile=SPEC.slos[1].quantile)
    return [
        (SUMMARY, p99, _gauge(lambda i: 800_000.0 if SCRAPE * i < slow_until else 100_000.0)),
        (f"{SUMMARY}_count", _labels(model), _counter(lambda i: 10.0)),
    ]


def _series() -> list[Series]:
    le500 = {c.LABEL_LE: "500"}
    slow_ms = lambda i: 600.0 if SCRAPE * i <= 120 else 100.0  # noqa: E731
    return [
        (f"{HIST}_count", _labels("hist"), _counter(lambda i: 10.0)),
        (f"{HIST}_bucket", _labels("hist", **le500), _counter(lambda i: 9.0 if i <= 19 else 10.0)),
        *_summary("hist", 600.0),
        *_summary("slow", 300.0),
        (c.NV_REQUEST_SUCCESS, _labels("avg"), _counter(lambda i: 10.0)),
        (c.NV_REQUEST_DURATION_US, _labels("avg"), _counter(lambda i: 10 * slow_ms(i) * 1000)),
        (f"{TTFT}_count", _labels("llm"), _counter(lambda i: 4.0)),
        (f"{TTFT}_bucket", _labels("llm", le="0.25"), _counter(lambda i: 2.0 if 21 <= i <= 30 else 4.0)),
        (f"{TPOT}_count", _labels("llm"), _counter(lambda i: 100.0)),
        (f"{TPOT}_bucket", _labels("llm", le="0.1"), _counter(lambda i: 100.0)),
    ]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrometheusClient]:
    with backfilled(tmp_path_factory.mktemp("prom"), _series()) as prom:
        yield PrometheusClient(prom.url)


@pytest.fixture(scope="module")
def section(client: PrometheusClient) -> SLOSection:
    return slo_section(client, SPEC, (T0, END, SCRAPE), "1m", {})


def _table(section: SLOSection, kind: str, sli: str) -> SLOTable:
    return next(t for t in section.tables if t.slo.type == kind and t.sli == sli)


def _budget(bad: float, events: float, objective: float) -> float:
    return bad / ((1 - objective / 100) * events * 30 * 86400 / (END - T0))


def test_a_model_with_the_histogram_is_judged_on_its_requests(section: SLOSection) -> None:
    rows = _table(section, c.SLO_LATENCY, SLI_HISTOGRAM).rows.set_index("model")
    assert list(rows.index) == ["hist"]
    hist = rows.loc["hist"]
    # each scrape's increase, no extrapolation: 400 requests, 19 above 500 ms
    assert (hist["requests"], hist["bad"]) == (400, 19)
    assert hist["budget_spent"] == pytest.approx(_budget(19, 400, 99))
    # the trailing minute holds a slow request from the first scrape to 45 s after the last slow one
    # (60 s on Prometheus 2, whose range selector includes the sample at its start)
    assert hist["first_above"] == T0 + SCRAPE
    assert hist["last_above"] in (T0 + SCRAPE * 21, T0 + SCRAPE * 22)


def test_the_others_are_judged_on_slices_by_their_latency_source(section: SLOSection) -> None:
    table = _table(section, c.SLO_LATENCY, SLI_SLICES)
    rows = table.rows.set_index("model")
    assert sorted(rows.index) == ["avg", "slow"]  # not hist: its histogram judges it
    # ten 1-minute slices each; slow's summary above 500 ms at the end of the first 4, avg's average
    # over the first 2
    assert (rows.loc["slow", "requests"], rows.loc["slow", "bad"]) == (10, 4)
    assert (rows.loc["avg", "requests"], rows.loc["avg", "bad"]) == (10, 2)
    assert rows.loc["slow", "budget_spent"] == pytest.approx(_budget(4, 10, 99))
    assert table.sources == (c.LATENCY_SOURCE_AVERAGE, c.LATENCY_SOURCE_SUMMARY)
    # from the first sample: the summary gate compares the quantile's timestamp with its _count's (fleet26),
    # where the 2m rate it replaced needed a second sample and read nothing at T0
    assert T0 <= rows.loc["slow", "first_above"] <= T0 + 240 < rows.loc["slow", "last_above"]


def test_the_sources_named_are_those_of_the_models_judged_on_slices(client: PrometheusClient) -> None:
    """A model judged on its histogram (or otherwise left out of the slices) lends its summary to no
    slice table: with hist and slow left out, avg's slices are judged on averages only."""
    latency = next(s for s in SPEC.slos if s.type == c.SLO_LATENCY)
    (table,) = slices_tables(client, SPEC, latency, (T0, END, SCRAPE), "1m", {("", "hist"), ("", "slow")})
    assert list(table.rows["model"]) == ["avg"] and table.sources == (c.LATENCY_SOURCE_AVERAGE,)


def test_llm_slos_count_the_vllm_histograms_events(section: SLOSection) -> None:
    ttft = _table(section, c.SLO_TTFT, SLI_HISTOGRAM).rows.set_index("model").loc["llm"]
    assert (ttft["requests"], ttft["bad"]) == (160, 20)
    assert ttft["error_ratio"] == pytest.approx(20 / 160)
    tpot = _table(section, c.SLO_TPOT, SLI_HISTOGRAM).rows.set_index("model").loc["llm"]
    assert (tpot["requests"], tpot["bad"], tpot["budget_spent"]) == (4000, 0, 0)


def test_every_table_says_what_its_events_are(section: SLOSection) -> None:
    table, summary = model_table(RangeData(T0, END, SCRAPE, {}, {}))
    report = CostReport(T0, END, SCRAPE, "http://prometheus", table, summary, [], slos=section)
    markdown = to_markdown(report).split("## SLOs", 1)[1]
    assert "Left out" not in markdown
    assert f"observations of {TTFT}; bad: those above 250 ms" in markdown
    assert "1m slices with traffic, per model; bad: a slice whose latency is above 500 ms" in markdown
    assert "not the slice's own quantile, nor a count of slow requests" in markdown  # the summary's caveat
    rows = slos_csv(report).splitlines()
    assert rows[0].startswith("slo,objective_percent,period,sli,model,version,requests,bad")
    assert any(row.startswith(f"{SPEC.slos[1].name},99,30d,{SLI_SLICES},slow,,10,4,") for row in rows), rows
