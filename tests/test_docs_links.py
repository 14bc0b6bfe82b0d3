"""Every relative link in README.md and docs/*.md points at a file that exists, and every
`#anchor` at a heading of its page (GitHub's heading slugs)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)


def _prose(text: str) -> str:
    """The text without fenced code blocks and code spans: links inside code are not links."""
    return _CODE_SPAN.sub("", _FENCE.sub("", text))


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading keeps its text
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for heading in _HEADING.findall(_FENCE.sub("", page.read_text(encoding="utf-8"))):
        slug = _slug(heading)
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def relative_links(page: Path) -> list[str]:
    targets = _LINK.findall(_prose(page.read_text(encoding="utf-8")))
    return [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", t)]  # http:, mailto: ...


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            where = dest.relative_to(root) if dest.is_relative_to(root) else dest
            broken.append(f"{target}: no such file {where}")
        elif anchor and dest.suffix == ".md" and dest.is_file() and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(root)}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_relative_links_resolve(page: Path) -> None:
    assert broken_links(page) == []


def test_readme_links_every_docs_page() -> None:
    """A page under docs/ that the README does not link is a page nobody finds."""
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in relative_links(ROOT / "README.md")}
    assert [p.name for p in PAGES[1:] if p.resolve() not in linked] == []


def test_readme_stays_short() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 200


def test_checker_finds_broken_links(tmp_path: Path) -> None:
    """The checker itself: a missing file and a missing anchor are reported, code is skipped."""
    (tmp_path / "other.md").write_text("# Other page\n\n## The cost model, with a worked example\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Title: `x`\n\n[ok](other.md) [ok](other.md#the-cost-model-with-a-worked-example) "
        "[ok](#title-x) [web](https://example.com/none)\n[bad](missing.md) [bad](other.md#nope)\n"
        "`[code](missing2.md)`\n```\n[fenced](missing3.md)\n```\n"
    )
    assert broken_links(page, root=tmp_path.resolve()) == [
        "missing.md: no such file missing.md",
        "other.md#nope: no heading #nope in other.md",
    ]
