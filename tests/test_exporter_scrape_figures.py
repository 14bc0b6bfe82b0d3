"""Figures counted by hand from real scrapes (tests/data/scrapes/, one public source each), through
the exporter as test_exporter_scrapes.py polls them: served by the loopback Triton stand-in and polled
twice with every counter doubled in between, so each counter's increase is the body's own value.
"""

from __future__ import annotations

from scrape_triton import SCRAPES as SCRAPE_DIR
from scrape_triton import ScrapeTriton
from test_exporter_scrapes import assert_sound, body_of, errors, exporter_for, exposed, polled_twice, value

from triton_sre import conventions as c


def test_four_gpus_and_one_idle_per_gpu_model_series_from_the_hugectr_backend_docs():
    """The HugeCTR backend's metrics page (May 2021): four GPUs in nv_gpu_utilization and one dlrm
    (version 2) series carrying the gpu_uuid of the second GPU, compute output 0 µs, and nothing else
    (the page cut the rest). Priced at 2.5 per GPU-hour: four GPUs, 10 an hour, all of it idle."""
    body = body_of(SCRAPE_DIR / "hugectr_backend_metrics_doc_4gpu_dlrm_idle_21.05.txt")
    exporter = polled_twice(body, "derived")
    samples = exposed(exporter)
    assert_sound(samples)
    assert value(samples, c.M_UP) == 1
    assert errors(samples, c.TARGET_METRICS, c.FAULT_PARSE) == 0
    dlrm = {"model": "dlrm", "version": "2"}
    states = {(s.labels["model"], s.labels["version"]) for s in samples[c.M_MODEL_STATE] if s.value == 1}
    assert states == {("dlrm", "2")}
    assert value(samples, c.M_MODEL_STATE, state=c.STATE_READY, **dlrm) == 1
    assert value(samples, c.M_COST_DEVICES, device_kind="gpu") == 4
    assert value(samples, c.M_SERVER_COST_PER_HOUR, currency="USD") == 4 * 2.5
    assert value(samples, c.M_IDLE_COST_FRACTION) == 1.0
    for name in (c.M_BATCHING_RATIO, c.M_REQUEST_STAGE_FRACTION, c.M_COST_PER_HOUR, c.M_COST_PER_1K):
        assert value(samples, name, **dlrm) is None, name
    # No memory, power or energy family on the page: no headroom and no energy price are made up.
    assert c.M_GPU_MEMORY_HEADROOM_BYTES not in samples and c.M_ENERGY_COST_PER_HOUR not in samples
    missing = {s.labels[c.L_CHECK]: s.value for s in samples[c.M_INPUT_MISSING]}
    assert missing[c.CHECK_GPU_METRICS] == 0
    assert missing[c.CHECK_CPU_METRICS] == 1 and missing[c.CHECK_PENDING_REQUESTS] == 1


def test_load_times_of_two_versions_from_the_load_time_docs_of_server_7697():
    """server#7697's docs body (24.11 dev): nv_model_load_duration_secs alone, input_all_optional version
    2 loaded in 1.532738387 s and version 1 in 11.68753265 s. Each version keeps its own load time (a
    gauge: not doubled between the polls), both READY; nothing computed on a host priced at 0.5."""
    exporter = polled_twice(
        body_of(SCRAPE_DIR / "server_pr7697_docs_model_load_time_two_versions_24.11dev.txt"), "derived"
    )
    samples = exposed(exporter)
    assert_sound(samples)
    loads = {s.labels["version"]: s.value for s in samples[c.M_MODEL_LOAD_SECONDS]}
    assert loads == {"2": 1.532738387, "1": 11.68753265}
    states = {(s.labels["model"], s.labels["version"]) for s in samples[c.M_MODEL_STATE] if s.value == 1}
    assert states == {("input_all_optional", "1"), ("input_all_optional", "2")}
    assert value(samples, c.M_COST_DEVICES, device_kind="cpu") == 1
    assert value(samples, c.M_IDLE_COST_FRACTION) == 1.0
    assert c.M_BATCHING_RATIO not in samples and c.M_COST_PER_HOUR not in samples


# The statistics the same README shows right after its /metrics excerpt (`curl
# localhost:8000/v2/models/batching/stats`), verbatim: two requests run as one batch of 2 after
# nearly 10 s in the queue (the recommended backend's batching delay).
RECOMMENDED_STATS = {
    "model_stats": [
        {
            "name": "batching",
            "version": "1",
            "last_inference": 1640111452223,
            "inference_count": 2,
            "execution_count": 1,
            c.STATS_INFERENCE_STATS: {
                "success": {"count": 2, "ns": 9997025869},
                "fail": {"count": 0, "ns": 0},
                "queue": {"count": 2, "ns": 9996491319},
                "compute_input": {"count": 2, "ns": 95288},
                "compute_infer": {"count": 2, "ns": 232202},
                "compute_output": {"count": 2, "ns": 195850},
            },
            "batch_stats": [
                {
                    "batch_size": 2,
                    "compute_input": {"count": 1, "ns": 47644},
                    "compute_infer": {"count": 1, "ns": 116101},
                    "compute_output": {"count": 1, "ns": 97925},
                }
            ],
        }
    ]
}


def test_elided_metrics_beside_the_tutorials_own_statistics():
    """The backend repository's recommended-backend tutorial (21.12): its /metrics excerpt ends in "...",
    which Prometheus rejects, so the scrape is down and no figure comes from it; the statistics it shows
    next still tell the one execution of batch size 2 and keep the model READY."""
    body = body_of(SCRAPE_DIR / "backend_recommended_tutorial_batching_elided_21.12.txt")
    with ScrapeTriton(body, stats=RECOMMENDED_STATS) as triton:
        exporter = exporter_for(triton)
        for _ in range(2):
            assert exporter.poll_once() is not None
    samples = exposed(exporter)
    assert_sound(samples)
    assert value(samples, c.M_UP) == 0
    assert errors(samples, c.TARGET_METRICS, c.FAULT_PARSE) == 2
    assert errors(samples, c.TARGET_STATS, c.FAULT_PARSE) == 0
    where = {"model": "batching", "version": "1"}
    by_size = {s.labels[c.L_BATCH_SIZE]: s.value for s in samples[c.M_EXECUTIONS_BY_BATCH_SIZE]}
    assert by_size == {"2": 1}
    assert value(samples, c.M_MODEL_STATE, state=c.STATE_READY, **where) == 1
    assert value(samples, c.M_BATCHING_RATIO, **where) is None  # the ratio is read from /metrics only
