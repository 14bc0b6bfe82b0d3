"""Capacity (exporter/capacity.py): GPU parts on public scrapes, CPU parts on the real Triton 2.51.

Fixtures in tests/data/capacity/ cite their sources in their first lines.
"""

from __future__ import annotations

import json
import math
import shutil
import statistics
import threading
import time
from pathlib import Path

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from triton_sre import conventions as c
from triton_sre.checks import ConfigError
from triton_sre.config import CapacitySettings, ExporterSettings, settings_from_mapping
from triton_sre.demo import SAMPLE_REPOSITORY, SLOW_LOADING, SLOW_LOADING_SECONDS
from triton_sre.diagnosis.engine import diagnose_events, diagnose_reason
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.exporter.capacity import (
    CapacityWatch,
    LoadTimer,
    derive_capacity,
    device_ids,
    fit,
    headroom,
    memory_usage_from_json,
)
from triton_sre.exporter.collector import ExporterView, render
from triton_sre.exporter.derive import derive
from triton_sre.exporter.metricsfold import counters_from_samples
from triton_sre.exporter.service import Exporter
from triton_sre.exporter.snapshot import IndexEntry, Snapshot, keep_family, row_value, stats_from_json
from triton_sre.pricing import Pricing
from triton_sre.triton.exposition import parse

DATA = Path(__file__).parent / "data"
CAP = DATA / "capacity"
GPU0 = "GPU-7a9c9f44-ff57-1177-e21a-1740a8cf1a65"  # gpt_neo_cola_part0 (CUDA id 0 in gpu4_stats)
GPU3 = "GPU-71ce41fd-3ac0-afe7-c995-21119f1e984a"  # gpt_neo_cola_part3
GIB = 2**30


def read(name: str) -> str:
    return (CAP / name).read_text()


def snapshot_of(text: str, t: float = 0.0, stats: list | None = None, index=None) -> Snapshot:
    """A snapshot built the way the service builds one: one pass over the parsed samples."""
    watch = CapacityWatch()
    counters, gpus = counters_from_samples(watch.watch(parse(text, keep=keep_family)))
    return Snapshot(
        taken_at=t,
        counters=counters,
        gpu_uuids=gpus,
        stats=stats_from_json(stats) if stats is not None else None,
        index=index,
        capacity=watch.reading(),
    )


def gpu4_stats() -> list:
    return json.loads(read("gpu4_stats.json"))["model_stats"]


def exposition(snaps: list[Snapshot], **kw) -> dict[tuple[str, tuple], float]:
    """Derive and render like the service, then read the text back with prometheus_client."""
    d = derive(snaps, Pricing(), diagnose_reason)
    from dataclasses import replace

    d = replace(d, capacity=derive_capacity(snaps, kw.pop("settings", CapacitySettings()), {}, **kw))
    text = render(ExporterView(up=True, derivation=d))
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def resident_on(cap, device: str) -> dict:
    """Model version -> bytes resident on one GPU."""
    return next(g.resident for g in cap.gpus if g.device == device)


