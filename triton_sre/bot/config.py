"""The bot's YAML config -> validated `BotSettings`; every error names the file and the key.

```yaml
bot:
  channel: "#triton-alerts"          # default channel (--channel beats it)
  runbook_base_url: https://git.example.com/sre/triton-sre/-/blob/main/runbooks/
  grafana_url: https://grafana.example.com
  alertmanager_url: https://alertmanager.example.com
  prometheus_url: http://prometheus:9090   # enables current values and the chart
  triton_url: http://triton:8000           # live diagnosis for TritonModelUnavailable
  log_file: /var/log/triton/triton.log     # or diagnosis from Triton's log
  templates_dir: /etc/triton-sre/templates # overrides message.json.j2 / update.txt.j2 / text.txt.j2
  chart: true
  max_body_bytes: 2097152
  retry_base_seconds: 1
  retry_max_seconds: 60
  slo_file: /etc/triton-sre/slos.yaml      # the spec generate read: cluster label, rollout settings
  routes:                                  # first match wins; no match: the default channel
    - match: {team: ml}                    # exact label values
      match_re: {severity: "page|critical"} # fully anchored regular expressions
      channel: "#ml-pages"
  fleet:                                   # Triton to diagnose, by the alert's instance or job label
    - instance: "triton-a:8003"
      triton_url: http://triton-a:8000
    - job: triton-sre-eu
      triton_url: http://triton-eu:8000
  clusters:                                # one bot for several clusters: by the alert's cluster label
    east:                                  # (slo_file's cluster_label, else `cluster`); beats fleet
      triton_url: http://triton.east:8000
      prometheus_url: http://prometheus.east:9090  # optional; else prometheus_url
```
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from triton_sre import conventions as c
from triton_sre.checks import (
    ConfigError,
    check_base_url,
    check_bool,
    check_keys,
    check_listen,
    check_positive_int,
    check_positive_number,
    check_runbook_base,
    parse_listen,
    read_yaml,
)
from triton_sre.config import SECTIONS as EXPORTER_SECTIONS
from triton_sre.durations import DurationError, parse_duration
from triton_sre.redact import bounded
from triton_sre.slo import Spec, default_spec, load_spec

DEFAULT_MAX_BODY_BYTES = 2 * 1024 * 1024
# The largest webhook body the bot will read (it is held in memory whole): an Alertmanager group of
# thousands of alerts is a few MB; a config asking for more is a mistake, refused at load.
MAX_BODY_BYTES_LIMIT = 64 * 1024 * 1024
DEFAULT_OUTBOX = "triton-sre-bot.sqlite3"


@dataclass(frozen=True)
class Route:
    channel: str
    match: Mapping[str, str] = field(default_factory=dict)
    match_re: Mapping[str, re.Pattern[str]] = field(default_factory=dict)

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(labels.get(k) == v for k, v in self.match.items()) and all(
            p.fullmatch(labels.get(k, "")) for k, p in self.match_re.items()
        )


@dataclass(frozen=True)
class FleetEntry:
    triton_url: str
    instance: str | None = None
    job: str | None = None

    def matches(self, labels: Mapping[str, str]) -> bool:
        return (self.instance is None or labels.get(c.LABEL_INSTANCE) == self.instance) and (
            self.job is None or labels.get(c.LABEL_JOB) == self.job
        )


@dataclass(frozen=True)
class ClusterEntry:
    """Where one cluster's Triton (and optionally its own Prometheus) answers."""

    triton_url: str
    prometheus_url: str | None = None


@dataclass(frozen=True)
class BotSettings:
    channel: str | None = None
    listen: str = c.DEFAULT_BOT_LISTEN
    runbook_base_url: str | None = None
    grafana_url: str | None = None
    alertmanager_url: str | None = None
    alertmanager_api_url: str | None = None
    prometheus_url: str | None = None
    triton_url: str | None = None
    log_file: str | None = None
    templates_dir: str | None = None
    chart: bool = True
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    retry_base_seconds: float = 1.0
    retry_max_seconds: float = 60.0
    routes: tuple[Route, ...] = ()
    fleet: tuple[FleetEntry, ...] = ()
    clusters: Mapping[str, ClusterEntry] = field(default_factory=dict)
    slo_file: str | None = None  # the spec `generate` read (--slo-file), loaded by with_spec
    spec: Spec | None = field(default=None, compare=False, repr=False)
    rollout_window: str | None = None  # overrides the spec's rollout.window (a gameday's scaled window)

    @property
    def cluster_label(self) -> str:
        """The label that names an alert's cluster: the spec's `cluster_label`, else `cluster`."""
        return (self.spec.cluster_label if self.spec else None) or c.LABEL_CLUSTER

    def slo_spec(self) -> Spec:
        """The spec of the rollout answers: --slo-file's, else the shipped one."""
        return self.spec or default_spec()

    @property
    def listen_address(self) -> tuple[str, int]:
        return parse_listen(self.listen, "listen")

    def channel_for(self, labels: Mapping[str, str]) -> str | None:
        for route in self.routes:
            if route.matches(labels):
                return route.channel
        return self.channel

    @property
    def silences_url(self) -> str | None:
        """The Alertmanager the bot reads silences from: its API URL, else the silence button's."""
        return self.alertmanager_api_url or self.alertmanager_url

    def cluster_of(self, labels: Mapping[str, str]) -> ClusterEntry | None:
        """The `clusters` entry of the cluster the labels name (None: no such label or no entry)."""
        name = labels.get(self.cluster_label)
        return self.clusters.get(name) if name is not None else None

    def prometheus_url_for(self, labels: Mapping[str, str]) -> str | None:
        """The labels' cluster's own Prometheus, else `prometheus_url` (a global store holds them all)."""
        entry = self.cluster_of(labels)
        return entry.prometheus_url if entry is not None and entry.prometheus_url else self.prometheus_url

    def triton_url_for(self, labels: Mapping[str, str]) -> str | None:
        """The labels' cluster's Triton first (an instance such as triton-0:8003 repeats in every
        cluster), then the fleet entry of their instance/job, then `triton_url`."""
        entry = self.cluster_of(labels)
        if entry is not None:
            return entry.triton_url
        for fleet_entry in self.fleet:
            if fleet_entry.matches(labels):
                return fleet_entry.triton_url
        return self.triton_url


