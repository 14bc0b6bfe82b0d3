"""Faults: the exporter keeps serving /metrics and reports what went wrong."""

from __future__ import annotations

import math
import re
import time

import pytest
import requests
from faultproxy import GARBAGE, HANG, HUGE, REDIRECT_PREFIX, STATUS_500, TRICKLE, TRUNCATE, FaultProxy
from prometheus_client.parser import text_string_to_metric_families

from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.demo import VECTOR_SCALE, traffic
from triton_sre.exporter.service import Exporter, ExporterServer
from triton_sre.stack.processes import free_port

pytestmark = pytest.mark.triton


def samples(exporter: Exporter) -> dict[tuple[str, tuple], float]:
    text = exporter.metrics_text().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def errors(exporter: Exporter, target: str, kind: str) -> float:
    return samples(exporter)[(c.M_POLL_ERRORS, (("kind", kind), ("target", target)))]


def up(exporter: Exporter) -> float:
    return samples(exporter)[(c.M_UP, ())]


def assert_no_bad_values(exporter: Exporter) -> None:
    for (name, _labels), value in samples(exporter).items():
        if name.startswith("triton_sre_"):
            assert not math.isnan(value), name
            assert value >= 0, name


def test_triton_not_started_exporter_still_serves():
    port = free_port()
    settings = ExporterSettings(triton_url=f"http://127.0.0.1:{port}", interval=0.2, timeout=1.0)
    with ExporterServer(Exporter(settings), "127.0.0.1", 0) as server:
        time.sleep(0.8)
        response = requests.get(server.url + c.PATH_METRICS, timeout=5)
        assert response.status_code == 200
        assert requests.get(server.url + c.PATH_READYZ, timeout=5).status_code == 503
        assert requests.get(server.url + c.PATH_HEALTHZ, timeout=5).status_code == 200
        exporter = server.exporter
        assert up(exporter) == 0
        assert errors(exporter, c.TARGET_METRICS, c.FAULT_CONNECTION) >= 1
        assert errors(exporter, c.TARGET_INDEX, c.FAULT_CONNECTION) >= 1


def test_triton_killed_mid_run_then_restarted(fresh_triton_factory):
    triton = fresh_triton_factory()
    exporter = Exporter(
        ExporterSettings(triton_url=triton.http_url, metrics_url=triton.metrics_url, window=600)
    )
    exporter.poll_once()
    traffic.drive(triton.http_url, "vector_scale", concurrency=8, requests_total=64)
    exporter.poll_once()
    assert up(exporter) == 1
    ratio_before = next(m for m in exporter.derivation.models if m.model == "vector_scale").batching_ratio
    assert ratio_before is not None

    triton.kill()
    exporter.poll_once()
    assert up(exporter) == 0
    assert errors(exporter, c.TARGET_METRICS, c.FAULT_CONNECTION) >= 1
    assert_no_bad_values(exporter)

    triton.restart()  # counters start again from zero
    traffic.drive(triton.http_url, "vector_scale", concurrency=8, requests_total=32)
    exporter.poll_once()
    assert up(exporter) == 1
    assert_no_bad_values(exporter)
    vector = next(m for m in exporter.derivation.models if m.model == "vector_scale")
    # 64 + 32 inferences over the window, the reset handled as rate() handles it
    assert vector.batching_ratio is not None and vector.batching_ratio >= 1


@pytest.fixture
def exporter_behind_proxy(triton):
    """An exporter reading the real Triton through two fault proxies (HTTP API, metrics port)."""
    metrics_base, metrics_path = triton.metrics_url.rsplit("/", 1)
    with FaultProxy(triton.http_url) as api_proxy, FaultProxy(metrics_base) as metrics_proxy:
        settings = ExporterSettings(
            triton_url=api_proxy.url,
            metrics_url=f"{metrics_proxy.url}/{metrics_path}",
            timeout=1.5,
            window=600,
        )
        exporter = Exporter(settings)
        exporter.poll_once()
        assert up(exporter) == 1
        yield exporter, metrics_proxy, api_proxy


def test_hanging_metrics_endpoint_times_out(exporter_behind_proxy):
    exporter, metrics_proxy, _ = exporter_behind_proxy
    metrics_proxy.set_fault("/metrics", HANG)
    started = time.monotonic()
    exporter.poll_once()
    assert time.monotonic() - started < 5
    assert up(exporter) == 0
    assert errors(exporter, c.TARGET_METRICS, c.FAULT_TIMEOUT) == 1
    # the rest of the poll still happened: states are current
    assert any(s.state == c.STATE_UNAVAILABLE for s in exporter.derivation.states)


