"""`triton-sre lint` checks on small seeded repositories (no server): each finding where it must
appear and not where it must not, its file and line, the output formats and the exit codes."""

from __future__ import annotations

import io
import json
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.diagnosis.catalog import load_catalog
from triton_sre.lint.pydeps import collect_imports
from triton_sre.lint.repository import field_lines

PY = """import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        return []
"""
IO = (
    'input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'
    'output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'
)
SLOS = """slos:
  - name: latency
    type: latency
    models: all
    objective: 99
    period: 30d
    threshold: 200ms
    queue_time_share: 0.5
"""


def config(name: str, mbs: int = 8, extra: str = "") -> str:
    return f'name: "{name}"\nbackend: "python"\nmax_batch_size: {mbs}\n{IO}{extra}'


def seed(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def model(name: str, extra: str = "", mbs: int = 8, model_py: str = PY) -> dict[str, str]:
    return {f"{name}/config.pbtxt": config(name, mbs, extra), f"{name}/1/model.py": model_py}


def lint(repo: Path, *args: str) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["lint", "--format", "json", str(repo), *args])
    return code, json.loads(out.getvalue())


def runbooks(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["model"], f["runbook"]) for f in body["findings"]]


def test_clean_repository_exits_0(tmp_path: Path) -> None:
    repo = seed(tmp_path, model("a", "dynamic_batching { max_queue_delay_microseconds: 100 }\n"))
    assert lint(repo, "--target", "cpu") == (0, {**lint(repo, "--target", "cpu")[1], "findings": []})


def test_dynamic_batching_without_max_batch_size_is_a_warning(tmp_path: Path) -> None:
    repo = seed(
        tmp_path, model("nob", "dynamic_batching { }\n", mbs=0) | model("ok", "dynamic_batching { }\n")
    )
    code, body = lint(repo, "--target", "cpu")
    assert code == 0  # warnings only
    assert runbooks(body) == [("nob", c.RUNBOOK_LINT_DYNAMIC_BATCHING_UNUSED)]
    f = body["findings"][0]
    assert f["severity"] == c.IMPACT_WARNING and f["file"] == "nob/config.pbtxt" and f["line"] == 6


def test_queue_delay_against_the_slo(tmp_path: Path) -> None:
    slo = tmp_path / "slos.yaml"
    slo.write_text(SLOS)
    repo = seed(
        tmp_path / "repo",
        model("slow", "dynamic_batching {\n  max_queue_delay_microseconds: 150000\n}\n")
        | model("fast", "dynamic_batching {\n  max_queue_delay_microseconds: 100000\n}\n"),
    )
    code, body = lint(repo, "--target", "cpu", "--slo-file", str(slo))
    assert code == 0
    assert runbooks(body) == [("slow", c.RUNBOOK_LINT_QUEUE_DELAY_OVER_SLO)]
    f = body["findings"][0]
    assert f["line"] == 7
    assert "150 ms" in f["evidence"][0]["text"] and "100 ms allowed" in f["evidence"][0]["text"]
    # without an SLO there is no budget to compare with
    assert lint(repo, "--target", "cpu")[1]["findings"] == []


def test_preferred_batch_size_above_max_fails(tmp_path: Path) -> None:
    repo = seed(tmp_path, model("p", "dynamic_batching { preferred_batch_size: [ 4, 16 ] }\n"))
    code, body = lint(repo, "--target", "cpu")
    assert code == 1 and body["findings"][0]["severity"] == c.IMPACT_CRITICAL
    assert "16 > max_batch_size 8" in body["findings"][0]["evidence"][0]["text"]


