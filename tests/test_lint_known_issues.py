"""`lint --release`: the target release's known issues (diagnosis' known_issues.yaml, `exposure:`) that a
repository's models would hit. Each detector on a repository that has its feature and on a near one that
does not; every mapped entry at the edges of its range; --from-release; the docs' list of mapped entries."""

from __future__ import annotations

import io
import json
import zipfile
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.diagnosis import known_issues as ki
from triton_sre.diagnosis.catalog import load_catalog
from triton_sre.lint.exposure import DETECTORS, OPENVINO_DEVICE, VLLM_MODEL_JSON, Files, _instances_per_gpu
from triton_sre.lint.known import exposed, known_issue_issues, releases_of
from triton_sre.lint.repository import load_repository
from triton_sre.lint.upgrade import ENV_PARAMETER, MODEL_DIR_VARIABLE

MODEL = "m"
METRICS_PY = (
    "import triton_python_backend_utils as pb_utils\n\n\n"
    "class TritonPythonModel:\n"
    "    def initialize(self, args):\n"
    "        family = pb_utils.MetricFamily(\n"
    '            name="requests", description="d", kind=pb_utils.MetricFamily.COUNTER\n'
    "        )\n"
    '        self.metric = family.Metric(labels={"model": "m"})\n'
)
PLAIN_PY = (
    "class TritonPythonModel:\n    def execute(self, requests):\n        return []  # no MetricFamily here\n"
)


