"""The real local Triton: starting, stopping, the sample models and what Triton reports about them."""

from __future__ import annotations

import os
import re
import socket
import sys
import threading
from pathlib import Path

import expectations
import pytest
import requests

from triton_sre import conventions as c
from triton_sre import demo
from triton_sre.demo import traffic
from triton_sre.stack import local_triton as local
from triton_sre.stack.local_triton import LocalTriton, LocalTritonError, find_server, install_in
from triton_sre.stack.processes import free_ports, mapped_shm, process_group_members

_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)\{(?P<labels>[^}]*)\} (?P<value>\S+)$", re.M)


def metric(metrics_url: str, name: str, model: str) -> float:
    """Sum of Triton's samples of ``name`` for ``model`` (over versions and reasons)."""
    text = requests.get(metrics_url, timeout=10).text
    return sum(
        float(m["value"])
        for m in _SAMPLE.finditer(text)
        if m["name"] == name and f'{c.LABEL_MODEL}="{model}"' in m["labels"]
    )


def repository_index(http_url: str) -> dict[str, dict]:
    response = requests.post(f"{http_url}/v2/repository/index", json={}, timeout=10)
    response.raise_for_status()
    return {entry["name"]: entry for entry in response.json()}


def alive(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


# ---------------------------------------------------------------------------- the shared server
def test_shared_server_is_live_but_not_strictly_ready(triton):
    assert requests.get(f"{triton.http_url}/v2/health/live", timeout=5).status_code == 200
    # Strict readiness (the default) with models that failed to load: not ready.
    assert requests.get(f"{triton.http_url}/v2/health/ready", timeout=5).status_code == 400
    assert requests.get(triton.metrics_url, timeout=5).status_code == 200
    assert triton.metrics_url.endswith(c.PATH_METRICS)
    host, port = triton.grpc_url.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5):
        pass
    assert triton.is_running() and triton.pid is not None
    assert triton.startup_seconds is not None and triton.startup_seconds < 30


def test_index_lists_healthy_ready_and_broken_unavailable_with_reasons(triton):
    index = repository_index(triton.http_url)
    for model in demo.HEALTHY_MODELS:
        assert index[model]["state"] == c.STATE_READY, index[model]
        assert index[model]["version"] == "1"
    for model in expectations.BROKEN_IN_INDEX:
        assert index[model]["state"] == c.STATE_UNAVAILABLE, index[model]
        assert expectations.BROKEN_CAUSES[model] in index[model]["reason"]
    assert set(index) == set(demo.HEALTHY_MODELS) | set(expectations.BROKEN_IN_INDEX)


def test_invalid_version_dir_is_absent_from_index_and_only_in_the_log(triton):
    assert demo.BROKEN_VERSION_DIR not in repository_index(triton.http_url)
    log = triton.read_log()
    line = next(ln for ln in log.splitlines() if f"failed to load model '{demo.BROKEN_VERSION_DIR}'" in ln)
    assert expectations.BROKEN_CAUSES[demo.BROKEN_VERSION_DIR] in line
    # The other failures are in the log as well.
    assert expectations.BROKEN_CAUSES[demo.BROKEN_MISSING_MODULE] in log
    assert expectations.BROKEN_CAUSES[demo.BROKEN_INIT] in log


def test_vector_scale_doubles(triton):
    out = traffic.infer(triton.http_url, demo.VECTOR_SCALE, traffic.vector_scale_payload(batch=3, value=1.5))
    (tensor,) = out["outputs"]
    assert tensor["name"] == demo.OUTPUT_NAME and tensor["datatype"] == "FP32"
    assert tensor["shape"] == [3, demo.VECTOR_SCALE_DIMS]
    assert tensor["data"] == [1.5 * demo.VECTOR_SCALE_FACTOR] * (3 * demo.VECTOR_SCALE_DIMS)


def test_text_echo_upper_cases_strings(triton):
    out = traffic.infer(
        triton.http_url, demo.TEXT_ECHO, traffic.text_echo_payload(["hello", "Triton sre", "ümlaut"])
    )
    (tensor,) = out["outputs"]
    assert tensor["datatype"] == "BYTES" and tensor["shape"] == [3, 1]
    assert tensor["data"] == ["HELLO", "TRITON SRE", "ÜMLAUT"]


def test_slow_model_adds_one(triton):
    out = traffic.infer(triton.http_url, demo.SLOW_MODEL, traffic.slow_model_payload(value=2.0))
    (tensor,) = out["outputs"]
    assert tensor["shape"] == [demo.SLOW_MODEL_DIMS] and tensor["data"] == [3.0] * demo.SLOW_MODEL_DIMS


def test_concurrent_load_batches_vector_scale(triton):
    count0 = metric(triton.metrics_url, c.NV_INFERENCE_COUNT, demo.VECTOR_SCALE)
    exec0 = metric(triton.metrics_url, c.NV_EXEC_COUNT, demo.VECTOR_SCALE)
    result = traffic.drive(triton.http_url, demo.VECTOR_SCALE, concurrency=16, requests_total=320)
    assert (result.ok, result.failed) == (320, 0), result.errors
    inferences = metric(triton.metrics_url, c.NV_INFERENCE_COUNT, demo.VECTOR_SCALE) - count0
    executions = metric(triton.metrics_url, c.NV_EXEC_COUNT, demo.VECTOR_SCALE) - exec0
    assert inferences >= 320  # the shared server: other traffic may add to it
    assert inferences / executions > 1.5, (inferences, executions)