def test_placement(tmp_path: Path) -> None:
    gpu = "instance_group [ { count: 1 kind: KIND_GPU } ]\n"
    pinned = "instance_group [ { count: 2 kind: KIND_GPU gpus: [ 1 ] } ]\n"
    far = "instance_group [ { count: 1 kind: KIND_GPU gpus: [ 5 ] } ]\n"
    repo = seed(tmp_path, model("g", gpu) | model("p", pinned) | model("d") | model("f", far))
    code, body = lint(repo, "--target", "cpu")
    assert code == 1
    assert sorted(runbooks(body)) == [
        ("f", c.RUNBOOK_INSTANCE_GROUP_INVALID),
        ("g", c.RUNBOOK_INSTANCE_GROUP_INVALID),
        ("p", c.RUNBOOK_INSTANCE_GROUP_INVALID),
    ]
    assert body["findings"][0]["line"] == 6
    code, body = lint(repo, "--target", "gpu", "--gpus", "4")
    got = sorted(runbooks(body))
    assert ("d", c.RUNBOOK_LINT_INSTANCE_GROUP_DEFAULT) in got and (
        "g",
        c.RUNBOOK_LINT_INSTANCE_GROUP_DEFAULT,
    ) in got
    assert not [m for m, _ in got if m == "p"]
    assert ("f", c.RUNBOOK_INSTANCE_GROUP_INVALID) in got
    # a single-GPU host: default placement is fine, GPU id 5 is not
    assert sorted(runbooks(lint(repo, "--target", "gpu", "--gpus", "1")[1])) == [
        ("f", c.RUNBOOK_INSTANCE_GROUP_INVALID),
        ("p", c.RUNBOOK_INSTANCE_GROUP_INVALID),
    ]


def test_layout(tmp_path: Path) -> None:
    files = model("m") | {
        "m/model.onnx": "",
        "m/old/model.py": PY,
        "m/labels.txt": "a\n",
        "m/README.md": "docs",
        "notes.txt": "x",
        "README.md": "docs",
        "named/config.pbtxt": 'name: "named"\nbackend: "onnxruntime"\nmax_batch_size: 0\n' + IO,
        "named/1/model_final.onnx": "",
        "custom/config.pbtxt": config("custom", extra='default_model_filename: "net.py"\n'),
        "custom/1/net.py": PY,
    }
    files["m/config.pbtxt"] += 'parameters { key: "labels" value: { string_value: "labels.txt" } }\n'
    code, body = lint(seed(tmp_path, files), "--target", "cpu")
    got = {(f["model"], f["runbook"], f["file"]) for f in body["findings"]}
    assert got == {
        ("named", c.RUNBOOK_MODEL_FILE_MISSING, "named/1"),
        ("m", c.RUNBOOK_LINT_STRAY_ENTRY, "m/model.onnx"),
        ("m", c.RUNBOOK_LINT_STRAY_ENTRY, "m/old"),
        (None, c.RUNBOOK_LINT_STRAY_ENTRY, "notes.txt"),
    }
    missing = next(f for f in body["findings"] if f["model"] == "named")
    assert "model_final.onnx" in missing["evidence"][0]["text"]
    assert code == 1


def test_ensemble_consequence_and_version_policy(tmp_path: Path) -> None:
    ens = (
        'name: "e"\nplatform: "ensemble"\nmax_batch_size: 0\n'
        + IO.replace("IN", "X").replace("OUT", "Y")
        + 'ensemble_scheduling { step [ { model_name: "bad" model_version: -1\n'
        '  input_map { key: "IN" value: "X" } output_map { key: "OUT" value: "Y" } } ] }\n'
    )
    files = model("bad", "instance_group [ { kind: KIND_GPU } ]\n") | {"e/config.pbtxt": ens, "e/1/.keep": ""}
    files |= model("v", "version_policy: { specific: { versions: [ 1, 2 ] } }\n")
    code, body = lint(seed(tmp_path, files), "--target", "cpu")
    assert runbooks(body) == [
        ("bad", c.RUNBOOK_INSTANCE_GROUP_INVALID),
        ("e", c.RUNBOOK_ENSEMBLE_DEPENDENCY),
        ("v", c.RUNBOOK_VERSION_DIR_INVALID),
    ]
    assert body["findings"][2]["line"] == 6
    # with the step fixed, the ensemble is clean
    code, body = lint(tmp_path, "--target", "gpu")
    assert code == 1
    assert runbooks(body) == [("v", c.RUNBOOK_VERSION_DIR_INVALID)]


