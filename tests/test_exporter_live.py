"""The exporter against the real local Triton: derived values equal what the raw counters say."""

from __future__ import annotations

import socket
import threading
import time

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.demo import traffic
from triton_sre.exporter.metricsfold import counters_from_samples
from triton_sre.exporter.service import Exporter, ExporterServer
from triton_sre.exporter.snapshot import keep_family, row_value, stats_from_json
from triton_sre.pricing import Pricing
from triton_sre.triton.exposition import parse

pytestmark = pytest.mark.triton

NODE_HOUR = 0.36


def settings_for(triton, **overrides) -> ExporterSettings:
    values = dict(
        triton_url=triton.http_url,
        metrics_url=triton.metrics_url,
        interval=0.5,
        window=3600.0,  # covers the whole test
        pricing=Pricing(currency="USD", node_hour=NODE_HOUR, cpu_execution_slots=1),
    )
    values.update(overrides)
    return ExporterSettings(**values)


def raw_counters(triton) -> dict:
    text = requests.get(triton.metrics_url, timeout=10).text
    return counters_from_samples(parse(text, keep=keep_family))[0]


def raw_stats(triton) -> dict:
    return stats_from_json(
        requests.get(f"{triton.http_url}/v2/models/stats", timeout=10).json()["model_stats"]
    )


def delta(before: dict, after: dict, key, family: str) -> float:
    return row_value(after[key], family) - (row_value(before[key], family) if key in before else 0.0)


def scrape(url: str) -> dict[tuple[str, tuple], float]:
    text = requests.get(f"{url}{c.PATH_METRICS}", timeout=10).text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


