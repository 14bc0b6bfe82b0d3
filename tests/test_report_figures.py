"""`triton-sre report` pure parts: counters and gauges over a range -> per-model figures, and
recommendations both where they must and where they must not appear (no Prometheus needed)."""

from __future__ import annotations

import io
import math
import warnings
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from images import png_content

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.report import recommend as rec
from triton_sre.report.charts import CHARTS, draw_all
from triton_sre.report.command import parse_time
from triton_sre.report.figures import HISTOGRAM_BUCKETS, RangeData, model_table, pivot_rates
from triton_sre.report.increases import bucket_quantile, bucket_quantiles, counter_increase, series_increases
from triton_sre.report.prom import frame_of, rate_window
from triton_sre.report.render import CostReport, to_csv, to_html, to_markdown
from triton_sre.stack.processes import free_port

STEP = 10.0
TIMES = [1000.0 + STEP * i for i in range(7)]  # one minute


def counter(model: str, values: list[float], **labels: str) -> pd.DataFrame:
    return pd.DataFrame({"model": model, "version": "1", **labels, "timestamp": TIMES, "value": values})


def gauge(value: float, **labels: str) -> pd.DataFrame:
    return pd.DataFrame({**labels, "timestamp": TIMES, "value": value})


def test_counter_increase_handles_resets_and_gpu_totals() -> None:
    frame = pd.concat(
        [
            counter("a", [10, 20, 30, 5, 15, 25, 35]),  # reset after 30: 20 + 5 + 30 = 55
            counter("b", [0, 10, 20, 30, 40, 50, 60], gpu_uuid="GPU-0"),  # per-GPU only: summed
            counter("b", [0, 5, 10, 15, 20, 25, 30], gpu_uuid="GPU-1"),
            counter("c", [0, 0, 0, 0, 1, 1, 1]),  # the model's own series (a rejection) ...
            counter("c", [0, 6, 12, 18, 24, 30, 35], gpu_uuid="GPU-0"),  # ... plus its GPU instance's
        ]
    )
    inc = counter_increase(frame)
    assert inc.to_dict() == {"a": 55.0, "b": 90.0, "c": 36.0}


def _data(**extra: pd.DataFrame) -> RangeData:
    """Two models over 60 s on a 0.36 USD/h node: a batches 4x, b queues half its time."""
    frames: dict[str, pd.DataFrame] = {
        c.NV_INFERENCE_COUNT: pd.concat(
            [
                counter("a", [0, 200, 400, 600, 800, 1000, 1200]),
                counter("b", [0, 50, 100, 150, 200, 250, 300]),
            ]
        ),
        c.NV_EXEC_COUNT: pd.concat(
            [counter("a", [0, 50, 100, 150, 200, 250, 300]), counter("b", [0, 50, 100, 150, 200, 250, 300])]
        ),
        c.NV_REQUEST_SUCCESS: pd.concat(
            [
                counter("a", [0, 200, 400, 600, 800, 1000, 1200]),
                counter("b", [0, 50, 100, 150, 200, 250, 300]),
            ]
        ),
        c.NV_REQUEST_FAILURE: pd.concat([counter("a", [0] * 7), counter("b", [0] * 7)]),
        c.NV_REQUEST_DURATION_US: pd.concat(
            [counter("a", [i * 1e6 for i in range(7)]), counter("b", [i * 2e6 for i in range(7)])]
        ),
        c.NV_QUEUE_DURATION_US: pd.concat(
            [counter("a", [i * 1e5 for i in range(7)]), counter("b", [i * 1e6 for i in range(7)])]
        ),
        c.NV_COMPUTE_INFER_DURATION_US: pd.concat(
            [counter("a", [i * 8e5 for i in range(7)]), counter("b", [i * 1e6 for i in range(7)])]
        ),
        c.M_COST_PER_HOUR: pd.concat(
            [gauge(0.24, model="a", currency="USD"), gauge(0.12, model="b", currency="USD")]
        ),
        c.M_SERVER_COST_PER_HOUR: gauge(0.36, currency="USD"),
        c.M_IDLE_COST_FRACTION: gauge(0.7),
        c.M_BATCHING_RATIO: gauge(4.0, model="a"),
        c.M_BATCH_FILL_RATIO: gauge(0.25, model="a"),
        c.NV_REQUEST_SUMMARY_US: pd.concat(
            [gauge(900.0, model="a", quantile="0.5"), gauge(4000.0, model="a", quantile="0.99")]
        ),
    }
    frames.update(extra)
    return RangeData(TIMES[0], TIMES[-1], STEP, frames)


