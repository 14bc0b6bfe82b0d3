"""The SLO spec (`slos.yaml`) -> a validated, immutable model.

Every error names the file, the SLO and the field, e.g.
``slos.yaml: slos[1] (latency): objective: must be greater than 0 and less than 100, got 100``.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import yaml

from triton_sre import conventions as c
from triton_sre.alerting_spec import LLMAlerting, Operational, parse_llm_alerting, parse_operational
from triton_sre.autoscale_spec import Autoscaling, default_target, parse_autoscaling
from triton_sre.checks import ConfigError, check_keys, check_no_template, check_number
from triton_sre.data import shipped
from triton_sre.durations import DurationError, format_duration, parse_duration, whole_ms
from triton_sre.inputs import MAX_SPEC_BYTES, InputFileError, load_yaml, read_once, stdin_alias, yaml_problem
from triton_sre.redact import bounded, printable, shown_path
from triton_sre.rollout.spec import RolloutSpec, parse_rollout

DEFAULT_SPEC_FILE = "slos.yaml"
"""The spec's file name: ./slos.yaml is `generate`'s default, the repository's is shipped."""
_SLO_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_LABEL_VALUE_RE = re.compile(r"^[^\x00-\x1f]+$")
# Python `re` accepts constructs Prometheus' RE2 rejects: refuse them here, not in Prometheus.
_RE2_UNSUPPORTED = re.compile(r"\(\?[=!]|\(\?<[=!]|\\[1-9]|\(\?P=|\(\?>|\\Z|[*+?}][+]")


class SpecError(ConfigError):
    """An invalid SLO spec; the message names the file, the SLO and the field.

    The field checks shared with the exporter's and the bot's config (`triton_sre.config`) raise
    `ConfigError`; `spec_from_mapping` turns theirs into this one, with the same message."""


@dataclass(frozen=True)
class ModelSelector:
    """Which models an SLO covers: all of them, a list of names, or an RE2 regex (fully anchored)."""

    kind: str  # "all" | "list" | "regex"
    names: tuple[str, ...] = ()
    regex: str = ""

    @property
    def pattern(self) -> str | None:
        """The regex for a `model=~"..."` matcher; None for all models."""
        if self.kind == "all":
            return None
        if self.kind == "list":
            return "|".join(re.escape(n) for n in self.names)
        return self.regex

    def describe(self) -> str:
        if self.kind == "all":
            return "all models"
        if self.kind == "list":
            return ", ".join(self.names)
        return f"models matching /{self.regex}/"


@dataclass(frozen=True)
class SLO:
    name: str
    type: str  # conventions.SLO_AVAILABILITY | SLO_LATENCY
    models: ModelSelector
    objective: Decimal  # percent, e.g. 99.9
    period_s: int
    period: str  # as written in Prometheus duration syntax, e.g. "30d"
    min_request_rate: float  # requests/s below which burn alerts stay silent (both windows)
    description: str = ""
    # availability: which failure reasons count as bad; None = every reason but CANCELED
    bad_reasons: tuple[str, ...] | None = None
    # latency
    threshold_s: float = 0.0
    latency_sli: str = c.LATENCY_SLI_AUTO
    time_slice: str = "1m"
    queue_time_share: float = 0.5
    # the time-slice SLI: a slice is bad when this quantile of its latency exceeds the threshold
    quantile: str = c.DEFAULT_SLO_QUANTILE

    @property
    def budget(self) -> Decimal:
        """The error budget as a ratio, exactly: 99.9 -> 0.001."""
        return (Decimal(100) - self.objective) / Decimal(100)