@pytest.fixture(scope="module")
def loaded(triton):
    """One exporter, polled around a burst of concurrent traffic; raw counters before and after."""
    exporter = Exporter(settings_for(triton))
    before, stats_before = raw_counters(triton), raw_stats(triton)
    exporter.poll_once()
    threads = [
        threading.Thread(
            target=traffic.drive,
            args=(triton.http_url, "vector_scale"),
            kwargs={"concurrency": 16, "requests_total": 320},
        ),
        threading.Thread(
            target=traffic.drive,
            args=(triton.http_url, "slow_model"),
            kwargs={"concurrency": 6, "requests_total": 24},
        ),
        threading.Thread(
            target=traffic.drive,
            args=(triton.http_url, "text_echo"),
            kwargs={"concurrency": 4, "requests_total": 40},
        ),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Triton updates its counters just after it answers: wait until every request is counted
    sent = {("vector_scale", "1"): 320, ("slow_model", "1"): 24, ("text_echo", "1"): 40}
    deadline = time.monotonic() + 30
    while any(delta(before, raw_counters(triton), k, c.NV_REQUEST_SUCCESS) < n for k, n in sent.items()):
        assert time.monotonic() < deadline, "Triton never counted all requests"
        time.sleep(0.05)
    exporter.poll_once()
    after, stats_after = raw_counters(triton), raw_stats(triton)
    return exporter, before, after, stats_before, stats_after


def model(exporter: Exporter, name: str):
    return next(m for m in exporter.derivation.models if m.model == name)


def test_batching_ratio_matches_raw_counters_and_stats(loaded):
    exporter, before, after, stats_before, stats_after = loaded
    key = ("vector_scale", "1")
    inferences = delta(before, after, key, c.NV_INFERENCE_COUNT)
    executions = delta(before, after, key, c.NV_EXEC_COUNT)
    assert inferences == 320
    ratio = model(exporter, "vector_scale").batching_ratio
    assert ratio > 1, "concurrent load on a dynamic-batching model must batch"
    assert ratio == pytest.approx(inferences / executions, rel=1e-9)
    # cross-check against /v2/models/stats
    assert stats_after[key].execution_count - stats_before[key].execution_count == executions
    # fill ratio uses max_batch_size from the model config (16)
    assert model(exporter, "vector_scale").batch_fill_ratio == pytest.approx(ratio / 16)


def test_stage_split_matches_raw_counters(loaded):
    exporter, before, after, *_ = loaded
    for name in ("vector_scale", "slow_model", "text_echo"):
        key = (name, "1")
        success = delta(before, after, key, c.NV_REQUEST_SUCCESS)
        m = model(exporter, name)
        for stage, family in c.STAGE_COUNTERS.items():
            expected = delta(before, after, key, family) / 1e6 / success
            assert m.stage_seconds[stage] == pytest.approx(expected, rel=1e-9), (name, stage)
        request = delta(before, after, key, c.NV_REQUEST_DURATION_US) / 1e6 / success
        measured = sum(v for s, v in m.stage_seconds.items() if s != c.STAGE_OTHER)
        assert m.stage_seconds[c.STAGE_OTHER] == pytest.approx(max(0.0, request - measured), abs=1e-12)
        assert sum(m.stage_fraction.values()) == pytest.approx(1.0)


def test_slow_model_shows_queue_time(loaded):
    exporter, *_ = loaded
    m = model(exporter, "slow_model")
    # six concurrent clients on one instance that takes ~0.1 s per request: most time is queueing
    assert m.stage_seconds[c.STAGE_QUEUE] > 0.1
    assert m.stage_fraction[c.STAGE_QUEUE] > 0.3


def test_cost_matches_formula(loaded):
    exporter, before, after, stats_before, stats_after = loaded
    d = exporter.derivation
    compute = {
        k: (stats_after[k].execution_compute_ns - stats_before[k].execution_compute_ns) / 1e9
        for k in stats_after
    }
    total = sum(compute.values())
    span = d.window_seconds
    assert d.server_cost_per_hour == NODE_HOUR
    assert d.idle_fraction == pytest.approx(1 - min(1.0, total / span), rel=1e-6)
    for name in ("vector_scale", "slow_model"):
        key = (name, "1")
        share = compute[key] / total
        inferences = delta(before, after, key, c.NV_INFERENCE_COUNT)
        m = model(exporter, name)
        assert m.cost_per_hour == pytest.approx(NODE_HOUR * share, rel=1e-6)
        assert m.cost_per_1k == pytest.approx(NODE_HOUR * span / 3600 * share / inferences * 1000, rel=1e-6)


def test_broken_models_are_unavailable_with_runbook(loaded):
    exporter, *_ = loaded
    states = {s.model: s for s in exporter.derivation.states}
    assert states["vector_scale"].state == c.STATE_READY
    assert states["broken_missing_module"].state == c.STATE_UNAVAILABLE
    assert states["broken_missing_module"].runbook == c.RUNBOOK_PYTHON_MODULE_MISSING
    assert states["broken_init"].state == c.STATE_UNAVAILABLE
    assert states["broken_init"].runbook == c.RUNBOOK_PYTHON_MODEL_ERROR


def test_scrapes_do_not_change_values(loaded):
    exporter, *_ = loaded
    first = exporter.metrics_text()
    for _ in range(5):
        exporter.metrics_text()
    assert exporter.metrics_text() == first


def test_metrics_endpoint_serves_the_derivation(loaded):
    exporter, *_ = loaded
    with ExporterServer(exporter, "127.0.0.1", 0) as server:
        samples = scrape(server.url)
        again = scrape(server.url)
        assert requests.get(server.url + c.PATH_HEALTHZ, timeout=5).status_code == 200
        assert requests.get(server.url + c.PATH_READYZ, timeout=5).status_code == 200
        assert requests.post(server.url + c.PATH_METRICS, timeout=5).status_code == 405
        debug = requests.get(server.url + c.PATH_DEBUG_MODELS, timeout=5).json()
    ratio = model(exporter, "vector_scale").batching_ratio
    mv = (("model", "vector_scale"), ("version", "1"))
    # the server's poll thread polls again meanwhile, but with no new traffic the ratio cannot move
    assert samples[(c.M_UP, ())] == 1.0
    assert samples[(c.M_BATCHING_RATIO, mv)] == pytest.approx(ratio)
    assert again[(c.M_BATCHING_RATIO, mv)] == pytest.approx(ratio)
    state_key = (c.M_MODEL_STATE, (("model", "broken_init"), ("state", "UNAVAILABLE"), ("version", "1")))
    assert samples[state_key] == 1.0
    unavailable = [
        k for k in samples if k[0] == c.M_MODEL_UNAVAILABLE and ("model", "broken_missing_module") in k[1]
    ]
    assert unavailable and ("runbook", c.RUNBOOK_PYTHON_MODULE_MISSING) in unavailable[0][1]
    sizes = [
        dict(k[1])["batch_size"]
        for k in samples
        if k[0] == c.M_EXECUTIONS_BY_BATCH_SIZE and ("model", "vector_scale") in k[1]
    ]
    assert any(int(s) > 1 for s in sizes)
    assert any(m["model"] == "broken_init" and "initialize" in m["reason"] for m in debug["models"])
    # the model config as the batching alert needs it
    assert samples[(c.M_MODEL_DYNAMIC_BATCHING, (("model", "vector_scale"),))] == 1.0
    assert samples[(c.M_MODEL_DYNAMIC_BATCHING, (("model", "slow_model"),))] == 0.0
    assert samples[(c.M_MODEL_MAX_BATCH_SIZE, (("model", "vector_scale"),))] == 16.0
    assert samples[(c.M_MODEL_MAX_QUEUE_DELAY, (("model", "vector_scale"),))] == 0.003
    assert samples[(c.M_MODEL_MAX_QUEUE_DELAY, (("model", "text_echo"),))] == 0.002
    assert (c.M_MODEL_MAX_QUEUE_DELAY, (("model", "slow_model"),)) not in samples  # no dynamic batcher


def test_metrics_port_refusing_the_batching_ratio_comes_from_the_statistics(triton):
    """The exporter pointed at a metrics URL that refuses connections: after concurrent traffic on
    the dynamic-batching model, its batching ratio and stage split are exported from
    /v2/models/stats, marked `source="stats"`, and equal the statistics' own increases."""
    key = ("vector_scale", "1")
    with socket.socket() as unused:  # bound, never listening: connecting is refused
        unused.bind(("127.0.0.1", 0))
        refused = f"http://127.0.0.1:{unused.getsockname()[1]}{c.PATH_METRICS}"
        exporter = Exporter(settings_for(triton, metrics_url=refused))
        before, counters_before = raw_stats(triton), raw_counters(triton)
        exporter.poll_once()
        traffic.drive(triton.http_url, "vector_scale", concurrency=16, requests_total=320)
        deadline = time.monotonic() + 30
        while (after := raw_stats(triton))[key].request_stats[0] - before[key].request_stats[0] < 320:
            assert time.monotonic() < deadline, "Triton never counted all requests"
            time.sleep(0.05)
        exporter.poll_once()
        counters_after = raw_counters(triton)  # what the metrics port (the real one) says meanwhile
    m = model(exporter, "vector_scale")
    inferences = after[key].inference_count - before[key].inference_count
    executions = after[key].execution_count - before[key].execution_count
    assert inferences == 320
    assert m.source == c.SOURCE_STATS
    assert m.batching_ratio > 1, "concurrent load on a dynamic-batching model must batch"
    assert m.batching_ratio == pytest.approx(inferences / executions, rel=1e-9)
    assert m.batch_fill_ratio == pytest.approx(m.batching_ratio / 16)
    success = after[key].request_stats[0] - before[key].request_stats[0]
    for i, stage in enumerate(c.STAGE_COUNTERS, start=2):
        ns = after[key].request_stats[i] - before[key].request_stats[i]
        assert m.stage_seconds[stage] == pytest.approx(ns / 1e9 / success, rel=1e-9), stage
        # Triton's counter of the same stage: the same time in µs, truncated per request
        us = delta(counters_before, counters_after, key, c.STAGE_COUNTERS[stage])
        assert 0 <= m.stage_seconds[stage] - us / 1e6 / success <= 1e-6, stage
    # the same batching ratio as Triton's own counters give over the same polls
    assert m.batching_ratio == delta(counters_before, counters_after, key, c.NV_INFERENCE_COUNT) / delta(
        counters_before, counters_after, key, c.NV_EXEC_COUNT
    )
    assert sum(m.stage_fraction.values()) == pytest.approx(1.0)
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(exporter.metrics_text().decode())
        for s in family.samples
    }
    mv = (("model", "vector_scale"), ("version", "1"))
    assert samples[(c.M_UP, ())] == 0.0
    refusals = (c.M_POLL_ERRORS, ((c.L_KIND, c.FAULT_CONNECTION), (c.L_TARGET, c.TARGET_METRICS)))
    assert samples[refusals] == 2
    assert samples[(c.M_BATCHING_RATIO, mv)] == pytest.approx(m.batching_ratio)
    assert samples[(c.M_DERIVATION_SOURCE, tuple(sorted((*mv, (c.L_SOURCE, c.SOURCE_STATS)))))] == 1.0


