"""Block YAML text written directly for the plain documents `generate` renders: the same bytes
as PyYAML's safe dumper with libyaml's emitter (rulefile.render_yaml: block style, width 1000,
unicode, strings with a line break as `|` literals), without building its node graph. PyYAML
took most of `generate`'s time on large specs (issue 28 item 7).

Only what this module is sure to write as libyaml does is written here: dicts with plain string
keys, lists (not directly in a list), ints, floats, bools, None, and strings of printable ASCII:
one line (plain when libyaml's analysis allows it and it reads back as a string, single-quoted
otherwise; folded past the width as libyaml folds) or a literal block without indentation or keep
(`+`) hints. Anything else raises `Slow`, and the caller renders the whole document with PyYAML.
tests/test_generate_yaml_text.py compares both on random documents.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from typing import Any

import yaml

WIDTH = 1000  # render_yaml's width: libyaml folds a plain or quoted line past it
_JOINED_DEPTH = 2  # the items of lists indented this much or less are joined as they are written
_PRINTABLE = re.compile(r"[ -~]*\Z")  # printable ASCII: what needs no escape in any style
_PRINTABLE_LINES = re.compile(r"[ -~\n]*\Z")
_FIRST_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")
_RESOLVER = yaml.resolver.Resolver()
_STR_TAG = "tag:yaml.org,2002:str"
_FLOAT_TAG = "tag:yaml.org,2002:float"
# the first characters an implicit resolver (bool, int, float, null...) looks at
_RESOLVED_FIRST = frozenset(yaml.resolver.Resolver.yaml_implicit_resolvers)


class Slow(ValueError):
    """A value this module leaves to PyYAML."""


def block_yaml(document: Any) -> str:
    """`document` (a non-empty dict or list) as libyaml writes it in block style."""
    out: list[str] = []
    if type(document) is dict and document:
        _mapping(document, 0, out, inline=False)
    elif type(document) is list and document:
        _sequence(document, 0, out)
    else:
        raise Slow("a root scalar or empty collection")
    return "".join(out)


END = "...\n"  # libyaml's document end marker: at the end, when the last block scalar was a `|+` one
_KEEP_KEY = "\x00"  # a key no document has (not printable): its `|+` value goes first
_LITERALS = [0]  # block scalars written so far by _literal


class Pieces:
    """A document (a non-empty dict) in block style, in pieces: each item of a list near the top (a
    rule group, a promtool test group) as soon as it is written, so that a caller writing the pieces
    out never holds the whole text. A piece this module leaves to PyYAML is `dump` (PyYAML on a whole
    document) of that piece alone, wrapped in its parent keys, which are then cut off: the bytes
    PyYAML writes for it inside the whole document. Only the document end marker such a piece may
    end with is held back, for `end()`."""

    def __init__(self, dump: Callable[[Any], str]) -> None:
        self.dump = dump
        self.open_ended = False  # a piece PyYAML ended with END: the document ends with it

    def mapping(self, mapping: dict[Any, Any], path: tuple[Any, ...] = ()) -> Iterator[str]:
        if not path and (type(mapping) is not dict or not mapping):
            raise Slow("a root that is not a non-empty mapping")
        indent = 2 * len(path)
        for key, value in mapping.items():
            kind = type(value)
            if kind is dict and value and indent + 2 <= _JOINED_DEPTH:
                yield self.key(path, key)
                yield from self.mapping(value, (*path, key))
            elif kind is list and value and indent <= _JOINED_DEPTH:
                yield self.key(path, key)
                for item in value:
                    yield self.piece((*path, key), [item])
            else:
                yield self.piece(path, {key: value})

    def key(self, path: tuple[Any, ...], key: Any) -> str:
        """The line of `key` alone, its value (a non-empty dict or list) to follow."""
        return self.piece(path, {key: []}).replace(" []\n", "\n", 1)

    def piece(self, path: tuple[Any, ...], value: Any) -> str:
        """`value` (a one-key mapping, or a one-item list: the item of the list under path[-1]) as
        it is written under `path` in the whole document."""
        out: list[str] = []
        literals = _LITERALS[0]
        try:
            if type(value) is list:  # a list is not indented in its mapping: at path[-1]'s column
                _sequence(value, 2 * (len(path) - 1), out)
            else:
                _mapping(value, 2 * len(path), out, inline=False)
        except Slow:
            return self._dumped(path, value)
        if _LITERALS[0] != literals:  # libyaml resets the marker at each block scalar
            self.open_ended = False
        return "".join(out)

    def _dumped(self, path: tuple[Any, ...], value: Any) -> str:
        for key in reversed(path):
            value = {key: value}
        text = self.dump(value).split("\n", len(path))[len(path)]
        if text.endswith("\n" + END):  # the marker's own line, not a scalar ending with dots
            self.open_ended = True  # the piece's last block scalar is a `|+`
            return text[: -len(END)]
        if self.open_ended:  # still, unless the piece has a block scalar: dumped after a `|+`, is it?
            self.open_ended = self.dump({_KEEP_KEY: "\n", **value}).endswith("\n" + END)
        return text

    def end(self) -> str:
        return END if self.open_ended else ""


def _mapping(mapping: dict[Any, Any], indent: int, out: list[str], inline: bool) -> None:
    """Keys at column `indent`; `inline`: the first key follows a sequence's `- `."""
    pad = " " * indent
    for key, value in mapping.items():
        if inline:
            inline = False
        else:
            out.append(pad)
        head = _key(key)
        kind = type(value)
        if kind is dict:
            if value:
                out.append(head + ":\n")
                _mapping(value, indent + 2, out, inline=False)
            else:
                out.append(head + ": {}\n")
        elif kind is list:
            if value:
                out.append(head + ":\n")
                _sequence(value, indent, out)  # in a mapping, a sequence is not indented
            else:
                out.append(head + ": []\n")
        else:
            out.append(f"{head}: {_scalar(value, indent + 2, indent + len(head) + 2)}\n")


