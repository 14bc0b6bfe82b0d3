"""The report's capacity section (report/capacity.py) on series that lack the label a table is keyed
by: another writer of the exporter's family names, or a relabelling that dropped `gpu_uuid`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from triton_sre import conventions as c
from triton_sre.report.capacity import advice, capacity_section
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
