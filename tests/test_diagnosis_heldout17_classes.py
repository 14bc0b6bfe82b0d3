"""The classes behind heldout17's misses (round 14), each tested with wording from another source than
the held-out log, then the heldout17 case itself: libstdc++'s terminate output with the exception type
and ``what():`` joined on one line, a structured (JSON) line whose message field carries the error,
HTTP clients' error Display (reqwest, requests, httpx) as a model store's refusal, the kubelet's
eviction for local storage, and a traceback whose exception line names an unwritable directory.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.classes import cause_class
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.lineshape import is_paste_prompt
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.diagnosis.severity import is_failure_line

HELDOUT17 = Path(__file__).parent / "data" / "logs" / "heldout17"


def first(text: str) -> str:
    findings = diagnose_events(parse_text(text)).findings
    assert findings, text
    return findings[0].runbook


# ---- 1a: the terminate handler's lines joined (the type, then what() on the same line).
# guruofquality/gras#104 (Boost.Interprocess): the three lines as posted, then joined as a paste that
# lost the line break shows them.
GRAS = (
    "terminate called after throwing an instance of\n"
    "'boost::interprocess::interprocess_exception'\n"
    "  what():  boost::interprocess_exception::library_error\n"
)


def test_joined_what_is_a_failure_line() -> None:
    joined = (
        "'boost::interprocess::interprocess_exception'  what():  boost::interprocess_exception::library_error"
    )
    assert is_failure_line(joined)
    assert not is_failure_line("the docs say what():  returns the message")  # no quoted type before it
    assert first(joined) == c.RUNBOOK_SHM_TOO_SMALL
    assert first(GRAS) == c.RUNBOOK_SHM_TOO_SMALL


# ---- 1b: a JSON line's message field read as a line of its own.
def test_json_message_field_is_read_as_a_line() -> None:
    # NIM's envelope (level "None", the real level inside the message) around the wording of
    # nexus-xyz/nexus-cli#1911's title (reqwest's "error sending request for url").
    line = '{"level": "None", "time": "None", "message": "[11-26 10:19:17.953 ERROR  nim_sdk::hub::repo  rust/nim-sdk/src/hub/repo.rs:128] error sending request for url (https://api.ngc.nvidia.com/v2/org/nim/team/meta/models/x/files)"}'
    assert is_failure_line(line)
    assert not is_failure_line(
        '{"level": "None", "message": "[11-26 10:19:04.812 INFO  nim_sdk::hub::repo] fetching"}'
    )
    assert first(line) == c.RUNBOOK_CLOUD_REPOSITORY_ACCESS


# ---- 1c / 2: HTTP clients' error wording: the model store refused or could not be reached.
HTTP_CASES = [
    # astral-sh/uv issue of 2025-07-31 (uv 0.8.4, a private Gitea index): reqwest's Display, 404.
    "  Caused by: HTTP status client error (404 Not Found) for url (https://git.example.com/api/packages/Reports/pypi/simple/wand/)",
    # maciej-or/hikvision_next#176: httpx's raise_for_status wording, 403.
    "Client error '403 Forbidden' for url 'http://IP_ADDRESS_OF_NVR/ISAPI/System/IO/inputs/401'",
    # nexus-xyz/nexus-cli#1911 (title): reqwest's request error, no status at all.
    "[09-25 19:03:45.989 ERROR  nim_sdk::hub::repo  rust/nim-sdk/src/hub/repo.rs:119] error sending request for url (https://api.ngc.nvidia.com/v2/org/nim/team/meta/models/x)",
]


@pytest.mark.parametrize("line", HTTP_CASES)
def test_http_client_errors_are_a_model_store_refusal(line: str) -> None:
    assert is_failure_line(line)
    assert cause_class(line) == c.RUNBOOK_CLOUD_REPOSITORY_ACCESS
    assert first(line) == c.RUNBOOK_CLOUD_REPOSITORY_ACCESS


def test_http_status_words_alone_are_not_a_failure() -> None:
    assert not is_failure_line("INFO returned 200 OK for url (https://api.ngc.nvidia.com/v2/org/nim)")


# ---- 3: the kubelet's eviction manager, local storage over its limit.
@pytest.mark.parametrize(
    "text",
    [
        # kubernetes/kubernetes#45686 (the eviction manager's first wording, evictPod's message).
        '  Warning  Evicted  5s  kubelet  emptyDir usage exceeds the limit "1Gi"',
        # kubernetes/kubernetes#91600 (describe's Message of an evicted pod).
        "Status:         Failed\nReason:         Evicted\nMessage:        The node was low on resource: ephemeral-storage. Container ebaogi-bff-app was using 34260Ki, which exceeds its request of 0. \n",
    ],
)
def test_kubelet_storage_eviction_is_host_resource_exhausted(text: str) -> None:
    assert first(text) == c.RUNBOOK_HOST_RESOURCE_EXHAUSTED


# ---- an exception line that names an unwritable directory, outside a model.py.
# A container entrypoint's data-directory check (code corpus; its message as written, the uid values
# filled in) raised from Python: the traceback says where, the exception line says what.
UNWRITABLE = "Unable to write to [/data] data directory. Current user id [1000] while directory owner is [0]"


def test_traceback_naming_an_unwritable_directory_is_permission_denied() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/usr/local/bin/check-data", line 8, in <module>\n'
        "    sys.exit(check_data_dir())\n"
        f"RuntimeError: {UNWRITABLE}\n"
    )
    assert first(log) == c.RUNBOOK_PERMISSION_DENIED
    assert cause_class(UNWRITABLE) == c.RUNBOOK_PERMISSION_DENIED
    assert cause_class("RuntimeError: Unable to read the config") is None
    # The same exception raised in a model's own model.py stays the model's Python error.
    in_model = log.replace("/usr/local/bin/check-data", "/models/m/1/model.py")
    assert first(in_model) == c.RUNBOOK_PYTHON_MODEL_ERROR


# ---- a command pasted without its prompt is what the user ran, not what failed.
def test_client_command_without_prompt_is_a_paste_prompt() -> None:
    # NVIDIA/k8s-nim-operator#271, the command as posted after its prompt.
    assert is_paste_prompt(
        "kubectl describe nimcaches.apps.nvidia.com -n nim-service nimcache-llama3-8b-v1-3-3"
    )
    assert is_paste_prompt("kubectl -n kfserving-test logs ${PODNAME} -c kfserving-container")
    # The clients' own error messages are not commands.
    assert not is_paste_prompt(
        'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].'
    )
    assert not is_paste_prompt(
        'Error from server (BadRequest): container "triton" in pod "x" is waiting to start'
    )
    # ${VAR} in the command is the shell's expansion, not a config template left unfilled.
    log = "kubectl -n kfserving-test logs ${PODNAME} -c kfserving-container\nE0903 01:26:10.795143 1 model_repository_manager.cc:1519] failed to open text file for read /mnt/models/1/config.pbtxt: No such file or directory\n"
    assert first(log) == c.RUNBOOK_MODEL_FILE_MISSING


# ---- the heldout17 cases these classes flip.
@pytest.mark.parametrize(
    ("name", "runbook"),
    [
        ("kserve-1937", c.RUNBOOK_SHM_TOO_SMALL),
        ("nim-deploy-92", c.RUNBOOK_CLOUD_REPOSITORY_ACCESS),
        ("vss-blueprint-1470", c.RUNBOOK_CLOUD_REPOSITORY_ACCESS),
        ("kserve-3792", c.RUNBOOK_HOST_RESOURCE_EXHAUSTED),
        ("nim-deploy-16", c.RUNBOOK_PERMISSION_DENIED),
        ("kfserving-blog-mokpolar", c.RUNBOOK_MODEL_FILE_MISSING),
    ],
)
def test_heldout17_case_flips(name: str, runbook: str) -> None:
    assert first((HELDOUT17 / f"{name}.log").read_text()) == runbook
