"""What README.md and docs/*.md state about the commands is what the commands do: exit codes, the
alerts each page tables, the flags each command's page names (docs34's reading of the docs as a user,
bench/RESULTS.md). test_docs_links.py checks the pages' links; this file checks their statements."""

from __future__ import annotations

import argparse
import re
import signal
from pathlib import Path

import yaml

from triton_sre import conventions as c
from triton_sre.cli import build_parser
from triton_sre.gameday import scorecard
from triton_sre.gameday.scenarios import builtin

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def codes_after(text: str, anchor: str) -> set[int]:
    """The exit codes a page gives right after `anchor`: the numbers in the parenthesis that follows it
    (nested code spans and semicolons included), or none when no parenthesis follows."""
    at = text.index(anchor) + len(anchor)
    rest = text[at:].lstrip()
    if not rest.startswith("("):
        return set()
    depth = 0
    for end, char in enumerate(rest):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return {int(n) for n in re.findall(r"(?<![\w.-])(\d+)(?![\w.])", rest[1:end])}
    raise AssertionError(f"no closing parenthesis after {anchor!r}")


def test_an_interrupted_gameday_exits_as_the_pages_say() -> None:
    """README said `gameday` exits 1 on Ctrl-C; it exits 128 + the signal, as docs/gamedays.md says."""
    codes = {
        scorecard.exit_code([], {"interrupted": True, "signal": sig}, expected=1)
        for sig in (signal.SIGINT, signal.SIGTERM)
    }
    assert codes == {130, 143}
    readme = README.read_text(encoding="utf-8")
    assert codes_after(readme, "130 interrupted by Ctrl-C") <= codes
    gamedays = (DOCS / "gamedays.md").read_text(encoding="utf-8")
    assert codes_after(gamedays, "130 interrupted by Ctrl-C") <= codes


def test_codes_after_reads_the_parenthesis() -> None:
    text = "2 usage, 130 interrupted by Ctrl-C (`gameday`: 1 and the scorecard (of 2.51) ran), 141 closed"
    assert codes_after(text, "130 interrupted by Ctrl-C") == {1}
    assert codes_after("130 interrupted by Ctrl-C, 141", "130 interrupted by Ctrl-C") == set()


# -- the alerts docs/slos-and-alerts.md tables ----------------------------------------------------------
TABLED_RULE_FILES = ("triton-alerts.yaml", "triton-capacity-alerts.yaml", "triton-llm-rules.yaml")
_ALERT_ROW = re.compile(r"^\| `(Triton\w+)`[^|]*\| (\w+) \|", re.M)


def test_every_operational_alert_has_its_row_and_severity() -> None:
    """The operational, capacity and LLM alerts of alerts/ each have a row of docs/slos-and-alerts.md with
    the severity the rule gives (TritonSREInputMissing had none)."""
    generated = {}
    for name in TABLED_RULE_FILES:
        for group in yaml.safe_load((ROOT / "alerts" / name).read_text(encoding="utf-8"))["groups"]:
            generated |= {r["alert"]: r["labels"]["severity"] for r in group["rules"] if "alert" in r}
    rows = dict(_ALERT_ROW.findall((DOCS / "slos-and-alerts.md").read_text(encoding="utf-8")))
    assert {a: rows.get(a) for a in generated} == generated


# -- exit codes in --help -----------------------------------------------------------------------------
def leaf_parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command words, parser) of every command a user runs: `stack up`, `rollout check`, `doctor`..."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
    for action in subs:
        for name, sub in action.choices.items():
            yield from leaf_parsers(sub, (*path, name))