def test_python_imports(tmp_path: Path) -> None:
    source = (
        "import os\nimport json, numpy\nfrom helper import thing\n"
        "try:\n    import optional_xyz\nexcept ImportError:\n    optional_xyz = None\n"
        "def f():\n    import lazily_missing_xyz\n" + PY
    )
    repo = seed(tmp_path, model("py", model_py=source) | {"py/1/helper.py": "thing = 1\n"})
    sites = collect_imports(source)
    assert [s.module for s in sites][:3] == ["os", "json", "numpy"]
    assert "optional_xyz" not in {s.module for s in sites}
    code, body = lint(repo, "--target", "cpu", "--python", sys.executable)
    assert code == 1
    assert [(f["runbook"], f["line"]) for f in body["findings"]] == [(c.RUNBOOK_PYTHON_MODULE_MISSING, 9)]
    assert "lazily_missing_xyz" in body["findings"][0]["evidence"][0]["text"]
    # without --python the imports are not checked
    assert lint(repo, "--target", "cpu") == (0, lint(repo, "--target", "cpu")[1])


def test_python_probe_never_imports_model_py(tmp_path: Path) -> None:
    marker = tmp_path / "imported"
    source = f"open({str(marker)!r}, 'w').close()\nimport not_here_xyz\n" + PY
    repo = seed(tmp_path / "repo", model("x", model_py=source))
    code, body = lint(repo, "--target", "cpu", "--python", sys.executable)
    assert code == 1 and not marker.exists()
    assert body["findings"][0]["runbook"] == c.RUNBOOK_PYTHON_MODULE_MISSING


def test_a_python_that_exits_silently_is_named_not_left_with_an_empty_reason() -> None:
    """`--python /bin/false` said "--python: /bin/false exited 1: " and nothing after the colon."""
    from triton_sre.lint.pydeps import ProbeError, probe

    with pytest.raises(ProbeError) as caught:
        probe("/bin/false", ["numpy"])
    assert str(caught.value) == "/bin/false exited 1: no error output (is it a Python interpreter?)"


def test_field_lines() -> None:
    text = 'name: "a"\ninput [\n  { name: "I" dims: [ 4 ] },\n  { name: "J" dims: [ -3 ] }\n]\n'
    lines = field_lines(text)
    assert lines["name"] == [1] and lines["input.name"] == [3, 4] and lines["input.dims"] == [3, 4]


def test_dims_and_parse_error_positions(tmp_path: Path) -> None:
    files = {
        "d/config.pbtxt": (
            'name: "d"\nbackend: "python"\nmax_batch_size: 0\ninput [\n'
            '  { name: "A" data_type: TYPE_FP32 dims: [ 4 ] },\n'
            '  { name: "B" data_type: TYPE_FP32 dims: [ 0 ] }\n]\n'
        ),
        "d/1/model.py": PY,
        "p/config.pbtxt": 'name: "p"\nbackend: "python"\nmax_batch_size: 0\n  max_batch_sizes: 4\n',
        "p/1/model.py": PY,
    }
    code, body = lint(seed(tmp_path, files), "--target", "cpu")
    assert code == 1
    got = {f["model"]: (f["runbook"], f["line"], f["column"]) for f in body["findings"]}
    assert got == {
        "d": (c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH, 6, 0),
        "p": (c.RUNBOOK_CONFIG_PARSE_ERROR, 4, 3),
    }


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_text_and_markdown(tmp_path: Path, fmt: str) -> None:
    repo = seed(tmp_path, model("g", "instance_group [ { kind: KIND_GPU } ]\n"))
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["lint", "--format", fmt, "--target", "cpu", str(repo)]) == 1
    text = out.getvalue()
    assert "g/config.pbtxt:6" in text and c.RUNBOOK_INSTANCE_GROUP_INVALID in text
    if fmt == "markdown":
        assert text.startswith("### Triton repository lint")
    clean = seed(tmp_path / "clean", model("ok"))
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["lint", "--format", fmt, str(clean)]) == 0
    assert "no problem found" in out.getvalue()


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    err = io.StringIO()
    with redirect_stderr(err), redirect_stdout(io.StringIO()):
        assert main(["lint", str(tmp_path / "missing")]) == 2
        assert main(["lint", str(tmp_path), "--python", str(tmp_path / "nopython")]) in (0, 2)
        seed(tmp_path, model("x", model_py="import os\n" + PY))
        assert main(["lint", str(tmp_path), "--python", str(tmp_path / "nopython")]) == 2
        bad = tmp_path / "bad.yaml"
        bad.write_text("slos: [ {name: x} ]\n")
        assert main(["lint", str(tmp_path), "--slo-file", str(bad)]) == 2
        with pytest.raises(SystemExit) as exc:
            main(["lint", str(tmp_path), "--target", "tpu"])
        assert exc.value.code == 2
    assert "not a directory" in err.getvalue()