def test_model_table_matches_the_readme_worked_example() -> None:
    table, summary = model_table(_data())
    rows = table.set_index("model")
    # 7 samples × 10 s of 0.36 USD/h: 0.36 × 70 / 3600 (each sample stands for one step)
    assert summary.server_cost == pytest.approx(0.36 * 70 / 3600)
    assert summary.idle_fraction == pytest.approx(0.7)
    assert summary.idle_cost == pytest.approx(0.7 * 0.36 * 70 / 3600)
    assert rows.loc["a", "cost_share"] == pytest.approx(2 / 3)
    assert rows.loc["a", "cost_per_1k"] == pytest.approx(0.24 * 70 / 3600 / 1200 * 1000)
    assert rows.loc["b", "cost_per_1k"] == pytest.approx(0.12 * 70 / 3600 / 300 * 1000)
    assert rows.loc["a", "idle_cost"] == pytest.approx(rows.loc["a", "cost"] * 0.7)
    assert rows.loc["a", "batching_ratio"] == 4.0 and rows.loc["a", "max_batch_size"] == 16
    assert rows.loc["a", "batch_fill"] == 0.25 and math.isnan(rows.loc["b", "batch_fill"])
    assert rows.loc["a", "queue_share"] == pytest.approx(0.1) and rows.loc["b", "queue_share"] == 0.5
    assert rows.loc["a", "compute_share"] == pytest.approx(0.8)
    assert rows.loc["a", "p50_ms"] == 0.9 and rows.loc["a", "p99_ms"] == 4.0
    assert rows.loc["a", "latency_source"] == c.LATENCY_SOURCE_SUMMARY
    assert math.isnan(rows.loc["b", "p99_ms"]) and rows.loc["b", "latency_source"] == ""
    assert rows.loc["a", "requests_per_s"] == pytest.approx(20.0)
    assert list(table["model"]) == ["a", "b"]  # most expensive first


def row(**values: float) -> dict[str, float | str]:
    base: dict[str, float | str] = {
        "model": "m",
        "requests_per_s": 10.0,
        "batching_ratio": 4.0,
        "max_batch_size": 8.0,
        "batch_fill": 0.5,
        "queue_share": 0.1,
    }
    base.update(values)
    return base


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        # healthy batching model: nothing
        ({}, set()),
        # unbatched, requests wait a little: batching would help
        ({"batching_ratio": 1.0, "batch_fill": 0.125, "queue_share": 0.3}, {rec.REC_ENABLE_BATCHING}),
        # ... but not when it barely queues (nothing to combine), nor when it cannot batch
        ({"batching_ratio": 1.0, "batch_fill": 0.125, "queue_share": 0.1}, set()),
        (
            {"batching_ratio": 1.0, "max_batch_size": math.nan, "batch_fill": math.nan, "queue_share": 0.3},
            set(),
        ),
        # ... nor when the model is too quiet to judge
        ({"batching_ratio": 1.0, "batch_fill": 0.125, "queue_share": 0.3, "requests_per_s": 0.05}, set()),
        # batches mostly empty and no queueing: wait a little longer
        ({"batching_ratio": 1.5, "batch_fill": 0.1875, "queue_share": 0.01}, {rec.REC_RAISE_QUEUE_DELAY}),
        ({"batching_ratio": 1.5, "batch_fill": 0.1875, "queue_share": 0.1}, set()),
        # waiting in the batcher for batches that do not fill: lower the delay
        ({"batching_ratio": 1.0, "batch_fill": 0.125, "queue_share": 0.9}, {rec.REC_LOWER_QUEUE_DELAY}),
        # full batches and a queue: more instances
        ({"batching_ratio": 7.0, "batch_fill": 0.875, "queue_share": 0.6}, {rec.REC_ADD_INSTANCES}),
        # a model that cannot batch and queues: more instances
        (
            {"batching_ratio": 1.0, "max_batch_size": math.nan, "batch_fill": math.nan, "queue_share": 0.5},
            {rec.REC_ADD_INSTANCES},
        ),
        (
            {"batching_ratio": 1.0, "max_batch_size": math.nan, "batch_fill": math.nan, "queue_share": 0.49},
            set(),
        ),
    ],
)
def test_recommendations_appear_exactly_where_their_thresholds_are_crossed(
    values: dict[str, float], expected: set[str]
) -> None:
    recs = rec.recommend(pd.DataFrame([row(**values)]), idle_fraction=0.1)
    assert {r.id for r in recs} == expected
    for r in recs:
        assert r.model == "m" and (r.value < r.threshold if r.comparison == "<" else r.value >= r.threshold)
        assert f"{r.value * 100:.0f}%" in r.why or f"{r.value:.2f}" in r.why


