"""Triton's model namespacing in the report (`tritonserver --model-namespacing=true`, 24.05+).

Every per-model series then carries `namespace` (the model's repository path), and two
repositories may serve models of one name (docs/exporter.md, "Model namespacing"). The report's
tables, charts and recommendations are keyed by the model name, so such a name is given its
namespace, as Triton's log lines and model ids name it: `<namespace>::<model>`
(`/models/a::vector_scale`). Only names seen in two namespaces or more over the range are: a
name served from one repository keeps its bare name, and so does every model of a Prometheus
Operator user, whose `namespace` is the Kubernetes one (unless one model name is scraped from two
Kubernetes namespaces: two deployments, two rows). A series without `namespace` keeps its name.
The rule is ../namespacing.py's (the bot names its figures by it too); this applies it to frames.

Clusters (the spec's `cluster_label`, on a global store holding several clusters' series) are named
the same way: when the range holds two clusters or more, every model of a series with the label is
`<cluster>/<model>` (`east/ranker`), so a model served in two clusters is a row per cluster, and a
model served in one says where (a Triton model name is a folder name: it holds no `/`). A cluster's
own Prometheus (no label) or a store with one cluster keeps bare names. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from triton_sre import conventions as c
from triton_sre import namespacing
from triton_sre.namespacing import SEP
from triton_sre.promql import selector
from triton_sre.rfc3339 import utc_text

__all__ = [
    "CLUSTER_SEP",
    "clusters_of",
    "in_clusters",
    "last_sample_expr",
    "qualified",
    "qualify",
    "shared_names",
    "silent_clusters",
]

CLUSTER_SEP = "/"


def _pairs(frame: pd.DataFrame) -> Iterable[tuple[str, str]]:
    if frame.empty or c.LABEL_NAMESPACE not in frame.columns or c.LABEL_MODEL not in frame.columns:
        return ()
    both = frame[[c.LABEL_MODEL, c.LABEL_NAMESPACE]].astype(object).dropna().astype(str).drop_duplicates()
    return both.itertuples(index=False, name=None)


def shared_names(frames: Iterable[pd.DataFrame]) -> set[str]:
    """The model names that have series in two non-empty namespaces or more among `frames`."""
    return namespacing.shared_names(pair for frame in frames for pair in _pairs(frame))


def qualified(frame: pd.DataFrame, shared: set[str]) -> pd.DataFrame:
    """`frame` with the `model` of each series of a `shared` name and a namespace made
    `<namespace>::<model>`."""
    if not shared or frame.empty or not {c.LABEL_MODEL, c.LABEL_NAMESPACE} <= set(frame.columns):
        return frame
    model = frame[c.LABEL_MODEL].astype(object)
    namespace = frame[c.LABEL_NAMESPACE].astype(object).fillna("").astype(str)
    named = model.isin(shared) & (namespace != "")
    if not named.any():
        return frame
    return frame.assign(**{c.LABEL_MODEL: model.where(~named, namespace + SEP + model.astype(str))})


def qualify(frames: Mapping[str, pd.DataFrame], shared: set[str]) -> dict[str, pd.DataFrame]:
    return {name: qualified(frame, shared) for name, frame in frames.items()}


def _cluster_values(frame: pd.DataFrame, label: str) -> set[str]:
    if frame.empty or label not in frame.columns:
        return set()
    return set(frame[label].astype(object).dropna().astype(str)) - {""}


def clusters_of(frames: Iterable[pd.DataFrame], label: str | None) -> set[str]:
    """The values of the cluster `label` among `frames` (none without a label)."""
    return set().union(*(_cluster_values(frame, label) for frame in frames)) if label else set()


def in_clusters(frame: pd.DataFrame, label: str | None, clusters: set[str]) -> pd.DataFrame:
    """`frame` with the `model` of each series carrying a cluster made `<cluster>/<model>`, when
    `clusters` holds two or more (else `frame` as it is)."""
    if not label or len(clusters) < 2 or frame.empty or not {c.LABEL_MODEL, label} <= set(frame.columns):
        return frame
    model = frame[c.LABEL_MODEL].astype(object)
    cluster = frame[label].astype(object).fillna("").astype(str)
    named = cluster != ""
    return frame.assign(**{c.LABEL_MODEL: model.where(~named, cluster + CLUSTER_SEP + model.astype(str))})


def last_sample_expr(label: str, triton_job: str) -> str:
    """Per cluster, the time of the last sample of Triton's `up` (a range query's last point holds it)."""
    return f"max by ({label}) (timestamp({selector('up', [(c.LABEL_JOB, '=', triton_job)])}))"


def silent_clusters(frame: pd.DataFrame, label: str, end: float, after_s: float) -> list[str]:
    """Sentences for the clusters of `frame` (`last_sample_expr` read over the range) whose last sample
    is more than `after_s` before the range's `end`: their Prometheus or remote write stopped, and
    their rows count nothing after it (journey28: east's rows ended at its Prometheus' death, unsaid)."""
    if frame.empty or label not in frame.columns:
        return []
    last = frame.groupby(frame[label].astype(object).astype(str))["value"].max()
    notes = []
    for cluster, at in sorted(last.items()):
        if cluster and end - float(at) > after_s:
            notes.append(
                f"cluster {cluster}: no sample after {utc_text(float(at))}, {(end - float(at)) / 60:.1f} min "
                "before the range's end (its Prometheus or its remote write stopped): its rows count "
                "nothing after it."
            )
    return notes
