"""The diagnosis engine on fixtures and hand-written shapes: parsing, classification, ordering.

GPU-only failures cannot be reproduced here; ``tests/data/logs/gpu/<runbook>.<variant>.log`` hold
the message texts those components really emit, each file citing where it was taken from.
"""

# ruff: noqa: E501 - log lines are test data and keep their real length

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import accuracy
import pytest
from expectations import BROKEN_CAUSES, BROKEN_RUNBOOKS, CPU_REPRODUCIBLE_LOAD_FAILURES
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from triton_sre import conventions as c
from triton_sre.diagnosis import holes
from triton_sre.diagnosis.engine import (
    Diagnoser,
    Report,
    diagnose_events,
    diagnose_index,
    diagnose_reason,
    template_of,
)
from triton_sre.diagnosis.frames import classify
from triton_sre.diagnosis.lineshape import classify_line, unquote
from triton_sre.diagnosis.logparse import parse, parse_text
from triton_sre.diagnosis.rules import CAUSE_RULES, HAND_COMPETES
from triton_sre.diagnosis.scan import LogInputError, scan_lines

LOGS = Path(__file__).parent / "data" / "logs"
GPU_FIXTURES = sorted((LOGS / "gpu").glob("*.log"))
ALL_FIXTURES = sorted(LOGS.glob("*/*.log"))


def diagnose_text(text: str):
    return diagnose_events(parse_text(text))


def runbooks_of(text: str) -> list[str]:
    return [f.runbook for f in diagnose_text(text).findings]


# ---------------------------------------------------------------------------- GPU-only fixtures
@pytest.mark.parametrize("path", GPU_FIXTURES, ids=lambda p: p.name)
def test_gpu_fixture_first_finding(path: Path) -> None:
    expected = path.name.split(".", 1)[0]
    assert expected in c.LOAD_FAILURE_RUNBOOKS, f"{path.name}: name must start with a runbook id"
    assert path.read_text().startswith("#"), f"{path.name}: cite where the message texts come from"
    report = diagnose_text(path.read_text())
    assert report.findings, path.name
    assert report.findings[0].runbook == expected
    assert report.findings[0].severity == c.IMPACT_CRITICAL
    assert report.findings[0].evidence


def test_every_runbook_has_a_positive_fixture() -> None:
    cpu = CPU_REPRODUCIBLE_LOAD_FAILURES  # covered by the real-Triton corpus
    gpu = {p.name.split(".", 1)[0] for p in GPU_FIXTURES}
    tune = {case.expect for case in accuracy.load("tune")}  # real logs users posted (never heldout/)
    dev = {case.expect for case in accuracy.load("dev4")}  # the stack around Triton (never heldout4/)
    assert set(c.LOAD_FAILURE_RUNBOOKS) <= cpu | gpu | tune | dev
    unknown = c.RUNBOOK_UNKNOWN_LOAD_FAILURE
    assert {r.runbook for r in CAUSE_RULES} - {unknown} == set(c.LOAD_FAILURE_RUNBOOKS) - {unknown}
    # The fallback is claimed by a rule only where evidence takes a text away from a page that would
    # otherwise claim it (rules.HAND_COMPETES: a CUDA runtime refusal inside TensorRT-LLM's error).
    assert {specific for _generic, specific, _evidence in HAND_COMPETES if specific == unknown} == {
        r.runbook for r in CAUSE_RULES if r.runbook == unknown
    }


def test_no_two_runbooks_claim_the_same_evidence() -> None:
    # One exception by design: "ensemble 'e' depends on 'm' ... Model 'm' loading failed with error: X"
    # is the ensemble's failure (ensemble-dependency) and also the only record of step m's cause X.
    for path in ALL_FIXTURES:
        claimed: dict[int, set[str]] = {}
        for finding in diagnose_text(path.read_text(errors="replace")).findings:
            for e in finding.evidence:
                if "which has no loaded version" not in e.text:
                    claimed.setdefault(e.line, set()).add(finding.runbook)
        shared = {line: rbs for line, rbs in claimed.items() if len(rbs) > 1}
        assert not shared, f"{path.name}: lines claimed by several runbooks: {shared}"


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_chunk_scanner_agrees_with_line_by_line(path: Path) -> None:
    data = path.read_bytes()
    want = diagnose_events(parse_text(data.decode(errors="replace")))
    for chunk in (512, 1 << 22):
        got = diagnose_events(parse(scan_lines(io.BytesIO(data), chunk_bytes=chunk)))
        assert got.findings == want.findings
        assert got.unmatched == want.unmatched


