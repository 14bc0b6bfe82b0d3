"""Every name is defined once, in `triton_sre/conventions/`, and imported everywhere else.

The house rule (DEVELOPERS.md): a metric name, label, state, runbook id, alert name or recording
rule written as a literal outside the conventions modules is a bug. This test scans the Python
sources with `ast` for string literals equal to a distinctive convention value, checks that no
two conventions share a value unless they are different things, and that every `c.NAME` used
exists (a name removed from the conventions fails here, not at run time).
"""

from __future__ import annotations

import ast
import inspect
import itertools
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from triton_sre import conventions as c
from triton_sre.conventions import alerts, exported, process, triton

ROOT = Path(__file__).resolve().parent.parent
CONVENTIONS_DIR = ROOT / "triton_sre" / "conventions"
DOMAINS: tuple[ModuleType, ...] = (triton, exported, alerts, process)

# Python sources that must import the names: the product, the tests, the benchmarks, the scripts.
# Markdown (README, docs/, runbooks/) is prose for people: it names things as users type them.
SCANNED = ("triton_sre", "tests", "bench", "scripts")
NOT_SCANNED = (
    CONVENTIONS_DIR,  # where the names are defined
    # The demo models run inside Triton's Python backend (also in the stack's Triton image, where
    # triton_sre is not installed) and stand in for the vLLM and TensorRT-LLM backends: they write
    # the backends' metric names as the backends do.
    ROOT / "triton_sre" / "demo" / "models",
)

# A single plain word, a number or a duration is an ordinary word, not a name ("model", "READY",
# "0.99", "5m"): it is written literally for many other reasons. Everything else (snake_case,
# kebab-case, CamelCase, `a:b`, `/a/b`, UPPER_SNAKE) is a name.
ORDINARY = re.compile(r"[a-z]+|[A-Z]+|[0-9][0-9.]*[smhd]?")

# Distinctive values that are also the name of something else, written as that other thing.
ALSO_ANOTHER_NAME: dict[str, str] = {
    "/metrics": "Prometheus' standard scrape path: Triton's and the bot's as well as the exporter's",
    "triton-sre": "the product's name (CLI program, OpenTelemetry service), not only the scrape job",
    "compute_input": "also a field of Triton's statistics JSON (the snapshot decoder reads it)",
    "compute_infer": "also a field of Triton's statistics JSON (the snapshot decoder reads it)",
    "compute_output": "also a field of Triton's statistics JSON (the snapshot decoder reads it)",
    "batch_size": "also a field of Triton's statistics JSON (batch_stats[].batch_size)",
    "runbook_url": "also the field of triage and lint JSON findings, not only an alert annotation",
    "runbooks/": "also the repository's runbooks/ directory, written in paths",
    "time_slice": "also the slos.yaml key of a latency SLO's slice length",
    "latency_source": "also a column of `triton-sre report` tables",
    "model_version": "also the field of an ensemble step in Triton's model config JSON (snapshot decodes it)",
}

# A file where a convention's value names something else: (file, convention) -> why.
OTHER_THING_AT: dict[tuple[str, str], str] = {
    ("triton_sre/bot/receiver.py", "AM_RECEIVER_BOT"): "the bot's HTTP Server header has the same text",
    ("bench/bench_poll.py", "STATS_INFERENCE_STATS"): "the fallback for a baseline tree without the name",
    ("bench/bench_poll.py", "STATS_MEMORY_USAGE"): "the fallback for a baseline tree without the name",
}

