"""The exporter's HTTP side: the poll thread and the read-only endpoints, started and stopped together.

`/metrics` (rendered once per poll), `/healthz`, `/readyz`, `/debug/models`; GET and HEAD only.
"""

from __future__ import annotations

import json
import logging
import threading
from http import HTTPStatus
from typing import TYPE_CHECKING

from prometheus_client.exposition import CONTENT_TYPE_LATEST

from triton_sre import __version__
from triton_sre import conventions as c
from triton_sre.httpmetrics import DescriptorShortages
from triton_sre.httpserve import BoundedHTTPServer, SafeHandler

if TYPE_CHECKING:
    from triton_sre.exporter.service import Exporter

log = logging.getLogger("triton_sre.exporter.service")  # the service's logger, as before the split

STOP_WAIT_SECONDS = 0.25
"""How long a stop waits for the poll in flight. The poll thread is a daemon holding nothing to save
(the window lives in memory): a poll hung on Triton (up to `timeout`, 30 s if so configured) is left
to end with the process, so SIGTERM stops a sidecar within its pod's grace period."""


class ExporterServer:
    """The poll thread plus the HTTP server, started and stopped together."""

    def __init__(self, exporter: Exporter, host: str, port: int) -> None:
        self.exporter = exporter
        self._stop = threading.Event()
        self._httpd = BoundedHTTPServer((host, port), _handler_for(exporter))
        self._shortages = DescriptorShortages(self._httpd)  # on the exporter's /metrics while serving
        exporter.registry.register(self._shortages)
        self._threads = [
            threading.Thread(target=exporter.run, args=(self._stop,), name="triton-sre-poll", daemon=True),
            threading.Thread(target=self._httpd.serve_forever, name="triton-sre-http", daemon=True),
        ]

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return self._httpd.local_url

    def start(self) -> ExporterServer:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        poll, http = self._threads
        http.join(timeout=10)
        poll.join(timeout=STOP_WAIT_SECONDS)
        if poll.is_alive():
            log.info("stopped with a poll of Triton in flight (not waited for)")
        else:
            self.exporter.close()
        self.exporter.registry.unregister(self._shortages)

    def __enter__(self) -> ExporterServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _handler_for(exporter: Exporter) -> type[SafeHandler]:
    class Handler(SafeHandler):
        """GET and HEAD only: every other method is 405 (SafeHandler)."""

        server_version = f"triton-sre/{__version__}"
        logger = log

        def do_GET(self) -> None:
            path = self.bare_path
            if path == c.PATH_METRICS:
                self._send(HTTPStatus.OK, exporter.metrics_text(), CONTENT_TYPE_LATEST)
            elif path == c.PATH_HEALTHZ:
                self._send(HTTPStatus.OK, b"ok\n")
            elif path == c.PATH_READYZ:
                if exporter.ready.is_set():
                    self._send(HTTPStatus.OK, b"ready\n")
                else:
                    self._send(HTTPStatus.SERVICE_UNAVAILABLE, b"no successful poll of Triton yet\n")
            elif path == c.PATH_DEBUG_MODELS:
                body = json.dumps(exporter.debug_models(), indent=2).encode()
                self._send(HTTPStatus.OK, body, "application/json")
            else:
                self._send(HTTPStatus.NOT_FOUND, b"not found\n")

        def do_HEAD(self) -> None:
            self.do_GET()

        def _send(
            self, status: HTTPStatus, body: bytes, content_type: str = "text/plain; charset=utf-8"
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

    return Handler