def _str(where: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: must be a non-empty string, got {value!r}")
    return value.strip()


# Slack's channel names: letters (any script), digits, `-` and `_`, at most 80 characters, no
# spaces; `#` in front is ours to drop. Slack creates them lowercase and without periods today, but a
# name that worked before this check (a capital, a period of a channel named under the old rules) is
# not refused at start: the delivery's own error says so. Or an ID: C… (channel), G… (private),
# D… (DM), or a user's U… / W… (Enterprise Grid): chat.postMessage opens the DM with that user.
SLACK_CHANNEL_NAME_MAX = 80
_SLACK_CHANNEL_ID = re.compile(r"[CGDUW][A-Z0-9]{8,}")
_SLACK_NAME_CHARACTER = re.compile(r"[-_.\w]")


def _is_slack_channel_name(name: str) -> bool:
    return 0 < len(name) <= SLACK_CHANNEL_NAME_MAX and all(_SLACK_NAME_CHARACTER.fullmatch(ch) for ch in name)


def check_slack_channel(where: str, value: Any) -> str:
    """A channel Slack can post to: `#name` / `name` by Slack's naming rules, or an ID (`C0123ABCD`, a
    user's `U0123ABCD`). A wrong one was accepted and every notification to it failed with
    `channel_not_found`."""
    text = _str(where, value)
    if _SLACK_CHANNEL_ID.fullmatch(text) or _is_slack_channel_name(text.removeprefix("#")):
        return text
    raise ConfigError(
        f"{where}: must be a Slack channel: #name of at most {SLACK_CHANNEL_NAME_MAX} letters, digits, "
        f"'-' or '_' (no spaces), or a channel or user ID such as C0123ABCD or U0123ABCD, "
        f"got {bounded(value)}"
    )


def _labels(where: str, value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping) or not value:
        raise ConfigError(f"{where}: must be a non-empty mapping of label -> value")
    out: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not isinstance(item, (str, int, float)) or isinstance(item, bool):
            raise ConfigError(f"{where}.{key}: label values must be strings, got {item!r}")
        out[key] = str(item)
    return out


def _entries(
    where: str, value: Any, what: str, mapping: str, required: str, either: tuple[str, str]
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each entry of a list of mappings with its place (`where[i]`): only `required` and the
    `either` keys, `required` present and at least one of `either`."""
    if not isinstance(value, list):
        raise ConfigError(f"{where}: must be a list of {what}")
    for i, item in enumerate(value):
        at = f"{where}[{i}]"
        if not isinstance(item, Mapping):
            raise ConfigError(f"{at}: must be a mapping{mapping}")
        check_keys(at, item, {required, *either})
        if required not in item:
            raise ConfigError(f"{at}: {required}: missing")
        if not any(key in item for key in either):
            raise ConfigError(f"{at}: needs {either[0]} or {either[1]}")
        yield at, item


def _routes(where: str, value: Any) -> tuple[Route, ...]:
    routes = []
    hint = " with channel and match/match_re"
    for at, item in _entries(where, value, "routes", hint, "channel", ("match", "match_re")):
        patterns: dict[str, re.Pattern[str]] = {}
        for key, text in _labels(f"{at}.match_re", item["match_re"]).items() if "match_re" in item else ():
            try:
                patterns[key] = re.compile(text)
            except re.error as exc:
                raise ConfigError(f"{at}.match_re.{key}: invalid regular expression: {exc}") from exc
        routes.append(
            Route(
                check_slack_channel(f"{at}.channel", item["channel"]),
                _labels(f"{at}.match", item["match"]) if "match" in item else {},
                patterns,
            )
        )
    return tuple(routes)


def _fleet(where: str, value: Any) -> tuple[FleetEntry, ...]:
    entries = []
    what = "{instance|job, triton_url}"
    for at, item in _entries(where, value, what, "", "triton_url", ("instance", "job")):
        entries.append(
            FleetEntry(
                check_base_url(f"{at}.triton_url", item["triton_url"]),
                _str(f"{at}.instance", item["instance"]) if "instance" in item else None,
                _str(f"{at}.job", item["job"]) if "job" in item else None,
            )
        )
    return tuple(entries)


_CLUSTER_KEYS = {"triton_url", "prometheus_url"}


def _clusters(where: str, value: Any) -> dict[str, ClusterEntry]:
    """`clusters`: cluster label value -> {triton_url, prometheus_url (optional)}."""
    if not isinstance(value, Mapping) or not value:
        raise ConfigError(
            f"{where}: must be a non-empty mapping of cluster name -> {{triton_url, prometheus_url}}"
        )
    out: dict[str, ClusterEntry] = {}
    for name, item in value.items():
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(
                f"{where}: a cluster name must be a non-empty string (quote it), got {bounded(name)}"
            )
        at = f"{where}.{name}"
        if not isinstance(item, Mapping):
            raise ConfigError(f"{at}: must be a mapping with triton_url and optionally prometheus_url")
        check_keys(at, item, _CLUSTER_KEYS)
        if "triton_url" not in item:
            raise ConfigError(f"{at}: triton_url: missing")
        out[name] = ClusterEntry(
            check_base_url(f"{at}.triton_url", item["triton_url"]),
            check_base_url(f"{at}.prometheus_url", item["prometheus_url"])
            if "prometheus_url" in item
            else None,
        )
    return out


def _window(where: str, value: Any) -> str:
    """A duration (the rollout window), refused as a ConfigError naming `where`."""
    try:
        parse_duration(value, where)
    except DurationError as exc:
        raise ConfigError(str(exc)) from None
    return str(value)


_FIELDS: dict[str, Any] = {
    "channel": check_slack_channel,
    "listen": check_listen,
    "runbook_base_url": check_runbook_base,
    "grafana_url": check_base_url,
    "alertmanager_url": check_base_url,
    "alertmanager_api_url": check_base_url,
    "prometheus_url": check_base_url,
    "triton_url": check_base_url,
    "log_file": _str,
    "templates_dir": _str,
    "chart": check_bool,
    "max_body_bytes": lambda where, value: check_positive_int(where, value, high=MAX_BODY_BYTES_LIMIT),
    "retry_base_seconds": check_positive_number,
    "retry_max_seconds": check_positive_number,
    "routes": _routes,
    "fleet": _fleet,
    "clusters": _clusters,
    "slo_file": _str,
    "rollout_window": _window,
}
FLAG_FIELDS = (
    "channel",
    "listen",
    "runbook_base_url",
    "grafana_url",
    "alertmanager_url",
    "alertmanager_api_url",
    "prometheus_url",
    "triton_url",
    "slo_file",
    "rollout_window",
)


def flag_settings(flags: Mapping[str, Any]) -> dict[str, Any]:
    """The settings given as flags (`FLAG_FIELDS`), each checked as its config key is, named `--flag`:
    an empty value is refused like `export --listen ''`, never read as "not given" (`--listen ''`
    listened on the default address)."""
    return {
        key: _FIELDS[key](f"--{key.replace('_', '-')}", flags[key])
        for key in FLAG_FIELDS
        if flags.get(key) is not None
    }


_SECTIONS = {"bot", *EXPORTER_SECTIONS}
"""A config file's top-level keys: the bot's section and the exporter's (config.py), which it leaves."""


def settings_from_mapping(data: Any, source: str) -> BotSettings:
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: the document must be a mapping, got {type(data).__name__}")
    # The bot reads its own section; other sections (exporter, pricing) belong to other commands. A key
    # of neither (the bot's own keys without `bot:` above them) was ignored, and the bot ran without them.
    stray = sorted(str(key) for key in data if key in _FIELDS)
    if stray:
        raise ConfigError(f"{source}: {', '.join(stray)}: the bot's settings go under `bot:`")
    check_keys(source, data, _SECTIONS)
    bot = data.get("bot") or {}
    if not isinstance(bot, Mapping):
        raise ConfigError(f"{source}: bot: must be a mapping, got {type(bot).__name__}")
    check_keys(f"{source}: bot", bot, _FIELDS)
    values = {k: _FIELDS[k](f"{source}: bot.{k}", v) for k, v in bot.items()}
    return BotSettings(**values)


def load_bot_config(path: str | Path) -> BotSettings:
    return settings_from_mapping(read_yaml(path), str(path))


def with_spec(settings: BotSettings) -> BotSettings:
    """The settings with `slo_file`'s spec loaded (slo.load_spec, as generate, lint and report read it),
    its rollout window `rollout_window` when given; a spec that does not load is a SpecError (a
    ConfigError: one line, exit 2 at startup)."""
    spec = load_spec(settings.slo_file) if settings.slo_file else None
    if settings.rollout_window:
        spec = spec or default_spec()
        spec = replace(spec, rollout=replace(spec.rollout, window=settings.rollout_window))
    return replace(settings, spec=spec) if spec else settings
