"""An ensemble's latency split in the report is its steps' (reportens): on the real 2.51 an ensemble's
own queue counter holds only the hand-off to its first step, its steps' queue falls under "other"
(docs/exporter.md, "Ensembles: where the time goes"). The report reads the exporter's
triton_sre_ensemble_step_seconds and names the step that queues most; models.csv says the same."""

from __future__ import annotations

import csv
import io
import math

import pandas as pd
import pytest
from test_report_batcher import STEP, TIMES, counter
from test_report_ensemble import EMBEDDER, PIPELINE, _data

from triton_sre import conventions as c
from triton_sre.report.ensemble_steps import SPLIT_COUNTERS, time_average
from triton_sre.report.figures import ALL_VERSIONS, STEPS_PER_MODEL, RangeData, model_table
from triton_sre.report.render import CostReport, table_notes, to_csv, to_markdown
from triton_sre.report.steps import report_plan

POST = "post"
# step -> stage -> the exporter's seconds per pipeline request at the range's first and last samples
STEPS = {
    EMBEDDER: {
        c.STAGE_QUEUE: (0.002, 0.004),
        c.STAGE_COMPUTE_INFER: (0.005, 0.005),
        c.STAGE_OTHER: (0.001, 0.001),
    },
    POST: {
        c.STAGE_QUEUE: (0.010, 0.010),
        c.STAGE_COMPUTE_INPUT: (0.0005, 0.0005),
        c.STAGE_COMPUTE_INFER: (0.0005, 0.0005),
    },
}


def _step_frame() -> pd.DataFrame:
    rows = [
        {"model": PIPELINE, "version": "1", c.L_STEP: step, c.L_STAGE: stage, "timestamp": t, "value": v}
        for step, stages in STEPS.items()
        for stage, values in stages.items()
        for t, v in zip((TIMES[0], TIMES[-1]), values, strict=True)
    ]
    rows.append({**rows[0], "timestamp": TIMES[3], "value": math.nan})  # a NaN sample is no figure
    frame = pd.DataFrame(rows)
    for label in (c.LABEL_MODEL, c.LABEL_VERSION, c.L_STEP, c.L_STAGE):  # as report/prom.py reads them
        frame[label] = frame[label].astype("category")
    return frame


def _with_steps() -> RangeData:
    data = _data(ensemble_gauge=True)
    frames = {**data.frames, c.M_ENSEMBLE_STEP_SECONDS: _step_frame()}
    return RangeData(data.start, data.end, data.step, frames)


def test_an_ensembles_split_is_its_steps_and_names_the_step_that_queues_most() -> None:
    """Before: pipeline's row gave its own counters' 30 % queue and no step. Its steps give 20 ms a
    request: queue 3 ms (embedder, the mean of 2 and 4) + 10 ms (post), compute 5 + 1 ms."""
    table, _summary = model_table(_with_steps())
    rows = table.set_index("model")
    assert rows.loc[PIPELINE, "queue_share"] == pytest.approx(13 / 20)
    assert rows.loc[PIPELINE, "compute_share"] == pytest.approx(6 / 20)
    assert rows.loc[PIPELINE, "queue_step"] == POST
    assert rows.loc[PIPELINE, "queue_step_ms"] == pytest.approx(10.0)
    # the step's own row keeps its own counters' split
    assert rows.loc[EMBEDDER, "queue_share"] == pytest.approx(0.3)
    assert rows.loc[EMBEDDER, "queue_step"] == "" and math.isnan(rows.loc[EMBEDDER, "queue_step_ms"])


def test_without_the_step_family_an_ensemble_keeps_its_own_split() -> None:
    """An exporter before triton_sre_ensemble_step_seconds: the ensemble's counters, no step named."""
    table, _summary = model_table(_data(ensemble_gauge=True))
    rows = table.set_index("model")
    assert rows.loc[PIPELINE, "queue_share"] == pytest.approx(0.3)
    assert rows.loc[PIPELINE, "queue_step"] == "" and math.isnan(rows.loc[PIPELINE, "queue_step_ms"])


