"""The batching ratio and stage split from `/v2/models/stats`, for the model versions the window
holds no `/metrics` counters for (the metrics port refused, hung or not exposed, a NetworkPolicy,
Triton run with `--allow-metrics=false`).

Triton's core updates each statistic in the same call as the Prometheus counter of the same measure
(infer_stats.cc, `UpdateSuccessWithDuration` and `UpdateInferBatchStatsWithDuration`):
`inference_count` is `nv_inference_count`, `execution_count` `nv_inference_exec_count`,
`inference_stats.success` count and ns `nv_inference_request_success` and
`nv_inference_request_duration_us`, and `queue`, `compute_input`, `compute_infer`, `compute_output` ns
the four stage counters. The statistics are in ns where the counters are in µs (each request's ns
divided by 1000, truncated), so the figures are the metrics' ones within 1 µs per request and stage.
Cache hits count alike in both (success and queue include them; the counts and compute stages do
not).

A poll records a fallback row for each model version of its statistics that its metrics have no
counters for (every one when the metrics were not read), in one more `SeriesWindow`: reset-aware
like the counters' window, and empty, so free, while the metrics are read. Which source a model
version's figures come from (`source_keys`), with no flapping between them poll to poll:
- metrics while the metrics' window holds two polls or more and the version is in the latest
  metrics read: a failed metrics poll, or a few, changes nothing (the counters' window still spans
  them, as before);
- statistics once the metrics' window holds fewer than two polls (every poll that read them has left
  the window, or none ever did), or for a version the metrics do not carry;
- back to metrics at the second poll that reads them again: the first one alone gives no increase,
  so the statistics recorded during the outage serve until then.

Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Container, Mapping, Sequence

import numpy as np

from triton_sre.exporter.series import SeriesWindow
from triton_sre.exporter.snapshot import ModelKey, ModelStats

# A fallback row has the columns of `window.COUNTED_FIELDS`, in its order: inference count,
# execution count, request duration, success count, then the four stages' durations. The durations
# are recorded in ns (as Triton gives them) and turned into µs by `increases_of`.
FIELDS = tuple(range(8))
_NS_COLUMNS = [2, 4, 5, 6, 7]
_NO_REQUEST_STATS = (math.nan,) * 6  # not observed: no stage split, never a made-up 0


def fallback_rows(
    stats: Mapping[ModelKey, ModelStats], metrics: Container[ModelKey] | None
) -> dict[ModelKey, tuple[float, ...]]:
    """One poll's rows: the model versions of `stats` that `metrics` (the poll's counters, None when
    the metrics were not read) has no counters for."""
    rows = {}
    for key, s in stats.items():
        if metrics is None or key not in metrics:
            count, request_ns, *stages = s.request_stats or _NO_REQUEST_STATS
            rows[key] = (s.inference_count, s.execution_count, request_ns, count, *stages)
    return rows


def source_keys(
    fallback: SeriesWindow,
    stats_keys: Sequence[ModelKey],
    metrics_keys: Container[ModelKey],
    metrics_polls: int,
) -> list[ModelKey]:
    """The model versions whose figures come from the statistics (see the module doc): those of the
    latest statistics the fallback window observed, all of them while the metrics' window holds
    fewer than two polls, else those the latest metrics do not carry. Sorted."""
    if not len(fallback):
        return []
    observed = fallback.keys()
    if metrics_polls < 2:
        return sorted(key for key in stats_keys if key in observed)
    return sorted(key for key in stats_keys if key in observed and key not in metrics_keys)


def increases_of(fallback: SeriesWindow, keys: Sequence[ModelKey]) -> np.ndarray:
    """Each key's increase over the window in `window.COUNTED_FIELDS`' columns and units (durations
    in µs); NaN where no poll observed the field."""
    increases = fallback.increases_of(keys, unseen=math.nan)
    increases[:, _NS_COLUMNS] /= 1e3
    return increases
