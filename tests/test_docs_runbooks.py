"""What runbooks/ tells the on-call engineer to run works (runbooks34's reading of the pages as the
engineer at 3 a.m., bench/RESULTS.md): every `triton-sre` command line parses with the CLI's parser,
every metric a page names is one Triton, the exporter or the recording rules define, every PromQL query
parses, every `kubectl` line names the shipped deployment's objects, containers, labels and the
adapter's metric names, and every Triton endpoint a page curls answers on the real 2.51 with the
fields its `jq` filter selects. test_docs_statements.py does the same for README.md and docs/."""

from __future__ import annotations

import contextlib
import io
import itertools
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
import yaml
from binaries import binary
from test_docs_statements import leaf_parsers

from triton_sre import conventions as c
from triton_sre.cli import build_parser
from triton_sre.conventions.triton_releases import TRITON_FAMILIES

ROOT = Path(__file__).resolve().parent.parent
RUNBOOKS = sorted((ROOT / "runbooks").glob("*.md"))
K8S = ROOT / "deploy" / "k8s"

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
_SPAN = re.compile(r"(`+)((?:(?!\1).)+?)\1", re.S)
_REDIRECT = re.compile(r"\s\d?>&?\s*(?:\d|/dev/null)\b")
_PLACEHOLDER = re.compile(r"(^|[^\w<])<([\w-]+)>")
_OPERATORS = {"|", "||", "&&", ";"}


@dataclass(frozen=True)
class Command:
    where: str  # page:line
    argv: tuple[str, ...]
    text: str  # the whole line it is part of, comment included


def shell_commands(page: Path) -> list[Command]:
    """Each simple command of a page's fenced shell blocks: continuation lines joined, the trailing
    comment and redirections dropped, pipelines and lists split (quotes kept whole, as a shell would)."""
    text = page.read_text(encoding="utf-8")
    out = []
    for block in _FENCE.finditer(text):
        if block.group(1) not in ("sh", "bash", "shell"):
            continue
        first = text.count("\n", 0, block.start(2)) + 1
        held, start = "", 0
        for offset, raw in enumerate(block.group(2).split("\n")):
            line, held, start = held + raw, "", start if held else offset
            if line.endswith("\\"):
                held = line[:-1] + " "
                continue
            code = re.sub(r"\s#\s.*$", "", line)
            if not code.strip():
                continue
            # <placeholders> are words, not redirections
            code = _PLACEHOLDER.sub(r"\1__ph__\2__ph__", _REDIRECT.sub(" ", code))
            lexer = shlex.shlex(code, posix=True, punctuation_chars=True)
            lexer.whitespace_split = True
            argv: list[str] = []
            for token in [*lexer, ";"]:
                if token in _OPERATORS:
                    if argv:
                        out.append(Command(f"{page.name}:{first + start}", tuple(argv), line))
                    argv = []
                else:
                    argv.append(re.sub(r"__ph__([\w-]+)__ph__", r"<\1>", token))
    return out


def all_commands(name: str) -> list[Command]:
    return [cmd for page in RUNBOOKS for cmd in shell_commands(page) if cmd.argv[0] == name]


def prose_spans(page: Path) -> list[str]:
    return [m.group(2) for m in _SPAN.finditer(_FENCE.sub("", page.read_text(encoding="utf-8")))]


