"""Leaves are leaves (issue 25.5): the shared checks, durations and byte formatting import nothing
of the product, and the modules that use them do not drag in the exporter, the Triton client or
the SLO model. Each module is imported alone in a fresh interpreter, and what it loaded is read
from `sys.modules` (an import hidden in a function is caught only when it runs; the AST test
below catches those)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "triton_sre"
# A leaf imports nothing of the product but other leaves.
LEAVES = (
    "triton_sre.checks",
    "triton_sre.counters",
    "triton_sre.durations",
    "triton_sre.httpframing",
    "triton_sre.inputs",
    "triton_sre.promcore",
    "triton_sre.redact",
    "triton_sre.timeorder",
    "triton_sre.units",
)
# module -> product modules it must not load, even indirectly
FORBIDDEN = {
    "triton_sre.config": ("triton_sre.exporter", "triton_sre.triton"),
    "triton_sre.prom": ("triton_sre.slo", "triton_sre.config", "triton_sre.exporter"),
    "triton_sre.slo": ("triton_sre.exporter", "triton_sre.triton", "triton_sre.config"),
    "triton_sre.bot.config": ("triton_sre.exporter", "triton_sre.triton"),
    "triton_sre.bot.enrich": ("triton_sre.exporter",),
}


def _loaded(module: str) -> list[str]:
    code = f"import json, sys; import {module}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [name for name in json.loads(out.stdout) if name.startswith("triton_sre.")]


@pytest.mark.parametrize("leaf", LEAVES)
def test_a_leaf_imports_nothing_of_the_product_but_leaves(leaf: str) -> None:
    tree = ast.parse((PACKAGE / f"{leaf.split('.')[-1]}.py").read_text(encoding="utf-8"))
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [name for name in imported if name.split(".")[0] == "triton_sre" and name not in LEAVES]
    assert set(_loaded(leaf)) <= {leaf, *LEAVES}


@pytest.mark.parametrize("module", sorted(FORBIDDEN))
def test_users_of_the_leaves_do_not_load_the_exporter_or_the_client(module: str) -> None:
    loaded = _loaded(module)
    assert module in loaded
    wrong = [name for name in loaded if name.startswith(FORBIDDEN[module])]
    assert not wrong, f"{module} loads {wrong}"
