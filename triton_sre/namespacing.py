"""Leaf (conventions only), pure: how a model of Triton's model namespacing is named where models
are shown side by side (the report's rows, the bot's figures and chart legends).

With `tritonserver --model-namespacing=true` every per-model series carries `namespace` (the model's
repository path) and two repositories may serve models of one name (docs/exporter.md, "Model
namespacing"). A name seen in two non-empty namespaces or more among what is shown is given its
namespace as Triton's log lines and model ids name it, `<namespace>::<model>`; a name of one
namespace keeps its bare name (so do a Prometheus Operator user's models, whose `namespace` is the
Kubernetes one), and so does a series without `namespace`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from triton_sre import conventions as c

__all__ = ["SEP", "in_cluster", "label_pairs", "model_name", "qualified_name", "shared_names"]

SEP = "::"  # core's model id of a namespaced model, as its log lines print it


def shared_names(pairs: Iterable[tuple[str, str]]) -> set[str]:
    """The model names of `(model, namespace)` pairs that come with two non-empty namespaces or more."""
    spaces: dict[str, set[str]] = {}
    for model, namespace in pairs:
        if namespace:
            spaces.setdefault(model, set()).add(namespace)
    return {model for model, seen in spaces.items() if len(seen) > 1}


def qualified_name(model: str, namespace: str, shared: Collection[str]) -> str:
    """`<namespace>::<model>` for a `shared` name with a namespace, else `model`."""
    return f"{namespace}{SEP}{model}" if namespace and model in shared else model


def model_name(labels: Mapping[str, str], shared: Collection[str]) -> str:
    """The model of a label set (a series', an alert's) as shown beside others: `qualified_name`."""
    return qualified_name(labels.get(c.LABEL_MODEL, ""), labels.get(c.LABEL_NAMESPACE, ""), shared)


def in_cluster(name: str, cluster: str) -> str:
    """`ranker in cluster east` (a fleet's model, named with its cluster); `name` without one."""
    return f"{name} in cluster {cluster}" if cluster else name


def label_pairs(label_sets: Iterable[Mapping[str, str]]) -> Iterable[tuple[str, str]]:
    """(model, namespace) of each label set naming a model (namespace "" when it has none)."""
    for labels in label_sets:
        if labels.get(c.LABEL_MODEL):
            yield labels[c.LABEL_MODEL], labels.get(c.LABEL_NAMESPACE, "")
