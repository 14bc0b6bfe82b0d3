"""Issue 20 item 5, every log format reads the same: each corpus log, re-shaped as another collector or
another Triton release would have written it, gives the same first finding and the same failure flag.

The shapes: CRLF line ends, ``docker logs -t`` timestamps, ``kubectl logs --prefix``, docker-compose's
service column, glog lines in ``--log-format ISO8601`` and glog messages quoted and escaped as core
writes them since 24.06 (``"..."`` with ``\\n``; a traceback's lines folded into the message), every line as
Docker's json-file driver and Kubernetes' CRI log files store it, the log as Cloud Logging's pretty-printed
JSON export holds it, and the log as a web page's HTML source
holds it (``&#x27;``, ``&quot;``, ``&lt;``), with a web page's or an editor's look-alike characters (no-break
spaces, curled quotes, a byte-order mark) and with a terminal's colour codes; as Loki's ``logcli`` prints it
(label set, or JSON lines), as ``journalctl`` prints a systemd unit's output (short and short-iso), quoted
in a reply (``> ``), behind Ray's ``(pid=N)`` prefix, moreutils' ``ts`` or a bracketed time, numbered by
``cat -n`` or grep, and as a CSV export's rows.
"""

from __future__ import annotations

import functools
import html
import io
import json
import re
from collections.abc import Callable

import accuracy
import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.api import diagnose_stream
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

GLOG = re.compile(r"^([IWEF])(\d\d)(\d\d) (\d\d:\d\d:\d\d\.\d+) +(\d+) ([^\]]+)\] (.*)$")
# Lines core folds into the message it quotes: a traceback and the indented lines of a multi-line message.
FOLDED = re.compile(r"^(?:[ \t]|Traceback\b|At:|\w+(?:Error|Exception):)")


def _iso8601(text: str) -> str:
    def line(raw: str) -> str:
        m = GLOG.match(raw)
        if not m:
            return raw
        level, month, day, clock, thread, where, message = m.groups()
        return f"2024-{month}-{day}T{clock}Z {level} {thread} {where}] {message}"

    return "".join(line(raw) + "\n" for raw in text.splitlines())


def _escaped(text: str) -> str:
    out: list[str] = []
    head: list[str] | None = None  # [glog prefix, message so far]

    def close() -> None:
        if head is not None:
            out.append(head[0] + json.dumps(head[1]))

    for raw in text.splitlines():
        m = GLOG.match(raw)
        if m and not m.group(7).startswith('"'):
            close()
            level, month, day, clock, thread, where, message = m.groups()
            head = [f"{level}{month}{day} {clock} {thread} {where}] ", message]
        elif head is not None and raw and FOLDED.match(raw):
            head[1] += "\n" + raw
        else:
            close()
            head = None
            out.append(raw)
    close()
    return "\n".join(out) + "\n"


