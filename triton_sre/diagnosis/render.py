"""Pure: a `Report` -> text (terminal), JSON-ready dict, or Markdown (tickets, Slack).

JSON shape (documented in docs/triage.md)::

    {"release": "YY.MM" | null, "server_version": "2.N" | null,
     "findings": [{"model", "version", "runbook", "title", "severity",
                   "evidence": [{"line": N, "text": "..."}], "remediation", "runbook_url",
                   "message", "release_advice"}],
     "unmatched": [{"template": "...", "count": N, "example": {"line": N, "text": "..."}}],
     "still_loading": ["model:version", ...],
     "truncated": {"compression": "gzip", "at_byte": N}}   # only for a compressed log cut short

``release`` is the NGC release the log names (banner or ``server_version`` row); a finding's
``release_advice`` is what is known about it in that release (with its public source), also the tail
of ``remediation``. Text and Markdown show both on their own line. ``still_loading`` names the loads the
log starts and shows no outcome for (it ends first): the answer for them is not in the log. ``truncated``
is there when the log was a compressed stream cut short: the findings are those of the part that decoded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from triton_sre import conventions as c
from triton_sre import mdtext
from triton_sre.diagnosis.catalog import runbook_url
from triton_sre.diagnosis.releases import server_version_of_release
from triton_sre.diagnosis.report import Finding, Report
from triton_sre.redact import printable

__all__ = ["json_chunks", "text_chunks", "to_json", "to_markdown", "to_text"]

MAX_TEXT_EVIDENCE = 4
MAX_SHOWN_CHARS = 240

_COLOURS = {c.IMPACT_CRITICAL: "\033[1;31m", c.IMPACT_WARNING: "\033[33m", c.IMPACT_INFO: "\033[36m"}
_RESET = "\033[0m"
_DIM = "\033[2m"


def _finding_dict(f: Finding, base_url: str | None) -> dict[str, Any]:
    return {
        "model": f.model,
        "version": f.version,
        "runbook": f.runbook,
        "title": f.title,
        "severity": f.severity,
        "evidence": [{"line": e.line, "text": e.text} for e in f.evidence],
        "remediation": f.remediation,
        "runbook_url": runbook_url(f.runbook, base_url),
        "message": f.message,
        "release_advice": f.release_advice,
    }


def _fix(f: Finding) -> str:
    """The one-line fix without the release advice appended to it (shown on its own line)."""
    note = f.release_advice
    if note and f.remediation.endswith(note):
        return f.remediation[: -len(note)].rstrip()
    return f.remediation


def _release_line(report: Report) -> str | None:
    if report.release is None:
        return None
    server = server_version_of_release(report.release)
    source = "reported by the server" if report.live else "read from the log"
    return f"Triton release {source}: {report.release}" + (f" (server {server})" if server else "")


def _json_head(report: Report) -> dict[str, Any]:
    return {
        "release": report.release,
        "server_version": server_version_of_release(report.release) if report.release else None,
    }


def _json_tail(report: Report) -> dict[str, Any]:
    return {
        "unmatched": [
            {
                "template": u.template,
                "count": u.count,
                "example": {"line": u.example.line, "text": u.example.text},
            }
            for u in report.unmatched
        ],
        "still_loading": list(report.still_loading),
        **(
            {"truncated": {"compression": report.cut_short.compression, "at_byte": report.cut_short.at_byte}}
            if report.cut_short
            else {}
        ),
    }


def to_json(report: Report, base_url: str | None = None) -> dict[str, Any]:
    findings = [_finding_dict(f, base_url) for f in report.findings]
    return {**_json_head(report), "findings": findings, **_json_tail(report)}


def json_chunks(report: Report, base_url: str | None = None) -> Iterator[str]:
    """`json.dumps(to_json(report, base_url), indent=2)` in pieces, one per finding, rendered as they are
    taken: the same text without every finding's dict held at once. A nested value is indented by
    prefixing its lines (json.dumps writes a newline inside a string as its escape)."""

    def nested(value: Any, depth: int) -> str:
        return json.dumps(value, indent=2).replace("\n", "\n" + " " * depth)

    yield json.dumps(_json_head(report), indent=2)[:-2] + ',\n  "findings": ['
    for i, f in enumerate(report.findings):
        yield ("," if i else "") + "\n    " + nested(_finding_dict(f, base_url), 4)
    yield (
        ("\n  ]" if report.findings else "]")
        + "".join(f",\n  {json.dumps(key)}: {nested(value, 2)}" for key, value in _json_tail(report).items())
        + "\n}"
    )


def _loading_line(report: Report) -> str | None:
    """What the log leaves open: loads it starts and never shows the outcome of."""
    if not report.still_loading:
        return None
    shown = ", ".join(report.still_loading[:10]) + (" …" if len(report.still_loading) > 10 else "")
    n = len(report.still_loading)
    return (
        f"The log ends while {n} model load{'s' if n > 1 else ''} had no outcome yet ({shown}): what "
        "happened to them is after the end of this log; include the lines up to the model status table."
    )


_TRAILING_URL = re.compile(r"\s(https?://\S+)$")


def _short(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    """One line of a log for text and Markdown output: a control character (a terminal title sequence, a
    bell, a carriage return) as its escape, never sent to the terminal. A line that ends with a link and
    is too long is cut before the link, which stays whole (a cut link leads nowhere: lint's known-issue
    evidence ends with its source)."""
    text = printable(text.replace("\n", "\\n"))
    if len(text) <= limit:
        return text
    url = _TRAILING_URL.search(text)
    if url and len(url.group(1)) <= limit // 2:
        return text[: limit - len(url.group(1)) - 2] + "… " + url.group(1)
    return text[: limit - 1] + "…"


def _subject(f: Finding) -> str:
    if f.model is None:
        return "(server)"
    return printable(f"{f.model} v{f.version}" if f.version else f.model)


def to_text(report: Report, base_url: str | None = None, *, colour: bool = False) -> str:
    return "".join(text_chunks(report, base_url, colour=colour))


def text_chunks(report: Report, base_url: str | None = None, *, colour: bool = False) -> Iterator[str]:
    """`to_text` in pieces, rendered as they are taken: the release line (or "No load failure found."), one
    piece per finding, then the footer; every piece ends with a newline. A writer holds one at a time."""

    def paint(code: str, text: str) -> str:
        return f"{code}{text}{_RESET}" if colour else text

    head: list[str] = []
    release = _release_line(report)
    if release:
        head.append(paint(_DIM, release))
    if not report.findings:
        head.append("No load failure found.")
    if head:
        yield _joined(head)
    for n, f in enumerate(report.findings, 1):
        yield _joined(_finding_lines(n, f, report.release, base_url, paint))
    tail: list[str] = []
    loading = _loading_line(report)
    if loading:
        tail.extend(([""] if report.findings else []) + [paint(_COLOURS[c.IMPACT_INFO], loading)])
    if report.unmatched:
        tail.append("")
        tail.append(f"Error lines no runbook explains ({sum(u.count for u in report.unmatched)}):")
        for u in report.unmatched[:20]:
            tail.append(f"  {u.count:>6} × {_short(u.template, 160)}  (e.g. line {u.example.line})")
    if report.harmless_lines:
        tail.append("")
        tail.append(
            paint(
                _DIM,
                f"{report.harmless_lines} line(s) known to be harmless on a CPU host were ignored "
                "(CudaDriverHelper, NVML, DCGM, pinned memory, ensemble CUDA streams, "
                "an unmade CUDA pool at exit).",
            )
        )
    if report.serving_lines:
        tail.append("")
        tail.append(
            paint(
                _DIM,
                f"{report.serving_lines} error line(s) Triton writes while it serves or stops (a request's "
                "bookkeeping, a cancel, an unload, the shutdown) were not read as failures.",
            )
        )
    if tail:
        yield _joined(tail)


def _joined(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


def _finding_lines(
    n: int, f: Finding, release: str | None, base_url: str | None, paint: Callable[[str, str], str]
) -> list[str]:
    """The text lines of the n-th finding."""
    sev = paint(_COLOURS.get(f.severity, ""), f.severity.upper())
    out = [f"{n}. {sev} {_subject(f)}: {f.runbook} — {f.title}"]
    for e in f.evidence[:MAX_TEXT_EVIDENCE]:
        out.append(paint(_DIM, f"   line {e.line}: {_short(e.text)}"))
    if len(f.evidence) > MAX_TEXT_EVIDENCE:
        out.append(paint(_DIM, f"   … {len(f.evidence) - MAX_TEXT_EVIDENCE} more evidence lines"))
    if f.runbook == c.RUNBOOK_UNKNOWN_LOAD_FAILURE and f.message:
        out.append(f"   message: {_short(f.message)}")
    out.append(f"   fix: {_fix(f)}")
    if f.release_advice:
        out.append(f"   in {release}: {f.release_advice}")
    out.append(f"   runbook: {runbook_url(f.runbook, base_url)}")
    return out


def to_markdown(report: Report, base_url: str | None = None) -> str:
    out: list[str] = ["### Triton triage", ""]
    release = _release_line(report)
    if release:
        out.extend([f"{release}.", ""])
    if not report.findings:
        out.append("No load failure found.")
    else:
        out.append("| # | severity | model | runbook | fix |")
        out.append("| --- | --- | --- | --- | --- |")
        for n, f in enumerate(report.findings, 1):
            link = f"[{f.runbook}]({runbook_url(f.runbook, base_url)})"
            out.append(
                f"| {n} | {f.severity} | {mdtext.text(_subject(f))} | {link} | {mdtext.text(_fix(f))} |"
            )
        for n, f in enumerate(report.findings, 1):
            out.append("")
            out.append(f"**{n}. {mdtext.text(_subject(f))} — {f.title}**")
            out.append("")
            if f.release_advice:
                out.extend([f"> In {report.release}: {f.release_advice}", ""])
            block = [f"{e.line}: {_short(e.text, 400)}" for e in f.evidence[:6]]
            marks = mdtext.fence(block)
            out.extend([marks, *block, marks])
    loading = _loading_line(report)
    if loading:
        out.extend(["", mdtext.text(loading)])
    if report.unmatched:
        out.append("")
        out.append("<details><summary>Error lines no runbook explains</summary>")
        out.append("")
        out.extend(
            f"- {u.count} × {mdtext.code(_short(u.template, 200))} (line {u.example.line})"
            for u in report.unmatched[:30]
        )
        out.append("")
        out.append("</details>")
    return "\n".join(out) + "\n"