# Values two conventions share on purpose: different things that happen to be spelt alike, each
# free to change without the other.
SHARED_VALUES: dict[str, str] = {
    "reason": "LABEL_REASON is Triton's failure reason; L_REASON our UNAVAILABLE reason text",
    "queue": "STAGE_QUEUE is a stage label value; LATENCY_QUEUE a latency measure of the rules",
    "histogram": "LATENCY_SLI_HISTOGRAM is a slos.yaml latency_sli; LATENCY_SOURCE_HISTOGRAM a source",
    "summary": "ANNOTATION_SUMMARY is an alert annotation; LATENCY_SOURCE_SUMMARY a latency source",
    "waiting": "TRT_REQUEST_WAITING is TensorRT-LLM's label value; LLM_STATE_WAITING ours",
    "metrics": "TARGET_METRICS is a poll target; SOURCE_METRICS the source of a derived figure",
    "stats": "TARGET_STATS is a poll target; SOURCE_STATS the source of a derived figure",
    "10m": "LLM_SATURATED_FOR: a KV cache full that long; SLO_MODEL_NOT_SERVED_FOR: a named model unready",
    "2m": "SUMMARY_OBSERVED_WINDOW: a quantile's count rose; CLUSTER_SILENT_AFTER: a cluster sent nothing",
    "failed": "BOT_ACTION_FAILED is a Slack call's outcome; BOT_OUTBOX_FAILED a notification's outbox state",
}


def definitions() -> dict[str, tuple[str, object]]:
    """Public name -> (defining module, value), from each domain module's own assignments."""
    out: dict[str, tuple[str, object]] = {}
    for module in DOMAINS:
        tree = ast.parse(Path(inspect.getfile(module)).read_text(encoding="utf-8"))
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            for target in targets:
                if isinstance(target, ast.Name) and not target.id.startswith("_"):
                    out[target.id] = (module.__name__, getattr(module, target.id))
    return out


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, tuple | list | set | frozenset):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)


def _recording_rule_names() -> Iterator[tuple[str, str]]:
    """Names the `rec_*` helpers build, for every argument the generators pass them."""
    windows = {c.REC_RATE_WINDOW, c.DEFAULT_SLO_PERIOD, *itertools.chain(*(t[:2] for t in c.BURN_TIERS))}
    arguments = {
        "level": c.REC_LEVELS,
        "family": c.PER_MODEL_COUNTERS,
        "window": sorted(windows),
        "part": (c.SLO_PART_SUCCESS, c.SLO_PART_FAILURE, c.SLO_PART_BAD, c.SLO_PART_TOTAL, c.SLO_PART_GOOD),
        "measure": tuple(c.LATENCY_FAMILIES),
    }
    for name, function in inspect.getmembers(exported, inspect.isfunction):
        params = list(inspect.signature(function).parameters)
        if name.startswith("rec_") and all(p in arguments for p in params):
            for args in itertools.product(*(arguments[p] for p in params)):
                yield function(*args), f"{name}{args}"


def distinctive_values() -> dict[str, str]:
    """Convention value -> the name defining it, for values no other code may write literally."""
    values: dict[str, str] = {}
    for name, (_module, value) in definitions().items():
        for text in _strings(value):
            values.setdefault(text, name)
    values.update({text: name for text, name in _recording_rule_names()})
    return {v: n for v, n in values.items() if not ORDINARY.fullmatch(v) and v not in ALSO_ANOTHER_NAME}


def python_files(roots: Iterable[Path]) -> Iterator[Path]:
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            if not any(path.is_relative_to(skip) for skip in NOT_SCANNED):
                yield path


def _exports(tree: ast.Module) -> set[int]:
    """ids of the string nodes of `__all__` (names of functions, not conventions)."""
    return {
        id(node)
        for statement in tree.body
        if isinstance(statement, ast.Assign)
        and any(getattr(t, "id", None) == "__all__" for t in statement.targets)
        for node in ast.walk(statement.value)
    }


def literal_uses(paths: Iterable[Path], values: dict[str, str]) -> list[str]:
    """`file:line: 'value' is c.NAME` for each string literal equal to a convention value."""
    found = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        skip = _exports(tree)
        hits = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value in values
            and id(node) not in skip
            and (str(where), values[node.value]) not in OTHER_THING_AT
        ]
        for node in sorted(hits, key=lambda n: (n.lineno, n.col_offset)):
            found.append(f"{where}:{node.lineno}: {node.value!r} is c.{values[node.value]}")
    return found


