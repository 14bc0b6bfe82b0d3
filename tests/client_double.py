"""What `Exporter.poll_once` asks of its client besides the fetches, for the tests' client doubles."""

from __future__ import annotations

from triton_sre import conventions as c


class PollClient:
    """A double answers at once from memory: one listener, and no deadline worth sharing."""

    timeout: float = c.DEFAULT_TIMEOUT_SECONDS
    separate_ports = False

    def until(self, ends_at: float) -> PollClient:
        return self

    def server_metadata(self) -> dict[str, object]:
        """GET /v2 of a double that says no version: the exporter exports no triton_sre_triton_info and
        reads the doctor checks without the release (a double replaying a capture answers its own)."""
        return {}