@dataclass(frozen=True)
class Spec:
    slos: tuple[SLO, ...]
    triton_job: str = c.DEFAULT_TRITON_JOB
    exporter_job: str = c.DEFAULT_EXPORTER_JOB
    # the Triton container's name in its pods, as kube-state-metrics labels it (TritonContainerRestarted)
    triton_container: str = c.DEFAULT_TRITON_CONTAINER
    operational: Operational = field(default_factory=Operational)
    llm: LLMAlerting = field(default_factory=LLMAlerting)
    source: str = "slos.yaml"
    # what the Triton servers export for latency (`--metrics-config`): summary, histogram, both, none
    latency_metrics: tuple[str, ...] = (c.LATENCY_SOURCE_SUMMARY,)
    autoscaling: tuple[Autoscaling, ...] = ()  # deployments to autoscale (autoscale_spec.py)
    # issue 24: the label that tells clusters apart (an external label of each cluster's Prometheus);
    # None: one cluster, every aggregation as before. Set: every rule and dashboard keeps it.
    cluster_label: str | None = None
    # the `rollout:` section, validated when the spec loads (triton_sre.rollout.spec)
    rollout: RolloutSpec = field(default_factory=RolloutSpec, compare=False)
    # `scrape.interval`: how often Prometheus scrapes Triton; the gauge signals average over
    # AUTOSCALE_SIGNAL_SCRAPES of it (`signal_window_s`)
    scrape_interval_s: float = c.DEFAULT_SCRAPE_INTERVAL_S
    # what the generated files' headers and the SLO dashboard call the spec (`origin_name`); None: the
    # last part of `source`
    origin: str | None = field(default=None, compare=False)

    @property
    def origin_name(self) -> str:
        """The spec as generated files name it: its file's name (``slos.yaml``), or for a spec read from a
        pipe, which has none (``stdin``, ``63`` were names of the descriptor), its content's hash."""
        return self.origin if self.origin is not None else Path(self.source).name

    @property
    def signal_window_s(self) -> float:
        """The window the pending-requests and LLM-waiting signals average the gauge over."""
        return c.AUTOSCALE_SIGNAL_SCRAPES * self.scrape_interval_s

    @property
    def signal_jobs(self) -> tuple[str, ...]:
        """The scrape jobs whose scaling signals are recorded: scrape.triton_job and the job of each
        `autoscaling:` entry (an entry on another job reads nothing otherwise)."""
        return tuple(dict.fromkeys([self.triton_job, *(e.job for e in self.autoscaling)]))


# -- loading ---------------------------------------------------------------------------------------
_TOP_KEYS = {"scrape", "operational", "slos", "llm", "cluster_label", "autoscaling", "rollout"}
_LABEL_NAME_RE = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_SCRAPE_KEYS = {"triton_job", "exporter_job", "triton_container", "latency_metrics", "interval"}
_COMMON_KEYS = {"name", "description", "type", "models", "objective", "period", "min_request_rate"}
_AVAILABILITY_KEYS = _COMMON_KEYS | {"bad_reasons"}
_LATENCY_KEYS = _COMMON_KEYS | {"threshold", "latency_sli", "time_slice", "queue_time_share", "quantile"}
_LLM_KEYS = _COMMON_KEYS | {"threshold"}  # ttft, time_per_output_token


def load_spec(path: str | Path) -> Spec:
    """Read and validate a spec file (``-``: standard input); SpecError names the file, the SLO, the field."""
    path = stdin_alias(path)
    source = shown_path(path)  # every message of the spec begins with it
    try:
        text = read_once(path, MAX_SPEC_BYTES).decode("utf-8")  # a pipe too, read once
    except InputFileError as exc:
        raise SpecError(f"{source}: cannot read: {exc}") from None
    except UnicodeDecodeError:
        raise SpecError(f"{source}: not UTF-8 text") from None
    return replace(parse_spec(text, source), origin=_origin(path, text))


PIPED_ORIGIN = "a spec read from a pipe (sha256 {digest})"
"""How generated files name a spec read from a pipe: the same text gives the same files whichever way it
was piped (``--spec /dev/stdin``, ``--spec <(cat slos.yaml)``, a named FIFO), and `generate --check` of it
compares the same way."""


