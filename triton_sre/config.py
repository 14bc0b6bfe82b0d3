"""Load and validate triton-sre's YAML configuration; every error names the file and the key.

Precedence for exporter settings: command-line flag > environment variable > config file >
built-in default. YAML is always loaded safely, aliases refused
(`inputs.load_yaml`).
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from triton_sre import conventions as c
from triton_sre.checks import (
    ConfigError,
    check_base_url,
    check_bool,
    check_keys,
    check_listen,
    check_number,
    check_positive_int,
    check_positive_number,
    check_url,
    parse_listen,
    read_yaml,
)
from triton_sre.durations import seconds_arg
from triton_sre.pricing import Pricing
from triton_sre.redact import bounded

__all__ = [
    "CapacitySettings",
    "ExporterSettings",
    "default_metrics_url",
    "load_config",
    "resolve_settings",
    "settings_from_mapping",
]


def default_metrics_url(triton_url: str) -> str:
    """Triton's metrics endpoint on the same host as its HTTP endpoint: port 8002, `/metrics`."""
    parts = urlsplit(triton_url)
    host = parts.hostname or "localhost"
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    return urlunsplit((parts.scheme or "http", f"{host}:{c.TRITON_METRICS_PORT}", c.PATH_METRICS, "", ""))


@dataclass(frozen=True, slots=True)
class CapacitySettings:
    """`capacity:` in the exporter config."""

    model_bytes: float | None = None  # assumed size of one model where Triton reports none
    gpu_host: bool = False  # this host has GPUs: their metrics missing is a fault


@dataclass(frozen=True)
class ExporterSettings:
    triton_url: str = c.DEFAULT_TRITON_URL
    metrics_url: str | None = None  # None: Triton's host, port 8002
    listen: str = c.DEFAULT_LISTEN
    interval: float = c.DEFAULT_INTERVAL_SECONDS
    window: float = c.DEFAULT_WINDOW_SECONDS
    timeout: float = c.DEFAULT_TIMEOUT_SECONDS
    max_response_bytes: int = c.DEFAULT_MAX_RESPONSE_BYTES
    # the memory budgets of one Triton /metrics body: `conventions.BUDGET_*` -> limit
    metrics_budget: Mapping[str, int] = field(default_factory=lambda: dict(c.DEFAULT_METRICS_BUDGET))
    pricing: Pricing = field(default_factory=Pricing)
    capacity: CapacitySettings = field(default_factory=CapacitySettings)

    @property
    def resolved_metrics_url(self) -> str:
        return self.metrics_url or default_metrics_url(self.triton_url)

    @property
    def listen_address(self) -> tuple[str, int]:
        return parse_listen(self.listen, "listen")


