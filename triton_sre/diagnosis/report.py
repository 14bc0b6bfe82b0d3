"""What a diagnosis returns: findings with their evidence, unmatched error templates, the release.

Plain frozen records shared by the engine, the renderers, lint, the bot and the exporter.
"""

from __future__ import annotations

from dataclasses import dataclass

from triton_sre import conventions as c

__all__ = ["MAX_EVIDENCE", "MAX_EVIDENCE_CHARS", "CutShort", "Evidence", "Finding", "Report", "Unmatched"]

MAX_EVIDENCE = 12
MAX_EVIDENCE_CHARS = 2000


@dataclass(frozen=True, slots=True)
class Evidence:
    line: int
    text: str


@dataclass(frozen=True, slots=True)
class Finding:
    model: str | None
    version: str | None
    runbook: str
    title: str
    severity: str
    evidence: tuple[Evidence, ...]
    remediation: str
    consequence_of: str | None = None
    """For a finding caused by another model's failure (an ensemble step): that model."""
    message: str | None = None
    """The raw failure message Triton gave (the reason after ``failed to load 'm' version v:``,
    a status-table cell, the server's error), so an unexplained failure still says what it was."""
    release_advice: str | None = None
    """What is known about this finding in the log's release (`releases.KNOWN_ISSUES`, with the
    public source); also appended to ``remediation`` for consumers that show one line."""


@dataclass(frozen=True, slots=True)
class Unmatched:
    template: str
    count: int
    example: Evidence


@dataclass(frozen=True, slots=True)
class CutShort:
    """A compressed log that ends before its end-of-stream marker (a download or copy cut): what decoded
    was diagnosed; the rest of the log is lost."""

    compression: str
    """``gzip``, ``bzip2`` or ``xz``."""
    at_byte: int
    """The length of the compressed stream read: where it was cut."""


@dataclass(frozen=True, slots=True)
class Report:
    findings: tuple[Finding, ...]
    unmatched: tuple[Unmatched, ...]
    harmless_lines: int = 0
    events: int = 0
    release: str | None = None
    """The NGC release (``YY.MM``) the log names (banner or ``server_version``, else the one server image
    it runs), if any."""
    still_loading: tuple[str, ...] = ()
    """``model:version`` of each load the log starts and shows no outcome for (`progress.LoadProgress`):
    the log ends first, so what happened to them is not in it."""
    live: bool = False
    """Read from a live server's repository index (its release from ``GET /v2``), not from a log."""
    serving_lines: int = 0
    """Error lines whose wording a healthy server writes while it serves or stops (a request's bookkeeping, a
    cancel, a shutdown: `level_inventory`), not read as failures."""
    cut_short: CutShort | None = None
    """Set when the log was a compressed stream cut short: the findings are those of the part that decoded."""

    @property
    def has_failure(self) -> bool:
        """True when any finding is critical (a model, or the server, failed)."""
        return any(f.severity == c.IMPACT_CRITICAL for f in self.findings)
