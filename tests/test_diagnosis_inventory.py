"""The message inventory: every template read from Triton's sources maps to its runbook.

One test case per inventory entry (its id, source file and releases are in the test id), with the
wording the source builds; one per piece of competing evidence. The inventory file itself is
validated, and docs/diagnosis-coverage.md must be what the inventory generates.
"""

# ruff: noqa: E501 - messages are test data and keep their real length

from __future__ import annotations

import re
from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis import coverage
from triton_sre.diagnosis.catalog import load_catalog
from triton_sre.diagnosis.engine import classify_reason, diagnose_events, diagnose_reason
from triton_sre.diagnosis.inventory import (
    COMPONENTS,
    ENTRIES,
    Entry,
    InventoryError,
    LazyPattern,
    load_inventory,
    parse_inventory,
    template_regex,
    wrap_tolerant,
)
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.diagnosis.rules import CAUSE_RULES, PRIORITY, RANK
from triton_sre.diagnosis.signals import is_summary

ROOT = Path(__file__).resolve().parents[1]
RULE_ENTRIES = [e for e in ENTRIES if e.runbook != c.RUNBOOK_UNKNOWN_LOAD_FAILURE]


def _id(e: Entry) -> str:
    return f"{e.id}[{e.source.split(' ')[0]}@{e.releases[0]}-{e.releases[1]}]"


def test_inventory_size_and_components() -> None:
    assert len(ENTRIES) >= 150
    assert {e.component for e in ENTRIES} == set(COMPONENTS)
    # Release ranges lie in what users post: from r19.01, the first TensorRT Inference Server branch read (its
    # wordings still show up in public threads: heldout61), to the newest branch read.
    assert all(e.releases[0] >= "r19.01" and e.releases[1] <= "r26.07" for e in ENTRIES)
    assert min(e.releases[0] for e in ENTRIES) == "r19.01"


@pytest.mark.parametrize("entry", RULE_ENTRIES, ids=_id)
def test_template_maps_to_its_runbook(entry: Entry) -> None:
    """The source's wording, with values filled in as a log shows them, classifies to the entry's runbook."""
    assert classify_reason(entry.example) == entry.runbook, f"{entry.id}: {entry.template!r}"
    # The same text inside Triton's failure line is diagnosed the same, with the model named.
    line = f"E0101 00:00:00.000000 1 model_lifecycle.cc:642] \"failed to load 'model_x' version 3: Invalid argument: {entry.example}\""
    findings = diagnose_events(parse_text(line)).findings
    assert entry.runbook in [f.runbook for f in findings]
    assert findings[0].runbook != c.RUNBOOK_UNKNOWN_LOAD_FAILURE
    assert findings[0].severity == c.IMPACT_CRITICAL


@pytest.mark.parametrize(
    ("entry", "competitor"),
    [(e, comp) for e in ENTRIES for comp in e.competes],
    ids=lambda v: v.id if isinstance(v, Entry) else v.runbook,
)
def test_competing_evidence_decides(entry: Entry, competitor) -> None:
    assert diagnose_reason(competitor.example) == competitor.runbook
    assert diagnose_reason(entry.example) == entry.runbook


def test_summary_entries_are_summaries() -> None:
    for e in ENTRIES:
        if e.runbook == c.RUNBOOK_UNKNOWN_LOAD_FAILURE:
            assert is_summary(e.example), e.id


