"""exporter/ensembles.py and the config's ensemble steps, on hand-checked numbers (ensembles29)."""

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.exporter.ensembles import step_splits
from triton_sre.exporter.snapshot import ModelConfigSummary, config_summary, ensemble_steps

QUEUE, INFER, OTHER = c.STAGE_QUEUE, c.STAGE_COMPUTE_INFER, c.STAGE_OTHER


def ensemble(*steps: tuple[str, int]) -> ModelConfigSummary:
    return ModelConfigSummary(max_batch_size=4, dynamic_batching=False, ensemble=True, steps=steps)


def test_each_step_gets_its_own_seconds_per_request_and_a_step_named_twice_counts_twice() -> None:
    splits = {
        ("tok", "1"): {QUEUE: 0.001, INFER: 0.002, OTHER: 0.0},
        ("enc", "1"): {QUEUE: 0.5, INFER: 0.05, OTHER: 0.0},  # an old version: -1 is the latest
        ("enc", "3"): {QUEUE: 0.12, INFER: 0.04, OTHER: 0.001},
        ("enc", "10"): {QUEUE: 0.2, INFER: 0.03, OTHER: 0.0},
        ("ens", "1"): {QUEUE: 0.0001, INFER: 0.034, OTHER: 0.202},
    }
    got = step_splits(("ens", "1"), ensemble(("tok", -1), ("enc", -1), ("tok", 1)), splits)
    assert got == {
        "tok": {QUEUE: 0.002, INFER: 0.004, OTHER: 0.0},
        "enc": {QUEUE: 0.2, INFER: 0.03, OTHER: 0.0},
    }
    # a version the config names is that version, even when a later one is loaded
    named = step_splits(("ens", "1"), ensemble(("enc", 3)), splits)
    assert named == {"enc": {QUEUE: 0.12, INFER: 0.04, OTHER: 0.001}}


def test_a_step_without_a_split_is_absent_and_namespaces_stay_apart() -> None:
    splits = {
        ("enc", "1", "/models/a"): {QUEUE: 0.3},
        ("enc", "1", "/models/b"): {QUEUE: 0.01},
        ("enc", "1"): {QUEUE: 9.0},
    }
    config = ensemble(("enc", -1), ("missing", -1), ("enc", 2))
    assert step_splits(("ens", "1", "/models/b"), config, splits) == {"enc": {QUEUE: 0.01}}
    assert step_splits(("ens", "1"), config, splits) == {"enc": {QUEUE: 9.0}}
    assert step_splits(("ens", "1", "/models/c"), config, splits) == {}


@pytest.mark.parametrize(
    ("scheduling", "steps"),
    [
        ({"step": [{"model_name": "a", "model_version": -1}, {"model_name": "b", "model_version": "2"}]},
         (("a", -1), ("b", 2))),
        ({"step": [{"model_name": "a"}]}, (("a", -1),)),  # proto3 JSON leaves a default out
        ({"step": [{"model_name": "a", "model_version": True}, {"model_name": "b", "model_version": "x"}]},
         (("a", -1), ("b", -1))),
        ({"step": [{"model_name": ""}, {"model_version": 1}, "a", {"model_name": 3}]}, ()),
        ({"step": "a"}, ()),
        (None, ()),
        ([], ()),
    ],
)
def test_ensemble_steps_decode_what_they_can(scheduling: object, steps: tuple) -> None:
    assert ensemble_steps(scheduling) == steps


def test_a_model_that_is_not_an_ensemble_has_no_steps() -> None:
    assert config_summary({"max_batch_size": 4, "platform": "onnxruntime_onnx"}).steps == ()
