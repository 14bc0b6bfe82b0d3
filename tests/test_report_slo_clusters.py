"""The report's SLO section with the spec's `cluster_label`: a table per cluster, as the rules judge
each cluster's model apart, through the CLI against a real Prometheus holding two clusters' ten
minutes (backfilled). Cluster `a`'s ranker fails 1 request in 10 and answers every request within
500 ms; cluster `b`'s never fails and answers half its requests slower than 500 ms."""

from __future__ import annotations

import csv
import time
from pathlib import Path

from backfilled_prometheus import Series, backfilled
from test_report_answers import run
from test_report_slo_kinds import SCRAPE, SCRAPES, SPEC, T0, _counter

from triton_sre import conventions as c
from triton_sre.data import shipped
from triton_sre.report.slo import SLI_HISTOGRAM, SLI_REQUESTS
from triton_sre.report.slo_text import NOT_SERVED, STATUS
from triton_sre.slo import DEFAULT_SPEC_FILE, load_spec

CLUSTER = "cluster"  # the spec's cluster_label
AVAILABILITY, LATENCY = (
    next(s.name for s in SPEC.slos if s.type == k) for k in (c.SLO_AVAILABILITY, c.SLO_LATENCY)
)
HIST = c.NV_FIRST_RESPONSE_HISTOGRAM_MS
BAD_REASON = next(r for r in c.FAILURE_REASONS if r != c.FAILURE_REASON_CANCELED)


def _labels(cluster: str, **more: str) -> dict[str, str]:
    base = {c.LABEL_JOB: SPEC.triton_job, c.LABEL_MODEL: "ranker", c.LABEL_VERSION: "1", CLUSTER: cluster}
    return {**base, **more}


def _series() -> list[Series]:
    at = lambda v: _counter(lambda i: v)  # noqa: E731
    return [
        (c.NV_REQUEST_SUCCESS, _labels("a"), at(9.0)),
        (c.NV_REQUEST_FAILURE, _labels("a", **{c.LABEL_REASON: BAD_REASON}), at(1.0)),
        (c.NV_REQUEST_SUCCESS, _labels("b"), at(10.0)),
        (f"{HIST}_count", _labels("a"), at(10.0)),
        (f"{HIST}_bucket", _labels("a", **{c.LABEL_LE: "500"}), at(10.0)),
        (f"{HIST}_count", _labels("b"), at(10.0)),
        (f"{HIST}_bucket", _labels("b", **{c.LABEL_LE: "500"}), at(5.0)),
    ]


def _report(tmp_path: Path, series: list[Series]) -> list[dict[str, str]]:
    """slos.csv's rows of the report of the shipped spec with the cluster label on, over `series`."""
    spec = (
        shipped(DEFAULT_SPEC_FILE)
        .read_text(encoding="utf-8")
        .replace(f"# cluster_label: {CLUSTER}", f"cluster_label: {CLUSTER}")
    )
    (tmp_path / "slos.yaml").write_text(spec, encoding="utf-8")
    assert load_spec(tmp_path / "slos.yaml").cluster_label == CLUSTER
    with backfilled(tmp_path / "prom", series) as prom:
        code, _out, err = run(
            prom.url,
            tmp_path / "out",
            "--start",
            f"{T0:.0f}",
            "--end",
            f"{T0 + SCRAPE * SCRAPES:.0f}",
            "--step",
            f"{SCRAPE:.0f}",
            "--slo-file",
            str(tmp_path / "slos.yaml"),
        )
    assert code == c.EXIT_OK, err
    return list(csv.DictReader((tmp_path / "out" / "slos.csv").open(encoding="utf-8")))


def test_each_cluster_gets_its_own_rows(tmp_path: Path) -> None:
    rows = _report(tmp_path, _series())
    got = {(r["slo"], r["sli"], r[CLUSTER], r["model"]): (r["requests"], r["bad"]) for r in rows}
    assert got == {
        (AVAILABILITY, SLI_REQUESTS, "a", "ranker"): ("400", "40"),
        (AVAILABILITY, SLI_REQUESTS, "b", "ranker"): ("400", "0"),
        (LATENCY, SLI_HISTOGRAM, "a", "ranker"): ("400", "0"),
        (LATENCY, SLI_HISTOGRAM, "b", "ranker"): ("400", "200"),
    }
    markdown = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert f"### {AVAILABILITY} in cluster a:" in markdown and f"### {LATENCY} in cluster b:" in markdown


