"""Pure: the exporter's capacity families over the range -> the report's capacity section.

Memory, headroom and models that fit are the last values of the range; load times the largest
seen, beside each version's state at the end of the range (a time from before a restart or a
failed reload is marked: the model is not loaded now); energy cost per hour the mean, and over
the range the integral (each sample stands for one step). The startup-probe advice: 2 x the
slowest load + a margin. A series without a label its table is keyed by (``gpu_uuid``,
``model``/``version``...) is left out of that table, and the section says which family lost
series (the exporter always writes those labels; another writer may not).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from triton_sre import conventions as c
from triton_sre.probes import STARTUP_MARGIN_S, startup_budget
from triton_sre.units import human_bytes

__all__ = [
    "FAMILIES",
    "REDUCED",
    "CapacitySection",
    "capacity_section",
    "fold_valid",
    "reduced_series",
    "version_states",
]

FAMILIES = (
    c.M_MODEL_MEMORY_BYTES,
    c.M_GPU_MEMORY_HEADROOM_BYTES,
    c.M_GPU_LARGEST_MODEL_BYTES,
    c.M_GPU_MODELS_THAT_FIT,
    c.M_HOST_MEMORY_HEADROOM_BYTES,
    c.M_HOST_MODELS_THAT_FIT,
    c.M_MODEL_LOAD_SECONDS,
    c.M_ENERGY_COST_PER_HOUR,
    c.M_GPU_METRICS_MISSING,
    c.M_MODEL_STATE,
    c.M_MODEL_UNAVAILABLE,  # not the section's: the models not served (report/unserved.py) read its runbook
)
LARGEST = (c.M_MODEL_LOAD_SECONDS,)
"""Families of which the section uses the largest valid sample of each series (a load time)."""
REDUCED = tuple(f for f in FAMILIES if f != c.M_ENERGY_COST_PER_HOUR)
"""Families of which the section uses one valid sample per series: the last (`_last`, `_scalar`),
or the largest for `LARGEST`. Read reduced to it (`fold_valid`, `reduced_series`), not as frames;
the energy cost is averaged and integrated over every sample, so it stays a frame."""

ValidFold = tuple[float, float, float] | None  # last valid timestamp, its value, the largest value


def fold_valid(state: ValidFold, stamps: np.ndarray, values: np.ndarray) -> ValidFold:
    """The next slice of a series (in time order) folded into (last valid sample's timestamp and
    value, largest valid value): valid as `_valid` (finite, >= 0)."""
    ok = np.flatnonzero(np.isfinite(values) & (values >= 0))
    if not len(ok):
        return state
    top = float(values[ok].max())
    last = int(ok[-1])
    return float(stamps[last]), float(values[last]), top if state is None else max(state[2], top)


def reduced_series(
    family: str, folded: Sequence[tuple[Mapping[str, str], ValidFold]]
) -> list[tuple[dict[str, str], np.ndarray, np.ndarray]]:
    """Each series as the one sample the section reads of it (`fold_valid`'s last, or largest for
    `LARGEST`), in the order read; a series without a valid sample as a NaN one (its labels still
    known, as in a frame of all its samples, whose invalid ones `_valid` drops)."""
    out = []
    for labels, state in folded:
        if state is None:
            stamp, value = np.array([np.nan]), np.array([np.nan])
        else:
            stamp = np.array([state[0]])
            value = np.array([state[2] if family in LARGEST else state[1]])
        out.append((dict(labels), stamp, value))
    return out


@dataclass(frozen=True)
class GpuRow:
    gpu_uuid: str
    headroom_bytes: float | None
    largest_model_bytes: float | None
    models_that_fit: float | None
    energy_cost_per_hour: float | None
    energy_cost: float | None  # over the range


@dataclass(frozen=True)
class CapacitySection:
    memory: pd.DataFrame  # model, version, kind, device, bytes (largest first)
    gpus: Sequence[GpuRow] = ()
    host_headroom_bytes: float | None = None
    host_models_that_fit: float | None = None
    loads: pd.DataFrame = field(default_factory=pd.DataFrame)  # model, version, seconds (slowest first)
    currency: str | None = None
    gpu_metrics_missing: bool = False
    probe_budget_s: float | None = None  # configured (operational.startup_probe_budget)
    unlabelled: tuple[str, ...] = ()  # "family (label)" whose series lacking the label were left out
    # model, version, state: the state the exporter's newest sample in the range gives each version
    states: pd.DataFrame = field(default_factory=pd.DataFrame)

    def state_of(self, model: str, version: str) -> str:
        """The version's state at the end of the range ("" when the range has none), several
        servers' different states joined by "/"."""
        if self.states.empty:
            return ""
        rows = self.states[(self.states[c.LABEL_MODEL] == model) & (self.states[c.LABEL_VERSION] == version)]
        return "" if rows.empty else str(rows[c.L_STATE].iloc[0])

    def stale_loads(self) -> list[tuple[str, str, str]]:
        """(model, version, state) of each load time whose model is not READY at the end of the range:
        the time is from an earlier load (before a restart, an unload or a failed reload)."""
        out = []
        for r in self.loads.to_dict("records"):
            model, version = str(r[c.LABEL_MODEL]), str(r[c.LABEL_VERSION])
            state = self.state_of(model, version)
            if state and state != c.STATE_READY:
                out.append((model, version, state))
        return out

    @property
    def slowest_load_s(self) -> float | None:
        return None if self.loads.empty else float(self.loads["seconds"].max())

    @property
    def empty(self) -> bool:
        return (
            self.memory.empty
            and not self.gpus
            and self.host_headroom_bytes is None
            and self.loads.empty
            and not self.unlabelled
        )


