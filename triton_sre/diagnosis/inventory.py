"""The load-failure message inventory (``inventory.yaml``, package data) -> validated entries.

Each entry is one wording Triton (core or a backend) uses to end a model load, read from the
sources across releases, with the runbook it means. `rules.py` turns every entry into a cause
rule, so the inventory is the one source of truth for Triton's own messages; `coverage.py`
renders it as ``docs/diagnosis-coverage.md`` (a test fails when that document is stale).

The file is package data read once at import (like a schema), not run-time input; its patterns are
compiled at their first search (`LazyPattern`), and the whole check of the packaged file (each pattern
compiles, each example matches) is the tests'.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

import yaml

from triton_sre import conventions as c

__all__ = [
    "COMPONENTS",
    "ENTRIES",
    "Competitor",
    "Entry",
    "InventoryError",
    "LazyPattern",
    "leading_part_runbook",
    "load_inventory",
    "parse_inventory",
    "tail_regex",
    "template_regex",
    "template_source",
]

COMPONENTS: Final = (
    "core",
    "backend",
    "python_backend",
    "onnxruntime_backend",
    "tensorrt_backend",
    "pytorch_backend",
    "tensorflow_backend",
    "tensorrtllm_backend",
    "vllm_backend",
    "fil_backend",
    "dali_backend",
    "openvino_backend",
    "paddle_backend",
    "pytriton",
    "checksum_repository_agent",
    "fastertransformer_backend",
    "hugectr_backend",
    "stateful_backend",
    "identity_backend",
    "repeat_backend",
)
_REQUIRED = ("id", "component", "source", "releases", "template", "example", "runbook")
_OPTIONAL = ("pattern", "decides", "competes")
_RELEASE = re.compile(r"^r\d\d\.\d\d$")
_PLACEHOLDER = re.compile(r"<[^<>]*>")
INVENTORY_FILE: Final = "inventory.yaml"
_LOADER: Final = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML was built with it (the same document, read in an eighth of the time:
0.2 s of every triage's start-up with the pure-Python one), else the pure-Python one."""


class InventoryError(ValueError):
    """The inventory file is malformed; the message names the entry and the field."""


class LazyPattern:
    """A regex compiled at its first search, not at import: a log's texts reach only some of the hundreds of
    rules (a pasted line the first ~100 of `rules.CAUSE_RULES`; past `frames.PLAIN_TEXTS` texts, the ones
    whose words `prefilter` finds), and compiling them all was 0.15 s of every triage's start-up.
    ``pattern`` and ``flags`` (those given, as `re.compile` took them) are read without compiling; anything
    else is the compiled pattern's. Equal to another of the same source and flags, as `re.Pattern` is."""

    __slots__ = ("_compiled", "flags", "pattern", "search")

    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None
        # `search` is the compiled pattern's own once compiled: no call in between on the hot path
        self.search: Callable[..., re.Match[str] | None] = self._first_search

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
            self.search = self._compiled.search
        return self._compiled

    def _first_search(self, *args: Any) -> re.Match[str] | None:
        return self.compiled().search(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.compiled(), name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LazyPattern) and (other.pattern, other.flags) == (self.pattern, self.flags)

    def __hash__(self) -> int:
        return hash((self.pattern, self.flags))

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self.flags!r})"


Pattern = re.Pattern[str] | LazyPattern


@dataclass(frozen=True, slots=True)
class Competitor:
    runbook: str
    when: Pattern
    example: str
    """The entry's message with the deciding evidence in it (tested like the entry's own example)."""


@dataclass(frozen=True, slots=True)
class Entry:
    id: str
    component: str
    source: str
    releases: tuple[str, str]
    template: str
    example: str
    runbook: str
    regex: Pattern
    decides: str = ""
    competes: tuple[Competitor, ...] = ()
    tail: Pattern | None = None
    """The message quoted from its model's name on (`tail_regex`); None where there is no such tail."""


