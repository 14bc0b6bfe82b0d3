"""The report's LLM section: hand-checked frames, then `triton-sre report` on the real Prometheus
that scraped the real Triton's LLM sample models (the `live` fixture)."""

from __future__ import annotations

import io
import time
from contextlib import redirect_stdout
from typing import Any

import pandas as pd
import pytest
import requests

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.demo import LLM_TRTLLM, LLM_VLLM
from triton_sre.report.llm import TTFT_P99_FRAME, llm_table


def frame(name: str, model: str, values: list[float], **labels: str) -> pd.DataFrame:
    return pd.DataFrame(
        {"timestamp": [float(i) for i in range(len(values))], "value": values, c.LABEL_MODEL: model, **labels}
    )


def test_llm_table_tokens_cost_and_ttft() -> None:
    frames = {
        c.VLLM_PROMPT_TOKENS: frame("p", "chat", [100, 2100, 500]),  # a reset: 2000 + 500
        c.VLLM_GENERATION_TOKENS: frame("g", "chat", [0, 1000, 1250]),
        c.TRT_OUTPUT_TOKEN_LEN + "_sum": frame("t", "trt", [10, 410]),
        TTFT_P99_FRAME: frame("q", "chat", [0.25]),
    }
    cost = pd.Series({"chat": 0.5, "trt": 0.002, "vector": 1.0})
    table = llm_table(frames, cost, seconds=100.0).set_index("model")
    assert list(table.index) == ["chat", "trt"]  # only models with token families
    assert table.loc["chat", "input_tokens"] == 2500 and table.loc["chat", "output_tokens"] == 1250
    assert table.loc["chat", "cost_per_1m_output_tokens"] == pytest.approx(0.5 / 1250 * 1e6)
    assert table.loc["chat", "ttft_p99_ms"] == pytest.approx(250.0)
    assert table.loc["trt", "output_tokens_per_s"] == pytest.approx(4.0)
    assert pd.isna(table.loc["trt", "input_tokens"]) and pd.isna(table.loc["trt", "ttft_p99_ms"])
    assert llm_table({}, pd.Series(dtype=float), 10.0).empty


def test_report_has_the_llm_section_on_the_real_prometheus(live: dict[str, Any], tmp_path) -> None:
    url = live["prom"].url
    end = time.time()
    start = end - 120
    stdout = io.StringIO()
    with redirect_stdout(stdout):
        code = main(
            [
                "report",
                "--prometheus-url",
                url,
                "--start",
                str(start),
                "--end",
                str(end),
                "--out",
                str(tmp_path),
            ]
        )
    assert code == 0, stdout.getvalue()
    table = pd.read_csv(tmp_path / "llm_models.csv").set_index("model")
    assert {LLM_VLLM, LLM_TRTLLM} <= set(table.index)
    for model in (LLM_VLLM, LLM_TRTLLM):
        row = table.loc[model]
        assert row["output_tokens"] > 0 and row["input_tokens"] > 0
        expected = row["cost"] * 1e6 / row["output_tokens"]
        assert row["cost_per_1m_output_tokens"] == pytest.approx(expected, rel=1e-4)  # CSV: 6 digits
    assert table.loc[LLM_VLLM, "ttft_p99_ms"] > 4.0  # the model's prefill alone takes 4 ms
    # the tokens equal Prometheus' own count of the vLLM counter over the range (no extrapolation)
    body = requests.get(
        f"{url}/api/v1/query_range",
        params={
            "query": f'{c.VLLM_GENERATION_TOKENS}{{model="{LLM_VLLM}"}}',
            "start": start,
            "end": end,
            "step": 1,
        },
        timeout=10,
    ).json()
    values = [float(v) for _, v in body["data"]["result"][0]["values"]]
    assert table.loc[LLM_VLLM, "output_tokens"] == pytest.approx(values[-1] - values[0], rel=0.02)
    markdown = (tmp_path / "report.md").read_text()
    assert "## LLM models" in markdown and "TTFT p99 ms" in markdown
    assert "LLM models" in (tmp_path / "report.html").read_text()
