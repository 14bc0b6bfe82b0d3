"""The report's SLO section with many SLOs and clusters (fleet34): `with_unserved` groups the tables by SLO
and by cluster once instead of scanning every table for each SLO and each of its clusters (quadratic in
the SLOs), and `cluster_tables` finds each frame's rows of every cluster in one pass instead of comparing
every row with each cluster (quadratic in the clusters); both give the same tables as the scans did."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd

from triton_sre import conventions as c
from triton_sre.report.slo import (
    BAD,
    COLUMNS,
    FAILURE,
    SUCCESS,
    SLOSection,
    SLOTable,
    cluster_tables,
    slo_table,
)
from triton_sre.report.slo_text import covers, with_unserved
from triton_sre.slo import SLO, parse_spec


def spec_slos(n: int) -> tuple[SLO, ...]:
    lines = ["slos:"]
    for i in range(n):
        selector = {0: f'{{regex: "m{i}_.*|shared"}}', 1: f"[m{i}_a, m{i}_b, shared]", 2: "all"}[i % 3]
        lines.append(
            f"  - {{name: av-{i}, type: availability, models: {selector}, objective: 99, period: 30d}}"
        )
    return parse_spec("\n".join(lines) + "\n").slos


def table(slo: SLO, cluster: str | None, models: list[str]) -> SLOTable:
    rows = pd.DataFrame([{col: (m if col == "model" else 1) for col in COLUMNS} for m in models])
    return SLOTable(slo, rows if models else pd.DataFrame(columns=list(COLUMNS)), cluster=cluster)


def scanned(section: SLOSection, slos: tuple[SLO, ...]) -> list[tuple[str, str | None, tuple, list]]:
    """What each table should be, found by scanning every table and every unserved model per SLO."""
    out = []
    for slo in slos:
        own = [t for t in section.tables if t.slo.name == slo.name]
        clusters = {t.cluster for t in own}
        extra = sorted(
            {k for k, m, _ in section.unserved if k not in clusters and covers(slo, m)}, key=lambda k: k or ""
        )
        own += [table(slo, k, []) for k in extra]
        done: set[str | None] = set()
        for t in sorted(own, key=lambda t: t.cluster or ""):
            rows: tuple = t.unserved
            if t.cluster not in done:
                done.add(t.cluster)
                seen = {str(m) for o in own if o.cluster == t.cluster for m in o.rows["model"]}
                rows = tuple(
                    (m, s)
                    for k, m, s in section.unserved
                    if k == t.cluster and m not in seen and covers(slo, m)
                )
            out.append((slo.name, t.cluster, rows, [str(m) for m in t.rows["model"]]))
    return out


def test_grouped_tables_equal_the_scan_of_every_table() -> None:
    rng = random.Random(34)
    slos = spec_slos(60)
    clusters = [f"c{k}" for k in range(8)]
    tables = []
    for slo in slos:  # some SLOs with no table in some clusters, some with two tables in one
        for k in clusters:
            for _ in range(rng.choice([0, 1, 1, 2])):
                i = slo.name.removeprefix("av-")
                tables.append(table(slo, k, rng.sample([f"m{i}_a", f"m{i}_b", "shared", "other"], 2)))
    rng.shuffle(tables)  # the SLOs' tables interleaved, as the section may hold them
    unserved = tuple(
        (
            rng.choice(clusters),
            rng.choice([f"m{rng.randrange(60)}_a", f"m{rng.randrange(60)}_b", "shared"]),
            "X",
        )
        for _ in range(150)
    )
    section = SLOSection(tables=tuple(tables), unserved=unserved)
    got = with_unserved(section, slos)
    assert [
        (t.slo.name, t.cluster, t.unserved, [str(m) for m in t.rows["model"]]) for t in got.tables
    ] == scanned(section, slos)
    assert sum(bool(t.unserved) for t in got.tables) > 10  # models not served were placed, not none
    assert len(got.tables) > len(tables)  # and SLOs without a table in a cluster got an empty one


def test_one_cluster_unlabelled() -> None:
    slos = spec_slos(3)
    section = SLOSection(
        tables=(
            table(slos[1], None, ["m1_a"]),
            table(slos[0], None, ["m0_x"]),
            table(slos[1], None, ["shared"]),
        ),
        unserved=((None, "m1_b", "UNAVAILABLE"), (None, "shared", "UNAVAILABLE"), (None, "m0_y", "LOADING")),
    )
    got = [(t.slo.name, t.unserved) for t in with_unserved(section, slos).tables]
    assert got == [
        ("av-0", (("shared", "UNAVAILABLE"), ("m0_y", "LOADING"))),  # in the order of section.unserved
        ("av-1", (("m1_b", "UNAVAILABLE"),)),  # shared has a row in av-1's second table: it has data
        ("av-1", ()),
        ("av-2", (("m1_b", "UNAVAILABLE"), ("shared", "UNAVAILABLE"), ("m0_y", "LOADING"))),
    ]


def per_cluster_scan(slo: SLO, parts: tuple[dict, dict], seconds: float, label: str) -> list[tuple[str, str]]:
    """(cluster, its table as CSV) with each cluster's rows found by comparing every row with it."""

    def key(frame: pd.DataFrame) -> pd.Series | None:
        return frame[label].fillna("").astype(str) if label in frame.columns else None

    found = sorted({v for part in parts for f in part.values() if key(f) is not None for v in key(f)})

    def of(frame: pd.DataFrame, value: str) -> pd.DataFrame:
        k = key(frame)
        return frame.iloc[0:0] if k is None else frame[k == value]

    return [
        (v, slo_table(slo, *({p: of(f, v) for p, f in part.items()} for part in parts), seconds).to_csv())
        for v in found
    ]