def template_regex(template: str) -> re.Pattern[str]:
    """Literal text escaped, each ``<...>`` any text on the line; leading/trailing ones and a final
    full stop dropped."""
    return re.compile(template_source(template), re.I)


def template_source(template: str) -> str:
    """`template_regex`'s source (case-insensitive: compile it with ``re.I``)."""
    parts = _PLACEHOLDER.split(template)
    while parts and not parts[0].strip():
        parts.pop(0)
    while parts and not parts[-1].strip():
        parts.pop()
    if parts:
        # A message's closing full stop is often lost (quoted in a ticket, cut by a table cell), and so
        # are the blanks before an empty last value (``are: <ids>`` with no id ends ``are:`` on a line).
        parts[-1] = parts[-1].rstrip(".; ")
    if not parts:
        return ""
    # A template that starts with a value (``<name> in auto-complete-config function``) starts its regex at
    # the blank after it: that blank is a look-behind, since a blank run in front of the first word would be
    # scanned again from each of its characters (a line padded with 50,000 blanks took minutes).
    pattern = ""
    if parts[0][:1].isspace():
        pattern, parts[0] = r"(?<=\s)", parts[0].lstrip()
    for before, after in itertools.pairwise(parts):
        pattern += _literal(before)
        # A quoted value (a name, a path) stops at its closing quote: ``.*?`` there would rescan the rest of
        # the line from every opening quote, quadratic on a line that repeats the template's start.
        quote = before[-1:] if before[-1:] in ("'", '"') and after[:1] == before[-1:] else ""
        pattern += f"[^{quote}\\n]*" if quote else _VALUE
    return pattern + _literal(parts[-1])


# A value between two literals: any text on the line, up to a bound. Unbounded, a line repeating the
# literal before it (``ensemble `` 5,000 times) was scanned to its end from each repetition: quadratic,
# 10 s for a 45 KB line. The longest value between two literals in the corpus's matches is far under it.
_VALUE = ".{0,2000}?"

# (Each branch starts with its own character class, so a run of blanks is given back one blank at a time,
# never re-split between two quantifiers: linear in the run.)
_BLANK_OR_WRAP = r"[ \t]+(?:\n[ \t]*)?|\n[ \t]*"
"""A template's blank as written, or a line break where a person wrapped the message by hand (the next
line often indented: a list item, a code comment, a mail reply): ``Python model file not`` then
``  found in '...'``. A terminal's cut at a blank is joined by the parser before (`lineshape.looks_cut`)."""


_WRAP_GROUP = f"(?:{_BLANK_OR_WRAP})"


def _literal(text: str) -> str:
    return re.escape(text).replace("\\ ", _WRAP_GROUP)


_TOKENS = re.compile(r"(<[^<>]*>)")
_MIN_TAIL = 30


def tail_regex(template: str) -> re.Pattern[str] | None:
    """The template's clause after its last ``<model>``, preceded by a bare name: a message quoted from
    the model's name on (``peoplenet has kind KIND_GPU but no GPUs are available``, the leading
    ``instance group <g> of model`` dropped by the one quoting it), or after an ellipsis that stands for
    what was left out (``TRITONSERVER_ERROR_NOT_FOUND ... failed to poll from model repository``). Only a
    clause of at least ``_MIN_TAIL`` characters, so the tail alone still names one check."""
    tokens = _TOKENS.split(template)
    if len(tokens) < 3 or tokens[-2] != "<model>" or not tokens[0].strip():
        return None
    tail = tokens[-1].rstrip(".; ")
    clause = tail.lstrip("'\",:; ")
    if len(clause) < _MIN_TAIL or not clause[0].isalpha():
        return None
    elided = r"(?:\.\.\.|\u2026)\s*" + re.escape(clause)
    if re.match(r" [A-Za-z]", tail):
        return re.compile(r"(?:[\w.\-]" + re.escape(tail) + "|" + elided + ")", re.I)
    return re.compile(elided, re.I)