SHAPES: dict[str, Callable[[str], str]] = {
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "docker-t": lambda t: "".join(f"2024-07-23T19:39:35.070084123Z {line}\n" for line in t.splitlines()),
    "kubectl-prefix": lambda t: "".join(f"[pod/triton-0/triton] {line}\n" for line in t.splitlines()),
    "compose": lambda t: "".join(f"triton-1  | {line}\n" for line in t.splitlines()),
    "iso8601": _iso8601,
    "escaped": _escaped,
    # Kubernetes' CRI log file on the node (/var/log/containers/<pod>_<ns>_<container>-<id>.log)
    "cri": lambda t: "".join(f"2024-07-23T19:39:35.070084123Z stderr F {line}\n" for line in t.splitlines()),
    # copied from a web page's HTML source: quotes and angle brackets as character references
    "html-entities": lambda t: html.escape(t, quote=True),
    # what a web page, a chat or an editor does to a paste: no-break spaces, curled quotes, a BOM
    "web-lookalikes": lambda t: (
        "\ufeff" + t.replace(" ", "\u00a0").replace("'", "\u2019").replace('"', "\u201d")
    ),
    # a terminal's colours captured with the text (docker compose's service column, red error lines)
    "ansi-colours": lambda t: "".join(
        "\x1b[36mtriton-1  |\x1b[0m " + (f"\x1b[31m{line}\x1b[0m" if line[:1] in "EW" else line) + "\n"
        for line in t.splitlines()
    ),
    # Cloud Logging's "Download" as JSON: a pretty-printed array of records, the line in textPayload
    "cloud-logging-export": lambda t: (
        json.dumps(
            [
                {
                    "insertId": f"r{i}",
                    "resource": {"type": "k8s_container"},
                    "textPayload": line,
                    "severity": "ERROR",
                }
                for i, line in enumerate(t.splitlines())
            ],
            indent=2,
        )
        + "\n"
    ),
    # Loki's logcli: `logcli query` (timestamp, the stream's labels, the line) and `-o jsonl`
    "loki-logcli": lambda t: "".join(
        f'2024-07-23T19:39:35Z {{app="triton", pod="triton-0"}} {line}\n' for line in t.splitlines()
    ),
    "loki-jsonl": lambda t: "".join(
        json.dumps({"labels": {"app": "triton"}, "line": line, "timestamp": "2024-07-23T19:39:35Z"}) + "\n"
        for line in t.splitlines()
    ),
    # a systemd unit's output as `journalctl -u triton` and `journalctl -o short-iso` print it
    "journalctl": lambda t: "".join(
        f"Jul 23 19:39:35 gpu-1 tritonserver[4242]: {line}\n" for line in t.splitlines()
    ),
    "journalctl-iso": lambda t: "".join(
        f"2024-07-23T19:39:35+0000 gpu-1 tritonserver[4242]: {line}\n" for line in t.splitlines()
    ),
    # a log quoted in a reply on GitHub, a forum or in mail
    "quoted-reply": lambda t: "".join(f"> {line}\n" for line in t.splitlines()),
    # Ray's prefix on a Serve replica's output (Triton in-process in a Ray Serve deployment)
    "ray-serve": lambda t: "".join(
        f"(ServeReplica:default:Triton pid=4567) {line}\n" for line in t.splitlines()
    ),
    # moreutils' `ts` and a wrapper's bracketed timestamp
    "ts": lambda t: "".join(f"Jul 23 19:39:35 {line}\n" for line in t.splitlines()),
    "bracketed-time": lambda t: "".join(f"[2024-07-23 19:39:35] {line}\n" for line in t.splitlines()),
    # `cat -n`, and grep's output with file names (`grep -rn`, `grep -H`)
    "cat-n": lambda t: "".join(f"{i:6d}\t{line}\n" for i, line in enumerate(t.splitlines(), 1)),
    "grep-rn": lambda t: "".join(f"logs/triton.log:{i}:{line}\n" for i, line in enumerate(t.splitlines(), 1)),
    "grep-h": lambda t: "".join(f"triton.log:{line}\n" for line in t.splitlines()),
    # CloudWatch Logs Insights' "Download table (CSV)": the time, then the line quoted as CSV quotes it
    "csv-export": lambda t: (
        "@timestamp,@message\n"
        + "".join(
            f'2024-07-23 19:39:35.070,"{line.replace(chr(34), chr(34) * 2)}"\n' for line in t.splitlines()
        )
    ),
    # `aws logs tail` (its default "detailed" format): the timestamp and the log stream, a SageMaker
    # endpoint's "<variant>/<instance-id>"
    "aws-logs-tail": lambda t: "".join(
        f"2024-07-23T19:39:35.070000+00:00 AllTraffic/i-0b1c2d3e4f5a6b7c8 {line}\n" for line in t.splitlines()
    ),
    # `docker service logs` (Swarm): the task's name and its node before compose's column
    "swarm-service": lambda t: "".join(
        f"triton_triton.1.x7k2m9q4p1ab@gpu-node-1    | {line}\n" for line in t.splitlines()
    ),
    # Docker's json-file driver as stored on the node (/var/lib/docker/containers/<id>/<id>-json.log)
    "docker-json-file": lambda t: "".join(
        json.dumps({"log": f"{line}\n", "stream": "stderr", "time": "2024-07-23T19:39:35.070084123Z"}) + "\n"
        for line in t.splitlines()
    ),
}


