"""Which models an SLO's selector names, both ways, for the SLO rules' promtool scenarios
(tests_slo.py, and tests_operational.py's not-served tests): the SLOs that judge a model
(`SLOIndex`, with the burn rules asked for last) and model names a selector matches (`sample_models`).
Pure.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any

from triton_sre import conventions as c
from triton_sre.generate.slo_rules import burn_alert_name, burn_alerts
from triton_sre.slo import SLO, Spec

__all__ = ["RULES_KEPT", "SLOIndex", "sample_models"]


class SLOIndex:
    """The SLOs whose selector can match a model, in spec order, without trying every SLO on every
    model (that made `generate` quadratic in the number of SLOs: issue 28 item 7); `predict` still
    decides whether each judges a track. One index per spec, rebuilt when another spec comes."""

    _last: tuple[Spec, SLOIndex] | None = None

    def __init__(self, spec: Spec) -> None:
        self.slos = spec.slos
        self.alert_names = sorted({burn_alert_name(s) for s in spec.slos})
        # the summary quantiles the rules read (summary tracks export them)
        self.quantiles = sorted({s.quantile for s in spec.slos if s.type == c.SLO_LATENCY}, key=float)
        self._everywhere = [i for i, s in enumerate(spec.slos) if s.models.kind == "all"]
        # each regex compiled once: re's own cache holds 512, so 1,000 regex SLOs recompiled every regex
        # for every model (2 M compiles, 600 of generate's 700 s under a profiler)
        self._regex = {
            i: re.compile(s.models.regex) for i, s in enumerate(spec.slos) if s.models.kind == "regex"
        }
        self._named: dict[str, list[int]] = {}
        for i, s in enumerate(spec.slos):
            if s.models.kind == "list":
                for name in dict.fromkeys(s.models.names):
                    self._named.setdefault(name, []).append(i)
        self._covering: dict[str, list[SLO]] = {}
        # the burn rules of the SLOs asked for last (tests are built an SLO at a time): all of them held
        # were ~3.3 kB an SLO, the largest holder left at 10,000 SLOs. Bounded, but never below twice
        # the most SLOs covering one model (a track asks for each of them in turn: an LRU smaller
        # than that would build every one again for every track)
        self._rules: OrderedDict[tuple[int, str], dict[str, Any]] = OrderedDict()
        self._kept = RULES_KEPT

    @classmethod
    def of(cls, spec: Spec) -> SLOIndex:
        if cls._last is None or cls._last[0] is not spec:
            cls._last = (spec, cls(spec))
        return cls._last[1]

    def covering(self, model: str) -> list[SLO]:
        if model not in self._covering:
            regex = [i for i, pattern in self._regex.items() if pattern.fullmatch(model)]
            found = sorted({*self._everywhere, *self._named.get(model, ()), *regex})
            self._covering[model] = [self.slos[i] for i in found]
            self._kept = max(self._kept, 2 * len(found))
        return self._covering[model]

    def burn_rule(self, slo: SLO, base_url: str, window: str) -> dict[str, Any]:
        """The burn alert rule of `slo`'s tier whose long window is `window`."""
        key = (id(slo), base_url)
        if key in self._rules:
            self._rules.move_to_end(key)
        else:
            self._rules[key] = {rule["labels"][c.L_WINDOW]: rule for rule in burn_alerts(slo, base_url)}
            if len(self._rules) > self._kept:
                self._rules.popitem(last=False)
        return self._rules[key][window]


RULES_KEPT = 256  # SLOs whose burn rules SLOIndex keeps at least


def sample_models(slo: SLO, n: int = 2) -> list[str]:
    """Up to `n` distinct model names the SLO's selector matches (best effort for regexes)."""
    sel = slo.models
    if sel.kind == "all":
        return [f"{slo.name}-model-{i}" for i in range(n)]
    if sel.kind == "list":
        return list(sel.names[:n])
    found: list[str] = []
    for alternative in _top_level_alternatives(sel.regex):
        base = re.sub(r"\\d[+*]?|\[0-9\][+*]?", "1", alternative)
        base = re.sub(r"\.[+*]|\[[^\]]*\][+*]?", "x", base)
        base = re.sub(r"[()^$?]|\\(?=.)", "", base)
        for candidate in (base, base + "x", base + "y", base + "1", base + "2"):
            if candidate and candidate not in found and re.fullmatch(sel.regex, candidate):
                found.append(candidate)
    return found[:n]


def _top_level_alternatives(regex: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in regex:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "|" and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    return [*parts, current]