def _valid(frame: pd.DataFrame) -> pd.DataFrame:
    if frame.empty or "value" not in frame:
        return pd.DataFrame()
    return frame[np.isfinite(frame["value"]) & (frame["value"] >= 0)]


def _labelled(
    frames: Mapping[str, pd.DataFrame], family: str, by: Sequence[str], unlabelled: list[str]
) -> pd.DataFrame:
    """The valid samples of `family` whose series carry every label of `by` (a groupby on a missing
    label fails); when some series lack one, ``"family (label)"`` is added to `unlabelled`."""
    frame = _valid(frames.get(family, pd.DataFrame()))
    missing = [k for k in by if not frame.empty and (k not in frame or frame[k].isna().any())]
    if not missing:
        return frame
    unlabelled.append(f"{family} ({', '.join(missing)})")
    if any(k not in frame for k in by):
        return pd.DataFrame()
    return frame[frame[list(by)].notna().all(axis=1)]


def _last(
    frames: Mapping[str, pd.DataFrame], family: str, by: Sequence[str], unlabelled: list[str]
) -> pd.DataFrame:
    frame = _labelled(frames, family, by, unlabelled)
    if frame.empty:
        return pd.DataFrame(columns=[*by, "value"])
    return frame.sort_values("timestamp").groupby(list(by), as_index=False)["value"].last()


def _states(frames: Mapping[str, pd.DataFrame], unlabelled: list[str]) -> pd.DataFrame:
    """model, version, state: of each version's state series (one per known state, 1 for the current
    one), those whose last sample is the version's newest and reads 1."""
    by = [c.LABEL_MODEL, c.LABEL_VERSION, c.L_STATE]
    # a model in the index by name alone (a config Triton refused) has version "": Prometheus drops it
    frame = frames.get(c.M_MODEL_STATE, pd.DataFrame())
    if not frame.empty:
        versions = frame[c.LABEL_VERSION] if c.LABEL_VERSION in frame else pd.Series("", index=frame.index)
        frame = frame.assign(**{c.LABEL_VERSION: versions.astype(object).fillna("")})
    frame = _labelled({c.M_MODEL_STATE: frame}, c.M_MODEL_STATE, by, unlabelled)
    if frame.empty:
        return pd.DataFrame(columns=by)
    frame = frame.assign(**{k: frame[k].astype(object).astype(str) for k in by})
    newest = frame.groupby(by[:2])["timestamp"].transform("max")
    now = frame[(frame["timestamp"] == newest) & (frame["value"] == 1)]
    return now.groupby(by[:2], as_index=False)[c.L_STATE].agg(lambda s: "/".join(sorted(set(s))))


