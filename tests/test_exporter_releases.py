"""The exporter on real Triton releases 2.36-2.51, from captures (tests/data/releases/, compat32).

Each folder is one real `tritonserver` of an `nvidia-pytriton` wheel serving the same models under the
same traffic (tests/release_capture.py; README.md there): two `/metrics` bodies and two sets of API
answers around the traffic. They go through the exporter's own poll (parse -> snapshot -> window ->
derive -> expose) from a client that answers with the captures, and what it exposes is checked against
the release's own statistics API and against the family table (conventions/triton_releases.py). No
older binary is needed here.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from client_double import PollClient
from test_exporter_scrapes import samples_of, value

from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.conventions.triton_releases import FAILURE_REASON_SINCE, TRITON_FAMILIES, families_in
from triton_sre.diagnosis.releases import server_release_from_version
from triton_sre.doctor.pitfalls import PITFALLS, _applies
from triton_sre.exporter.service import Exporter

RELEASES_DIR = Path(__file__).parent / "data" / "releases"
RELEASES = sorted((p.parent for p in RELEASES_DIR.glob("*/capture.json")), key=lambda p: p.name)
IDS = [p.name for p in RELEASES]
# what each model that fails to load is diagnosed as (the demo's LLM-shaped models need the Python
# backend's MetricFamily.HISTOGRAM: an AttributeError in initialize on 2.48 and older)
RUNBOOKS = {
    "broken_init": c.RUNBOOK_PYTHON_MODEL_ERROR,
    "broken_missing_module": c.RUNBOOK_PYTHON_MODULE_MISSING,
    "llm_vllm": c.RUNBOOK_PYTHON_MODEL_ERROR,
    "llm_trtllm": c.RUNBOOK_PYTHON_MODEL_ERROR,
}
RETURNS_ERROR, STREAM, ASYNC_STREAM = "returns_error", "stream_count", "stream_count_async"
_SAMPLE = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?\s")


def minor(folder: Path) -> int:
    return int(folder.name.split(".")[1])


def release_of(folder: Path) -> str:
    major, minor_, patch = (int(x) for x in folder.name.split("."))
    release = server_release_from_version(major, minor_, patch)
    assert release is not None, folder.name
    return release


@cache
def load(folder: Path) -> dict[str, Any]:
    read = folder.joinpath
    return {
        "metrics": [read(f"metrics_{i}.txt").read_bytes() for i in (1, 2)],
        "api": [json.loads(read(f"api_{i}.json").read_text()) for i in (1, 2)],
        "capture": json.loads(read("capture.json").read_text()),
        "doctor": json.loads(read("doctor.json").read_text()),
        "live": samples_of(read("exporter.txt").read_text()),
    }


class CapturedTriton(PollClient):
    """Answers the exporter's poll `n` with capture `n` (then the last one again)."""

    def __init__(self, capture: dict[str, Any]) -> None:
        self.capture = capture
        self.polls = 0

    def metrics(self) -> bytes:
        body = self.capture["metrics"][min(self.polls, 1)]
        self.polls += 1  # the poll reads the metrics first, then the API
        return body

    def server_metadata(self) -> dict[str, Any]:
        return self.capture["capture"]["server"]  # the release's own GET /v2, captured with the rest

    def repository_index(self) -> list[dict[str, Any]]:
        return self.capture["api"][min(self.polls - 1, 1)]["index"]["body"]

    def all_stats(self) -> list[dict[str, Any]]:
        return self.capture["api"][min(self.polls - 1, 1)]["stats"]["body"]["model_stats"]

    def model_config(self, model: str, version: str = "") -> dict[str, Any]:
        return self.capture["api"][min(self.polls - 1, 1)]["configs"][model]["body"]


@cache
def polled(folder: Path) -> dict[str, list]:
    exporter = Exporter(
        ExporterSettings(interval=1, window=600),
        client=CapturedTriton(load(folder)),  # type: ignore[arg-type]
        clock=itertools.count(1_800_000_000).__next__,
    )
    for _ in range(2):
        assert exporter.poll_once() is not None
    return samples_of(exporter.metrics_text().decode())


