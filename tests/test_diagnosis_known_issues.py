"""Known issues by release (`known_issues.yaml`): the table's validation, and the entries added from the
release notes read on 2026-12-04, each with a real wording in its range and at both edges; corpus logs
that carry an entry's wording get its advice once the log names a release in range, none without one.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from triton_sre import conventions as c
from triton_sre.diagnosis import known_issues as ki
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.diagnosis.releases import server_release_from_version, server_version_of_release

LOGS = Path(__file__).parent / "data" / "logs"


def banner(release: str) -> str:
    return f"NVIDIA Release {release} (build 1)\n"


def first(text: str):
    report = diagnose_events(parse_text(text))
    assert report.findings, text
    return report.findings[0]


def issue(issue_id: str) -> ki.KnownIssue:
    return next(i for i in ki.known_issues() if i.id == issue_id)


# --- the table


def test_the_shipped_table_loads_with_unique_ids_and_public_sources() -> None:
    issues = ki.known_issues()
    assert len(issues) >= 32
    assert len({i.id for i in issues}) == len(issues)
    for i in issues:
        assert i.source.startswith("https://github.com/"), i.id
        assert i.first is None or i.last is None or i.first <= i.last, i.id
        assert (i.last is None) == (i.ends in ("open", "permanent")), i.id


GOOD = """issues:
  - id: x
    runbooks: [unknown-load-failure]
    wording: 'boom'
    first: "23.01"
    last: "23.02"
    ends: fixed
    advice: Do this.
    source: https://github.com/o/r/issues/1
    note: why
"""


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("runbooks: [unknown-load-failure]", "runbooks: [no-such-page]"), "runbooks"),
        (("runbooks: [unknown-load-failure]", "runbooks: []"), "runbooks"),
        (("wording: 'boom'", "wording: 'bo(om'"), "does not compile"),
        (('first: "23.01"', 'first: "2023.01"'), "release YY.MM"),
        (('first: "23.01"', 'first: "23.05"'), "is after last"),
        (("ends: fixed", "ends: open"), "does not fit last"),
        (('last: "23.02"', "last: null"), "does not fit last"),
        (("ends: fixed", "ends: someday"), "ends must be one of"),
        (("source: https://github.com/o/r/issues/1", "source: server#1"), "https"),
        (("    note: why\n", ""), "exactly the fields"),
        (("advice: Do this.", "advice: ''"), "non-empty"),
    ],
)
def test_a_malformed_entry_is_refused_naming_it(change: tuple[str, str], message: str) -> None:
    assert len(ki.parse_known_issues(GOOD)) == 1
    with pytest.raises(ValueError, match=message) as err:
        ki.parse_known_issues(GOOD.replace(*change))
    assert "entry 0" in str(err.value)


EXPOSED = GOOD + "    exposure: {features: [python-custom-metrics], fails_load: false}\n"


def test_an_entry_may_name_its_exposure() -> None:
    assert ki.parse_known_issues(GOOD)[0].exposure is None
    (entry,) = ki.parse_known_issues(EXPOSED)
    assert entry.exposure == ki.Exposure(("python-custom-metrics",), False)


@pytest.mark.parametrize(
    "bad",
    [
        "features: [], fails_load: false",
        "features: [Python_Metrics], fails_load: false",
        "features: [a, a], fails_load: false",
        "features: [a], fails_load: maybe",
        "features: [a]",
        "features: [a], fails_load: false, why: no",
    ],
)
def test_a_malformed_exposure_is_refused(bad: str) -> None:
    text = EXPOSED.replace("features: [python-custom-metrics], fails_load: false", bad)
    with pytest.raises(ValueError, match="exposure has features") as err:
        ki.parse_known_issues(text)
    assert "entry 0" in str(err.value)


def test_duplicate_ids_and_a_missing_list_are_refused() -> None:
    with pytest.raises(ValueError, match="duplicate ids"):
        ki.parse_known_issues(GOOD + GOOD.removeprefix("issues:\n"))
    with pytest.raises(ValueError, match="no 'issues' list"):
        ki.parse_known_issues("entries: []\n")


# --- the entries added from the release notes, with the wording the failure prints

# Kubelet's event for an image the registry does not have (the 26.11 page: no TensorRT-LLM image).
TRTLLM_IMAGE_PULL = 'Warning  Failed     12s   kubelet  Failed to pull image "nvcr.io/nvidia/tritonserver:{r}-trtllm-python-py3": rpc error: code = NotFound desc = failed to pull and unpack image "nvcr.io/nvidia/tritonserver:{r}-trtllm-python-py3": not found\n'

# core's wording for a backend the backends directory lacks, and for one that does not load.
FT_NOT_FOUND = "E0901 00:00:00.000000 1 model_lifecycle.cc:638] failed to load 'gptj' version 1: Invalid argument: unable to find backend library for backend 'fastertransformer', try specifying runtime on the model configuration.\n"
FT_UNDEFINED = "E0901 00:00:00.000000 1 model_lifecycle.cc:638] failed to load 'gptj' version 1: Not found: unable to load shared library: /opt/tritonserver/backends/fastertransformer/libtriton_fastertransformer.so: undefined symbol: TRITONBACKEND_ModelInstanceReportStatistics\n"

# core src/filesystem/implementations/s3.h (and gcs.h, as.h): a failed mkdir under mkdtemp's folder.
CLOUD_NO_SPACE = "E1001 00:00:00.000000 1 model_lifecycle.cc:638] failed to load 'resnet' version 3: Internal: Failed to create local folder: /tmp/folderq8ZxTk/3, errno:No space left on device\n"

# A crash report after the shutdown's INFO lines (core src/server.cc r22.09, model_lifecycle.cc), as
# Triton's handler prints it: unprefixed, so it continues the INFO line before it.
EXIT_SEGFAULT = """I0901 00:00:00.000000 1 server.cc:264] Waiting for in-flight requests to complete.
I0901 00:00:00.000000 1 server.cc:280] Timeout 30: Found 0 model versions that have in-flight inferences
I0901 00:00:00.000000 1 server.cc:295] All models are stopped, unloading models
I0901 00:00:00.000000 1 model_lifecycle.cc:578] successfully unloaded 'resnet' version 1
Signal (11) received.
 0# 0x000055F7D4359B48 in /opt/tritonserver/bin/tritonserver
 1# 0x00007F3D6BB3C090 in /usr/lib/x86_64-linux-gnu/libc.so.6
