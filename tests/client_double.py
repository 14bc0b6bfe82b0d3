"""What `Exporter.poll_once` asks of its client besides the fetches, for the tests' client doubles."""

from __future__ import annotations

from triton_sre import conventions as c


class PollClient:
    """A double answers at once from memory: one listener, and no deadline worth sharing."""

    timeout: float = c.DEFAULT_TIMEOUT_SECONDS
    separate_ports = False

    def until(self, ends_at: float) -> PollClient:
        return self