# ---------------------------------------------------------------------------- formats and pastes
LINE = """E1129 16:25:20.940736 3898 model_lifecycle.cc:642] "failed to load 'nomod' version 1: Internal: ModuleNotFoundError: No module named 'not_a_module_xyz'\\n\\nAt:\\n  /tmp/t1/repo/nomod/1/model.py(1): <module>\\n\""""


@pytest.mark.parametrize(
    "prefix",
    [
        "",
        "2024-11-29T16:25:20.123456789Z ",  # docker logs -t / kubectl --timestamps
        "[pod/triton-0/triton] ",  # kubectl --prefix
        "triton-1  | ",  # docker compose
        "Nov 29 16:25:20 gpu-host tritonserver[3898]: ",  # syslog
        "> ",  # quoted in a ticket
        "* ",  # bullet
        "    ",  # indented
    ],
)
def test_copy_paste_prefixes(prefix: str) -> None:
    (finding,) = diagnose_text(prefix + LINE + "\r\n").findings
    assert (finding.model, finding.version, finding.runbook) == (
        "nomod",
        "1",
        c.RUNBOOK_PYTHON_MODULE_MISSING,
    )
    assert finding.evidence[0].line == 1


def test_iso8601_and_old_unquoted_format() -> None:
    iso = "2026-11-29T16:56:40Z E 26992 model_lifecycle.cc:642] \"failed to load 'm' version 2: Internal: SyntaxError: expected ':' (model.py, line 2)\""
    assert [(f.model, f.version, f.runbook) for f in diagnose_text(iso).findings] == [
        ("m", "2", c.RUNBOOK_PYTHON_MODEL_ERROR)
    ]
    old = (
        "E0506 10:59:05.932885 1 model_repository_manager.cc:1234] failed to load 'm' version 1: Internal: "
        "ImportError: libfoo.so: cannot open shared object file\nframe #0: something\n"
    )
    # A Python import that cannot open a native library (issue 14: its own runbook).
    assert runbooks_of(old) == [c.RUNBOOK_PYTHON_SHARED_LIBRARY_MISSING]


def test_truncated_lines_are_normal_input() -> None:
    cut = LINE[:120]  # the paste ended mid-message: no closing quote
    (finding,) = diagnose_text(cut).findings
    assert finding.model == "nomod" and finding.runbook == c.RUNBOOK_PYTHON_MODULE_MISSING
    assert unquote('"abc') == "abc" and unquote('"a\\nb"') == "a\nb"


def test_status_table_rows_with_continuations() -> None:
    table = """I1129 16:56:39.917520 27012 server.cc:674]
+-----------+---------+------------------------------------------------+
| Model     | Version | Status                                         |
+-----------+---------+------------------------------------------------+
| nomod     | 1       | UNAVAILABLE: Internal: ModuleNotFoundError: No module named 'x' |
|           |         |                                                |
|           |         | At:                                            |
|           |         |   /tmp/repo/nomod/1/model.py(1): <module>      |
| bad_v     | -       | Not loaded: No model version was found         |
| fine      | 1       | READY                                          |
+-----------+---------+------------------------------------------------+
"""
    findings = {f.model: f for f in diagnose_text(table).findings}
    assert findings["nomod"].runbook == c.RUNBOOK_PYTHON_MODULE_MISSING
    assert findings["bad_v"].runbook == c.RUNBOOK_VERSION_DIR_INVALID
    assert findings["bad_v"].version is None
    assert "fine" not in findings