def test_a_failed_execution_counts_as_an_execution_but_not_its_requests_as_inferences(triton):
    """Why a failing candidate's batching ratio drops below 1 (journey23, `rollout check`): Triton
    adds a batch to nv_inference_count only for successful requests, but counts every execution the
    backend reports in nv_inference_exec_count, a raised one included (core's infer_stats.cc:
    UpdateSuccess vs UpdateInferBatchStats). Measured on 2.51: requests that make vector_scale raise,
    one at a time, are one execution each, no inference, one BACKEND failure each. The exporter's
    ratio over a window of only those is absent (it read 0 before compat32, which is no batching
    figure of the model: the recording rule still reads 0, what `rollout check` compares)."""
    exporter = Exporter(settings_for(triton))
    key, sent = ("vector_scale", "1"), 5
    before = raw_counters(triton)
    exporter.poll_once()
    for _ in range(sent):
        with pytest.raises(requests.HTTPError):
            traffic.infer(triton.http_url, "vector_scale", traffic.failing_payload("vector_scale"))
    deadline = time.monotonic() + 30
    while delta(before, raw_counters(triton), key, c.NV_REQUEST_FAILURE) < sent:
        assert time.monotonic() < deadline, "Triton never counted the failures"
        time.sleep(0.05)
    exporter.poll_once()
    after = raw_counters(triton)
    assert delta(before, after, key, c.NV_REQUEST_FAILURE) == sent
    assert delta(before, after, key, c.NV_EXEC_COUNT) == sent
    assert delta(before, after, key, c.NV_INFERENCE_COUNT) == 0
    assert delta(before, after, key, c.NV_REQUEST_SUCCESS) == 0
    assert model(exporter, "vector_scale").batching_ratio is None