def test_every_entry_is_a_rule_and_every_runbook_has_a_page() -> None:
    sources = {r.source for r in CAUSE_RULES}
    assert {e.id for e in RULE_ENTRIES} <= sources
    catalog = load_catalog()
    assert {e.runbook for e in ENTRIES} <= set(catalog)
    assert set(PRIORITY) | {c.RUNBOOK_CONFIG_PARSE_ERROR, c.RUNBOOK_UNKNOWN_LOAD_FAILURE} == set(
        c.LOAD_FAILURE_RUNBOOKS
    )
    assert RANK[c.RUNBOOK_UNKNOWN_LOAD_FAILURE] == max(RANK.values())


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("py-shm-grow-r21", "py-shm-grow"),
        ("py-model-file-r21", "py-model-file"),
        ("core-ensemble-missing-r21", "core-ensemble-missing"),
        ("core-backend-lib-r22", "core-backend-lib"),
        ("core-platform-type-r21", "core-platform-type"),
        ("core-seq-control-kinds-r21", "core-seq-control-kinds"),
        ("core-output-data-type", "core-data-type-r25"),
        ("paddle-model-name-r21", "paddle-model-name"),
        ("fil-layout", "fil-layout-nvforest"),
    ],
)
def test_reworded_messages_keep_their_runbook(old: str, new: str) -> None:
    """Messages Triton reworded between releases: both wordings are in, and mean the same."""
    by_id = {e.id: e for e in ENTRIES}
    a, b = by_id[old], by_id[new]
    assert a.template != b.template
    assert a.runbook == b.runbook
    assert a.releases[1] <= b.releases[1]
    assert classify_reason(a.example) == classify_reason(b.example) == a.runbook


def test_template_regex_treats_placeholders_as_text() -> None:
    rx = template_regex("ensemble '<e>' depends on '<m>' whose required version <v> is not loaded")
    assert rx.search("ensemble 'a' depends on 'b' whose required version 2 is not loaded.")
    assert not rx.search("ensemble 'a' depends on 'b' which has no loaded version")
    bare = template_regex("<x>must specify 'dims'")  # leading and trailing placeholders dropped
    assert bare.fullmatch("must specify 'dims'") and not bare.search("must specify dims")


def test_a_templates_blank_may_be_a_hand_wrap() -> None:
    """A person wrapping a message puts a line break (the rest often indented) where a blank was; a
    blank is never dropped, and words do not run into each other."""
    rx = template_regex("Python model file not found in '<path>'")
    assert rx.search("Python model file not found in '/m/1/model.py'")
    assert rx.search("Python model file not\n  found in '/m/1/model.py'")
    assert rx.search("Python model file not \nfound in '/m/1/model.py'")
    assert rx.search("Python model  file not found in '/m/1/model.py'")
    assert not rx.search("Python model file notfound in '/m/1/model.py'")
    assert not rx.search("Python model file not\n\n  found in '/m/1/model.py'")  # a paragraph, not a wrap


def test_a_template_that_starts_with_a_value_needs_a_blank_before_its_first_word() -> None:
    rx = template_regex("<m> in auto-complete-config function, model properties must be set")
    assert rx.search("'m' in auto-complete-config function, model properties must be set")
    assert rx.search("'m'\n  in auto-complete-config function, model properties must be set")
    assert not rx.search("'m'in auto-complete-config function, model properties must be set")


def test_no_rule_starts_with_a_blank_run() -> None:
    """A regex that starts by matching blanks is tried again from each blank of a run: a line padded with
    50,000 blanks between two words took minutes (bench/bench_triage_hostile.py). A leading blank is a
    look-behind instead."""
    leading = [r.source for r in CAUSE_RULES if re.match(r"\(\?:\[ \\t\]|\[ \\t\]|\\s|\(\?:\\s", r.pattern.pattern)]
    assert leading == []


def test_a_templates_value_is_read_up_to_a_bound() -> None:
    """A value between two literals is bounded: unbounded, a line repeating the literal before it was read
    to its end from each repetition (a 45 KB line of ``ensemble `` took 10 s; bench_triage_hostile)."""
    assert [e.id for e in ENTRIES if ".*?" in template_regex(e.template).pattern] == []
    rx = template_regex("ensemble <e> contains models that are not available")
    assert rx.search("ensemble " + "x" * 1500 + " contains models that are not available")