# -- GPU parts on public scrapes ------------------------------------------------------------------
def test_four_gpu_scrape_headroom_placement_and_fit():
    text = read("gpu4_metrics.txt")
    snap = snapshot_of(text, stats=gpu4_stats())
    reading = snap.capacity
    assert len(reading.gpus) == 4
    assert reading.placement[("distilgpt2_cola", "0")] == frozenset(reading.gpus)  # one instance per GPU
    assert reading.placement[("gpt_neo_cola_part0", "0")] == {GPU0}
    assert ("gpt_neo_cola_ensemble", "1") not in reading.placement  # no GPU of its own

    ids = device_ids({k: v.memory_usage for k, v in snap.stats.items()}, reading.placement, reading.gpus)
    assert ids[0] == GPU0 and ids[3] == GPU3 and len(set(ids.values())) == 4

    cap = derive_capacity([snap], CapacitySettings(), {})
    by_gpu = {g.device: g for g in cap.gpus}
    # headroom = total - used, straight from the scrape
    assert by_gpu[GPU3].headroom_bytes == 16944988160 - 7451181056
    assert by_gpu[GPU0].headroom_bytes == 16944988160 - 7329546240
    # resident on GPU0: part0 (4.0e9) and distilgpt2 (0.7e9); median 2.35e9
    assert by_gpu[GPU0].resident == {("gpt_neo_cola_part0", "0"): 4.0e9, ("distilgpt2_cola", "0"): 0.7e9}
    assert by_gpu[GPU0].models_that_fit == math.floor((16944988160 - 7329546240) / 2.35e9) == 4
    assert max(resident_on(cap, GPU0).items(), key=lambda kv: kv[1]) == (("gpt_neo_cola_part0", "0"), 4.0e9)
    assert cap.gpu_metrics_missing is False
    # per-model memory rows carry the GPU uuid, CPU kinds the host
    rows = {(m.model, m.kind, m.device): m.bytes for m in cap.memory}
    assert rows[("distilgpt2_cola", c.MEMORY_TYPE_GPU, GPU3)] == 0.7e9
    assert rows[("distilgpt2_cola", c.MEMORY_TYPE_CPU_PINNED, c.DEVICE_HOST)] == 65536
    assert rows[("gpt_neo_cola_part0", c.MEMORY_TYPE_CPU, c.DEVICE_HOST)] == 1e6


def test_exposition_of_the_four_gpu_host():
    samples = exposition([snapshot_of(read("gpu4_metrics.txt"), stats=gpu4_stats())])
    assert samples[(c.M_GPU_MEMORY_HEADROOM_BYTES, ((c.LABEL_GPU_UUID, GPU3),))] == 16944988160 - 7451181056
    assert samples[(c.M_GPU_LARGEST_MODEL_BYTES, ((c.LABEL_GPU_UUID, GPU3),))] == 4.1e9
    assert samples[(c.M_GPU_METRICS_MISSING, ())] == 0.0
    key = (
        c.M_MODEL_MEMORY_BYTES,
        (
            (c.L_DEVICE, GPU0),
            (c.L_KIND, c.MEMORY_TYPE_GPU),
            (c.LABEL_MODEL, "gpt_neo_cola_part0"),
            (c.LABEL_VERSION, "0"),
        ),
    )
    assert samples[key] == 4.0e9
    fits = [v for (name, _), v in samples.items() if name == c.M_GPU_MODELS_THAT_FIT]
    assert len(fits) == 4 and all(v >= 0 and v == int(v) for v in fits)
    assert not any(math.isnan(v) or v < 0 for v in samples.values())


def test_every_capacity_fixture_cites_its_source():
    """Text fixtures name a URL in their first line; every fixture is in SOURCE.md with a URL."""
    index = read("SOURCE.md")
    rows = {
        line.split("|")[1].strip().strip("`"): line for line in index.splitlines() if line.startswith("| `")
    }
    fixtures = sorted(p.name for p in CAP.iterdir() if p.name != "SOURCE.md")
    assert sorted(rows) == fixtures
    for name in fixtures:
        if name.endswith(".json"):
            assert "SOURCE.md" in json.loads(read(name))["_source"]
            assert "not public" in rows[name]  # the derived fixture says so
        else:
            first = read(name).splitlines()[0].lower()
            assert first.startswith("# source: https://"), name
            assert "https://" in rows[name]


def test_memory_usage_in_triton_order_and_in_the_grpc_string_form():
    """Core lists one entry per (type, id), CPU < CPU_PINNED < GPU then by id (src/model.h);
    the gRPC answer printed as JSON carries byte_size as a string (qa/L0_device_memory_tracker)."""
    order = [c.MEMORY_TYPE_CPU, c.MEMORY_TYPE_CPU_PINNED, c.MEMORY_TYPE_GPU]
    for stat in gpu4_stats():
        keys = [(order.index(u["type"]), u["id"]) for u in stat[c.STATS_MEMORY_USAGE]]
        assert keys == sorted(set(keys)), stat["name"]
    as_grpc = [
        {
            **s,
            c.STATS_MEMORY_USAGE: [{**u, "byte_size": str(u["byte_size"])} for u in s[c.STATS_MEMORY_USAGE]],
        }
        for s in gpu4_stats()
    ]
    text = read("gpu4_metrics.txt")
    http_rows = derive_capacity([snapshot_of(text, stats=gpu4_stats())], CapacitySettings(), {}).memory
    grpc_rows = derive_capacity([snapshot_of(text, stats=as_grpc)], CapacitySettings(), {}).memory
    assert grpc_rows == http_rows and len(http_rows) == 10