def _sequence(sequence: list[Any], indent: int, out: list[str]) -> None:
    pad = " " * indent
    for value in sequence:
        kind = type(value)
        if kind is dict and value and indent <= _JOINED_DEPTH:
            # an item of a list near the top (a rule group, a promtool test group, also under the
            # PrometheusRule's `spec:`) is joined into one string at once: the millions of small
            # pieces of a 10,000-SLO document, held until the end, took more memory than its text
            item = [pad + "- "]
            _mapping(value, indent + 2, item, inline=True)
            out.append("".join(item))
        elif kind is dict and value:
            out.append(pad + "- ")
            _mapping(value, indent + 2, out, inline=True)
        elif kind is list or kind is dict:
            if value:
                raise Slow("a list in a list")
            out.append(pad + ("- []\n" if kind is list else "- {}\n"))
        else:
            out.append(f"{pad}- {_scalar(value, indent + 2, indent + 2)}\n")


@functools.lru_cache(maxsize=4096)  # a few keys, written over and over
def _key(key: Any) -> str:
    if type(key) is not str or not 0 < len(key) <= 100 or not _PRINTABLE.match(key) or not _plain(key):
        raise Slow(f"key {key!r}")
    return key


def _scalar(value: Any, indent: int, column: int) -> str:
    """A scalar starting at `column`; `indent`: the column of its continuation lines."""
    kind = type(value)
    if kind is str:
        if "\n" in value:
            return _literal(value, indent)
        if not _PRINTABLE.match(value):
            raise Slow(f"string {value[:40]!r}...")
        if _plain(value):
            return _folded(value, column, indent, quoted=False)
        return "'" + _folded(value, column + 1, indent, quoted=True) + "'"
    if kind is int:
        return str(value)
    if kind is bool:
        return "true" if value else "false"
    if value is None:
        return "null"
    if kind is float:  # as PyYAML's representer writes a float, when it reads back as one
        text = repr(value).lower()
        if "." not in text and "e" in text:
            text = text.replace("e", ".0e", 1)
        if _RESOLVER.resolve(yaml.ScalarNode, text, (True, False)) == _FLOAT_TAG:
            return text
    raise Slow(f"a {kind.__name__}: {value!r}")


def _folded(text: str, column: int, indent: int, quoted: bool) -> str:
    """`text` (one line) as libyaml writes it from `column`: past WIDTH, a single space between
    two words becomes a line break and `indent` spaces (in quotes: not the first or last char)."""
    if column + 2 * len(text) <= WIDTH:  # no space can sit past WIDTH, even with quotes doubled
        return text.replace("'", "''") if quoted else text
    out: list[str] = []
    spaces = False
    last = len(text) - 1
    for i, char in enumerate(text):
        if char == " ":
            fold = not spaces and column > WIDTH and text[i + 1 : i + 2] != " "
            if fold and (not quoted or 0 < i < last):
                out.append("\n" + " " * indent)
                column = indent
            else:
                out.append(char)
                column += 1
            spaces = True
        else:
            doubled = quoted and char == "'"
            out.append("''" if doubled else char)
            column += 2 if doubled else 1
            spaces = False
    return "".join(out)


_CACHED = 100  # the longest text whose answers are cached: label values, durations, names repeat;
# an expression or annotation rarely does, and 65,536 of them held ~30 MB at thousands of SLOs


def _plain(text: str) -> bool:
    """Whether libyaml writes `text` (printable ASCII, one line) plain in block context: no
    indicator where it would start a YAML token, no edge space, and it reads back as a string."""
    return _plain_cached(text) if len(text) <= _CACHED else _is_plain(text)


def _is_plain(text: str) -> bool:
    if not text or text[0] == " " or text[-1] == " " or text.startswith(("---", "...")):
        return False
    first = text[0]
    if first in _FIRST_INDICATORS or (first in "?:-" and text[1:2] in ("", " ")):
        return False
    if ": " in text or text.endswith(":") or " #" in text:
        return False
    return first not in _RESOLVED_FIRST or _resolves_to_str(text)


_plain_cached = functools.lru_cache(maxsize=65536)(_is_plain)


def _resolves_to_str(text: str) -> bool:
    return bool(_RESOLVER.resolve(yaml.ScalarNode, text, (True, False)) == _STR_TAG)


def _literal(text: str, indent: int) -> str:
    """A `|` block (clip, or `-` strip when there is no final line break), lines at `indent`."""
    if not _PRINTABLE_LINES.match(text) or text[0] in " \n" or text[-1] == " " or " \n" in text:
        raise Slow("a literal needing an indentation hint, or quotes")
    _LITERALS[0] += 1
    if text.endswith("\n"):
        if text.endswith("\n\n"):
            raise Slow("a literal needing the keep hint")
        header, text = "|", text[:-1]
    else:
        header = "|-"
    pad = " " * indent
    return header + "".join(f"\n{pad}{line}" if line else "\n" for line in text.split("\n"))
