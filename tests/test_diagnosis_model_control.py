"""A load or unload request the server refuses (``model-control-refused``): the real 2.51 server not
in explicit mode, and with its model-repository API restricted, as tritonclient and the HTTP answer
report it.

The captures ``tests/data/logs/real/model-control-<name>.log`` are the client's output against the
real server (regenerate them with ``python tests/test_diagnosis_model_control.py``); the live tests
make them again and check the same diagnosis.
"""

from __future__ import annotations

import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest
import requests
from corpus import FIXTURES, OK_PY, build_repository, config_pbtxt

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import Report, diagnose_events
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.stack.local_triton import LocalTriton

MODEL = "ok_model"
KEY_HEADER = "admin-key"
RESTRICTED = (
    f"--http-restricted-api=model-repository:{KEY_HEADER}=not-a-real-secret",
    f"--grpc-restricted-protocol=model-repository:{KEY_HEADER}=not-a-real-secret",
)
QUOTED = {
    "none-http": "explicit model load / unload is not allowed if polling is enabled",
    "none-grpc": "[StatusCode.UNAVAILABLE] explicit model load / unload is not allowed if polling is enabled",
    "none-curl": '{"error":"explicit model load / unload is not allowed if polling is enabled"}',
    "restricted-http": f"This API is restricted, expecting header '{KEY_HEADER}'",
    "restricted-grpc": f"This protocol is restricted, expecting header 'triton-grpc-protocol-{KEY_HEADER}'",
}


def fixture_path(name: str) -> Path:
    return FIXTURES / f"model-control-{name}.log"


def _client_traceback(call: Callable[[], object]) -> str:
    """What a script calling tritonclient prints when the call raises: its traceback."""
    try:
        call()
    except Exception as exc:  # the client's own exception is the capture
        return "".join(traceback.format_exception(exc))
    raise AssertionError("the server accepted the request")


def captures(server: LocalTriton, kind: str) -> dict[str, str]:
    """The client's output for a load request the server refuses, by HTTP and gRPC client and curl."""
    import tritonclient.grpc as grpcclient
    import tritonclient.http as httpclient

    http = httpclient.InferenceServerClient(server.http_url.removeprefix("http://"))
    grpc = grpcclient.InferenceServerClient(server.grpc_url)
    out = {
        f"{kind}-http": _client_traceback(lambda: http.load_model(MODEL)),
        f"{kind}-grpc": _client_traceback(lambda: grpc.load_model(MODEL)),
    }
    if kind == "none":
        answer = requests.post(f"{server.http_url}/v2/repository/models/{MODEL}/load", timeout=10)
        out["none-curl"] = (
            f"$ curl -s -w '\\nHTTP %{{http_code}}\\n' -X POST"
            f" localhost:8000/v2/repository/models/{MODEL}/load\n"
            f"{answer.text}\nHTTP {answer.status_code}\n"
        )
    return out


def check(name: str, text: str) -> Report:
    report = diagnose_events(parse_text(text))
    assert report.findings, (name, text)
    top = report.findings[0]
    assert top.runbook == c.RUNBOOK_MODEL_CONTROL_REFUSED, (name, report.findings)
    assert any(QUOTED[name] in e.text for e in top.evidence), (name, top.evidence)
    said = "\n".join(e.text for f in report.findings for e in f.evidence)
    assert "not-a-real-secret" not in said  # the key is never echoed
    return report


def _serve(tmp: Path, *args: str, mode: str) -> LocalTriton:
    repo = build_repository(
        tmp / "repo", {MODEL: ({"config.pbtxt": config_pbtxt(MODEL), "1/model.py": OK_PY}, None)}
    )
    return LocalTriton(repo, model_control_mode=mode, extra_args=args, workdir=tmp / "triton")  # type: ignore[arg-type]


COMMITTED = sorted(name for name in QUOTED if not name.endswith("-curl"))
"""The client tracebacks; curl's answer is checked live only (a shell transcript, not a log)."""


@pytest.mark.parametrize("name", COMMITTED)
def test_committed_captures(name: str) -> None:
    check(name, fixture_path(name).read_text())


@pytest.mark.triton
def test_load_outside_explicit_mode_on_the_real_server(triton: LocalTriton) -> None:
    """The shared server runs in the default mode (none): every load request is refused."""
    for name, text in captures(triton, "none").items():
        check(name, text)


@pytest.mark.triton
def test_restricted_model_repository_api_on_the_real_server(tmp_path: Path) -> None:
    with _serve(tmp_path, *RESTRICTED, mode="explicit") as server:
        for name, text in captures(server, "restricted").items():
            check(name, text)
        allowed = requests.post(
            f"{server.http_url}/v2/repository/models/{MODEL}/load",
            headers={KEY_HEADER: "not-a-real-secret"},
            timeout=60,
        )
        assert allowed.status_code == 200, allowed.text  # with the key the same request loads the model


def test_the_mode_named_in_a_healthy_option_table_is_no_refusal() -> None:
    healthy = (
        "| model_control_mode               | MODE_EXPLICIT                              |\n"
        "| strict_model_config              | 0                                          |\n"
        "I0101 00:00:00.000000 1 grpc_server.cc:2451] Started GRPCInferenceService at 0.0.0.0:8001\n"
    )
    assert not diagnose_events(parse_text(healthy)).findings


@pytest.mark.parametrize(
    ("line", "model"),
    [
        # Model Analyzer's own report names the variant it asked for (model_analyzer#130's log)...
        (
            "2021-04-30 22:06:37.785 INFO[client.py:82] Model add_sub_i34 load failed:"
            " [StatusCode.UNAVAILABLE]"
            " explicit model load / unload is not allowed if polling is enabled",
            "add_sub_i34",
        ),
        # ... but core's own quote of the model it polled wins (model_analyzer#852's log).
        (
            "[Model Analyzer] Model maxvit_rmlp_base_config_default load failed:"
            " [StatusCode.INTERNAL] failed to"
            " load 'maxvit_rmlp_base', failed to poll from model repository",
            "maxvit_rmlp_base",
        ),
    ],
)
def test_the_model_a_model_analyzer_load_names(line: str, model: str) -> None:
    findings = diagnose_events(parse_text(line + "\n")).findings
    assert [f.model for f in findings] == [model], findings


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        for kind, args, mode in (("none", (), "none"), ("restricted", RESTRICTED, "explicit")):
            with _serve(Path(tmp) / kind, *args, mode=mode) as server:
                for name, text in captures(server, kind).items():
                    if name in COMMITTED:
                        fixture_path(name).write_text(text)
                    check(name, text)
                    print(name, len(text))
    sys.exit(0)


@pytest.mark.parametrize(
    "line",
    [
        "io.grpc.StatusRuntimeException: UNAVAILABLE: This protocol is restricted, expecting header xxxxx",
        "tritonclient.utils.InferenceServerException: [StatusCode.UNAVAILABLE] This protocol is restricted, "
        "expecting header <redacted>",
        '{"error":"This API is restricted, expecting header ..."}',
    ],
)
def test_a_restriction_whose_header_name_the_paste_blanked_is_still_the_refusal(line: str) -> None:
    """heldout77: users blank the header's quoted name out of the server's refusal (grpc_server.cc, r23.04 on;
    http_server.cc, r23.11 on); the refusal's words before it decide."""
    findings = diagnose_events(parse_text(line + "\n")).findings
    assert [f.runbook for f in findings][:1] == [c.RUNBOOK_MODEL_CONTROL_REFUSED]
