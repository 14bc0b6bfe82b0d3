"""PromQL built from what users and alerts send is escaped or refused, never spliced: checked on a real
(empty) Prometheus, which answers an injected `vector(42)` with 42 and an escaped one with nothing.

Label values go through `promql.escape`; a part of a metric NAME (the SLO window in a recording rule's
name) cannot be escaped, so it must be a duration or the query is not made."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live_prometheus import start_prometheus, stop_prometheus, wait_ready

from triton_sre import conventions as c
from triton_sre.bot.config import BotSettings
from triton_sre.bot.outbox import Outbox
from triton_sre.bot.payload import parse_group
from triton_sre.bot.slack import SlackDelivery
from triton_sre.bot.worker import Worker
from triton_sre.stack.processes import free_port

INJECTED = 42.0
WINDOWS = [
    f'5m{{slo="availability"}} or vector({INJECTED:g}) or x',
    f"5m or vector({INJECTED:g})",
    f"5m\nor vector({INJECTED:g})",
]


@pytest.fixture(scope="module")
def empty_prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    work = tmp_path_factory.mktemp("prom-empty")
    port = free_port()
    proc, log = start_prometheus(work, {"global": {"scrape_interval": "1s"}, "scrape_configs": []}, port)
    try:
        yield str(wait_ready(proc, work, port).url)
    finally:
        stop_prometheus(proc, log)


def _slo_group(window: str) -> Any:
    labels = {
        "alertname": c.ALERT_SLO_ERROR_BUDGET_BURN,
        "slo": "availability",
        "window": window,
        "model": "m",
        "severity": c.SEVERITY_PAGE,
    }
    return parse_group(
        {"alerts": [{"labels": labels, "fingerprint": "w", "annotations": {}}], "commonLabels": labels}
    )


@pytest.mark.parametrize("window", WINDOWS, ids=["braces", "or", "newline"])
def test_an_slo_alerts_window_label_is_never_spliced_into_a_metric_name(
    empty_prometheus: str, tmp_path: Path, window: str
) -> None:
    """The window label went into `slo_model:triton_slo_errors:ratio_rate<window>` as it came: the
    bot's burn rate (the message's headline figure) was whatever the label's PromQL said."""
    settings = BotSettings(channel="#c", prometheus_url=empty_prometheus)
    worker = Worker(settings, Outbox(tmp_path / "o.sqlite3"), SlackDelivery("xoxb-unused"), {})
    assert worker.prometheus is not None and worker.prometheus.instant(f"vector({INJECTED:g})") == INJECTED
    facts = worker.facts(_slo_group(window))
    assert facts.burn_rates.get("w") != INJECTED
    assert facts.burn_rates == {}


def test_a_duration_window_is_still_read() -> None:
    from triton_sre.bot.queries import slo_labels

    labels = {"slo": "availability", "model": "m"}
    assert slo_labels({**labels, "window": "1h30m"}) == ("availability", "1h30m", "m")
    assert slo_labels({**labels, "window": "٥m"}) is None  # a digit PromQL does not read


ROLLOUT_NAMES = [
    f'm"}} or vector({INJECTED:g}) or x{{a="',
    'm\\"} or vector(42) #',
    'x", job=~".*',
    "a}b",
    "a=~b",
    "a\\",
    "a\nb",
    "模型-é",
]


@pytest.mark.parametrize("name", ROLLOUT_NAMES)
def test_rollout_names_are_label_values_never_promql(
    empty_prometheus: str, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Probed and already right: a model name or version with quotes, braces, `=~` or a backslash is one
    escaped label value (an injected `vector(42)` would be 42 requests/s on each side)."""
    from triton_sre.cli import main

    argv = ["rollout", "check", "--prometheus", empty_prometheus, "--model", name, "--format", "json"]
    code = main([*argv, "--baseline-version", name, "--candidate-version", "2", "--window", "1m"])
    out, err = capsys.readouterr()
    assert code == c.EXIT_INCONCLUSIVE, err
    verdict = json.loads(out)
    assert verdict["request_rate"] == {"baseline": 0.0, "candidate": 0.0}