def test_idle_recommendation_and_thresholds_from_slos() -> None:
    assert [r.id for r in rec.recommend(pd.DataFrame([row()]), 0.5)] == [rec.REC_REDUCE_IDLE]
    assert rec.recommend(pd.DataFrame([row()]), 0.49) == []
    assert rec.recommend(pd.DataFrame([row()]), None) == []
    strict = rec.Thresholds(queue_share_high=0.05)
    assert [r.id for r in rec.recommend(pd.DataFrame([row(batch_fill=0.9)]), None, strict)] == [
        rec.REC_ADD_INSTANCES
    ]


def test_render_is_escaped_and_self_contained() -> None:
    hostile = "<script>alert(1)</script>"
    frames = dict(_data().frames)
    frames[c.NV_INFERENCE_COUNT] = pd.concat(
        [frames[c.NV_INFERENCE_COUNT], counter(hostile, [0, 1, 2, 3, 4, 5, 6])]
    )
    data = RangeData(TIMES[0], TIMES[-1], STEP, frames)
    table, summary = model_table(data)
    recs = rec.recommend(table, summary.idle_fraction)
    throughput = pd.concat([gauge(rate, model=m) for m, rate in (("a", 20.0), ("b", 5.0), (hostile, 0.1))])
    charts = draw_all(table, pivot_rates(throughput), summary.currency)
    assert set(charts) == set(CHARTS)
    for png in charts.values():
        png_content(png)
    report = CostReport(data.start, data.end, STEP, "http://prom", table, summary, recs, charts)
    html = to_html(report)
    assert hostile not in html and "&lt;script&gt;" in html
    assert html.count("data:image/png;base64,") == len(CHARTS) and "http://prom" in html
    md = to_markdown(report, {"throughput": "charts/throughput.png"})
    assert "| a |" in md and "reduce-idle-capacity" in md and "charts/throughput.png" in md
    csv = to_csv(report)
    assert csv.splitlines()[0].startswith("model,version,inferences,executions")


def test_empty_range_renders() -> None:
    data = RangeData(TIMES[0], TIMES[-1], STEP, {})
    table, summary = model_table(data)
    assert table.empty and summary.models == 0
    report = CostReport(
        data.start, data.end, STEP, "p", table, summary, [], draw_all(table, pd.DataFrame(), None)
    )
    assert "No model served" in to_html(report) and "No model served" in to_markdown(report)


def test_parse_time() -> None:
    assert parse_time("1700000000") == 1700000000.0
    assert parse_time("2023-11-14T22:13:20Z") == 1700000000.0
    assert parse_time("2023-11-14T22:13:20") == 1700000000.0
    with pytest.raises(ValueError):
        parse_time("yesterday")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # each ended in `internal error: ValueError: year ... is out of range` (datetime)
        (["--start", "-99999999999"], "'-99999999999' is not a time between 1970-01-01 and 9999-12-31 UTC"),
        (["--end", "99999999999999"], "is not a time between 1970-01-01 and 9999-12-31 UTC"),
        (["--start", "0001-01-01T00:00:00Z"], "is not a time between 1970-01-01 and 9999-12-31 UTC"),
        (["--end", "1970-01-10T00:00:00Z", "--last", "30d"], "--last '30d' reaches before 1970-01-01"),
        (["--last", "99999999d"], "--last: must be at most 365d"),
        # hung for minutes (millions of range queries); a range longer than Prometheus' 11,000 points
        # per series is read in slices, up to the report's budget of samples per query (one series)
        (["--last", "1h", "--step", "1e-9"], "the smallest step for this range is 0.001s"),
        (["--start", "0", "--end", "5000000", "--step", "1"], "the smallest step for this range is 1.001s"),
    ],
)
def test_a_range_or_step_out_of_bounds_is_one_line_and_exit_2(
    tmp_path: Path, args: list[str], message: str
) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # never asked: refused before any query
    err = io.StringIO()
    with redirect_stderr(err), redirect_stdout(io.StringIO()):
        assert main(["report", "--prometheus-url", url, "--out", str(tmp_path / "out"), *args]) == 2
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and message in lines[0] and "internal error" not in lines[0], lines
    assert not (tmp_path / "out").exists()


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    err = io.StringIO()
    with redirect_stderr(err), redirect_stdout(io.StringIO()):
        assert main(["report", "--prometheus-url", url, "--out", str(tmp_path)]) == 2
        assert main(["report", "--prometheus-url", url, "--format", "pdf"]) == 2
        assert main(["report", "--prometheus-url", url, "--start", "200", "--end", "100"]) == 2
        assert main(["report", "--prometheus-url", url, "--last", "soon"]) == 2
        with pytest.raises(SystemExit) as exc:
            main(["report"])
        assert exc.value.code == 2
    assert "cannot reach Prometheus" in err.getvalue() and not list(tmp_path.iterdir())