def _body(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith("# ")) + "\n"


@functools.lru_cache(maxsize=1024)
def _first(text: str) -> tuple[str | None, bool]:
    report = diagnose_events(parse_text(text))
    return (report.findings[0].runbook if report.findings else None, report.has_failure)


def _corpus() -> list[accuracy.Case]:
    splits = sorted(p.name for p in accuracy.LOGS.iterdir() if p.is_dir())
    return [case for split in splits for case in accuracy.load(split)]


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_corpus_log_reads_the_same_in_every_shape(shape: str) -> None:
    reshape = SHAPES[shape]
    cases = _corpus()
    assert len(cases) > 300
    changed = []
    for case in cases:
        body = _body(case.text)
        reshaped = reshape(body)
        if reshaped == body:
            continue
        plain, other = _first(body), _first(reshaped)
        if plain != other:
            changed.append((case.split, case.name, plain, other))
    assert not changed


def test_the_escaped_shape_does_quote_glog_messages() -> None:
    text = "E0101 00:00:00.000000 1 model_lifecycle.cc:642] failed to load 'm' version 1: Internal: x\n"
    assert _escaped(text) == (
        "E0101 00:00:00.000000 1 model_lifecycle.cc:642] \"failed to load 'm' version 1: Internal: x\"\n"
    )


# Core's instance-group check (src/model_config_utils.cc) when CUDA offers no GPU: the list after "are:"
# is empty. Quoted (24.06+), the blank before the closing quote survives the line's end; both forms read
# the same, and after CUDA's insufficient-driver warning the driver is the cause.
_DRIVER = (
    "W0406 06:06:25.696071 97 pinned_memory_manager.cc:236] Unable to allocate pinned system memory, pinned "
    "memory pool will not be available: CUDA driver version is insufficient for CUDA runtime version"
)
_REFUSED = (
    "E0406 06:06:25.697896 97 model_repository_manager.cc:1890] Poll failed for model directory 'm': "
    "instance group m_0 of model m specifies invalid or unsupported gpu id 0. GPUs with at least the minimum "
    "required CUDA compute compatibility of 6.000000 are: "
)


@pytest.mark.parametrize("reshape", [lambda t: t, _escaped], ids=["plain", "escaped"])
def test_no_gpu_listed_reads_the_same_quoted_or_not(reshape: Callable[[str], str]) -> None:
    assert _first(reshape(_REFUSED + "\n"))[0] == c.RUNBOOK_INSTANCE_GROUP_INVALID
    assert _first(reshape(f"{_DRIVER}\n{_REFUSED}\n"))[0] == c.RUNBOOK_CUDA_DRIVER_MISMATCH
    listed = _REFUSED + "1 2"  # GPUs exist, just not this id: the config's fault even after the warning
    assert _first(reshape(f"{_DRIVER}\n{listed}\n"))[0] == c.RUNBOOK_INSTANCE_GROUP_INVALID


_POD = "triton-server-7d9f8b6c5-x2x4z triton "


def _stern(plain: str, pod: str = _POD) -> str:
    return "".join(f"{pod}{line}\n" for line in plain.splitlines())


def _plain_and_stern(plain: str, pod: str = _POD) -> tuple[tuple, tuple]:
    """The findings of ``plain`` and of it as stern prints it: the same models and runbooks."""
    want = diagnose_events(parse_text(plain)).findings
    got = diagnose_events(parse_text(_stern(plain, pod))).findings
    assert [(f.model, f.runbook) for f in got] == [(f.model, f.runbook) for f in want]
    return want, got