def test_the_real_four_gpu_host_serves_python_models_that_report_no_memory():
    """The scrape's models are Python-backend models (the source repository's config.pbtxt), which
    never fill memory_usage: that host's real statistics are empty lists. Placement still comes
    from gpu_uuid, headroom from the GPU families; the fit needs capacity.model_bytes."""
    empty = [{**s, c.STATS_MEMORY_USAGE: []} for s in gpu4_stats()]
    snap = snapshot_of(read("gpu4_metrics.txt"), stats=empty)
    cap = derive_capacity([snap], CapacitySettings(), {})
    assert list(cap.memory) == []
    assert len(cap.gpus) == 4 and all(g.resident == {} for g in cap.gpus)
    assert all(g.models_that_fit is None for g in cap.gpus)  # nothing to divide by
    assert resident_on(cap, GPU0) == {} and cap.gpu_metrics_missing is False
    sized = derive_capacity([snap], CapacitySettings(model_bytes=2 * GIB), {})
    fits = {g.device: g.models_that_fit for g in sized.gpus}
    assert fits[GPU3] == math.floor((16944988160 - 7451181056) / (2 * GIB)) == 4
    assert fits[GPU0] == math.floor((16944988160 - 7329546240) / (2 * GIB)) == 4
    samples = exposition([snap])
    assert not any(name == c.M_MODEL_MEMORY_BYTES for name, _ in samples)
    # No size and none configured: no largest model, TritonGPUMemoryHeadroomLow cannot judge.
    assert not any(name == c.M_GPU_LARGEST_MODEL_BYTES for name, _ in samples)
    assert samples[(c.M_GPU_MEMORY_HEADROOM_BYTES, ((c.LABEL_GPU_UUID, GPU3),))] == 16944988160 - 7451181056
    # With capacity.model_bytes, each GPU that runs models gets that size as its largest model,
    # so the headroom alert can page there too; a GPU without models gets none.
    placed = {u for devices in snap.capacity.placement.values() for u in devices}
    largest = {g.device: g.largest_model_bytes for g in sized.gpus}
    assert placed and all(largest[u] == 2 * GIB for u in placed)
    assert all(largest[g.device] is None for g in sized.gpus if g.device not in placed)
    sized_samples = exposition([snap], settings=CapacitySettings(model_bytes=2 * GIB))
    assert sized_samples[(c.M_GPU_LARGEST_MODEL_BYTES, ((c.LABEL_GPU_UUID, GPU0),))] == 2 * GIB


def test_energy_cost_from_the_counter_rate_and_model_share():
    """The single-GPU scrape at t=0, and its counter after 60 s at the scrape's own power usage."""
    text = read("gpu1_metrics.txt")
    uuid = "GPU-0e9fdafb-5adb-91cd-26a8-308d34357efc"
    watts = 55.137
    later = text.replace("9380.053000", f"{9380.053 + watts * 60:.6f}")
    snaps = [snapshot_of(text, 0.0), snapshot_of(later, 60.0)]
    cap = derive_capacity(
        snaps,
        CapacitySettings(),
        {},
        kwh_price=0.30,
        currency="EUR",
        compute_seconds={("resnet50_trt", "1"): 3.0, ("cpu_only", "1"): 5.0},
    )
    gpu = cap.gpus[0]
    assert gpu.device == uuid
    assert gpu.energy_cost_per_hour == pytest.approx(watts / 1000 * 0.30)  # 0.01654 EUR/h
    # only resnet50_trt runs on this GPU (its metrics carry the uuid): it is charged all of it
    assert cap.model_energy_cost_per_hour == {("resnet50_trt", "1"): pytest.approx(gpu.energy_cost_per_hour)}
    samples = exposition(snaps, kwh_price=0.30, currency="EUR")
    assert samples[
        (c.M_ENERGY_COST_PER_HOUR, ((c.L_CURRENCY, "EUR"), (c.LABEL_GPU_UUID, uuid)))
    ] == pytest.approx(watts / 1000 * 0.30)
    # no price: no energy cost series at all
    assert not any(n == c.M_ENERGY_COST_PER_HOUR for n, _ in exposition(snaps))


