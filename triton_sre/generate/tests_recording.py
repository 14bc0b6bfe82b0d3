"""promtool tests of the recording rules (recording.py): known rates in, the exporter's formulas out."""

from __future__ import annotations

from typing import Any

from triton_sre import conventions as c
from triton_sre.generate.annotations import plain_labels
from triton_sre.generate.calc import (
    HISTOGRAM_BOUNDS_MS,
    TEST_ENSEMBLE,
    TEST_FAILING,
    TEST_INSTANCE,
    TEST_MODEL,
    TEST_VERSION,
    series_labels,
)
from triton_sre.generate.recording import RECORDING_FILE
from triton_sre.promql import selector
from triton_sre.slo import Spec


def recording_tests(spec: Spec) -> list[dict[str, Any]]:
    """Known rates in, the exporter's formulas out; GPU duplicates are not double counted."""
    job = spec.triton_job
    gpu = {c.LABEL_GPU_UUID: "GPU-0"}
    per_min = {  # increments per minute of each counter (model total series)
        c.NV_INFERENCE_COUNT: 240,
        c.NV_EXEC_COUNT: 60,
        c.NV_REQUEST_SUCCESS: 120,
        c.NV_QUEUE_DURATION_US: 120 * 20_000,  # 20 ms per request
        c.NV_COMPUTE_INPUT_DURATION_US: 120 * 1_000,
        c.NV_COMPUTE_INFER_DURATION_US: 120 * 50_000,
        c.NV_COMPUTE_OUTPUT_DURATION_US: 120 * 2_000,
        c.NV_REQUEST_DURATION_US: 120 * 80_000,  # 80 ms: other = 7 ms
    }
    series = []
    for family, inc in per_min.items():
        # as in Triton's core: the GPU instance counts the executions on its gpu_uuid series, the
        # model's own series (no gpu_uuid) stays 0 here; the rules add the two
        series.append({"series": f"{family}{series_labels({}, job)}", "values": "0+0x30"})
        series.append({"series": f"{family}{series_labels(gpu, job)}", "values": f"0+{inc}x30"})
    series.append(
        {
            "series": c.NV_REQUEST_FAILURE + series_labels({c.LABEL_REASON: c.FAILURE_REASON_BACKEND}, job),
            "values": "0+30x30",
        }
    )
    base = {c.LABEL_JOB: job, c.LABEL_MODEL: TEST_MODEL, c.LABEL_VERSION: TEST_VERSION}
    inst = {**base, c.LABEL_INSTANCE: TEST_INSTANCE}
    stage_seconds = {
        c.STAGE_QUEUE: 0.02,
        c.STAGE_COMPUTE_INPUT: 0.001,
        c.STAGE_COMPUTE_INFER: 0.05,
        c.STAGE_COMPUTE_OUTPUT: 0.002,
        c.STAGE_OTHER: 0.007,
    }
    tests = []
    for level, labels in ((c.REC_LEVEL_INSTANCE, inst), (c.REC_LEVEL_MODEL, base)):
        checks = [
            (c.rec_batching_ratio(level), {}, 4.0),
            (c.rec_requests(level), {}, 2.5),
            (c.rec_error_ratio(level), {}, 0.2),
            (c.rec_rate(level, c.NV_INFERENCE_COUNT), {}, 4.0),
        ]
        checks += [(c.rec_stage_seconds(level), {c.L_STAGE: s}, v) for s, v in stage_seconds.items()]
        if level == c.REC_LEVEL_MODEL:  # the share is recorded per model version only
            checks += [(c.rec_stage_fraction(level), {c.L_STAGE: c.STAGE_QUEUE}, 0.25)]
        for name, extra, value in checks:
            tests.append(
                {
                    # round(): compare the formula, not the last bit of float division
                    "expr": f"round({selector(name, [(k, '=', v) for k, v in extra.items()])}, 0.0001)",
                    "eval_time": "20m",
                    "exp_samples": [{"labels": plain_labels({**labels, **extra}), "value": value}],
                }
            )
    return [
        {
            "name": "recording rules mirror the exporter",
            "interval": "1m",
            "input_series": series,
            "promql_expr_test": tests,
        },
        latency_quantile_test(spec),
        stale_summary_test(spec),
        ensemble_batching_test(spec),
    ]


