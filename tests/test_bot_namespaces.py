"""The bot on Triton's model namespacing (`--model-namespacing=true`): `vector_scale` served from two
repositories is two models, as in the report (tests/test_report_namespaces.py). Label values are the
repository paths of the real 2.51 capture, `tests/data/namespacing_2.51`."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path
from typing import Any

import yaml
from binaries import binary
from images import png_content
from test_bot_delivery import SLACK_TOKEN, TOKEN, ok_posts, send

from triton_sre import conventions as c
from triton_sre.bot.command import Bot
from triton_sre.bot.config import BotSettings
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.bot.enrich import Facts, Links, enrich
from triton_sre.bot.llm import KV_CACHE, TTFT_P99, WAITING
from triton_sre.bot.payload import Alert, AlertGroup
from triton_sre.bot.prom import chart_png, legend_labels
from triton_sre.bot.promfacts import llm_figures, shared_models
from triton_sre.namespacing import SEP

DATA = Path(__file__).parent / "data" / "namespacing_2.51"
MODEL = "vector_scale"


def _repositories() -> list[str]:
    """The two namespaces (repository paths) of the capture's series."""
    text = (DATA / "metrics_1.txt").read_text(encoding="utf-8")
    found = {
        line.split(f'{c.LABEL_NAMESPACE}="', 1)[1].split('"', 1)[0]
        for line in text.splitlines()
        if line.startswith(f"{c.NV_INFERENCE_COUNT}{{") and f'{c.LABEL_NAMESPACE}="' in line
    }
    assert len(found) == 2, found
    return sorted(found)


REPO_A, REPO_B = _repositories()


def _labels(namespace: str) -> dict[str, str]:
    return {
        c.LABEL_JOB: c.DEFAULT_TRITON_JOB,
        c.LABEL_MODEL: MODEL,
        c.LABEL_NAMESPACE: namespace,
        c.LABEL_VERSION: "1",
    }


ORANGE = (255, 127, 14)  # matplotlib's second line colour (C1): the chart's second series


def test_a_chart_draws_same_named_models_of_two_namespaces_as_two_lines() -> None:
    """An LLM alert's expression answers a series per namespace. Their legends were cut at 60 characters
    inside the repository path: one legend, the second series overwrote the first, one line drawn."""
    stamps = [1_700_000_000.0 + 30 * i for i in range(40)]
    series = [
        {"metric": _labels(ns), "values": [[t, str(level + i % 3)] for i, t in enumerate(stamps)]}
        for ns, level in ((REPO_A, 2.0), (REPO_B, 9.0))
    ]
    png = chart_png(series, c.ALERT_LLM_REQUESTS_WAITING)
    assert png is not None
    pixels = png_content(png).convert("RGB").getcolors(maxcolors=1 << 20) or []
    assert sum(n for n, colour in pixels if colour == ORANGE) > 50, (
        "one line only: the two models drawn as one"
    )
    assert legend_labels([s["metric"] for s in series]) == [
        f"{ns}{SEP}{MODEL},{c.LABEL_JOB}={c.DEFAULT_TRITON_JOB},{c.LABEL_VERSION}=1"[:60]
        for ns in (REPO_A, REPO_B)
    ]
    # a name of one namespace keeps its labels as they are
    alone = {**_labels(REPO_A), c.LABEL_MODEL: "pipeline_a"}
    assert legend_labels([alone]) == [",".join(f"{k}={v}" for k, v in sorted(alone.items()))[:60]]


