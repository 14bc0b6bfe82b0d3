"""`triton-sre report` on what a Prometheus may answer that a healthy one rarely does (issue 28):
an answer of another shape than the range query's matrix, a value that is not a number, NaN and
infinite samples, and labels a spreadsheet would run as formulas.

A real Prometheus never answers a range query with a vector or a scalar, so these answers come
from a small HTTP server on loopback speaking the API's JSON; NaN/Inf samples and odd labels are
ones a real Prometheus stores as scraped (its API writes them as "NaN", "+Inf")."""

from __future__ import annotations

import csv
import io
import re
import time
from collections.abc import Callable, Iterator
from contextlib import redirect_stderr, redirect_stdout
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from fake_prometheus import Answer, serve
from test_fault_probes import Silent, assert_clean_error
from test_fault_probes import run as _cli_run

from triton_sre import conventions as c
from triton_sre.cli import main


def matrix(series: list[tuple[dict[str, str], list[str]]], stamps: list[float]) -> dict[str, Any]:
    return {
        "resultType": "matrix",
        "result": [
            {"metric": labels, "values": [[t, v] for t, v in zip(stamps, values, strict=False)]}
            for labels, values in series
        ],
    }


def healthy(query: str, stamps: list[float], model: str = "m", cost: list[str] | None = None) -> Any:
    """One model serving 10 inferences a step; server cost 1/h; idle share 0.5."""
    counting = [str(10.0 * i) for i in range(len(stamps))]
    name = query.split("{")[0]
    if name in c.PER_MODEL_COUNTERS:
        return matrix([({"__name__": name, c.LABEL_MODEL: model, c.LABEL_VERSION: "1"}, counting)], stamps)
    if name == c.M_COST_PER_HOUR:
        values = cost or ["1"] * len(stamps)
        return matrix([({c.LABEL_MODEL: model, c.L_CURRENCY: "USD"}, values)], stamps)
    if name == c.M_SERVER_COST_PER_HOUR:
        return matrix([({"__name__": name, c.L_CURRENCY: "USD"}, ["1"] * len(stamps))], stamps)
    if name == c.M_IDLE_COST_FRACTION:
        return matrix([({"__name__": name}, ["0.5"] * len(stamps))], stamps)
    return matrix([], stamps)


@pytest.fixture
def prometheus() -> Iterator[Callable[[Answer], str]]:
    servers: list[ThreadingHTTPServer] = []

    def start(answer: Answer) -> str:
        servers.append(serve(answer))
        return f"http://127.0.0.1:{servers[-1].server_address[1]}"

    yield start
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


def run(url: str, out: Path, *extra: str) -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    argv = ["report", "--prometheus-url", url, "--start", "1000", "--end", "1060", "--step", "10"]
    with redirect_stdout(stdout), redirect_stderr(stderr):
        code = main([*argv, "--out", str(out), *extra])
    return code, stdout.getvalue(), stderr.getvalue()


def _one_answer_wrong(wrong: Any) -> Answer:
    def answer(query: str, stamps: list[float]) -> Any:
        return wrong(stamps) if query == c.NV_INFERENCE_COUNT else healthy(query, stamps)

    return answer


@pytest.mark.parametrize(
    ("wrong", "says"),
    [
        (lambda t: {"resultType": "vector", "result": [{"metric": {}, "value": [t[0], "1"]}]}, "'vector'"),
        (lambda t: {"resultType": "scalar", "result": [t[0], "1"]}, "'scalar'"),
        (lambda t: {"resultType": "matrix", "result": {"metric": {}}}, "the result is not a list"),
        (lambda t: ["not", "a", "mapping"], "'list'"),
        (lambda t: matrix([({c.LABEL_MODEL: "m"}, ["1", "two", "3"])], t), "two"),
        (lambda t: matrix([({c.LABEL_MODEL: "m"}, [["1"], "2"])], t), "not a number"),
        (lambda t: {"resultType": "matrix", "result": [{"metric": {}, "values": [[t[0]]]}]}, "unexpected"),
        (lambda t: {"resultType": "matrix", "result": [{"values": []}]}, "unexpected"),
    ],
    ids=[
        "vector",
        "scalar",
        "result-not-a-list",
        "data-not-a-mapping",
        "non-numeric",
        "nested",
        "no-value",
        "no-metric",
    ],
)
def test_an_answer_of_an_unexpected_shape_is_exit_2_with_the_reason(
    prometheus: Callable[[Answer], str], tmp_path: Path, wrong: Callable[[list[float]], Any], says: str
) -> None:
    code, _, err = run(prometheus(_one_answer_wrong(wrong)), tmp_path / "out")
    assert code == c.EXIT_USAGE
    assert "unexpected answer from Prometheus" in err and says in err
    assert c.NV_INFERENCE_COUNT in err  # names the query
    assert "Traceback" not in err