def test_single_gpu_without_memory_usage_uses_the_configured_size():
    snap = snapshot_of(
        read("gpu1_metrics.txt"), stats=[{"name": "resnet50_trt", "version": "1", c.STATS_MEMORY_USAGE: []}]
    )
    room = 16945512448 - 974913536
    assert (
        derive_capacity([snap], CapacitySettings(), {}).gpus[0].models_that_fit is None
    )  # nothing to divide by
    cap = derive_capacity([snap], CapacitySettings(model_bytes=2 * GIB), {})
    assert cap.gpus[0].models_that_fit == math.floor(room / (2 * GIB)) == 7


def test_per_model_family_with_and_without_gpu_uuid():
    text = read("gpu_uuid_duplicates.txt")
    snap = snapshot_of(text)
    key = ("simple_identity", "1")
    assert snap.capacity.placement[key] == {"GPU-272726af-0544-4b00-8de8-873492d57f4c"}
    assert row_value(snap.counters[key], c.NV_REQUEST_SUCCESS) == 0  # the total, counted once
    # the model runs on a GPU but Triton exports no GPU family: the GPU metrics are missing
    assert derive_capacity([snap], CapacitySettings(), {}).gpu_metrics_missing is True


def test_mig_host_without_gpu_metrics_is_flagged_not_zero():
    """Triton exports no nv_gpu_* on MIG GPUs (server #5324): DCGM does not start (mig_dcgm.log, a
    real MIG host's lines from server #7906), so no GPU family gets a sample and the per-model
    families lose gpu_uuid (core metrics.cc, SOURCE.md): the scrape looks like a CPU host's, which
    the real 2.51 scrape is. A TensorRT model's GPU memory (a single MIG device is CUDA id 0) or the
    `capacity.gpu_host` setting says the host has GPUs.
    """
    log = read("mig_dcgm.log")
    assert "DCGM unable to start" in log
    diagnosis = diagnose_events(parse_text("\n".join(x for x in log.splitlines() if not x.startswith("#"))))
    assert diagnosis.findings == () and not diagnosis.has_failure  # a fact of the host, not a load failure
    text = (DATA / "triton_2.51_metrics_cpu.txt").read_text()
    assert c.NV_GPU_PREFIX not in text and c.LABEL_GPU_UUID not in text
    part0 = next(s for s in gpu4_stats() if s["name"] == "gpt_neo_cola_part0")
    on_mig = snapshot_of(text, stats=[part0])
    samples = exposition([on_mig])
    assert samples[(c.M_GPU_METRICS_MISSING, ())] == 1.0
    assert not any(name in (c.M_GPU_MEMORY_HEADROOM_BYTES, c.M_GPU_MODELS_THAT_FIT) for name, _ in samples)
    # The memory itself is still reported, under Triton's device id (no uuid to map it to).
    rows = derive_capacity([on_mig], CapacitySettings(), {}).memory
    assert sorted((m.kind, m.device, m.bytes) for m in rows) == [
        (c.MEMORY_TYPE_CPU, c.DEVICE_HOST, 1e6),
        (c.MEMORY_TYPE_GPU, "0", 4e9),
    ]
    cpu_host = snapshot_of(text, stats=[])
    assert exposition([cpu_host])[(c.M_GPU_METRICS_MISSING, ())] == 0.0
    assert (
        exposition([cpu_host], settings=CapacitySettings(gpu_host=True))[(c.M_GPU_METRICS_MISSING, ())] == 1.0
    )