def zipped(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


# TorchScript archives: the legacy format (PyTorch < 1.4: model.json, tensors/) and today's (data.pkl)
LEGACY_PT = zipped({"m/version": b"1", "m/model.json": b"{}", "m/tensors/0": b"\0" * 8, "m/code/m.py": b""})
CURRENT_PT = zipped(
    {
        "m/version": b"3",
        "m/data.pkl": b"\x80\x02}q\x00.",
        "m/code/__torch__.py": b"",
        "m/extra/model.json": b"{}",
    }
)  # with a file saved beside it (torch.jit.save's _extra_files) that happens to be called model.json


def param(key: str, value: str) -> str:
    return f'parameters {{ key: "{key}" value {{ string_value: "{value}" }} }}\n'


@dataclass(frozen=True)
class Spec:
    """A model: its backend line, config text past it, and files under its directory."""

    backend: str | None
    extra: str = ""
    files: dict[str, bytes | str] = field(default_factory=dict)


def python(extra: str = "", source: str = PLAIN_PY) -> Spec:
    return Spec('backend: "python"', extra, {"1/model.py": source})


TP2_JSON = '{\n  "model": "x",\n  "tensor_parallel_size": 2\n}\n'
# feature -> (a model that shows it, a near model that does not)
FEATURES: dict[str, tuple[Spec, Spec]] = {
    "execution-env-model-directory": (
        python(param(ENV_PARAMETER, f"{MODEL_DIR_VARIABLE}/env.tar.gz")),
        python(param(ENV_PARAMETER, "/opt/envs/env.tar.gz")),
    ),
    "python-custom-metrics": (python(source=METRICS_PY), python(source=PLAIN_PY)),
    "fil-xgboost-json": (
        Spec('backend: "fil"', param("model_type", "xgboost_json"), {"1/xgboost.json": "{}"}),
        Spec('backend: "fil"', param("model_type", "xgboost"), {"1/xgboost.model": "x"}),
    ),
    "fil-treelite-checkpoint": (
        Spec('backend: "fil"', param("model_type", "treelite_checkpoint"), {"1/checkpoint.tl": "x"}),
        Spec('backend: "fil"', param("model_type", "lightgbm"), {"1/model.txt": "x"}),
    ),
    "onnx-tensorrt-accelerator": (
        Spec(
            'backend: "onnxruntime"',
            "optimization { execution_accelerators {"
            ' gpu_execution_accelerator: [ { name: "tensorrt" } ] } }\n',
            {"1/model.onnx": b"x"},
        ),
        Spec(
            'backend: "onnxruntime"',
            "optimization { execution_accelerators {"
            ' cpu_execution_accelerator: [ { name: "openvino" } ] } }\n',
            {"1/model.onnx": b"x"},
        ),
    ),
    "several-instances-per-gpu": (
        python("instance_group [ { count: 1 kind: KIND_GPU gpus: [ 0 ] }, { count: 1 kind: KIND_GPU } ]\n"),
        python(
            "instance_group [ { count: 1 kind: KIND_GPU gpus: [ 0 ] },"
            " { count: 1 kind: KIND_GPU gpus: [ 1 ] }, { count: 4 kind: KIND_CPU } ]\n"
        ),
    ),
    "torchscript-legacy-format": (
        Spec('platform: "pytorch_libtorch"', "", {"1/model.pt": LEGACY_PT}),
        Spec('platform: "pytorch_libtorch"', "", {"1/model.pt": CURRENT_PT}),
    ),
    "vllm-tensor-parallel": (
        Spec('backend: "vllm"', "", {f"1/{VLLM_MODEL_JSON}": TP2_JSON}),
        Spec(
            'backend: "vllm"',
            "",
            {
                f"1/{VLLM_MODEL_JSON}": json.dumps(
                    {"model": "x", "tensor_parallel_size": 2, "distributed_executor_backend": "ray"}
                )
            },
        ),
    ),
    "openvino-gpu-device": (
        Spec('backend: "openvino"', param(OPENVINO_DEVICE, "GPU"), {"1/model.xml": "x", "1/model.bin": "x"}),
        Spec('backend: "openvino"', param(OPENVINO_DEVICE, "CPU"), {"1/model.xml": "x", "1/model.bin": "x"}),
    ),
    "onnxruntime-backend": (
        Spec('platform: "onnxruntime_onnx"', "", {"1/model.onnx": b"x"}),
        Spec('platform: "tensorrt_plan"', "", {"1/model.plan": b"x"}),
    ),
    "tensorrt-backend": (
        Spec('backend: "tensorrt"', "", {"1/model.plan": b"x"}),
        Spec('backend: "onnxruntime"', "", {"1/model.onnx": b"x"}),
    ),
    "tensorrtllm-backend": (
        Spec('backend: "tensorrtllm"', "", {"1/.keep": ""}),
        python(),
    ),
    "fastertransformer-backend": (
        Spec('backend: "fastertransformer"', "", {"1/.keep": ""}),
        Spec('backend: "tensorrtllm"', "", {"1/.keep": ""}),
    ),
}


def seed(root: Path, spec: Spec, name: str = MODEL) -> Path:
    model = root / name
    model.mkdir(parents=True)
    header = f'name: "{name}"\n' + (f"{spec.backend}\n" if spec.backend else "")
    (model / "config.pbtxt").write_text(header + spec.extra)
    for rel, data in spec.files.items():
        path = model / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data) if isinstance(data, bytes) else path.write_text(data)
    return root


def combined(features: tuple[str, ...]) -> Spec:
    """One model showing every feature (the backend of the feature that names one)."""
    specs = [FEATURES[f][0] for f in features]
    backend = [s for s in specs if s.backend != python().backend] or specs
    files: dict[str, bytes | str] = {}
    for spec in (*specs, backend[0]):
        files.update(spec.files)
    if backend[0].backend != python().backend:
        files.pop("1/model.py", None)
    return Spec(backend[0].backend, "".join(dict.fromkeys(s.extra for s in specs)), files)


def entry(issue_id: str) -> ki.KnownIssue:
    return next(i for i in ki.known_issues() if i.id == issue_id)


MAPPED = {i.id: i for i in ki.known_issues() if i.exposure is not None}


# --- the mapping -----------------------------------------------------------------------------------------


def test_every_exposure_names_a_known_detector_and_every_detector_is_tested() -> None:
    used = {feature for issue in MAPPED.values() for feature in issue.exposure.features}  # type: ignore[union-attr]
    assert used <= set(DETECTORS), used - set(DETECTORS)
    assert set(FEATURES) == set(DETECTORS)
    assert used == set(DETECTORS)  # no detector nothing uses