def test_stern_columns_before_triton_lines_and_table_rows_are_peeled() -> None:
    """stern's default template prints ``<pod> <container> `` before every line: Triton's own lines and
    its status table still name their model; other text keeps the columns (nothing is guessed away)."""
    plain = (
        "I0812 22:00:05.156851 1 model_lifecycle.cc:461] loading: densenet_onnx:1\n"
        "E0812 22:00:07.156851 1 model_lifecycle.cc:641] failed to load 'densenet_onnx' version 1: Invalid "
        "argument: unexpected inference output 'fc6_1', allowed outputs are: fc6\n"
        "+---------------+---------+------------------------------------------------------------+\n"
        "| Model         | Version | Status                                                     |\n"
        "+---------------+---------+------------------------------------------------------------+\n"
        "| densenet_onnx | 1       | UNAVAILABLE: Invalid argument: unexpected inference output |\n"
        "+---------------+---------+------------------------------------------------------------+\n"
    )
    want, got = _plain_and_stern(plain)
    assert want[0].model == "densenet_onnx"
    assert got[0].evidence[0].text.startswith("E0812 ")
    # Not a pod and a container before Triton's text: the line stays as written.
    events = parse_text("pre-trained model error: weights are stale\n")
    assert events[0].text == "pre-trained model error: weights are stale"


def test_the_pods_columns_are_peeled_from_its_other_lines_too() -> None:
    """Once stern's columns stood before Triton's own line, or two lines in a row start with the same
    columns, that pod's other lines lose them too: a traceback's exception, `error: creating server` and
    an entrypoint banner read as in the plain log (the Python error's class, the server's failure)."""
    pod = _POD
    plain = (
        "I0812 22:00:05.156851 1 model_lifecycle.cc:461] loading: pre:1\n"
        "E0812 22:00:07.156851 1 model_lifecycle.cc:641] failed to load 'pre' version 1: Internal: "
        "ModuleNotFoundError: No module named 'cv2'\n"
        "\n"
        "At:\n"
        "  /models/pre/1/model.py(3): <module>\n"
        "error: creating server: Internal - failed to load all models\n"
    )
    want, _ = _plain_and_stern(plain, pod)
    assert want[0].runbook == c.RUNBOOK_PYTHON_MODULE_MISSING
    server_error = "error: creating server: Internal - failed to load all models"
    assert parse_text(_stern(plain, pod))[-1].text == server_error
    # No Triton line at all: two lines in a row with the same columns are enough.
    banner = "ERROR: No supported GPU(s) detected to run this container"
    events = parse_text(f"{pod}== Triton Inference Server ==\n{pod}{banner}\n")
    assert events[-1].message.split("\n")[-1] == banner
    # One line alone stays as written.
    assert parse_text(f"{pod}{banner}\n")[0].text == f"{pod}{banner}"


def test_a_paste_indented_as_a_markdown_code_block_keeps_its_table_and_server_error() -> None:
    """Indentation hides a log line, the status table and main's `error: creating server` (a Markdown code
    block indents the whole paste); an indented `error:` of any other kind stays a traceback's line."""
    plain = (
        "E0903 01:26:10.795143 1 model_repository_manager.cc:1519] failed to open text file for read "
        "/mnt/models/resnet/config.pbtxt: No such file or directory\n"
        "+--------+---------+-----------------------------------------------------------+\n"
        "| Model  | Version | Status                                                    |\n"
        "+--------+---------+-----------------------------------------------------------+\n"
        "| resnet | 1       | UNAVAILABLE: Internal: failed to open text file for read  |\n"
        "+--------+---------+-----------------------------------------------------------+\n"
        "error: creating server: INTERNAL - failed to load all models\n"
    )
    want = diagnose_events(parse_text(plain)).findings
    for indent in ("    ", "\t"):
        got = diagnose_events(
            parse_text("".join(f"{indent}{line}\n" for line in plain.splitlines()))
        ).findings
        assert [(f.model, f.runbook) for f in got] == [(f.model, f.runbook) for f in want], repr(indent)
    assert want[0].model == "resnet"
    events = parse_text("Traceback (most recent call last):\n    error: not a server line\n")
    assert all(e.source == "" for e in events)