def test_slow_model_requests_queue_under_concurrency(triton):
    def queue_us_per_request(concurrency: int, total: int) -> float:
        before = metric(triton.metrics_url, c.NV_QUEUE_DURATION_US, demo.SLOW_MODEL)
        result = traffic.drive(
            triton.http_url, demo.SLOW_MODEL, concurrency=concurrency, requests_total=total
        )
        assert result.ok == total, result.errors
        return (metric(triton.metrics_url, c.NV_QUEUE_DURATION_US, demo.SLOW_MODEL) - before) / total

    alone = queue_us_per_request(1, 3)
    crowded = queue_us_per_request(4, 12)
    # Four clients on one unbatched 0.1 s instance: each request waits ~0.3 s for the other three.
    assert crowded > 150_000, crowded
    assert crowded > 10 * alone, (alone, crowded)


def test_model_exception_counts_as_backend_failure(triton):
    before = metric(triton.metrics_url, c.NV_REQUEST_FAILURE, demo.SLOW_MODEL)
    result = traffic.drive(
        triton.http_url,
        demo.SLOW_MODEL,
        concurrency=1,
        requests_total=2,
        payload=traffic.failing_payload(demo.SLOW_MODEL),
    )
    assert (result.ok, result.failed) == (0, 2)
    assert "negative input" in result.errors[0]
    assert metric(triton.metrics_url, c.NV_REQUEST_FAILURE, demo.SLOW_MODEL) - before == 2


def test_traffic_driver_runs_a_mix_until_stopped(triton):
    stopped_early = threading.Event()
    with traffic.TrafficDriver(triton.http_url, max_duration_s=30) as driver:
        stopped_early.wait(1.5)
        assert driver.running
    results = driver.results()
    assert not driver.running
    assert set(results) == set(traffic.DEFAULT_MIX)
    for model, result in results.items():
        assert result.ok > 0 and result.failed == 0, (model, result.errors)
    assert results[demo.VECTOR_SCALE].ok > results[demo.SLOW_MODEL].ok
    driver.stop()  # idempotent


def test_traffic_driver_stops_by_itself(triton):
    driver = traffic.TrafficDriver(triton.http_url, {demo.TEXT_ECHO: 2}, max_requests=25).start()
    for t in driver._threads:
        t.join(30)
    assert not driver.running
    assert driver.results()[demo.TEXT_ECHO].total == 25


# ---------------------------------------------------------------------------- private servers
def test_stop_leaves_no_process_and_no_shared_memory(fresh_triton_factory):
    server = fresh_triton_factory()
    pid = server.pid
    assert pid is not None
    group = server.group_pids()
    assert pid in group and len(group) >= 1 + len(demo.HEALTHY_MODELS)  # tritonserver + one stub each
    shm = mapped_shm(group)
    assert shm and all(p.exists() for p in shm)
    code = server.stop()
    assert code is not None
    assert not any(alive(p) for p in group)
    assert process_group_members(pid) == []
    assert not any(p.exists() for p in shm)
    assert server.stop() == code  # idempotent
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{server.http_url}/v2/health/live", timeout=2)


def test_kill_then_restart_on_the_same_ports(fresh_triton_factory):
    server = fresh_triton_factory()
    ports = (server.http_port, server.grpc_port, server.metrics_port)
    traffic.drive(server.http_url, demo.VECTOR_SCALE, concurrency=2, requests_total=4)
    assert metric(server.metrics_url, c.NV_INFERENCE_COUNT, demo.VECTOR_SCALE) == 4
    old_pid = server.pid
    assert server.kill() == -9
    assert not server.is_running() and not alive(old_pid)
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{server.http_url}/v2/health/live", timeout=2)
    server.restart()
    assert server.pid != old_pid
    assert (server.http_port, server.grpc_port, server.metrics_port) == ports
    assert repository_index(server.http_url)[demo.VECTOR_SCALE]["state"] == c.STATE_READY
    # A new process: Triton's counters start again from zero.
    assert metric(server.metrics_url, c.NV_INFERENCE_COUNT, demo.VECTOR_SCALE) == 0
    assert server.read_log().count("# triton-sre LocalTriton:") == 2  # one log across restarts


def test_explicit_mode_loads_only_named_models_and_relaxed_readiness(fresh_triton_factory):
    server = fresh_triton_factory(
        model_control_mode="explicit", load_models=[demo.TEXT_ECHO], strict_readiness=False
    )
    index = repository_index(server.http_url)
    assert index[demo.TEXT_ECHO]["state"] == c.STATE_READY
    assert all(index[m].get("state") != c.STATE_READY for m in index if m != demo.TEXT_ECHO)
    assert requests.get(f"{server.http_url}/v2/health/ready", timeout=5).status_code == 200


