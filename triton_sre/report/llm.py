"""Pure: the report's LLM section, one row per model whose backend reports token families.

Tokens are the increase over the range of vLLM's token counters, else of TensorRT-LLM's
per-request token-length histogram sums; cost per 1M tokens divides the model's attributed cost
(the same integral of `triton_sre_cost_per_hour` as the main table) by them; TTFT p99 is the
quantile of vLLM's time-to-first-token histogram increased over the whole range, per model and
namespace (Triton's model namespacing: a name of two repositories is a row each, `<namespace>::<model>`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from triton_sre import conventions as c
from triton_sre.promql import GUARD_OBSERVED, histogram_quantile
from triton_sre.report.increases import family_increase
from triton_sre.report.queries import MODEL_NAMESPACE

LLM_COLUMNS = (
    "model",
    "input_tokens",
    "output_tokens",
    "output_tokens_per_s",
    "cost",
    "cost_per_1m_input_tokens",
    "cost_per_1m_output_tokens",
    "ttft_p99_ms",
)
LLM_HEADERS = {
    "model": "model",
    "input_tokens": "input tokens",
    "output_tokens": "output tokens",
    "output_tokens_per_s": "output tokens/s",
    "cost": "cost",
    "cost_per_1m_input_tokens": "cost / 1M input tokens",
    "cost_per_1m_output_tokens": "cost / 1M output tokens",
    "ttft_p99_ms": "TTFT p99 ms",
}
# frame name -> where it comes from; (vLLM counter, TensorRT-LLM histogram sum) per direction
TOKEN_SOURCES = {
    "input_tokens": (c.VLLM_PROMPT_TOKENS, c.TRT_INPUT_TOKEN_LEN + "_sum"),
    "output_tokens": (c.VLLM_GENERATION_TOKENS, c.TRT_OUTPUT_TOKEN_LEN + "_sum"),
}
TOKEN_FAMILIES = tuple(family for pair in TOKEN_SOURCES.values() for family in pair)
TTFT_P99_FRAME = "llm_ttft_p99"


def ttft_p99_expr(
    seconds: float, triton_job: str = c.DEFAULT_TRITON_JOB, cluster: tuple[str, ...] = ()
) -> str:
    """TTFT p99 over the last `seconds` of `triton_job`, evaluated at the range's end (one point): per
    model and namespace (same-named models of two repositories are two rows, report/namespaces.py),
    and per `cluster` label when given."""
    window = f"{max(1, round(seconds))}s"
    job = [(c.LABEL_JOB, "=", triton_job)]
    labels = (*MODEL_NAMESPACE, *cluster)
    return histogram_quantile(
        c.VLLM_TTFT_SECONDS, job, "0.99", window, labels, guard=GUARD_OBSERVED, fn="increase"
    )


def llm_table(
    frames: Mapping[str, pd.DataFrame],
    cost: pd.Series,
    seconds: float,
    increases: Mapping[str, pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """One row per model with tokens in the range (empty frame: no LLM model). A token family is read
    from its per-series increases when `increases` has it (reduced as read), else from its frame."""
    tokens: dict[str, pd.Series] = {}
    for column, (vllm, trt) in TOKEN_SOURCES.items():
        first = family_increase(frames, increases or {}, vllm)
        tokens[column] = first.combine_first(family_increase(frames, increases or {}, trt))
    models = sorted(set(tokens["input_tokens"].index) | set(tokens["output_tokens"].index))
    if not models:
        return pd.DataFrame(columns=list(LLM_COLUMNS))
    out = pd.DataFrame(index=pd.Index(models, name="model"))
    for column, series in tokens.items():
        out[column] = series.reindex(out.index)
    out["output_tokens_per_s"] = out["output_tokens"] / seconds if seconds > 0 else np.nan
    out["cost"] = cost.reindex(out.index) if not cost.empty else np.nan
    for direction in ("input", "output"):
        count = out[f"{direction}_tokens"]
        out[f"cost_per_1m_{direction}_tokens"] = out["cost"] * 1e6 / count.where(count > 0)
    ttft = frames.get(TTFT_P99_FRAME, pd.DataFrame())
    if not ttft.empty and c.LABEL_MODEL in ttft.columns:
        valid = ttft[np.isfinite(ttft["value"])]
        out["ttft_p99_ms"] = valid.groupby(c.LABEL_MODEL)["value"].last().reindex(out.index) * 1000.0
    else:
        out["ttft_p99_ms"] = np.nan
    return out.reset_index()[list(LLM_COLUMNS)]