def test_no_literal_of_a_convention_outside_the_conventions() -> None:
    found = literal_uses(python_files(ROOT / d for d in SCANNED), distinctive_values())
    assert not found, "import the convention instead of writing its value:\n" + "\n".join(found)


def test_the_scan_finds_a_planted_literal(tmp_path: Path) -> None:
    """The scanner itself: literals of a metric, an alert, a runbook id and a recording rule are
    found with file and line; an ordinary word and the imported name are not."""
    rule = c.rec_error_ratio(c.REC_LEVEL_MODEL)
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from triton_sre import conventions as c\n"
        f"UP = {c.M_UP!r}\n"
        f"ALERT = {c.ALERT_SERVER_DOWN!r}\n"
        f"RULE = f'{rule}'\n"
        f"PAGE = {c.RUNBOOK_SHM_TOO_SMALL!r}\n"
        f"WORD = {c.LABEL_MODEL!r}\n"
        "OK = c.M_UP\n",
        encoding="utf-8",
    )
    found = literal_uses(python_files([tmp_path]), distinctive_values())
    assert [line.split(": ", 1)[0] for line in found] == [f"{planted}:{n}" for n in (2, 3, 4, 5)]
    assert "is c.M_UP" in found[0] and "is c.rec_error_ratio" in found[2]


@pytest.mark.parametrize("module", DOMAINS, ids=lambda m: m.__name__)
def test_every_domain_is_reexported(module: ModuleType) -> None:
    """`from triton_sre import conventions as c; c.NAME` reaches every name of every domain."""
    names = [n for n, (m, _v) in definitions().items() if m == module.__name__]
    assert names
    assert [n for n in names if getattr(c, n, None) is not getattr(module, n)] == []


def test_each_name_is_defined_in_one_domain_only() -> None:
    seen: dict[str, list[str]] = {}
    for module in DOMAINS:
        tree = ast.parse(Path(inspect.getfile(module)).read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.AnnAssign | ast.Assign | ast.FunctionDef):
                targets = [node] if isinstance(node, ast.FunctionDef) else getattr(node, "targets", None)
                for target in targets or [node.target]:
                    name = getattr(target, "id", getattr(target, "name", None))
                    if name:
                        seen.setdefault(name, []).append(module.__name__)
    assert {n: m for n, m in seen.items() if len(m) > 1} == {}


def test_one_name_per_thing() -> None:
    """No two conventions hold the same string unless SHARED_VALUES says why they differ."""
    by_value: dict[str, list[str]] = {}
    for name, (_module, value) in definitions().items():
        if isinstance(value, str):
            by_value.setdefault(value, []).append(name)
    shared = {v: names for v, names in by_value.items() if len(names) > 1}
    assert {v: n for v, n in shared.items() if v not in SHARED_VALUES} == {}
    assert sorted(v for v in SHARED_VALUES if v not in shared) == [], "stale SHARED_VALUES entry"


def test_every_used_convention_exists() -> None:
    """`c.NAME` in any scanned file names a convention that exists (after a rename or a merge)."""
    missing = []
    for path in python_files(ROOT / d for d in SCANNED):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = {
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "triton_sre"
            for alias in node.names
            if alias.name == "conventions"
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and not hasattr(c, node.attr)
            ):
                missing.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value.id}.{node.attr}")
    assert missing == []


def test_allow_lists_are_current() -> None:
    """Each allow-list entry is still a distinctive convention value (else remove it), and each
    OTHER_THING_AT file still writes its value."""
    values = {text for _m, value in definitions().values() for text in _strings(value)}
    assert sorted(v for v in ALSO_ANOTHER_NAME if v not in values or ORDINARY.fullmatch(v)) == []
    stale = [
        (path, name)
        for path, name in OTHER_THING_AT
        if not hasattr(c, name) or getattr(c, name) not in (ROOT / path).read_text(encoding="utf-8")
    ]
    assert stale == []
