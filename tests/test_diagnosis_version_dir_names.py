"""Version folders core skips: a name with leading zeros (``003``) and one that is not a number (``abc``).

Core (model_lifecycle.cc, r20.09 to r26.06) warns that it ignores each and then fails the model when no
version is left; the warning names the folder to rename, so it is the evidence. The capture is the real
2.51 server on such a repository (`tests/data/logs/real/version-dir-names.log`); the live test repeats it.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from corpus import FIXTURES, OK_PY, build_repository, config_pbtxt

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import Report, diagnose_events
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.stack.local_triton import LocalTriton, LocalTritonError

CAPTURE = FIXTURES / "version-dir-names.log"
SKIPPED = {"m": "which contains leading zeros in its directory name", "abc": "which fails to convert"}


def check(report: Report) -> None:
    by_model = {f.model: f for f in report.findings}
    assert set(by_model) == set(SKIPPED), report.findings  # `ok` loaded: no finding
    for model, warning in SKIPPED.items():
        finding = by_model[model]
        assert (finding.runbook, finding.severity) == (c.RUNBOOK_VERSION_DIR_INVALID, c.IMPACT_CRITICAL)
        assert warning in finding.evidence[0].text  # the folder to rename comes first


def test_the_captured_log_quotes_each_skipped_folder() -> None:
    check(diagnose_events(parse_text(CAPTURE.read_text())))


def test_a_skipped_folder_beside_a_loaded_version_is_a_warning_at_most() -> None:
    text = (
        "W1203 10:00:00.000000 1 model_lifecycle.cc:102] \"ignore version directory '002' which contains "
        'leading zeros in its directory name"\n'
        'I1203 10:00:00.000051 1 model_lifecycle.cc:472] "loading: ok:1"\n'
        "I1203 10:00:01.280713 1 model_lifecycle.cc:839] \"successfully loaded 'ok'\"\n"
    )
    severities = {f.severity for f in diagnose_events(parse_text(text)).findings}
    assert severities <= {c.IMPACT_WARNING}


def test_cores_answer_to_a_load_request_names_its_model() -> None:
    # model_repository_manager.cc's answer (r21.02 to r26.06), as a client prints it
    text = (
        "tritonclient.utils.InferenceServerException: [StatusCode.INTERNAL] failed to load 'resnet', "
        "no version is available\n"
    )
    [finding] = diagnose_events(parse_text(text)).findings
    assert (finding.model, finding.runbook) == ("resnet", c.RUNBOOK_VERSION_DIR_INVALID)


@pytest.mark.triton
def test_the_real_server_skips_both_folders(tmp_path: Path) -> None:
    models = {
        name: ({"config.pbtxt": config_pbtxt(name), f"{folder}/model.py": OK_PY}, None)
        for name, folder in (("m", "003"), ("abc", "abc"), ("ok", "1"))
    }
    repo = build_repository(tmp_path / "repo", models)
    log = tmp_path / "triton.log"
    server = LocalTriton(repo, workdir=tmp_path / "triton", log_path=log, strict_readiness=False)
    with contextlib.suppress(LocalTritonError):
        server.start()
    server.stop()
    check(diagnose_events(parse_text(log.read_text())))
