"""Load and validate triton-sre's YAML configuration; every error names the file and the key.

Precedence for exporter settings: command-line flag > environment variable > config file >
built-in default. YAML is always loaded safely, aliases refused
(`inputs.load_yaml`).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from triton_sre import conventions as c
from triton_sre.exporter.capacity import CapacitySettings
from triton_sre.inputs import MAX_CONFIG_BYTES, InputFileError, load_yaml, read_bounded
from triton_sre.pricing import Pricing
from triton_sre.redact import bounded
from triton_sre.triton.client import default_metrics_url


class ConfigError(ValueError):
    """Invalid configuration; the message says which file and key, and what is wrong."""


@dataclass(frozen=True)
class ExporterSettings:
    triton_url: str = c.DEFAULT_TRITON_URL
    metrics_url: str | None = None  # None: Triton's host, port 8002
    listen: str = c.DEFAULT_LISTEN
    interval: float = c.DEFAULT_INTERVAL_SECONDS
    window: float = c.DEFAULT_WINDOW_SECONDS
    timeout: float = c.DEFAULT_TIMEOUT_SECONDS
    max_response_bytes: int = c.DEFAULT_MAX_RESPONSE_BYTES
    pricing: Pricing = field(default_factory=Pricing)
    capacity: CapacitySettings = field(default_factory=CapacitySettings)

    @property
    def resolved_metrics_url(self) -> str:
        return self.metrics_url or default_metrics_url(self.triton_url)

    @property
    def listen_address(self) -> tuple[str, int]:
        return parse_listen(self.listen, "listen")


def parse_listen(value: str, where: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(
            f"{where}: expected HOST:PORT (e.g. 0.0.0.0:{c.EXPORTER_PORT}), got {bounded(value)}"
        )
    return host.strip("[]") or "0.0.0.0", int(port)


# -- field checkers -----------------------------------------------------------------------------
def check_number(
    where: str, value: Any, *, low: float, high: float = math.inf, low_inclusive: bool = True
) -> float:
    """A finite number in [low, high] (or (low, high] when not `low_inclusive`)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{where}: must be a number, got {bounded(value)}")
    if value < low or (value == low and not low_inclusive) or value > high:
        bound = f"{'at least' if low_inclusive else 'greater than'} {low:g}"
        if high != math.inf:
            bound += f" and at most {high:g}"
        raise ConfigError(f"{where}: must be {bound}, got {bounded(value)}")
    return float(value)


def check_positive_number(where: str, value: Any) -> float:
    return check_number(where, value, low=0, low_inclusive=False)


def _price(where: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{where}: must be a number (a price per hour), got {bounded(value)}")
    if value < 0:
        raise ConfigError(f"{where}: a price cannot be negative, got {bounded(value)}")
    return float(value)


# Shared with the bot's config (bot/config.py) and the SLO spec (slo.py): one definition of each check.
def check_bool(where: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: must be true or false, got {bounded(value)}")
    return value


def check_positive_int(where: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{where}: must be a whole number greater than 0, got {bounded(value)}")
    return value


_HTTP_URL = re.compile(r"https?://[^/\s]+")


def check_url(where: str, value: Any) -> str:
    """An http(s) URL with a host (``http://`` alone is refused); surrounding blanks removed."""
    text = value.strip() if isinstance(value, str) else value
    if not isinstance(text, str) or not _HTTP_URL.match(text):
        raise ConfigError(f"{where}: must be an http(s) URL, got {bounded(value)}")
    return text


def check_listen(where: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: expected HOST:PORT, got {bounded(value)}")
    parse_listen(value.strip(), where)
    return value.strip()


def _currency(where: str, value: Any) -> str:
    if not isinstance(value, str) or not value.isalpha() or not 1 <= len(value) <= 8:
        raise ConfigError(f"{where}: must be a currency code such as USD, got {bounded(value)}")
    return value.upper()


_EXPORTER_FIELDS = {
    "triton_url": check_url,
    "metrics_url": check_url,
    "listen": check_listen,
    "interval": check_positive_number,
    "window": check_positive_number,
    "timeout": check_positive_number,
    "max_response_bytes": check_positive_int,
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
_TOP_LEVEL = {"exporter", "pricing", "capacity"}
# exporter setting -> the environment variable that sets it
_ENV_VARS = {
    "triton_url": c.ENV_TRITON_URL,
    "metrics_url": c.ENV_METRICS_URL,
    "listen": c.ENV_LISTEN,
    "interval": c.ENV_INTERVAL,
    "window": c.ENV_WINDOW,
}


def check_keys(where: str, data: Mapping[str, Any], allowed: set[str] | Mapping[str, Any]) -> None:
    unknown = sorted(str(k) for k in data if k not in allowed)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {bounded(unknown[0])} (allowed: {', '.join(sorted(allowed))})"
        )


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
    check_keys(source, data, _TOP_LEVEL)
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


def read_yaml(path: str | os.PathLike[str]) -> Any:
    """A YAML file's document, loaded safely; errors name the file (and line for bad YAML)."""
    source = str(path)
    try:
        text = read_bounded(path, MAX_CONFIG_BYTES).decode("utf-8")
    except InputFileError as exc:
        raise ConfigError(f"{source}: cannot read: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{source}: not UTF-8 text") from exc
    try:
        return load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"{source}: invalid YAML{at}: {problem}") from exc


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