def test_the_entries_mapped() -> None:
    features = {i: issue.exposure.features for i, issue in MAPPED.items()}  # type: ignore[union-attr]
    assert features == {
        "fil-xgboost-json-before-1-7": ("fil-xgboost-json",),
        "fil-treelite-checkpoint-version": ("fil-treelite-checkpoint",),
        "execution-env-model-directory": ("execution-env-model-directory",),
        "python-custom-metrics-shutdown-crash": ("python-custom-metrics",),
        "python-custom-metrics-reload-crash": ("python-custom-metrics",),
        "onnxruntime-trt-ep-instances-crash": ("onnx-tensorrt-accelerator", "several-instances-per-gpu"),
        "pytorch-legacy-torchscript": ("torchscript-legacy-format",),
        "tensorrt-instances-signal-6": ("tensorrt-backend", "several-instances-per-gpu"),
        "trtllm-shutdown-core-dump": ("tensorrtllm-backend",),
        "vllm-tp-explicit-model-control": ("vllm-tensor-parallel",),
        "fastertransformer-backend-after-23-07": ("fastertransformer-backend",),
        "trtllm-image-not-in-26-11": ("tensorrtllm-backend",),
        "onnxruntime-backend-missing-24-02": ("onnxruntime-backend",),
        "openvino-gpu-plugin-without-opencl": ("openvino-gpu-device",),
    }
    # only entries whose model cannot load have the runbook's severity; crashes and conditional ones warn
    fails = {i for i, issue in MAPPED.items() if issue.exposure.fails_load}  # type: ignore[union-attr]
    assert fails == {
        "execution-env-model-directory",
        "pytorch-legacy-torchscript",
        "fastertransformer-backend-after-23-07",
        "trtllm-image-not-in-26-11",
        "onnxruntime-backend-missing-24-02",
        "openvino-gpu-plugin-without-opencl",
    }
    catalog = load_catalog()
    for issue_id in fails:  # "the runbook's usual severity" is what lint writes for them
        assert catalog[MAPPED[issue_id].runbooks[0]].severity == c.IMPACT_CRITICAL, issue_id


def test_an_unknown_feature_is_an_error_naming_the_entry(tmp_path: Path) -> None:
    repo = load_repository(seed(tmp_path, python()))
    bad = replace(entry("trtllm-shutdown-core-dump"), exposure=ki.Exposure(("nope",), False))
    with pytest.raises(ValueError, match=r"trtllm-shutdown-core-dump.*'nope'"):
        exposed(repo.models[MODEL], bad, Files())


# --- each detector -------------------------------------------------------------------------------------


@pytest.mark.parametrize("feature", sorted(FEATURES))
def test_detector_finds_its_feature_and_not_a_near_miss(tmp_path: Path, feature: str) -> None:
    has, lacks = FEATURES[feature]
    detect = DETECTORS[feature]
    repo = load_repository(seed(tmp_path / "has", has))
    site = detect(repo.models[MODEL], Files())
    assert site is not None and site.file.is_file() and site.line >= 1 and site.what
    repo = load_repository(seed(tmp_path / "lacks", lacks))
    assert detect(repo.models[MODEL], Files()) is None


def test_sites_name_the_file_and_line(tmp_path: Path) -> None:
    repo = load_repository(seed(tmp_path, python(source=METRICS_PY)))
    site = DETECTORS["python-custom-metrics"](repo.models[MODEL], Files())
    assert site is not None and site.file.name == "model.py" and site.line == 6 and site.version == "1"
    has = FEATURES["vllm-tensor-parallel"][0]
    repo = load_repository(seed(tmp_path / "v", has))
    site = DETECTORS["vllm-tensor-parallel"](repo.models[MODEL], Files())
    assert site is not None and site.file.name == VLLM_MODEL_JSON and site.line == 3