def test_quantiles_come_from_the_histogram_when_there_is_one_else_the_worst_summary() -> None:
    """b: 26.01's histogram on two servers (60 requests/min each, all within 100 ms on one, within
    100-500 ms on the other) and a summary that must lose; a: summaries on two servers, p95 too."""
    buckets = []
    for instance, per_bound in (("s1", (60, 60, 60, 60, 60)), ("s2", (0, 60, 60, 60, 60))):
        for le, n in zip(("100", "500", "2000", "5000", "+Inf"), per_bound, strict=True):
            buckets.append(counter("b", [n * i / 6 for i in range(7)], le=le, instance=instance))
    summary = pd.concat(
        [
            gauge(900.0, model="a", quantile="0.5", instance="s1"),
            gauge(1800.0, model="a", quantile="0.5", instance="s2"),  # the worse server wins
            gauge(3000.0, model="a", quantile="0.95", instance="s1"),
            gauge(4000.0, model="a", quantile="0.99", instance="s1"),
            gauge(9e6, model="b", quantile="0.99", instance="s1"),
        ]
    )
    rows = model_table(_data(**{HISTOGRAM_BUCKETS: pd.concat(buckets), c.NV_REQUEST_SUMMARY_US: summary}))[0]
    rows = rows.set_index("model")
    assert rows.loc["a", ["p50_ms", "p95_ms", "p99_ms"]].tolist() == [1.8, 3.0, 4.0]
    assert rows.loc["a", "latency_source"] == c.LATENCY_SOURCE_SUMMARY
    # the same numbers promtool's histogram_quantile gives in alerts/tests (merged: 0.1/0.46/0.492 s)
    assert rows.loc["b", ["p50_ms", "p95_ms", "p99_ms"]].tolist() == pytest.approx([100.0, 460.0, 492.0])
    assert rows.loc["b", "latency_source"] == c.LATENCY_SOURCE_HISTOGRAM
    assert bucket_quantile(0.99, [100.0, math.inf], [0.0, 10.0]) == 100.0  # +Inf bucket: highest bound
    assert math.isnan(bucket_quantile(0.5, [100.0, math.inf], [0.0, 0.0]))


def test_histogram_quantiles_of_a_frame_as_the_report_reads_it() -> None:
    """The report's frames (`frame_of`) hold labels as categoricals: the histogram's quantiles are the
    same as from plain columns (a categorical model + le raised TypeError: every report of a
    Prometheus with the first-response histogram exited 2)."""
    series = []
    for instance, per_bound in (("s1", (60, 60, 60, 60, 60)), ("s2", (0, 60, 60, 60, 60))):
        for le, n in zip(("100", "500", "2000", "5000", "+Inf"), per_bound, strict=True):
            labels = {"model": "b", "version": "1", "le": le, "instance": instance}
            series.append((labels, np.array(TIMES), np.array([n * i / 6 for i in range(7)])))
    frame = frame_of(series)
    assert isinstance(frame["model"].dtype, pd.CategoricalDtype)
    plain = pd.concat([pd.DataFrame({**labels, "timestamp": ts, "value": vs}) for labels, ts, vs in series])
    quantiles = bucket_quantiles(series_increases(frame), c.LATENCY_QUANTILES)
    pd.testing.assert_frame_equal(quantiles, bucket_quantiles(series_increases(plain), c.LATENCY_QUANTILES))
    assert quantiles.loc["b"].tolist() == pytest.approx([100.0, 460.0, 492.0])


