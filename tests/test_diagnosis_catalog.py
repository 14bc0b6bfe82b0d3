"""The runbook catalog: every id has a valid page; malformed pages are rejected naming file and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.catalog import (
    REQUIRED_SECTIONS,
    CatalogError,
    default_runbooks_dir,
    load_catalog,
    parse_runbook,
    runbook_url,
)

REPO_RUNBOOKS = Path(__file__).resolve().parents[1] / "runbooks"

GOOD = """---
id: {id}
title: "A title"
severity: critical
remediation: "Do this first."
---

# A title

## Meaning
m

## Impact
i

## Diagnosis
```sh
curl -s -X POST localhost:8000/v2/repository/index
```

## Mitigation
do this
"""


def test_every_load_failure_id_has_a_valid_page() -> None:
    catalog = load_catalog()
    assert set(c.LOAD_FAILURE_RUNBOOKS) <= set(catalog)
    for rid in c.LOAD_FAILURE_RUNBOOKS:
        runbook = catalog[rid]
        assert runbook.path.name == f"{rid}.md"
        assert runbook.severity in (c.IMPACT_CRITICAL, c.IMPACT_WARNING, c.IMPACT_INFO)
        assert all(runbook.sections[s] for s in REQUIRED_SECTIONS)
        assert "```" in runbook.sections["Diagnosis"], f"{rid}: Diagnosis needs commands to run"


def test_every_runbook_has_a_one_line_remediation_in_its_front_matter() -> None:
    """Load failures, alerts and lint findings alike: the front matter holds the first thing to do."""
    catalog = load_catalog()
    pages = sorted(p.stem for p in REPO_RUNBOOKS.glob("*.md") if p.name.lower() != "readme.md")
    assert list(catalog) == pages and len(pages) > 40
    for rid in pages:
        remediation = catalog[rid].remediation
        assert remediation and "\n" not in remediation and remediation.endswith("."), rid
        assert len(remediation) <= 320, (rid, len(remediation))
    wanted = set(c.LOAD_FAILURE_RUNBOOKS) | set(c.ALERT_RUNBOOKS.values())
    assert wanted <= set(catalog.remediations)


def test_catalog_reads_alert_runbooks_too() -> None:
    # Alert pages (written by the generators) share the folder and the format.
    catalog = load_catalog()
    for rid in c.ALERT_RUNBOOKS.values():
        if (REPO_RUNBOOKS / f"{rid}.md").exists():
            assert rid in catalog


def test_default_folder_is_the_repository_runbooks() -> None:
    assert default_runbooks_dir().resolve() == REPO_RUNBOOKS.resolve()


def test_env_var_overrides_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "x-y.md").write_text(GOOD.format(id="x-y"))
    monkeypatch.setenv(c.ENV_RUNBOOKS_DIR, str(tmp_path))
    assert list(load_catalog()) == ["x-y"]


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("no front matter\n", "front matter"),
        ("---\nid: p\ntitle: t\n", "front matter"),
        (GOOD.format(id="p").replace("id: p\n", ""), "id"),
        (GOOD.format(id="other"), "id"),
        (GOOD.format(id="p").replace('title: "A title"\n', ""), "title"),
        (GOOD.format(id="p").replace("severity: critical", "severity: page"), "severity"),
        (GOOD.format(id="p").replace('remediation: "Do this first."\n', ""), "remediation"),
        (GOOD.format(id="p").replace('"Do this first."', '" "'), "remediation"),
        (GOOD.format(id="p").replace('"Do this first."', "[a, b]"), "remediation"),
        (GOOD.format(id="p").replace("severity: critical", "severity: critical\nowner: me"), "owner"),
        (GOOD.format(id="p").replace("## Impact\ni\n", ""), "## Impact"),
        (GOOD.format(id="p").replace("do this", ""), "## Mitigation"),
        ("---\n: [\n---\n", "front matter"),
    ],
)
def test_malformed_pages_name_file_and_field(tmp_path: Path, text: str, field: str) -> None:
    page = tmp_path / "p.md"
    page.write_text(text)
    with pytest.raises(CatalogError) as err:
        parse_runbook(text, page)
    assert str(page) in str(err.value)
    assert field in str(err.value)
    with pytest.raises(CatalogError):
        load_catalog(tmp_path)


def test_missing_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="not found"):
        load_catalog(tmp_path / "nope")


def test_runbook_url() -> None:
    assert runbook_url(c.RUNBOOK_SHM_TOO_SMALL) == f"runbooks/{c.RUNBOOK_SHM_TOO_SMALL}.md"
    assert runbook_url(c.RUNBOOK_SHM_TOO_SMALL, "https://git.example.com/sre/runbooks") == (
        f"https://git.example.com/sre/runbooks/{c.RUNBOOK_SHM_TOO_SMALL}.md"
    )
    assert runbook_url("a", "https://x/r/") == "https://x/r/a.md"