def version_states(frame: pd.DataFrame) -> pd.DataFrame:
    """`_states` of the samples of `triton_sre_model_state` in `frame` (one cluster's, for the SLO rows)."""
    return _states({c.M_MODEL_STATE: frame}, [])


def _by_gpu(frames: Mapping[str, pd.DataFrame], family: str, unlabelled: list[str]) -> dict[str, float]:
    last = _last(frames, family, [c.LABEL_GPU_UUID], unlabelled)
    return dict(zip(last[c.LABEL_GPU_UUID], last["value"], strict=True))


def _scalar(frame: pd.DataFrame) -> float | None:
    frame = _valid(frame)
    return None if frame.empty else float(frame.sort_values("timestamp")["value"].iloc[-1])


def capacity_section(
    frames: Mapping[str, pd.DataFrame], step: float, probe_budget_s: float | None = None
) -> CapacitySection:
    unlabelled: list[str] = []
    memory = _last(
        frames, c.M_MODEL_MEMORY_BYTES, [c.LABEL_MODEL, c.LABEL_VERSION, c.L_KIND, c.L_DEVICE], unlabelled
    )
    memory = memory.rename(columns={"value": "bytes"}).sort_values("bytes", ascending=False, kind="stable")

    loads = _labelled(frames, c.M_MODEL_LOAD_SECONDS, [c.LABEL_MODEL, c.LABEL_VERSION], unlabelled)
    if loads.empty:
        loads = pd.DataFrame(columns=[c.LABEL_MODEL, c.LABEL_VERSION, "seconds"])
    else:
        loads = loads.groupby([c.LABEL_MODEL, c.LABEL_VERSION], as_index=False)["value"].max()
        loads = loads.rename(columns={"value": "seconds"}).sort_values(
            "seconds", ascending=False, kind="stable"
        )

    energy = _labelled(frames, c.M_ENERGY_COST_PER_HOUR, [c.LABEL_GPU_UUID], unlabelled)
    currency = str(energy[c.L_CURRENCY].iloc[0]) if not energy.empty and c.L_CURRENCY in energy else None
    mean_cost: dict[str, float] = {}
    range_cost: dict[str, float] = {}
    if not energy.empty:
        grouped = energy.groupby(c.LABEL_GPU_UUID)["value"]
        mean_cost = grouped.mean().to_dict()
        range_cost = (grouped.sum() * step / 3600.0).to_dict()

    headroom = _by_gpu(frames, c.M_GPU_MEMORY_HEADROOM_BYTES, unlabelled)
    largest = _by_gpu(frames, c.M_GPU_LARGEST_MODEL_BYTES, unlabelled)
    fits = _by_gpu(frames, c.M_GPU_MODELS_THAT_FIT, unlabelled)
    uuids = sorted(set(headroom) | set(largest) | set(fits) | set(mean_cost))
    gpus = [
        GpuRow(u, headroom.get(u), largest.get(u), fits.get(u), mean_cost.get(u), range_cost.get(u))
        for u in uuids
    ]
    missing = _scalar(frames.get(c.M_GPU_METRICS_MISSING, pd.DataFrame()))
    states = _states(frames, unlabelled)
    return CapacitySection(
        memory=memory.reset_index(drop=True),
        gpus=gpus,
        host_headroom_bytes=_scalar(frames.get(c.M_HOST_MEMORY_HEADROOM_BYTES, pd.DataFrame())),
        host_models_that_fit=_scalar(frames.get(c.M_HOST_MODELS_THAT_FIT, pd.DataFrame())),
        loads=loads.reset_index(drop=True),
        currency=currency,
        gpu_metrics_missing=bool(missing),
        probe_budget_s=probe_budget_s,
        unlabelled=tuple(unlabelled),
        states=states,
    )