@pytest.mark.parametrize(
    ("groups", "most"),
    [
        ([], 0),
        ([(2, 1, ())], 2),  # count 2 on every GPU
        ([(1, 1, (0, 1)), (1, 1, (2,))], 1),
        ([(1, 1, (0,)), (1, 1, (0,))], 2),
        ([(1, 1, (0,)), (1, 0, ())], 2),  # KIND_AUTO on every GPU, GPU 0 also pinned
        ([(8, 2, ())], 0),  # KIND_CPU
        ([(0, 1, ())], 1),  # count 0 loads one instance
    ],
)
def test_instances_per_gpu(groups: list[tuple[int, int, tuple[int, ...]]], most: int) -> None:
    from tritonclient.grpc import model_config_pb2

    config = model_config_pb2.ModelConfig(
        instance_group=[model_config_pb2.ModelInstanceGroup(count=n, kind=k, gpus=g) for n, k, g in groups]
    )
    assert _instances_per_gpu(config.instance_group) == most


# --- each mapped entry at its range's edges ------------------------------------------------------------


def shifted(release: str, months: int) -> str:
    yy, mm = map(int, release.split("."))
    total = yy * 12 + mm - 1 + months
    return f"{total // 12:02d}.{total % 12 + 1:02d}"


@pytest.mark.parametrize("issue_id", sorted(MAPPED))
def test_each_mapped_entry_holds_from_its_first_to_its_last_release(tmp_path: Path, issue_id: str) -> None:
    issue = MAPPED[issue_id]
    repo = load_repository(seed(tmp_path, combined(issue.exposure.features)))  # type: ignore[union-attr]
    severity = c.IMPACT_CRITICAL if issue.exposure.fails_load else c.IMPACT_WARNING  # type: ignore[union-attr]

    def found(release: str, source: str | None = None) -> list[tuple[str, str, str]]:
        return [(i.model, i.runbook, i.severity) for i in known_issue_issues(repo, release, source, [issue])]

    inside = [r for r in (issue.first, issue.last) if r is not None] or ["24.05"]
    for release in inside:
        assert found(release) == [(MODEL, issue.runbooks[0], severity)], release
        assert found(release, release) == [(MODEL, issue.runbooks[0], c.IMPACT_INFO)], release
    if issue.first is not None:
        assert found(shifted(issue.first, -1)) == []
        assert found(issue.first, shifted(issue.first, -1))[0][2] == severity  # new with the upgrade
    if issue.last is not None:
        assert found(shifted(issue.last, 1)) == []
    (finding,) = known_issue_issues(repo, inside[0], None, [issue])
    assert issue.source in finding.message and issue.id in finding.message
    assert finding.remediation == issue.advice


def test_a_model_without_the_feature_gets_nothing(tmp_path: Path) -> None:
    repo = load_repository(seed(tmp_path, python()))
    assert known_issue_issues(repo, "24.05") == []


def test_ranges_in_words() -> None:
    assert releases_of(entry("python-custom-metrics-shutdown-crash")) == "23.05–26.08"
    assert releases_of(entry("python-custom-metrics-reload-crash")) == "23.05 and later"
    assert releases_of(entry("execution-env-model-directory")) == "up to 21.08"
    assert releases_of(entry("onnxruntime-backend-missing-24-02")) == "24.02"


# --- through the command -------------------------------------------------------------------------------


def lint(repo: Path, *args: str) -> tuple[int, dict[str, Any]]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["lint", "--format", "json", "--target", "cpu", str(repo), *args])
    return code, json.loads(out.getvalue())


def rows(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["runbook"], f["severity"]) for f in body["findings"]]


def test_custom_metrics_before_an_upgrade(tmp_path: Path) -> None:
    repo = seed(tmp_path, python(source=METRICS_PY))
    crash = (c.RUNBOOK_SERVER_CRASHED, c.IMPACT_WARNING)
    code, body = lint(repo, "--release", "24.05")
    assert code == 0 and rows(body) == [crash, crash]  # the shutdown crash and the reload crash
    finding = body["findings"][0]
    assert (finding["file"], finding["line"]) == ("m/1/model.py", 6)
    assert entry("python-custom-metrics-shutdown-crash").source in finding["evidence"][0]["text"]
    assert lint(repo, "--release", "23.04")[1]["findings"] == []  # before custom metrics existed
    # from 23.05, which has both already: no new problem of the upgrade
    info = (c.RUNBOOK_SERVER_CRASHED, c.IMPACT_INFO)
    assert rows(lint(repo, "--release", "24.05", "--from-release", "23.05")[1]) == [info, info]
    assert rows(lint(repo, "--release", "24.05", "--from-release", "23.04")[1]) == [crash, crash]
    assert lint(repo)[1]["findings"] == []  # no --release: no upgrade check


