"""Pure: the models the repository index lists with no version READY at the end of the range.

Triton counts a request per model only once the model is loaded, so a model it refused (journey26: a
config.pbtxt the real 2.51 rejects is in the index by its name alone, state UNKNOWN, no version, no
reason) or never loaded has no counter, no cost and so no row in the models table. The exporter's
`triton_sre_model_state` still names it: each such model gets a row here with its state(s) at the end of
the range and its cause: the diagnosed runbook of an UNAVAILABLE version (`triton_sre_model_unavailable`),
else the not-served runbook, whose cause only Triton's log holds (`triage`).
"""

from __future__ import annotations

import pandas as pd

from triton_sre import conventions as c
from triton_sre.report.capacity import version_states

__all__ = [
    "CAUSE",
    "COLUMNS",
    "NOT_SERVED_RUNBOOK",
    "NO_REASON",
    "Unserved",
    "slo_unserved",
    "unserved_table",
]

# (cluster, model, state) of each model not served at the range's end: cluster None without a cluster_label
Unserved = tuple[tuple["str | None", str, str], ...]

CAUSE = "cause"
COLUMNS = (c.LABEL_MODEL, c.LABEL_VERSION, c.L_STATE, CAUSE)
NOT_SERVED_RUNBOOK = c.ALERT_RUNBOOKS[c.ALERT_SLO_MODEL_NOT_SERVED]
NO_REASON = (
    f"A cause `{NOT_SERVED_RUNBOOK}` means Triton's API holds no reason (a config it refused is in its "
    "index by name alone; under explicit model control a model nobody loaded looks the same): "
    "`triton-sre triage` on Triton's log names it."
)


def unserved_table(states: pd.DataFrame, unavailable: pd.DataFrame) -> pd.DataFrame:
    """`COLUMNS` for each version of each model with no version READY on any server.

    `states`: model, version, state (the capacity section's: each version's newest sample reading 1,
    several servers' different states joined by "/"); `unavailable`: the samples of
    `triton_sre_model_unavailable` (its `runbook` label), the newest per version read."""
    if states.empty:
        return pd.DataFrame(columns=list(COLUMNS))
    ready = states[c.L_STATE].map(lambda s: c.STATE_READY in str(s).split("/"))
    served = set(states.loc[ready, c.LABEL_MODEL])
    rows = states[~states[c.LABEL_MODEL].isin(served)]
    runbooks = _runbooks(unavailable)
    causes = [
        runbooks.get((str(m), str(v)), NOT_SERVED_RUNBOOK)
        if c.STATE_UNAVAILABLE in str(s).split("/")
        else NOT_SERVED_RUNBOOK
        for m, v, s in zip(rows[c.LABEL_MODEL], rows[c.LABEL_VERSION], rows[c.L_STATE], strict=True)
    ]
    table = rows.assign(**{CAUSE: causes})[list(COLUMNS)]
    return table.sort_values([c.LABEL_MODEL, c.LABEL_VERSION], kind="stable").reset_index(drop=True)


def _runbooks(unavailable: pd.DataFrame) -> dict[tuple[str, str], str]:
    needed = {c.LABEL_MODEL, c.LABEL_VERSION, c.L_RUNBOOK, "timestamp", "value"}
    if unavailable.empty or not needed <= set(unavailable.columns):
        return {}
    newest = unavailable.sort_values("timestamp").groupby([c.LABEL_MODEL, c.LABEL_VERSION]).tail(1)
    newest = newest[newest["value"] == 1]
    return {
        (str(m), str(v)): str(r)
        for m, v, r in zip(newest[c.LABEL_MODEL], newest[c.LABEL_VERSION], newest[c.L_RUNBOOK], strict=True)
    }


def slo_unserved(states: pd.DataFrame, cluster_label: str | None) -> Unserved:
    """(cluster, model, state) of each model no server of a cluster serves at the range's end, from the
    samples of `triton_sre_model_state` (`states`), as the rules judge: per value of `cluster_label`
    (a series without it is cluster ""), or the fleet's (cluster None) without one. Several versions'
    states are joined by "/"."""
    if not cluster_label or states.empty:
        parts: list[tuple[str | None, pd.DataFrame]] = [(None, states)]
    else:
        column = states[cluster_label] if cluster_label in states else pd.Series("", index=states.index)
        values = column.astype(object).fillna("").astype(str)
        parts = [(value, states[values == value]) for value in sorted(set(values))]
    out: list[tuple[str | None, str, str]] = []
    for cluster, part in parts:
        table = unserved_table(version_states(part), pd.DataFrame())
        joined = table.groupby(c.LABEL_MODEL, sort=True)[c.L_STATE].agg(lambda s: "/".join(sorted(set(s))))
        out += [(cluster, str(model), str(state)) for model, state in joined.items()]
    return tuple(out)