def test_models_csv_and_table_say_the_steps_split() -> None:
    table, summary = model_table(_with_steps())
    report = CostReport(TIMES[0], TIMES[-1], 10.0, "test", table, summary, [])
    rows = {r["model"]: r for r in csv.DictReader(io.StringIO(to_csv(report)))}
    assert float(rows[PIPELINE]["queue_share"]) == pytest.approx(0.65)
    assert float(rows[PIPELINE]["compute_share"]) == pytest.approx(0.3)
    assert rows[PIPELINE]["queue_step"] == POST
    assert float(rows[PIPELINE]["queue_step_ms"]) == pytest.approx(10.0)
    assert rows[EMBEDDER]["queue_step"] == "" and rows[EMBEDDER]["queue_step_ms"] == ""
    line = next(x for x in to_markdown(report).splitlines() if x.startswith(f"| {PIPELINE} "))
    assert f"| 65.0% | 30.0% | {POST} |" in line


def test_the_report_reads_the_step_family_per_step_and_stage() -> None:
    query = report_plan(3600.0)[c.M_ENSEMBLE_STEP_SECONDS]
    assert query.expr.startswith("avg by (") and c.L_STEP in query.expr and c.L_STAGE in query.expr


def _counted(calls: list[tuple[str, str, float]], prefix: str = "") -> RangeData:
    """`_with_steps` plus the steps' own counters and the exporter's calls gauge (`calls`: step,
    step_version, times named; and a series of a step the config named before, older: not read).
    Per step (each 10 s): embedder v1 10 requests of 10 ms, 3 ms queue and 5 ms compute; post v1 (the
    version pipeline names) 20 requests of 2 ms, 1 ms queue, 0.5 ms compute; post v2, called directly,
    10 requests of 100 ms, 90 ms queue."""
    per_step = {
        (PIPELINE, "1"): (10, 100_000, 30_000, 0),
        (EMBEDDER, "1"): (10, 100_000, 30_000, 50_000),
        (POST, "1"): (20, 40_000, 20_000, 10_000),
        (POST, "2"): (10, 1_000_000, 900_000, 10_000),
    }
    families = (
        c.NV_REQUEST_SUCCESS,
        c.NV_REQUEST_DURATION_US,
        c.NV_QUEUE_DURATION_US,
        c.NV_COMPUTE_INFER_DURATION_US,
    )
    frames = dict(_with_steps().frames)
    for i, family in enumerate(families):
        frames[family] = pd.concat(counter(m, v, values[i]) for (m, v), values in per_step.items())
    for family in (c.NV_INFERENCE_COUNT, c.NV_EXEC_COUNT):
        frames[family] = frames[c.NV_REQUEST_SUCCESS]
    frames[c.NV_REQUEST_FAILURE] = pd.concat(counter(m, v, 0) for m, v in per_step)
    rows = [(PIPELINE, step, version, TIMES[-1], times) for step, version, times in calls]
    rows.append((PIPELINE, "retired", "-1", TIMES[2], 1.0))
    frames[c.M_ENSEMBLE_STEP_CALLS] = pd.DataFrame(
        rows, columns=[c.LABEL_MODEL, c.L_STEP, c.L_STEP_VERSION, "timestamp", "value"]
    ).astype({c.LABEL_MODEL: "category", c.L_STEP: "category", c.L_STEP_VERSION: "category"})
    if prefix:  # every row's model as report/namespaces.py names it (a cluster, a namespace); steps bare
        frames = {
            family: frame.assign(model=prefix + frame[c.LABEL_MODEL].astype(str))
            if c.LABEL_MODEL in frame.columns
            else frame
            for family, frame in frames.items()
        }
    return RangeData(TIMES[0], TIMES[-1], STEP, frames)