def _reach(template: str, text: str) -> int:
    """How far (characters into ``template``) ``text`` follows the template up to the text's end: the
    template's first literal found in ``text``, then its pieces in order, each ``<...>`` any text on
    the line; -1 when the text departs from the template before it ends."""
    tokens = _TOKENS.split(template)
    low = text.lower().rstrip()
    first = tokens[0].strip().lower()
    pos = low.find(first) if first else -1
    if pos < 0:
        return -1
    offset = 0
    for i, token in enumerate(tokens):
        lit = token.lower()
        if i % 2:  # a placeholder: any text up to the next literal piece
            following = tokens[i + 1].lower() if i + 1 < len(tokens) else ""
            if not following.strip():
                return len(template)
            found = low.find(following, pos)
            if found < 0:
                # Cut inside the value or inside the next piece's beginning (on the same line).
                if "\n" in low[pos:]:
                    return -1
                begun = next((k for k in range(len(following) - 1, 0, -1) if low.endswith(following[:k])), 0)
                return offset + len(token) + begun if begun else offset
            pos, offset = found, offset + len(token)
            continue
        if low.startswith(lit, pos):
            pos, offset = pos + len(lit), offset + len(lit)
            continue
        rest = low[pos:]
        return offset + len(rest) if rest and lit.startswith(rest) else -1
    return len(template)


def leading_part_runbook(text: str) -> str | None:
    """The runbook of the first entry of which a CUT message (a table row the terminal or the paste
    cut, `LogEvent.cut`) is a leading part: the text follows the template to its end and reaches
    past the template's first sentence (its distinctive clause: "instance group <g> of model <m>
    specifies invalid or unsupported gpu id <id>."); a template of one sentence must match whole."""
    for entry in ENTRIES:
        first_sentence = entry.template.find(". ")
        if first_sentence > 0 and _reach(entry.template, text) > first_sentence:
            return entry.runbook
    return None


def wrap_tolerant(regex: str) -> str:
    """``regex`` (a hand-written `pattern` or `when`) with each literal blank also matching a hand wrap
    (`_BLANK_OR_WRAP`), as a template's blanks do: a blank outside a character class and not quantified."""
    out: list[str] = []
    escaped = in_class = False
    for i, ch in enumerate(regex):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == " " and regex[i + 1 : i + 2] not in ("*", "+", "?", "{"):
            out.append(_WRAP_GROUP)
            continue
        out.append(ch)
    return "".join(out)


def as_written(pattern: Pattern) -> str:
    """A `wrap_tolerant` regex's source as the inventory writes it (for the coverage document)."""
    return pattern.pattern.replace(_WRAP_GROUP, " ")


def _compile(where: str, field: str, value: Any, checked: bool) -> Pattern:
    if not isinstance(value, str) or not value:
        raise InventoryError(f"{where}: {field}: must be a non-empty regex string")
    if not checked:
        return LazyPattern(wrap_tolerant(value), re.I)
    try:
        return re.compile(wrap_tolerant(value), re.I)
    except re.error as exc:
        raise InventoryError(f"{where}: {field}: not a valid regex: {exc}") from None


