"""The release table of Triton's metric families (conventions/triton_releases.py, read from the
release branches' sources): its page is current, and one body per sampled release, built from the
table (names, TYPE, HELP and labels as that release writes them), goes through the exporter and
doctor's checks: every derived figure present exactly when its families are, nothing NaN or
negative, no family reported missing that the release emits."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_exporter_scrapes import assert_sound, exposed, polled_twice, value

from triton_sre import conventions as c
from triton_sre.conventions.triton_releases import render_markdown
from triton_sre.doctor.checks import triton_checks
from triton_sre.doctor.facts import WATCHED_FAMILIES, TritonFacts, families_present

DOC = Path(__file__).parent.parent / "docs" / "triton-families.md"
# One release a year, and every release where a core family or label appeared or went.
SAMPLED = (
    "20.03",
    "20.06",
    "21.05",
    "22.02",
    "22.03",
    "22.09",
    "23.03",
    "23.04",
    "23.09",
    "24.01",
    "24.05",
    "24.07",
    "24.08",
    "24.11",
    "25.02",
    "25.04",
    "25.08",
    "26.01",
    "26.06",
)
GPU = "GPU-4f0e5c1a-0000-0000-0000-000000000001"
MODEL = {c.LABEL_MODEL: "resnet", c.LABEL_VERSION: "1"}
LLM = {c.LABEL_MODEL: "llm", c.LABEL_VERSION: "1"}
# per-model counters: a request's time is its queue and compute time plus a little (µs), both series
SANE = {
    c.NV_REQUEST_SUCCESS: 100,
    c.NV_REQUEST_FAILURE: 1,
    c.NV_INFERENCE_COUNT: 200,
    c.NV_EXEC_COUNT: 50,
    c.NV_REQUEST_DURATION_US: 90_000,
    c.NV_QUEUE_DURATION_US: 10_000,
    c.NV_COMPUTE_INPUT_DURATION_US: 5_000,
    c.NV_COMPUTE_INFER_DURATION_US: 60_000,
    c.NV_COMPUTE_OUTPUT_DURATION_US: 5_000,
}
_CATEGORY = {  # a backend family's category label -> the values its release writes
    c.TRT_LABEL_REQUEST_TYPE: ("active", "max", "scheduled", "context"),
    c.TRT_LABEL_KV_CACHE_BLOCK_TYPE: ("max", "free", "used", "tokens_per"),
}


def test_the_reference_page_is_rendered_from_the_table():
    text = DOC.read_text()
    table = text.split("<!-- families table: generated, do not edit -->\n", 1)[1].split("<!--", 1)[0]
    assert table == render_markdown(), "run: python -m triton_sre.conventions.triton_releases"


def test_every_family_is_named_once_and_its_releases_are_ordered():
    names = [f.name for f in c.TRITON_FAMILIES]
    assert len(names) == len(set(names))
    for family in c.TRITON_FAMILIES:
        assert re.fullmatch(r"\d\d\.\d\d", family.first), family
        assert not family.last or family.first <= family.last <= c.FAMILIES_READ_UP_TO, family
        assert family.help[0][0] == family.first, family
        assert family.kind in ("counter", "gauge", "histogram", "summary"), family


def _labels(pairs: dict[str, str]) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in sorted(pairs.items())) + "}"


def _series(family: c.TritonFamily, release: str) -> list[dict[str, str]]:
    labels = set(family.labels) - {c.LABEL_LE, c.LABEL_QUANTILE}
    if labels == {c.LABEL_GPU_UUID}:
        return [{c.LABEL_GPU_UUID: GPU}]
    if not labels:
        return [{}]
    if c.LABEL_GPU_UUID in labels:  # the model's own reporter, and its GPU instance's
        rows = [dict(MODEL), {**MODEL, c.LABEL_GPU_UUID: GPU}]
        if c.LABEL_REASON in labels:
            reasons = c.FAILURE_REASONS if release >= c.FAILURE_REASON_SINCE else None
            return [{**r, c.LABEL_REASON: why} for r in rows for why in reasons] if reasons else rows
        return rows
    category = sorted(labels - {c.LABEL_MODEL, c.LABEL_VERSION})
    if not category:
        return [dict(LLM)]
    values = _CATEGORY.get(category[0], ("total",))
    if release >= "25.04" and category[0] == c.TRT_LABEL_REQUEST_TYPE:
        values = (*values, c.TRT_REQUEST_WAITING)
    elif release >= "25.04" and category[0] == c.TRT_LABEL_KV_CACHE_BLOCK_TYPE:
        values = (*values, c.TRT_KV_FRACTION)
    return [{**LLM, category[0]: v} for v in values]


def body_for(release: str) -> bytes:
    """Every family the release registers, as its sources write them, with sane values."""
    out = []
    for n, family in enumerate(c.families_in(release)):
        out.append(f"# HELP {family.name} {family.help_in(release)}")
        out.append(f"# TYPE {family.name} {family.kind}")
        for labels in _series(family, release):
            base = 10.0 + n
            if family.kind == "summary":
                for q in c.TRITON_SUMMARY_QUANTILES:
                    out.append(f"{family.name}{_labels({**labels, c.LABEL_QUANTILE: q})} {base * 100}")
                out.append(f"{family.name}_sum{_labels(labels)} {base * 1000}")
                out.append(f"{family.name}_count{_labels(labels)} {base}")
            elif family.kind == "histogram":
                for le in ("0.5", "1", "+Inf"):
                    out.append(f"{family.name}_bucket{_labels({**labels, c.LABEL_LE: le})} {base}")
                out.append(f"{family.name}_sum{_labels(labels)} {base * 3}")
                out.append(f"{family.name}_count{_labels(labels)} {base}")
            elif family.name in (c.NV_GPU_UTILIZATION, c.NV_CPU_UTILIZATION, c.NV_CACHE_UTIL):
                out.append(f"{family.name}{_labels(labels)} 0.5")
            elif family.name.endswith("_total_bytes") or family.name == c.NV_GPU_POWER_LIMIT:
                out.append(f"{family.name}{_labels(labels)} {base * 2e9}")
            elif family.name.endswith("_used_bytes"):
                out.append(f"{family.name}{_labels(labels)} {base * 1e9}")
            else:
                out.append(f"{family.name}{_labels(labels)} {SANE.get(family.name, base * 7)}")
    return ("\n".join(out) + "\n").encode()


@pytest.mark.parametrize("release", SAMPLED)
def test_each_release_body_through_the_exporter_and_doctor(release: str) -> None:
    body = body_for(release)
    present = {f.name for f in c.families_in(release)}
    samples = exposed(polled_twice(body, "derived"))
    assert_sound(samples)
    assert value(samples, c.M_UP) == 1
    assert value(samples, c.M_POLL_ERRORS, target=c.TARGET_METRICS, kind=c.FAULT_PARSE) in (None, 0)
    # the batching ratio: both counts in every release
    assert value(samples, c.M_BATCHING_RATIO, **MODEL) is not None
    stages = {
        s.labels[c.L_STAGE]
        for s in samples.get(c.M_REQUEST_STAGE_FRACTION, [])
        if s.labels["model"] == "resnet"
    }
    assert bool(stages) == (set(c.STAGE_COUNTERS.values()) <= present), stages
    # doctor: every watched family the release emits is found, and no check calls one missing
    found = families_present(body.decode())
    assert found == {f for f in WATCHED_FAMILIES if f in present}
    facts = TritonFacts(None, found, (), frozenset(), frozenset())
    for check in triton_checks(facts):
        for family in present & set(WATCHED_FAMILIES):
            assert f"no {family}" not in check.found, (check.id, check.found)
    llm = {f.name for f in c.families_in(release) if f.labels[:2] == (c.LABEL_MODEL, c.LABEL_VERSION)}
    if {c.TRT_REQUEST_METRICS} <= llm:  # active 10+n*7 - scheduled: the waiting figure is read, >= 0
        assert value(samples, c.M_LLM_REQUESTS, **LLM, state=c.LLM_STATE_WAITING) is not None
        assert value(samples, c.M_LLM_KV_CACHE_UTILIZATION, **LLM) is not None
