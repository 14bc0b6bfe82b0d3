"""One poll, one deadline: against a Triton that accepts and never answers, a poll ends within
`timeout` (plus a little), whatever the number of calls; the calls that could not start in time
are counted as `timeout` faults of their target, and `/metrics` keeps answering.

Quick tests use local sockets that accept and never answer (`test_fault_probes.Silent`); the ones
with a last good snapshot read the real Triton through `faultproxy` (marked `triton`).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest
import requests
from faultproxy import HANG
from test_exporter_faults import exporter_behind_proxy, fresh_exporter_behind_proxy
from test_fault_probes import Silent
from test_fault_probes_services import _poll_errors as _errors
from test_fault_probes_services import _samples

from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.exporter.rescue import Rescue
from triton_sre.exporter.service import Exporter, ExporterServer
from triton_sre.triton.client import BudgetSpent, FetchError, TritonClient

TIMEOUT = 1.0
BOUND = 1.6 * TIMEOUT  # one timeout, plus the slack of the cut and the derive
API_TARGETS = (c.TARGET_INDEX, c.TARGET_STATS)


@pytest.fixture
def hung_pair() -> Iterator[tuple[Silent, Silent]]:
    """Two listeners that accept and never answer: the HTTP API port and the metrics port."""
    api, metrics = Silent(), Silent()
    yield api, metrics
    api.close()
    metrics.close()


__all__ = ["exporter_behind_proxy", "fresh_exporter_behind_proxy"]  # fixtures shared with that module


def _timed_poll(exporter: Exporter) -> float:
    started = time.monotonic()
    exporter.poll_once()
    return time.monotonic() - started


def _scrape(server: ExporterServer) -> dict:
    answer = requests.get(server.url + c.PATH_METRICS, timeout=5)
    assert answer.status_code == 200
    return _samples(answer.text)


def test_one_poll_against_hung_ports_takes_one_timeout(hung_pair: tuple[Silent, Silent]) -> None:
    """Metrics on another port (Triton's layout), both hung: the service's own first poll costs one
    timeout, and `/metrics` answers while it waits."""
    api, metrics = hung_pair
    settings = ExporterSettings(
        triton_url=api.url, metrics_url=f"{metrics.url}/metrics", interval=3600, timeout=TIMEOUT
    )
    with ExporterServer(Exporter(settings), "127.0.0.1", 0) as server:
        assert api.accepted.wait(5) and metrics.accepted.wait(5)  # the poll thread is waiting on both
        samples = _scrape(server)  # answered during the hung poll
        assert samples[(c.M_POLL_DURATION + "_count", ())] == 0
        ends = time.monotonic() + 10
        while samples[(c.M_POLL_DURATION + "_count", ())] == 0 and time.monotonic() < ends:
            time.sleep(0.05)
            samples = _scrape(server)
        assert samples[(c.M_POLL_DURATION + "_count", ())] == 1
        took = samples[(c.M_POLL_DURATION + "_sum", ())]
        assert took < BOUND, f"one poll took {took:.2f}s with timeout {TIMEOUT:g}s"
        assert samples[(c.M_UP, ())] == 0
        for target in (c.TARGET_METRICS, *API_TARGETS):
            assert _errors(samples, target, c.FAULT_TIMEOUT) == 1, target
            assert _errors(samples, target, c.FAULT_CONNECTION) == 0, target
        assert requests.get(server.url + c.PATH_HEALTHZ, timeout=5).status_code == 200
        assert requests.get(server.url + c.PATH_READYZ, timeout=5).status_code == 503


def test_one_hung_listener_for_both_costs_one_timeout() -> None:
    """Metrics and API on one listener (a proxy in front): fetched in turn, still one deadline; the
    calls left when it passed are not made and are counted as timeouts."""
    hung = Silent()
    try:
        settings = ExporterSettings(
            triton_url=hung.url, metrics_url=f"{hung.url}/metrics", interval=3600, timeout=TIMEOUT
        )
        exporter = Exporter(settings)
        took = _timed_poll(exporter)
        assert took < BOUND, f"one poll took {took:.2f}s with timeout {TIMEOUT:g}s"
        assert len(hung.held) == 1  # the index and the statistics were not requested
        samples = _samples(exporter.metrics_text().decode())
        for target in (c.TARGET_METRICS, *API_TARGETS):
            assert _errors(samples, target, c.FAULT_TIMEOUT) == 1, target
    finally:
        hung.close()


def test_hung_metrics_port_leaves_the_api_its_time(hung_pair: tuple[Silent, Silent]) -> None:
    """Only the metrics port hangs (the API port refuses): the API side is tried meanwhile, and its
    own fault is what is counted for it, not a timeout it never had."""
    _, metrics = hung_pair
    with socket.socket() as unused:  # bound, never listening: connecting is refused
        unused.bind(("127.0.0.1", 0))
        refused_url = f"http://127.0.0.1:{unused.getsockname()[1]}"
        settings = ExporterSettings(
            triton_url=refused_url, metrics_url=f"{metrics.url}/metrics", interval=3600, timeout=TIMEOUT
        )
        exporter = Exporter(settings)
        took = _timed_poll(exporter)
    assert took < BOUND
    samples = _samples(exporter.metrics_text().decode())
    assert _errors(samples, c.TARGET_METRICS, c.FAULT_TIMEOUT) == 1
    for target in API_TARGETS:
        assert _errors(samples, target, c.FAULT_CONNECTION) == 1, target
        assert _errors(samples, target, c.FAULT_TIMEOUT) == 0, target


def _until(condition: Callable[[], bool]) -> None:
    ends = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < ends
        time.sleep(0.01)


def test_the_api_side_moves_to_a_second_thread_only_when_the_metrics_fetch_is_slow() -> None:
    ran: list[str] = []

    def api() -> str:
        ran.append(threading.current_thread().name)
        return "answers"

    quick = Rescue(api, after=0.5)
    quick.keep()  # the metrics arrived in time: the poll thread reads the API side itself
    quick.join()
    assert not quick.rescued
    assert ran == []

    slow = Rescue(api, after=0.05)
    _until(lambda: slow.rescued)  # the metrics fetch is still running
    slow.keep()
    assert slow.rescued
    assert slow.result() == "answers"
    assert ran == ["triton-sre-poll-api"]

    def broken() -> str:
        raise KeyError("a bug on the rescue thread")

    failing = Rescue(broken, after=0.0)
    _until(lambda: failing.rescued)
    with pytest.raises(KeyError):
        failing.result()  # handed to the poll thread, which counts it as internal


def test_a_call_after_the_shared_deadline_is_not_made(hung_pair: tuple[Silent, Silent]) -> None:
    api, _ = hung_pair
    client = TritonClient(api.url, f"{api.url}/metrics", timeout=TIMEOUT).until(time.monotonic() - 0.001)
    with pytest.raises(BudgetSpent) as raised:
        client.repository_index()
    assert raised.value.target == c.TARGET_INDEX
    assert raised.value.kind == c.FAULT_TIMEOUT
    time.sleep(0.1)
    assert not api.accepted.is_set()  # no connection was opened


def test_a_call_gets_what_is_left_of_the_shared_deadline(hung_pair: tuple[Silent, Silent]) -> None:
    api, _ = hung_pair
    started = time.monotonic()
    client = TritonClient(api.url, f"{api.url}/metrics", timeout=5.0).until(started + 0.4)
    with pytest.raises(FetchError) as raised:
        client.server_metadata()
    took = time.monotonic() - started
    assert raised.value.kind == c.FAULT_TIMEOUT
    assert not isinstance(raised.value, BudgetSpent)  # this one was made, and cut
    assert 0.3 < took < 1.0, took
    plain = TritonClient(api.url, f"{api.url}/metrics", timeout=0.3)  # no shared deadline: its own
    started = time.monotonic()
    with pytest.raises(FetchError):
        plain.server_metadata()
    assert 0.25 < time.monotonic() - started < 1.0


def test_separate_ports_are_two_listeners() -> None:
    assert TritonClient("http://h:8000", "http://h:8002/metrics").separate_ports
    assert not TritonClient("http://h:8000/", "http://h:8000/metrics").separate_ports
    assert TritonClient("http://h:8000", "https://h:8000/metrics").separate_ports


# -- the real Triton, through fault proxies: a last good snapshot is kept -------------------------
def test_hung_triton_after_a_good_poll_costs_one_timeout_and_keeps_the_snapshot(
    exporter_behind_proxy,
) -> None:
    exporter, metrics_proxy, api_proxy = exporter_behind_proxy  # one good poll made
    bound = 1.6 * exporter.settings.timeout
    assert exporter.up
    models = {s.model for s in exporter.derivation.states}
    assert models

    api_proxy.set_fault("/v2", HANG)
    metrics_proxy.set_fault("/metrics", HANG)
    took = _timed_poll(exporter)
    assert took < bound, f"one poll took {took:.2f}s with timeout {exporter.settings.timeout:g}s"
    samples = _samples(exporter.metrics_text().decode())
    assert samples[(c.M_UP, ())] == 0
    for target in (c.TARGET_METRICS, *API_TARGETS):
        assert _errors(samples, target, c.FAULT_TIMEOUT) == 1, target
    assert samples[(c.M_LAST_SUCCESS, ())] > 0  # the last good poll's time, not reset
    assert {s.model for s in exporter.derivation.states} == models  # the last good index still shown

    api_proxy.set_fault("/v2", None)  # only the metrics port hangs now: the API is read meanwhile
    took = _timed_poll(exporter)
    assert took < bound
    samples = _samples(exporter.metrics_text().decode())
    assert _errors(samples, c.TARGET_METRICS, c.FAULT_TIMEOUT) == 2
    for target in API_TARGETS:
        assert _errors(samples, target, c.FAULT_TIMEOUT) == 1, target  # no new fault: read in time
    assert samples[(c.M_UP, ())] == 0

    metrics_proxy.set_fault("/metrics", None)
    exporter.poll_once()
    assert exporter.up


def test_configs_left_when_the_deadline_passes_wait_for_the_next_poll(fresh_exporter_behind_proxy) -> None:
    exporter, _, api_proxy = fresh_exporter_behind_proxy  # no poll yet: every config to fetch
    index = exporter.client.repository_index()
    ready = sorted({e["name"] for e in index if e.get("state") == c.STATE_READY})
    assert len(ready) >= 2
    first = f"/v2/models/{ready[0]}/config"
    api_proxy.set_fault(first, HANG)  # the first config fetched hangs: the poll's time runs out
    took = _timed_poll(exporter)
    assert took < 1.6 * exporter.settings.timeout
    assert exporter.up  # metrics, index and statistics were read before the configs
    samples = _samples(exporter.metrics_text().decode())
    # the hung one, cut, and the next one, not made: the others are not tried this poll
    assert _errors(samples, c.TARGET_CONFIG, c.FAULT_TIMEOUT) == 2
    assert [path for path in api_proxy.requests if path.endswith("/config")] == [first]
    api_proxy.set_fault(first, None)
    exporter.poll_once()
    assert set(exporter._configs.view) == set(ready)  # fetched on the next poll


def test_the_release_read_after_a_slow_fold_gets_its_own_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """GET /v2 comes after the metrics are folded (a restart is seen in the counters), and the fold of a
    fleet's body takes seconds: the read must not find the fetches' deadline spent (every first poll at
    10,000 models counted a server timeout and no release was ever read)."""
    from scrape_triton import SCRAPES, ScrapeTriton

    body = (SCRAPES / "ifa_captured_loaded_25.12_cpu.txt").read_bytes().split(b"\n\n", 1)[1]
    with ScrapeTriton(body) as triton:
        real_api = triton._api
        metadata = {"name": "triton", "version": "2.51.0"}
        monkeypatch.setattr(triton, "_api", lambda path: metadata if path == "/v2" else real_api(path))
        settings = ExporterSettings(
            triton_url=triton.url, metrics_url=triton.url + c.PATH_METRICS, timeout=TIMEOUT
        )
        exporter = Exporter(settings)
        fold = exporter._read_metrics

        def slow_fold(*args: object, **kwargs: object) -> object:
            time.sleep(TIMEOUT * 1.2)  # the fold of a fleet-sized body
            return fold(*args, **kwargs)

        monkeypatch.setattr(exporter, "_read_metrics", slow_fold)
        exporter.poll_once()
        samples = _samples(exporter.metrics_text().decode())
    assert samples[(c.M_UP, ())] == 1
    assert samples[(c.M_TRITON_INFO, ((c.LABEL_VERSION, "2.51.0"),))] == 1
    assert _errors(samples, c.TARGET_SERVER, c.FAULT_TIMEOUT) == 0