def test_an_ensembles_split_weighs_its_steps_counters_by_requests() -> None:
    """reportsplit: before, the row was the exporter's samples averaged over time (queue 13/20, post
    named). Each pipeline request is one request of embedder and two of post v1 (named twice; its v2's
    direct requests are not the pipeline's): queue 3 + 2 x 1 ms, compute 5 + 2 x 0.5 ms, of 10 + 2 x 2 ms."""
    table, _summary = model_table(_counted([(EMBEDDER, "-1", 1.0), (POST, "1", 2.0)]))
    rows = table.set_index(["model", "version"])
    row = rows.loc[(PIPELINE, "1")]
    assert row["queue_share"] == pytest.approx(5 / 14)
    assert row["compute_share"] == pytest.approx(6 / 14)
    assert row["queue_step"] == EMBEDDER and row["queue_step_ms"] == pytest.approx(3.0)
    assert row["split_from"] == SPLIT_COUNTERS
    assert rows.loc[(EMBEDDER, "1"), "split_from"] == ""  # a step's row: its own counters, nothing said
    report = CostReport(TIMES[0], TIMES[-1], STEP, "test", table, _summary, [])
    line = next(x for x in to_markdown(report).splitlines() if x.startswith(f"| {PIPELINE} "))
    assert f"| 35.7% | 42.9% | {EMBEDDER} | {SPLIT_COUNTERS} |" in line


@pytest.mark.parametrize("prefix", ["east/", "/models/team_a::", "east//models/team_a::"])
def test_a_qualified_ensemble_finds_its_steps_qualified_as_it_is(prefix: str) -> None:
    """Rows of a cluster (`east/`) or of a shared name's namespace: the exporter's `step` label is bare."""
    table, _summary = model_table(_counted([(EMBEDDER, "-1", 1.0), (POST, "1", 2.0)], prefix))
    row = table.set_index("model").loc[prefix + PIPELINE]
    assert row["split_from"] == SPLIT_COUNTERS
    assert row["queue_share"] == pytest.approx(5 / 14) and row["queue_step"] == EMBEDDER


def test_a_step_without_counters_leaves_the_time_average_and_the_row_says_so() -> None:
    table, _summary = model_table(_counted([(EMBEDDER, "-1", 1.0), (POST, "3", 1.0)]))
    row = table.set_index("model").loc[PIPELINE]
    assert row["queue_share"] == pytest.approx(13 / 20)  # the exporter's samples, as before
    assert row["queue_step"] == POST
    assert row["split_from"] == time_average(f"no request of {POST} counted")
    rows = {
        r["model"]: r
        for r in csv.DictReader(
            io.StringIO(to_csv(CostReport(TIMES[0], TIMES[-1], STEP, "test", table, _summary, [])))
        )
    }
    assert rows[PIPELINE]["split_from"] == time_average(f"no request of {POST} counted")


def test_an_exporter_without_the_calls_gauge_gives_the_time_average_said() -> None:
    table, _summary = model_table(_with_steps())
    assert table.set_index("model").loc[PIPELINE, "split_from"].startswith(time_average("no ")[:-1])
    query = report_plan(3600.0)[c.M_ENSEMBLE_STEP_CALLS]
    assert c.L_STEP in query.expr and c.L_STEP_VERSION in query.expr


def test_an_ensemble_served_in_two_versions_has_its_steps_split_once() -> None:
    """tidy32: a Triton counting an ensemble's versions apart gives a total row and a row per version; the
    steps' split (their counters do not say which version called) was copied onto each version's row.
    It is on the total row only; the versions' rows say whose it is, their shares left empty (their own
    counters' split is the hand-off only)."""
    data = _counted([(EMBEDDER, "-1", 1.0), (POST, "1", 2.0)])
    frames = {
        family: pd.concat([frame, frame[frame["model"] == PIPELINE].assign(version="2")], ignore_index=True)
        if family.startswith("nv_") and "version" in frame.columns
        else frame
        for family, frame in data.frames.items()
    }
    table, _summary = model_table(RangeData(data.start, data.end, data.step, frames))
    rows = table[table["model"] == PIPELINE].set_index("version")
    assert list(rows.index) == [ALL_VERSIONS, "1", "2"]
    assert rows.loc[ALL_VERSIONS, "split_from"] == SPLIT_COUNTERS
    assert rows.loc[ALL_VERSIONS, "queue_step"] == EMBEDDER
    for version in ("1", "2"):
        row = rows.loc[version]
        assert row["split_from"] == STEPS_PER_MODEL, row
        assert row["queue_step"] == "" and math.isnan(row["queue_share"]) and math.isnan(row["compute_share"])
    assert "not told apart" not in " ".join(table_notes(table))  # rows per version: the notes say nothing