def test_trickled_complete_answer_is_a_timeout(exporter_behind_proxy):
    """A valid answer sent one byte every 0.4 s: each read is inside the timeout, the whole is not
    (issue #28): the poll fails as a timeout, `up` says so, and the poll ends near the deadline."""
    exporter, metrics_proxy, _ = exporter_behind_proxy
    metrics_proxy.set_fault("/metrics", TRICKLE)
    started = time.monotonic()
    exporter.poll_once()
    assert time.monotonic() - started < 5  # the timeout is 1.5 s; the body would take minutes
    assert up(exporter) == 0
    assert errors(exporter, c.TARGET_METRICS, c.FAULT_TIMEOUT) == 1
    metrics_proxy.set_fault("/metrics", None)
    exporter.poll_once()
    assert up(exporter) == 1


def test_redirect_to_another_host_is_not_followed(exporter_behind_proxy, triton):
    """Another server's data is never served as this Triton's: the 302 is an http_status error."""
    exporter, metrics_proxy, _ = exporter_behind_proxy
    metrics_base = triton.metrics_url.rsplit("/", 1)[0]
    metrics_proxy.set_fault("/metrics", REDIRECT_PREFIX + metrics_base)  # a real Triton, another port
    exporter.poll_once()
    assert up(exporter) == 0
    assert errors(exporter, c.TARGET_METRICS, c.FAULT_HTTP_STATUS) == 1


@pytest.mark.parametrize(
    ("fault", "kind"), [(GARBAGE, c.FAULT_PARSE), (TRUNCATE, c.FAULT_PARSE), (HUGE, c.FAULT_TOO_LARGE)]
)
def test_bad_metrics_bodies_are_reported(exporter_behind_proxy, fault, kind):
    exporter, metrics_proxy, _ = exporter_behind_proxy
    metrics_proxy.set_fault("/metrics", fault)
    exporter.poll_once()
    assert up(exporter) == 0
    assert errors(exporter, c.TARGET_METRICS, kind) == 1
    assert_no_bad_values(exporter)
    metrics_proxy.set_fault("/metrics", None)
    exporter.poll_once()
    assert up(exporter) == 1


def test_repository_index_500_is_reported_and_metrics_still_flow(exporter_behind_proxy):
    exporter, _, proxy = exporter_behind_proxy
    proxy.set_fault("/v2/repository/index", STATUS_500)
    exporter.poll_once()
    assert up(exporter) == 1
    assert errors(exporter, c.TARGET_INDEX, c.FAULT_HTTP_STATUS) == 1
    # states come from the last good index in the window, not from nothing
    assert any(s.model == "broken_init" for s in exporter.derivation.states)


@pytest.mark.parametrize("fault", [GARBAGE, TRUNCATE])
def test_bad_statistics_are_reported_and_the_rest_still_flows(exporter_behind_proxy, fault):
    exporter, _, api_proxy = exporter_behind_proxy
    api_proxy.set_fault("/v2/models/stats", fault)
    exporter.poll_once()
    assert up(exporter) == 1
    assert errors(exporter, c.TARGET_STATS, c.FAULT_PARSE) == 1
    assert any(s.model == "broken_init" for s in exporter.derivation.states)
    assert_no_bad_values(exporter)


# -- hardening (issue #12): values the decoders do not expect, in real Triton output ---------------
def _sub(pattern: bytes, replacement: bytes, count: int = 1):
    """A body rewrite for FaultProxy: the real body with `pattern` replaced (it must occur)."""

    def rewrite(body: bytes) -> bytes:
        new, n = re.subn(pattern, replacement, body, count=count)
        assert n, f"{pattern!r} not in the real body"
        return new

    return rewrite


def _rendered(exporter: Exporter) -> bytes:
    return exporter.metrics_text()


@pytest.mark.parametrize("bad", [b'"batch_size":1e400', b'"batch_size":"nan"', b'"batch_size":-3'])
def test_bad_statistics_field_is_a_parse_error_and_the_rest_is_kept(exporter_behind_proxy, bad):
    exporter, _, api_proxy = exporter_behind_proxy
    traffic.drive(exporter.settings.triton_url, "vector_scale", concurrency=4, requests_total=16)
    before = _rendered(exporter)
    api_proxy.set_fault("/v2/models/stats", _sub(rb'"batch_size":\s*\d+', bad))
    exporter.poll_once()
    after = _rendered(exporter)
    assert after != before
    assert up(exporter) == 1
    assert errors(exporter, c.TARGET_STATS, c.FAULT_PARSE) == 1
    # the rest of the statistics is kept: batch sizes of the models are still exported
    assert exporter.derivation.executions_by_batch_size
    assert any(s.model == "broken_init" for s in exporter.derivation.states)
    exporter.poll_once()  # the fault repeats: the counter keeps growing, so rate() > 0 fires
    assert errors(exporter, c.TARGET_STATS, c.FAULT_PARSE) == 2
    assert_no_bad_values(exporter)