def test_cpu_host_noise_is_never_a_cause() -> None:
    noise = """W1129 16:55:19.967405 25410 pinned_memory_manager.cc:273] "Unable to allocate pinned system memory, pinned memory pool will not be available: CUDA driver version is insufficient for CUDA runtime version"
I1129 16:55:19.967457 25410 cuda_memory_manager.cc:117] "CUDA memory pool disabled"
E1129 16:55:19.967591 25410 server.cc:241] "CudaDriverHelper has not been initialized."
Error: Failed to initialize NVML
W1129 16:56:39.918144 27012 metrics.cc:798] "DCGM unable to start: DCGM initialization error"
I1129 16:56:39.922000 27012 model_lifecycle.cc:839] "successfully loaded 'ok_model'"
E1129 16:56:42.050546 27012 main.cc:535] "failed to stop server: Internal - Exit timeout expired. Exiting immediately."
"""
    report = diagnose_text(noise)
    assert report.findings == () and report.unmatched == ()
    assert report.harmless_lines >= 4
    assert not report.has_failure


def test_summary_alone_says_the_cause_is_elsewhere() -> None:
    (finding,) = diagnose_text(
        'E1129 16:56:39.918330 27012 tritonserver.cc:2607] "Internal: failed to load all models"'
    ).findings
    assert finding.model is None and finding.runbook == c.RUNBOOK_UNKNOWN_LOAD_FAILURE
    assert "not in this excerpt" in finding.remediation


def test_summary_is_not_a_finding_when_the_cause_is_there() -> None:
    log = LINE + '\nE1129 16:56:39.918330 27012 tritonserver.cc:2607] "Internal: failed to load all models"\n'
    assert runbooks_of(log) == [c.RUNBOOK_PYTHON_MODULE_MISSING]


def test_ensemble_is_listed_after_the_failed_step() -> None:
    log = (
        "E1129 16:56:40.1 1 model_repository_manager.cc:703] \"Invalid argument: ensemble 'pipe' depends on "
        "'step' which has no loaded version. Model 'step' loading failed with error: version 1 is at UNAVAILABLE "
        'state: Internal: RuntimeError: boom\\n\\nAt:\\n  /m/step/1/model.py(3): initialize\\n"\n'
        "E1129 16:56:39.0 1 model_lifecycle.cc:642] \"failed to load 'step' version 1: Internal: RuntimeError: boom"
        '\\n\\nAt:\\n  /m/step/1/model.py(3): initialize\\n"\n'
    )
    first, second = diagnose_text(log).findings
    assert (first.model, first.runbook) == ("step", c.RUNBOOK_PYTHON_MODEL_ERROR)
    assert (second.model, second.runbook, second.consequence_of) == (
        "pipe",
        c.RUNBOOK_ENSEMBLE_DEPENDENCY,
        "step",
    )


def test_ensemble_step_cause_is_inferred_when_its_own_line_is_missing() -> None:
    log = (
        "E1 1 model_repository_manager.cc:703] \"Invalid argument: ensemble 'pipe' depends on 'llm' which has no "
        "loaded version. Model 'llm' loading failed with error: version 1 is at UNAVAILABLE state: Internal: "
        'unexpected error when creating modelInstanceState: [TensorRT-LLM][ERROR] Assertion failed: boom"'
    ).replace("E1 1", "E1129 01:01:00.327910 3545")
    findings = {f.model: f for f in diagnose_text(log).findings}
    assert findings["llm"].runbook == c.RUNBOOK_LLM_BACKEND_CONFIG
    assert findings["pipe"].consequence_of == "llm"


def test_stuck_loading_python_stub_is_a_finding() -> None:
    log = "I1129 16:56:56.950004 27427 pb_stub.cc:2105]  Failed to preinitialize Python stub: Python model file not found in '/repo/m/1/model.py'\n"
    (finding,) = diagnose_text(log).findings
    assert (finding.model, finding.runbook, finding.severity) == (
        "m",
        c.RUNBOOK_MODEL_FILE_MISSING,
        c.IMPACT_CRITICAL,
    )
    assert "LOADING" in finding.remediation


