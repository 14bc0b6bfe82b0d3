"""triage writes its findings as they are rendered: the same text and JSON as the whole renderings, with
a finding written before the next one is rendered (50,000 findings are never held as one text)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis import render
from triton_sre.diagnosis.api import diagnose_log
from triton_sre.diagnosis.catalog import load_catalog
from triton_sre.diagnosis.command import write_report
from triton_sre.diagnosis.report import Evidence, Finding, Report, Unmatched

LOGS = Path(__file__).parent / "data" / "logs"
# Varied corpus logs: a release, harmless lines and 22 findings; error lines no runbook explains; loads
# left without an outcome beside findings and without; release-aware advice.
VARIED = (
    "real/default-exit-false.log",
    "heldout43/kfserving-templates-triton-mnt-models-0001-no-config.log",
    "heldout20/paddleocr-9427.log",
    "heldout18/fil-backend-368.log",
    "heldout38/server-2225-driver-440-container-450.log",
)
BASE_URL = "https://runbooks.example/"


class Writer(io.StringIO):
    """stdout as triage sees it: each write recorded, a terminal or not."""

    def __init__(self, tty: bool = False) -> None:
        super().__init__()
        self.tty = tty
        self.writes: list[str] = []

    def isatty(self) -> bool:
        return self.tty

    def write(self, s: str) -> int:
        self.writes.append(s)
        return super().write(s)


def _report(name: str) -> Report:
    catalog = load_catalog(None)
    return diagnose_log(str(LOGS / name), catalog.titles, catalog.remediations)


def _odd_report(findings: int) -> Report:
    """Findings whose texts hold what JSON escapes (newlines, quotes, non-ASCII, a line separator)."""
    ev = (Evidence(7, 'a\nb "q" \\ ü \u2028 \x07 end'),)
    return Report(
        tuple(
            Finding(
                f"m\n{i}",
                "1",
                c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
                "t",
                c.IMPACT_CRITICAL,
                ev,
                "fix\nit",
                None,
                "x",
            )
            for i in range(findings)
        ),
        (Unmatched("tmpl\n<*>", 3, Evidence(9, "e")),) if findings else (),
        still_loading=("a:1",) if findings else (),
    )


@pytest.mark.parametrize("name", VARIED)
@pytest.mark.parametrize("tty", [False, True])
def test_text_written_is_the_whole_rendering(name: str, tty: bool) -> None:
    report = _report(name)
    out = Writer(tty)
    write_report(report, "text", out, BASE_URL)
    assert out.getvalue() == render.to_text(report, BASE_URL, colour=tty)
    assert ("\033[" in out.getvalue()) == tty  # colour only on a terminal (each log has a painted line)
    # one write per finding, between the head and the tail, each ending its lines
    assert all(w.endswith("\n") for w in out.writes)
    shown = [w for w in out.writes if w.split(" ", 1)[0].rstrip(".").isdigit()]
    assert [w.split(".", 1)[0] for w in shown] == [str(n) for n in range(1, len(report.findings) + 1)]


@pytest.mark.parametrize("name", VARIED)
def test_json_written_is_json_dumps_of_the_whole_dict(name: str) -> None:
    report = _report(name)
    out = Writer()
    write_report(report, "json", out, BASE_URL)
    assert out.getvalue() == json.dumps(render.to_json(report, BASE_URL), indent=2) + "\n"


@pytest.mark.parametrize("findings", [0, 1, 3])
def test_json_pieces_escape_as_json_dumps_does(findings: int) -> None:
    report = _odd_report(findings)
    out = Writer()
    write_report(report, "json", out)
    assert out.getvalue() == json.dumps(render.to_json(report), indent=2) + "\n"
    assert json.loads(out.getvalue())["findings"] == render.to_json(report)["findings"]


def _counting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """Count the calls of render's per-finding function `name`."""
    calls = [0]
    real = getattr(render, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(render, name, counted)
    return calls


@pytest.mark.parametrize(("fmt", "per_finding"), [("text", "_finding_lines"), ("json", "_finding_dict")])
def test_a_finding_is_written_before_the_next_is_rendered(
    monkeypatch: pytest.MonkeyPatch, fmt: str, per_finding: str
) -> None:
    report = _odd_report(5)
    calls = _counting(monkeypatch, per_finding)
    rendered_at_write: list[int] = []

    class Recording(Writer):
        def write(self, s: str) -> int:
            rendered_at_write.append(calls[0])
            return super().write(s)

    write_report(report, fmt, Recording())
    assert calls[0] == 5
    # the writes that carry a finding came when only that many findings had been rendered
    assert [n for n in rendered_at_write if n][:5] == [1, 2, 3, 4, 5]


def test_a_reader_gone_stops_the_rendering(monkeypatch: pytest.MonkeyPatch) -> None:
    report = _odd_report(50)
    calls = _counting(monkeypatch, "_finding_lines")

    class Closed(Writer):
        def write(self, s: str) -> int:
            if len(self.writes) == 2:
                raise BrokenPipeError
            return super().write(s)

    with pytest.raises(BrokenPipeError):
        write_report(report, "text", Closed())
    assert calls[0] == 3  # the third was rendered, its write failed; the other 47 never are
