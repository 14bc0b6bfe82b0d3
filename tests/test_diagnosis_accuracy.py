"""The honest accuracy figure: top-1 runbook on real logs users posted, scored on a held-out part.

The corpus and its split are described in tests/data/logs/SPLIT.md; `tests/accuracy.py` loads and
scores it. Run ``python tests/test_diagnosis_accuracy.py`` to print the table for bench/RESULTS.md.
"""

from __future__ import annotations

import accuracy
import pytest


@pytest.mark.parametrize("split", accuracy.SPLITS)
def test_split_follows_the_rule(split: str) -> None:
    cases = accuracy.load(split)
    assert cases
    for case in cases:
        assert case.source.startswith("https://github.com/"), f"{case.name}: cite the issue URL"
        want = accuracy.split_of(case.source)
        assert want == split, f"{case.name} belongs in {want}/"


def test_no_log_is_in_both_parts() -> None:
    tune = {c.source for c in accuracy.load("tune")}
    heldout = {c.source for c in accuracy.load("heldout")}
    assert not tune & heldout


if __name__ == "__main__":
    for split in accuracy.SPLITS:
        sc = accuracy.score(accuracy.load(split))
        print(f"{split}: top-1 {sc.hits}/{sc.cases} = {sc.top1:.1%}")
        for name, want, got in sc.misses:
            print(f"  miss {name}: expected {want}, got {got}")