def test_rate_windows_span_four_scrape_intervals() -> None:
    assert rate_window(1.0, 2.0) == 8.0  # the demo: 1 s steps over 2 s scrapes
    assert rate_window(60.0, 15.0) == 75.0  # step + one scrape, as Grafana's $__rate_interval
    frame = pd.DataFrame({"model": ["a", "a", "b"], "timestamp": [1.0, 2.0, 1.0], "value": [3.0, 4.0, 5.0]})
    assert pivot_rates(frame).to_dict() == {"a": {1.0: 3.0, 2.0: 4.0}, "b": {1.0: 5.0, 2.0: 0.0}}


def _drawn_labels(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tick and legend texts of every chart draw_all makes, as matplotlib holds them."""
    import triton_sre.report.charts as charts

    texts: list[str] = []
    png = charts._png

    def recorded(fig: Any) -> bytes:
        for ax in fig.axes:
            texts.extend(t.get_text() for t in ax.get_yticklabels())
            legend = ax.get_legend()
            if legend is not None:
                texts.extend(t.get_text() for t in legend.get_texts())
        return png(fig)

    monkeypatch.setattr(charts, "_png", recorded)
    return texts


def _chart_inputs(models: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    table = pd.DataFrame(
        {
            "model": models,
            "cost": [3.0, 2.0, 1.0][: len(models)],
            "idle_cost": 0.5,
            "cost_per_1k": 0.01,
            "queue_share": 0.2,
            "compute_share": 0.5,
        }
    )
    throughput = pd.DataFrame(
        np.ones((3, len(models))), index=[0.0, 60.0, 120.0], columns=pd.Index(models, name="model")
    )
    return table, throughput


def test_chart_labels_show_control_characters_as_escapes(monkeypatch: pytest.MonkeyPatch) -> None:
    # a tab or CR in a model name was drawn as a glyph the font lacks ("Glyph 9 missing from font")
    texts = _drawn_labels(monkeypatch)
    table, throughput = _chart_inputs(["\tx", "a\rb", "plain"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        charts = draw_all(table, throughput, "USD")
    assert set(charts) == set(CHARTS)
    assert {"\\tx", "a\\rb", "plain"} <= set(texts)
    assert not any(ch in text for text in texts for ch in "\t\r")


def test_chart_labels_with_dollars_are_drawn_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    # two `$` made matplotlib read a model name as mathtext: `$\foo$` raised ValueError (exit 2,
    # internal error) and `$x^2$` was drawn as a formula
    texts = _drawn_labels(monkeypatch)
    table, throughput = _chart_inputs(["$\\foo$", "$x^2$", "a$b"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        draw_all(table, throughput, "USD")
    assert {"\\$\\foo\\$", "\\$x^2\\$", "a\\$b"} <= set(texts)  # matplotlib draws \$ as a dollar


def test_markdown_keeps_a_hostile_model_name_inert() -> None:
    """report.md is read in viewers that pass inline HTML through: a model name (a Prometheus label
    anyone who names a model controls) must not become a tag, a new table row or a heading."""
    tag, split = "<img src=x onerror=alert(1)>", "m\n# injected | 1"
    frames = dict(_data().frames)
    frames[c.NV_INFERENCE_COUNT] = pd.concat(
        [
            frames[c.NV_INFERENCE_COUNT],
            counter(tag, [0, 1, 2, 3, 4, 5, 6]),
            counter(split, [0, 2, 4, 6, 8, 10, 12]),
        ]
    )
    data = RangeData(TIMES[0], TIMES[-1], STEP, frames)
    table, summary = model_table(data)
    report = CostReport(data.start, data.end, STEP, "http://prom", table, summary, [], {})
    md = to_markdown(report)
    assert "<img" not in md and "&lt;img src=x onerror=alert(1)>" in md
    assert not any(line.startswith("# injected") for line in md.splitlines())
    assert "m\\n# injected \\| 1" in md


def test_times_are_read_with_any_number_of_second_digits_as_python_3_10_would() -> None:
    """Python 3.10's fromisoformat reads 3 or 6 digits of a second only; Prometheus writes up to 9: the text
    handed to it has exactly 6."""
    from triton_sre.rfc3339 import _FRACTION, _six_digits

    shown = {v: _FRACTION.sub(_six_digits, v) for v in ("10:00:00.123456789Z", "10:00:00.1", "10:00:00")}
    assert shown == {
        "10:00:00.123456789Z": "10:00:00.123456Z",
        "10:00:00.1": "10:00:00.100000",
        "10:00:00": "10:00:00",
    }
    assert parse_time("2026-12-01T10:00:00.123456789Z") == parse_time("2026-12-01T10:00:00.123456Z")
