"""Fault probes, round fifteen (branch `probes15`, 2026-12-06) — docs/failure-behaviour.md, "Fault probes,
round fifteen". Every Prometheus here is a real one holding backfilled series
(tests/backfilled_prometheus.py), behind tests/faultproxy.py where its answers are rewritten."""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests
from backfilled_prometheus import backfilled
from faultproxy import FaultProxy
from live_prometheus import Prom
from namespacing_capture import build_repositories, triton_arguments

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.config import ExporterSettings
from triton_sre.demo import VECTOR_SCALE
from triton_sre.exporter.service import Exporter
from triton_sre.prom import Prometheus
from triton_sre.stack.local_triton import LocalTriton
from triton_sre.timeorder import CONFLICT, REORDERED
from triton_sre.triton.exposition import parse

SCRAPE_S = 15.0
HISTORY_S = 4800.0
PER_S = 10.0
MODEL = "ordered"
INDEX_PATH = "/v2/repository/index"
STATS_PATH = "/v2/models/stats"


@pytest.fixture(scope="module")
def steady(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prom]:
    """One model serving ten requests a second for the last 80 minutes, up to the fixture's start."""
    start = time.time() - HISTORY_S
    stamps = [start + SCRAPE_S * i for i in range(int(HISTORY_S / SCRAPE_S))]
    labels = {c.LABEL_JOB: c.DEFAULT_TRITON_JOB, c.LABEL_MODEL: MODEL, c.LABEL_VERSION: "1"}
    samples = [(t, PER_S * (t - start)) for t in stamps]
    with backfilled(tmp_path_factory.mktemp("prom"), [(c.NV_REQUEST_SUCCESS, labels, samples)]) as prom:
        yield prom


def _rewritten(change: Callable[[list[list[object]]], list[list[object]]]) -> Callable[[bytes], bytes]:
    """A range answer whose every series' samples are changed by `change` (a proxy's doing)."""

    def rewrite(body: bytes) -> bytes:
        answer = json.loads(body)
        for series in answer["data"]["result"]:
            series["values"] = change(series["values"])
        return json.dumps(answer).encode()

    return rewrite


def _reversed(values: list[list[object]]) -> list[list[object]]:
    return values[::-1]


def _twice_differing(values: list[list[object]]) -> list[list[object]]:
    """Each time twice, the second with a value 0.1 % lower (two replicas' scrapes merged)."""
    return [point for t, v in values for point in ([t, v], [t, repr(float(str(v)) * 0.999)])]


def _requests_per_s(out: Path) -> float:
    rows = list(csv.DictReader((out / "models.csv").open(encoding="utf-8")))
    return float(next(row for row in rows if row[c.LABEL_MODEL] == MODEL)["requests_per_s"])


@pytest.mark.parametrize(
    ("change", "said"), [(_reversed, None), (_twice_differing, CONFLICT)], ids=["reversed", "twice"]
)
def test_a_range_answer_out_of_time_order_or_with_a_time_twice_gives_the_served_rate(
    steady: Prom,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: Callable[[list[list[object]]], list[list[object]]],
    said: str | None,
) -> None:
    """Before: a range answer whose samples came newest first (a proxy or query frontend joining
    answers) made every step back a counter reset: a steady 10 req/s was 1,982 req/s in the report; each
    time given twice with the second replica's value 0.1 % lower, 15,028 req/s. Now the client reads
    each series in time order, the first sample of a time kept; a time given twice with another value is
    said as partial data (which source is right is not known)."""
    out = tmp_path / "report"
    with FaultProxy(steady.url) as proxy:
        proxy.set_fault("/api/v1/query_range", _rewritten(change))
        argv = ["report", "--prometheus-url", proxy.url, "--last", "1h", "--format", "csv", "--out", str(out)]
        assert main(argv) == c.EXIT_OK
    assert _requests_per_s(out) == pytest.approx(PER_S, rel=0.02)
    err = capsys.readouterr().err
    assert (said is not None and said in err) or (said is None and CONFLICT not in err), err


def test_the_shared_range_reader_gives_each_series_in_time_order_once(steady: Prom) -> None:
    """Before: `Prometheus.query_range` (the rollout check's figures, the bot's chart) gave the samples
    as they came: newest first, or each time twice. Now in time order, one per time; a reordering is an
    info, a time twice with another value a warning."""
    end = time.time()
    with FaultProxy(steady.url) as proxy:
        for change, kept in ((_reversed, "infos"), (_twice_differing, "warnings")):
            proxy.set_fault("/api/v1/query_range", _rewritten(change))
            prom = Prometheus(proxy.url)
            (series,) = prom.query_range(c.NV_REQUEST_SUCCESS, end - 600, end, SCRAPE_S)
            stamps = [float(t) for t, _ in series["values"]]
            assert stamps == sorted(set(stamps)) and len(stamps) >= 30, stamps
            said = REORDERED if change is _reversed else CONFLICT
            assert [text for _, text in getattr(prom, kept)] == [said]
            assert not (prom.warnings if kept == "infos" else prom.infos)


