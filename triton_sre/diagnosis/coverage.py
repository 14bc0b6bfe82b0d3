"""``python -m triton_sre.diagnosis.coverage [--check]``: docs/diagnosis-coverage.md from the inventories.

Exit codes: 0 written (or up to date with --check), 1 stale with --check, 2 the docs folder is missing.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from triton_sre import conventions as c
from triton_sre.diagnosis.hand_rules import HAND_RULES
from triton_sre.diagnosis.inventory import COMPONENTS, ENTRIES, Entry, as_written
from triton_sre.diagnosis.level_inventory import CLASSES
from triton_sre.diagnosis.level_inventory import ENTRIES as LEVEL_ENTRIES

HAND_RUNBOOKS = frozenset(r.runbook for r in HAND_RULES)

COVERAGE_DOC = Path("docs") / "diagnosis-coverage.md"
COMPONENTS_ORDER = ("core", "server", *(comp for comp in COMPONENTS if comp != "core"))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def coverage_markdown() -> str:
    """The coverage table: per runbook, the Triton messages that lead to it (generated document)."""
    by_runbook: dict[str, list[Entry]] = {}
    for e in ENTRIES:
        by_runbook.setdefault(e.runbook, []).append(e)
        for comp in e.competes:
            by_runbook.setdefault(comp.runbook, [])
    components = Counter(e.component for e in ENTRIES)
    out = [
        "# Diagnosis coverage: Triton's load-failure messages -> runbooks",
        "",
        "<!-- Generated from triton_sre/diagnosis/inventory.yaml by"
        " `python -m triton_sre.diagnosis.coverage`; do not edit. -->",
        "",
        f"{len(ENTRIES)} message templates read from the sources of Triton core and its backends, "
        f"release branches {min(e.releases[0] for e in ENTRIES)} to {max(e.releases[1] for e in ENTRIES)} "
        "(first and last sampled branch each wording was read in; "
        "the branches sampled are listed in inventory.yaml). Every "
        "template is a cause rule of the diagnosis engine and is tested with its example "
        "(`tests/test_diagnosis_inventory.py`). Messages of third-party libraries (CUDA, ONNX Runtime, "
        "TensorRT, PyTorch, Python) that appear inside Triton's are matched by the hand-written "
        "patterns in `triton_sre/diagnosis/rules.py`; CUDA's own error table, each text with its page, "
        "is [cuda-errors.md](cuda-errors.md); the LLM engines' (vLLM, TensorRT-LLM) start-up errors, each "
        "text in the frames users paste it in, are [llm-engine-errors.md](llm-engine-errors.md); the "
        "model-format libraries' load errors (ONNX Runtime, PyTorch, TensorFlow, TensorRT, OpenVINO) in "
        "the frames users paste them in are "
        "[framework-errors.md](framework-errors.md). "
        "What Kubernetes prints about a pod (kubectl's "
        "STATUS cells, describe fields, kubelet and scheduler events) and the page each gets is "
        "[diagnosis-kubernetes.md](diagnosis-kubernetes.md). Where two pages' Meaning sections meet, the "
        "page each disputed wording gets and why is [diagnosis-boundaries.md](diagnosis-boundaries.md).",
        "",
        "| component | templates |",
        "| --- | --- |",
        *(f"| {comp} | {components[comp]} |" for comp in COMPONENTS if components[comp]),
        "",
        "| runbook | Triton templates | also matched by hand rules (third-party wording) |",
        "| --- | --- | --- |",
    ]
    for runbook in c.LOAD_FAILURE_RUNBOOKS:
        n = len(by_runbook.get(runbook, []))
        competing = sum(1 for e in ENTRIES for comp in e.competes if comp.runbook == runbook)
        note = f"{n}" + (f" (+{competing} where it competes)" if competing else "")
        hand = "yes" if runbook in HAND_RUNBOOKS else ""
        out.append(f"| [{runbook}](../runbooks/{runbook}.md) | {note} | {hand} |")
    for runbook in c.LOAD_FAILURE_RUNBOOKS:
        group = by_runbook.get(runbook, [])
        if not group:
            continue
        out += [
            "",
            f"## {runbook}",
            "",
            "| message template | component | source | releases |",
            "| --- | --- | --- | --- |",
        ]
        for e in group:
            out.append(
                f"| `{_cell(e.template)}` | {e.component} | `{_cell(e.source)}` "
                f"| {e.releases[0]}–{e.releases[1]} |"
            )
        decided = [e for e in group if e.competes]
        for e in decided:
            others = ", ".join(
                f"`{comp.runbook}` when `{_cell(as_written(comp.when))}`" for comp in e.competes
            )
            out.append("")
            out.append(f"- `{e.id}` competes with {others}. {_cell(e.decides)}".rstrip())
    return "\n".join(out + levels_markdown()) + "\n"


def levels_markdown() -> list[str]:
    """The warning- and error-level wordings (level_inventory.yaml) by class, then each one."""
    components = sorted({e.component for e in LEVEL_ENTRIES}, key=COMPONENTS_ORDER.index)
    out = [
        "",
        "# Warning- and error-level messages that are not (or are) failures",
        "",
        f"{len(LEVEL_ENTRIES)} warning- and error-level wordings of Triton core, its frontends (server) "
        "and backends, read from their sources at release branches r23.06 to r25.12 "
        "(`triton_sre/diagnosis/level_inventory.yaml`, diag34; diag34b added tensorrtllm_backend r23.12 to "
        "r25.05, openvino, dali, fil and tensorflow_backend to r25.02; diag35 TensorRT-LLM's own library "
        "(`TensorRT-LLM:` sources, its logger's warnings on a healthy start), the rapids_triton library "
        "under fil_backend and paddle_backend). Classes: `harmless`, a warning that says nothing failed "
        "(no finding, a `warning` one at most; its words are read as no cause); `not-served`, a warning "
        "that means the model will not serve; `serving`, an error line a healthy server writes (a request's "
        "bookkeeping, a cancel, an unload, the shutdown: no finding); `failure`, a real failure (never "
        "an empty answer); `relay`, another message's text. Each example is tested as the line its "
        "logger writes (a glog line, or TensorRT-LLM's `[TensorRT-LLM][LEVEL]` one) in a real healthy "
        "2.51 log (`tests/test_diagnosis_log_levels.py`).",
        "",
        "| component | " + " | ".join(CLASSES) + " |",
        "| --- |" + " --- |" * len(CLASSES),
    ]
    for comp in components:
        counts = [sum(e.component == comp and e.kind == k for e in LEVEL_ENTRIES) for k in CLASSES]
        out.append(f"| {comp} | " + " | ".join(str(n) for n in counts) + " |")
    for kind in CLASSES:
        group = [e for e in LEVEL_ENTRIES if e.kind == kind]
        if not group:
            continue
        out += ["", f"## {kind}", "", "| message template | level | component | source | releases | why |"]
        out.append("| --- | --- | --- | --- | --- | --- |")
        for e in group:
            out.append(
                f"| `{_cell(e.template)}` | {e.level} | {e.component} | `{_cell(e.source)}` "
                f"| {e.releases[0]}–{e.releases[1]} | {_cell(e.why)} |"
            )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m triton_sre.diagnosis.coverage", description=__doc__)
    parser.add_argument("--root", type=Path, default=Path("."), help="repository root (default: .)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the document is not up to date")
    args = parser.parse_args(argv)
    path = args.root / COVERAGE_DOC
    if not path.parent.is_dir():
        print(f"coverage: {path.parent}: no such directory (run from the repository root)", file=sys.stderr)
        return c.EXIT_USAGE
    text = coverage_markdown()
    current = path.read_text(encoding="utf-8") if path.exists() else None
    if args.check:
        if current != text:
            print(f"coverage: {path} is stale; run python -m triton_sre.diagnosis.coverage", file=sys.stderr)
            return c.EXIT_FAILURE
        return c.EXIT_OK
    path.write_text(text, encoding="utf-8")
    return c.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