def test_nan_and_infinite_samples_are_no_data_never_nan_or_inf(
    prometheus: Callable[[Answer], str], tmp_path: Path
) -> None:
    def answer(query: str, stamps: list[float]) -> Any:
        name = query.split("{")[0]
        if name == c.M_SERVER_COST_PER_HOUR:
            return matrix([({"__name__": name, c.L_CURRENCY: "USD"}, ["NaN"] * len(stamps))], stamps)
        if name == c.M_IDLE_COST_FRACTION:
            return matrix([({"__name__": name}, ["+Inf"] * len(stamps))], stamps)
        if name == c.NV_INFERENCE_COUNT:  # a NaN sample inside a counter is skipped, not summed
            values = ["0", "10", "NaN", "30", "+Inf", "50", "60"]
            return matrix([({"__name__": name, c.LABEL_MODEL: "m", c.LABEL_VERSION: "1"}, values)], stamps)
        return healthy(query, stamps, cost=["1", "1", "+Inf", "1", "NaN", "1", "1"])

    out = tmp_path / "out"
    code, stdout, err = run(prometheus(answer), out)
    assert code == c.EXIT_OK, err
    assert "60 inferences" in stdout
    markdown = (out / "report.md").read_text(encoding="utf-8")
    html = (out / "report.html").read_text(encoding="utf-8")
    csv = (out / "models.csv").read_text(encoding="utf-8")
    for text in (markdown, html, csv, stdout):  # no number written as nan or inf anywhere
        assert not re.search(r"\b(nan|inf)\b(?!\.)", text.replace("NaN or infinite", ""), re.IGNORECASE)
    for line in ("server cost", "idle cost", "idle share"):
        assert f"**{line}**: no data: " in markdown, line
        assert re.search(rf"{line}.{{0,80}}no data: ", html, re.DOTALL), line
    assert f"every sample of {c.M_SERVER_COST_PER_HOUR} in the range is NaN or infinite" in markdown
    assert f"every sample of {c.M_IDLE_COST_FRACTION} in the range is NaN or infinite" in markdown


@pytest.mark.parametrize(
    "label", ['=HYPERLINK("http://evil","x")', "+cmd|' /C calc'!A0", "-2+3", "@SUM(1)", "\tx", "\rx"]
)
def test_models_csv_neutralises_spreadsheet_formulas(
    prometheus: Callable[[Answer], str], tmp_path: Path, label: str
) -> None:
    out = tmp_path / "out"
    code, _, err = run(prometheus(lambda q, t: healthy(q, t, model=label)), out, "--format", "csv")
    assert code == c.EXIT_OK, err
    with (out / "models.csv").open(encoding="utf-8", newline="") as file:
        rows = list(csv.reader(file))
    assert [row[0] for row in rows[1:]] == ["'" + label], rows


def test_an_out_that_cannot_be_written_is_exit_2_naming_it(
    prometheus: Callable[[Answer], str], tmp_path: Path
) -> None:
    # A file where the folder should be: an output that cannot be written is a usage error (exit 2), as
    # every command's exit-code table says, not a failure while running.
    blocked = tmp_path / "out"
    blocked.write_text("a file, not a folder\n")
    code, _stdout, err = run(prometheus(healthy), blocked)
    assert code == 2
    assert f"cannot write to {blocked}" in err and "Traceback" not in err
    assert blocked.read_text() == "a file, not a folder\n"


def test_timeout_bounds_each_query_of_a_silent_prometheus(tmp_path: Path) -> None:
    """A Prometheus that accepts and never answers held the report 30 s per query (31.6 s measured);
    `--timeout 1` ends it after about a second: exit 2, one line naming the wait."""
    silent = Silent()
    url = silent.url
    try:
        began = time.monotonic()
        code, stdout, err = run(url, tmp_path / "out", "--timeout", "1")
        took = time.monotonic() - began
        assert silent.accepted.is_set()
    finally:
        silent.close()
    assert_clean_error(code, err, c.EXIT_USAGE, f"Prometheus at {url} did not answer within 1s")
    assert len(err.splitlines()) == 1 and stdout == ""
    assert 1.0 <= took < 1.0 + 4.0, took  # one query's wait, and the report's own work beside it
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "1e10", "soon"])
def test_timeout_is_a_number_of_seconds_above_0(tmp_path: Path, value: str) -> None:
    line = ["report", "--prometheus-url", "http://127.0.0.1:9", "--timeout", value]
    code, _, err = _cli_run(line, tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, "--timeout", "expected a number of seconds above 0")