def _price(where: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{where}: must be a number (a price per hour), got {bounded(value)}")
    if value < 0:
        raise ConfigError(f"{where}: a price cannot be negative, got {bounded(value)}")
    return float(value)


def _currency(where: str, value: Any) -> str:
    if not isinstance(value, str) or not value.isalpha() or not 1 <= len(value) <= 8:
        raise ConfigError(f"{where}: must be a currency code such as USD, got {bounded(value)}")
    return value.upper()


# A poll interval below 0.1 s busy-polls Triton; above a day the next poll's time overflows the platform's
# time_t on the way (and a window of months is no rate any dashboard reads).
MIN_INTERVAL_SECONDS = 0.1
MAX_INTERVAL_SECONDS = 86400.0
MAX_WINDOW_SECONDS = 31 * 86400.0
# A Triton call's timeout past ~9.2e9 s overflows socket.settimeout (every poll was `internal`); no
# call is meant to wait longer than the longest interval.
MAX_TIMEOUT_SECONDS = MAX_INTERVAL_SECONDS


def interval_arg(text: str) -> float:
    """argparse type of `stack up`'s and `demo`'s --interval, which they hand to the exporter: seconds
    the exporter's poll interval takes (MIN_INTERVAL_SECONDS..MAX_INTERVAL_SECONDS), refused at
    parsing (exit 2) instead of by the exporter once the stack is starting (exit 1)."""
    value = seconds_arg(text)
    if not MIN_INTERVAL_SECONDS <= value <= MAX_INTERVAL_SECONDS:
        raise argparse.ArgumentTypeError(
            f"expected a number of seconds from {MIN_INTERVAL_SECONDS:g} to {MAX_INTERVAL_SECONDS:g} "
            f"(the exporter polls at this interval), got {bounded(text)}"
        )
    return value


def _interval(where: str, value: Any) -> float:
    return check_number(where, value, low=MIN_INTERVAL_SECONDS, high=MAX_INTERVAL_SECONDS)


def _window(where: str, value: Any) -> float:
    return check_number(where, value, low=0, low_inclusive=False, high=MAX_WINDOW_SECONDS)


def _timeout(where: str, value: Any) -> float:
    return check_number(where, value, low=0, low_inclusive=False, high=MAX_TIMEOUT_SECONDS)


def _metrics_budget(where: str, value: Any) -> dict[str, int]:
    """`exporter.metrics_budget`: some of the budgets, each a whole number > 0; the others default."""
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: must be a mapping of budgets, got {type(value).__name__}")
    check_keys(where, value, c.DEFAULT_METRICS_BUDGET)
    given = {k: check_positive_int(f"{where}.{k}", v) for k, v in value.items()}
    return {**c.DEFAULT_METRICS_BUDGET, **given}


_EXPORTER_FIELDS = {
    "triton_url": check_base_url,
    "metrics_url": check_url,  # read as given: no path is added to it
    "listen": check_listen,
    "interval": _interval,
    "window": _window,
    "timeout": _timeout,
    "max_response_bytes": check_positive_int,
    "metrics_budget": _metrics_budget,
}
_PRICING_FIELDS = {
    "currency": _currency,
    "gpu_hour": _price,
    "node_hour": _price,
    "cpu_execution_slots": check_positive_int,
    "kwh": _price,
    "energy_by_model": check_bool,
}
_CAPACITY_FIELDS = {
    "model_bytes": check_positive_number,
    "gpu_host": check_bool,
}
SECTIONS = frozenset({"exporter", "pricing", "capacity"})
"""The exporter config file's top-level keys (the bot's file may hold them beside its own `bot:`)."""
# exporter setting -> the environment variable that sets it
_ENV_VARS = {
    "triton_url": c.ENV_TRITON_URL,
    "metrics_url": c.ENV_METRICS_URL,
    "listen": c.ENV_LISTEN,
    "interval": c.ENV_INTERVAL,
    "window": c.ENV_WINDOW,
}


def _section(where: str, data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key) or {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: {key}: must be a mapping, got {type(value).__name__}")
    return value


def settings_from_mapping(data: Any, source: str) -> ExporterSettings:
    """Validate a parsed config document (`source` names it in errors)."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: the document must be a mapping, got {type(data).__name__}")
    check_keys(source, data, SECTIONS)
    exporter = _section(source, data, "exporter")
    pricing = _section(source, data, "pricing")
    check_keys(f"{source}: exporter", exporter, _EXPORTER_FIELDS)
    check_keys(f"{source}: pricing", pricing, _PRICING_FIELDS)
    capacity = _section(source, data, "capacity")
    check_keys(f"{source}: capacity", capacity, _CAPACITY_FIELDS)
    values = {k: _EXPORTER_FIELDS[k](f"{source}: exporter.{k}", v) for k, v in exporter.items()}
    prices = {k: _PRICING_FIELDS[k](f"{source}: pricing.{k}", v) for k, v in pricing.items()}
    sizes = {k: _CAPACITY_FIELDS[k](f"{source}: capacity.{k}", v) for k, v in capacity.items()}
    return ExporterSettings(**values, pricing=Pricing(**prices), capacity=CapacitySettings(**sizes))


def load_config(path: str | os.PathLike[str]) -> ExporterSettings:
    """Read and validate a YAML config file."""
    return settings_from_mapping(read_yaml(path), str(path))


def resolve_settings(flags: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> ExporterSettings:
    """Combine flags, environment and config file into settings (flags win)."""
    env = os.environ if environ is None else environ
    config_path = flags.get("config") or env.get(c.ENV_CONFIG)
    settings = load_config(config_path) if config_path else ExporterSettings()
    overrides: dict[str, Any] = {}
    for key, env_name in _ENV_VARS.items():
        checker = _EXPORTER_FIELDS[key]
        flag = flags.get(key)
        if flag is not None:
            where = f"--{key.replace('_', '-')}"
            overrides[key] = checker(where, _coerce(key, flag, where))
        elif env.get(env_name):
            overrides[key] = checker(env_name, _coerce(key, env[env_name], env_name))
    return replace(settings, **overrides)


def _coerce(key: str, value: Any, where: str) -> Any:
    if key in ("interval", "window") and isinstance(value, str):
        try:
            return float(value)
        except ValueError as exc:
            raise ConfigError(f"{where}: must be a number of seconds, got {bounded(value)}") from exc
    return value