def _promtool(workdir: Path, series: list[dict[str, str]], cases: list[tuple[str, float]]) -> None:
    """promtool's engine answers each (expr, value) case at 5m over `series` (1-minute samples)."""
    tests = {
        "rule_files": [],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": series,
                "promql_expr_test": [
                    {"expr": expr, "eval_time": "5m", "exp_samples": [{"labels": "{}", "value": value}]}
                    for expr, value in cases
                ],
            }
        ],
    }
    path = workdir / "figures.test.yaml"
    path.write_text(yaml.safe_dump(tests))
    run = subprocess.run([binary("promtool"), "test", "rules", str(path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]


class _Recorded:
    """A Prometheus that records the instant queries the bot sends; promtool's engine answers them."""

    def __init__(self) -> None:
        self.exprs: list[str] = []

    def instant(self, expr: str) -> Any:
        self.exprs.append(expr)
        return None


def test_an_llm_alerts_figures_are_of_its_namespaces_model(tmp_path: Path) -> None:
    """Requests waiting, KV cache use and TTFT p99 of `vector_scale` in two namespaces (3 and 5 waiting,
    40 % and 90 % of the cache, 0.2 s and 0.8 s): the alert on repo_a's model gets repo_a's figures.
    Before, its queries named the model alone: 8 waiting, the cache 90 % full and 0.8 s, both models'."""
    values = {
        REPO_A: {WAITING: 3, KV_CACHE: 0.4, TTFT_P99: 0.2},
        REPO_B: {WAITING: 5, KV_CACHE: 0.9, TTFT_P99: 0.8},
    }
    record = {WAITING: c.REC_LLM_WAITING, KV_CACHE: c.REC_LLM_KV_CACHE, TTFT_P99: c.REC_LLM_TTFT_QUANTILE}

    def series(ns: str, figure: str) -> dict[str, str]:
        labels = {**_labels(ns), **({c.LABEL_QUANTILE: "0.99"} if figure == TTFT_P99 else {})}
        selector = ",".join(f'{k}="{v}"' for k, v in labels.items())
        return {"series": f"{record[figure]}{{{selector}}}", "values": f"{values[ns][figure]}x10"}

    alert = Alert(
        c.AM_STATUS_FIRING,
        {c.LABEL_ALERTNAME: c.ALERT_LLM_REQUESTS_WAITING, **_labels(REPO_A)},
        {},
        fingerprint="f",
    )
    prometheus = _Recorded()
    llm_figures(prometheus, [alert], "", "g")  # type: ignore[arg-type]
    assert len(prometheus.exprs) == 3
    _promtool(
        tmp_path,
        [series(ns, figure) for ns in values for figure in record],
        [
            (expr, values[REPO_A][f])
            for f, expr in zip((TTFT_P99, KV_CACHE, WAITING), prometheus.exprs, strict=True)
        ],
    )


def _notification(case: str, status: str, namespaces: dict[str, str]) -> dict[str, Any]:
    """A group of `vector_scale` alerts in cluster east, one per namespace given (-> its status)."""
    group = {c.LABEL_ALERTNAME: c.ALERT_LLM_REQUESTS_WAITING, c.LABEL_MODEL: MODEL, c.LABEL_CLUSTER: "east"}
    alerts = [
        {
            "status": state,
            "labels": {**group, **_labels(ns), c.LABEL_INSTANCE: f"triton-{i}:8002", "case": case},
            "annotations": {"summary": f"requests waiting ({case})"},
            "fingerprint": f"{case}{i}",
            "startsAt": "2026-12-06T08:00:00Z",
        }
        for i, (ns, state) in enumerate(namespaces.items())
    ]
    return {
        "version": "4",
        "groupKey": f"{{}}:{{case={case}}}",
        "status": status,
        "receiver": "bot",
        "groupLabels": {**group, "case": case},
        "commonLabels": {**group, "case": case},
        "alerts": alerts,
    }


def test_a_message_names_same_named_models_with_their_namespace_and_cluster(tmp_path: Path) -> None:
    """A group holding `vector_scale` of two repositories: each line, and the thread, names the model as
    the report does (`<namespace>::<model>`) and its cluster. Before, both lines said `vector_scale`
    and the reply 'Resolved: TritonLLMRequestsWaiting (vector_scale)'."""
    case = uuid.uuid4().hex[:8]
    with SlackStandin(token=SLACK_TOKEN) as standin:
        settings = BotSettings(channel="#c", listen="127.0.0.1:0")
        with Bot(settings, tmp_path / "o.sqlite3", TOKEN, SLACK_TOKEN, standin.url) as bot:
            firing = {REPO_A: c.AM_STATUS_FIRING, REPO_B: c.AM_STATUS_FIRING}
            send(bot, _notification(case, c.AM_STATUS_FIRING, firing))
            assert standin.wait_for(lambda: bool(ok_posts(standin, case)), 10)
            ts = ok_posts(standin, case)[0].response["ts"]
            blocks = json.dumps(standin.message("#c", ts)["blocks"])
            for ns in (REPO_A, REPO_B):
                assert f"model `{ns}{SEP}{MODEL}`" in blocks, blocks
            assert f"{c.ALERT_LLM_REQUESTS_WAITING}: {MODEL} in cluster east" in blocks  # the two share it
            send(bot, _notification(case, c.AM_STATUS_FIRING, {**firing, REPO_B: c.AM_STATUS_RESOLVED}))

            def replies() -> list[str]:
                calls = standin.calls("chat.postMessage", ok_only=True)
                return [str(x.params["text"]) for x in calls if x.params.get("thread_ts") == ts]

            assert standin.wait_for(lambda: bool(replies()), 10)
    named = f"{c.ALERT_LLM_REQUESTS_WAITING} ({REPO_B}{SEP}{MODEL}) in cluster east"
    assert f"Resolved: {named}." in replies()[0], replies()


def test_a_model_the_store_serves_from_two_namespaces_is_named_with_its_own(tmp_path: Path) -> None:
    """The group holds the alert of one repository's `vector_scale`; the store serves the name from two
    (promtool's engine counts them from the capture's label values): the message names it
    `<namespace>::<model>`. A name of one namespace (a Kubernetes namespace) stays bare."""
    alert = Alert(
        c.AM_STATUS_FIRING,
        {c.LABEL_ALERTNAME: c.ALERT_LLM_REQUESTS_WAITING, **_labels(REPO_A), c.LABEL_CLUSTER: "east"},
        {},
        fingerprint="f",
    )
    alone = Alert(c.AM_STATUS_FIRING, {**alert.labels, c.LABEL_MODEL: "pipeline_a"}, {}, fingerprint="g")

    class Counted(_Recorded):
        def instant(self, expr: str) -> Any:
            self.exprs.append(expr)
            return 2.0 if f'"{MODEL}"' in expr else 1.0

    prometheus = Counted()
    assert shared_models(prometheus, [alert, alone], c.LABEL_CLUSTER, "k") == {MODEL}  # type: ignore[arg-type]
    served = [(ns, MODEL) for ns in (REPO_A, REPO_B)] + [(REPO_A, "pipeline_a")]
    labels = f'{c.LABEL_CLUSTER}="east",{c.LABEL_VERSION}="1"'
    series = [
        {
            "series": f'{c.NV_INFERENCE_COUNT}{{{c.LABEL_MODEL}="{m}",{c.LABEL_NAMESPACE}="{ns}",{labels}}}',
            "values": "1x10",
        }
        for ns, m in served
    ]
    _promtool(tmp_path, series, list(zip(prometheus.exprs, (2, 1), strict=True)))
    shared = frozenset({MODEL})
    group = AlertGroup("k", c.AM_STATUS_FIRING, (alert,), common_labels=alert.labels, shared_models=shared)
    model = enrich(group, Facts(), Links()).context()
    qualified = f"{REPO_A}{SEP}{MODEL}"
    assert model["alerts"][0]["model"] == qualified  # the alert's line
    assert model["model"] == qualified  # the Model field
    assert model["title"] == f"{c.ALERT_LLM_REQUESTS_WAITING}: {qualified} in cluster east"