def test_bad_numbers_count_as_missing_never_nan_or_negative():
    uuid = "GPU-x"
    text = (
        f'nv_gpu_memory_total_bytes{{gpu_uuid="{uuid}"}} NaN\n'
        f'nv_gpu_memory_used_bytes{{gpu_uuid="{uuid}"}} 5\n'
        f'nv_energy_consumption{{gpu_uuid="{uuid}"}} -3\n'
        "nv_cpu_memory_total_bytes 100\n"
        "nv_cpu_memory_used_bytes 200\n"
        'nv_model_load_duration_secs{model="m",version="1"} +Inf\n'
    )
    cap = derive_capacity(
        [snapshot_of(text, 0), snapshot_of(text, 15)], CapacitySettings(model_bytes=1.0), {}, kwh_price=1.0
    )
    assert cap.gpus[0].headroom_bytes is None and cap.gpus[0].energy_cost_per_hour is None
    assert cap.host.headroom_bytes is None  # used > total
    assert cap.load_seconds == {}
    assert headroom(0.0, 0.0) is None and headroom(10.0, 4.0) == 6.0
    assert fit(None, [1.0], None) is None and fit(10.0, [0.0, -1.0], None) is None
    assert statistics.median([3.0, 1.0, 2.0]) == 2.0 and fit(7.0, [3.0, 1.0, 2.0], None) == 3.0
    entries = memory_usage_from_json(
        [
            {"type": "GPU", "id": 0, "byte_size": -1},
            {"type": "TPU", "id": 0, "byte_size": 1},
            {"type": "GPU", "id": True, "byte_size": 1},
            {"type": "CPU", "id": 0, "byte_size": "x"},
            "junk",
            {"type": "GPU", "id": 1, "byte_size": float("nan")},
            {"type": "GPU", "id": 2, "byte_size": 8},
        ]
    )
    assert entries == (("GPU", 2, 8.0),)
    assert memory_usage_from_json(None) == () and memory_usage_from_json({"type": "GPU"}) == ()


def test_load_timer_measures_loading_to_ready_and_forgets_unloaded_models():
    timer = LoadTimer()
    row = lambda state: [IndexEntry("m", "1", state, "")]  # noqa: E731
    timer.observe(0.0, row(c.STATE_UNAVAILABLE))
    timer.observe(1.0, row(c.STATE_LOADING))
    timer.observe(2.0, None)  # index unreadable: nothing changes
    timer.observe(3.0, row(c.STATE_LOADING))
    timer.observe(4.5, row(c.STATE_READY))
    assert timer.measured == {("m", "1"): 3.5}
    timer.observe(5.0, row(c.STATE_READY))  # still ready: kept, not re-measured
    assert timer.measured == {("m", "1"): 3.5}
    timer.observe(6.0, [])  # unloaded and gone from the index
    assert timer.measured == {}
    timer.observe(7.0, row(c.STATE_READY))  # READY without LOADING seen: not measured
    assert timer.measured == {}


def test_triton_load_duration_wins_over_the_measured_one():
    text = 'nv_model_load_duration_secs{model="m",version="1"} 12.5\n'
    cap = derive_capacity([snapshot_of(text)], CapacitySettings(), {("m", "1"): 14.0, ("n", "1"): 2.0})
    assert cap.load_seconds == {("m", "1"): 12.5, ("n", "1"): 2.0}


def test_capacity_config_is_validated():
    s = settings_from_mapping(
        {
            "pricing": {"kwh": 0.25, "energy_by_model": True},
            "capacity": {"model_bytes": 1e9, "gpu_host": True},
        },
        "x.yaml",
    )
    assert s.pricing.kwh == 0.25 and s.pricing.energy_by_model is True
    assert s.capacity == CapacitySettings(model_bytes=1e9, gpu_host=True)
    for bad in (
        {"pricing": {"kwh": -1}},
        {"capacity": {"model_bytes": 0}},
        {"capacity": {"gpu_host": "yes"}},
        {"capacity": {"other": 1}},
    ):
        with pytest.raises(ConfigError, match=r"x\.yaml"):
            settings_from_mapping(bad, "x.yaml")