def test_a_paste_indented_as_a_whole_loses_that_indentation_only() -> None:
    """A paste whose first line is indented (a Markdown code block, 4 to 8 blanks) loses that much from every
    line: `kubectl describe`'s sections start their lines again, a traceback keeps its own indentation. The
    first line decides: an indented line later in a log is a traceback's or a dump's."""
    plain = (
        "Name:         triton-0\n"
        "Status:       Pending\n"
        "Events:\n"
        "  Type     Reason            Age   From               Message\n"
        "  Warning  FailedScheduling  10s   default-scheduler  0/3 nodes are available: "
        "3 Insufficient nvidia.com/gpu.\n"
    )
    want = _evidence(diagnose_events(parse_text(plain)).findings)
    assert want and want[0][1] == c.RUNBOOK_POD_UNSCHEDULABLE
    indented = "".join(f"    {line}\n" for line in plain.splitlines())
    assert _evidence(diagnose_events(parse_text(indented)).findings) == want
    traceback = (
        '    Traceback (most recent call last):\n      File "m.py", line 1, in <module>\n    ImportError: x\n'
    )
    assert (
        parse_text(traceback)[0].message
        == 'Traceback (most recent call last):\n  File "m.py", line 1, in <module>\nImportError: x'
    )
    later = "I0101 00:00:00.000000 1 server.cc:1] up\n    Status:       Pending\n"
    assert parse_text(later)[0].message.endswith("\n    Status:       Pending")
    # The first line loses it too: a timestamped shell prompt is still a prompt, not a failed template.
    prompt = (
        "2025-02-05 09:16:22 [mona@dev ws]$ ./scripts/run_dev.sh -d ${WS}\n"
        "=> ERROR [internal] load metadata for nvcr.io/nvidia/tritonserver:24.08-py3\n"
    )
    want = _evidence(diagnose_events(parse_text(prompt)).findings)
    assert want[0][1] == c.RUNBOOK_IMAGE_PULL_FAILED
    indented = "".join(f"    {line}\n" for line in prompt.splitlines())
    assert _evidence(diagnose_events(parse_text(indented)).findings) == want


@pytest.mark.parametrize(
    "shape",
    [
        "web-lookalikes",
        "ansi-colours",
        "cri",
        "html-entities",
        "docker-json-file",
        "cloud-logging-export",
        "loki-logcli",
        "loki-jsonl",
        "journalctl",
        "quoted-reply",
        "csv-export",
        "ray-serve",
        "aws-logs-tail",
        "swarm-service",
    ],
)
def test_the_streaming_reader_agrees_on_every_shape(shape: str) -> None:
    """The chunk scanner keeps only lines that can matter by ASCII needles: a re-typed, coloured or wrapped
    log must still reach the parser whole (the real captures, findings with evidence lines and texts)."""
    for path in sorted((accuracy.LOGS / "real").glob("*.log")):
        text = SHAPES[shape](_body(path.read_text()))
        plain = diagnose_events(parse_text(text)).findings
        streamed = diagnose_stream(io.BytesIO(text.encode()), {}).findings
        assert _evidence(streamed) == _evidence(plain), (shape, path.name)


def _evidence(findings: tuple) -> list[tuple]:
    return [(f.model, f.runbook, [(e.line, e.text) for e in f.evidence]) for f in findings]


def _hard_wrapped(text: str, width: int) -> str:
    return "".join(
        line[i : i + width] + "\n" for line in text.splitlines() for i in range(0, len(line) or 1, width)
    )


def test_a_log_hard_wrapped_at_a_terminals_width_reads_as_the_plain_log() -> None:
    """A terminal, an editor or a mail client cut every long line at its width: the pieces are one line
    again (what the rules read and the evidence quotes), whether the message is quoted or not."""
    plain = (
        "I0812 22:00:05.156851 1 model_lifecycle.cc:461] loading: densenet_onnx:1\n"
        "E0812 22:00:07.156851 1 model_lifecycle.cc:641] failed to load 'densenet_onnx' version 1: Invalid "
        "argument: unexpected inference output 'fc6_1', allowed outputs are: fc6\n"
    )
    quoted = plain.replace(
        "] failed to load 'densenet_onnx' version 1: Invalid",
        "] \"failed to load 'densenet_onnx' version 1: Invalid",
    ).replace("fc6\n", 'fc6"\n')
    for text in (plain, quoted):
        want = _evidence(diagnose_events(parse_text(text)).findings)
        assert want[0][1] == c.RUNBOOK_TENSOR_NAME_MISMATCH
        for width in (80, 100, 120):
            assert _evidence(diagnose_events(parse_text(_hard_wrapped(text, width))).findings) == want, width