"""

# core's wording for a model whose backend the image lacks: the 24.02 containers ship no ONNX Runtime.
ORT_NOT_FOUND = "E0301 00:00:00.000000 1 model_lifecycle.cc:638] failed to load 'densenet_onnx' version 1: Invalid argument: unable to find backend library for backend 'onnxruntime', try specifying runtime on the model configuration.\n"

# server src/command_line_parser.cc (r23.11 on): a reuse-port flag given an integer other than 0 or 1,
# before the usage text.
REUSE_PORT_INT = (
    'Bad option: "--reuse-grpc-port".\ninvalid value for bool option: 2\n\nUsage: tritonserver [options]\n'
)

# A request to a Python model whose stub died while serving (python_backend python_be.cc / stub_launcher.cc),
# as the HTTP endpoint answers it.
STUB_DEAD = """I1201 00:00:00.000000 1 model_lifecycle.cc:839] "successfully loaded 'preprocess'"
{"error":"Stub process 'preprocess_0_0' is not healthy."}
"""

# python_backend stub_launcher.cc on Windows with EXECUTION_ENV_PATH; the Windows build ends with 26.05.
WINDOWS_EXEC_ENV = "E0501 00:00:00.000000 1 model_lifecycle.cc:654] \"failed to load 'pre' version 1: Unsupported: Custom execution environments are not currently supported on Windows.\"\n"

# OpenVINO's refusal of its GPU plugin (core.cpp "Failed to create plugin ... for device GPU", the loader's
# "Cannot load library '<path>': <dlerror>") when the image lacks libOpenCL.so.1 (openvino_backend PR 121).
OPENVINO_NO_OPENCL = "E0901 00:00:00.000000 1 model_lifecycle.cc:654] \"failed to load 'resnet_ov' version 1: Internal: Exception from src/inference/src/cpp/core.cpp:112:\\nException from src/inference/src/dev/plugin.cpp:53:\\nFailed to create plugin /opt/tritonserver/backends/openvino/libopenvino_intel_gpu_plugin.so for device GPU\\nPlease, check your environment\\nCannot load library '/opt/tritonserver/backends/openvino/libopenvino_intel_gpu_plugin.so': libOpenCL.so.1: cannot open shared object file: No such file or directory\\n\"\n"

# The 24.08 notes' iGPU mismatch (from 24.06): TensorRT's refusal as the notes quote it, through the TensorRT
# backend's logger, then core's load error.
TRT_IGPU_24_06 = """E0701 00:00:00.000000 1 logging.cc:43] 1: [stdArchiveReader.cpp::StdArchiveReader::42] Error Code 1: Serialization (Serialization assertion stdVersionRead == serializationVersion failed.Version tag does not match. Note: Current Version: 236, Serialized Engine Version: 237)
E0701 00:00:00.000000 1 logging.cc:43] 4: [runtime.cpp::deserializeCudaEngine::65] Error Code 4: Internal Error (Engine deserialization failed.)
E0701 00:00:00.000000 1 model_lifecycle.cc:641] "failed to load 'densenet_trt' version 1: Internal: unable to create TensorRT engine: Error Code 4: Internal Error (Engine deserialization failed.)"
"""

# The 24.08-25.03 notes' vLLM failure (vllm-project/vllm#6766, the line as vllm#10800 quotes it).
VLLM_TP_EXPLICIT = """I1201 00:00:00.000000 1 model_lifecycle.cc:473] "loading: vllm_model:1"
Fatal Python error: _enter_buffered_busy: could not acquire lock for <_io.BufferedWriter name='<stdout>'> at interpreter shutdown, possibly due to daemon threads
"""

# The 24.09-25.09 vllm backend's metrics setup under a V1 vLLM (heldout73's wording).
VLLM_V1_METRICS = (
    'I0911 08:21:51.554457 1 pb_stub.cc:389] "Failed to initialize Python stub: AttributeError: \'AsyncLLM\' '
    "object has no attribute 'engine'\\n\\nAt:\\n  /opt/tritonserver/backends/vllm/model.py(365): _setup_metrics"
    '\\n  /opt/tritonserver/backends/vllm/model.py(191): initialize\\n"\n'
)

# (entry id, log, release inside, release before the range or None, release after the range or None, the
# runbook of the finding that carries the advice); the releases are read from the banner.
CASES = {
    "tensorflow-2-default": (
        (LOGS / "heldout39" / "server-7072-tf1-contrib-op-not-registered.log").read_text(),
        "22.09",
        "22.07",
        "23.04",
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
    ),
    "tensorflow-1-ops-gone": (
        (LOGS / "heldout39" / "server-7072-tf1-contrib-op-not-registered.log").read_text(),
        "23.05",
        "23.03",
        None,
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
    ),
    "fastertransformer-backend-after-23-07": (
        FT_NOT_FOUND,
        "23.10",
        "23.07",
        None,
        c.RUNBOOK_BACKEND_NOT_FOUND,
    ),
    "malloc-false-memory-leak": (
        (LOGS / "heldout11" / "model-analyzer-357.log").read_text(),
        "23.05",
        "22.11",
        "25.02",
        c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
    ),
    "exit-segfault-22-09": (EXIT_SEGFAULT, "22.09", "22.08", "22.10", c.RUNBOOK_SERVER_CRASHED),
    "cloud-repository-extra-local-copy": (
        CLOUD_NO_SPACE,
        "24.05",
        "23.08",
        "25.02",
        c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
    ),
    "onnxruntime-backend-missing-24-02": (
        ORT_NOT_FOUND,
        "24.02",
        "24.01",
        "24.03",
        c.RUNBOOK_BACKEND_NOT_FOUND,
    ),
    "reuse-port-option-boolean": (REUSE_PORT_INT, "23.12", "23.10", None, c.RUNBOOK_SERVER_OPTION_INVALID),
    "python-stub-dead-model-not-ready": (STUB_DEAD, "26.01", "25.11", "26.04", c.RUNBOOK_PYTHON_MODEL_ERROR),
    "python-stub-dead-server-not-ready": (STUB_DEAD, "26.10", "26.03", None, c.RUNBOOK_PYTHON_MODEL_ERROR),
    "openvino-gpu-plugin-without-opencl": (
        OPENVINO_NO_OPENCL,
        "26.08",
        "25.09",
        "26.09",
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
    ),
    "tensorrt-igpu-24-06-engine-version": (
        TRT_IGPU_24_06,
        "24.07",
        "24.05",
        "24.09",
        c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
    ),
    # First listed in the 24.08 notes (server PR 7807's first commit), not in the 24.10 page's alone.
    "vllm-tp-explicit-model-control": (VLLM_TP_EXPLICIT, "24.08", "24.07", "25.04", c.RUNBOOK_SERVER_CRASHED),
    "vllm-backend-metrics-v0-engine": (
        VLLM_V1_METRICS,
        "25.08",
        "24.08",
        "25.10",
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
    ),
    "python-windows-execution-env": (
        WINDOWS_EXEC_ENV,
        "26.05",
        "24.01",
        "26.06",
        c.RUNBOOK_PYTHON_MODULE_MISSING,
    ),
}


@pytest.mark.parametrize("issue_id", sorted(CASES))
def test_the_advice_holds_in_its_range_only(issue_id: str) -> None:
    log, inside, before, after, runbook = CASES[issue_id]
    entry = issue(issue_id)
    assert (entry.first, entry.last) == (before and _next(before), after and _previous(after))
    f = first(banner(inside) + log)
    assert f.runbook == runbook
    assert entry.advice in f.remediation and entry.source in f.remediation
    assert f"Triton {inside}" in f.release_advice
    for outside in filter(None, (before, after)):
        g = first(banner(outside) + log)
        assert g.runbook == runbook and entry.advice not in g.remediation
    # A log that names no release gets no release advice at all.
    assert first(log).release_advice is None


def _step(release: str, by: int) -> str:
    """The release ``by`` months on from ``release``, as Triton numbers them (25.07 had no minor version: 2.59.1)."""
    minor = int(str(server_version_of_release(release)).split(".")[1])
    return str(server_release_from_version(2, minor + by))


def _next(release: str) -> str:
    return _step(release, 1)


def _previous(release: str) -> str:
    return _step(release, -1)


def test_tensorflow_advice_follows_the_release_that_removed_tensorflow_1() -> None:
    # One wording, two entries: through 23.03 the way back is version=1, from 23.04 it is gone.
    log = (LOGS / "heldout39" / "server-7072-tf1-contrib-op-not-registered.log").read_text()
    in_22 = first(banner("23.03") + log).remediation
    in_23 = first(banner("23.04") + log).remediation
    assert (
        issue("tensorflow-2-default").advice in in_22 and issue("tensorflow-1-ops-gone").advice not in in_22
    )
    assert (
        issue("tensorflow-1-ops-gone").advice in in_23 and issue("tensorflow-2-default").advice not in in_23
    )


@pytest.mark.parametrize(
    ("last_before", "first_after", "old_id", "new_id"),
    [
        # Through 25.11 nothing but the requests tells; from 25.12 the model's readiness does; from 26.04 the
        # server's readiness too. No release restarts the stub.
        ("25.11", "25.12", "python-stub-not-restarted", "python-stub-dead-model-not-ready"),
        ("26.03", "26.04", "python-stub-dead-model-not-ready", "python-stub-dead-server-not-ready"),
    ],
)
def test_a_dead_stub_gets_the_readiness_of_its_release(
    last_before: str, first_after: str, old_id: str, new_id: str
) -> None:
    before = first(banner(last_before) + STUB_DEAD).remediation
    after = first(banner(first_after) + STUB_DEAD).remediation
    old, new = issue(old_id).advice, issue(new_id).advice
    assert old in before and new not in before
    assert new in after and old not in after


def test_a_fastertransformer_library_from_another_release_gets_the_advice_too() -> None:
    f = first(banner("24.01") + FT_UNDEFINED)
    assert f.runbook == c.RUNBOOK_LIBRARY_VERSION_MISMATCH
    assert issue("fastertransformer-backend-after-23-07").advice in f.remediation


def test_a_fastertransformer_crash_is_not_the_build_advice() -> None:
    # fauxpilot#226 (the corpus): the FasterTransformer backend segfaults in 23.04; a crash, whatever the
    # release, is not a build that cannot exist.
    log = (LOGS / "heldout19" / "fauxpilot-226.log").read_text()
    for release in ("23.04", "23.10"):
        f = first(banner(release) + log)
        assert f.runbook == c.RUNBOOK_SERVER_CRASHED
        assert issue("fastertransformer-backend-after-23-07").advice not in f.remediation


def test_the_26_11_trtllm_image_is_read_from_its_own_tag() -> None:
    entry = issue("trtllm-image-not-in-26-11")
    f = first(TRTLLM_IMAGE_PULL.format(r="26.11"))
    assert f.runbook == c.RUNBOOK_IMAGE_PULL_FAILED and entry.advice in f.remediation
    for other in ("26.10", "26.12"):
        assert entry.advice not in first(TRTLLM_IMAGE_PULL.format(r=other)).remediation
    # The plain server image of 26.11 exists: a failed pull of it is another cause.
    plain = TRTLLM_IMAGE_PULL.format(r="26.11").replace("-trtllm-python-py3", "-py3")
    assert entry.advice not in first(plain).remediation


def test_a_crash_while_serving_is_not_the_exit_crash() -> None:
    # The same report after a load, not after the shutdown's lines, is no crash at exit.
    log = "I0901 00:00:00.000000 1 model_lifecycle.cc:693] successfully loaded 'resnet' version 1\nSignal (11) received.\n"
    f = first(banner("22.09") + log)
    assert f.runbook == c.RUNBOOK_SERVER_CRASHED
    assert issue("exit-segfault-22-09").advice not in f.remediation


@pytest.mark.parametrize(
    ("issue_id", "line"),
    [
        # The OOM killer ending another process is not Triton's memory.
        (
            "malloc-false-memory-leak",
            "[ 7334.054832] Out of memory: Killed process 37573 (python3) total-vm:27177560kB, anon-rss:10021200kB\n",
        ),
        # A cloud copy refused for another reason, and a full disk elsewhere, are not the extra copy.
        (
            "cloud-repository-extra-local-copy",
            CLOUD_NO_SPACE.replace("No space left on device", "Permission denied"),
        ),
        (
            "cloud-repository-extra-local-copy",
            "E1001 00:00:00.000000 1 model_lifecycle.cc:638] failed to load 'resnet' version 3: Internal: write /models/resnet/3/model.onnx: No space left on device\n",
        ),
    ],
)
def test_a_wording_does_not_fire_on_another_cause(issue_id: str, line: str) -> None:
    entry = issue(issue_id)
    report = diagnose_events(parse_text(banner("24.05") + line))
    assert all(entry.advice not in f.remediation for f in report.findings)
    assert not entry.wording.search(line)


@pytest.mark.parametrize(
    ("issue_id", "release", "log"),
    [
        # Another backend missing from 24.02 is not the ONNX Runtime gap.
        ("onnxruntime-backend-missing-24-02", "24.02", ORT_NOT_FOUND.replace("onnxruntime", "tensorflow")),
        # Another boolean flag given an integer, and a reuse-port flag given a word, fail in every release.
        ("reuse-port-option-boolean", "23.12", REUSE_PORT_INT.replace("reuse-grpc-port", "allow-metrics")),
        ("reuse-port-option-boolean", "24.05", REUSE_PORT_INT.replace("option: 2", "option: yes")),
        # Another engine-version mismatch in the same releases (tensorrtllm_backend#531's numbers) is not the
        # iGPU image's.
        (
            "tensorrt-igpu-24-06-engine-version",
            "24.06",
            TRT_IGPU_24_06.replace("Current Version: 236", "Current Version: 228"),
        ),
        # Another library the GPU plugin cannot find is not the missing OpenCL loader.
        (
            "openvino-gpu-plugin-without-opencl",
            "26.08",
            OPENVINO_NO_OPENCL.replace("libOpenCL.so.1", "libtbb.so.12"),
        ),
    ],
)
def test_a_release_note_entry_keeps_to_its_own_cause(issue_id: str, release: str, log: str) -> None:
    entry = issue(issue_id)
    assert entry.covers(release)
    f = first(banner(release) + log)
    assert f.runbook == CASES[issue_id][4]
    assert entry.advice not in f.remediation


# --- the 23.11 notes (server PR 6607's RELEASE.md at 2927b38, removed before the merge)

NOTES_23_11 = "2927b38483f671a670a60286bfd6dce322d09fee/RELEASE.md"

# core src/backend_model.cc ResolveBackendPaths for a backend with neither a library nor a model.py: r23.10
# names model.py only, r23.11 and r23.12 name the library too, r24.01 on have another wording.
MODEL_PY_23_10 = "E1013 00:00:00.000000 1 model_lifecycle.cc:638] failed to load 'm' version 1: Invalid argument: unable to find 'onnx/model.py' for model 'm', in /opt/tritonserver/backends/onnx\n"
MODEL_PY_23_11 = "E1113 00:00:00.000000 1 model_lifecycle.cc:638] failed to load 'm' version 1: Invalid argument: unable to find 'libtriton_onnx.so' or 'onnx/model.py' for model 'm', in /opt/tritonserver/backends/onnx\n"


def test_the_23_11_notes_are_the_source_of_the_reuse_port_change() -> None:
    # "Reuse-grpc-port and reuse-http-port are now properly parsed as booleans. 0 and 1 will continue to
    # work as values. Any other integers will throw an error." - in the 23.11 notes, not only 23.12's.
    entry = issue("reuse-port-option-boolean")
    assert entry.source.endswith(NOTES_23_11 + "#known-issues")
    f = first(banner("23.11") + REUSE_PORT_INT)
    assert f.runbook == c.RUNBOOK_SERVER_OPTION_INVALID
    assert entry.advice in f.remediation and NOTES_23_11 in f.remediation
    assert entry.advice not in first(banner("23.10") + REUSE_PORT_INT).remediation


def test_the_23_11_notes_repeat_the_model_py_wording_that_23_11_no_longer_prints() -> None:
    # The 23.11 notes still list "`backend_name /model.py`", "already fixed for future releases": core
    # r23.11 names the library as well, so the advice stays with 23.10's wording and release.
    entry = issue("missing-backend-named-model-py")
    assert (entry.first, entry.last) == ("23.10", "23.10")
    f = first(banner("23.10") + MODEL_PY_23_10)
    assert f.runbook == c.RUNBOOK_BACKEND_NOT_FOUND and entry.advice in f.remediation
    g = first(banner("23.11") + MODEL_PY_23_11)
    assert g.runbook == c.RUNBOOK_BACKEND_NOT_FOUND and entry.advice not in g.remediation


@pytest.mark.parametrize("issue_id", ["fastertransformer-backend-after-23-07", "trtllm-shutdown-core-dump"])
def test_the_23_11_notes_keep_listing_the_open_entries(issue_id: str) -> None:
    # Both are in the 23.11 list (FasterTransformer "up to 23.07"; the TensorRT-LLM core dump at shutdown).
    assert issue(issue_id).covers("23.11") and "23.11" in _yaml_note(issue_id)


def _yaml_note(issue_id: str) -> str:
    """The ``note`` of ``issue_id`` as the shipped YAML writes it (KnownIssue does not keep it)."""
    text = (Path(ki.__file__).parent / ki.KNOWN_ISSUES_FILE).read_text(encoding="utf-8")
    entry = next(e for e in yaml.safe_load(text)["issues"] if e["id"] == issue_id)
    return " ".join(entry["note"].split())


def test_every_entry_needs_its_runbook() -> None:
    # The same wording under another finding gets nothing: the malloc note is about a host OOM kill.
    entry = issue("malloc-false-memory-leak")
    line = "[ 7334.054832] Out of memory: Killed process 37573 (tritonserver)"
    assert ki.notes(c.RUNBOOK_HOST_RESOURCE_EXHAUSTED, line, "23.05")
    assert ki.notes(c.RUNBOOK_GPU_OUT_OF_MEMORY, line, "23.05") == []
    assert entry.covers("22.12") and entry.covers("25.01") and not entry.covers("25.02")


# --- the documentation's table (docs/triage.md, hand-written): one row per entry, as the table says


def doc_row(entry: ki.KnownIssue) -> str:
    """The row docs/triage.md carries for ``entry``."""
    if entry.last is None:
        releases = f"{entry.first} and later" if entry.first else "every release"
    else:
        span = entry.last if entry.first == entry.last else f"{entry.first}–{entry.last}"
        releases = span if entry.first else f"up to {entry.last}"
    runbooks = ", ".join(f"`{r}`" for r in entry.runbooks)
    return f"| `{entry.id}` | {releases} | {entry.ends} | {runbooks} | <{entry.source}> |"


def test_the_triage_page_lists_every_known_issue_with_its_range() -> None:
    page = (Path(__file__).parent.parent / "docs" / "triage.md").read_text(encoding="utf-8")
    rows = [line for line in page.splitlines() if line.startswith("| `") and line.endswith("> |")]
    assert rows == [doc_row(entry) for entry in ki.known_issues()]