def _entry(raw: Any, index: int, checked: bool) -> Entry:
    where = f"entry {index}"
    if not isinstance(raw, dict):
        raise InventoryError(f"{where}: must be a mapping")
    where = f"entry {index} ({raw.get('id', '?')})"
    for key in _REQUIRED:
        if key not in raw:
            raise InventoryError(f"{where}: {key}: missing")
    unknown = sorted(set(raw) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        raise InventoryError(f"{where}: {unknown[0]}: unknown field")
    for key in ("id", "component", "source", "template", "example", "runbook"):
        if not isinstance(raw[key], str) or not raw[key].strip():
            raise InventoryError(f"{where}: {key}: must be a non-empty string")
    if raw["component"] not in COMPONENTS:
        raise InventoryError(
            f"{where}: component: {raw['component']!r} is not one of {', '.join(COMPONENTS)}"
        )
    if raw["runbook"] not in c.LOAD_FAILURE_RUNBOOKS:
        raise InventoryError(f"{where}: runbook: {raw['runbook']!r} is not a load-failure runbook id")
    releases = raw["releases"]
    if (
        not isinstance(releases, list)
        or len(releases) != 2
        or not all(isinstance(r, str) and _RELEASE.match(r) for r in releases)
        or releases[0] > releases[1]
    ):
        raise InventoryError(
            f"{where}: releases: must be [first, last] release branches like [r21.08, r26.06]"
        )
    if "pattern" in raw:
        regex = _compile(where, "pattern", raw["pattern"], checked)
    else:
        source = template_source(raw["template"])
        regex = re.compile(source, re.I) if checked else LazyPattern(source, re.I)
    if not regex.pattern:
        raise InventoryError(f"{where}: template: has no literal text to match")
    competes: list[Competitor] = []
    for n, comp in enumerate(raw.get("competes") or []):
        if not isinstance(comp, dict) or set(comp) != {"runbook", "when", "example"}:
            raise InventoryError(f"{where}: competes[{n}]: needs exactly 'runbook', 'when' and 'example'")
        if comp["runbook"] not in c.LOAD_FAILURE_RUNBOOKS or comp["runbook"] == raw["runbook"]:
            raise InventoryError(
                f"{where}: competes[{n}].runbook: {comp['runbook']!r} is not another runbook id"
            )
        when = _compile(where, f"competes[{n}].when", comp["when"], checked)
        example = comp["example"]
        if not isinstance(example, str):
            raise InventoryError(f"{where}: competes[{n}].example: must match both the template and 'when'")
        if checked and not (regex.search(example) and when.search(example)):
            raise InventoryError(f"{where}: competes[{n}].example: must match both the template and 'when'")
        if checked and when.search(raw["example"]):
            raise InventoryError(f"{where}: example: must not hold competes[{n}]'s evidence")
        competes.append(Competitor(comp["runbook"], when, example))
    if checked and not regex.search(raw["example"]):
        raise InventoryError(f"{where}: example: does not match the template")
    return Entry(
        id=raw["id"],
        component=raw["component"],
        source=raw["source"],
        releases=(releases[0], releases[1]),
        template=raw["template"],
        example=raw["example"],
        runbook=raw["runbook"],
        regex=regex,
        decides=str(raw.get("decides") or ""),
        competes=tuple(competes),
        tail=None if "pattern" in raw else tail_regex(raw["template"]),
    )


def parse_inventory(text: str, checked: bool = True) -> tuple[Entry, ...]:
    """Entries from the YAML text; raises `InventoryError` naming the entry and field. Not ``checked``: each
    pattern a `LazyPattern`, compiled at its first search, so neither compiled nor tried on the examples
    here (the packaged file's `ENTRIES`: tests/test_diagnosis_inventory.py checks it in full)."""
    try:
        doc = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        raise InventoryError(f"not valid YAML: {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema") != 1 or not isinstance(doc.get("entries"), list):
        raise InventoryError("expected a mapping with schema: 1 and an entries list")
    entries = tuple(_entry(raw, i, checked) for i, raw in enumerate(doc["entries"]))
    dup = [k for k, n in Counter(e.id for e in entries).items() if n > 1]
    if dup:
        raise InventoryError(f"entry {dup[0]}: id: used more than once")
    return entries


def load_inventory(checked: bool = True) -> tuple[Entry, ...]:
    """The packaged inventory (``checked``: see `parse_inventory`)."""
    text = resources.files("triton_sre.diagnosis").joinpath(INVENTORY_FILE).read_text(encoding="utf-8")
    return parse_inventory(text, checked)


ENTRIES: Final = load_inventory(checked=False)