@pytest.mark.parametrize("width", [80, 100, 120])
def test_a_status_table_hard_wrapped_at_a_terminals_width_reads_as_the_plain_table(width: int) -> None:
    """A status row (and its borders) cut at a terminal's width: the row's rest goes on its cell, the
    borders' rests are no lines of their own."""
    status = (
        "UNAVAILABLE: Invalid argument: unable to find 'libtriton_tensorrt_plan.so' for model "
        "'object_detection', searched: /models/object_detection/1, /models/object_detection, "
        "/opt/tritonserver/backends/tensorrt_plan"
    )
    row = f"| object_detection | 1       | {status} |"
    border = "+" + "-" * 18 + "+" + "-" * 9 + "+" + "-" * (len(status) + 2) + "+"
    header = f"| Model            | Version | Status{' ' * (len(status) - 5)}|"
    plain = "\n".join(["I0812 22:00:07.156851 1 server.cc:673] ", border, header, border, row, border]) + "\n"
    want = _evidence(diagnose_events(parse_text(plain)).findings)
    assert want[0][1] == c.RUNBOOK_BACKEND_PLATFORM_MISMATCH  # tensorrt_plan is a platform, not a backend
    wrapped = diagnose_events(parse_text(_hard_wrapped(plain, width)))
    assert [(f.model, f.runbook) for f in wrapped.findings] == [
        ("object_detection", c.RUNBOOK_BACKEND_PLATFORM_MISMATCH)
    ]
    assert wrapped.findings[0].message == status.removeprefix("UNAVAILABLE: ")


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        (
            "\"load failed for model 'my_model': version 1 is at UNAVAILABLE state: Internal: "
            "AttributeError: "
            "module 'triton_python_backend_utils' has no attribute 'InferenceRequest'",
            c.RUNBOOK_PYTHON_MODEL_ERROR,
        ),
    ],
)
def test_a_cut_at_a_separator_or_inside_a_camelcase_name_is_joined(line: str, rule: str) -> None:
    """Cut right after ``Internal: `` (an exception name starts the rest) or inside ``InferenceRequest``
    (a capital goes on a lowercase letter, closed by a quote): the pieces are one line."""
    want = _evidence(diagnose_events(parse_text(line + "\n")).findings)
    assert want[0][1] == rule
    for width in (80, 100, 120):
        assert _evidence(diagnose_events(parse_text(_hard_wrapped(line + "\n", width))).findings) == want, (
            width
        )


def test_a_shell_command_hard_wrapped_keeps_its_rest() -> None:
    """A prompt's command cut at a terminal's width: the rest is the command's (its ``${VAR}`` no unfinished
    template, its image the log's release), and the next line is the log's own again."""
    command = (
        "$ docker run --gpus=all -it --rm --shm-size=8g -e SSL_CERT_DIR=/etc/ssl/certs/ -p 8005:8000 "
        "-v ${MODEL_FOLDER_PATH}:/models nvcr.io/nvidia/tritonserver:24.08-py3 tritonserver "
        "--model-repository=/models"
    )
    healthy = "I0812 22:00:05.156851 1 server.cc:1] Started HTTPService at 0.0.0.0:8000"
    for width in (80, 100, 120):
        report = diagnose_events(parse_text(_hard_wrapped(f"{command}\n{healthy}\n", width)))
        assert (report.findings, report.release) == ((), "24.08"), width


