"""Shared fixtures: one real Triton server for the whole session, private ones on demand.

Tests that need Triton fail (they are not skipped) when nvidia-pytriton is missing: the server
is part of what this project is tested against.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from live_prometheus import live  # noqa: F401  (the session's one real Prometheus)

from triton_sre.demo import SAMPLE_REPOSITORY
from triton_sre.stack.local_triton import LocalTriton, LocalTritonError

TRITON_FIXTURES = ("triton", "fresh_triton_factory")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test using a Triton fixture with ``triton``, and every ``triton`` test with ``server``.

    ``-m 'not triton and not server and not slow'`` keeps the quick tests: no server, no [server] extra,
    no whole rule-engine suite.
    """
    for item in items:
        if any(name in getattr(item, "fixturenames", ()) for name in TRITON_FIXTURES):
            item.add_marker(pytest.mark.triton)
        if item.get_closest_marker("triton") is not None:
            item.add_marker(pytest.mark.server)


@pytest.fixture(scope="session")
def triton(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalTriton]:
    """The shared Triton on the sample repository (broken models included), for the whole session.

    Tests may send traffic to it, so compare counters before and after rather than absolute values.
    Do not stop or kill it: use ``fresh_triton_factory`` for that.
    """
    workdir = tmp_path_factory.mktemp("triton-shared")
    server = LocalTriton(
        SAMPLE_REPOSITORY,
        exit_on_error=False,
        metrics_config=["summary_latencies=true"],
        workdir=workdir,
    )
    started = time.monotonic()
    server.start()
    print(f"\nshared Triton up in {time.monotonic() - started:.2f}s: {server!r}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fresh_triton_factory(tmp_path: Any) -> Iterator[Callable[..., LocalTriton]]:
    """Start private Triton servers (e.g. to kill them); all are stopped at teardown.

    ``fresh_triton_factory(**kwargs)`` takes LocalTriton's arguments; the repository defaults to
    the sample one and each server gets its own work directory under ``tmp_path``.
    """
    started: list[LocalTriton] = []

    def make(model_repository: Any = SAMPLE_REPOSITORY, *, start: bool = True, **kwargs: Any) -> LocalTriton:
        workdir = kwargs.pop("workdir", None)
        for attempt in (1, 2):
            server = LocalTriton(
                model_repository, workdir=workdir or tmp_path / f"triton-{len(started)}", **kwargs
            )
            started.append(server)
            if not start:
                return server
            try:
                server.start()
                return server
            except LocalTritonError as exc:
                # The Python backend's shared-memory mutex times out on a starved host and the server
                # aborts (`boost::interprocess::lock_exception`, signal 6; upstream: server#8882,
                # tensorrtllm_backend#521): Triton's flake, not the test's subject. Once more only.
                if attempt == 2 or "boost::interprocess::lock_exception" not in str(exc):
                    raise
                print(
                    f"\nTriton aborted on the Python backend's lock timeout; starting once more: {server!r}"
                )
                server.stop()
        raise AssertionError("unreachable")

    try:
        yield make
    finally:
        for server in started:
            server.stop()