def test_a_failed_model_listed_before_a_ready_one_of_the_same_name_is_shown_unavailable(
    fresh_triton_factory: Callable[..., LocalTriton], tmp_path: Path
) -> None:
    """Before: with `--model-namespacing=true` the index lists two same-named models as two rows
    without a namespace, and the exporter showed the index's last. The real 2.51 lists them in the
    order the repositories were given: `vector_scale` failing in the first repository and READY in the
    second was exported READY, no `triton_sre_model_unavailable` series, TritonModelUnavailable silent
    (failing in the second repository it was shown). Now a failed row is never hidden by another."""
    repositories = build_repositories(tmp_path)
    model_py = repositories[0] / VECTOR_SCALE / "1" / "model.py"
    source = model_py.read_text(encoding="utf-8")
    anchor = "    def execute(self, requests):"
    assert anchor in source
    failing = "    def initialize(self, args):\n        raise RuntimeError('fails to load on purpose')\n\n"
    model_py.write_text(source.replace(anchor, failing + anchor, 1), encoding="utf-8")
    repository, extra = triton_arguments(repositories)
    triton = fresh_triton_factory(repository, extra_args=extra)

    index = requests.post(f"{triton.http_url}/v2/repository/index", timeout=30).json()
    states = [row.get("state") for row in index if row["name"] == VECTOR_SCALE]
    assert states == [c.STATE_UNAVAILABLE, c.STATE_READY]  # the failing repository's row first

    exporter = Exporter(ExporterSettings(triton_url=triton.http_url, metrics_url=triton.metrics_url))
    exporter.poll_once()
    shown = {
        (s.name, dict(s.labels).get(c.L_STATE)): s.value
        for s in parse(exporter.metrics_text().decode())
        if dict(s.labels).get(c.LABEL_MODEL) == VECTOR_SCALE
    }
    assert shown[(c.M_MODEL_STATE, c.STATE_UNAVAILABLE)] == 1.0, shown
    assert shown[(c.M_MODEL_STATE, c.STATE_READY)] == 0.0, shown
    assert shown[(c.M_MODEL_UNAVAILABLE, None)] == 1.0, shown


def _each_entry(path: str, key: str, value: object) -> Callable[[bytes], bytes]:
    """The real answer of `path` with `key` of each model entry set to `value` (a proxy's doing)."""

    def rewrite(body: bytes) -> bytes:
        answer = json.loads(body)
        entries = answer if path == INDEX_PATH else answer["model_stats"]
        for entry in entries:
            if entry["name"] == VECTOR_SCALE:
                entry[key] = value
        return json.dumps(answer).encode()

    return rewrite


@pytest.mark.parametrize(
    ("path", "key", "value", "target"),
    [
        (INDEX_PATH, "name", None, c.TARGET_INDEX),
        (INDEX_PATH, "name", 5, c.TARGET_INDEX),
        (INDEX_PATH, "state", 5, c.TARGET_INDEX),
        (STATS_PATH, "name", ["vector_scale"], c.TARGET_STATS),
    ],
    ids=["index-name-null", "index-name-number", "index-state-number", "stats-name-list"],
)
def test_an_entry_triton_never_writes_is_counted_as_a_parse_error(
    triton: LocalTriton, path: str, key: str, value: object, target: str
) -> None:
    """Before: an index or statistics entry whose name was no string was dropped, and an index state
    that was a number read as UNKNOWN, without a word: the model's series vanished while
    `triton_sre_poll_errors_total` stayed 0 (every other value Triton would never write counts as
    `kind="parse"`). Now each is a parse error of its target; the rest of the answer is kept."""
    with FaultProxy(triton.http_url) as proxy:
        proxy.set_fault(path, _each_entry(path, key, value))
        exporter = Exporter(ExporterSettings(triton_url=proxy.url, metrics_url=triton.metrics_url))
        exporter.poll_once()
        text = exporter.metrics_text().decode()
    found = {
        (dict(s.labels)[c.L_TARGET], dict(s.labels)[c.L_KIND]): s.value
        for s in parse(text)
        if s.name == c.M_POLL_ERRORS and s.value
    }
    assert found == {(target, c.FAULT_PARSE): 1.0}, found
    kept = {dict(s.labels).get(c.LABEL_MODEL) for s in parse(text) if s.name == c.M_MODEL_STATE}
    assert "text_echo" in kept  # the other entries are read