def test_grep_n_numbers_are_peeled_where_they_count_on() -> None:
    """``grep -n`` (or ``-C``) numbers each line it prints: peeled before Triton's own text, and before any
    line whose number is one more than the line before's (a traceback's lines); a lone "12:" stays."""
    plain = (
        "E0812 22:00:07.156851 1 model_lifecycle.cc:641] failed to load 'pre' version 1: Internal: "
        "ModuleNotFoundError: No module named 'cv2'\n"
        "\n"
        "At:\n"
        "  /models/pre/1/model.py(3): <module>\n"
    )
    grepped = "".join(
        f"{i}{':' if i == 41 else '-'}{line}\n" for i, line in enumerate(plain.splitlines(), 41)
    )
    assert _evidence(diagnose_events(parse_text(grepped)).findings) == _evidence(
        diagnose_events(parse_text(plain)).findings
    )
    assert parse_text(grepped)[0].message.endswith("\nAt:\n  /models/pre/1/model.py(3): <module>")
    assert parse_text("12:34 is not a line number\n")[0].text == "12:34 is not a line number"


@pytest.mark.parametrize(
    "plain",
    [
        'Traceback (most recent call last):\n  File "client.py", line 47, in <module>\n'
        "    raise RuntimeError('model not ready')\nRuntimeError: model not ready\n",
        "error:\ncuda_memory_manager.cc:65 failed to finalize CUDA memory manager\n",
        "$ docker run --gpus=1 nvcr.io/nvidia/tritonserver:20.09-py3 tritonserver --model-repository=/m\n"
        "ERROR: This container was built for NVIDIA Driver Release 450.51 or later, but\n"
        "       version 440.64.00 was detected and compatibility mode is UNAVAILABLE.\n",
    ],
    ids=["traceback", "bare-error-word", "prompt-then-banner"],
)
@pytest.mark.parametrize(
    "prefix",
    [
        lambda i: f"{i}:",
        lambda i: "triton-7d9f8-abcde triton ",
        lambda i: "\x1b[32mtriton-7d9f8-abcde\x1b[0m \x1b[36mtriton\x1b[0m ",
    ],
    ids=["grep-n", "stern", "stern-colour"],
)
def test_a_prefix_the_second_line_confirms_is_peeled_from_the_first(
    plain: str, prefix: Callable[[int], str]
) -> None:
    """The first line of ``grep -n`` or ``stern`` output carries a prefix nothing before it confirms: once
    the second line shows it (grep's number counting on, stern's same columns), the first is read again
    without it."""
    prefixed = "".join(f"{prefix(i)}{line}\n" for i, line in enumerate(plain.splitlines(), 1))
    want = _evidence(diagnose_events(parse_text(plain)).findings)
    assert want
    assert _evidence(diagnose_events(parse_text(prefixed)).findings) == want
    events = [(e.line, e.message) for e in parse_text(plain)]
    assert [(e.line, e.message) for e in parse_text(prefixed)] == events


def test_lines_that_only_look_cut_stay_apart() -> None:
    """Not a cut line's rest: a row of a column listing as wide as the one before (``kubectl get``), an
    exception after a frame, a line starting with a capital after a full line, and a longer line."""
    row = "triton-inference-server-7cd84c8f4b-wzsk9   0/1     CrashLoopBackOff   8 (18s ago)   23m"
    listing = f"I0812 22:00:05.156851 1 server.cc:1] {'x' * 42}\n" + "\n".join(
        [row.replace("wzsk9", f"wzsk{i}") for i in range(3)]
    )
    texts = [e.text for e in parse_text(listing)]
    assert [len(line) for line in listing.splitlines()[1:]] == [len(row)] * 3
    assert all(row.replace("wzsk9", f"wzsk{i}") not in texts[0] for i in (1, 2))
    frame = '  File "/opt/tritonserver/backends/python/model.py", line 33, in initialize' + " " * 7
    exception = "ModuleNotFoundError: No module named 'cv2'"
    events = parse_text(f"Traceback (most recent call last):\n{frame[:80]}\n{exception}\n")
    assert events[0].message.split("\n")[-1] == exception
    head = "W0812 22:00:05.156851 1 pinned_memory_manager.cc:237] Unable to allocate pinned memory"
    full = head + "!" * (80 - len(head))
    events = parse_text(f"{full}\nNext sentence of another writer.\n")
    assert events[0].message.endswith("\nNext sentence of another writer.")