def latency_quantile_test(spec: Spec) -> dict[str, Any]:
    """Quantile rules: Triton's summary per instance, the worst instance per model; the histogram
    (26.01's family, merged across instances) wins over summaries; NaN summaries give nothing."""
    job = spec.triton_job
    a, b = TEST_INSTANCE, "triton-1:8002"
    summary_model, hist_model, idle_model = "summarized", "histogrammed", "idle"
    # (instance, request µs, queue µs) per quantile for the summary model: b is the worse one
    summaries = {a: (100_000, 10_000), b: (300_000, 40_000)}
    series = []
    for inst, (request_us, queue_us) in summaries.items():
        for i, quantile in enumerate(c.TRITON_SUMMARY_QUANTILES):
            for measure_us, family in (
                (request_us, c.NV_REQUEST_SUMMARY_US),
                (queue_us, c.NV_QUEUE_SUMMARY_US),
            ):
                labels = series_labels({c.LABEL_MODEL: summary_model, c.LABEL_QUANTILE: quantile}, job, inst)
                series.append({"series": family + labels, "values": f"{measure_us * (i + 1)}x30"})
                idle = series_labels({c.LABEL_MODEL: idle_model, c.LABEL_QUANTILE: quantile}, job, inst)
                series.append({"series": family + idle, "values": " ".join(["NaN"] * 31)})
        for family in (c.NV_REQUEST_SUMMARY_US, c.NV_QUEUE_SUMMARY_US):  # 60 requests a minute
            labels = series_labels({c.LABEL_MODEL: summary_model}, job, inst)
            series.append({"series": f"{family}_count{labels}", "values": "0+60x30"})
    # histogram model: 60 requests/min on each instance, all within 100 ms on a, within 100-500 ms on b
    hist = c.NV_FIRST_RESPONSE_HISTOGRAM_MS
    for inst, per_bound in ((a, (60, 60, 60, 60, 60)), (b, (0, 60, 60, 60, 60))):
        for bound, count in zip((*HISTOGRAM_BOUNDS_MS, "+Inf"), per_bound, strict=True):
            labels = series_labels({c.LABEL_MODEL: hist_model, c.LABEL_LE: str(bound)}, job, inst)
            series.append({"series": f"{hist}_bucket{labels}", "values": f"0+{count}x30"})
        # its summary (9 s) must lose to the histogram
        labels = series_labels({c.LABEL_MODEL: hist_model, c.LABEL_QUANTILE: "0.99"}, job, inst)
        series.append({"series": c.NV_REQUEST_SUMMARY_US + labels, "values": "9000000x30"})
        labels = series_labels({c.LABEL_MODEL: hist_model}, job, inst)
        series.append({"series": f"{c.NV_REQUEST_SUMMARY_US}_count{labels}", "values": "0+60x30"})
    tests = []

    def expect(name: str, quantile: str, model: str, inst: str | None, source: str, value: float) -> None:
        labels = {c.LABEL_JOB: job, c.LABEL_MODEL: model, c.LABEL_VERSION: TEST_VERSION}
        if inst:
            labels[c.LABEL_INSTANCE] = inst
        labels.update({c.LABEL_QUANTILE: quantile, c.L_LATENCY_SOURCE: source})
        sel = [(c.LABEL_MODEL, "=", model), (c.LABEL_QUANTILE, "=", quantile)]
        if inst:
            sel.append((c.LABEL_INSTANCE, "=", inst))
        tests.append(
            {
                "expr": f"round({selector(name, sel)}, 0.0001)",
                "eval_time": "20m",
                "exp_samples": [{"labels": plain_labels(labels), "value": value}],
            }
        )

    inst_level, model_level = c.REC_LEVEL_INSTANCE, c.REC_LEVEL_MODEL
    for measure, index in ((c.LATENCY_REQUEST, 0), (c.LATENCY_QUEUE, 1)):
        for quantile in c.LATENCY_QUANTILES:
            factor = c.TRITON_SUMMARY_QUANTILES.index(quantile) + 1
            for inst, values in summaries.items():
                seconds = values[index] * factor / 1e6
                expect(
                    c.rec_latency_quantile(inst_level, measure),
                    quantile,
                    summary_model,
                    inst,
                    "summary",
                    seconds,
                )
            worst = max(v[index] for v in summaries.values()) * factor / 1e6
            expect(
                c.rec_latency_quantile(model_level, measure), quantile, summary_model, None, "summary", worst
            )
        tests.append(
            {
                "expr": selector(
                    c.rec_latency_quantile(model_level, measure), [(c.LABEL_MODEL, "=", idle_model)]
                ),
                "eval_time": "20m",
                "exp_samples": [],
            }
        )
    # merged: 120 requests/min, 60 within 100 ms, 120 within 500 ms (linear inside a bucket)
    merged = {"0.5": 0.1, "0.95": 0.46, "0.99": 0.492}
    for quantile, seconds in merged.items():
        expect(
            c.rec_latency_quantile(model_level, c.LATENCY_REQUEST),
            quantile,
            hist_model,
            None,
            "histogram",
            seconds,
        )
    expect(c.rec_latency_quantile(inst_level, c.LATENCY_REQUEST), "0.99", hist_model, a, "histogram", 0.099)
    expect(c.rec_latency_quantile(inst_level, c.LATENCY_REQUEST), "0.99", hist_model, b, "histogram", 0.496)
    return {
        "name": "latency quantiles: summaries per instance, worst instance per model, histograms merged",
        "interval": "1m",
        "input_series": series,
        "promql_expr_test": tests,
    }


