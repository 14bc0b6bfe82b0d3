"""Memory budgets for one exposition body, checked by `exposition.iter_parse` before the costly part.

The parser's memory grows with what it builds: a tuple per label pair, a sample per kept line. A
line of a million label pairs (12 MB) alone took 282 MB to parse, and a 28 MB body of two such lines
770 MB in the exporter's first poll (bench/RESULTS.md, memguard). The checks here run on what a
slice's one regex split already gave (the raw label set strings, the kept lines' count), with C-level
string counts only, so a body past a budget is refused after about one slice's split, before any of
its label pairs is parsed or any of its samples built.

Budgets (names and defaults in `conventions`):

* label pairs of one sample: the raw set's quotes not escaped, halved (a value ending in an escaped
  backslash counts one pair less: an undercount by at most that);
* characters of one sample's label set as written between its braces (bounds every label name and
  value in it);
* samples of the kept families in the body (unkept lines are only validated, slice by slice);
* distinct model versions the body's samples name, checked by the exporter's fold
  (`metricsfold.SeriesPlacer`) as each new label set is resolved.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from triton_sre import conventions as c


class BudgetExceeded(ValueError):
    """A body went past a budget. Carries no text of the body: only the budget, its limit and what
    was seen (at least: the check stops at the first slice past the budget)."""

    def __init__(self, budget: str, limit: int, seen: int) -> None:
        super().__init__(f"{budget}: {seen:,} where the budget is {limit:,}")
        self.budget = budget
        self.limit = limit
        self.seen = seen


@dataclass
class BodyBudget:
    """The budgets of one body, and the kept samples counted so far (one instance per body)."""

    label_pairs: int = c.DEFAULT_METRICS_BUDGET[c.BUDGET_LABEL_PAIRS]
    label_set_chars: int = c.DEFAULT_METRICS_BUDGET[c.BUDGET_LABEL_SET_CHARS]
    samples: int = c.DEFAULT_METRICS_BUDGET[c.BUDGET_SAMPLES]
    model_versions: int = c.DEFAULT_METRICS_BUDGET[c.BUDGET_MODEL_VERSIONS]
    counted: int = field(default=0, init=False)

    @classmethod
    def of(cls, limits: Mapping[str, int]) -> BodyBudget:
        """A fresh budget from a `{budget name: limit}` mapping (the config's, the defaults')."""
        return cls(
            label_pairs=limits[c.BUDGET_LABEL_PAIRS],
            label_set_chars=limits[c.BUDGET_LABEL_SET_CHARS],
            samples=limits[c.BUDGET_SAMPLES],
            model_versions=limits[c.BUDGET_MODEL_VERSIONS],
        )

    def take_samples(self, count: int) -> None:
        """Count a slice's kept samples; raises once the body's total passes the budget."""
        self.counted += count
        if self.counted > self.samples:
            raise BudgetExceeded(c.BUDGET_SAMPLES, self.samples, self.counted)

    def check_label_sets(self, sets: Iterable[str]) -> None:
        """Raises for the first budget a raw label set (the text between the braces) goes past."""
        sets = list(sets)
        # a pair is at least `a=""`: only a set longer than 4 characters a pair can hold more
        pairs = max(map(_pairs, (s for s in sets if len(s) > 4 * self.label_pairs)), default=0)
        if pairs > self.label_pairs:
            raise BudgetExceeded(c.BUDGET_LABEL_PAIRS, self.label_pairs, pairs)
        longest = max(map(len, sets), default=0)
        if longest > self.label_set_chars:
            raise BudgetExceeded(c.BUDGET_LABEL_SET_CHARS, self.label_set_chars, longest)


def _pairs(inner: str) -> int:
    return (inner.count('"') - inner.count('\\"')) // 2
