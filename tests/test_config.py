"""Configuration: precedence, validation, and errors that name the key."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from triton_sre import conventions as c
from triton_sre.checks import ConfigError
from triton_sre.config import load_config, resolve_settings


def write(tmp_path, text: str):
    path = tmp_path / "triton-sre.yaml"
    path.write_text(text)
    return path


def test_full_config_loads(tmp_path):
    path = write(
        tmp_path,
        """
exporter:
  triton_url: http://triton:8000
  interval: 5
  window: 120
pricing:
  currency: eur
  gpu_hour: 2.5
  node_hour: 0.4
  cpu_execution_slots: 4
""",
    )
    s = load_config(path)
    assert s.triton_url == "http://triton:8000"
    assert s.resolved_metrics_url == "http://triton:8002/metrics"
    assert (s.interval, s.window) == (5.0, 120.0)
    assert (s.pricing.currency, s.pricing.gpu_hour, s.pricing.node_hour) == ("EUR", 2.5, 0.4)
    assert s.pricing.cpu_execution_slots == 4


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pricing:\n  gpu_hours: 1\n", "pricing: unknown key 'gpu_hours'"),
        ("exporter:\n  intervall: 1\n", "exporter: unknown key 'intervall'"),
        ("prices: {}\n", "unknown key 'prices'"),
        ("pricing:\n  gpu_hour: -1\n", "pricing.gpu_hour: a price cannot be negative"),
        ("pricing:\n  node_hour: cheap\n", "pricing.node_hour: must be a number"),
        ("pricing:\n  cpu_execution_slots: 0\n", "pricing.cpu_execution_slots: must be a whole number"),
        ("exporter:\n  interval: -5\n", "exporter.interval: must be at least 0.1 and at most 86400"),
        # a busy poll, and an interval whose next poll time overflows time_t (the poll thread died of it)
        ("exporter:\n  interval: 1.0e-9\n", "exporter.interval: must be at least 0.1 and at most 86400"),
        ("exporter:\n  interval: 1.0e+9\n", "exporter.interval: must be at least 0.1 and at most 86400"),
        ("exporter:\n  window: 1.0e+12\n", "exporter.window: must be greater than 0 and at most 2678400"),
        ("exporter:\n  triton_url: triton:8000\n", "exporter.triton_url: must be an http(s) URL"),
        ("exporter:\n  metrics_url: 'http://'\n", "exporter.metrics_url: must be an http(s) URL"),
        ("exporter:\n  triton_url: 'http://[::1'\n", "exporter.triton_url: must be an http(s) URL"),
        ("exporter:\n  metrics_url: 'http://h:99999'\n", "exporter.metrics_url: must be an http(s) URL"),
        ("exporter:\n  listen: nowhere\n", "exporter.listen: expected HOST:PORT"),
        ("pricing: [1, 2]\n", "pricing: must be a mapping"),
        ("- a\n- b\n", "the document must be a mapping"),
        ("pricing:\n  gpu_hour: [1\n", "invalid YAML at line"),
    ],
)
def test_bad_config_names_file_and_key(tmp_path, text, expected):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(path) in str(err.value)
    assert expected in str(err.value)


def test_unreadable_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")


def test_yaml_is_loaded_safely(tmp_path):
    path = write(tmp_path, "pricing: !!python/object/apply:os.system ['echo pwned']\n")
    with pytest.raises(ConfigError, match="invalid YAML"):
        load_config(path)


def test_precedence_flag_over_env_over_file(tmp_path):
    path = write(tmp_path, "exporter:\n  interval: 30\n  window: 300\n  listen: 127.0.0.1:9000\n")
    env = {c.ENV_CONFIG: str(path), c.ENV_INTERVAL: "20", c.ENV_TRITON_URL: "http://env:8000"}
    s = resolve_settings({"interval": 10.0}, env)
    assert s.interval == 10.0  # flag
    assert s.triton_url == "http://env:8000"  # env
    assert s.window == 300.0  # file
    assert s.listen_address == ("127.0.0.1", 9000)
    s = resolve_settings({}, env)
    assert s.interval == 20.0


def test_bad_env_value_names_the_variable():
    with pytest.raises(ConfigError, match=c.ENV_WINDOW):
        resolve_settings({}, {c.ENV_WINDOW: "a minute"})


def test_cli_exits_2_with_a_clear_message(tmp_path):
    path = write(tmp_path, "pricing:\n  gpu_hour: -3\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_SRE_")}
    result = subprocess.run(
        [sys.executable, "-m", "triton_sre.cli", "export", "--config", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert result.returncode == 2
    assert "pricing.gpu_hour" in result.stderr and str(path) in result.stderr


def test_exporter_and_bot_share_one_url_check(tmp_path):
    """One check for both configs: a URL with no host is refused by each (issue 15: they drifted)."""
    from triton_sre.bot.config import settings_from_mapping

    with pytest.raises(ConfigError, match="must be an http"):
        settings_from_mapping({"bot": {"grafana_url": "http://"}}, "bot.yaml")
    settings = settings_from_mapping({"bot": {"grafana_url": " https://grafana.example.com "}}, "bot.yaml")
    assert settings.grafana_url == "https://grafana.example.com"


@pytest.mark.parametrize(
    ("spec_tail", "where", "check", "value"),
    [
        ("operational: {pending_requests: 0}\n", "operational.pending_requests", "positive_int", 0),
        ("operational: {gpu_memory_ratio: 2}\n", "operational.gpu_memory_ratio", "ratio", 2),
        ("operational: {pending: 3}\n", "operational", "keys", {"pending": 3}),
    ],
)
def test_the_slo_spec_uses_the_shared_field_checks(
    spec_tail: str, where: str, check: str, value: object
) -> None:
    """One validation module (issue 15): the SLO spec's field errors are the exporter's and bot's
    checks, word for word, raised as the spec's own SpecError (a ConfigError)."""
    from triton_sre.alerting_spec import OPERATIONAL_KEYS
    from triton_sre.checks import check_keys, check_number, check_positive_int
    from triton_sre.slo import SpecError, parse_spec

    with pytest.raises(SpecError) as spec_error:
        parse_spec("slos: [{name: a, type: availability, objective: 99}]\n" + spec_tail, "s.yaml")
    at = f"s.yaml: {where}"
    with pytest.raises(ConfigError) as shared:
        if check == "positive_int":
            check_positive_int(at, value)
        elif check == "ratio":
            check_number(at, value, low=0, high=1, low_inclusive=False)
        else:
            check_keys(at, value, OPERATIONAL_KEYS)  # type: ignore[arg-type]
    assert str(spec_error.value) == str(shared.value)
    assert isinstance(spec_error.value, ConfigError)