def test_the_extractor_reads_a_shell_block(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text(
        "x\n```sh\ncurl -s -X POST h/v2/repository/index | jq '.[] | select(.a==\"b\")'   # state\n"
        "kubectl logs <pod> --previous 2>&1 | triton-sre triage -\ntriton-sre lint r \\\n  --gpus 4\n```\n"
    )
    assert [(cmd.where, cmd.argv) for cmd in shell_commands(page)] == [
        ("p.md:3", ("curl", "-s", "-X", "POST", "h/v2/repository/index")),
        ("p.md:3", ("jq", '.[] | select(.a=="b")')),
        ("p.md:4", ("kubectl", "logs", "<pod>", "--previous")),
        ("p.md:4", ("triton-sre", "triage", "-")),
        ("p.md:5", ("triton-sre", "lint", "r", "--gpus", "4")),
    ]


# -- triton-sre command lines ----------------------------------------------------------------------------
def test_every_triton_sre_command_line_parses() -> None:
    """A copied line must run: `doctor` without its required --triton-url and `rollout check
    --prometheus ...` (an elided URL) did not."""
    commands = all_commands("triton-sre")
    assert len(commands) > 40
    refused = []
    for cmd in commands:
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                build_parser().parse_args(list(cmd.argv[1:]))
        except SystemExit:
            refused.append(f"{cmd.where}: {' '.join(cmd.argv)}: {err.getvalue().strip().splitlines()[-1]}")
    assert refused == []


def test_every_triton_sre_command_in_prose_names_a_command_and_its_flags() -> None:
    """`triton-sre lint --gpus N` in a sentence: the words are a command, the flags are its flags."""
    leaves = {path: parser for path, parser in leaf_parsers(build_parser())}
    wrong = []
    for page in RUNBOOKS:
        for span in prose_spans(page):
            if not span.startswith("triton-sre "):
                continue
            words = span.split()[1:]
            path = tuple(w for w in words if not w.startswith("-"))
            matches = [p for p in leaves if path[: len(p)] == p or p[: len(path)] == path]
            flags = [w.split("=")[0] for w in words if w.startswith("--")]
            options = {o for p in matches for a in leaves[p]._actions for o in a.option_strings}
            if not matches or [f for f in flags if f not in options]:
                wrong.append(f"{page.name}: {span}")
    assert wrong == []


# -- metric names -------------------------------------------------------------------------------------------
_METRIC_START = re.compile(r"(?<![\w:/.-])(?:nv_|triton_sre_|vllm:|[a-z_]+:[a-z0-9_]+:)")


def defined_metrics() -> set[str]:
    """Triton's families (LLM backends' included), every metric name in conventions, and the records
    of alerts/*.yaml."""
    names = {f.name for f in TRITON_FAMILIES}
    names |= {v for v in vars(c).values() if isinstance(v, str) and re.match(r"(nv_|triton_sre_|vllm:)\w", v)}
    for rules in (ROOT / "alerts").glob("*.yaml"):
        for group in (yaml.safe_load(rules.read_text(encoding="utf-8")) or {}).get("groups", []):
            names |= {r["record"] for r in group["rules"] if "record" in r}
    return names


def _alternatives(pattern: str) -> list[str]:
    """The strings of a grep -E fragment made of words and (a|b) groups: `nv_(gpu|cpu)_x` is 2."""
    group = re.search(r"\(([^()]*)\)", pattern)
    if group is None:
        return [pattern]
    expanded = [pattern[: group.start()] + alt + pattern[group.end() :] for alt in group.group(1).split("|")]
    return list(dict.fromkeys(s for e in expanded for s in _alternatives(e)))


def metric_mentions(text: str) -> list[str]:
    """Every metric name a text names, in prose, PromQL or a grep -E pattern (its groups expanded)."""
    found = []
    for start in _METRIC_START.finditer(text):
        at, depth = start.start(), 0
        end = at
        while end < len(text) and (re.match(r"[\w:]", text[end]) or (text[end] in "(|)" and depth >= 0)):
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            if depth < 0 or (text[end] == "|" and depth == 0):
                break
            end += 1
        found += _alternatives(text[at:end])
    return found


def undefined_metrics(text: str, defined: set[str]) -> list[str]:
    missing = []
    for name in metric_mentions(text):
        base = re.sub(r"_(sum|count|bucket|created)$", "", name)
        ok = name in defined or base in defined
        if name.endswith("_"):  # a prefix in prose (`nv_inference_{request,queue}_summary_us`)
            ok = any(d.startswith(name) for d in defined)
        if not ok:
            missing.append(name)
    return missing


def test_metric_mentions_reads_grep_patterns_and_prose() -> None:
    text = "grep -E '^(vllm:(a|b_(c|d))|nv_x_(y|z)_m)' and `triton_sre_x` or `job:t:r{a=\"b\"}`"
    assert metric_mentions(text) == [
        "vllm:a",
        "vllm:b_c",
        "vllm:b_d",
        "nv_x_y_m",
        "nv_x_z_m",
        "triton_sre_x",
        "job:t:r",
    ]
    assert undefined_metrics(text, {"vllm:a", "vllm:b_c", "triton_sre_x"}) == [
        "vllm:b_d",
        "nv_x_y_m",
        "nv_x_z_m",
        "job:t:r",
    ]


def test_every_metric_a_runbook_names_is_defined() -> None:
    defined = defined_metrics()
    missing = {p.name: undefined_metrics(p.read_text(encoding="utf-8"), defined) for p in RUNBOOKS}
    assert sum(len(metric_mentions(p.read_text(encoding="utf-8"))) for p in RUNBOOKS) > 80
    assert {page: names for page, names in missing.items() if names} == {}


# -- PromQL --------------------------------------------------------------------------------
def promql_queries() -> list[tuple[str, str]]:
    """(page, query): the `query=` of a page's curl lines, and each code span that selects a metric with
    label matchers (`name{label="v"}`, not the `name{a,b}` label list of prose)."""
    queries = [
        (cmd.where, arg.removeprefix("query="))
        for cmd in all_commands("curl")
        for arg in cmd.argv
        if arg.startswith("query=")
    ]
    for page in RUNBOOKS:
        for span in prose_spans(page):
            if _METRIC_START.match(span) and re.match(r"^[\w:]+\{[^}]*=", span):
                queries.append((page.name, span))
    return queries


def test_every_promql_query_parses(tmp_path: Path) -> None:
    """promtool parses each query as a recording rule's expression (Prometheus' own parser)."""
    queries = promql_queries()
    assert len(queries) >= 9
    rules = [{"record": f"runbook:query{n}:check", "expr": q} for n, (_, q) in enumerate(queries)]
    (tmp_path / "q.yaml").write_text(yaml.safe_dump({"groups": [{"name": "runbooks", "rules": rules}]}))
    done = subprocess.run(
        [binary("promtool"), "check", "rules", str(tmp_path / "q.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr


# -- kubectl lines against deploy/k8s ------------------------------------------------------------
def shipped_objects() -> list[dict]:
    return [
        d for f in sorted(K8S.rglob("*.yaml")) for d in yaml.safe_load_all(f.read_text(encoding="utf-8")) if d
    ]


def kubectl_drifts(commands: list[Command], objects: list[dict]) -> list[str]:
    """A kubectl line that names a container, pod label, object or external metric of the shipped
    manifests must name one they define (containers and names of other tools, e.g. KServe's
    storage-initializer, are not triton's and are not checked)."""
    pods = [d["spec"]["template"] for d in objects if d.get("kind") == "Deployment"]
    containers = {ct["name"] for p in pods for ct in p["spec"]["containers"]}
    labels = {f"{k}={v}" for p in pods for k, v in p["metadata"]["labels"].items()}
    names = {(d["kind"], d["metadata"]["name"]) for d in objects}
    adapter = [
        yaml.safe_load(d.get("data", {}).get("config.yaml", "{}")) or {}
        for d in objects
        if d.get("kind") == "ConfigMap"
    ]
    external = {r["name"]["as"] for a in adapter if "externalRules" in a for r in a["externalRules"]}
    kinds = {"deploy": "Deployment", "deployment": "Deployment", "hpa": "HorizontalPodAutoscaler"}
    drifts = []
    for cmd in commands:
        argv = list(cmd.argv)
        for flag, value in itertools.pairwise(argv):
            if flag == "-c" and value.startswith("triton") and value not in containers:
                drifts.append(f"{cmd.where}: container {value} (the deployment's: {sorted(containers)})")
            if flag == "-l" and value.startswith(("app", "triton")) and value not in labels:
                drifts.append(f"{cmd.where}: label {value} (the pods': {sorted(labels)})")
            metric = value.rsplit("/", 1)[-1]
            if flag == "--raw" and "external.metrics.k8s.io" in value and metric not in external:
                drifts.append(f"{cmd.where}: external metric {metric} (the adapter's: {sorted(external)})")
        named = len(argv) > 3 and argv[1] in ("get", "describe") and argv[2] in kinds
        if named and not argv[3].startswith("-") and (kinds[argv[2]], argv[3]) not in names:
            drifts.append(f"{cmd.where}: no {kinds[argv[2]]} {argv[3]} in deploy/k8s")
    return drifts


def test_every_kubectl_line_names_what_deploy_k8s_ships() -> None:
    """`kubectl logs <pod> -c triton-sre` (the sidecar is triton-sre-exporter), `-l app=triton` (the pods
    carry app.kubernetes.io/name) and the external metric by its recording rule's name (the adapter serves
    it under its `as:` name) all answered nothing."""
    commands = all_commands("kubectl")
    assert len(commands) > 25
    objects = shipped_objects()
    assert kubectl_drifts(commands, objects) == []
    wrong = [
        Command("x:1", ("kubectl", "logs", "p", "-c", "triton-sre"), ""),
        Command("x:2", ("kubectl", "get", "pods", "-l", "app=triton"), ""),
    ]
    assert len(kubectl_drifts(wrong, objects)) == 2


# -- Triton endpoints on the real 2.51 ------------------------------------------------------------
_TRITON = "localhost:8000"


def jq_fields(expression: str) -> set[str]:
    """The field names a jq filter selects: `.a.b`, `{a, b, c: .d}` (a shorthand key is a field)."""
    fields = set(re.findall(r"\.(\w+)", expression))
    for body in re.findall(r"\{([^{}]*)\}", expression):
        fields |= {e.strip() for e in body.split(",") if re.fullmatch(r"\s*\w+\s*", e)}
    return fields


def json_keys(value: object) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in json_keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in json_keys(v)}
    return set()


def test_jq_fields() -> None:
    assert jq_fields('.[] | select(.state=="READY") | .name') == {"state", "name"}
    assert jq_fields("{max_batch_size, dynamic_batching}") == {"max_batch_size", "dynamic_batching"}
    assert jq_fields(".model_stats[].batch_stats[] | {batch_size, count: .compute_infer.count}") == {
        "model_stats",
        "batch_stats",
        "batch_size",
        "compute_infer",
        "count",
    }


@pytest.mark.triton
def test_every_triton_endpoint_a_runbook_curls_answers_with_the_fields_it_selects(triton) -> None:
    from tritonclient.grpc import model_config_pb2

    model = "vector_scale"
    row = {"name": "INPUT", "datatype": "FP32", "shape": [1, 8], "data": list(range(8))}
    assert requests.post(f"{triton.http_url}/v2/models/{model}/infer", json={"inputs": [row]}, timeout=30).ok
    config_fields = {f.name for f in model_config_pb2.ModelConfig.DESCRIPTOR.fields}
    checked, wrong = 0, []
    for page in RUNBOOKS:
        commands = shell_commands(page)
        for cmd, after in zip(commands, [*commands[1:], None], strict=True):
            urls = [a for a in cmd.argv if _TRITON in a]
            if cmd.argv[0] != "curl" or not urls:
                continue
            path = urls[0].split(_TRITON, 1)[1].replace("<model>", model).replace("<step>", model)
            post = "POST" in cmd.argv or "-XPOST" in cmd.argv
            answer = requests.request("POST" if post else "GET", triton.http_url + path, timeout=30)
            checked += 1
            # strict readiness: the shared server has failed models, and the page must say so
            expected = 400 if path == "/v2/health/ready" and "400" in cmd.text else 200
            if answer.status_code != expected:
                wrong.append(f"{cmd.where}: {path} answered {answer.status_code}")
                continue
            if after is not None and after.where == cmd.where and after.argv[0] == "jq":
                known = json_keys(answer.json()) | (config_fields if path.endswith("/config") else set())
                missing = sorted(jq_fields(after.argv[-1]) - known)
                if missing:
                    wrong.append(f"{cmd.where}: jq selects {missing}, not in {path}'s answer")
    assert checked >= 40
    assert wrong == []


# -- a page's grep of Triton's log against the real captures -----------------------------------------------
REAL_LOGS = ROOT / "tests" / "data" / "logs" / "real"


def log_greps() -> dict[str, list[Command]]:
    """Page id -> its `grep ... triton.log` lines that look for Triton's words (not a <model>'s name)."""
    greps: dict[str, list[Command]] = {}
    for page in RUNBOOKS:
        for cmd in shell_commands(page):
            if cmd.argv[0] == "grep" and cmd.argv[-1] == "triton.log" and not any("<" in a for a in cmd.argv):
                greps.setdefault(page.stem, []).append(cmd)
    return greps


def grep_prints(cmd: Command, text: str) -> bool:
    """Whether the page's grep, run as written on `text` instead of triton.log, prints a line."""
    done = subprocess.run(
        ["grep", *cmd.argv[1:-1], "-"], input=text, capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode in (0, 1), done.stderr  # 2: the page's pattern is not a valid grep pattern
    return bool(done.stdout.strip())


def test_a_pages_grep_prints_the_lines_its_finding_quotes() -> None:
    """On the real captures (tests/data/logs/real), every finding whose page greps Triton's log has a quoted
    line (or Triton's message) that one of the page's greps prints. Eleven pages' greps missed real
    wordings: 2.51's `data-type is 'INT32', but model ... expects 'FP32'`, `model not found in any model
    repository`, `Failed to process the request(s)`, `unexpected shape for input`, ..."""
    from triton_sre.diagnosis.engine import diagnose_events
    from triton_sre.diagnosis.logparse import parse_text

    greps = log_greps()
    assert len(greps) >= 20
    checked, missed = 0, []
    for log in sorted(REAL_LOGS.rglob("*.log")):
        report = diagnose_events(parse_text(log.read_text(encoding="utf-8", errors="replace")))
        for finding in report.findings:
            if finding.runbook not in greps:
                continue
            quoted = "\n".join([e.text for e in finding.evidence] + [finding.message or ""]) + "\n"
            checked += 1
            if not any(grep_prints(cmd, quoted) for cmd in greps[finding.runbook]):
                missed.append(f"{finding.runbook}: {log.relative_to(REAL_LOGS)}: {quoted[:200]}")
    assert checked > 400
    assert missed == []


# -- tritonserver flags against the real 2.51's --help --------------------------------------------------
# Flags a page names on purpose although 2.51's tritonserver has none such, and why.
NOT_2_51_FLAGS = {
    "--http-max-input-size": "a later release's flag (r25.06): server-option-invalid quotes its refusal",
    "--allow-run-as-root": "mpirun's flag (TensorRT-LLM's launcher), in server-option-invalid",
}


def tritonserver_flag_drifts(help_text: str, pages: list[Path]) -> list[str]:
    """Flags the pages name that look like tritonserver's (their first word is one of its flags' first
    words: --model-, --http-, --min-, ...) but that neither this --help nor the triton-sre CLI has."""
    flags = set(re.findall(r"^\s+(--[a-z0-9-]+)", help_text, re.M))
    first_words = {f.split("-")[2] for f in flags}
    ours = {o for _, p in leaf_parsers(build_parser()) for a in p._actions for o in a.option_strings}
    drifts = []
    for page in pages:
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for flag in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]+)", line):
                if flag.split("-")[2] in first_words and flag not in flags | ours | set(NOT_2_51_FLAGS):
                    drifts.append(f"{page.name}:{n}: {flag}")
    return drifts


@pytest.mark.server
def test_every_tritonserver_flag_a_runbook_names_is_one_2_51_has(tmp_path: Path) -> None:
    """instance-group-invalid named `--min-compute-capability`; 2.51's flag is
    `--min-supported-compute-capability`."""
    from triton_sre.stack.local_triton import LocalTriton, find_server

    install = find_server()
    env = LocalTriton.environment(None, install)  # type: ignore[arg-type]  # uses no instance state
    done = subprocess.run(
        [str(install.binary), "--help"], capture_output=True, text=True, env=env, timeout=60
    )
    help_text = done.stdout + done.stderr
    assert "--model-repository" in help_text and "--min-supported-compute-capability" in help_text
    assert [f for f in NOT_2_51_FLAGS if re.search(rf"^\s+{f}\b", help_text, re.M)] == []
    assert tritonserver_flag_drifts(help_text, RUNBOOKS) == []
    (tmp_path / "p.md").write_text("a GPU older than `--min-compute-capability`, `--model-repository`\n")
    assert tritonserver_flag_drifts(help_text, [tmp_path / "p.md"]) == ["p.md:1: --min-compute-capability"]


# -- config.pbtxt snippets against Triton's model-config schema ----------------------------------------
def config_snippets() -> list[tuple[str, str]]:
    """(page, snippet): unlabelled fenced blocks and code spans that set a top-level ModelConfig field to a
    value (a message, a list, a string or a number: `runtime: nvidia` is docker compose's), no placeholder."""
    from tritonclient.grpc import model_config_pb2

    fields = {f.name for f in model_config_pb2.ModelConfig.DESCRIPTOR.fields}
    found = []
    for page in RUNBOOKS:
        text = page.read_text(encoding="utf-8")
        blocks = [body for lang, body in _FENCE.findall(text) if lang in ("", "protobuf", "pbtxt")]
        for snippet in blocks + prose_spans(page):
            start = re.match(r"\s*([a-z_]+)\s*:?\s*([{\[\"]|\d)", snippet)
            if (
                start
                and start.group(1) in fields
                and not re.search(r"\.\.\.|<\w+>|\b[A-Z]{3,}\b(?!_)", snippet)
            ):
                found.append((page.name, snippet))
    return found


def test_every_config_snippet_parses_with_tritons_schema() -> None:
    from google.protobuf import text_format
    from tritonclient.grpc import model_config_pb2

    snippets = config_snippets()
    assert len(snippets) >= 15
    refused = []
    for page, snippet in snippets:
        try:
            text_format.Parse(snippet, model_config_pb2.ModelConfig())
        except text_format.ParseError as error:
            refused.append(f"{page}: {snippet!r}: {error}")
    assert refused == []
