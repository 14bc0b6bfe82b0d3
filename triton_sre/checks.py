"""The field checks of every YAML configuration (exporter, bot, SLO spec): one definition each.

A leaf: it imports nothing of triton-sre but the two other leaves it needs (`inputs` for bounded
file reads and alias-free YAML, `redact.bounded` to quote a value), so the SLO model and the bot's
config use these checks without pulling in the exporter or the Triton client. Every error is a
`ConfigError` naming where the value came from (file and key, flag or environment variable).
"""

from __future__ import annotations

import argparse
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import yaml

from triton_sre.inputs import MAX_CONFIG_BYTES, InputFileError, load_yaml, read_bounded, yaml_problem
from triton_sre.redact import REDACTED, bounded, shown_path

__all__ = [
    "ConfigError",
    "check_base_url",
    "check_bool",
    "check_keys",
    "check_listen",
    "check_number",
    "check_positive_int",
    "check_positive_number",
    "check_url",
    "full_url_arg",
    "name_arg",
    "out_folder_arg",
    "parse_listen",
    "path_arg",
    "path_text_arg",
    "read_yaml",
    "runbook_base_arg",
    "url_arg",
]


class ConfigError(ValueError):
    """Invalid configuration; the message says which file and key, and what is wrong."""


def parse_listen(value: str, where: str) -> tuple[str, int]:
    """(host, port) of HOST:PORT; an empty host (`:8003`) listens on every address."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(
            f"{where}: expected HOST:PORT (an empty host is every address), got {bounded(value)}"
        )
    return host.strip("[]") or "0.0.0.0", int(port)


def check_number(
    where: str, value: Any, *, low: float, high: float = math.inf, low_inclusive: bool = True
) -> float:
    """A finite number in [low, high] (or (low, high] when not `low_inclusive`)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{where}: must be a number, got {bounded(value)}")
    if value < low or (value == low and not low_inclusive) or value > high:
        bound = f"{'at least' if low_inclusive else 'greater than'} {low:.12g}"
        if high != math.inf:
            bound += f" and at most {high:.12g}"
        raise ConfigError(f"{where}: must be {bound}, got {bounded(value)}")
    return float(value)


def check_positive_number(where: str, value: Any) -> float:
    return check_number(where, value, low=0, low_inclusive=False)


def check_no_template(where: str, value: str) -> str:
    """`value`, refused when it holds Go template braces: a name `generate` writes into alert
    annotations (Prometheus expands them as templates) or into the Flagger and Argo Rollouts templates
    (which expand `{{ }}` too), where `{{ query "..." }}` would run and a lone `{{` breaks the file."""
    if "{{" in value or "}}" in value:
        raise ConfigError(
            f"{where}: must not contain '{{{{' or '}}}}' (alert annotations and rollout templates read "
            f"it as a Go template), got {bounded(value)}"
        )
    return value


