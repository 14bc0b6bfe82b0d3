"""Poll cost at scale (call counting) and OpenTelemetry traces of a poll."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from client_double import PollClient
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from synthetic import triton_metrics_payload

from triton_sre import conventions as c
from triton_sre import tracing
from triton_sre.config import ExporterSettings
from triton_sre.exporter import snapshot
from triton_sre.exporter.configs import CONFIG_FETCHES_PER_POLL
from triton_sre.exporter.service import Exporter
from triton_sre.triton.client import FetchError


class CountingClient(PollClient):
    """Answers like a 1,000-model Triton from memory and counts the calls a poll makes.

    Real Triton cannot load 1,000 Python models on this machine; the metrics text comes from the
    synthetic generator that is checked against the real server's output shape.
    """

    def __init__(self, models: int) -> None:
        self.calls: list[str] = []
        self.states = {f"model_{i:04d}": c.STATE_READY for i in range(models)}
        self.body = triton_metrics_payload(models, 1).encode()

    def metrics(self) -> bytes:
        self.calls.append("metrics")
        return self.body

    def repository_index(self) -> list[dict]:
        self.calls.append("index")
        return [{"name": n, "version": "1", "state": s} for n, s in self.states.items()]

    def all_stats(self) -> list[dict]:
        self.calls.append("stats")
        return [{"name": n, "version": "1", "inference_count": 0, "execution_count": 0} for n in self.states]

    def model_config(self, model: str, version: str = "") -> dict:
        self.calls.append(f"config:{model}")
        return {"name": model, "max_batch_size": 8, "dynamic_batching": {}}


def test_thousand_models_cost_three_calls_per_poll_once_configs_are_known():
    client = CountingClient(1000)
    exporter = Exporter(ExporterSettings(), client=client)  # type: ignore[arg-type]
    exporter.poll_once()
    first = list(client.calls)
    assert first[:3] == ["metrics", "index", "stats"]
    assert len(first) == 3 + CONFIG_FETCHES_PER_POLL  # configs are fetched in bounded batches
    polls = 1
    while len({x for x in client.calls if x.startswith("config:")}) < 1000:
        exporter.poll_once()
        polls += 1
        assert polls < 100
    client.calls.clear()
    exporter.poll_once()
    assert client.calls == ["metrics", "index", "stats"]
    assert len(exporter.derivation.models) == 1000
    # a model that goes away and comes back gets its config fetched again, and only that one
    client.calls.clear()
    client.states["model_0007"] = c.STATE_UNAVAILABLE
    exporter.poll_once()
    client.states["model_0007"] = c.STATE_READY
    exporter.poll_once()
    assert [x for x in client.calls if x.startswith("config:")] == ["config:model_0007"]


class _Collector(BaseHTTPRequestHandler):
    requests: ClassVar[list[bytes]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        _Collector.requests.append(body)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def otlp_collector(monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Collector.requests = []
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setattr(tracing, "_provider", None)
    yield _Collector.requests
    tracing.shutdown()
    monkeypatch.setattr(tracing, "_provider", None)
    server.shutdown()
    server.server_close()


def test_each_poll_is_a_span_with_a_child_per_triton_call(triton, otlp_collector):
    exporter = Exporter(ExporterSettings(triton_url=triton.http_url, metrics_url=triton.metrics_url))
    exporter.poll_once()
    tracing.shutdown()  # flushes the batch processor
    spans = []
    for body in otlp_collector:
        request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            for scope in resource_spans.scope_spans:
                spans.extend(scope.spans)
    by_name = {s.name: s for s in spans}
    poll = by_name["triton_sre.poll"]
    children = {s.name for s in spans if s.parent_span_id == poll.span_id}
    assert {"GET /metrics", "POST /v2/repository/index", "GET /v2/models/stats"} <= children
    assert any(a.key == "triton_sre.up" and a.value.bool_value for a in poll.attributes)


def test_no_endpoint_no_tracing(monkeypatch):
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.setattr(tracing, "_provider", None)
    tracer = tracing.tracer()
    with tracer.start_as_current_span("x") as span:
        assert not span.is_recording()
    assert tracing._provider is None
    assert c.M_UP  # the exporter works without any tracing configured


def test_an_unchanged_index_is_folded_once_and_its_configs_not_revisited(monkeypatch):
    """The index rarely changes between polls: an equal one reuses the last rows (no fold, no
    config bookkeeping); a changed one is folded again and the derivation follows it."""
    folds: list[int] = []
    fold = snapshot.index_from_json

    def counting_fold(entries, problems=None):
        folds.append(len(entries))
        return fold(entries, problems)

    monkeypatch.setattr(snapshot, "index_from_json", counting_fold)
    client = CountingClient(300)
    exporter = Exporter(ExporterSettings(), client=client)  # type: ignore[arg-type]
    for _ in range(300 // CONFIG_FETCHES_PER_POLL + 1):
        exporter.poll_once()
    assert len(folds) == 1  # one index the whole time, configs fetched over several polls
    refreshes: list[object] = []
    refresh = exporter._configs.refresh
    monkeypatch.setattr(
        exporter._configs, "refresh", lambda index, reader: refreshes.append(index) or refresh(index, reader)
    )
    client.calls.clear()
    for _ in range(3):
        exporter.poll_once()
    assert client.calls == ["metrics", "index", "stats"] * 3
    assert len(folds) == 1
    assert len(refreshes) == 3 and refreshes[0] is refreshes[2]  # the same rows, nothing re-read

    client.states["model_0007"] = c.STATE_UNAVAILABLE
    exporter.poll_once()
    assert len(folds) == 2
    states = {s.model: s.state for s in exporter._view.derivation.states}
    assert states["model_0007"] == c.STATE_UNAVAILABLE and states["model_0008"] == c.STATE_READY
    client.states["model_0007"] = c.STATE_READY
    client.calls.clear()
    exporter.poll_once()
    assert len(folds) == 3
    assert "config:model_0007" in client.calls  # ready again: its config is read again


def test_index_reader_refolds_equal_json_of_another_type():
    """``1 == True`` in Python but the exported version differs: no shortcut for such an index."""
    reader = snapshot.IndexReader()
    problems = snapshot.Problems()
    first = reader([{"name": "m", "version": 1, "state": "READY"}], problems)
    second = reader([{"name": "m", "version": True, "state": "READY"}], problems)
    assert [e.version for e in first] == ["1"] and [e.version for e in second] == ["True"]
    plain = [{"name": "m", "version": "1", "state": "READY", "reason": "x\ud800"}]
    again = snapshot.Problems()
    assert reader(plain, problems) is reader([dict(plain[0])], again)
    assert again.count == 1 and "not valid Unicode" in again.first  # problems counted again


def traced_poll(client: CountingClient) -> tuple[Exporter, dict]:
    """One poll of `client` with its spans kept: the exporter and its finished spans by name."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    exporter = Exporter(ExporterSettings(), client=client)  # type: ignore[arg-type]
    exporter._tracer = provider.get_tracer("test")
    exporter.poll_once()
    return exporter, {s.name: s for s in spans.get_finished_spans()}