def test_every_help_names_the_interrupt_and_broken_pipe_codes() -> None:
    """README: every command has 130 (Ctrl-C) and 141 (stdout closed); doctor's --help left both out."""
    leaves = dict(leaf_parsers(build_parser()))
    assert len(leaves) == 13, sorted(leaves)
    missing = [
        (" ".join(path), code)
        for path, parser in leaves.items()
        for code in (c.EXIT_INTERRUPTED, c.EXIT_BROKEN_PIPE)
        if not re.search(rf"\b{code} (interrupted|stdout closed)", parser.epilog or "")
    ]
    assert missing == []


# -- every flag on its command's page ---------------------------------------------------------------------
PAGE_OF = {
    "export": "exporter.md",
    "demo": "deploy.md",
    "generate": "slos-and-alerts.md",
    "triage": "triage.md",
    "bot": "bot.md",
    "lint": "lint.md",
    "report": "report.md",
    "rollout check": "rollouts.md",
    "stack up": "deploy.md",
    "stack status": "deploy.md",
    "stack down": "deploy.md",
    "doctor": "doctor.md",
    "gameday": "gamedays.md",
}


def test_every_flag_is_named_on_its_commands_page() -> None:
    """A flag `--help` lists and its command's page never names is a flag nobody reads about: lint's
    --load-seconds, --runbooks and --runbook-base-url, rollout check's --job, doctor's --timeout and
    demo's --report-every were."""
    leaves = {" ".join(path): parser for path, parser in leaf_parsers(build_parser())}
    assert sorted(leaves) == sorted(PAGE_OF)
    unnamed = []
    for command, parser in leaves.items():
        text = (DOCS / PAGE_OF[command]).read_text(encoding="utf-8")
        for action in parser._actions:
            names = [o for o in action.option_strings if o.startswith("--") and o != "--help"]
            if names and not any(re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", text) for n in names):
                unnamed.append(f"{command} {names[0]}")
    assert unnamed == [], unnamed


# -- docs/gamedays.md's scenario table ----------------------------------------------------------------
def test_the_scenario_table_is_every_builtin_scenario_with_its_alert_and_runbook() -> None:
    text = (DOCS / "gamedays.md").read_text(encoding="utf-8")
    table = text.split("## The scenarios", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0] not in ("name", "---"):
            rows[cells[0]] = (cells[2].split(" ")[0].rstrip(","), cells[3])
    assert rows == {s.name: (s.expect.alert, s.expect.runbook) for s in builtin()}


def test_the_options_before_the_command_are_named_in_the_readme() -> None:
    """`--log-level` (and `$TRITON_SRE_LOG_LEVEL`) was named only in a fault table of failure-behaviour.md."""
    readme = README.read_text(encoding="utf-8")
    actions = build_parser()._actions
    options = [o for a in actions for o in a.option_strings if o.startswith("--") and o != "--help"]
    assert options == ["--version", "--log-level"]
    assert [o for o in options if not re.search(rf"(?<![\w-]){o}(?![\w-])", readme)] == []
    assert f"${c.ENV_LOG_LEVEL}" in readme


def test_report_help_and_page_name_every_file_it_writes() -> None:
    """`report --help` listed six outputs; the report also writes llm_models.csv and unserved_models.csv."""
    source = (ROOT / "triton_sre" / "report" / "outputs.py").read_text(encoding="utf-8")
    written = re.findall(r'files\["([\w.]+)"\]', source)
    assert "report.md" in written and "unserved_models.csv" in written
    help_text = " ".join(dict(leaf_parsers(build_parser()))[("report",)].description.split())
    page = (DOCS / "report.md").read_text(encoding="utf-8")
    assert [f for f in written if f not in help_text] == []
    assert [f for f in written if f"`{f}`" not in page] == []


def test_gameday_help_lists_as_many_scenarios_as_it_runs() -> None:
    """`gameday --help` listed eleven faults: rollout-worse-version was not among them."""
    text = " ".join(dict(leaf_parsers(build_parser()))[("gameday",)].description.split())
    listed = text.split("scenarios one at a time: ", 1)[1].split(". ", 1)[0]
    assert len(listed.split(", ")) == len(builtin())