def check_bool(where: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: must be true or false, got {bounded(value)}")
    return value


def check_positive_int(where: str, value: Any, *, high: int | None = None) -> int:
    """A whole number > 0 (and at most `high` when given)."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{where}: must be a whole number greater than 0, got {bounded(value)}")
    if high is not None and value > high:
        raise ConfigError(f"{where}: must be a whole number from 1 to {high}, got {bounded(value)}")
    return value


_HTTP_URL = re.compile(r"https?://[^/\s]+")


def check_url(where: str, value: Any) -> str:
    """An http(s) URL with a host (``http://`` alone is refused) that parses (``http://[::1`` or a port
    past 65535 would fail in the HTTP client); surrounding blanks removed."""
    text = value.strip() if isinstance(value, str) else value
    if not isinstance(text, str) or not _HTTP_URL.match(text) or not _parses(text):
        raise ConfigError(f"{where}: must be an http(s) URL, got {bounded(refused_url(value))}")
    return text


def check_base_url(where: str, value: Any) -> str:
    """An endpoint's base URL, which API paths are added to (Triton's `/v2/...`, Prometheus' `/api/v1/...`,
    Alertmanager's, Grafana's, Slack's): `check_url`, and no query string or fragment, which would end up
    before the path (`http://triton:8000?x=1/v2/repository/index` asks for `/`). The refused part is not
    quoted: a query string may hold a token."""
    text = check_url(where, value)
    if "?" in text or "#" in text:
        parts = urlsplit(text)
        shown = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        raise ConfigError(
            f"{where}: paths are added to this URL, so it takes no query string or fragment; give "
            f"{bounded(refused_url(shown))}"
        )
    return text


_SCHEME = re.compile(r"[A-Za-z][\w+.-]*://")


def refused_url(value: Any) -> Any:
    """A refused URL as an error may quote it: everything before its last ``@`` hidden (but a
    ``scheme://``), also where no ``//`` marks credentials for `redact`: ``admin:pw@triton:8000`` (the
    scheme forgotten), ``http:/admin:pw@host``, a password holding ``/`` or a blank."""
    if not isinstance(value, str) or "@" not in value:
        return value
    head, _, tail = value.rpartition("@")
    scheme = _SCHEME.match(head)
    return f"{scheme.group(0) if scheme else ''}{REDACTED}@{tail}"


def _parses(url: str) -> bool:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  # raises on a port that is not a number in 0..65535
    except ValueError:  # an unclosed IPv6 bracket, a bad port
        return False
    return bool(parts.hostname)


def url_arg(text: str) -> str:
    """argparse type of every command-line endpoint (`--triton-url`, `--prometheus-url`, ...; set on
    them all by `cli.build_parser`): a base URL `check_base_url` accepts, else a usage error, exit 2."""
    return _url_arg(text, check_base_url)


def full_url_arg(text: str) -> str:
    """argparse type of a flag naming a whole URL, read as given (`--metrics-url`): `check_url`."""
    return _url_arg(text, check_url)


def _url_arg(text: str, check: Any) -> str:
    try:
        check("URL", text)
    except ConfigError as exc:
        if _parses(text.strip()) and _HTTP_URL.match(text.strip()):  # a URL, refused for its shape
            raise argparse.ArgumentTypeError(str(exc).removeprefix("URL: ")) from None
        raise argparse.ArgumentTypeError(
            f"expected an http(s) URL such as http://localhost:9090, got {bounded(refused_url(text))}"
        ) from None
    return text.strip()


def byte_count_arg(text: str) -> int:
    """argparse type of a command-line size in bytes (``--max-response-bytes``): a whole number above 0,
    else a usage error, exit 2."""
    try:
        return check_positive_int("size", int(text))
    except (ValueError, ConfigError):
        raise argparse.ArgumentTypeError(
            f"expected a whole number of bytes above 0, got {bounded(text)}"
        ) from None


def runbook_base_arg(text: str) -> str:
    """argparse type of ``--runbook-base-url`` (an http(s) URL or a repository path): not empty and
    without Go template braces, since Prometheus expands an alert's annotations as a template (a
    ``{{`` in the prefix would make every generated runbook_url a broken template); one printable line;
    a URL is http(s) (not ``javascript:``), without a query or fragment (the name is added after it) and
    without credentials (every alert and Slack message shows it)."""
    if not text:
        raise argparse.ArgumentTypeError("must not be empty")
    if "{{" in text or "}}" in text:
        raise argparse.ArgumentTypeError(
            f"must not contain '{{{{' or '}}}}' (Prometheus reads alert annotations as Go templates), "
            f"got {bounded(text)}"
        )
    if not text.isprintable():  # a newline made every runbook_url a YAML block of two lines
        raise argparse.ArgumentTypeError(f"must be one line of printable text, got {bounded(text)}")
    parts = urlsplit(text)
    if parts.scheme or text.startswith("//"):  # a URL, not a repository path: an http(s) one, to a page
        problem = _link_base_problem(text)
        if problem is not None:
            path_too = problem.replace(" it), got ", " it), or a repository path, got ", 1)
            raise argparse.ArgumentTypeError(path_too)
    return text


def check_runbook_base(where: str, value: Any) -> str:
    """A base URL runbook links are made of (the bot's Slack buttons): http(s), no query string or fragment
    (the runbook's name is added after it), no credentials (every message shows it)."""
    text = value.strip() if isinstance(value, str) else value
    problem = _link_base_problem(text) if isinstance(text, str) else "must be an http(s) URL"
    if problem is not None:
        raise ConfigError(f"{where}: {problem}")
    return text


def _link_base_problem(text: str) -> str | None:
    """What makes `text` no base of links: not an http(s) URL, a query or fragment, credentials (quoted
    without the query, which may hold a token, or the password); None when it is one."""
    parts = urlsplit(text)
    try:
        check_base_url("", text)
    except ConfigError:
        shown = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        return (
            "must be an http(s) URL without a query string or fragment (the runbook's name is added to it), "
            f"got {bounded(refused_url(shown))}"
        )
    if parts.username is not None or parts.password is not None:
        shown = bounded(refused_url(text))
        return f"must carry no credentials: every alert, message and dashboard shows it, got {shown}"
    return None


def out_folder_arg(text: str) -> str:
    """argparse type of an output folder flag (``report --out``): not empty or blank, since an empty path
    is the current directory (``--out ''`` wrote the report there), else a usage error, exit 2."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"must name a folder, got {bounded(text)} (use . for this one)")
    return text


def _filled(text: str, give: str) -> str:
    """`text` unless it is empty or blank (a flag given "$VAR" with the variable unset), else exit 2."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"is empty, got {bounded(text)}: give {give}")
    return text


def path_text_arg(text: str) -> str:
    """argparse type of a file or folder flag: an empty path is the current directory (`stack up --workdir
    "$DIR"` with the variable unset started a stack there; `lint ""` linted it; `export --config ""` ran
    without a config), so it is a usage error."""
    return _filled(text, "a path (. for this folder)")


def name_arg(text: str) -> str:
    """argparse type of a name flag (`rollout check --model`, a version, a cluster): empty read as the flag
    not given (`--candidate-version "$NEW"` with the variable unset), so it is a usage error."""
    return _filled(text, "a name")


def path_arg(text: str) -> Path:
    """`path_text_arg` as a Path."""
    return Path(path_text_arg(text))


def check_listen(where: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: expected HOST:PORT, got {bounded(value)}")
    parse_listen(value.strip(), where)
    return value.strip()


def check_keys(where: str, data: Mapping[str, Any], allowed: set[str] | Mapping[str, Any]) -> None:
    unknown = sorted(str(k) for k in data if k not in allowed)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {bounded(unknown[0])} (allowed: {', '.join(sorted(allowed))})"
        )


def read_yaml(path: str | os.PathLike[str]) -> Any:
    """A YAML file's document, loaded safely; errors name the file (and line for bad YAML)."""
    source = shown_path(path)
    try:
        text = read_bounded(path, MAX_CONFIG_BYTES).decode("utf-8")
    except InputFileError as exc:
        raise ConfigError(f"{source}: cannot read: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{source}: not UTF-8 text") from exc
    try:
        return load_yaml(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: {yaml_problem(exc)}") from exc