def test_ignored_version_folder_alone_is_a_warning() -> None:
    log = "W1129 16:55:19.970385 25410 model_lifecycle.cc:111] \"ignore version directory '.ipynb_checkpoints' which fails to convert to integral number\""
    (finding,) = diagnose_text(log).findings
    assert finding.runbook == c.RUNBOOK_VERSION_DIR_INVALID and finding.severity == c.IMPACT_WARNING
    assert not diagnose_text(log).has_failure


def test_unknown_error_lines_are_grouped_by_template() -> None:
    log = "".join(
        f'E1129 16:00:0{i}.000000 1 weird.cc:{10 + i}] "flux capacitor {i} overheated at 0x{i:04x} in /opt/x/{i}"\n'
        for i in range(5)
    )
    report = diagnose_text(log)
    # An E line nothing explains is still a failure signal: the fallback finding quotes it (issue 20).
    (finding,) = report.findings
    assert finding.runbook == c.RUNBOOK_UNKNOWN_LOAD_FAILURE and finding.severity == c.IMPACT_CRITICAL
    assert finding.evidence[0].line == 1 and "flux capacitor 0" in finding.evidence[0].text
    (group,) = report.unmatched
    assert group.count == 5 and group.example.line == 1
    assert group.template == "E weird.cc] flux capacitor <n> overheated at <hex> in <path>"


def test_template_of_is_stable() -> None:
    (event,) = parse_text("E1129 16:00:00.000000 1 a.cc:1] \"model 'x' failed 3 times\"")
    assert template_of(event) == "E a.cc] model '<s>' failed <n> times"


# ---------------------------------------------------------------------------- the exporter's entry point
def test_diagnose_reason_keeps_the_exporter_contract() -> None:
    for model, cause in BROKEN_CAUSES.items():
        assert (
            diagnose_reason(f"Internal: {cause}\n\nAt:\n  /m/{model}/1/model.py(3): initialize\n")
            == BROKEN_RUNBOOKS[model]
        )
    assert diagnose_reason("something nobody has seen") == c.RUNBOOK_UNKNOWN_LOAD_FAILURE
    assert (
        diagnose_reason(
            "Invalid argument: ensemble 'e' depends on 'm' which has no loaded version. Model 'm' loading failed with error: version 1 is at UNAVAILABLE state: Internal: ModuleNotFoundError: x"
        )
        == c.RUNBOOK_ENSEMBLE_DEPENDENCY
    )


def test_diagnose_index_entries() -> None:
    index = [
        {"name": "a", "version": "1", "state": "READY"},
        {
            "name": "b",
            "version": "1",
            "state": "UNAVAILABLE",
            "reason": "Internal: ModuleNotFoundError: No module named 'q'",
        },
        {"name": "c"},
    ]
    report = diagnose_index(index)
    assert [(f.model, f.version, f.runbook) for f in report.findings] == [
        ("b", "1", c.RUNBOOK_PYTHON_MODULE_MISSING)
    ]


def test_a_version_unloaded_on_purpose_is_no_finding_of_the_live_index() -> None:
    """After ranker v2 was loaded (`latest: 1`) and rolled back, the index says v1 (then v2) `UNAVAILABLE`
    with the reason `unloaded`: the bot's diagnosis and `/triton diagnose ranker` answered `unknown-load-
    failure` and quoted "ranker v2: UNAVAILABLE: unloaded" in v1's message (journey25)."""
    index = [
        {"name": "ranker", "version": "1", "state": "READY"},
        {"name": "ranker", "version": "2", "state": "UNAVAILABLE", "reason": c.REASON_UNLOADED},
        {"name": "ranker", "version": "3", "state": "UNAVAILABLE", "reason": "Internal: KeyError: 'w'"},
    ]
    report = diagnose_index(index)
    assert [(f.model, f.version) for f in report.findings] == [("ranker", "3")]
    assert not any(c.REASON_UNLOADED in o.text for f in report.findings for o in f.evidence)