def test_an_empty_folder_or_one_models_directory_is_not_a_repository(tmp_path: Path) -> None:
    """Linting the wrong folder says so (exit 2) rather than "0 model(s) checked, no problem found"."""
    empty = tmp_path / "empty"
    (empty / ".git").mkdir(parents=True)  # hidden entries are not models
    repo = seed(tmp_path / "repo", {**model("a"), **model("b")})
    err = io.StringIO()
    with redirect_stderr(err), redirect_stdout(io.StringIO()) as out:
        assert main(["lint", str(empty)]) == 2
        assert main(["lint", str(repo / "a")]) == 2
        assert main(["lint", str(repo)]) == 0
    assert "the folder is empty" in err.getvalue()
    assert "one model's directory" in err.getvalue() and str(repo.resolve()) in err.getvalue()
    assert "2 model(s) checked" in out.getvalue()
    # a stray config.pbtxt beside model folders is a repository with a stray file, not a model
    (repo / "config.pbtxt").write_text(config("a"))
    code, body = lint(repo)
    assert code == 0 and [f["runbook"] for f in body["findings"]] == [c.RUNBOOK_LINT_STRAY_ENTRY]


def test_every_lint_runbook_has_a_warning_page() -> None:
    catalog = load_catalog(None)
    for rid in c.LINT_RUNBOOKS:
        assert catalog[rid].severity == c.IMPACT_WARNING


def test_platform_and_backend_names_swapped(tmp_path: Path) -> None:
    def swapped(name: str, field: str, file: str) -> dict[str, str]:
        text = config(name, 0).replace('backend: "python"', field)
        return {f"{name}/config.pbtxt": text, f"{name}/1/{file}": ""}

    files = swapped("be_is_platform", 'backend: "onnxruntime_onnx"', "model.onnx")
    files |= swapped("plat_is_backend", 'platform: "onnxruntime"', "model.onnx")
    files |= swapped("plat_unknown", 'platform: "onnx_runtime_thing"', "model.onnx")
    files |= swapped("plat_ok", 'platform: "onnxruntime_onnx"', "model.onnx")
    repo = seed(tmp_path, files)
    for args in (
        ("--target", "cpu"),
        ("--target", "cpu", "--backend-directory", str(seed(tmp_path / "b", {"python/x": ""}))),
    ):
        code, body = lint(repo, *args)
        got = dict(runbooks(body))
        assert got["be_is_platform"] == c.RUNBOOK_BACKEND_PLATFORM_MISMATCH
        assert got["plat_is_backend"] == c.RUNBOOK_BACKEND_PLATFORM_MISMATCH
        assert got["plat_unknown"] == c.RUNBOOK_BACKEND_NOT_FOUND
        assert code == 1
    code, body = lint(repo, "--target", "cpu")
    assert "plat_ok" not in dict(runbooks(body))
    finding = next(f for f in body["findings"] if f["model"] == "be_is_platform")
    assert finding["line"] == 2 and 'platform: "onnxruntime_onnx"' in finding["remediation"]


def test_ensemble_step_version(tmp_path: Path) -> None:
    def ens(name: str, step: str, version: int) -> dict[str, str]:
        text = (
            f'name: "{name}"\nplatform: "ensemble"\nmax_batch_size: 0\n'
            + IO.replace("IN", "X").replace("OUT", "Y")
            + f'ensemble_scheduling {{ step [ {{ model_name: "{step}"\n  model_version: {version}\n'
            '  input_map { key: "IN" value: "X" } output_map { key: "OUT" value: "Y" } } ] }\n'
        )
        return {f"{name}/config.pbtxt": text, f"{name}/1/.keep": ""}

    files = model("one") | model("two") | {"two/2/model.py": PY}
    files |= model("every", "version_policy: { all: {} }\n") | {"every/2/model.py": PY}
    files |= ens("e_missing", "one", 2) | ens("e_policy", "two", 1) | ens("e_latest", "two", 2)
    files |= ens("e_any", "two", -1) | ens("e_all", "every", 1)
    code, body = lint(seed(tmp_path, files), "--target", "cpu")
    got = runbooks(body)
    assert sorted(got) == [
        ("e_missing", c.RUNBOOK_ENSEMBLE_STEP_VERSION),
        ("e_policy", c.RUNBOOK_ENSEMBLE_STEP_VERSION),
    ]
    policy = next(f for f in body["findings"] if f["model"] == "e_policy")
    assert policy["line"] == 7 and "loads 2" in policy["evidence"][0]["text"]
    assert code == 1