def stats_delta(folder: Path) -> dict[str, dict[str, float]]:
    """Per model (version 1): the statistics' increase between the two captures."""
    before, after = ({m["name"]: m for m in a["stats"]["body"]["model_stats"]} for a in load(folder)["api"])
    out = {}
    for name, m in after.items():
        b = before[name]
        row = {k: m[k] - b[k] for k in ("inference_count", "execution_count")}
        for stage, entry in m[c.STATS_INFERENCE_STATS].items():
            row[f"{stage}_count"] = entry["count"] - b[c.STATS_INFERENCE_STATS][stage]["count"]
            row[f"{stage}_ns"] = entry["ns"] - b[c.STATS_INFERENCE_STATS][stage]["ns"]
        out[name] = row
    return out


def families(body: bytes) -> tuple[dict[str, str], dict[str, set[str]]]:
    """(# TYPE per family, label names per family) of a body, read by this test's own regex."""
    return _read(body)[:2]


def helps(body: bytes) -> dict[str, str]:
    return _read(body)[2]


def _read(body: bytes) -> tuple[dict[str, str], dict[str, set[str]], dict[str, str]]:
    types: dict[str, str] = {}
    labels: dict[str, set[str]] = {}
    help_: dict[str, str] = {}
    for line in body.decode().splitlines():
        if line.startswith("# HELP "):
            _, _, name, text = line.split(None, 3)
            help_[name] = text
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(None, 3)
            types[name] = kind
            continue
        found = _SAMPLE.match(line)
        if found:
            name = found[1]
            base = next((name[: -len(s)] for s in ("_count", "_sum", "_bucket") if name.endswith(s)), name)
            name = base if base in types else name
            labels.setdefault(name, set()).update(re.findall(r'(\w+)="', found[2] or ""))
    return types, labels, help_


def test_six_releases_from_2_36_to_2_51_each_name_its_wheel_and_server():
    assert [f.name for f in RELEASES] == ["2.36.0", "2.39.0", "2.42.0", "2.44.0", "2.48.0", "2.51.0"]
    for folder in RELEASES:
        capture = load(folder)["capture"]
        assert capture["server"]["version"] == folder.name
        wheel = capture["wheel"]
        assert wheel == "installed" or capture["command"].startswith(f"/tmp/wheels/{wheel}/"), folder.name
        assert "summary_latencies=true" in capture["command"]


@pytest.mark.parametrize("folder", RELEASES, ids=IDS)
def test_a_healthy_poll_of_every_release_raises_no_fault(folder: Path) -> None:
    samples = polled(folder)
    assert value(samples, c.M_UP) == 1
    faults = {(s.labels[c.L_TARGET], s.labels[c.L_KIND]): s.value for s in samples[c.M_POLL_ERRORS]}
    assert faults and set(faults.values()) == {0.0}, {k: v for k, v in faults.items() if v}
    for name, found in samples.items():
        if name.startswith("triton_sre_"):
            assert all(math.isfinite(s.value) and s.value >= 0 for s in found), name
    # the one input an older release cannot give: the pending-request gauge (23.09+, 2.38 measured absent
    # on 2.36 and present from 2.39); everything else these captures need is there on every release
    pending = c.NV_PENDING_REQUEST_COUNT in families(load(folder)["metrics"][1])[0]
    missing = {s.labels[c.L_CHECK]: s.value for s in samples[c.M_INPUT_MISSING]}
    assert missing == {check: float(check == c.CHECK_PENDING_REQUESTS and not pending) for check in missing}
    assert pending == (minor(folder) >= 39)
    doctor = {check["id"]: check for check in load(folder)["doctor"]["checks"]}
    assert doctor[c.CHECK_PENDING_REQUESTS]["ok"] == pending
    if not pending:
        assert f"Triton {folder.name} predates it" in doctor[c.CHECK_PENDING_REQUESTS]["found"]


