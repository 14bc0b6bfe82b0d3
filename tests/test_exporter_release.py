"""The exporter's read of Triton's release (exporter/release.py): when it reads GET /v2, what it exports."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from triton_sre import conventions as c
from triton_sre.exporter.release import ServerRelease, version_of


def info(registry: CollectorRegistry) -> list[tuple[dict[str, str], float]]:
    text = generate_latest(registry).decode()
    return [(s.labels, s.value) for f in text_string_to_metric_families(text) for s in f.samples]


def test_read_at_start_and_again_only_after_triton_was_unreachable():
    registry = CollectorRegistry()
    release = ServerRelease(registry)
    answers = iter([{"version": "2.36.0"}, {"version": "2.51.0"}])
    reads: list[int] = []

    def read():
        reads.append(1)
        return next(answers)

    assert release.observe(True, read) and info(registry) == [({c.LABEL_VERSION: "2.36.0"}, 1.0)]
    assert not release.observe(True, read) and len(reads) == 1  # up: not read again
    assert not release.observe(False, read) and len(reads) == 1  # down: nothing to read
    assert release.observe(True, read) and len(reads) == 2  # back (upgraded behind the same address)
    assert info(registry) == [({c.LABEL_VERSION: "2.51.0"}, 1.0)]  # the old series is gone


def test_a_failed_or_versionless_read_is_retried_and_exports_nothing():
    registry = CollectorRegistry()
    release = ServerRelease(registry)
    assert not release.observe(True, lambda: None)  # the read failed (the poll counted it)
    assert not release.observe(True, dict)  # answered without a version
    assert info(registry) == [] and release.version is None
    assert release.observe(True, lambda: {"version": "2.51.0"})


def test_version_of_takes_a_short_printable_string_only():
    assert version_of({"name": "triton", "version": "2.51.0"}) == "2.51.0"
    versions = (2.51, "", "x" * 65, "2\n51")
    for bad in (None, [], {}, *({"version": v} for v in versions)):
        assert version_of(bad) is None  # type: ignore[arg-type]
