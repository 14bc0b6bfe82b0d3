"""The HTTP servers' own metric, on the exporter's and the bot's /metrics (leaf: conventions only;
prometheus_client is imported when collected)."""

from __future__ import annotations

from typing import Any, Protocol

from triton_sre import conventions as c


class _Counted(Protocol):
    descriptor_shortages: int


class DescriptorShortages:
    """`triton_sre_http_descriptor_shortages_total` of a `httpserve.BoundedHTTPServer`, for a
    prometheus_client registry: accepts that failed for want of a file descriptor (EMFILE)."""

    def __init__(self, server: _Counted) -> None:
        self._server = server

    def collect(self) -> Any:
        from prometheus_client.core import CounterMetricFamily

        yield CounterMetricFamily(
            c.M_HTTP_DESCRIPTOR_SHORTAGES.removesuffix("_total"),
            "Connections the HTTP server could not accept for want of a file descriptor (EMFILE, "
            "ulimit -n); each closed the oldest waiting connection to make room.",
            value=self._server.descriptor_shortages,
        )