@pytest.mark.parametrize("folder", RELEASES, ids=IDS)
def test_batching_ratio_and_queue_time_agree_with_the_release_s_own_statistics(folder: Path) -> None:
    samples = polled(folder)
    live = load(folder)["live"]
    configs = load(folder)["api"][1]["configs"]
    checked = 0
    for model, d in stats_delta(folder).items():
        mv = {"model": model, "version": "1"}
        ratio = value(samples, c.M_BATCHING_RATIO, **mv)
        ensemble = configs[model]["body"].get("platform") == c.PLATFORM_ENSEMBLE
        if ensemble or d["execution_count"] == 0 or d["inference_count"] == 0:
            assert ratio is None, (model, d)
            continue
        checked += 1
        assert ratio == pytest.approx(d["inference_count"] / d["execution_count"], rel=1e-12), model
        # the live exporter (tests/release_capture.py) polled the same server: the same figure
        assert value(live, c.M_BATCHING_RATIO, **mv) == pytest.approx(ratio, rel=1e-12), model
        if d["fail_count"] == 0:  # Triton's request duration counts failed requests too
            queue = value(samples, c.M_REQUEST_STAGE_SECONDS, **mv, stage=c.STAGE_QUEUE)
            assert queue == pytest.approx(d["queue_ns"] / 1e9 / d["success_count"], rel=1e-3, abs=2e-6), model
            assert value(live, c.M_REQUEST_STAGE_SECONDS, **mv, stage=c.STAGE_QUEUE) == pytest.approx(queue)
    assert checked >= 5  # vector_scale, text_echo, slow_model, tail_model, stream_count on every release
    # dynamic batching batched (8 clients, max_batch_size 16) and one-instance models queued
    assert value(samples, c.M_BATCHING_RATIO, model="vector_scale", version="1") > 2
    slow = value(samples, c.M_REQUEST_STAGE_FRACTION, model="slow_model", version="1", stage=c.STAGE_QUEUE)
    assert slow > 0.5


@pytest.mark.parametrize("folder", RELEASES, ids=IDS)
def test_model_states_and_the_diagnosed_cause_of_each_failed_load(folder: Path) -> None:
    samples = polled(folder)
    index = load(folder)["api"][1]["index"]["body"]
    ready = {e["name"] for e in index if e["state"] == c.STATE_READY}
    shown = {
        s.labels["model"]
        for s in samples[c.M_MODEL_STATE]
        if s.labels[c.L_STATE] == c.STATE_READY and s.value
    }
    assert shown == ready
    unavailable = {s.labels["model"]: s.labels[c.L_RUNBOOK] for s in samples[c.M_MODEL_UNAVAILABLE]}
    assert unavailable == {e["name"]: RUNBOOKS[e["name"]] for e in index if e["state"] == c.STATE_UNAVAILABLE}
    # the LLM-shaped demo models load from 2.51 only (MetricFamily.HISTOGRAM); the version folder "v1"
    # never enters the index on any release
    assert ("llm_vllm" in unavailable) == (minor(folder) < 51)
    assert "broken_version_dir" not in {e["name"] for e in index}
    # `triage --triton-url` against the same live server: the same causes from the same index
    triage = json.loads(folder.joinpath("triage.json").read_text())
    assert {f["model"]: f["runbook"] for f in triage["findings"]} == unavailable
    assert (triage["server_version"], triage["release"]) == (
        folder.name.removesuffix(".0"),
        release_of(folder),
    )