def test_cluster_tables_equal_the_scan_of_every_row() -> None:
    rng = np.random.default_rng(34)
    slo = parse_spec(
        "cluster_label: cluster\nslos:\n"
        "  - {name: av, type: availability, models: all, objective: 99, period: 30d}\n"
    ).slos[0]
    clusters = np.array(["east", "west", "k10", "k2", None], dtype=object)  # None: a series without the label

    def increases(reason: bool, n: int = 60) -> pd.DataFrame:
        frame = pd.DataFrame(
            {
                "cluster": rng.choice(clusters, n),
                c.LABEL_MODEL: rng.choice(["m1", "m2", "m3"], n),
                c.LABEL_VERSION: rng.choice(["1", "2"], n),
                c.LABEL_JOB: "triton",
                "increase": rng.integers(1, 100, n).astype(float),
                **({c.LABEL_REASON: "BACKEND"} if reason else {}),
            }
        )
        return frame.set_axis(rng.permutation(np.arange(0, 3 * n, 3)))  # an index with gaps, out of order

    def steps(n: int = 400) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "cluster": rng.choice(clusters[:4], n),  # "k2" only here in some draws
                c.LABEL_MODEL: rng.choice(["m1", "m2", "m3"], n),
                c.LABEL_VERSION: rng.choice(["1", "2"], n),
                "timestamp": rng.integers(0, 40, n) * 15.0,
                "value": rng.random(n) * 3,
            }
        )

    totals = {BAD: increases(True), SUCCESS: increases(False), FAILURE: increases(True)}
    parts = (totals, {BAD: steps(), SUCCESS: steps(), FAILURE: pd.DataFrame(columns=["timestamp", "value"])})
    got = [(t.cluster, t.rows.to_csv()) for t in cluster_tables(slo, parts, 3600.0, "cluster")]
    assert got == per_cluster_scan(slo, parts, 3600.0, "cluster")
    assert [k for k, _ in got] == ["", "east", "k10", "k2", "west"]
    assert all(len(rows.splitlines()) > 1 for _, rows in got[1:])  # tables with rows, not empty ones
