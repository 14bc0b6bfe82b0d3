"""OpenTelemetry tracing: OTLP over HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, silent otherwise."""

from __future__ import annotations

import os
from collections.abc import Mapping

from opentelemetry import trace

from triton_sre import __version__

_ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
_provider = None


def tracer(service_name: str = "triton-sre", environ: Mapping[str, str] | None = None) -> trace.Tracer:
    """A tracer exporting over OTLP/HTTP if configured by the standard variables, else a no-op one.

    The exporter reads its endpoint, headers and timeouts from the standard OTEL_* variables
    itself; nothing here logs them (headers may carry credentials).
    """
    global _provider
    env = os.environ if environ is None else environ
    if not any(env.get(name) for name in _ENDPOINT_VARS):
        return trace.NoOpTracer()
    if _provider is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        resource = Resource.create(
            {"service.name": env.get("OTEL_SERVICE_NAME", service_name), "service.version": __version__}
        )
        _provider = TracerProvider(resource=resource)
        _provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return _provider.get_tracer("triton_sre")


def mark_error(kind: str) -> None:
    """Mark the current span (a Triton call's, when there is one) as failed with this fault kind."""
    trace.get_current_span().set_attribute("error.type", kind)


def shutdown() -> None:
    """Flush pending spans (call on exit)."""
    if _provider is not None:
        _provider.shutdown()
