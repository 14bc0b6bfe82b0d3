"""A query the real Prometheus gives up on at its own `--query.timeout` (HTTP 503, `"errorType":"timeout"`):
every command that evaluates PromQL (`rollout check`, `report`) says which query timed out, after what, and
what to do, with exit 2. Before (probes21), the message was Prometheus' own words alone (`/api/v1/query
'vector(time())': query timed out in query execution`), read like any refused query. `doctor` and `lint`
ask no PromQL of Prometheus (its targets, rules and flags only), so none of theirs can time out so."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from backfilled_prometheus import backfilled
from test_fault_probes_round21 import _rollout_series

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.prom import Prometheus, PromQueryTimeout

SAID = (
    r"Prometheus timed out evaluating '(?P<query>[^']+)' after its --query\.timeout of 0s; narrow the range "
    r"or raise --query\.timeout \(Prometheus said: query timed out in [a-z ]+\)"
)


def test_a_query_prometheus_times_out_is_said_so_by_every_command_that_queries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # --query.timeout=0s: Debian's Prometheus 2.42 times every query out (1ms does so only with many series)
    with backfilled(tmp_path / "prom", _rollout_series(None), "--query.timeout=0s") as prom:
        with pytest.raises(PromQueryTimeout) as raised:
            Prometheus(prom.url).instant("sum(nv_inference_count)")
        assert re.fullmatch(SAID, str(raised.value)), raised.value
        rollout = ["rollout", "check", "--prometheus", prom.url, "--model", "vs"]
        rollout += ["--baseline-version", "1", "--candidate-version", "2", "--window", "15m"]
        code = main(rollout)
        out, err = capsys.readouterr()
        assert code == c.EXIT_USAGE and out == ""
        assert re.fullmatch(rf"triton-sre rollout check: {SAID}\n", err), err
        code = main([*rollout, "--format", "json"])
        out, err = capsys.readouterr()
        assert code == c.EXIT_USAGE
        assert re.search(SAID, json.loads(out)["error"]), out
        report = ["report", "--prometheus-url", prom.url, "--out", str(tmp_path / "report"), "--last", "1h"]
        code = main(report)
        out, err = capsys.readouterr()
        assert code == c.EXIT_USAGE
        assert re.search(rf"triton-sre report: {SAID}\n", err), err
        assert not (tmp_path / "report").exists() or not any((tmp_path / "report").iterdir())