# -- CPU parts on the real Triton 2.51 -------------------------------------------------------------
def _load_in_background(triton, model: str) -> threading.Thread:
    def load() -> None:
        requests.post(f"{triton.http_url}/v2/repository/models/{model}/load", timeout=60)

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    return thread


@pytest.mark.triton
def test_load_time_from_index_transitions_on_the_real_server(fresh_triton_factory, tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPOSITORY / SLOW_LOADING, repo / SLOW_LOADING)
    triton = fresh_triton_factory(repo, model_control_mode="explicit")
    interval = 0.2
    exporter = Exporter(
        ExporterSettings(
            triton_url=triton.http_url, metrics_url=triton.metrics_url, interval=interval, window=60.0
        )
    )
    exporter.poll_once()
    loader = _load_in_background(triton, SLOW_LOADING)
    states: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        snap = exporter.poll_once()
        states += [e.state for e in snap.index or () if e.name == SLOW_LOADING]
        if states and states[-1] == c.STATE_READY:
            break
        time.sleep(interval)
    loader.join(timeout=60)
    assert c.STATE_LOADING in states and states[-1] == c.STATE_READY, states
    measured = exporter.derivation.capacity.load_seconds[(SLOW_LOADING, "1")]
    print(f"\nmeasured load of {SLOW_LOADING}: {measured:.2f}s (initialize sleeps {SLOW_LOADING_SECONDS}s)")
    # at least the deliberate delay (within one poll interval), and not wildly more
    assert SLOW_LOADING_SECONDS - interval <= measured < SLOW_LOADING_SECONDS + 10
    body = exporter.metrics_text().decode()
    assert f'{c.M_MODEL_LOAD_SECONDS}{{model="{SLOW_LOADING}",version="1"}}' in body
    assert "resolution: the exporter's poll interval" in body
    # Python backend: no memory_usage, so no per-model memory rows (not zeros)
    assert c.M_MODEL_MEMORY_BYTES + "{" not in body


@pytest.mark.triton
def test_cpu_memory_families_on_the_real_server(triton):
    exporter = Exporter(
        ExporterSettings(
            triton_url=triton.http_url, metrics_url=triton.metrics_url, interval=1.0, window=60.0
        )
    )
    # Until its first collection (about 2 s after start) Triton 2.51 exports the CPU families as 0:
    # a total of 0 is "not measured yet", never a headroom of 0.
    deadline = time.monotonic() + 30
    while True:
        snap = exporter.poll_once()
        host = snap.capacity.host
        total, used = host[c.NV_CPU_MEMORY_TOTAL_BYTES], host[c.NV_CPU_MEMORY_USED_BYTES]
        if total > 0 or time.monotonic() > deadline:
            break
        assert exporter.derivation.capacity.host.headroom_bytes is None
        assert c.M_HOST_MEMORY_HEADROOM_BYTES not in exporter.metrics_text().decode()
        time.sleep(0.5)
    assert 0 < used < total
    cap = exporter.derivation.capacity
    assert cap.host.headroom_bytes == total - used
    assert cap.host.models_that_fit is None  # Python models report no memory and no size is configured
    assert cap.gpu_metrics_missing is False and cap.gpus == []
    body = exporter.metrics_text().decode()
    assert f"{c.M_HOST_MEMORY_HEADROOM_BYTES} {float(total - used)!r}" in body
    assert f"{c.M_GPU_METRICS_MISSING} 0.0" in body
    sized = Exporter(
        ExporterSettings(
            triton_url=triton.http_url,
            metrics_url=triton.metrics_url,
            capacity=CapacitySettings(model_bytes=GIB),
        )
    )
    sized.poll_once()
    assert sized.derivation.capacity.host.headroom_bytes is not None
    room = sized.derivation.capacity.host.headroom_bytes
    assert sized.derivation.capacity.host.models_that_fit == math.floor(room / GIB)