def _origin(path: Path, text: str) -> str:
    """`Spec.origin_name` of the spec read from ``path``: a regular file's name (behind ``/dev/stdin`` or
    ``/dev/fd/N``, the name of the file they stand for); anything else (a pipe) by its content's hash."""
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        regular = False
    if regular:
        if path.absolute().parts[1:2] in (("dev",), ("proc",)):  # a descriptor's name: the file's own
            return printable(Path(os.path.realpath(path)).name)
        return printable(path.name)
    return PIPED_ORIGIN.format(digest=hashlib.sha256(text.encode("utf-8")).hexdigest()[:16])


def default_spec() -> Spec:
    """The spec shipped with the package: the repository's slos.yaml (package data)."""
    return parse_spec(shipped(DEFAULT_SPEC_FILE).read_text(encoding="utf-8"), DEFAULT_SPEC_FILE)


def parse_spec(text: str, source: str = "slos.yaml") -> Spec:
    try:
        raw = load_yaml(text)
    except yaml.YAMLError as exc:
        raise SpecError(f"{source}: {yaml_problem(exc)}") from exc
    return spec_from_mapping(raw, source)


def spec_from_mapping(raw: Any, source: str = "slos.yaml") -> Spec:
    try:
        return _spec(raw, source)
    except SpecError:
        raise
    except (ConfigError, DurationError) as exc:  # a shared check's error: the same message, as a SpecError
        raise SpecError(str(exc)) from None


def _spec(raw: Any, source: str) -> Spec:
    if not isinstance(raw, Mapping):
        raise SpecError(f"{source}: expected a mapping with key 'slos', got {type(raw).__name__}")
    check_keys(source, raw, _TOP_KEYS)
    scrape = raw.get("scrape") or {}
    if not isinstance(scrape, Mapping):
        raise SpecError(f"{source}: scrape: expected a mapping")
    check_keys(f"{source}: scrape", scrape, _SCRAPE_KEYS)
    triton_job = _label_value(scrape.get("triton_job", c.DEFAULT_TRITON_JOB), f"{source}: scrape.triton_job")
    exporter_job = _label_value(
        scrape.get("exporter_job", c.DEFAULT_EXPORTER_JOB), f"{source}: scrape.exporter_job"
    )
    triton_container = _label_value(
        scrape.get("triton_container", c.DEFAULT_TRITON_CONTAINER), f"{source}: scrape.triton_container"
    )
    operational = parse_operational(raw.get("operational") or {}, f"{source}: operational")
    llm = parse_llm_alerting(raw.get("llm") or {}, f"{source}: llm")
    latency_metrics = _latency_metrics(
        scrape.get("latency_metrics", [c.LATENCY_SOURCE_SUMMARY]), f"{source}: scrape.latency_metrics"
    )

    slos_raw = raw.get("slos")
    if not isinstance(slos_raw, list) or not slos_raw:
        raise SpecError(f"{source}: slos: expected a non-empty list of SLOs")
    slos: list[SLO] = []
    seen: set[str] = set()
    for i, entry in enumerate(slos_raw):
        slo = _slo(entry, i, source)
        if slo.name in seen:
            raise SpecError(f"{source}: slos[{i}] ({slo.name}): name: duplicate SLO name {bounded(slo.name)}")
        seen.add(slo.name)
        slos.append(slo)
    thresholds = [(s.threshold_s, float(s.quantile)) for s in slos if s.type == c.SLO_LATENCY]
    autoscaling = parse_autoscaling(
        raw.get("autoscaling"),
        f"{source}: autoscaling",
        duration=parse_duration,
        default_job=triton_job,
        targets={
            signal: default_target(
                signal,
                thresholds,
                operational.queue_time_threshold_s,
                operational.pending_requests,
                llm.kv_cache_saturated_ratio,
            )
            for signal in c.SIGNALS
        },
        startup_probe_budget_s=operational.startup_probe_budget_s,
    )
    return Spec(
        slos=tuple(slos),
        triton_job=triton_job,
        exporter_job=exporter_job,
        triton_container=triton_container,
        operational=operational,
        llm=llm,
        source=source,
        latency_metrics=latency_metrics,
        autoscaling=autoscaling,
        cluster_label=_cluster_label(raw.get("cluster_label"), f"{source}: cluster_label"),
        rollout=parse_rollout(raw.get("rollout"), f"{source}: rollout", slos),
        scrape_interval_s=_scrape_interval(scrape.get("interval"), f"{source}: scrape.interval"),
    )