def test_poll_failing_inside_the_exporter_refreshes_metrics(triton):
    def broken_diagnosis(reason: str) -> str:
        raise RuntimeError("diagnosis bug")

    settings = ExporterSettings(triton_url=triton.http_url, metrics_url=triton.metrics_url, window=600)
    exporter = Exporter(settings, diagnose=broken_diagnosis)  # the sample has UNAVAILABLE models
    before = _rendered(exporter)
    assert errors(exporter, c.TARGET_EXPORTER, c.FAULT_INTERNAL) == 0  # exported from the start
    assert exporter.poll_once() is None  # counted, not raised
    after = _rendered(exporter)
    assert after != before
    assert up(exporter) == 0
    assert errors(exporter, c.TARGET_EXPORTER, c.FAULT_INTERNAL) == 1
    exporter.poll_once()
    assert errors(exporter, c.TARGET_EXPORTER, c.FAULT_INTERNAL) == 2


@pytest.fixture
def fresh_exporter_behind_proxy(triton):
    """As exporter_behind_proxy, but no poll yet (configs are fetched on the first one)."""
    metrics_base, metrics_path = triton.metrics_url.rsplit("/", 1)
    with FaultProxy(triton.http_url) as api_proxy, FaultProxy(metrics_base) as metrics_proxy:
        settings = ExporterSettings(
            triton_url=api_proxy.url, metrics_url=f"{metrics_proxy.url}/{metrics_path}", timeout=3, window=600
        )
        yield Exporter(settings), metrics_proxy, api_proxy


def _max_batch_sizes(exporter: Exporter) -> dict[str, float]:
    return {
        dict(labels)[c.LABEL_MODEL]: value
        for (name, labels), value in samples(exporter).items()
        if name == c.M_MODEL_MAX_BATCH_SIZE
    }


CONFIG_PATH = "/v2/models/vector_scale/config"


@pytest.mark.parametrize(
    "rewrite",
    [
        _sub(rb'"max_batch_size":\s*\d+', b'"max_batch_size":1e400'),
        lambda body: b'{"a":' * 50_000 + b"1" + b"}" * 50_000,  # RecursionError in json.loads
    ],
    ids=["max_batch_size_1e400", "nested_50000_deep"],
)
def test_bad_config_is_a_parse_error_remembered_until_the_model_changes(fresh_exporter_behind_proxy, rewrite):
    exporter, _, api_proxy = fresh_exporter_behind_proxy
    api_proxy.set_fault(CONFIG_PATH, rewrite)
    exporter.poll_once()
    assert up(exporter) == 1
    assert errors(exporter, c.TARGET_CONFIG, c.FAULT_PARSE) == 1
    sizes = _max_batch_sizes(exporter)
    assert "vector_scale" not in sizes  # unknown, not a made-up number
    assert sizes["text_echo"] == 8  # the other configs are kept
    for _ in range(3):
        exporter.poll_once()
    assert api_proxy.requests[CONFIG_PATH] == 1  # not fetched again every poll
    assert errors(exporter, c.TARGET_CONFIG, c.FAULT_PARSE) == 1
    assert_no_bad_values(exporter)


def test_duplicate_series_are_a_parse_error_and_the_first_wins(exporter_behind_proxy):
    exporter, metrics_proxy, _ = exporter_behind_proxy
    traffic.drive(exporter.settings.triton_url, "vector_scale", concurrency=8, requests_total=64)
    exporter.poll_once()
    clean = next(m for m in exporter.derivation.models if m.model == "vector_scale")

    def duplicate_vector_scale(body: bytes) -> bytes:
        lines = body.split(b"\n")
        model, family = f'{c.LABEL_MODEL}="{VECTOR_SCALE}"'.encode(), c.NV_INFERENCE_COUNT.encode()
        dup = [ln for ln in lines if model in ln and ln.startswith(family)]
        assert dup
        return b"\n".join(lines[:-1] + dup + [b""])

    metrics_proxy.set_fault("/metrics", duplicate_vector_scale)
    exporter.poll_once()
    assert up(exporter) == 1
    assert errors(exporter, c.TARGET_METRICS, c.FAULT_PARSE) == 1
    vector = next(m for m in exporter.derivation.models if m.model == "vector_scale")
    assert vector.batching_ratio == clean.batching_ratio  # not doubled
    assert vector.batch_fill_ratio is not None and 0 <= vector.batch_fill_ratio <= 1
