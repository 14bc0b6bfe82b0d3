"""Which Triton release the exporter watches: `GET /v2` (server metadata, read-only), never every poll.

Read at the first poll that reaches Triton, again whenever Triton comes back after a poll that did
not reach it (down, restarting, replaced by another release behind the same address), and at a poll
that sees Triton restarted since the last one though none failed between (exporter/restarts.py); a
failed read is retried at the next poll. Exposed as `triton_sre_triton_info{version}` (1, one series:
the old one goes when the version changes) and handed to the doctor checks (exporter/inputs.py), which
then tell an input this release predates from one a flag or a config would fix.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Gauge

from triton_sre import conventions as c


def version_of(metadata: Mapping[str, Any] | None) -> str | None:
    """The `version` field of Triton's server metadata, None when absent or not a short string."""
    if not isinstance(metadata, Mapping):
        return None
    version = metadata.get("version")
    if not isinstance(version, str) or not version or len(version) > 64 or not version.isprintable():
        return None
    return version


class ServerRelease:
    def __init__(self, registry: CollectorRegistry) -> None:
        self._gauge = Gauge(
            c.M_TRITON_INFO,
            "1, labelled with the version Triton's server metadata (GET /v2) gives; read at start, when "
            "Triton comes back and when a poll sees it restarted, not every poll.",
            [c.LABEL_VERSION],
            registry=registry,
        )
        self.version: str | None = None
        self._stale = True  # read at the next poll that reaches Triton

    def observe(
        self, reached: bool, read: Callable[[], Mapping[str, Any] | None], restarted: bool = False
    ) -> bool:
        """One poll: `reached` when it read Triton's metrics, `restarted` when it saw Triton restarted.
        Calls `read` (GET /v2) when the version is unknown, Triton was not reached since the last read
        or it restarted; True when the version changed."""
        if restarted:
            self._stale = True
        if not reached:
            self._stale = True
            return False
        if not self._stale:
            return False
        version = version_of(read())
        if version is None:  # the read failed (counted by the caller) or said nothing: retry next poll
            return False
        self._stale = False
        if version == self.version:
            return False
        if self.version is not None:
            self._gauge.remove(self.version)
        self._gauge.labels(version).set(1)
        self.version = version
        return True
