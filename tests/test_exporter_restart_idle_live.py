"""An idle real Triton 2.51 in NONE model control, killed and started again between two polls that come long
after its first seconds (tidy37): nothing it serves tells the two processes apart (no counted request, the
host memory total already read, the index and statistics alike), and the exporter sees the restart by its
idle connections, which the new process does not hold (exporter/idleconn.py). Before tidy37: missed."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests
from test_exporter_live import settings_for
from test_exporter_restart_live import kill_and_start
from test_exporter_scrapes import samples_of, value

from triton_sre import conventions as c
from triton_sre.demo import SAMPLE_REPOSITORY, VECTOR_SCALE
from triton_sre.exporter.service import Exporter

pytestmark = pytest.mark.triton
_FRESH_HOST_S = 4.0  # past the new process's first CPU-metrics collection (~2 s): its memory total is read


def _restarts(exporter: Exporter) -> float | None:
    assert exporter.poll_once() is not None
    got = samples_of(exporter.metrics_text().decode())
    assert value(got, c.M_UP) == 1.0  # Triton answered every poll: never seen down
    return value(got, c.M_TRITON_RESTARTS)


def _host_total(server: Any) -> float:
    text = requests.get(server.metrics_url, timeout=10).text
    return float(
        next(line.split()[-1] for line in text.splitlines() if line.startswith(c.NV_CPU_MEMORY_TOTAL_BYTES))
    )


def test_an_idle_restart_polled_after_its_first_seconds_is_counted(
    fresh_triton_factory: Callable[..., Any], tmp_path: Path
) -> None:
    repository = tmp_path / "models"
    shutil.copytree(SAMPLE_REPOSITORY / VECTOR_SCALE, repository / VECTOR_SCALE)
    server = fresh_triton_factory(repository)  # NONE model control: every model loaded at start
    exporter = Exporter(settings_for(server))
    # the interval the connections are held through must cover the restart's (a start takes seconds here)
    interval = max(10.0, 1.6 * (2 * (server.startup_seconds or 5.0) + _FRESH_HOST_S))
    time.sleep(_FRESH_HOST_S)
    assert _restarts(exporter) == 0
    time.sleep(interval)
    assert _restarts(exporter) == 0  # held through an interval: the same process
    polled = time.monotonic()
    index = requests.post(f"{server.http_url}/v2/repository/index", json={}, timeout=10).json()

    kill_and_start(server)
    time.sleep(_FRESH_HOST_S)
    assert _host_total(server) > 0  # the fresh-host rule cannot see it
    assert requests.post(f"{server.http_url}/v2/repository/index", json={}, timeout=10).json() == index
    assert time.monotonic() - polled <= 1.25 * interval, "the restart took longer than the test allows for"

    assert _restarts(exporter) == 1
    time.sleep(min(interval, 10.0))
    assert _restarts(exporter) == 1  # the new process holds the new connections
