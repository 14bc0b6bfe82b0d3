"""The exporter's idle connections to Triton's listeners (exporter/idleconn.py, tidy37): closed by the far end
between two polls is a restart only when every listener closed them, within an interval they were held through
before. Real loopback listeners here (closing the accepted sockets is what the kernel does when the process
dies); `tests/test_exporter_restart_idle_live.py` kills the real 2.51."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry

from triton_sre.exporter.idleconn import IdleConnections
from triton_sre.exporter.restarts import RestartWatch
from triton_sre.exporter.snapshot import IndexEntry


class Listener:
    """A loopback listener keeping what it accepts; `close_accepted` is its process dying."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.accepted: list[socket.socket] = []
        self.closing_after: float | None = None  # a proxy's idle limit: closes what it accepts after this
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(conn)
            if self.closing_after is not None:
                threading.Timer(self.closing_after, conn.close).start()

    def close_accepted(self) -> None:
        for conn in self.accepted:
            conn.close()
        self.accepted.clear()

    def wait_accepted(self, count: int) -> None:
        deadline = time.monotonic() + 5
        while len(self.accepted) < count:
            assert time.monotonic() < deadline
            time.sleep(0.01)


@pytest.fixture
def listeners() -> Iterator[tuple[Listener, Listener]]:
    pair = Listener(), Listener()
    yield pair
    for one in pair:
        one.close_accepted()
        one.sock.close()


def _settled() -> None:
    time.sleep(0.1)  # a close reaches the other end's socket


def test_a_close_after_an_interval_held_is_a_restart(listeners: tuple[Listener, Listener]) -> None:
    api, metrics = listeners
    idle = IdleConnections([api.url, metrics.url + "/metrics"])
    assert idle.closed_by_server(0.0) is False  # none opened yet
    idle.renew(0.0)
    api.wait_accepted(1), metrics.wait_accepted(1)
    api.close_accepted(), metrics.close_accepted()
    _settled()
    assert idle.closed_by_server(15.0) is False  # the first interval: nothing was held through one yet
    idle.renew(15.0)
    api.wait_accepted(1), metrics.wait_accepted(1)
    assert idle.closed_by_server(30.0) is False  # held through 15 s
    idle.renew(30.0)
    api.wait_accepted(2), metrics.wait_accepted(2)
    api.close_accepted(), metrics.close_accepted()
    _settled()
    assert idle.closed_by_server(48.0) is True  # closed within 1.25 x the interval held: a new process
    idle.renew(48.0)
    api.wait_accepted(1), metrics.wait_accepted(1)
    assert idle.closed_by_server(63.0) is False
    idle.drop()


def test_one_listener_closing_or_a_late_look_is_no_restart(listeners: tuple[Listener, Listener]) -> None:
    api, metrics = listeners
    idle = IdleConnections([api.url, metrics.url])
    idle.renew(0.0)
    assert idle.closed_by_server(10.0) is False
    idle.renew(10.0)
    api.wait_accepted(2)
    api.close_accepted()  # the API's connection only
    _settled()
    assert idle.closed_by_server(20.0) is False
    idle.renew(20.0)
    api.wait_accepted(1), metrics.wait_accepted(3)
    api.close_accepted(), metrics.close_accepted()
    _settled()
    assert idle.closed_by_server(20.0 + 10.0 * 1.25 + 1.0) is False  # longer than any interval held
    idle.drop()


def test_a_proxy_closing_idle_connections_within_the_interval_is_never_a_restart(
    listeners: tuple[Listener, Listener],
) -> None:
    api, metrics = listeners
    api.closing_after = metrics.closing_after = 0.05
    idle = IdleConnections([api.url, metrics.url])
    seen = []
    for poll in range(6):
        seen.append(idle.closed_by_server(poll * 15.0))
        idle.renew(poll * 15.0)
        time.sleep(0.2)  # the proxy's limit passes before the next poll
    assert seen == [False] * 6
    idle.drop()


def test_no_listener_or_a_client_double_gives_no_evidence() -> None:
    free = socket.create_server(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()  # nothing listens there: refused at once
    idle = IdleConnections([f"http://127.0.0.1:{port}", ""])
    idle.renew(0.0)
    assert idle.closed_by_server(10.0) is False
    assert IdleConnections([]).closed_by_server(10.0) is False


def test_the_watch_counts_it_unless_a_model_stayed_unloaded() -> None:
    watch = RestartWatch(CollectorRegistry())
    ready = [IndexEntry("m", "1", "READY", "")]
    assert watch.observe({}, {}, ready) is False
    assert watch.observe({}, {}, ready, closed_by_server=True) is True
    unloaded = [*ready, IndexEntry("u", "1", "UNAVAILABLE", "unloaded")]
    assert watch.observe({}, {}, unloaded) is False
    assert watch.observe({}, {}, unloaded, closed_by_server=True) is False  # the same process set that state
