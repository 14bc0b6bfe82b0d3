"""The bot on Triton's model namespacing (`--model-namespacing=true`): `vector_scale` served from two
repositories is two models, as in the report (tests/test_report_namespaces.py). Label values are the
repository paths of the real 2.51 capture, `tests/data/namespacing_2.51`."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml
from binaries import binary
from images import png_content

from triton_sre import conventions as c
from triton_sre.bot.llm import KV_CACHE, TTFT_P99, WAITING
from triton_sre.bot.payload import Alert
from triton_sre.bot.prom import chart_png, legend_labels
from triton_sre.bot.promfacts import llm_figures
from triton_sre.namespacing import SEP

DATA = Path(__file__).parent / "data" / "namespacing_2.51"
MODEL = "vector_scale"


def _repositories() -> list[str]:
    """The two namespaces (repository paths) of the capture's series."""
    text = (DATA / "metrics_1.txt").read_text(encoding="utf-8")
    found = {
        line.split(f'{c.LABEL_NAMESPACE}="', 1)[1].split('"', 1)[0]
        for line in text.splitlines()
        if line.startswith(f"{c.NV_INFERENCE_COUNT}{{") and f'{c.LABEL_NAMESPACE}="' in line
    }
    assert len(found) == 2, found
    return sorted(found)


REPO_A, REPO_B = _repositories()


def _labels(namespace: str) -> dict[str, str]:
    return {
        c.LABEL_JOB: c.DEFAULT_TRITON_JOB,
        c.LABEL_MODEL: MODEL,
        c.LABEL_NAMESPACE: namespace,
        c.LABEL_VERSION: "1",
    }


ORANGE = (255, 127, 14)  # matplotlib's second line colour (C1): the chart's second series


def test_a_chart_draws_same_named_models_of_two_namespaces_as_two_lines() -> None:
    """An LLM alert's expression answers a series per namespace. Their legends were cut at 60 characters
    inside the repository path: one legend, the second series overwrote the first, one line drawn."""
    stamps = [1_700_000_000.0 + 30 * i for i in range(40)]
    series = [
        {"metric": _labels(ns), "values": [[t, str(level + i % 3)] for i, t in enumerate(stamps)]}
        for ns, level in ((REPO_A, 2.0), (REPO_B, 9.0))
    ]
    png = chart_png(series, c.ALERT_LLM_REQUESTS_WAITING)
    assert png is not None
    pixels = png_content(png).convert("RGB").getcolors(maxcolors=1 << 20) or []
    assert sum(n for n, colour in pixels if colour == ORANGE) > 50, (
        "one line only: the two models drawn as one"
    )
    assert legend_labels([s["metric"] for s in series]) == [
        f"{ns}{SEP}{MODEL},{c.LABEL_JOB}={c.DEFAULT_TRITON_JOB},{c.LABEL_VERSION}=1"[:60]
        for ns in (REPO_A, REPO_B)
    ]
    # a name of one namespace keeps its labels as they are
    alone = {**_labels(REPO_A), c.LABEL_MODEL: "pipeline_a"}
    assert legend_labels([alone]) == [",".join(f"{k}={v}" for k, v in sorted(alone.items()))[:60]]


class _Recorded:
    """A Prometheus that records the instant queries the bot sends; promtool's engine answers them."""

    def __init__(self) -> None:
        self.exprs: list[str] = []

    def instant(self, expr: str) -> Any:
        self.exprs.append(expr)
        return None


def test_an_llm_alerts_figures_are_of_its_namespaces_model(tmp_path: Path) -> None:
    """Requests waiting, KV cache use and TTFT p99 of `vector_scale` in two namespaces (3 and 5 waiting,
    40 % and 90 % of the cache, 0.2 s and 0.8 s): the alert on repo_a's model gets repo_a's figures.
    Before, its queries named the model alone: 8 waiting, the cache 90 % full and 0.8 s, both models'."""
    values = {
        REPO_A: {WAITING: 3, KV_CACHE: 0.4, TTFT_P99: 0.2},
        REPO_B: {WAITING: 5, KV_CACHE: 0.9, TTFT_P99: 0.8},
    }
    record = {WAITING: c.REC_LLM_WAITING, KV_CACHE: c.REC_LLM_KV_CACHE, TTFT_P99: c.REC_LLM_TTFT_QUANTILE}

    def series(ns: str, figure: str) -> dict[str, str]:
        labels = {**_labels(ns), **({c.LABEL_QUANTILE: "0.99"} if figure == TTFT_P99 else {})}
        selector = ",".join(f'{k}="{v}"' for k, v in labels.items())
        return {"series": f"{record[figure]}{{{selector}}}", "values": f"{values[ns][figure]}x10"}

    alert = Alert(
        c.AM_STATUS_FIRING,
        {c.LABEL_ALERTNAME: c.ALERT_LLM_REQUESTS_WAITING, **_labels(REPO_A)},
        {},
        fingerprint="f",
    )
    prometheus = _Recorded()
    llm_figures(prometheus, [alert], "", "g")  # type: ignore[arg-type]
    assert len(prometheus.exprs) == 3
    tests = {
        "rule_files": [],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [series(ns, figure) for ns in values for figure in record],
                "promql_expr_test": [
                    {
                        "expr": expr,
                        "eval_time": "5m",
                        "exp_samples": [{"labels": "{}", "value": values[REPO_A][f]}],
                    }
                    for f, expr in zip((TTFT_P99, KV_CACHE, WAITING), prometheus.exprs, strict=True)
                ],
            }
        ],
    }
    path = tmp_path / "figures.test.yaml"
    path.write_text(yaml.safe_dump(tests))
    run = subprocess.run([binary("promtool"), "test", "rules", str(path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
