"""Real users' scrapes (tests/data/scrapes/, one public source each) through the real exporter.

Each body is served by a loopback Triton stand-in (tests/scrape_triton.py) with the HTTP API
derived from it or answering 404, and polled twice over HTTP with every counter doubled in
between, so every rate exists. Expectations come from the body itself, read by the test's own
line regex (not the exporter's parser): a figure is exported exactly when the families it needs
are in the body, equals what they give, and nothing the exporter writes is NaN, infinite or
negative. A body that does not parse is a `parse` fault of the `metrics` target, not a crash.
"""

from __future__ import annotations

import itertools
import math
import time
from pathlib import Path

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families
from scrape_triton import SCRAPES as SCRAPE_DIR
from scrape_triton import ScrapeTriton, scaled, scrape_files, series, split_scrape

from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.exporter.service import Exporter, ExporterServer
from triton_sre.pricing import Pricing

SCRAPES = scrape_files()
DATA = Path(__file__).parent / "data"
# The earlier real bodies (each file's leading comments name its source; served whole): the only
# ones with every stage family, so the stage split's "exported" branch is checked on real text.
EARLIER = [
    DATA / name
    for name in (
        "triton_2.51_metrics_cpu.txt",
        "vllm_backend_readme_metrics.txt",
        "tensorrtllm_backend_readme_metrics.txt",
    )
]
# Posted cut in the middle of a sample line, with "..." lines where buckets were left out, or ending at a
# comment line with no final newline (Prometheus wants a line break after it): not Prometheus text, so
# the whole body is a parse fault.
CUT_MID_LINE = {
    "server_issue8561_recent_cut_mid_line.txt",
    "vllm_backend_readme_98947a7_histograms_elided_24.09.txt",
    "backend_recommended_tutorial_batching_elided_21.12.txt",
    "vllm_backend_pr92_1a1b66e_gauges_elided_25.x.txt",
    "kura_metrics_parser_test_gpu_ends_at_type_24.x.txt",
}
# Posted with one series twice (same name and labels): the exporter keeps the first sample, as Prometheus
# does, and counts a `parse` fault per poll; the scrape is still up and every figure still exported.
REPEATED_SERIES = {"sonic_tutorial_repeated_series_21.x.txt"}
PRICING = Pricing(gpu_hour=2.5, node_hour=0.5)
_STAGE_INPUTS = (*c.STAGE_COUNTERS.values(), c.NV_REQUEST_DURATION_US, c.NV_REQUEST_SUCCESS)


def body_of(path: Path) -> bytes:
    return split_scrape(path)[1] if path.parent.name == "scrapes" else path.read_bytes()


def exporter_for(triton: ScrapeTriton, pricing: Pricing = PRICING) -> Exporter:
    settings = ExporterSettings(
        triton_url=triton.url,
        metrics_url=triton.url + c.PATH_METRICS,
        interval=15,
        window=600,
        pricing=pricing,
    )
    return Exporter(settings, clock=itertools.count(1_700_000_000, 15).__next__)


def polled_twice(
    body: bytes, api: str, configs: dict[str, dict] | None = None, pricing: Pricing = PRICING
) -> Exporter:
    with ScrapeTriton(body, api, configs) as triton:
        exporter = exporter_for(triton, pricing)
        assert exporter.poll_once() is not None
        triton.advance(2.0)
        assert exporter.poll_once() is not None
    return exporter


def exposed(exporter: Exporter) -> dict[str, list]:
    """The exporter's /metrics, parsed by prometheus_client: family name -> samples."""
    return samples_of(exporter.metrics_text().decode())


def samples_of(text: str) -> dict[str, list]:
    """An exporter's /metrics text parsed by prometheus_client: family name -> samples."""
    out: dict[str, list] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, []).append(sample)
    return out