def test_model_directory_in_the_environment_path_on_an_old_release(tmp_path: Path) -> None:
    repo = seed(tmp_path, FEATURES["execution-env-model-directory"][0])
    code, body = lint(repo, "--release", "21.08")
    assert code == 1 and rows(body) == [(c.RUNBOOK_PYTHON_MODULE_MISSING, c.IMPACT_CRITICAL)]
    assert body["findings"][0]["file"] == "m/config.pbtxt"
    clean = {**body, "findings": [], "release": "21.09", "server_version": "2.14"}
    assert lint(repo, "--release", "21.09") == (0, clean)


def test_onnx_models_on_24_02(tmp_path: Path) -> None:
    repo = seed(tmp_path, FEATURES["onnxruntime-backend"][0])
    code, body = lint(repo, "--release", "24.02", "--from-release", "24.01")
    assert code == 1 and rows(body) == [(c.RUNBOOK_BACKEND_NOT_FOUND, c.IMPACT_CRITICAL)]
    assert lint(repo, "--release", "24.03", "--from-release", "24.02")[1]["findings"] == []


def test_a_trtllm_model_on_26_11_whose_image_is_not_released(tmp_path: Path) -> None:
    repo = seed(tmp_path, FEATURES["tensorrtllm-backend"][0])
    code, body = lint(repo, "--release", "26.11", "--from-release", "26.10")
    image = (c.RUNBOOK_IMAGE_PULL_FAILED, c.IMPACT_CRITICAL)
    assert code == 1 and image in rows(body)
    finding = next(f for f in body["findings"] if f["runbook"] == c.RUNBOOK_IMAGE_PULL_FAILED)
    assert entry("trtllm-image-not-in-26-11").source in finding["evidence"][0]["text"]
    assert image not in rows(lint(repo, "--release", "26.10")[1])


def doc_row(issue: ki.KnownIssue) -> str:
    """The row docs/lint.md carries for a mapped entry."""
    exposure = issue.exposure
    assert exposure is not None
    features = " + ".join(f"`{f}`" for f in exposure.features)
    severity = "runbook's (critical)" if exposure.fails_load else c.IMPACT_WARNING
    finding = f"`{issue.runbooks[0]}`, {severity}"
    return f"| `{issue.id}` | {releases_of(issue)} | {features} | {finding} | <{issue.source}> |"


def test_the_lint_page_lists_every_mapped_entry() -> None:
    page = (Path(__file__).parent.parent / "docs" / "lint.md").read_text(encoding="utf-8")
    section = page.split("### Known issues of the target release", 1)[1].split("\n## ", 1)[0]
    listed = [line for line in section.splitlines() if line.startswith("| `")]
    assert listed == [doc_row(issue) for issue in MAPPED.values()]


def test_the_text_output_keeps_a_long_findings_source_link_whole(tmp_path: Path) -> None:
    """journey27: `lint --release 25.01 --from-release 24.10` on a model with custom metrics cut the
    evidence at 240 characters inside its source link (`see https://github.com/triton-inference-server/server…`)."""
    repo = seed(tmp_path, python(source=METRICS_PY))
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        main(["lint", "--target", "cpu", str(repo), "--release", "25.01", "--from-release", "24.10"])
    text = out.getvalue()
    for issue_id in ("python-custom-metrics-shutdown-crash", "python-custom-metrics-reload-crash"):
        assert f" {entry(issue_id).source}\n" in text  # the whole link, at the end of its line
    evidence = [line for line in text.splitlines() if line.startswith("   line ")]
    assert len(evidence) == 2 and all(len(line) <= 260 for line in evidence)
    assert all("… https://" in line for line in evidence)  # cut before the link, not inside it
