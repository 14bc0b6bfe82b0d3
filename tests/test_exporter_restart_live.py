"""The exporter and a real Triton 2.51 that restarts between two of its polls (exporter/restarts.py): a
private server (never the shared one) is killed and started again on the same ports before the next
poll, so no poll sees it down; a model loaded again, and another unloaded and loaded, are no restart."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from typing import Any

import pytest
import requests
from test_exporter_live import settings_for
from test_exporter_scrapes import samples_of, value

from triton_sre import conventions as c
from triton_sre.demo import TEXT_ECHO, VECTOR_SCALE, traffic
from triton_sre.exporter.service import Exporter

pytestmark = pytest.mark.triton


def _series_of(server: Any, model: str) -> list[str]:
    text = requests.get(server.metrics_url, timeout=10).text
    head = f'{c.NV_INFERENCE_COUNT}{{model="{model}",'
    return [line for line in text.splitlines() if line.startswith(head)]


def kill_and_start(server: Any) -> None:
    """The crash and the runtime's restart, on the same ports, before the exporter polls again."""
    pid = server.pid
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while server.returncode is None:
        assert time.monotonic() < deadline, "tritonserver did not die"
        time.sleep(0.1)
    server.start()
    assert server.pid != pid


def _control(server: Any, model: str, action: str) -> None:
    response = requests.post(f"{server.http_url}/v2/repository/models/{model}/{action}", timeout=60)
    assert response.status_code == 200, response.text


def test_a_restart_between_two_polls_is_counted_and_the_release_read_again(
    fresh_triton_factory: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = fresh_triton_factory(model_control_mode="explicit", load_models=(VECTOR_SCALE, TEXT_ECHO))
    exporter = Exporter(settings_for(server))
    reads: list[int] = []
    kind = type(exporter.client)
    real = kind.server_metadata
    monkeypatch.setattr(kind, real.__name__, lambda self: reads.append(1) or real(self))

    def poll() -> tuple[float | None, list[str]]:
        assert exporter.poll_once() is not None
        got = samples_of(exporter.metrics_text().decode())
        assert value(got, c.M_UP) == 1.0  # Triton answered every poll: never seen down
        return value(got, c.M_TRITON_RESTARTS), [s.labels[c.LABEL_VERSION] for s in got[c.M_TRITON_INFO]]

    for model in (VECTOR_SCALE, TEXT_ECHO):
        for _ in range(3):
            traffic.infer(server.http_url, model)
    version = requests.get(f"{server.http_url}/v2", timeout=10).json()["version"]
    assert poll() == (0.0, [version]) and len(reads) == 1

    _control(server, VECTOR_SCALE, "load")  # loaded again while loaded: its counters are kept
    assert poll() == (0.0, [version])
    _control(server, TEXT_ECHO, "unload")  # unloaded and loaded: its counters start from 0 ...
    deadline = time.monotonic() + 30
    while _series_of(server, TEXT_ECHO):
        assert time.monotonic() < deadline, "text_echo's series stayed after its unload"
        time.sleep(0.2)
    _control(server, TEXT_ECHO, "load")
    assert _series_of(server, TEXT_ECHO) == [f'{c.NV_INFERENCE_COUNT}{{model="{TEXT_ECHO}",version="1"}} 0']
    assert poll() == (0.0, [version]) and len(reads) == 1  # ... but vector_scale's did not: no restart

    kill_and_start(server)
    assert poll() == (1.0, [version]) and len(reads) == 2  # counted, and GET /v2 read again at once
    assert poll() == (1.0, [version]) and len(reads) == 2  # once