def test_a_version_retired_by_the_version_policy_is_no_unavailable_model(fresh_triton_factory, tmp_path):
    """Loading v2 of a `latest: 1` model (explicit model control) leaves v1 in the index as UNAVAILABLE with
    the reason `unloaded`: nothing failed, yet the exporter counted it in triton_sre_model_unavailable with
    runbook unknown-load-failure, and TritonModelUnavailable paged for v1 two minutes into the rollout
    (journey25). Its state series still says UNAVAILABLE; the failure families leave it out."""
    import shutil

    from triton_sre.demo import SAMPLE_REPOSITORY

    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPOSITORY / "vector_scale", repo / "vector_scale")
    server = fresh_triton_factory(repo, model_control_mode="explicit", load_models=["vector_scale"])
    exporter = Exporter(settings_for(server))
    shutil.copytree(repo / "vector_scale" / "1", repo / "vector_scale" / "2")
    answer = requests.post(f"{server.http_url}/v2/repository/models/vector_scale/load", timeout=60)
    assert answer.status_code == 200, answer.text
    deadline = time.monotonic() + 30
    while True:  # v1 is UNLOADING for a moment after the load answers
        index = requests.post(f"{server.http_url}/v2/repository/index", timeout=10).json()
        if all(e["state"] != c.STATE_UNLOADING for e in index) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert {(e["version"], e["state"], e.get("reason", "")) for e in index} == {
        ("1", c.STATE_UNAVAILABLE, c.REASON_UNLOADED),
        ("2", c.STATE_READY, ""),
    }
    exporter.poll_once()
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(exporter.metrics_text().decode())
        for s in family.samples
    }
    v1 = (("model", "vector_scale"), ("state", c.STATE_UNAVAILABLE), ("version", "1"))
    assert samples[(c.M_MODEL_STATE, v1)] == 1.0
    assert not [k for k in samples if k[0] in (c.M_MODEL_UNAVAILABLE, c.M_MODEL_UNAVAILABLE_INFO)]
    assert {m["version"]: m["runbook"] for m in exporter.debug_models()["models"]} == {"1": None, "2": None}


def test_the_release_is_read_from_the_live_server_once_and_exported(triton, monkeypatch):
    """triton_sre_triton_info{version} is the version the live Triton's GET /v2 gives (2.51 from the
    nvidia-pytriton wheel), read at the first poll and not again while Triton stays up."""
    server = requests.get(f"{triton.http_url}/v2", timeout=10).json()
    assert server["version"].startswith("2.51.")
    exporter = Exporter(settings_for(triton))
    reads = []
    kind = type(exporter.client)
    real = kind.server_metadata
    monkeypatch.setattr(kind, real.__name__, lambda self: reads.append(1) or real(self))
    for _ in range(3):
        assert exporter.poll_once() is not None
    families = {f.name: f for f in text_string_to_metric_families(exporter.metrics_text().decode())}
    info = families[c.M_TRITON_INFO].samples
    assert [(s.labels, s.value) for s in info] == [({c.LABEL_VERSION: server["version"]}, 1.0)]
    assert len(reads) == 1  # at start, not every poll
    inputs = families[c.M_INPUT_MISSING].samples
    pending = [
        (s.labels[c.L_NEEDS_RELEASE], s.value)
        for s in inputs
        if s.labels[c.L_CHECK] == c.CHECK_PENDING_REQUESTS
    ]
    assert pending == [("", 0.0)]
