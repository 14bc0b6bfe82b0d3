"""`triton-sre report` on Triton's model namespacing (`--model-namespacing=true`): two models of one
name in two repositories are two rows, named as Triton's log names them (`<namespace>::<model>`);
a name served from one repository keeps its bare name. The counters are the real Triton 2.51's two
scrapes of `tests/data/namespacing_2.51` (docs/exporter.md, "Model namespacing"), served by a
Prometheus stand-in as two samples of each series. Before, the two `vector_scale` were added into
one row: 26 inferences in 8 executions, batching ratio 3.25, where one repository's model batched 2
and the other's 4."""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any

from fake_prometheus import served
from test_report_answers import matrix, run

from triton_sre import conventions as c

DATA = Path(__file__).parent / "data" / "namespacing_2.51"
SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+)$")
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def _scrape(name: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], str]:
    """(family, labels) -> value of each labelled sample of a captured /metrics body."""
    samples = {}
    for line in (DATA / name).read_text(encoding="utf-8").splitlines():
        match = SAMPLE.match(line)
        if match:
            samples[(match.group(1), tuple(LABEL.findall(match.group(2))))] = match.group(3)
    return samples


FIRST, SECOND = _scrape("metrics_1.txt"), _scrape("metrics_2.txt")


def _answer(query: str, stamps: list[float]) -> Any:
    """A family's series by its bare name (Triton's counters): the first scrape's value before the
    range's middle, the second's after; anything else (the exporter's gauges) has no series."""
    middle = (stamps[0] + stamps[-1]) / 2
    series = [
        ({"__name__": family, **dict(labels)}, [FIRST[key] if t < middle else SECOND[key] for t in stamps])
        for key in FIRST
        for family, labels in [key]
        if family == query and key in SECOND
    ]
    return matrix(series, stamps)


def test_same_named_models_of_two_repositories_are_two_rows(tmp_path: Path) -> None:
    repo_a, repo_b = sorted(
        {dict(labels)[c.LABEL_NAMESPACE] for (family, labels) in FIRST if family == c.NV_INFERENCE_COUNT}
    )
    with served(_answer) as url:
        code, _out, err = run(url, tmp_path)
    assert code == c.EXIT_OK, err
    rows = {r["model"]: r for r in csv.DictReader((tmp_path / "models.csv").open(encoding="utf-8"))}
    assert set(rows) == {f"{repo_a}::vector_scale", f"{repo_b}::vector_scale", "pipeline_a", "pipeline_b"}
    a, b = rows[f"{repo_a}::vector_scale"], rows[f"{repo_b}::vector_scale"]
    # repo_a's: 2 then 8 inferences, 1 then 4 executions; repo_b's: 4 then 24, 1 then 6
    assert (float(a["inferences"]), float(a["batching_ratio"])) == (6.0, 2.0)
    assert (float(b["inferences"]), float(b["batching_ratio"])) == (20.0, 4.0)
    assert (float(rows["pipeline_b"]["inferences"]), float(rows["pipeline_b"]["batching_ratio"])) == (
        20.0,
        4.0,
    )
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert f"{repo_a}::vector_scale" in report and f"{repo_b}::vector_scale" in report


def test_the_llm_sections_ttft_p99_is_one_per_namespace(tmp_path: Path) -> None:
    """vLLM's `vector_scale` of two repositories: one answers its first token within 0.1 s, the other
    between 0.1 and 1 s. The LLM section's TTFT p99 query, evaluated by promtool's engine, keeps them
    apart, and the section gives each its row. Before, the query summed both histograms by model
    name: one p99 (the slower one's) for both rows."""
    import subprocess

    import pandas as pd
    import yaml
    from binaries import binary

    from triton_sre.report.llm import TTFT_P99_FRAME, llm_table, ttft_p99_expr
    from triton_sre.report.namespaces import qualify, shared_names

    buckets = f"{c.VLLM_TTFT_SECONDS}_bucket"
    fast, slow = {"0.1": 1, "1": 1, "+Inf": 1}, {"0.1": 0, "1": 1, "+Inf": 1}

    def series(namespace: str, per_minute: dict[str, int]) -> list[dict[str, str]]:
        job = f'{c.LABEL_JOB}="{c.DEFAULT_TRITON_JOB}"'
        where = f'{job},{c.LABEL_MODEL}="vector_scale",{c.LABEL_NAMESPACE}="{namespace}"'
        rows = [
            {"series": f'{buckets}{{{where},{c.LABEL_LE}="{le}"}}', "values": f"0+{n * 10}x10"}
            for le, n in per_minute.items()
        ]
        return [*rows, {"series": f"{c.VLLM_TTFT_SECONDS}_count{{{where}}}", "values": "0+10x10"}]

    expected = {"/repo_a": 99, "/repo_b": 991}  # ms: 0.99 of each histogram's one populated bucket
    expr = ttft_p99_expr(600)
    tests = {
        "rule_files": [],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [*series("/repo_a", fast), *series("/repo_b", slow)],
                "promql_expr_test": [
                    {
                        "expr": f"round(1000 * ({expr}))",
                        "eval_time": "10m",
                        "exp_samples": [
                            {
                                "labels": f'{{{c.LABEL_MODEL}="vector_scale",{c.LABEL_NAMESPACE}="{ns}"}}',
                                "value": ms,
                            }
                            for ns, ms in expected.items()
                        ],
                    }
                ],
            }
        ],
    }
    path = tmp_path / "ttft.test.yaml"
    path.write_text(yaml.safe_dump(tests))
    run = subprocess.run([binary("promtool"), "test", "rules", str(path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]

    # what the section makes of that answer: a row per namespace, each with its own p99
    def frame(namespace: str, value: float) -> dict[str, object]:
        return {c.LABEL_MODEL: "vector_scale", c.LABEL_NAMESPACE: namespace, "timestamp": 0.0, "value": value}

    tokens = pd.DataFrame([frame(ns, 100.0) for ns in expected])
    frames = {
        c.VLLM_PROMPT_TOKENS: tokens,
        c.VLLM_GENERATION_TOKENS: tokens,
        TTFT_P99_FRAME: pd.DataFrame([frame(ns, ms / 1000) for ns, ms in expected.items()]),
    }
    table = llm_table(qualify(frames, shared_names(frames.values())), pd.Series(dtype=float), 600.0)
    got = dict(zip(table["model"], table["ttft_p99_ms"].round(), strict=True))
    assert got == {f"{ns}::vector_scale": float(ms) for ns, ms in expected.items()}
