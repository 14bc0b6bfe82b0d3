"""The shipped rule files load in a Thanos or Mimir ruler as they are (docs/scaling.md).

A ruler takes the Prometheus rule-file format, but only its portable subset: group keys name,
interval and rules (no `limit`, `query_offset`), rule keys record/alert/expr/for/labels/annotations
(no `keep_firing_for`), group names unique (Thanos merges every file into one namespace), and each
file valid on its own (Mimir loads one file per namespace with `mimirtool rules load`).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml
from binaries import binary

from triton_sre import conventions as c
from triton_sre.slo import window_seconds

REPO = Path(__file__).resolve().parents[1]
RULE_FILES = sorted((REPO / "alerts").glob("*.yaml"))
GROUP_KEYS = {"name", "interval", "rules"}
RULE_KEYS = {"record", "alert", "expr", "for", "labels", "annotations"}
# a metric name in front of a selector or a range: `name{` or `name[`
_SELECTOR = re.compile(r"(?<![\w:\"])([A-Za-z_:][\w:]*)\s*[{\[]")


def _groups(path: Path) -> list[dict]:
    groups: list[dict] = yaml.safe_load(path.read_text())["groups"]
    return groups


def test_there_are_rule_files() -> None:
    assert len(RULE_FILES) >= 4


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.name)
def test_each_file_passes_promtool_check_rules_on_its_own(path: Path) -> None:
    done = subprocess.run(
        [binary("promtool"), "check", "rules", str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.name)
def test_groups_and_rules_use_only_keys_every_ruler_accepts(path: Path) -> None:
    for group in _groups(path):
        assert set(group) <= GROUP_KEYS, (path.name, group["name"], set(group) - GROUP_KEYS)
        for rule in group["rules"]:
            assert set(rule) <= RULE_KEYS, (path.name, group["name"], set(rule) - RULE_KEYS)
            assert ("record" in rule) != ("alert" in rule)


def test_group_names_are_unique_across_files() -> None:
    names = [g["name"] for path in RULE_FILES for g in _groups(path)]
    assert len(names) == len(set(names)), names


def test_slo_windows_longer_than_5m_read_only_recorded_series() -> None:
    """What lets the long windows move to a global ruler: they read recording-rule series
    (`level:metric:op`, with the per-cluster external labels), never a raw Triton series."""
    rec = window_seconds(c.REC_RATE_WINDOW)
    checked = 0
    for group in _groups(REPO / "alerts" / "triton-slo-rules.yaml"):
        for rule in group["rules"]:
            name = rule.get("record", "")
            window = re.search(r":(?:ratio_)?rate(\d+[smhdw])$", name)
            if not (name.startswith("slo_model:triton_slo_") and window):
                continue
            if window_seconds(window.group(1)) <= rec:
                continue
            raw = [m for m in _SELECTOR.findall(rule["expr"]) if ":" not in m and m not in _FUNCTIONS]
            assert raw == [], (group["name"], name, raw)
            checked += 1
    assert checked >= 4 * 2 * 7  # 4 SLOs (LLM ones too) x requests and errors x 7 windows


_FUNCTIONS = {"avg_over_time", "sum_over_time", "count_over_time", "rate", "vector", "on", "by", "without"}


def _kept_in_the_cluster() -> set[str]:
    """The recorded series docs/scaling.md keeps in the cluster's rule file when the SLO groups are
    split (besides every `*:rate5m` part): the backquoted names of its "To move the long windows"
    paragraph."""
    text = (REPO / "docs" / "scaling.md").read_text()
    paragraph = text[text.index("To move the long windows") :].split("\n\n")[0]
    kept = set(re.findall(r"`(slo_model:[\w:]+)`", paragraph))
    return kept | set(re.findall(r"`alert:(\w+)`", paragraph))  # alerts it keeps, as `alert:<name>`


def test_the_documented_split_leaves_no_raw_series_to_the_ruler() -> None:
    """Every rule docs/scaling.md sends to a global ruler reads only recorded series: the ruler has
    the remote-written recordings, maybe not the raw series (the time-slice SLI reads raw ones)."""
    kept = _kept_in_the_cluster()
    moved = 0
    for group in _groups(REPO / "alerts" / "triton-slo-rules.yaml"):
        for rule in group["rules"]:
            name = rule.get("record") or rule["alert"]
            if name.endswith(f":rate{c.REC_RATE_WINDOW}") or name in kept:
                continue
            raw = [m for m in _SELECTOR.findall(rule["expr"]) if ":" not in m and m not in _FUNCTIONS]
            assert raw == [], (group["name"], name, raw)
            moved += 1
    assert moved >= 4 * 2 * 7
