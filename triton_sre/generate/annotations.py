"""Pure: an alert's annotation templates rendered as Prometheus renders them for the promtool tests'
expected annotations (``{{ $labels.x }}``, ``{{ $value | printf "%.2f" }}``, ``humanizePercentage``)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from triton_sre.promql import q

_TEMPLATE = re.compile(r"\{\{\s*(\$labels\.(\w+)|\$value \| printf \"(%\.\df)\")\s*\}\}")


def render(template: str, labels: Mapping[str, str], value: float) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(2):
            return labels[m.group(2)]
        return m.group(3) % value

    # the template's own braces, not the values': a label value may hold `{{` (a container named so),
    # which Prometheus prints as it is and never expands
    if "{{" in _TEMPLATE.sub("", template):
        raise ValueError(f"cannot render template {template!r}")
    return _TEMPLATE.sub(sub, template)


def plain_labels(labels: Mapping[str, str]) -> str:
    return "{" + ", ".join(f"{k}={q(v)}" for k, v in sorted(labels.items())) + "}"


_ANY_VALUE = re.compile(r"\{\{\s*\$value \| (humanizePercentage|printf \"(%\.\df)\")\s*\}\}")


def render_any(template: str, labels: Mapping[str, str], value: float) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(1) == "humanizePercentage":
            return f"{value * 100:.4g}%"
        return m.group(2) % value

    return render(_ANY_VALUE.sub(sub, template), labels, value)