def stale_summary_test(spec: Spec) -> dict[str, Any]:
    """What VictoriaMetrics stores for a summary: it drops Triton's NaN, so an idle model's quantile
    samples stop while its `_count`'s go on, and the raw quantile answers its last value for minutes.
    A quantile counts only while its last sample is as recent as its `_count`'s: `stale` (quantile
    samples until 9m) records nothing at 12m, `sparse` (one request a minute) keeps its figure."""
    job, inst = spec.triton_job, TEST_INSTANCE
    counts = {"stale": "0+60x8 480x22", "sparse": "0+1x30"}
    quantiles = {"stale": "700000x9 _x21", "sparse": "700000x30"}
    series, tests = [], []
    for model, count in counts.items():
        for family in (c.NV_REQUEST_SUMMARY_US, c.NV_QUEUE_SUMMARY_US):
            for quantile in c.LATENCY_QUANTILES:
                labels = series_labels({c.LABEL_MODEL: model, c.LABEL_QUANTILE: quantile}, job, inst)
                series.append({"series": family + labels, "values": quantiles[model]})
            labels = series_labels({c.LABEL_MODEL: model}, job, inst)
            series.append({"series": f"{family}_count{labels}", "values": count})
    for measure in (c.LATENCY_REQUEST, c.LATENCY_QUEUE):
        for level in (c.REC_LEVEL_INSTANCE, c.REC_LEVEL_MODEL):
            for model in counts:
                name = c.rec_latency_quantile(level, measure)
                labels = {c.LABEL_JOB: job, c.LABEL_MODEL: model, c.LABEL_VERSION: TEST_VERSION}
                if level == c.REC_LEVEL_INSTANCE:
                    labels[c.LABEL_INSTANCE] = inst
                labels |= {c.LABEL_QUANTILE: "0.99", c.L_LATENCY_SOURCE: c.LATENCY_SOURCE_SUMMARY}
                seen = [{"labels": plain_labels(labels), "value": 0.7}] if model == "sparse" else []
                sel = [(c.LABEL_MODEL, "=", model), (c.LABEL_QUANTILE, "=", "0.99")]
                expr = f"round({selector(name, sel)}, 0.0001)"
                tests.append({"expr": expr, "eval_time": "12m", "exp_samples": seen})
    return {
        "name": "latency quantiles: a summary whose count stopped (VictoriaMetrics keeps the last quantile)",
        "interval": "1m",
        "input_series": series,
        "promql_expr_test": tests,
    }


def ensemble_batching_test(spec: Spec) -> dict[str, Any]:
    """No batching ratio for an ensemble: Triton counts each of its requests as one execution of the
    request's rows (2 here), the exporter marks it with triton_sre_model_ensemble; its step, sent the
    same rows, keeps its ratio (2). None either for a model that executes but whose every request fails
    (no inference counted: the exporter writes none, compat32), where it read 0."""
    job = spec.triton_job
    series = [
        {"series": f"{family}{series_labels({c.LABEL_MODEL: model}, job)}", "values": f"0+{per_min}x30"}
        for model in (TEST_ENSEMBLE, TEST_MODEL)
        for family, per_min in ((c.NV_INFERENCE_COUNT, 120), (c.NV_EXEC_COUNT, 60))
    ]
    series += [
        {"series": f"{family}{series_labels({c.LABEL_MODEL: TEST_FAILING}, job)}", "values": values}
        for family, values in ((c.NV_INFERENCE_COUNT, "0x30"), (c.NV_EXEC_COUNT, "0+60x30"))
    ]
    exporter = {c.LABEL_JOB: spec.exporter_job, c.LABEL_INSTANCE: TEST_INSTANCE, c.LABEL_MODEL: TEST_ENSEMBLE}
    series.append({"series": f"{c.M_MODEL_ENSEMBLE}{plain_labels(exporter)}", "values": "1x30"})
    tests = []
    for level in (c.REC_LEVEL_INSTANCE, c.REC_LEVEL_MODEL):
        labels = {c.LABEL_JOB: job, c.LABEL_MODEL: TEST_MODEL, c.LABEL_VERSION: TEST_VERSION}
        if level == c.REC_LEVEL_INSTANCE:
            labels[c.LABEL_INSTANCE] = TEST_INSTANCE
        tests.append(
            {
                "expr": f"round({c.rec_batching_ratio(level)}, 0.0001)",
                "eval_time": "20m",
                "exp_samples": [{"labels": plain_labels(labels), "value": 2.0}],
            }
        )
    return {
        "name": "batching ratio: none for an ensemble (rows per request) nor a model failing every request",
        "interval": "1m",
        "input_series": series,
        "promql_expr_test": tests,
    }


def test_files(spec: Spec, base_url: str) -> dict[str, dict[str, Any]]:
    """Test file name (under alerts/tests/) -> promtool document."""
    return {
        "triton-recording-rules.test.yaml": {
            "rule_files": [f"../{RECORDING_FILE}"],
            "evaluation_interval": "1m",
            "tests": recording_tests(spec),
        }
    }