def test_classify_rules_are_ordered_specific_first() -> None:
    # A bad enum is a parse error, not a data-type mismatch; an shm failure beats a generic stub error.
    assert (
        classify('Unknown enumeration value of "TYPE_FLOAT32" for field "data_type"')
        == c.RUNBOOK_CONFIG_PARSE_ERROR
    )
    assert (
        classify("Failed to initialize stub: Unable to initialize shared memory key 'x'")
        == c.RUNBOOK_SHM_TOO_SMALL
    )
    assert (
        classify("[TensorRT-LLM][ERROR] Assertion failed: Failed to deserialize cuda engine")
        == c.RUNBOOK_LLM_BACKEND_CONFIG
    )
    assert (
        classify("unable to find backend library for backend '${triton_backend}'")
        == c.RUNBOOK_CONFIG_PARSE_ERROR
    )


# ---------------------------------------------------------------------------- robustness
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=2000))
def test_fuzz_parser_and_engine_never_raise(text: str) -> None:
    for raw in text.splitlines():
        classify_line(raw)
    report = diagnose_events(parse_text(text))
    streamed = Diagnoser().feed_all(parse_text(text)).finish()
    assert streamed.findings == report.findings  # streaming and whole-text diagnosis agree
    assert_well_formed(report, text)


def assert_well_formed(report: Report, text: str) -> None:
    """Every finding names a runbook triage knows and cites lines that exist in the text."""
    n_lines = text.count("\n") + 1
    for finding in report.findings:
        assert finding.runbook in c.LOAD_FAILURE_RUNBOOKS, finding
        assert finding.evidence and all(1 <= e.line <= n_lines for e in finding.evidence), finding