def test_each_cluster_gets_its_own_model_rows(tmp_path: Path) -> None:
    """journey28: on a global store the model table summed both clusters' `ranker` into one row whose
    failures named no cluster (east's failing canary and west's healthy one read as one model). With
    the spec's cluster_label every model row is `<cluster>/<model>`, each with its own cluster's figures;
    a cluster whose samples stop before the range's end is named under the table."""
    spec = (
        shipped(DEFAULT_SPEC_FILE)
        .read_text(encoding="utf-8")
        .replace(f"# cluster_label: {CLUSTER}", f"cluster_label: {CLUSTER}")
    )
    (tmp_path / "slos.yaml").write_text(spec, encoding="utf-8")
    at = lambda v: _counter(lambda i: v)  # noqa: E731
    series = [
        *_series(),
        *((c.NV_INFERENCE_COUNT, _labels(name), at(rate)) for name, rate in (("a", 9.0), ("b", 10.0))),
        *((c.NV_EXEC_COUNT, _labels(name), at(rate)) for name, rate in (("a", 9.0), ("b", 10.0))),
        # Triton's `up`: a's all along; b's Prometheus stops sending at scrape 20 of 40
        ("up", {c.LABEL_JOB: SPEC.triton_job, CLUSTER: "a"}, [(T0 + SCRAPE * i, 1.0) for i in range(41)]),
        ("up", {c.LABEL_JOB: SPEC.triton_job, CLUSTER: "b"}, [(T0 + SCRAPE * i, 1.0) for i in range(21)]),
    ]
    with backfilled(tmp_path / "prom", series) as prom:
        span = ("--start", f"{T0:.0f}", "--end", f"{T0 + SCRAPE * SCRAPES:.0f}", "--step", f"{SCRAPE:.0f}")
        code, _out, err = run(prom.url, tmp_path / "out", *span, "--slo-file", str(tmp_path / "slos.yaml"))
    assert code == c.EXIT_OK, err
    rows = list(csv.DictReader((tmp_path / "out" / "models.csv").open(encoding="utf-8")))
    got = {r["model"]: (r["requests"], r["failures"], r["inferences"]) for r in rows}
    assert got == {"a/ranker": ("400", "40", "360"), "b/ranker": ("400", "0", "400")}
    # a cluster whose samples stopped is said to have stopped, not read as a quiet one (journey28)
    markdown = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    stopped = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(T0 + SCRAPE * 20))
    assert f"cluster b: no sample after {stopped}, 5.0 min before the range's end" in markdown, markdown
    assert "cluster a: no sample" not in markdown


# notserved28: a model not served is no data per cluster, as TritonSLOModelNotServed judges it
REFUSED = "reranker"


def _state(cluster: str, model: str, state: str, version: str = "1") -> Series:
    """The exporter's state series of a version (a refused config: by name alone, no version label)."""
    labels = {c.LABEL_JOB: SPEC.exporter_job, c.LABEL_MODEL: model, c.L_STATE: state, CLUSTER: cluster}
    if version:
        labels[c.LABEL_VERSION] = version
    return (c.M_MODEL_STATE, labels, [(T0 + SCRAPE * i, 1.0) for i in range(SCRAPES + 1)])


def test_a_model_not_served_is_no_data_in_its_own_cluster(tmp_path: Path) -> None:
    """reranker is refused in cluster a (by name alone, UNKNOWN), READY in b, and refused in c, whose
    Triton has no counter at all: a and c get its no-data row (c a table of its own), b none; slos.csv
    has the rows with their status. Before: no such row with a cluster_label, and none in slos.csv."""
    states = [
        _state("a", "ranker", c.STATE_READY),
        _state("a", REFUSED, c.STATE_UNKNOWN, ""),
        _state("b", "ranker", c.STATE_READY),
        _state("b", REFUSED, c.STATE_READY),
        _state("c", REFUSED, c.STATE_UNKNOWN, ""),
    ]
    rows = _report(tmp_path, [*_series(), *states])
    unserved = NOT_SERVED.format(state=c.STATE_UNKNOWN)
    got = {(r["slo"], r[CLUSTER], r["model"]): (r["requests"], r["error_ratio"], r[STATUS]) for r in rows}
    assert {k: v for k, v in got.items() if k[2] == REFUSED} == {
        (slo.name, cluster, REFUSED): ("0", "", unserved) for slo in SPEC.slos for cluster in "ac"
    }  # every SLO of the default spec covers all models
    assert got[(AVAILABILITY, "a", "ranker")] == ("400", "0.1", "")  # the rows of events: no status
    markdown = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    a = markdown.split(f"### {AVAILABILITY} in cluster a:")[1].split("###")[0]
    b = markdown.split(f"### {AVAILABILITY} in cluster b:")[1].split("###")[0]
    c_ = markdown.split(f"### {AVAILABILITY} in cluster c:")[1].split("###")[0]
    assert f"| {REFUSED} | – | 0 | – | {unserved} |" in a and f"| {REFUSED} | – | 0 | – | {unserved} |" in c_
    assert REFUSED not in b and "| ranker |" in a and "| ranker |" not in c_
