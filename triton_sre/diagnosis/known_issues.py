"""Pure (package data read once): what is known about a finding in a Triton release.

Each entry of ``known_issues.yaml`` ties a finding (its runbook and a wording in its evidence) in a range
of NGC releases to the public document that describes it and the release that changes it: the Known
Issues of Triton's release notes (a crash at shutdown, a load failure with a given wording, a platform
limit), and backend documents where a backend's behaviour changed between releases. `notes` returns the
advice of the entries that match; `releases.advice` appends it to the finding's one-line fix.

The table is validated when first used: a runbook that is not a finding's, a wording that does not
compile, a malformed release or a range whose end contradicts ``ends`` is a ValueError naming the entry.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

import yaml

from triton_sre import conventions as c

__all__ = ["KNOWN_ISSUES_FILE", "Exposure", "KnownIssue", "known_issues", "notes", "parse_known_issues"]

KNOWN_ISSUES_FILE: Final = "known_issues.yaml"

_ENDS_AT_A_RELEASE: Final = frozenset({"fixed", "superseded", "last-listed"})
"""Why a range ends at ``last``: the next release fixes it, another entry takes over, or it is the newest
release seen listing it."""
_OPEN_ENDED: Final = frozenset({"open", "permanent"})
"""A range with no end: no fixing release (open), or a behaviour change (permanent)."""
_FIELDS: Final = ("id", "runbooks", "wording", "first", "last", "ends", "advice", "source", "note")
_OPTIONAL: Final = ("exposure",)
_RELEASE: Final = re.compile(r"\d\d\.\d\d")
_FEATURE: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


@dataclass(frozen=True, slots=True)
class Exposure:
    """What in a model repository shows, before deployment, that its models would hit the issue."""

    features: tuple[str, ...]
    """Names of the repository features (lint's detectors) a model must have, all of them."""
    fails_load: bool
    """True when a model with those features does not load in the range (not a crash at shutdown, nor
    a failure that needs something more the repository does not show)."""


@dataclass(frozen=True, slots=True)
class KnownIssue:
    id: str
    runbooks: tuple[str, ...]
    """The findings it explains (a crash may read as the backend's own or as an unknown failure)."""
    wording: re.Pattern[str]
    """Searched in the finding's evidence and message."""
    first: str | None
    """First affected release (``YY.MM``), inclusive; None: every release."""
    last: str | None
    """Last affected release, inclusive; None: no end (`ends` says why)."""
    ends: str
    advice: str
    source: str
    exposure: Exposure | None = None
    """The static features of a model exposed to it (`lint --release`); None: none shows it."""

    def covers(self, release: str) -> bool:
        return (self.first is None or self.first <= release) and (self.last is None or release <= self.last)


def _release(entry: dict[str, Any], key: str, where: str) -> str | None:
    value = entry[key]
    if value is not None and not (isinstance(value, str) and _RELEASE.fullmatch(value)):
        raise ValueError(f"{where}: {key} must be a release YY.MM or null, not {value!r}")
    return value


def _exposure(value: object, where: str) -> Exposure | None:
    if value is None:
        return None
    features = value.get("features") if isinstance(value, dict) else None
    if (
        not isinstance(value, dict)
        or set(value) != {"features", "fails_load"}
        or not isinstance(value["fails_load"], bool)
        or not (isinstance(features, list) and features)
        or not all(isinstance(f, str) and _FEATURE.fullmatch(f) for f in features)
        or len(set(features)) != len(features)
    ):
        raise ValueError(
            f"{where}: exposure has features (distinct lower-case-dashed names) and fails_load (true/false)"
        )
    return Exposure(tuple(features), value["fails_load"])


def _issue(entry: object, where: str) -> KnownIssue:
    if not isinstance(entry, dict) or not set(_FIELDS) <= set(entry) <= {*_FIELDS, *_OPTIONAL}:
        raise ValueError(
            f"{where}: an entry has exactly the fields {', '.join(_FIELDS)} (and optionally "
            f"{', '.join(_OPTIONAL)})"
        )
    text = {k: entry[k] for k in ("id", "wording", "ends", "advice", "source", "note")}
    if not all(isinstance(v, str) and v.strip() for v in text.values()):
        raise ValueError(f"{where}: id, wording, ends, advice, source and note must be non-empty strings")
    runbooks = entry["runbooks"]
    if not (isinstance(runbooks, list) and runbooks) or not all(
        isinstance(r, str) and r in c.LOAD_FAILURE_RUNBOOKS for r in runbooks
    ):
        raise ValueError(f"{where}: runbooks must name findings' runbooks, not {runbooks!r}")
    try:
        wording = re.compile(entry["wording"])
    except re.error as err:
        raise ValueError(f"{where}: wording does not compile: {err}") from None
    first, last = _release(entry, "first", where), _release(entry, "last", where)
    ends = entry["ends"]
    if ends not in _ENDS_AT_A_RELEASE | _OPEN_ENDED:
        raise ValueError(f"{where}: ends must be one of {sorted(_ENDS_AT_A_RELEASE | _OPEN_ENDED)}")
    if (ends in _ENDS_AT_A_RELEASE) != (last is not None):
        raise ValueError(f"{where}: ends {ends!r} does not fit last {last!r}")
    if first is not None and last is not None and first > last:
        raise ValueError(f"{where}: first {first} is after last {last}")
    if not entry["source"].startswith("https://"):
        raise ValueError(f"{where}: source must be a public https address")
    advice = " ".join(entry["advice"].split())
    exposure = _exposure(entry.get("exposure"), where)
    return KnownIssue(
        entry["id"], tuple(runbooks), wording, first, last, ends, advice, entry["source"], exposure
    )


def parse_known_issues(text: str) -> tuple[KnownIssue, ...]:
    """``known_issues.yaml`` -> entries; ValueError names the first malformed one."""
    doc = yaml.safe_load(text)
    entries = doc.get("issues") if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        raise ValueError(f"{KNOWN_ISSUES_FILE}: no 'issues' list")
    issues = tuple(_issue(entry, f"{KNOWN_ISSUES_FILE}: entry {i}") for i, entry in enumerate(entries))
    ids = [issue.id for issue in issues]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{KNOWN_ISSUES_FILE}: duplicate ids {sorted({i for i in ids if ids.count(i) > 1})}")
    return issues


@functools.cache
def known_issues() -> tuple[KnownIssue, ...]:
    """The table shipped with the package."""
    text = resources.files("triton_sre.diagnosis").joinpath(KNOWN_ISSUES_FILE).read_text(encoding="utf-8")
    return parse_known_issues(text)


def notes(runbook: str, text: str, release: str) -> list[str]:
    """The advice, with its release and source, of every entry that explains a finding of ``runbook``
    whose evidence/message is ``text`` in ``release``."""
    return [
        f"{issue.advice} (Triton {release}; see {issue.source})"
        for issue in known_issues()
        if runbook in issue.runbooks and issue.covers(release) and issue.wording.search(text)
    ]