def test_start_failure_raises_with_the_log_tail(fresh_triton_factory, tmp_path):
    missing = tmp_path / "no-such-repository"
    server = fresh_triton_factory(missing, start=False, exit_on_error=True, startup_timeout=30)
    with pytest.raises(LocalTritonError) as err:
        server.start()
    message = str(err.value)
    assert "exited with code" in message
    assert str(missing) in message  # Triton's own complaint, from the log tail
    assert str(server.log_path) in message
    assert not server.is_running()


def test_start_timeout_raises_and_stops_the_server(fresh_triton_factory):
    # Nothing in 0.01 s: the server is started, found not up in time, and stopped again.
    server = fresh_triton_factory(start=False, startup_timeout=0.01)
    with pytest.raises(LocalTritonError, match="not up after"):
        server.start()
    assert server.pid is not None and not alive(server.pid)
    assert process_group_members(server.pid) == []


# ---------------------------------------------------------------------------- no server needed
@pytest.mark.server
def test_find_server_points_at_the_wheel():
    install = find_server()
    assert install.binary.name == "tritonserver" and os.access(install.binary, os.X_OK)
    assert install.backend_library.exists() and install.backend_utils.exists()
    assert install.stub.parent.name == f"{sys.version_info.major}.{sys.version_info.minor}"
    assert any(install.libs_dir.glob("*.so*"))


def test_install_in_of_an_unpacked_wheel_without_this_pythons_stub_names_the_ones_it_has(tmp_path):
    """An unpacked nvidia-pytriton wheel (another release's, release_capture.py) is found by its folder;
    a wheel whose stubs are for other interpreters is refused naming them."""
    pkg = tmp_path / "pytriton"
    root = pkg / "tritonserver"
    for rel in ("bin/tritonserver", "backends/python/libtriton_python.so",
                "backends/python/triton_python_backend_utils.py", "python_backend_stubs/3.8/x"):  # fmt: skip
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("")
    (tmp_path / "nvidia_pytriton.libs").mkdir()
    with pytest.raises(
        LocalTritonError, match=r"no Python backend stub for Python 3\.\d+ \(available: 3\.8\)"
    ):
        install_in(pkg)
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    (root / "python_backend_stubs" / here).mkdir()
    (root / "python_backend_stubs" / here / "triton_python_backend_stub").write_text("")
    install = install_in(pkg)
    assert install.binary == root / "bin" / "tritonserver"
    assert install.libs_dir == tmp_path / "nvidia_pytriton.libs"
    server = LocalTriton(demo.SAMPLE_REPOSITORY, install=install, workdir=tmp_path / "work")
    assert server.install is install
    backends = server._build_backend_dir(install)
    assert (backends / "python" / "triton_python_backend_stub").resolve() == install.stub


def test_find_server_without_pytriton_says_how_to_install(monkeypatch):
    monkeypatch.setattr(local.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(LocalTritonError, match=re.escape("pip install 'triton-sre[server]'")):
        find_server()


def test_urls_need_a_started_server():
    server = LocalTriton(demo.SAMPLE_REPOSITORY)
    with pytest.raises(LocalTritonError):
        _ = server.http_url
    assert server.stop() is None  # never started: nothing to do
    with pytest.raises(ValueError):
        LocalTriton(demo.SAMPLE_REPOSITORY, load_models=["x"])


def test_free_ports_are_distinct_and_bindable():
    ports = free_ports(5)
    assert len(set(ports)) == 5
    for port in ports:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))


def test_traffic_is_bounded_and_loopback_only():
    with pytest.raises(ValueError, match="duration_s or requests_total"):
        traffic.drive("http://127.0.0.1:1", demo.VECTOR_SCALE)
    for url in ("http://192.0.2.10:8000", "http://10.1.2.3:8000", "ftp://127.0.0.1/"):
        with pytest.raises(ValueError):
            traffic.drive(url, demo.VECTOR_SCALE, requests_total=1)
    assert traffic.check_loopback(c.DEFAULT_TRITON_URL + "/") == c.DEFAULT_TRITON_URL
    # Nothing listens on port 1: every request fails, and the run still ends.
    result = traffic.drive("http://127.0.0.1:1", demo.VECTOR_SCALE, concurrency=2, requests_total=3)
    assert (result.ok, result.failed) == (0, 3) and result.errors


def test_sample_repository_is_complete():
    for model in (*demo.HEALTHY_MODELS, *demo.BROKEN_MODELS):
        assert (demo.SAMPLE_REPOSITORY / model / "config.pbtxt").is_file(), model
    assert (demo.SAMPLE_REPOSITORY / demo.BROKEN_VERSION_DIR / "v1" / "model.py").is_file()
    assert set(expectations.BROKEN_CAUSES) == set(demo.BROKEN_MODELS) == set(expectations.BROKEN_RUNBOOKS)
    assert set(expectations.BROKEN_IN_INDEX) | set(expectations.BROKEN_ONLY_IN_LOG) == set(demo.BROKEN_MODELS)
