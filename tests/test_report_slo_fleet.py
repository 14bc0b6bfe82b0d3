"""The report's SLO section with many SLOs and clusters (fleet34): `with_unserved` groups the tables by SLO
and by cluster once instead of scanning every table for each SLO and each of its clusters (quadratic in
the SLOs), and gives the same tables, in the same order, with the same models not served."""

from __future__ import annotations

import random

import pandas as pd

from triton_sre.report.slo import COLUMNS, SLOSection, SLOTable
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