def test_instance_group_count_below_one_is_a_warning(tmp_path: Path) -> None:
    files = model("zero", "instance_group [ { count: 0 kind: KIND_CPU } ]\n")
    files |= model("neg", "instance_group [\n  { kind: KIND_CPU },\n  { count: -1 kind: KIND_CPU }\n]\n")
    files |= model("unset", "instance_group [ { kind: KIND_CPU } ]\n")
    code, body = lint(seed(tmp_path, files), "--target", "cpu")
    got = {(f["model"], f["runbook"], f["severity"], f["line"]) for f in body["findings"]}
    assert got == {
        ("zero", c.RUNBOOK_INSTANCE_GROUP_INVALID, c.IMPACT_WARNING, 6),
        ("neg", c.RUNBOOK_INSTANCE_GROUP_INVALID, c.IMPACT_WARNING, 8),
    }
    assert code == 0


# -- hardening (issue #12, defects 4 and 9) --------------------------------------------------------
def test_oversized_config_is_a_parse_error_without_being_read(tmp_path: Path) -> None:
    from triton_sre.lint.repository import MAX_CONFIG_BYTES

    seed(tmp_path, {**model("huge"), **model("big"), **model("ok")})
    with open(tmp_path / "huge" / "config.pbtxt", "ab") as handle:
        handle.truncate(50 * 1024 * 1024)  # sparse: 50 MB that cost no disk
    text = config("big")
    (tmp_path / "big" / "config.pbtxt").write_text(text + "#" * (MAX_CONFIG_BYTES - len(text)) + "\n")
    code, body = lint(tmp_path, "--target", "cpu")
    assert code == 1
    found = {f["model"]: f for f in body["findings"]}
    assert set(found) == {"huge", "big"}
    for name in ("huge", "big"):
        assert found[name]["runbook"] == c.RUNBOOK_CONFIG_PARSE_ERROR
        assert f"larger than {MAX_CONFIG_BYTES} bytes" in json.dumps(found[name])


def test_deeply_nested_config_is_a_parse_error_at_its_line(tmp_path: Path) -> None:
    from triton_sre.lint.repository import MAX_CONFIG_DEPTH

    deep = "parameters " + "{ a " * (MAX_CONFIG_DEPTH + 8) + "}" * (MAX_CONFIG_DEPTH + 8) + "\n"
    ok_depth = '# { { { { { { in a comment\nparameters { key: "k{" value { string_value: "v<[[" } }\n'
    seed(tmp_path, {**model("deep", extra=deep), **model("fine", extra=ok_depth)})
    code, body = lint(tmp_path, "--target", "cpu")
    assert code == 1
    (finding,) = body["findings"]
    assert (finding["model"], finding["runbook"]) == ("deep", c.RUNBOOK_CONFIG_PARSE_ERROR)
    assert finding["line"] == config("deep").count("\n") + 1
    assert f"nested deeper than {MAX_CONFIG_DEPTH}" in json.dumps(finding)


def test_fifo_config_does_not_block(tmp_path: Path) -> None:
    import os

    seed(tmp_path, {"f/1/model.py": PY})
    os.mkfifo(tmp_path / "f" / "config.pbtxt")
    code, body = lint(tmp_path, "--target", "cpu")
    assert code == 1 and body["findings"][0]["runbook"] == c.RUNBOOK_CONFIG_PARSE_ERROR