def value(samples: dict[str, list], name: str, **labels: str) -> float | None:
    found = [s.value for s in samples.get(name, []) if all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(found) <= 1, (name, labels)
    return found[0] if found else None


def errors(samples: dict[str, list], target: str, kind: str) -> float:
    return value(samples, c.M_POLL_ERRORS, target=target, kind=kind) or 0.0


def assert_sound(samples: dict[str, list]) -> None:
    assert value(samples, c.M_POLL_ERRORS, target=c.TARGET_EXPORTER, kind=c.FAULT_INTERNAL) == 0
    for name, found in samples.items():
        for sample in found:
            if name.startswith("triton_sre_"):
                assert math.isfinite(sample.value) and sample.value >= 0, (name, sample.labels, sample.value)


def test_every_scrape_names_its_source_and_release():
    assert len(SCRAPES) >= 12
    for path in SCRAPES:
        header, body = split_scrape(path)
        assert "# release: " in header, path.name
        assert body.strip(), path.name


@pytest.mark.parametrize("api", ["derived", "404"])
@pytest.mark.parametrize("path", [*SCRAPES, *EARLIER], ids=lambda p: p.stem)
def test_scrape_through_the_exporter(path: Path, api: str) -> None:
    body = body_of(path)
    exporter = polled_twice(body, api)
    samples = exposed(exporter)
    assert_sound(samples)
    if api == "404":
        assert errors(samples, c.TARGET_INDEX, c.FAULT_HTTP_STATUS) == 2
        assert errors(samples, c.TARGET_STATS, c.FAULT_HTTP_STATUS) == 2
        assert c.M_MODEL_STATE not in samples and c.M_IDLE_COST_FRACTION not in samples
    else:
        assert errors(samples, c.TARGET_INDEX, c.FAULT_HTTP_STATUS) == 0
    if path.name in CUT_MID_LINE:
        assert value(samples, c.M_UP) == 0
        assert errors(samples, c.TARGET_METRICS, c.FAULT_PARSE) == 2
        assert c.M_REQUEST_STAGE_FRACTION not in samples
        # no figure from the unreadable metrics; the statistics (the stand-in derives them from the
        # same body, counts only) give the batching ratio, marked as theirs
        doubled = series(scaled(body, 2.0))
        for key, row in series(body).items():
            where = {"model": key[0], "version": key[1]}
            grown = {
                f: int(doubled[key].get(f, 0)) - int(row.get(f, 0))
                for f in (c.NV_INFERENCE_COUNT, c.NV_EXEC_COUNT)
            }
            ratio = value(samples, c.M_BATCHING_RATIO, **where)
            if api == "404" or not grown[c.NV_EXEC_COUNT] > 0 or not grown[c.NV_INFERENCE_COUNT] > 0:
                assert ratio is None, where
            else:
                assert ratio == pytest.approx(grown[c.NV_INFERENCE_COUNT] / grown[c.NV_EXEC_COUNT]), where
                assert value(samples, c.M_DERIVATION_SOURCE, **where, source=c.SOURCE_STATS) == 1
        assert {s.labels[c.L_SOURCE] for s in samples.get(c.M_DERIVATION_SOURCE, [])} <= {c.SOURCE_STATS}
        return
    assert value(samples, c.M_UP) == 1
    assert errors(samples, c.TARGET_METRICS, c.FAULT_PARSE) == (2 if path.name in REPEATED_SERIES else 0)
    rows = series(body)
    for (model, version), row in rows.items():
        where = {"model": model, "version": version}
        ratio = value(samples, c.M_BATCHING_RATIO, **where)
        if row.get(c.NV_EXEC_COUNT, 0) > 0 and row.get(c.NV_INFERENCE_COUNT, 0) > 0:
            # both doubled: the increase over the window is the body's value itself
            assert ratio == pytest.approx(row[c.NV_INFERENCE_COUNT] / row[c.NV_EXEC_COUNT]), where
        else:
            assert ratio is None, (where, "batching ratio without both counts, or of no inference")
        shares = {
            s.labels[c.L_STAGE]: s.value
            for s in samples.get(c.M_REQUEST_STAGE_FRACTION, [])
            if s.labels["model"] == model and s.labels["version"] == version
        }
        if all(family in row for family in _STAGE_INPUTS) and row[c.NV_REQUEST_SUCCESS] > 0:
            assert set(shares) == set(c.STAGES), where
            assert sum(shares.values()) == pytest.approx(1.0), where
        else:
            assert shares == {}, (where, "stage split without every stage family")
        cost = value(samples, c.M_COST_PER_HOUR, **where)
        compute = sum(row.get(f, 0.0) for f in list(c.STAGE_COUNTERS.values())[1:])
        if api == "derived" and compute > 0:
            assert cost is not None and cost > 0, where
        elif api == "404":
            assert cost is None, where
    exported_models = {s.labels["model"] for s in samples.get(c.M_BATCHING_RATIO, [])}
    assert exported_models <= {model for model, _ in rows}


def test_ensemble_and_its_steps_keep_their_own_figures():
    """TensorRT-LLM's ensemble (tensorrtllm_backend#667): the ensemble executes once per request
    while postprocessing runs per streamed response; the unused BLS model (all zeros) gets none."""
    exporter = polled_twice(body_of(SCRAPE_DIR / "tensorrtllm_issue667_inflight_bls.txt"), "derived")
    by_model = {m.model: m for m in exporter.derivation.models}
    assert by_model["tensorrt_llm_bls"].batching_ratio is None
    assert by_model["tensorrt_llm_bls"].stage_fraction is None
    # The excerpt has no nv_inference_count: no ratio is made up from the execution counts alone.
    assert all(m.batching_ratio is None for m in by_model.values())


def test_gpu_uuid_only_series_are_summed_per_version():
    """A 2021 scrape (prometheus/docs#1953) with per-GPU series only and versions 42 and 43."""
    exporter = polled_twice(body_of(SCRAPE_DIR / "prometheus_docs_pr1953_gpu_uuid_per_model.txt"), "404")
    versions = sorted(m.version for m in exporter.derivation.models)
    assert versions == ["42", "43"]


def test_histogram_without_inf_bucket_is_counted_not_derived():
    """The vLLM backend's sample histogram (vllm_backend#58) as excerpted lacks its +Inf bucket."""
    exporter = polled_twice(body_of(SCRAPE_DIR / "vllm_backend_pr58_histogram_24.08.txt"), "derived")
    assert not exporter.derivation.llm
    samples = exposed(exporter)
    assert sum(s.value for s in samples[c.M_LLM_PARSE_PROBLEMS]) >= 1


@pytest.mark.parametrize("path", [p for p in SCRAPES if p.name not in CUT_MID_LINE], ids=lambda p: p.stem)
@pytest.mark.parametrize("variant", ["crlf", "no_final_newline"])
def test_crlf_or_unterminated_body_is_a_parse_fault_and_the_next_good_body_recovers(
    path: Path, variant: str
) -> None:
    """CRLF line endings (a body saved on Windows or rewritten by a proxy) are not the text format
    Prometheus reads either, and a body without its final newline may have been cut at a digit:
    reported as a parse fault, the exporter keeps serving and recovers on the next good body."""
    body = body_of(path)
    bad = body.replace(b"\n", b"\r\n") if variant == "crlf" else body.rstrip(b"\n")
    with ScrapeTriton(bad) as triton:
        exporter = exporter_for(triton)
        assert exporter.poll_once() is not None
        samples = exposed(exporter)
        assert_sound(samples)
        assert value(samples, c.M_UP) == 0
        assert errors(samples, c.TARGET_METRICS, c.FAULT_PARSE) == 1
        triton.body = body
        assert exporter.poll_once() is not None
        assert value(exposed(exporter), c.M_UP) == 1


ODD_NAMES = ['org/llama-3.1 "8b"', "modèle_ü", "a\\b", "ensemble.v2 (beta)"]


@pytest.mark.parametrize("version", ["", "-1", "007"])
def test_odd_model_names_and_versions_round_trip(version: str) -> None:
    """Versions "" and "-1" (as some users' scrapes show) and names with quotes, slashes and
    non-ASCII text come out of the exporter's /metrics as they went in."""
    body = body_of(SCRAPE_DIR / "server_issue7583_vllm_reasons_24.08.txt")
    odd = ODD_NAMES[len(version) % len(ODD_NAMES)]
    escaped = odd.replace("\\", "\\\\").replace('"', '\\"').encode()
    body = body.replace(b'model="llama2"', b'model="' + escaped + b'"').replace(
        b'version="1"', b'version="' + version.encode() + b'"'
    )
    exporter = polled_twice(body, "derived")
    samples = exposed(exporter)
    assert_sound(samples)
    assert value(samples, c.M_UP) == 1
    states = {(s.labels["model"], s.labels["version"]) for s in samples[c.M_MODEL_STATE] if s.value == 1}
    assert states == {(odd, version), ("mistral7b", version)}


def test_exporter_serves_over_http_while_triton_answers_every_scrape_in_turn():
    """The exporter as deployed (poll thread + HTTP server) against a Triton whose body changes
    to each scrape in turn, CRLF and cut ones included: /metrics answers 200 and parses each time."""
    first = body_of(SCRAPES[0])
    with ScrapeTriton(first) as triton:
        settings = ExporterSettings(
            triton_url=triton.url, metrics_url=triton.url + c.PATH_METRICS, interval=0.2, timeout=2.0
        )
        with ExporterServer(Exporter(settings), "127.0.0.1", 0) as server:
            for path in SCRAPES:
                for body in (body_of(path), body_of(path).replace(b"\n", b"\r\n")):
                    triton.body = body
                    polls = server.exporter._polls
                    deadline = time.monotonic() + 60
                    while server.exporter._polls < polls + 2:  # a whole poll of this body
                        assert time.monotonic() < deadline, "the exporter stopped polling"
                        time.sleep(0.05)
                    response = requests.get(server.url + c.PATH_METRICS, timeout=10)
                    assert response.status_code == 200
                    samples: dict[str, list] = {}
                    for family in text_string_to_metric_families(response.text):
                        for sample in family.samples:
                            samples.setdefault(sample.name, []).append(sample)
                    assert_sound(samples)


def test_two_real_dumps_of_one_gpu_server_in_a_row():
    """Two bodies one user saved from the same 22.x GPU server (SonicMetricAnalyzer's result1 and
    result2): the real counters moved between them, so every figure comes from real increases."""
    first = body_of(SCRAPE_DIR / "sonic_exatrkx_gpu_energy_22.x_first.txt")
    second = body_of(SCRAPE_DIR / "sonic_exatrkx_gpu_energy_22.x.txt")
    with ScrapeTriton(first) as triton:
        settings = ExporterSettings(
            triton_url=triton.url,
            metrics_url=triton.url + c.PATH_METRICS,
            interval=60,
            window=600,
            pricing=Pricing(gpu_hour=2.5, kwh=0.2),
        )
        exporter = Exporter(settings, clock=itertools.count(1_700_000_000, 60).__next__)
        assert exporter.poll_once() is not None
        triton.body = second
        assert exporter.poll_once() is not None
    samples = exposed(exporter)
    assert_sound(samples)
    before, after = series(first), series(second)
    executed = [key for key in after if after[key][c.NV_EXEC_COUNT] > before[key][c.NV_EXEC_COUNT]]
    assert sorted(m for m, _ in executed) == ["embed", "filter", "gnn"]
    for model, version in executed:
        grew = {f: after[(model, version)][f] - before[(model, version)][f] for f in after[(model, version)]}
        where = {"model": model, "version": version}
        assert value(samples, c.M_BATCHING_RATIO, **where) == pytest.approx(
            grew[c.NV_INFERENCE_COUNT] / grew[c.NV_EXEC_COUNT]
        )
        queue = value(samples, c.M_REQUEST_STAGE_SECONDS, stage=c.STAGE_QUEUE, **where)
        assert queue == pytest.approx(grew[c.NV_QUEUE_DURATION_US] / 1e6 / grew[c.NV_REQUEST_SUCCESS])
    energy = [s.value for s in samples[c.M_ENERGY_COST_PER_HOUR]]

    def joules(body: bytes) -> float:
        return float(body.split(b"\nnv_energy_consumption{")[1].split(b"} ")[1].split()[0])

    assert joules(second) > joules(first)
    energy_kw = (joules(second) - joules(first)) / 60 / 1000
    assert energy == [pytest.approx(energy_kw * 0.2)]  # price per kWh × kW = price per hour
    assert 0 <= value(samples, c.M_IDLE_COST_FRACTION) <= 1


def test_python_backend_on_a_cpu_host_with_a_custom_counter_naming_an_unloaded_model():
    """A 23.12 server with no NVIDIA driver (a Chinese Triton guide): 2 requests through a Python
    model, all five stage families, CPU metrics only, and the python_backend example's custom counter
    whose `model` label names "custom_metrics", a model that has no Triton family at all.
    Expected figures are the body's numbers (doubled between the polls, so the increase is the body):
    success 2, exec 2, inferences 2, request 45735 µs = queue 113 + input 254 + infer 44730 +
    output 625 + 13 left over."""
    body = body_of(SCRAPE_DIR / "zh_triton_guide_vastpipe_custom_metric_23.12_cpu.txt")
    exporter = polled_twice(body, "derived")
    samples = exposed(exporter)
    assert_sound(samples)
    where = {"model": "vastpipe_passthrough", "version": "1"}
    assert value(samples, c.M_BATCHING_RATIO, **where) == 1.0
    seconds = {
        s.labels[c.L_STAGE]: s.value
        for s in samples[c.M_REQUEST_STAGE_SECONDS]
        if s.labels["model"] == where["model"]
    }
    expected_us = {
        c.STAGE_QUEUE: 113,
        c.STAGE_COMPUTE_INPUT: 254,
        c.STAGE_COMPUTE_INFER: 44730,
        c.STAGE_COMPUTE_OUTPUT: 625,
        c.STAGE_OTHER: 45735 - (113 + 254 + 44730 + 625),
    }
    assert seconds == pytest.approx({stage: us / 1e6 / 2 for stage, us in expected_us.items()})
    infer_share = value(samples, c.M_REQUEST_STAGE_FRACTION, stage=c.STAGE_COMPUTE_INFER, **where)
    assert infer_share == pytest.approx(44730 / 45735)
    # The custom counter is not a Triton per-model family: no figure for "custom_metrics".
    assert {s.labels["model"] for s in samples[c.M_REQUEST_STAGE_SECONDS]} == {where["model"]}
    assert value(samples, c.M_BATCHING_RATIO, model="custom_metrics", version="1") is None
    # A CPU host priced per node-hour (0.5): the one model that computed carries the whole price.
    assert value(samples, c.M_COST_DEVICES, device_kind="cpu") == 1
    assert value(samples, c.M_COST_PER_HOUR, **where, currency="USD") == pytest.approx(0.5)
    per_1k = value(samples, c.M_COST_PER_1K, **where, currency="USD")
    assert per_1k == pytest.approx(0.5 * 15 / 3600 / 2 * 1000)  # price × window share ÷ 2 inferences
    compute_s = (254 + 44730 + 625) / 1e6
    assert value(samples, c.M_IDLE_COST_FRACTION) == pytest.approx(1 - compute_s / 15)
    assert errors(samples, c.TARGET_METRICS, c.FAULT_PARSE) == 0


# drunkcoding/model-inference's configs at the scrape's commit: the ensemble's platform.
DRUNKCODING_CONFIGS = {"gpt_neo_cola_ensemble": {"platform": c.PLATFORM_ENSEMBLE}}


def test_four_gpu_series_of_one_model_are_summed_and_an_ensemble_is_not_charged_twice():
    """A Dec 2021 scrape of four GPUs (drunkcoding/model-inference): distilgpt2_cola has one series
    per GPU in every family, summed per version; gpt_neo_cola_part0..3 (one GPU each) run behind
    gpt_neo_cola_ensemble. Triton reports an ensemble's compute as the sum of its steps' (core's
    ensemble_scheduler.cc adds the steps' durations to the ensemble's batch statistics), so counting
    it beside its steps charged the same GPU time twice: the ensemble took 40 % of the server's
    price and every real model got less than its share."""
    body = body_of(SCRAPE_DIR / "drunkcoding_measure_4gpu_ensemble_per_gpu_instances_21.12dev.txt")
    exporter = polled_twice(body, "derived", DRUNKCODING_CONFIGS)
    samples = exposed(exporter)
    assert_sound(samples)
    distil = {"model": "distilgpt2_cola", "version": "0"}
    assert value(samples, c.M_BATCHING_RATIO, **distil) == pytest.approx((4 * 151) / (4 * 151))
    queue_us = 2550 + 58356 + 2496 + 2554
    queue = value(samples, c.M_REQUEST_STAGE_SECONDS, stage=c.STAGE_QUEUE, **distil)
    assert queue == pytest.approx(queue_us / 1e6 / (4 * 151))
    infer_us = 47563196 + 50292066 + 47301017 + 47591319
    request_us = 47574974 + 50371315 + 47312693 + 47603188
    infer_share = value(samples, c.M_REQUEST_STAGE_FRACTION, stage=c.STAGE_COMPUTE_INFER, **distil)
    assert infer_share == pytest.approx(infer_us / request_us)
    ensemble = {"model": "gpt_neo_cola_ensemble", "version": "1"}
    # an ensemble's ratio is rows per request, no batching of its own (ensembles26): none, and it is marked
    assert value(samples, c.M_BATCHING_RATIO, **ensemble) is None
    assert value(samples, c.M_MODEL_ENSEMBLE, model="gpt_neo_cola_ensemble") == 1
    # Cost: four GPUs at 2.5 an hour, shared by compute time (input + infer + output, in µs).
    assert value(samples, c.M_COST_DEVICES, device_kind="gpu") == 4
    compute_us = {
        "distilgpt2_cola": 15907 + 192747598 + 31389,
        "gpt_neo_cola_part0": 17834 + 84611180 + 1203246,
        "gpt_neo_cola_part1": 1491684 + 98580243 + 1529611,
        "gpt_neo_cola_part2": 1503856 + 98894148 + 1434554,
        "gpt_neo_cola_part3": 1510364 + 98721185 + 64549,
    }
    total_us = sum(compute_us.values())
    for model, us in compute_us.items():
        cost = value(samples, c.M_COST_PER_HOUR, model=model, version="0", currency="USD")
        assert cost == pytest.approx(10.0 * us / total_us), model
    assert value(samples, c.M_COST_PER_HOUR, **ensemble, currency="USD") is None
    assert value(samples, c.M_COST_PER_1K, **ensemble, currency="USD") is None
    assert sum(s.value for s in samples[c.M_COST_PER_HOUR]) == pytest.approx(10.0)


def test_fastertransformer_ensemble_under_dynamic_batching():
    """A 22.12 FasterTransformer GPT-J behind an ensemble (Curt-Park/serving-codegen-gptj-triton,
    load test with 8 output tokens): 391768 inferences in 20439 executions of the GPT-J model, one
    each for the ensemble and its Python steps; only the compute-infer duration was kept, so no
    stage split. The ensemble's platform is the FasterTransformer backend's GPT-J example's."""
    body = body_of(SCRAPE_DIR / "curtpark_codegen_gptj_fastertransformer_ensemble_22.12.txt")
    exporter = polled_twice(body, "derived", {"ensemble": {"platform": c.PLATFORM_ENSEMBLE}})
    samples = exposed(exporter)
    assert_sound(samples)
    gptj = {"model": "codegen-350M-mono-gptj", "version": "1"}
    assert value(samples, c.M_BATCHING_RATIO, **gptj) == pytest.approx(391768 / 20439)
    for model in ("preprocessing", "postprocessing"):
        assert value(samples, c.M_BATCHING_RATIO, model=model, version="1") == 1.0
    # the ensemble's 1.0 was rows per request, no batching of its own (ensembles26): none
    assert value(samples, c.M_BATCHING_RATIO, model="ensemble", version="1") is None
    assert c.M_REQUEST_STAGE_FRACTION not in samples
    # No GPU family in the excerpt: priced as a node (0.5 an hour), shared by the steps' compute.
    steps_us = {"codegen-350M-mono-gptj": 6148437063, "preprocessing": 168281250, "postprocessing": 51508744}
    for model, us in steps_us.items():
        cost = value(samples, c.M_COST_PER_HOUR, model=model, version="1", currency="USD")
        assert cost == pytest.approx(0.5 * us / sum(steps_us.values())), model
    # The README's own reading: preprocessing spends 2.73 % of the model's inference time (2.7370, cut).
    pre = value(samples, c.M_COST_PER_HOUR, model="preprocessing", version="1", currency="USD")
    assert pre / value(samples, c.M_COST_PER_HOUR, **gptj, currency="USD") == pytest.approx(0.0273, abs=1e-4)
    per_1k = value(samples, c.M_COST_PER_1K, **gptj, currency="USD")
    assert per_1k == pytest.approx(0.5 * 15 / 3600 * 6148437063 / sum(steps_us.values()) / 391768 * 1000)
    assert value(samples, c.M_COST_PER_HOUR, model="ensemble", version="1", currency="USD") is None


def test_gpu_only_body_of_a_server_serving_no_model():
    """Model Analyzer's RemoteMonitor test body (21.09): every per-model family is HELP/TYPE only and
    one GPU reports 400000000 of 1000000000 bytes used and 1474.042 J since start. Doubled between the
    polls, the energy grew 1474.042 J in the 15 s window: 1474.042 / 15 / 1000 kW at 0.2 per kWh.
    No model computed, so the GPU's whole price is idle."""
    body = body_of(SCRAPE_DIR / "model_analyzer_remote_monitor_gpu_only_21.09.txt")
    exporter = polled_twice(body, "derived", pricing=Pricing(gpu_hour=2.5, kwh=0.2))
    samples = exposed(exporter)
    assert_sound(samples)
    assert value(samples, c.M_UP) == 1
    assert errors(samples, c.TARGET_METRICS, c.FAULT_PARSE) == 0
    assert series(body) == {}
    for name in (c.M_BATCHING_RATIO, c.M_REQUEST_STAGE_FRACTION, c.M_COST_PER_HOUR, c.M_MODEL_STATE):
        assert name not in samples, name
    gpu = {c.LABEL_GPU_UUID: "GPU-e35ba3d2-6eef-2bb9-e35c-6ef6eada4f11"}
    assert value(samples, c.M_COST_DEVICES, device_kind="gpu") == 1
    assert value(samples, c.M_SERVER_COST_PER_HOUR, currency="USD") == 2.5
    assert value(samples, c.M_IDLE_COST_FRACTION) == 1.0
    assert value(samples, c.M_GPU_MEMORY_HEADROOM_BYTES, **gpu) == 1000000000 - 400000000
    energy = value(samples, c.M_ENERGY_COST_PER_HOUR, **gpu, currency="USD")
    assert energy == pytest.approx(1474.042 / 15 / 1000 * 0.2)
