"""The exposition writer: valid text that both parsers read back to the derived values."""

from __future__ import annotations

import dataclasses
import math

import pytest
from prometheus_client.parser import text_string_to_metric_families

from triton_sre import conventions as c
from triton_sre.exporter.collector import ExporterView, render
from triton_sre.exporter.derive import Derivation, ModelDerivation, ModelState
from triton_sre.exporter.snapshot import ModelConfigSummary
from triton_sre.triton.exposition import parse

WEIRD = 'we"ird\\model\nname'


def derivation() -> Derivation:
    return Derivation(
        window_seconds=60.0,
        models=[
            ModelDerivation(
                WEIRD,
                "1",
                batching_ratio=3.5,
                batch_fill_ratio=0.21875,
                stage_seconds={s: 0.001 * (i + 1) for i, s in enumerate(c.STAGES)},
                stage_fraction={s: 0.2 for s in c.STAGES},
                cost_per_hour=0.24,
                cost_per_1k=1e-05,
            ),
            ModelDerivation("idle", "2"),
        ],
        states=[
            ModelState(
                "broken",
                "1",
                c.STATE_UNAVAILABLE,
                c.RUNBOOK_PYTHON_MODULE_MISSING,
                'Internal: ModuleNotFoundError: No module named "x"\nAt:\n  model.py(1)',
            ),
            ModelState(WEIRD, "1", c.STATE_READY, None, ""),
        ],
        executions_by_batch_size={(WEIRD, "1"): {1: 4.0, 16: 10.0}},
        configs={WEIRD: ModelConfigSummary(16, True, max_queue_delay_us=2500.0)},
        server_cost_per_hour=0.36,
        idle_fraction=0.7,
        devices=1,
    )


def samples(text: str) -> dict[tuple[str, tuple], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_rendered_text_reads_back_identically_in_both_parsers():
    text = render(ExporterView(up=True, derivation=derivation()))
    ours = {(s.name, s.labels): s.value for s in parse(text)}
    theirs = samples(text)
    assert ours == theirs
    mv = (("model", WEIRD), ("version", "1"))
    assert theirs[(c.M_BATCHING_RATIO, mv)] == 3.5
    assert theirs[(c.M_COST_PER_1K, (("currency", "USD"), *mv))] == 1e-05
    assert theirs[(c.M_REQUEST_STAGE_SECONDS, (*mv[:1], ("stage", "other"), mv[1]))] == 0.005
    assert theirs[(c.M_EXECUTIONS_BY_BATCH_SIZE, (("batch_size", "16"), *mv))] == 10.0
    assert theirs[(c.M_MODEL_DYNAMIC_BATCHING, (("model", WEIRD),))] == 1.0
    assert theirs[(c.M_MODEL_MAX_QUEUE_DELAY, (("model", WEIRD),))] == 0.0025
    reason = next(k for k in theirs if k[0] == c.M_MODEL_UNAVAILABLE_INFO)
    assert dict(reason[1])["reason"] == 'Internal: ModuleNotFoundError: No module named "x"'
    states = {
        dict(k[1])["state"]: v
        for k, v in theirs.items()
        if k[0] == c.M_MODEL_STATE and ("model", "broken") in k[1]
    }
    assert states == {s: float(s == c.STATE_UNAVAILABLE) for s in c.MODEL_STATES}
    # a model with nothing derived exports no per-model sample, never NaN
    assert not any(("model", "idle") in k[1] for k in theirs)
    assert not any(math.isnan(v) for v in theirs.values())


def test_before_the_first_poll_only_up_is_exported():
    assert samples(render(ExporterView(up=False, derivation=None))) == {(c.M_UP, ()): 0.0}


def test_each_row_is_written_exactly(monkeypatch) -> None:
    """The text of each sample line: label values escaped (`{}` kept as they are), numbers as
    `repr` of the float with Prometheus' NaN / +Inf / -Inf; a row with the wrong number of label
    values is refused, not written."""
    import triton_sre.exporter.collector as collector
    from triton_sre.exporter.family import GAUGE, Family

    name, labels = c.M_BATCHING_RATIO, (c.LABEL_MODEL, c.LABEL_VERSION)
    rows = [
        (['a"b', "1"], 1.5),
        (["c\\d\ne", "{}"], math.nan),
        (["{0}x", "2"], math.inf),
        (["y", "3"], -math.inf),
        (["z", "4"], -0.0),
        (["w", "5"], 2.0**64),
    ]
    monkeypatch.setattr(collector, "families", lambda view: iter([Family(GAUGE, name, "h", labels, rows)]))
    text = collector.render(ExporterView(up=True, derivation=None))
    m, v = labels
    assert text.splitlines()[2:] == [
        f'{name}{{{m}="a\\"b",{v}="1"}} 1.5',
        f'{name}{{{m}="c\\\\d\\ne",{v}="{{}}"}} NaN',
        f'{name}{{{m}="{{0}}x",{v}="2"}} +Inf',
        f'{name}{{{m}="y",{v}="3"}} -Inf',
        f'{name}{{{m}="z",{v}="4"}} -0.0',
        f'{name}{{{m}="w",{v}="5"}} 1.8446744073709552e+19',
    ]
    wrong = [(["only one"], 1.0)]
    monkeypatch.setattr(collector, "families", lambda view: iter([Family(GAUGE, name, "h", labels, wrong)]))
    with pytest.raises(ValueError):
        collector.render(ExporterView(up=True, derivation=None))


def test_an_ensembles_steps_are_exported_with_the_times_its_config_names_each():
    """The report weighs each step's counters by these (reportsplit): a step named twice counts twice."""
    steps = (("prep", -1), ("scorer", 2), ("prep", -1), ("scorer", 3))
    d = derivation()
    configs = {**d.configs, "pipe": ModelConfigSummary(4, False, ensemble=True, steps=steps)}
    text = render(ExporterView(up=True, derivation=dataclasses.replace(d, configs=configs)))
    calls = {
        (dict(k[1])[c.LABEL_MODEL], dict(k[1])[c.L_STEP], dict(k[1])[c.L_STEP_VERSION]): v
        for k, v in samples(text).items()
        if k[0] == c.M_ENSEMBLE_STEP_CALLS
    }
    assert calls == {("pipe", "prep", "-1"): 2.0, ("pipe", "scorer", "2"): 1.0, ("pipe", "scorer", "3"): 1.0}
