"""Known issues by release (`known_issues.yaml`): the table's validation and the docs' list of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from triton_sre.diagnosis import known_issues as ki

# --- the table


def test_the_shipped_table_loads_with_unique_ids_and_public_sources() -> None:
    issues = ki.known_issues()
    assert len(issues) >= 20
    assert len({i.id for i in issues}) == len(issues)
    for i in issues:
        assert i.source.startswith("https://github.com/"), i.id
        assert i.first is None or i.last is None or i.first <= i.last, i.id
        assert (i.last is None) == (i.ends in ("open", "permanent")), i.id


GOOD = """issues:
  - id: x
    runbooks: [unknown-load-failure]
    wording: 'boom'
    first: "23.01"
    last: "23.02"
    ends: fixed
    advice: Do this.
    source: https://github.com/o/r/issues/1
    note: why
"""


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("runbooks: [unknown-load-failure]", "runbooks: [no-such-page]"), "runbooks"),
        (("runbooks: [unknown-load-failure]", "runbooks: []"), "runbooks"),
        (("wording: 'boom'", "wording: 'bo(om'"), "does not compile"),
        (('first: "23.01"', 'first: "2023.01"'), "release YY.MM"),
        (('first: "23.01"', 'first: "23.05"'), "is after last"),
        (("ends: fixed", "ends: open"), "does not fit last"),
        (('last: "23.02"', "last: null"), "does not fit last"),
        (("ends: fixed", "ends: someday"), "ends must be one of"),
        (("source: https://github.com/o/r/issues/1", "source: server#1"), "https"),
        (("    note: why\n", ""), "exactly the fields"),
        (("advice: Do this.", "advice: ''"), "non-empty"),
    ],
)
def test_a_malformed_entry_is_refused_naming_it(change: tuple[str, str], message: str) -> None:
    assert len(ki.parse_known_issues(GOOD)) == 1
    with pytest.raises(ValueError, match=message) as err:
        ki.parse_known_issues(GOOD.replace(*change))
    assert "entry 0" in str(err.value)


def test_duplicate_ids_and_a_missing_list_are_refused() -> None:
    with pytest.raises(ValueError, match="duplicate ids"):
        ki.parse_known_issues(GOOD + GOOD.removeprefix("issues:\n"))
    with pytest.raises(ValueError, match="no 'issues' list"):
        ki.parse_known_issues("entries: []\n")


# --- the documentation's table (docs/triage.md, hand-written): one row per entry, as the table says


def doc_row(entry: ki.KnownIssue) -> str:
    """The row docs/triage.md carries for ``entry``."""
    if entry.last is None:
        releases = f"{entry.first} and later" if entry.first else "every release"
    else:
        span = entry.last if entry.first == entry.last else f"{entry.first}–{entry.last}"
        releases = span if entry.first else f"up to {entry.last}"
    runbooks = ", ".join(f"`{r}`" for r in entry.runbooks)
    return f"| `{entry.id}` | {releases} | {entry.ends} | {runbooks} | <{entry.source}> |"


def test_the_triage_page_lists_every_known_issue_with_its_range() -> None:
    page = (Path(__file__).parent.parent / "docs" / "triage.md").read_text(encoding="utf-8")
    rows = [line for line in page.splitlines() if line.startswith("| `") and line.endswith("> |")]
    assert rows == [doc_row(entry) for entry in ki.known_issues()]
