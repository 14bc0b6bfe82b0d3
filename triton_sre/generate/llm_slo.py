"""The LLM SLO types `ttft` and `time_per_output_token` (parsed in slo.py): their SLI parts, as
recorded by slo_rules.py, the SLI's words in burn alerts, and their promtool input series (tests_slo.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from triton_sre import conventions as c
from triton_sre.generate.rulefile import model_matchers
from triton_sre.promql import Matcher, by, label_sets, num, selector
from triton_sre.slo import SLO, Spec


def le_regex_seconds(bound: float) -> str:
    """A bucket bound in seconds however it is written: `0.25`, `1` / `1.0`, `10` / `10.0`."""
    text = repr(float(bound))
    if text.endswith(".0"):
        return f"{re.escape(text[:-2])}(\\.0+)?"
    return f"{re.escape(text)}0*"


def _slo_matchers(spec: Spec, slo: SLO) -> list[Matcher]:
    return [(c.LABEL_JOB, "=", spec.triton_job), *model_matchers(slo)]


def slo_selectors(spec: Spec, slo: SLO) -> dict[str, str]:
    """The SLI's parts as series selectors: the histogram's count (events: first tokens for ttft,
    output-token gaps for time_per_output_token) and the threshold's bucket (those within it). The
    rules rate them (`slo_parts`), the report takes their increase over its range (report/slo.py)."""
    family = c.LLM_SLO_HISTOGRAMS[slo.type][0]
    ms = _slo_matchers(spec, slo)
    le = (c.LABEL_LE, "=~", le_regex_seconds(slo.threshold_s))
    return {
        c.SLO_PART_TOTAL: selector(family + "_count", ms),
        c.SLO_PART_GOOD: selector(family + "_bucket", [*ms, le]),
    }


def slo_parts(spec: Spec, slo: SLO) -> dict[str, str]:
    """The SLI's parts per model at REC_RATE_WINDOW, recorded like the other SLOs' (slo_rules.py
    `_part`): events per second and, of those, the ones within the threshold. Longer windows average
    them."""
    per_model = by(label_sets(spec.cluster_label).per_model)
    return {
        part: f"sum {per_model} (rate({sel}[{c.REC_RATE_WINDOW}]))"
        for part, sel in slo_selectors(spec, slo).items()
    }


def slo_sli_text(slo: SLO) -> str:
    what = "requests whose first token took" if slo.type == c.SLO_TTFT else "output tokens that took"
    return f"{what} longer than {num(slo.threshold_s * 1000)} ms"


def slo_track_series(
    slo: SLO, labels: Callable[[Mapping[str, str]], str], total: str, good: str
) -> list[dict[str, str]]:
    """promtool input series of one model's events for an LLM SLO: the histogram's count and the
    threshold's bucket (tests_slo.py computes the expected alerts as for any histogram SLI)."""
    family = c.LLM_SLO_HISTOGRAMS[slo.type][0]
    le = repr(float(slo.threshold_s))
    return [
        {"series": f"{family}_count" + labels({}), "values": total},
        {"series": f"{family}_bucket" + labels({c.LABEL_LE: le}), "values": good},
    ]
