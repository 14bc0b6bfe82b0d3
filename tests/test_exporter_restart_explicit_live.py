"""Restart or model control? The exporter and a real Triton 2.51 in EXPLICIT model control (tidy36).

Measured on the real 2.51 before deciding (docs/exporter.md, "A restart between two polls"): a new process
lists in the repository index, with a version and a state, only the models it loaded at start
(`--load-model`); a model loaded, unloaded or failed through model control is listed again by name alone.
An unload leaves the model UNAVAILABLE ``unloaded`` for the life of the process. So:

- an idle server (no model counted anything) killed and started again between two polls is seen by the
  model it forgot (before tidy36: missed, no counter had moved);
- every counted model unloaded and loaded again between two polls, while another stays unloaded, is no
  restart (before: counted as one, every counted counter went down);
- the host memory total is 0 in a new process's first seconds (`tests/data/restart_2.51/`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests
from test_exporter_live import settings_for
from test_exporter_restart_live import kill_and_start
from test_exporter_restarts import read
from test_exporter_scrapes import samples_of, value

from triton_sre import conventions as c
from triton_sre.demo import TAIL_MODEL, TEXT_ECHO, VECTOR_SCALE, traffic
from triton_sre.exporter.capacity import CapacityWatch
from triton_sre.exporter.llm import LLMCollector
from triton_sre.exporter.restarts import fresh_host
from triton_sre.exporter.service import Exporter, _counters_from_text
from triton_sre.exporter.snapshot import Problems

FRESH = Path(__file__).parent / "data" / "restart_2.51"


def _control(server: Any, model: str, action: str) -> None:
    response = requests.post(f"{server.http_url}/v2/repository/models/{model}/{action}", timeout=60)
    assert response.status_code == 200, response.text


def _restarts(exporter: Exporter) -> float | None:
    assert exporter.poll_once() is not None
    got = samples_of(exporter.metrics_text().decode())
    assert value(got, c.M_UP) == 1.0  # Triton answered every poll: never seen down
    return value(got, c.M_TRITON_RESTARTS)


def _gone(server: Any, model: str) -> None:
    """Wait for the model's `/metrics` series to go (the unload ends after the request returns)."""
    deadline = time.monotonic() + 30
    head = f'{c.NV_INFERENCE_COUNT}{{model="{model}",'
    while head in requests.get(server.metrics_url, timeout=10).text:
        assert time.monotonic() < deadline, f"{model}'s series stayed after its unload"
        time.sleep(0.2)


@pytest.mark.triton
def test_an_idle_server_restarted_between_two_polls_is_seen_by_the_model_it_forgot(
    fresh_triton_factory: Callable[..., Any],
) -> None:
    server = fresh_triton_factory(model_control_mode="explicit", load_models=(VECTOR_SCALE,))
    _control(server, TEXT_ECHO, "load")  # loaded through model control: a new process will not have it
    exporter = Exporter(settings_for(server))
    assert _restarts(exporter) == 0.0
    assert _restarts(exporter) == 0.0
    kill_and_start(server)
    time.sleep(3)  # past the new process's first CPU-metrics collection: the model alone says it
    assert _restarts(exporter) == 1.0  # no counter had moved: missed before tidy36
    assert _restarts(exporter) == 1.0


@pytest.mark.triton
def test_every_counted_model_unloaded_and_loaded_while_another_stays_unloaded_is_no_restart(
    fresh_triton_factory: Callable[..., Any],
) -> None:
    server = fresh_triton_factory(model_control_mode="explicit", load_models=(VECTOR_SCALE, TEXT_ECHO))
    _control(server, TAIL_MODEL, "load")
    _control(server, TAIL_MODEL, "unload")
    _gone(server, TAIL_MODEL)
    for model in (VECTOR_SCALE, TEXT_ECHO):
        for _ in range(3):
            traffic.infer(server.http_url, model)
    exporter = Exporter(settings_for(server))
    assert _restarts(exporter) == 0.0
    for model in (VECTOR_SCALE, TEXT_ECHO):  # every counted model, between two polls
        _control(server, model, "unload")
        _gone(server, model)
        _control(server, model, "load")
    assert _restarts(exporter) == 0.0  # counted as a restart before tidy36
    # A real restart after it is still one: the counters (and the forgotten tail_model) say it.
    for _ in range(2):
        traffic.infer(server.http_url, VECTOR_SCALE)
    assert _restarts(exporter) == 0.0
    kill_and_start(server)
    assert _restarts(exporter) == 1.0


def _host_total(body: str) -> float | None:
    watch = CapacityWatch()
    _counters_from_text(body, Problems(), LLMCollector(), watch)
    return watch.reading().host.get(c.NV_CPU_MEMORY_TOTAL_BYTES)


def test_a_new_process_reads_no_host_memory_in_its_first_seconds() -> None:
    first = _host_total((FRESH / "metrics_first_second.txt").read_text())
    later = _host_total((FRESH / "metrics_3s_later.txt").read_text())
    assert first == 0.0 and later is not None and later > 0
    assert fresh_host(later, first)  # a poll that lands in a new process's first seconds
    assert not fresh_host(first, later) and not fresh_host(later, later) and not fresh_host(None, first)
    assert read((FRESH / "metrics_first_second.txt").read_text())[0]  # the startup model's series are there
