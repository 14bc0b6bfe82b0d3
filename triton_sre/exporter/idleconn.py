"""A restart that nothing Triton serves can show: an idle server killed and started again (tidy37).

Two idle 2.51 processes answer every read a poll makes alike (`GET /v2`, the repository index, the statistics,
the log and trace settings, the model configs; `/metrics` differs only in its series' order, which follows the
order the models happened to load, and in the host memory used): the counter rules of `restarts.py` need a
counted request, and the host memory total reads 0 only in a new process's first ~2 s. What a new process
cannot keep is a TCP connection the old one accepted: the kernel closes it when the process dies.

So after each poll that read the counters the exporter opens one idle connection to each of Triton's
listeners (the HTTP API's and the metrics'; nothing is ever sent on it) and, at the next poll, before its
fetches, looks without waiting whether the far end closed it (EOF, a reset, or bytes it never asked for).
Measured on the real 2.51 (bench/RESULTS.md, tidy37): a connection is kept through 3,000 requests and idle
spans of 60 to 240 s, a bare one (nothing sent) through 150 s, on both listeners; a SIGKILL closes both at
once.

Closed by the far end is taken as a restart only when every listener's connection was, and when the
connections of the poll before were held through an interval at least 1/1.25 as long: something between
the exporter and Triton (a proxy, a load balancer) that closes idle connections within the poll interval
closes every one, and is never counted; one that closes them only after a longer idle time never closes
these. Missed: a restart within the exporter's first interval (nothing held yet), and one while a poll
failed. Counted wrongly: a proxy between them restarted, or one whose idle limit sits within 25 % of the
poll interval (docs/exporter.md, "A restart between two polls").
"""

from __future__ import annotations

import contextlib
import select
import socket
from collections.abc import Sequence
from urllib.parse import urlsplit

_SLACK = 1.25  # how much longer than the longest interval held a closed interval may be
_CONNECT_SECONDS = 1.0  # at most, per listener, after a poll that reached them


def _address(url: str) -> tuple[str, int] | None:
    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None
    return (parts.hostname, port) if parts.hostname else None


def _closed(sock: socket.socket) -> bool:
    """Whether the far end closed ``sock`` (or spoke unasked, as a server does before it closes)."""
    try:
        return bool(select.select([sock], [], [], 0)[0])
    except (OSError, ValueError):
        return True


class IdleConnections:
    """One idle connection per Triton listener, opened after a poll and looked at before the next."""

    def __init__(self, urls: Sequence[str], connect_seconds: float = _CONNECT_SECONDS) -> None:
        found = [_address(url) for url in urls]
        self._addresses = list(dict.fromkeys(a for a in found if a is not None))
        self._connect_seconds = connect_seconds
        self._socks: list[socket.socket] = []
        self._opened = 0.0  # time.monotonic() when they were opened
        self._held = 0.0  # the longest interval a whole set was seen held through

    def closed_by_server(self, now: float) -> bool:
        """Before a poll's fetches: whether every connection opened after the last poll was closed by the far
        end, within an interval Triton held them through before (then a new process accepts now)."""
        if not self._socks:
            return False
        age = now - self._opened
        closed = [_closed(sock) for sock in self._socks]
        if not any(closed):
            self._held = max(self._held, age)
            return False
        return all(closed) and 0.0 < age <= self._held * _SLACK

    def renew(self, now: float) -> None:
        """After a poll that read the counters: the checked connections closed, new ones opened (a listener
        that cannot be reached within `connect_seconds` leaves none: nothing to compare at the next poll)."""
        self.drop()
        socks = []
        for address in self._addresses:
            try:
                sock = socket.create_connection(address, timeout=self._connect_seconds)
            except OSError:
                for sock in socks:
                    sock.close()
                return
            sock.setblocking(False)
            socks.append(sock)
        self._socks, self._opened = socks, now

    def drop(self) -> None:
        """Close them (a failed poll: they say nothing of the next one)."""
        for sock in self._socks:
            with contextlib.suppress(OSError):
                sock.close()
        self._socks = []
