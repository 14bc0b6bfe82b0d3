"""The report's capacity section (report/capacity.py) on series that lack the label a table is keyed
by: another writer of the exporter's family names, or a relabelling that dropped `gpu_uuid`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from triton_sre import conventions as c
from triton_sre.report.capacity import REDUCED, advice, capacity_section, fold_valid, reduced_series, tables
from triton_sre.report.prom import frame_of


def _frame(*series: dict[str, str]) -> pd.DataFrame:
    """One sample (value 2, at t=60) per series, built as the report builds its frames."""
    return frame_of([(labels, np.array([60.0]), np.array([2.0])) for labels in series])


def test_series_without_gpu_uuid_are_left_out_and_named() -> None:
    """`report` ended in `internal error: KeyError: 'gpu_uuid'` (pandas groupby on the energy cost)."""
    no_uuid = {c.LABEL_MODEL: "m", c.LABEL_VERSION: "1"}
    frames = {f: _frame(no_uuid) for f in (c.M_ENERGY_COST_PER_HOUR, c.M_GPU_MEMORY_HEADROOM_BYTES)}
    section = capacity_section(frames, step=60.0)
    assert section.gpus == [] and not section.empty
    assert section.unlabelled == (
        f"{c.M_ENERGY_COST_PER_HOUR} ({c.LABEL_GPU_UUID})",
        f"{c.M_GPU_MEMORY_HEADROOM_BYTES} ({c.LABEL_GPU_UUID})",
    )
    assert any(line.startswith("Left out: series without the label") for line in advice(section))


def test_a_mix_keeps_the_labelled_series() -> None:
    frames = {
        c.M_ENERGY_COST_PER_HOUR: _frame({c.LABEL_GPU_UUID: "GPU-a"}, {c.LABEL_MODEL: "m"}),
        c.M_MODEL_LOAD_SECONDS: _frame({c.LABEL_MODEL: "m", c.LABEL_VERSION: "1"}, {c.LABEL_MODEL: "n"}),
    }
    section = capacity_section(frames, step=3600.0)
    assert [(g.gpu_uuid, g.energy_cost_per_hour, g.energy_cost) for g in section.gpus] == [
        ("GPU-a", 2.0, 2.0)
    ]
    assert section.loads.to_dict("records") == [{c.LABEL_MODEL: "m", c.LABEL_VERSION: "1", "seconds": 2.0}]
    assert section.unlabelled == (
        f"{c.M_MODEL_LOAD_SECONDS} ({c.LABEL_VERSION})",
        f"{c.M_ENERGY_COST_PER_HOUR} ({c.LABEL_GPU_UUID})",
    )


def test_labelled_series_note_nothing() -> None:
    frames = {c.M_GPU_MEMORY_HEADROOM_BYTES: _frame({c.LABEL_GPU_UUID: "GPU-a"})}
    section = capacity_section(frames, step=60.0)
    assert section.unlabelled == () and [g.headroom_bytes for g in section.gpus] == [2.0]
    assert not any(line.startswith("Left out") for line in advice(section))


def _series(labels: dict[str, str], values: list[float]) -> tuple[dict[str, str], np.ndarray, np.ndarray]:
    return labels, 60.0 * np.arange(1, len(values) + 1), np.array(values, dtype=float)


def test_one_sample_per_series_gives_the_section_of_every_sample() -> None:
    """The families read reduced (`fold_valid` over slices, `reduced_series`) give the section the
    frames of all their samples give: last and largest valid samples, invalid ones and series, a
    series without a label, the series' order (the tables' order among equal figures)."""
    nan, inf = float("nan"), float("inf")
    gpu = {c.L_KIND: "gpu", c.L_DEVICE: "GPU-a"}
    every = {
        c.M_MODEL_MEMORY_BYTES: [
            _series({c.LABEL_MODEL: "m", c.LABEL_VERSION: "1", **gpu}, [5.0, 7.0, nan, 6.0, -1.0]),
            _series({c.LABEL_MODEL: "b", c.LABEL_VERSION: "1", **gpu}, [6.0, 6.0, 6.0, inf, nan]),
            _series({c.LABEL_MODEL: "a", c.LABEL_VERSION: "2", **gpu}, [nan, nan, nan, nan, nan]),
            _series({c.LABEL_MODEL: "z", c.LABEL_VERSION: "1", **gpu}, [1.0, 2.0, 3.0, 4.0, 6.0]),
        ],
        c.M_MODEL_LOAD_SECONDS: [
            _series({c.LABEL_MODEL: "m", c.LABEL_VERSION: "1"}, [3.0, 9.0, 2.0, nan, 1.0]),
            _series({c.LABEL_MODEL: "m", c.LABEL_VERSION: "1", "instance": "e2"}, [4.0, 4.0, 12.0, 1.0, 1.0]),
            _series({c.LABEL_MODEL: "n"}, [8.0, 8.0, 8.0, 8.0, 8.0]),
        ],
        c.M_GPU_MEMORY_HEADROOM_BYTES: [
            _series({c.LABEL_GPU_UUID: "GPU-b"}, [9.0, 8.0, 7.0, nan, nan]),
            _series({c.LABEL_GPU_UUID: "GPU-a"}, [1.0, 2.0, 3.0, 4.0, 5.0]),
        ],
        c.M_HOST_MEMORY_HEADROOM_BYTES: [_series({"instance": "e1"}, [4.0, 3.0, 2.0, 1.0, -inf])],
        c.M_GPU_METRICS_MISSING: [_series({"instance": "e1"}, [0.0, 0.0, 1.0, nan, nan])],
    }
    whole = {family: frame_of(series) for family, series in every.items()}
    reduced = {}
    for family, series in every.items():
        folded = []
        for labels, stamps, values in series:  # in two slices, as read
            state = fold_valid(None, stamps[:2], values[:2])
            folded.append((labels, fold_valid(state, stamps[2:], values[2:])))
        reduced[family] = frame_of(reduced_series(family, folded))
    assert set(every) <= set(REDUCED)
    got, expected = capacity_section(reduced, step=60.0), capacity_section(whole, step=60.0)
    pd.testing.assert_frame_equal(got.memory, expected.memory)
    pd.testing.assert_frame_equal(got.loads, expected.loads)
    assert got.gpus == expected.gpus and len(got.gpus) == 2
    assert (got.host_headroom_bytes, got.gpu_metrics_missing) == (1.0, True)
    assert got.unlabelled == expected.unlabelled == (f"{c.M_MODEL_LOAD_SECONDS} ({c.LABEL_VERSION})",)
    assert got.memory["bytes"].tolist() == [6.0, 6.0, 6.0] and got.loads["seconds"].tolist() == [12.0]


def test_a_load_time_shows_the_state_now_and_is_marked_when_the_model_is_not_loaded() -> None:
    """The journey's report listed a model's load time from before a restart although the model had since
    failed to load: the table now says each version's state at the end of the range. n's READY series
    stopped (its exporter restarted) and its UNAVAILABLE one is the newest; read reduced as the report
    reads it (one sample per series)."""

    def state(model: str, name: str, values: list[float], start: int = 1) -> tuple[dict[str, str], object]:
        labels = {c.LABEL_MODEL: model, c.LABEL_VERSION: "1", c.L_STATE: name}
        stamps = 60.0 * np.arange(start, start + len(values))
        return labels, fold_valid(None, stamps, np.array(values, dtype=float))

    folded = [
        state("m", c.STATE_READY, [1, 1, 1]),
        state("m", c.STATE_UNAVAILABLE, [0, 0, 0]),
        state("n", c.STATE_READY, [1, 1]),
        state("n", c.STATE_UNAVAILABLE, [1], start=3),
    ]
    frames = {
        c.M_MODEL_STATE: frame_of(reduced_series(c.M_MODEL_STATE, folded)),
        c.M_MODEL_LOAD_SECONDS: _frame(
            {c.LABEL_MODEL: "m", c.LABEL_VERSION: "1"}, {c.LABEL_MODEL: "n", c.LABEL_VERSION: "1"}
        ),
    }
    assert c.M_MODEL_STATE in REDUCED
    section = capacity_section(frames, step=60.0)
    _title, headers, rows = next(t for t in tables(section) if t[0] == "Load times")
    assert headers[-1] == "state now"
    assert sorted(rows) == [["m", "1", "2.0", c.STATE_READY], ["n", "1", "2.0", c.STATE_UNAVAILABLE]]
    assert section.stale_loads() == [("n", "1", c.STATE_UNAVAILABLE)]
    stale = [line for line in advice(section) if "earlier load" in line]
    assert stale == [
        f"Load time of n v1 is from an earlier load: the model is {c.STATE_UNAVAILABLE} now "
        "(not loaded since)."
    ]