@pytest.mark.parametrize("value", [8.5, True, [8], {"value": 8}], ids=["fraction", "bool", "list", "object"])
def test_a_max_batch_size_of_another_shape_is_a_parse_error_not_a_made_up_size(
    triton: LocalTriton, value: object
) -> None:
    """Before: `max_batch_size` of 8.5 was exported as 8, and `true`, `[8]` or an object as 0 (a model
    that does not batch), without a parse error. Now each is `{target="config",kind="parse"}` and the
    model has no config-derived series, as for a size that does not decode."""
    config_path = f"/v2/models/{VECTOR_SCALE}/config"

    def rewrite(body: bytes) -> bytes:
        config = json.loads(body)
        config["max_batch_size"] = value
        return json.dumps(config).encode()

    with FaultProxy(triton.http_url) as proxy:
        proxy.set_fault(config_path, rewrite)
        exporter = Exporter(ExporterSettings(triton_url=proxy.url, metrics_url=triton.metrics_url))
        exporter.poll_once()
        text = exporter.metrics_text().decode()
    sizes = {
        dict(s.labels)[c.LABEL_MODEL]: s.value for s in parse(text) if s.name == c.M_MODEL_MAX_BATCH_SIZE
    }
    assert VECTOR_SCALE not in sizes and "text_echo" in sizes, sizes
    found = {
        (dict(s.labels)[c.L_TARGET], dict(s.labels)[c.L_KIND]): s.value
        for s in parse(text)
        if s.name == c.M_POLL_ERRORS and s.value
    }
    assert found.get((c.TARGET_CONFIG, c.FAULT_PARSE)) == 1.0, found


@pytest.mark.parametrize(
    ("points", "said"),
    [
        ([[1, "1"], [2, "2"], [3, "3"]], None),
        ([[3, "3"], [1, "1"], [2, "2"]], REORDERED),
        ([[1, "1"], [1, "1"], [2, "NaN"], [2, "NaN"]], REORDERED),
        ([[2, "5"], [1, "1"], [2, "4"]], CONFLICT),
    ],
    ids=["in-order", "reordered", "exact-repeats", "conflicting-repeat"],
)
def test_both_range_readers_order_samples_alike(points: list[list[object]], said: str | None) -> None:
    """The client's two range readers (lists for the rollout check and the bot, numpy arrays for the
    report) give the same samples and say the same: time order, the first sample of each time."""
    import numpy as np

    from triton_sre.timeorder import ordered_arrays, ordered_points

    kept, told = ordered_points(points)
    stamps, values, told_arrays = ordered_arrays(
        np.array([float(t) for t, _ in points]), np.array([float(str(v)) for _, v in points])
    )
    assert told == told_arrays == said
    assert [float(t) for t, _ in kept] == stamps.tolist() == sorted({float(t) for t, _ in points})
    assert np.array_equal(np.array([float(str(v)) for _, v in kept]), values, equal_nan=True)


@pytest.fixture(scope="module")
def two_versions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prom]:
    """Versions 1 and 2 of one model at five requests a second for the last twenty minutes."""
    start = time.time() - 1200.0
    stamps = [start + SCRAPE_S * i for i in range(int(1200.0 / SCRAPE_S))]
    series = []
    for version in ("1", "2"):
        labels = {c.LABEL_JOB: c.DEFAULT_TRITON_JOB, c.LABEL_MODEL: MODEL, c.LABEL_VERSION: version}
        samples = [(t, 5.0 * (t - start)) for t in stamps]
        series += [(family, labels, samples) for family in (c.NV_REQUEST_SUCCESS, c.NV_INFERENCE_COUNT)]
    with backfilled(tmp_path_factory.mktemp("prom"), series) as prom:
        yield prom


def test_a_rollout_pass_on_samples_given_twice_with_other_values_is_inconclusive(
    two_versions: Prom, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: each time given twice with another value (two sources merged) was read as it came and the
    check passed (exit 0). Now the conflict is a Prometheus warning: a pass on it is inconclusive
    (exit 3), the warning named; the same answer in reverse order only still passes."""
    argv = ["rollout", "check", "--model", MODEL, "--baseline-version", "1", "--candidate-version", "2"]
    with FaultProxy(two_versions.url) as proxy:
        proxy.set_fault("/api/v1/query_range", _rewritten(_reversed))
        assert main([*argv, "--prometheus", proxy.url, "--format", "json"]) == c.EXIT_OK
        capsys.readouterr()
        proxy.set_fault("/api/v1/query_range", _rewritten(_twice_differing))
        code = main([*argv, "--prometheus", proxy.url, "--format", "json"])
    verdict = json.loads(capsys.readouterr().out)
    assert code == c.EXIT_INCONCLUSIVE, verdict
    assert CONFLICT in json.dumps(verdict["warnings"]), verdict
