"""OpenTelemetry tracing: OTLP over HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, silent otherwise."""

from __future__ import annotations

import os
from collections.abc import Mapping

import requests
from opentelemetry import trace

from triton_sre import __version__
from triton_sre.httpclient import new_session

_ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
_CREDENTIAL_VARS = (
    "OTEL_PYTHON_EXPORTER_OTLP_HTTP_CREDENTIAL_PROVIDER",
    "OTEL_PYTHON_EXPORTER_OTLP_HTTP_TRACES_CREDENTIAL_PROVIDER",
)
_provider = None


def tracer() -> trace.Tracer:
    """A tracer exporting over OTLP/HTTP if configured by the standard variables, else a no-op one.

    The exporter reads its endpoint, headers and timeouts from the standard OTEL_* variables
    itself; nothing here logs them (headers may carry credentials).
    """
    global _provider
    env = os.environ
    if not any(env.get(name) for name in _ENDPOINT_VARS):
        return trace.NoOpTracer()
    if _provider is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        resource = Resource.create(
            {"service.name": env.get("OTEL_SERVICE_NAME", "triton-sre"), "service.version": __version__}
        )
        _provider = TracerProvider(resource=resource)
        _provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(session=_session(env))))
    return _provider.get_tracer("triton_sre")


def _session(env: Mapping[str, str]) -> requests.Session | None:
    """The exporter's requests session: `httpclient`'s, so a collector on loopback (a sidecar at
    `http://localhost:4318`) is never asked of the proxy the environment names; None (the SDK's own)
    when a credential provider names the session to use."""
    if any(env.get(name) for name in _CREDENTIAL_VARS):
        return None
    return new_session()


def mark_error(kind: str) -> None:
    """Mark the current span (a Triton call's, when there is one) as failed with this fault kind."""
    trace.get_current_span().set_attribute("error.type", kind)


def shutdown() -> None:
    """Flush pending spans (call on exit)."""
    if _provider is not None:
        _provider.shutdown()