def _num(value: float | None, fmt: str = "{:.0f}") -> str:
    return "–" if value is None else fmt.format(value)


def tables(section: CapacitySection) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, headers, rows) of each capacity table, for Markdown and HTML alike."""
    unit = section.currency or ""
    out: list[tuple[str, list[str], list[list[str]]]] = []
    out.append(
        (
            "Memory per model",
            ["model", "version", "kind", "device", "memory"],
            [
                [
                    str(r[c.LABEL_MODEL]),
                    str(r[c.LABEL_VERSION]),
                    str(r[c.L_KIND]),
                    str(r[c.L_DEVICE]),
                    human_bytes(r["bytes"]),
                ]
                for r in section.memory.to_dict("records")
            ],
        )
    )
    out.append(
        (
            "Headroom per GPU",
            ["GPU", "free", "largest model", "models that fit", f"energy {unit}/h", f"energy cost {unit}"],
            [
                [
                    g.gpu_uuid,
                    human_bytes(g.headroom_bytes),
                    human_bytes(g.largest_model_bytes),
                    _num(g.models_that_fit),
                    _num(g.energy_cost_per_hour, "{:.4f}"),
                    _num(g.energy_cost, "{:.4f}"),
                ]
                for g in section.gpus
            ]
            + (
                [
                    [
                        "host",
                        human_bytes(section.host_headroom_bytes),
                        "–",
                        _num(section.host_models_that_fit),
                        "–",
                        "–",
                    ]
                ]
                if section.host_headroom_bytes is not None
                else []
            ),
        )
    )
    out.append(
        (
            "Load times",
            ["model", "version", "seconds", "state now"],
            [
                [
                    str(r[c.LABEL_MODEL]),
                    str(r[c.LABEL_VERSION]),
                    f"{r['seconds']:.1f}",
                    section.state_of(str(r[c.LABEL_MODEL]), str(r[c.LABEL_VERSION])) or "–",
                ]
                for r in section.loads.to_dict("records")
            ],
        )
    )
    return out


def advice(section: CapacitySection) -> list[str]:
    """Sentences for the reader: the startup probe, missing GPU metrics, headroom below the largest model."""
    lines = []
    if section.unlabelled:
        lines.append(
            "Left out: series without the label their table is keyed by: "
            + ", ".join(section.unlabelled)
            + "."
        )
    if section.gpu_metrics_missing:
        lines.append(
            "Triton exports no GPU metrics on this GPU host (MIG-enabled GPU or DCGM held by another agent): "
            "GPU headroom and energy are unknown, not zero."
        )
    for g in section.gpus:
        if (
            g.headroom_bytes is not None
            and g.largest_model_bytes is not None
            and g.headroom_bytes < g.largest_model_bytes
        ):
            lines.append(
                f"GPU {g.gpu_uuid}: {human_bytes(g.headroom_bytes)} free is less than its largest model "
                f"({human_bytes(g.largest_model_bytes)}): its next version cannot load side by side."
            )
    for model, version, state in section.stale_loads():
        lines.append(
            f"Load time of {model} v{version} is from an earlier load: the model is {state} now "
            "(not loaded since)."
        )
    slowest = section.slowest_load_s
    if slowest is not None:
        need = startup_budget(slowest)
        text = (
            f"Startup probe: the slowest load took {slowest:.1f} s; budget at least 2 x {slowest:.1f} s + "
            f"{STARTUP_MARGIN_S:.0f} s = {need:.0f} s (failureThreshold = ceil({need:.0f} / periodSeconds))"
        )
        if section.probe_budget_s is not None:
            verdict = "enough" if section.probe_budget_s >= need else "too short"
            text += f"; the configured {section.probe_budget_s:.0f} s is {verdict}"
        lines.append(text + ".")
    return lines
