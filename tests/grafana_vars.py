"""Grafana's interpolation of dashboard variables in a Prometheus query, for tests.

`interpolate` does what Grafana does with a selection: the `json` format is `JSON.stringify` of
several values but a single string value as it is, unquoted (@grafana/scenes' formatRegistry, which
core Grafana's templating uses: `if (typeof value === 'string') return value;`), the `regex` format
is `kbn.regexEscape` of each value (several joined as `(a|b)`), a custom All value is written as it
is (never formatted), and a plain `$name` gets the Prometheus data source's own escaping
(`prometheusRegularEscape` for a single-valued variable, `prometheusSpecialRegexEscape` for a
multi-value one; Grafana 10-11, `public/app/plugins/datasource/prometheus/datasource.ts`, classic behaviour).

`fill` is for the live tests, which give the text a query should read: a regex for a regex variable
(`.*`, `a|b`), a value for the others; it is put in as the variable's format would carry it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence

VARIABLE = re.compile(r"\$\{(?P<braced>\w+)(?::(?P<format>\w+))?\}|\$(?P<plain>\w+)")
ALL = "$__all"  # the selection "All": the variable's allValue, written as it is
ALL_VALUE = ".*"  # the generated dashboards' allValue (generate/panels.py, query_var)


def regex_escape(value: str) -> str:
    """kbn.regexEscape: `value.replace(/[\\\\^$*+?.()|[\\]{}\\/]/g, '\\\\$&')`."""
    return re.sub(r"[\\^$*+?.()|\[\]{}/]", lambda m: "\\" + m.group(0), value)


def _regular_escape(value: str) -> str:  # prometheusRegularEscape
    return value.replace("\\", "\\\\").replace("'", "\\\\'")


def _special_regex_escape(value: str) -> str:  # prometheusSpecialRegexEscape
    return re.sub(r"[$^*{}\[\]'+?.()|]", lambda m: "\\\\" + m.group(0), value.replace("\\", "\\\\\\\\"))


def _format(value: str | Sequence[str], fmt: str | None, multi: bool) -> str:
    if value == ALL:
        return ALL_VALUE
    values = [value] if isinstance(value, str) else list(value)
    if fmt == "json":
        return value if isinstance(value, str) else json.dumps(values, ensure_ascii=False)
    if fmt == "raw":
        return ",".join(values)
    if fmt == "regex":
        escaped = [regex_escape(v) for v in values]
    elif fmt is None and multi:
        escaped = [_special_regex_escape(v) for v in values]
    elif fmt is None:
        return _regular_escape(values[0])
    else:
        raise ValueError(f"format {fmt} is not emulated")
    return escaped[0] if len(escaped) == 1 else "(" + "|".join(escaped) + ")"


def interpolate(expr: str, selection: Mapping[str, str | Sequence[str]], multi: Collection[str] = ()) -> str:
    """`expr` as Grafana sends it with `selection` (variable -> value, values, or ALL); `multi` names
    the multi-value variables. A variable not in `selection` is left as it is."""

    def one(m: re.Match[str]) -> str:
        name = m.group("braced") or m.group("plain")
        if name not in selection:
            return m.group(0)
        return _format(selection[name], m.group("format"), name in multi)

    return VARIABLE.sub(one, expr)


def fill(expr: str, texts: Mapping[str, str]) -> str:
    """`expr` with each variable (keys with or without `$`) replaced by the text given, carried as its
    format would: a JSON string for `json`, as it is for `regex` (the text is the regex) or no format."""
    plain = {name.removeprefix("$"): text for name, text in texts.items()}

    def one(m: re.Match[str]) -> str:
        name = m.group("braced") or m.group("plain")
        if name not in plain:
            return m.group(0)
        return json.dumps(plain[name], ensure_ascii=False) if m.group("format") == "json" else plain[name]

    return VARIABLE.sub(one, expr)