VALID = """schema: 1
entries:
  - id: a
    component: core
    source: src/x.cc
    releases: [r22.06, r26.06]
    template: "boom for <m>"
    example: "boom for m"
    runbook: config-parse-error
"""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("entries: []", "schema: 1"),
        (VALID.replace("component: core", "component: nope"), "entry 0 (a): component"),
        (VALID.replace("runbook: config-parse-error", "runbook: not-a-runbook"), "entry 0 (a): runbook"),
        (VALID.replace("[r22.06, r26.06]", "[r26.06, r22.06]"), "entry 0 (a): releases"),
        (VALID.replace('example: "boom for m"', 'example: "something else"'), "entry 0 (a): example"),
        (VALID.replace("    runbook: config-parse-error\n", ""), "entry 0 (a): runbook: missing"),
        (VALID + "    colour: red\n", "entry 0 (a): colour: unknown field"),
        (VALID + '    pattern: "("\n', "entry 0 (a): pattern: not a valid regex"),
        (
            VALID + "    competes:\n      - runbook: permission-denied\n        when: nope\n",
            "needs exactly 'runbook', 'when' and 'example'",
        ),
        (
            VALID
            + "    competes:\n      - runbook: permission-denied\n        when: denied\n        example: boom for m\n",
            "competes[0].example",
        ),
        (VALID + VALID.split("entries:\n", 1)[1], "entry a: id: used more than once"),
    ],
)
def test_malformed_inventory_is_rejected_naming_entry_and_field(text: str, message: str) -> None:
    with pytest.raises(InventoryError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        parse_inventory(text)


def test_the_packaged_inventory_passes_every_check_its_lazy_reading_skips() -> None:
    """`ENTRIES` is read unchecked (patterns compiled at their first search); the full check of the same
    file (each pattern compiles, each example matches its template, competitors as declared) passes, and
    gives the same entries, pattern for pattern."""
    checked = load_inventory()
    assert all(isinstance(e.regex, re.Pattern) for e in checked)
    assert all(isinstance(e.regex, LazyPattern) for e in ENTRIES)

    def shape(entries: tuple[Entry, ...]) -> list[object]:
        return [
            (e.id, e.runbook, e.regex.pattern, e.tail and e.tail.pattern, [(w.runbook, w.when.pattern) for w in e.competes])
            for e in entries
        ]

    assert shape(checked) == shape(ENTRIES)


def test_a_lazy_pattern_searches_as_its_compiled_pattern() -> None:
    source = r"unable to\s+find (\w+)"
    lazy, compiled = LazyPattern(source, re.I), re.compile(source, re.I)
    assert lazy._compiled is None  # not compiled until used
    for text in ("Unable to  FIND backend", "nothing here", "x unable to find y unable to find z"):
        assert repr(lazy.search(text)) == repr(compiled.search(text))
    found = lazy.search("xx unable to find a", 3)
    assert found is not None and found.group(1) == "a"
    assert lazy.groups == 1 and lazy == LazyPattern(source, re.I) and lazy != LazyPattern(source, 0)


def test_coverage_document_is_not_stale() -> None:
    path = ROOT / coverage.COVERAGE_DOC
    assert path.read_text(encoding="utf-8") == coverage.coverage_markdown(), (
        "docs/diagnosis-coverage.md is stale: run python -m triton_sre.diagnosis.coverage"
    )
    assert coverage.main(["--root", str(ROOT), "--check"]) == c.EXIT_OK


def test_coverage_check_reports_a_stale_document(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    assert coverage.main(["--root", str(tmp_path), "--check"]) == c.EXIT_FAILURE
    assert coverage.main(["--root", str(tmp_path)]) == c.EXIT_OK
    assert coverage.main(["--root", str(tmp_path), "--check"]) == c.EXIT_OK
    assert coverage.main(["--root", str(tmp_path / "missing")]) == c.EXIT_USAGE


def test_a_hand_written_regex_reads_a_hand_wrap_at_its_literal_blanks_only() -> None:
    rx = re.compile(wrap_tolerant(r"platform type '?(python|onnxruntime)'? for"))
    assert rx.search("platform type 'onnxruntime' for") and rx.search("platform type\n  'onnxruntime' for")
    # a blank inside a character class, escaped or quantified keeps its meaning
    assert wrap_tolerant(r"a[ x]b\ c *d") == r"a[ x]b\ c *d"