# -- alerts and the startup probe -------------------------------------------------------------------
def test_startup_probe_budget_sizes_the_k8s_probe_and_the_slow_load_alert():
    from triton_sre.generate import capacity
    from triton_sre.slo import parse_spec
    from triton_sre.stack.render import K8S_DEPLOYMENT_FILE, deploy_files

    spec = parse_spec(
        "operational:\n  startup_probe_budget: 5m\n  load_slow_share: 0.4\n"
        "slos:\n  - {name: a, type: availability, objective: 99}\n"
    )
    deployment = deploy_files(spec)[f"{c.DEPLOY_DIR}/{K8S_DEPLOYMENT_FILE}"]
    assert "periodSeconds: 5\n            failureThreshold: 60\n" in deployment  # 5 s x 60 = 5m
    alert = next(
        rule
        for g in capacity.capacity_groups(spec, "runbooks/")["groups"]
        for rule in g["rules"]
        if rule["alert"] == c.ALERT_MODEL_LOAD_SLOW
    )
    assert alert["expr"].endswith("> 120")  # 0.4 x 300 s


def test_k8s_template_turns_on_the_memory_tracker_and_the_real_server_accepts_it(fresh_triton_factory):
    """memory_usage stays empty unless Triton runs with the tracker flag (server #6009, SOURCE.md):
    the template's flag, passed as is to the real 2.51, reaches every backend's config."""
    import yaml

    from triton_sre.slo import default_spec
    from triton_sre.stack.render import K8S_DEPLOYMENT_FILE, deploy_files

    deployment = next(
        d
        for d in yaml.safe_load_all(deploy_files(default_spec())[f"{c.DEPLOY_DIR}/{K8S_DEPLOYMENT_FILE}"])
        if d["kind"] == "Deployment"
    )
    container = next(k for k in deployment["spec"]["template"]["spec"]["containers"] if k["name"] == "triton")
    flags = [a for a in container["args"] if a.startswith("--backend-config=")]
    assert flags == ["--backend-config=triton-backend-memory-tracker=true"]
    triton = fresh_triton_factory(extra_args=flags)
    stats = requests.get(f"{triton.http_url}/v2/models/stats", timeout=10).json()["model_stats"]
    assert stats and all(s[c.STATS_MEMORY_USAGE] == [] for s in stats)  # Python models report none
    assert '"triton-backend-memory-tracker":"true"' in triton.log_path.read_text()


def test_lint_sizes_the_startup_probe_from_measured_load_times(capsys, tmp_path):
    from triton_sre.cli import main

    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPOSITORY / SLOW_LOADING, repo / SLOW_LOADING)
    spec = tmp_path / "slos.yaml"
    spec.write_text(
        "operational:\n  startup_probe_budget: 2m\nslos:\n  - {name: a, type: availability, objective: 99}\n"
    )
    base = ["lint", str(repo), "--target", "cpu", "--format", "json", "--slo-file", str(spec)]
    # 3.9 s measured on the real server: 2 x 3.9 + 30 = 38 s fits in 120 s
    assert main([*base, "--load-seconds", f"{SLOW_LOADING}=3.9"]) == c.EXIT_OK
    assert json.loads(capsys.readouterr().out)["findings"] == []
    assert (
        main([*base, "--load-seconds", f"{SLOW_LOADING}=60", "--load-seconds", "elsewhere=500"]) == c.EXIT_OK
    )
    (finding,) = json.loads(capsys.readouterr().out)["findings"]
    assert finding["model"] == SLOW_LOADING
    assert finding["runbook"] == c.ALERT_RUNBOOKS[c.ALERT_MODEL_LOAD_SLOW]
    assert "2 x the slowest load + 30 s = 150 s" in json.dumps(finding)
    assert "failureThreshold: 30" in json.dumps(finding)  # ceil(150 / 5)
    assert main([*base, "--load-seconds", "oops"]) == c.EXIT_USAGE
    assert "MODEL=SECONDS" in capsys.readouterr().err
