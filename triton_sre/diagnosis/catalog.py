"""The runbook catalog: ``runbooks/<id>.md`` pages -> a validated `Catalog`.

One format for every runbook (load failures and alerts alike): YAML front matter between ``---``
lines with exactly ``id`` (equal to the file stem), ``title``, ``severity`` (``critical``,
``warning`` or ``info``) and ``remediation`` (one line: what to do first; the triage report and
the bot show it), then the sections ``## Meaning``, ``## Impact``, ``## Diagnosis`` and
``## Mitigation``. Errors name the file and the field.

Where the pages live at run time (`default_runbooks_dir`), first match wins:

1. ``$TRITON_SRE_RUNBOOKS_DIR``;
2. the shipped pages (`triton_sre.data`): the repository's top-level ``runbooks/`` (the one
   source of truth), through a symlink in a checkout, a copy made from it in a wheel.

`runbook_url` links a page: by default the repository-relative path ``runbooks/<id>.md`` (it
resolves in the GitHub/GitLab UI and in a checkout); with an ``http(s)://`` base, ``base + <id>.md``
(a ``/`` is added to the base when missing), e.g. ``https://git.example.com/sre/runbooks/``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from triton_sre import conventions as c
from triton_sre.data import shipped
from triton_sre.inputs import MAX_CONFIG_BYTES, load_yaml, read_bounded, yaml_problem

__all__ = [
    "REQUIRED_SECTIONS",
    "SEVERITIES",
    "Catalog",
    "CatalogError",
    "Runbook",
    "default_runbooks_dir",
    "load_catalog",
    "parse_runbook",
    "runbook_url",
]

REQUIRED_SECTIONS = ("Meaning", "Impact", "Diagnosis", "Mitigation")
FRONT_MATTER_KEYS = ("id", "title", "severity", "remediation")
SEVERITIES = (c.IMPACT_CRITICAL, c.IMPACT_WARNING, c.IMPACT_INFO)
RUNBOOK_DIR_NAME = "runbooks"

_SECTION = re.compile(r"^## +(.+?)\s*$", re.M)


class CatalogError(ValueError):
    """A runbook page is missing, unreadable or malformed; the message names file and field."""


@dataclass(frozen=True, slots=True)
class Runbook:
    id: str
    title: str
    severity: str
    path: Path
    sections: Mapping[str, str]
    remediation: str


@dataclass(frozen=True)
class Catalog:
    runbooks: Mapping[str, Runbook]
    root: Path

    def __contains__(self, runbook_id: object) -> bool:
        return runbook_id in self.runbooks

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.runbooks))

    def __len__(self) -> int:
        return len(self.runbooks)

    def __getitem__(self, runbook_id: str) -> Runbook:
        return self.runbooks[runbook_id]

    @property
    def titles(self) -> dict[str, str]:
        return {rid: rb.title for rid, rb in self.runbooks.items()}

    @property
    def remediations(self) -> dict[str, str]:
        """Runbook id -> its one-line remediation (front matter)."""
        return {rid: rb.remediation for rid, rb in self.runbooks.items()}


def parse_runbook(text: str, path: Path) -> Runbook:
    """One page; raises `CatalogError` naming ``path`` and the offending field."""
    name = str(path)
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise CatalogError(f"{name}: front matter: the file must start with a '---' line")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise CatalogError(f"{name}: front matter: no closing '---' line") from None
    try:
        meta = load_yaml("\n" + "\n".join(lines[1:end]))  # line numbers as in the file
    except yaml.YAMLError as exc:
        raise CatalogError(f"{name}: front matter: {yaml_problem(exc)}") from None
    if not isinstance(meta, dict):
        raise CatalogError(f"{name}: front matter: expected a mapping with {', '.join(FRONT_MATTER_KEYS)}")
    for key in FRONT_MATTER_KEYS:
        if key not in meta:
            raise CatalogError(f"{name}: {key}: missing from the front matter")
        if not isinstance(meta[key], str) or not meta[key].strip():
            raise CatalogError(f"{name}: {key}: must be a non-empty string, got {meta[key]!r}")
    extra = sorted(set(meta) - set(FRONT_MATTER_KEYS))
    if extra:
        raise CatalogError(
            f"{name}: {extra[0]}: unknown front matter field (allowed: {', '.join(FRONT_MATTER_KEYS)})"
        )
    if meta["id"] != path.stem:
        raise CatalogError(f"{name}: id: {meta['id']!r} must equal the file name stem {path.stem!r}")
    if meta["severity"] not in SEVERITIES:
        raise CatalogError(f"{name}: severity: {meta['severity']!r} is not one of {', '.join(SEVERITIES)}")
    body = "\n".join(lines[end + 1 :])
    heads = list(_SECTION.finditer(body))
    sections: dict[str, str] = {}
    for i, head in enumerate(heads):
        stop = heads[i + 1].start() if i + 1 < len(heads) else len(body)
        sections[head.group(1)] = body[head.end() : stop].strip()
    for section in REQUIRED_SECTIONS:
        if section not in sections:
            raise CatalogError(f"{name}: ## {section}: required section missing")
        if not sections[section]:
            raise CatalogError(f"{name}: ## {section}: section is empty")
    remediation = " ".join(meta["remediation"].split())
    return Runbook(meta["id"], meta["title"].strip(), meta["severity"], path, sections, remediation)


def load_catalog(path: str | os.PathLike[str] | None = None) -> Catalog:
    """Every ``*.md`` page under ``path`` (default: `default_runbooks_dir`), validated."""
    root = Path(path) if path is not None else default_runbooks_dir()
    if not root.is_dir():
        raise CatalogError(f"{root}: runbook folder not found")
    try:  # glob() lists nothing in a folder it cannot read: that was "no runbook page in this folder"
        pages = sorted(entry for entry in root.iterdir() if entry.suffix == ".md")
    except OSError as exc:
        raise CatalogError(f"{root}: runbook folder cannot be listed: {exc.strerror or exc}") from None
    runbooks: dict[str, Runbook] = {}
    for page in pages:
        if page.name.lower() == "readme.md":
            continue
        try:
            text = read_bounded(page, MAX_CONFIG_BYTES).decode("utf-8")  # a FIFO or /dev/zero: refused
        except (OSError, UnicodeDecodeError) as exc:
            raise CatalogError(f"{page}: unreadable: {exc}") from None
        runbook = parse_runbook(text, page)
        runbooks[runbook.id] = runbook
    if not runbooks:  # a wrong --runbooks: every finding would lose its title and fix
        raise CatalogError(f"{root}: no runbook page (*.md with front matter) in this folder")
    return Catalog(runbooks, root)


def default_runbooks_dir() -> Path:
    """Where the runbook pages are (see the module docstring for the order)."""
    env = os.environ.get(c.ENV_RUNBOOKS_DIR)
    if env:
        return Path(env)
    return shipped(RUNBOOK_DIR_NAME)


def runbook_url(runbook_id: str, base_url: str | None = None) -> str:
    """Link to a runbook page: ``runbooks/<id>.md``, or ``<base_url><id>.md`` for an http(s) base."""
    if not base_url:
        return f"{RUNBOOK_DIR_NAME}/{runbook_id}.md"
    base = base_url if base_url.endswith("/") else base_url + "/"
    return f"{base}{runbook_id}.md"