class BreaksWhileStreamingStats(CountingClient):
    """Answers the stats request, then its body fails after one entry (a connection cut mid-stream)."""

    def all_stats(self):  # type: ignore[override]
        self.calls.append("stats")

        def entries():
            yield {"name": "model_0000", "version": "1", "inference_count": 0, "execution_count": 0}
            raise FetchError(c.TARGET_STATS, c.FAULT_CONNECTION, "reading stats: connection reset")

        return entries()


def test_a_fault_while_the_stats_body_streams_marks_the_stats_span():
    """The statistics are read as the poll decodes them: a fault in the body, after the request
    succeeded, is counted and marks the span of that call, as a fault of the request does."""
    exporter, by_name = traced_poll(BreaksWhileStreamingStats(3))
    assert by_name["GET /v2/models/stats"].attributes.get("error.type") == c.FAULT_CONNECTION
    assert "error.type" not in by_name["GET /metrics"].attributes
    errors = exporter.registry.get_sample_value(
        c.M_POLL_ERRORS, {c.L_TARGET: c.TARGET_STATS, c.L_KIND: c.FAULT_CONNECTION}
    )
    assert errors == 1


class AnswersAnIndexNoDecoderReads(CountingClient):
    """The repository index answered, but as a shape the index reader cannot take (an exception)."""

    def repository_index(self):  # type: ignore[override]
        self.calls.append("index")
        return 5  # JSON, but no list of entries


def test_a_payload_that_cannot_be_decoded_on_the_poll_thread_leaves_the_poll_span_unmarked():
    """Only a Triton call's span is marked with its fault: the index (and the metrics) are decoded on
    the poll thread under the poll's own span, which a part lost to a bad payload does not fail."""
    exporter, by_name = traced_poll(AnswersAnIndexNoDecoderReads(3))
    errors = exporter.registry.get_sample_value(
        c.M_POLL_ERRORS, {c.L_TARGET: c.TARGET_INDEX, c.L_KIND: c.FAULT_PARSE}
    )
    assert errors == 1
    assert "error.type" not in by_name["triton_sre.poll"].attributes