@pytest.mark.parametrize("folder", RELEASES, ids=IDS)
def test_what_each_release_registers_is_what_the_family_table_says(folder: Path) -> None:
    """The binaries agree with conventions/triton_releases.py (read from the release branches): every
    core family a release registers is in the table for that release with its type and HELP, and every core
    family the table gives it is registered, but for those that need a GPU, the response cache or a flag
    these servers did not get. `reason` on the failure counter from FAILURE_REASON_SINCE."""
    release = release_of(folder)
    types, labels = families(load(folder)["metrics"][1])
    table = {f.name: f for f in TRITON_FAMILIES}
    core = {name for name, f in table.items() if f.source.startswith("server src/core")}
    help_ = helps(load(folder)["metrics"][1])
    for name, kind in types.items():
        if name in core:
            assert table[name].in_release(release) and table[name].kind == kind, (name, release)
            assert table[name].help_in(release) == help_[name], (name, release)
    conditional = {
        f.name
        for f in TRITON_FAMILIES
        if f.labels == (c.LABEL_GPU_UUID,) or "cache" in f.name or f.name == c.NV_FIRST_RESPONSE_HISTOGRAM_MS
    }
    expected = {f.name for f in families_in(release)} & core - conditional
    assert expected <= set(types), sorted(expected - set(types))
    assert (c.LABEL_REASON in labels[c.NV_REQUEST_FAILURE]) == (release >= FAILURE_REASON_SINCE)


def test_response_statistics_appear_in_2_44():
    for folder in RELEASES:
        entry = load(folder)["api"][1]["stats"]["body"]["model_stats"][0]
        assert ("response_stats" in entry) == (minor(folder) >= 44), folder.name


def test_returned_python_errors_and_async_decoupled_models_by_release():
    """doctor's two Python-backend pitfalls, where the binaries put them: a returned error counts as a
    failure up to 2.46 and as a success from 2.47 (2.45-2.47 measured separately, bench/RESULTS.md);
    `async def execute` fails every request before 2.45 and reports a fraction of the stream's time as
    compute from then on."""
    by_id = {p.id: p for p in PITFALLS}
    for folder in RELEASES:
        d = stats_delta(folder)
        returned, streamed, asynced = d[RETURNS_ERROR], d[STREAM], d[ASYNC_STREAM]
        counted_ok = returned["success_count"] == 3 and returned["fail_count"] == 0
        assert counted_ok != (returned["fail_count"] == 3), folder.name
        assert counted_ok == _applies(by_id["python-returned-errors"], minor(folder)), folder.name
        async_runs = asynced["success_count"] == 6
        assert async_runs == (asynced["fail_count"] == 0), folder.name
        assert async_runs == _applies(by_id["decoupled-compute-time"], minor(folder)), folder.name
        sync_infer = streamed["compute_infer_ns"] / streamed["compute_infer_count"]
        assert sync_infer > 20e6, folder.name  # 5 responses 5 ms apart: the stream's time is compute
        if async_runs:
            assert asynced["compute_infer_ns"] / asynced["compute_infer_count"] < sync_infer / 10, folder.name


@pytest.mark.parametrize("folder", RELEASES, ids=IDS)
def test_the_release_is_exported_and_an_input_it_predates_needs_that_release(folder: Path) -> None:
    """triton_sre_triton_info carries the captured server's version; pending-requests (23.09, 2.38) is
    missing on 2.36 with needs_release 23.09, so TritonSREInputMissing (needs_release="") stays quiet,
    and present on the later releases; every other check keeps needs_release ""."""
    got = polled(folder)
    assert [(s.labels, s.value) for s in got[c.M_TRITON_INFO]] == [({c.LABEL_VERSION: folder.name}, 1.0)]
    series = got[c.M_INPUT_MISSING]
    missing = {s.labels[c.L_CHECK]: (s.labels[c.L_NEEDS_RELEASE], s.value) for s in series}
    assert len(missing) == len(series) == len(c.TRITON_CHECKS)  # one series a check
    predates = minor(folder) < 38
    assert missing[c.CHECK_PENDING_REQUESTS] == (("23.09", 1.0) if predates else ("", 0.0))
    assert all(needs == "" for check, (needs, _) in missing.items() if check != c.CHECK_PENDING_REQUESTS)