def _scrape_interval(value: Any, where: str) -> float:
    """Whole seconds, 1s to 1m: the scaling signals' window is a multiple of it."""
    if value is None:
        return c.DEFAULT_SCRAPE_INTERVAL_S
    seconds = parse_duration(value, where)
    if not 1 <= seconds <= 60 or seconds != int(seconds):
        raise SpecError(
            f"{where}: expected whole seconds from 1s to 1m (the scrape_interval Prometheus scrapes "
            f"Triton at), got {bounded(value)}"
        )
    return seconds


def _cluster_label(value: Any, where: str) -> str | None:
    """A Prometheus label name that no generated rule already uses for something else."""
    if value is None:
        return None
    if not isinstance(value, str) or not _LABEL_NAME_RE.fullmatch(value) or value.startswith("__"):
        raise SpecError(f"{where}: expected a Prometheus label name (e.g. cluster), got {bounded(value)}")
    if value in c.RESERVED_LABELS:
        raise SpecError(f"{where}: {value!r} is a label the rules already use; pick another name")
    return value


def _latency_metrics(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or any(v not in c.LATENCY_METRICS for v in value):
        raise SpecError(
            f"{where}: expected a list of {' and '.join(c.LATENCY_METRICS)} (what Triton's "
            f"--metrics-config turns on; [] for neither), got {bounded(value)}"
        )
    if len(set(value)) != len(value):
        raise SpecError(f"{where}: names a kind twice: {bounded(value)}")
    return tuple(v for v in c.LATENCY_METRICS if v in value)


def spec_warnings(spec: Spec) -> list[str]:
    """What `generate` prints on stderr: latency SLOs that can only be judged on averages."""
    if spec.latency_metrics:
        return []
    return [
        f"{spec.source}: SLO {slo.name}: scrape.latency_metrics is [], so its latency SLI compares "
        f"one-{slo.time_slice} averages with the threshold ({c.L_LATENCY_SOURCE}="
        f'"{c.LATENCY_SOURCE_AVERAGE}"): averages hide the tail. Start Triton with '
        "--metrics-config summary_latencies=true (or histogram_latencies=true on 24.11+) and list it "
        "in scrape.latency_metrics."
        for slo in spec.slos
        if slo.type == c.SLO_LATENCY and slo.latency_sli != c.LATENCY_SLI_HISTOGRAM
    ]


def _label_value(value: Any, where: str) -> str:
    """A scrape job or container name. Written into alert annotations (a Go template in Prometheus)
    and the rollout templates (Go templates in Flagger and Argo Rollouts) as it is, so template
    braces are refused: `{{ query "..." }}` in a job name would run there."""
    if not isinstance(value, str) or not value or not _LABEL_VALUE_RE.fullmatch(value):
        raise SpecError(f"{where}: expected a non-empty string, got {bounded(value)}")
    try:
        return check_no_template(where, value)
    except ConfigError as exc:
        raise SpecError(str(exc)) from None


def _models(value: Any, where: str) -> ModelSelector:
    if value == "all" or value is None:
        return ModelSelector("all")
    if isinstance(value, list):
        if not value or not all(isinstance(v, str) and v and _LABEL_VALUE_RE.fullmatch(v) for v in value):
            raise SpecError(
                f"{where}: a list of models must hold non-empty model names, got {bounded(value)}"
            )
        if len(set(value)) != len(value):
            raise SpecError(f"{where}: the list of models names a model twice: {bounded(value)}")
        return ModelSelector("list", names=tuple(value))
    if isinstance(value, Mapping):
        check_keys(where, value, {"regex"})
        regex = value.get("regex")
        if not isinstance(regex, str) or not regex:
            raise SpecError(f"{where}.regex: expected a non-empty regular expression, got {bounded(regex)}")
        try:
            re.compile(regex)
        except re.error as exc:
            raise SpecError(f"{where}.regex: invalid regular expression {bounded(regex)}: {exc}") from exc
        if _RE2_UNSUPPORTED.search(regex):
            raise SpecError(
                f"{where}.regex: "
                f"{bounded(regex)} uses lookaround, backreferences or possessive/atomic groups, "
                "which Prometheus (RE2) does not support"
            )
        return ModelSelector("regex", regex=regex)
    raise SpecError(f"{where}: expected 'all', a list of model names or {{regex: ...}}, got {bounded(value)}")


def _objective(value: Any, where: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SpecError(f"{where}: must be a percentage like 99.9, got {bounded(value)}")
    try:
        objective = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except InvalidOperation as exc:  # pragma: no cover - repr of a finite float always parses
        raise SpecError(f"{where}: must be a percentage like 99.9, got {bounded(value)}") from exc
    if not Decimal(0) < objective < Decimal(100):
        raise SpecError(
            f"{where}: must be greater than 0 and less than 100 (a percentage), got {bounded(value)}"
        )
    return objective


def _slo(entry: Any, index: int, source: str) -> SLO:
    where0 = f"{source}: slos[{index}]"
    if not isinstance(entry, Mapping):
        raise SpecError(f"{where0}: expected a mapping, got {bounded(entry)}")
    name = entry.get("name")
    if not isinstance(name, str) or not _SLO_NAME_RE.fullmatch(name):
        raise SpecError(
            f"{where0}: name: required; letters, digits, '_', '-' and '.', at most 63, got {bounded(name)}"
        )
    where = f"{where0} ({name})"
    slo_type = entry.get("type")
    if slo_type not in (c.SLO_AVAILABILITY, c.SLO_LATENCY, *c.LLM_SLO_TYPES):
        types = ", ".join((c.SLO_AVAILABILITY, c.SLO_LATENCY, *c.LLM_SLO_TYPES))
        raise SpecError(f"{where}: type: must be one of {types}, got {bounded(slo_type)}")
    keys = _LLM_KEYS if slo_type in c.LLM_SLO_TYPES else _LATENCY_KEYS
    check_keys(where, entry, _AVAILABILITY_KEYS if slo_type == c.SLO_AVAILABILITY else keys)
    if "objective" not in entry:
        raise SpecError(f"{where}: objective: required (a percentage like 99.9)")
    description = entry.get("description", "")
    if not isinstance(description, str):
        raise SpecError(f"{where}: description: expected a string, got {bounded(description)}")
    period_s = parse_duration(entry.get("period", c.DEFAULT_SLO_PERIOD), f"{where}: period")
    longest = max(parse_duration(long, "tier") for long, _, _, _ in c.BURN_TIERS)
    if period_s < longest:
        raise SpecError(
            f"{where}: period: must be at least {format_duration(longest)} (the longest burn-rate window), "
            f"got {bounded(entry.get('period'))}"
        )
    if period_s % 60:
        raise SpecError(
            f"{where}: period: must be a whole number of minutes, got {bounded(entry.get('period'))}"
        )
    common: dict[str, Any] = {
        "name": name,
        "type": slo_type,
        "description": description,
        "models": _models(entry.get("models", "all"), f"{where}: models"),
        "objective": _objective(entry["objective"], f"{where}: objective"),
        "period_s": int(period_s),
        "period": format_duration(period_s),
        "min_request_rate": check_number(
            f"{where}: min_request_rate", entry.get("min_request_rate", 0.0), low=0, high=c.MAX_REQUEST_RATE
        ),
    }
    if slo_type == c.SLO_AVAILABILITY:
        return SLO(**common, bad_reasons=_reasons(entry.get("bad_reasons"), f"{where}: bad_reasons"))
    if slo_type in c.LLM_SLO_TYPES:
        return _llm_slo(entry, common, where)
    if "threshold" not in entry:
        raise SpecError(f"{where}: threshold: required for a latency SLO (e.g. 500ms)")
    threshold = parse_duration(entry["threshold"], f"{where}: threshold")
    if whole_ms(threshold) is None:
        raise SpecError(
            f"{where}: threshold: must be a whole number of milliseconds, got {bounded(entry['threshold'])}"
        )
    sli = entry.get("latency_sli", c.LATENCY_SLI_AUTO)
    allowed = (c.LATENCY_SLI_AUTO, c.LATENCY_SLI_HISTOGRAM, c.LATENCY_SLI_TIME_SLICE)
    if sli not in allowed:
        raise SpecError(f"{where}: latency_sli: must be one of {', '.join(allowed)}, got {bounded(sli)}")
    quantile = entry.get("quantile", float(c.DEFAULT_SLO_QUANTILE))
    if (
        isinstance(quantile, bool)
        or not isinstance(quantile, (int, float))
        or (format(quantile, "g") not in c.TRITON_SUMMARY_QUANTILES)
    ):
        raise SpecError(
            f"{where}: quantile: must be one of the quantiles Triton's summaries carry "
            f"({', '.join(c.TRITON_SUMMARY_QUANTILES)}), got {bounded(quantile)}"
        )
    time_slice_s = parse_duration(entry.get("time_slice", "1m"), f"{where}: time_slice")
    if not 30 <= time_slice_s <= 3600 or time_slice_s % 1:
        raise SpecError(
            f"{where}: time_slice: must be between 30s and 1h, got {bounded(entry.get('time_slice'))}"
        )
    return SLO(
        **common,
        threshold_s=threshold,
        latency_sli=sli,
        time_slice=format_duration(time_slice_s),
        quantile=format(quantile, "g"),
        queue_time_share=check_number(
            f"{where}: queue_time_share",
            entry.get("queue_time_share", 0.5),
            low=0,
            high=1,
            low_inclusive=False,
        ),
    )


def _reasons(value: Any, where: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        raise SpecError(f"{where}: expected a non-empty list of Triton failure reasons, got {bounded(value)}")
    for reason in value:
        if reason not in c.FAILURE_REASONS:
            raise SpecError(
                f"{where}: unknown failure reason {bounded(reason)} "
                f"(Triton's reasons: {', '.join(c.FAILURE_REASONS)})"
            )
    if len(set(value)) != len(value):
        raise SpecError(f"{where}: a reason is listed twice: {bounded(value)}")
    return tuple(value)


def burn_factor(slo: SLO, long_window_s: float, budget_share: float) -> float:
    """Burn rate that spends `budget_share` of the period's budget in `long_window_s`."""
    return budget_share * slo.period_s / long_window_s


def window_seconds(window: str) -> float:
    return parse_duration(window, "window")


def _llm_slo(entry: Mapping[str, Any], common: dict[str, Any], where: str) -> SLO:
    """A `ttft` or `time_per_output_token` SLO: request-based (token-based for the latter) on the
    vLLM backend's histogram, so its threshold must be one of that histogram's bucket bounds."""
    family, buckets = c.LLM_SLO_HISTOGRAMS[common["type"]]
    if "threshold" not in entry:
        raise SpecError(f"{where}: threshold: required for a {common['type']} SLO (e.g. 250ms)")
    threshold = parse_duration(entry["threshold"], f"{where}: threshold")
    bounds_ms = [round(b * 1000) for b in buckets]
    if whole_ms(threshold) not in bounds_ms:
        choices = ", ".join(format_duration(b) for b in buckets)
        raise SpecError(
            f"{where}: threshold: {bounded(entry['threshold'])} is not a bucket bound of {family} "
            f"(the vLLM backend's buckets: {choices}); the SLI counts requests at or under a bucket bound"
        )
    return SLO(**common, threshold_s=threshold, latency_sli=c.LATENCY_SLI_HISTOGRAM)