def test_non_utf8_file_names_are_valid_json_and_lossless(tmp_path: Path) -> None:
    import base64
    import os
    import re

    raw_name = b"m\x80od\xffel"
    model_dir = os.path.join(os.fsencode(tmp_path), raw_name)
    os.makedirs(os.path.join(model_dir, b"1"))
    with open(os.path.join(model_dir, b"config.pbtxt"), "w") as handle:
        handle.write(config("other"))  # the name differs from the directory: one finding
    with open(os.path.join(model_dir, b"1", b"model.py"), "w") as handle:
        handle.write(PY)
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["lint", "--format", "json", "--target", "cpu", str(tmp_path)]) == 1
    raw = out.getvalue().encode("utf-8")  # strict: a lone surrogate would raise here
    assert not re.search(rb"(?<!\\)(?:\\\\)*\\u[dD][89a-fA-F]", raw)  # nor escaped as \udcXX
    body = json.loads(raw.decode("utf-8", "strict"))
    json.dumps(body, ensure_ascii=False).encode("utf-8")  # every string is valid Unicode
    (finding,) = body["findings"]
    assert finding["model"] == "m\\x80od\\xffel"
    assert base64.b64decode(finding["model_b64"]) == raw_name
    assert base64.b64decode(finding["file_b64"]) == raw_name + b"/config.pbtxt"
    text = io.StringIO()
    with redirect_stdout(text):
        main(["lint", "--target", "cpu", str(tmp_path)])
    text.getvalue().encode("utf-8")  # the text report prints on a strict UTF-8 terminal too


def test_a_symlink_loop_is_a_finding_on_that_entry_and_hides_nothing(tmp_path: Path) -> None:
    """`ln -s b a; ln -s a b` at the top level aborted lint (exit 2, 'cannot list the repository: Too
    many levels of symbolic links'); inside a model folder it emptied the listing, a false
    version-dir-invalid though 1/ exists. Now each loop is a finding on that entry, the rest checked:
    critical, since Triton's poll stops at it (tests/test_fault_probes_round14.py, the real server)."""
    repo = seed(tmp_path / "repo", {**model("a", "dynamic_batching { }\n")})
    for folder in (repo, repo / "a"):
        (folder / "x").symlink_to("y")
        (folder / "y").symlink_to("x")
    code, body = lint(repo, "--target", "cpu")
    assert code == 1, body
    found = {(f["model"], f["runbook"], f["file"], f["severity"]) for f in body["findings"]}
    where = [("a", "a/x"), ("a", "a/y"), (None, "x"), (None, "y")]
    expected = [(m, c.RUNBOOK_PERMISSION_DENIED, f, c.IMPACT_CRITICAL) for m, f in where]
    assert found == set(expected) and len(body["findings"]) == 4, body["findings"]
    assert all("Too many levels of symbolic links" in f["evidence"][0]["text"] for f in body["findings"])


def test_a_circular_ensemble_is_critical(tmp_path: Path) -> None:
    """e1 -> e2 -> e1 linted clean; Triton refuses it ('circular dependency between ensembles',
    core's ensemble_utils.cc) and loads neither. Each ensemble on the cycle is reported at its step,
    an ensemble calling one of them as a consequence."""

    def ens(name: str, step: str) -> dict[str, str]:
        text = (
            f'name: "{name}"\nplatform: "ensemble"\nmax_batch_size: 0\n'
            + IO.replace("IN", "X").replace("OUT", "Y")
            + f'ensemble_scheduling {{ step [ {{ model_name: "{step}"\n  model_version: -1\n'
            '  input_map { key: "X" value: "X" } output_map { key: "Y" value: "Y" } } ] }\n'
        )
        return {f"{name}/config.pbtxt": text, f"{name}/1/.keep": ""}

    files = ens("e1", "e2") | ens("e2", "e1") | ens("me", "me") | ens("caller", "e1")
    code, body = lint(seed(tmp_path, files), "--target", "cpu")
    assert code == 1
    found = sorted((f["model"], f["runbook"], f["severity"], f["line"]) for f in body["findings"])
    assert found == [
        (m, c.RUNBOOK_ENSEMBLE_DEPENDENCY, c.IMPACT_CRITICAL, 6) for m in ("caller", "e1", "e2", "me")
    ], body["findings"]
    texts = [f["evidence"][0]["text"] for f in sorted(body["findings"], key=lambda f: f["model"])]
    assert "ensemble step model 'e1' will fail to load" in texts[0]  # the caller: a consequence
    assert "circular dependency between ensembles: e1 -> e2 -> e1" in texts[1]
    assert "circular dependency between ensembles: e2 -> e1 -> e2" in texts[2]
    assert "circular dependency between ensembles: me -> me" in texts[3]