_LOGGY = st.lists(
    st.sampled_from(
        [
            LINE,
            "",
            "| m | 1 | UNAVAILABLE: Internal: x |",
            "|   |   | At: |",
            "+---+",
            "  /x/m/1/model.py(1): <module>",
            "[libprotobuf ERROR x.cc:1] Error parsing text-format inference.ModelConfig: 1:1: bad",
            "error: creating server: Internal - failed to load all models",
            "I1129 00:00:00.000000 1 pb_stub.cc:1]  Failed to initialize Python stub: x",
            '2026-11-29T16:56:37Z E 1 a.cc:1] "boom"',
            '"',
            "\\",
            "E1129",
            'E1129 00:00:00.0 1 a.cc:1] "',
            "| Model | Version | Status |",
        ]
    )
    | st.text(max_size=80),
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(_LOGGY, st.sampled_from([7, 64, 4096]))
def test_fuzz_scanner_agrees_and_never_raises(lines: list[str], chunk: int) -> None:
    text = "\n".join(lines).replace("\x00", "")
    data = text.encode("utf-8", "replace")
    # Text whose first chunk is more than 10% control characters is refused as binary (`holes.looks_binary`,
    # `test_triage_holes.py`); NUL bytes are dropped (ibid.).
    assume(not holes.looks_binary(data[: min(chunk, holes.SNIFF_BYTES)]))
    got = diagnose_events(parse(scan_lines(io.BytesIO(data), chunk_bytes=chunk)))
    want = diagnose_events(parse_text(data.decode("utf-8", "replace")))
    # The same decisions and quoted evidence. A finding's `message` is the raw block it was read from,
    # and the scanner drops lines that cannot matter before a block (`I0` then a traceback frame), so
    # that context text may be shorter than `parse_text`'s.
    assert [replace(f, message="") for f in got.findings] == [replace(f, message="") for f in want.findings]
    assert all(f.message in w.message for f, w in zip(got.findings, want.findings, strict=True))
    assert_well_formed(want, data.decode("utf-8", "replace"))


def test_binary_input_is_an_input_error() -> None:
    with pytest.raises(LogInputError):
        list(scan_lines(io.BytesIO(b"\x7fELF\x00\x00\x01" * 100)))


def test_an_ensemble_config_error_is_its_own_model_not_the_previous_failure() -> None:
    """Lines captured from the real 2.51 server: a syntax error in one model, then an ensemble
    whose step maps a tensor that does not exist (Triton names the ensemble unquoted)."""
    log = (
        'E1129 18:07:49.620107 31703 model_lifecycle.cc:642] "failed to load \'py_syntax\' version 1: '
        "Internal: SyntaxError: expected ':' (model.py, line 2)\"\n"
        'E1129 18:07:50.904240 31703 model_repository_manager.cc:703] "Invalid argument: in ensemble '
        'ens_bad_tensor, ensemble tensor IN is mapping to non-existing input NOPE in model ok_model"\n'
        'E1129 18:07:50.905173 31703 tritonserver.cc:2607] "Internal: failed to load all models"\n'
    )
    runbooks = {f.model: f.runbook for f in diagnose_events(parse_text(log)).findings}
    assert runbooks["py_syntax"] == c.RUNBOOK_PYTHON_MODEL_ERROR
    assert runbooks["ens_bad_tensor"] == c.RUNBOOK_ENSEMBLE_DEPENDENCY


def test_a_live_servers_reason_reaches_the_terminal_without_escape_sequences() -> None:
    # The repository index is the server's text: a colour code or a terminal escape in a model's name or
    # reason is dropped, as a pasted log's are.
    from triton_sre.diagnosis.engine import diagnose_index

    report = diagnose_index(
        [
            {
                "name": "m\x1b[2J",
                "version": "1",
                "state": "UNAVAILABLE",
                "reason": "\x1b[31mInternal:\x1b[0m failed to open text file for read /m/config.pbtxt: No such "
                "file or directory\x07",
            }
        ]
    )
    [finding] = report.findings
    assert finding.model == "m"
    assert all("\x1b" not in e.text and "\x07" not in e.text for e in finding.evidence)


def test_cores_config_modification_time_error_on_a_load_with_its_config_is_harmless() -> None:
    # core r24.08 on logs it at E level and loads the model (a config given with the load request, PyTriton)
    text = (
        'E0509 07:41:06.609621 338401 model_repository_manager.cc:470] "Failed to set config modification time: '
        'model_config_content_name_ is empty"\n'
        'I0509 07:41:06.609824 338401 model_lifecycle.cc:472] "loading: triton_model:1"\n'
        "I0509 07:41:08.400000 338401 model_lifecycle.cc:839] \"successfully loaded 'triton_model'\"\n"
    )
    assert diagnose_events(parse_text(text)).findings == ()


@pytest.mark.parametrize(
    "line",
    [
        # core (filesystem/api.cc ReadTextProto) and TensorRT Inference Server 19.x (TensorFlow's env.cc)
        "E0429 03:18:53.407096 1 model_repository_manager.cc:1234] failed to read text proto from /models/resnet/config.pbtxt",
        "E0429 03:18:53.407096 1 server.cc:620] Can't parse /models/resnet/config.pbtxt as text proto",
    ],
)
def test_a_config_files_folder_names_its_model(line: str) -> None:
    findings = diagnose_events(parse_text(line + "\n")).findings
    assert [(f.model, f.runbook) for f in findings] == [("resnet", c.RUNBOOK_CONFIG_PARSE_ERROR)]


def test_an_unmade_cuda_pool_finalized_at_exit_is_not_a_failure() -> None:
    # tune/server-4165 (a bucket it could not read): core's destructor then finalizes a pool never made.
    finalize = "E0405 20:00:11.055936 1 cuda_memory_manager.cc:66] Failed to finalize CUDA memory manager: [3] CNMEM_STATUS_NOT_INITIALIZED\n"
    report = diagnose_events(parse_text(finalize))
    assert report.findings == () and report.unmatched == () and report.harmless_lines == 1
    failed = "error: creating server: Internal - Could not get MetaData for bucket with name b\n"
    report = diagnose_events(parse_text(failed + finalize))
    assert [f.runbook for f in report.findings] == [c.RUNBOOK_CLOUD_REPOSITORY_ACCESS] and report.unmatched == ()
    # Another status is the pool's own failure, not exit noise.
    other = finalize.replace("[3] CNMEM_STATUS_NOT_INITIALIZED", "[6] CNMEM_STATUS_CUDA_ERROR")
    assert diagnose_events(parse_text(other)).findings != ()
