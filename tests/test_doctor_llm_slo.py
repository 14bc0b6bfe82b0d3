"""`doctor` on a team's own streaming model named by a ttft SLO (journey26), against the real Triton 2.51.

A ttft / time_per_output_token SLO reads only the vLLM and TensorRT-LLM histograms. A decoupled Python model
of the team's own reports neither, so the SLO has no series and never alerts; doctor said "ok llm-metrics:
no LLM-backend model loaded" and "every input triton-sre needs here is present", exit 0.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from triton_sre import conventions as c
from triton_sre.demo import LLM_VLLM, SAMPLE_REPOSITORY
from triton_sre.doctor.llmslo import selects
from triton_sre.slo import ModelSelector

ROOT = Path(__file__).resolve().parent.parent
CHAT = "chat_llm"
CHAT_CONFIG = f"""name: "{CHAT}"
backend: "python"
max_batch_size: 0
model_transaction_policy {{ decoupled: true }}
input [ {{ name: "prompt" data_type: TYPE_STRING dims: [ 1 ] }} ]
output [ {{ name: "token" data_type: TYPE_STRING dims: [ 1 ] }} ]
instance_group [ {{ count: 1 kind: KIND_CPU }} ]
"""
CHAT_MODEL = """import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        for request in requests:
            sender = request.get_response_sender()
            for word in (b"hello", b"team"):
                token = pb_utils.Tensor("token", np.array([word], dtype=np.object_))
                sender.send(pb_utils.InferenceResponse([token]))
            sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        return None
"""
SPEC = """slos:
  - name: chat-ttft
    type: ttft
    models: {models}
    objective: 99
    threshold: 250ms
"""


def _doctor(triton: Any, spec: Path) -> tuple[int, dict[str, Any]]:
    result = subprocess.run(
        [sys.executable, "-m", "triton_sre.cli", "doctor", "--triton-url", triton.http_url,
         "--metrics-url", triton.metrics_url, "--spec", str(spec), "--format", "json"],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    checks = {check["id"]: check for check in json.loads(result.stdout)["checks"]}
    return result.returncode, checks[c.CHECK_LLM_METRICS]


def test_a_ttft_slo_on_a_model_without_llm_metrics_is_missing(
    fresh_triton_factory: Any, tmp_path: Path
) -> None:
    repo = tmp_path / "models"
    (repo / CHAT / "1").mkdir(parents=True)
    (repo / CHAT / "config.pbtxt").write_text(CHAT_CONFIG, encoding="utf-8")
    (repo / CHAT / "1" / "model.py").write_text(CHAT_MODEL, encoding="utf-8")
    shutil.copytree(SAMPLE_REPOSITORY / LLM_VLLM, repo / LLM_VLLM, symlinks=False)
    triton = fresh_triton_factory(repo)
    spec = tmp_path / "slos.yaml"

    spec.write_text(SPEC.format(models=f"[{CHAT}]"), encoding="utf-8")
    code, check = _doctor(triton, spec)
    assert code == c.EXIT_FAILURE
    assert check["ok"] is False and check["needed"] is True
    assert f"SLO chat-ttft ({c.SLO_TTFT}) names {CHAT}" in check["found"]
    assert c.VLLM_TTFT_SECONDS in check["found"]
    assert "latency_sli: histogram" in check["fix"] and "this server is 2.51.0" in check["fix"]

    spec.write_text(SPEC.format(models=f"{{regex: \"{CHAT[:4]}.*\"}}"), encoding="utf-8")
    assert _doctor(triton, spec)[1]["ok"] is False  # a regex names it too

    for models in (f"[{LLM_VLLM}]", "all"):  # the sample reports vLLM's histogram; `all` names no model
        spec.write_text(SPEC.format(models=models), encoding="utf-8")
        code, check = _doctor(triton, spec)
        assert (code, check["ok"]) == (c.EXIT_OK, True), (models, check)


def test_selects_reads_lists_and_anchored_regexes() -> None:
    assert selects(ModelSelector("list", names=("a", "b")), "b")
    assert not selects(ModelSelector("list", names=("a",)), "ab")
    assert selects(ModelSelector("regex", regex="chat_.*"), "chat_llm")
    assert not selects(ModelSelector("regex", regex="chat"), "chat_llm")  # anchored, as Prometheus reads it
    assert selects(ModelSelector("all"), "anything")
