"""Rollouts on a global store that two clusters write to, against a real Prometheus: the Flagger
MetricTemplates and the bot's `/triton rollout` read one cluster, not every cluster summed.

The store: Prometheus scrapes two stand-in Tritons as one job, each target labelled with its cluster
(what remote-write's external label gives a global store). In `east` the model runs a primary pod
(version 1) and a canary pod (version 2), equal: 10 ms of compute per inference each. `west` runs only
the primary, 30 requests/s at 4 ms: summed with east's, version 1 looks 5.7 ms and the equal canary
1.75 times worse.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import flagger_go
import pytest
import yaml
from k8s_schemas import problems
from live_prometheus import Prom, serve_text, start_prometheus, stop_prometheus, wait_ready
from test_bot_delivery import TOKEN

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.bot.config import BotSettings
from triton_sre.bot.outbox import Outbox
from triton_sre.bot.receiver import BotServer
from triton_sre.cli import main
from triton_sre.data import shipped
from triton_sre.prom import Prometheus
from triton_sre.rollout.figures import FIGURES
from triton_sre.rollout.instant import default_step, sample_spacing
from triton_sre.rollout.k8s import (
    ARG_CLUSTER,
    FLAGGER_CLUSTER,
    JUDGED_RANGE,
    NOT_JUDGED_FLAG,
    TEMPLATE_NAME,
    metric_templates,
    threshold,
)
from triton_sre.rollout.live import model_answer
from triton_sre.rollout.model import BATCHER_SAID, BATCHING_AT_LOWER_LOAD, NO_BATCHER
from triton_sre.slo import Spec, parse_spec
from triton_sre.stack.processes import free_port

MODEL, NAMESPACE, WINDOW_S = "ranker", "ml", 30
EAST, WEST = "east", "west"
# (cluster, pod, version, requests/s, compute seconds per inference)
PODS = [
    (EAST, f"{MODEL}-primary-7d9f", "1", 12.0, 0.010),
    (EAST, f"{MODEL}-5c8b", "2", 8.0, 0.010),
    (WEST, f"{MODEL}-primary-4b2a", "1", 30.0, 0.004),
]

FIGURES_BY_NAME = {f.name: f for f in FIGURES}
PENDING = {EAST: 3, WEST: 2}  # each cluster's job:triton_pending_requests:sum (KEDA's signal)
REPO = Path(__file__).resolve().parents[1]


def _exposition(cluster: str, started: float) -> str:
    elapsed = time.time() - started
    lines = []
    for where, pod, version, rps, compute in PODS:
        if where != cluster:
            continue
        labels = pq.equal(
            [(c.LABEL_MODEL, MODEL), (c.LABEL_VERSION, version), (c.LABEL_NAMESPACE, NAMESPACE), ("pod", pod)]
        )
        counters = {
            c.NV_REQUEST_SUCCESS: rps,
            c.NV_REQUEST_FAILURE: 0.0,
            c.NV_INFERENCE_COUNT: rps,
            c.NV_EXEC_COUNT: rps,
            c.NV_COMPUTE_INFER_DURATION_US: rps * compute * 1e6,
            c.NV_COMPUTE_INPUT_DURATION_US: 0.0,
            c.NV_COMPUTE_OUTPUT_DURATION_US: 0.0,
            c.NV_REQUEST_DURATION_US: rps * compute * 1.2e6,
            c.NV_QUEUE_DURATION_US: rps * compute * 0.1e6,
        }
        lines += [f"{pq.selector(name, labels)} {per_s * elapsed:.3f}" for name, per_s in counters.items()]
    lines.append(f"{c.REC_PENDING_JOB} {PENDING[cluster]}")
    return "\n".join(lines) + "\n"


def _exporter_exposition() -> str:
    """The exporter's config fact, scraped as its own job (the spec's exporter_job, which the rules and
    the instant reads select): ranker has no dynamic batcher (one execution per request above)."""
    return f"{pq.selector(c.M_MODEL_DYNAMIC_BATCHING, pq.equal([(c.LABEL_MODEL, MODEL)]))} 0\n"


def fleet_spec_text() -> str:
    return shipped("slos.yaml").read_text() + f"rollout:\n  window: {WINDOW_S}s\n"


def fleet_spec(cluster_label: bool = True) -> Spec:
    spec = parse_spec(fleet_spec_text())
    return dataclasses.replace(spec, cluster_label=c.LABEL_CLUSTER) if cluster_label else spec


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Prom, Prom]]:
    """(the scraping Prometheus, a global Prometheus it remote-writes to): both hold the two clusters'
    series; the global one scrapes nothing itself (its configuration: the default 1m interval)."""
    work = tmp_path_factory.mktemp("fleet-stores")
    started = time.time()
    servers = {name: serve_text(lambda name=name: _exposition(name, started)) for name in (EAST, WEST)}
    exporters = {name: serve_text(_exporter_exposition) for name in (EAST, WEST)}

    def targets_of(served: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {"targets": [f"127.0.0.1:{s.server_address[1]}"], "labels": {c.LABEL_CLUSTER: name}}
            for name, s in served.items()
        ]

    running = []
    try:
        (work / "global").mkdir()
        port = free_port()
        running.append(start_prometheus(work / "global", {}, port, "--web.enable-remote-write-receiver"))
        receiver = wait_ready(running[-1][0], work / "global", port)
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "900ms"},
            "scrape_configs": [
                {"job_name": c.DEFAULT_TRITON_JOB, "static_configs": targets_of(servers)},
                {"job_name": c.DEFAULT_EXPORTER_JOB, "static_configs": targets_of(exporters)},
            ],
            "remote_write": [
                {"url": f"{receiver.url}/api/v1/write", "queue_config": {"batch_send_deadline": "1s"}}
            ],
        }
        (work / "scraper").mkdir()
        port = free_port()
        running.append(start_prometheus(work / "scraper", config, port))
        scraper = wait_ready(running[-1][0], work / "scraper", port)
        # a full rollout window of samples from both clusters, in both
        full = f"count_over_time(up{{job={pq.q(c.DEFAULT_TRITON_JOB)}}}[{WINDOW_S}s]) >= {WINDOW_S - 2}"
        deadline = time.monotonic() + WINDOW_S + 30
        while len(scraper.query(full)) < 2 or len(receiver.query(full)) < 2:
            assert time.monotonic() < deadline, (work / "scraper" / "prometheus.log").read_text()
            time.sleep(1)
        yield scraper, receiver
    finally:
        # the scraper first: stopped after its remote-write receiver, it spent its 15 s stop bound
        # trying to send its last samples to it
        for proc, log in reversed(running):
            stop_prometheus(proc, log)
        for s in [*servers.values(), *exporters.values()]:
            s.shutdown()
            s.server_close()


@pytest.fixture(scope="module")
def store(stores: tuple[Prom, Prom]) -> Prom:
    return stores[0]


@pytest.fixture(scope="module")
def global_store(stores: tuple[Prom, Prom]) -> Prom:
    return stores[1]


def flagger_render(query: str, variables: dict[str, str] | None) -> str:
    """The query as Flagger renders it (Go's text/template, tests/flagger_go.py) for a Canary `ranker`
    in `ml` whose metric has a 20s interval and `templateVariables` (None: none given)."""
    ((rendered, error),) = flagger_go.render(
        [query], variables, namespace=NAMESPACE, target=MODEL, interval="20s"
    )
    assert not error and "{{" not in rendered, (error, rendered)
    return rendered


def _compute_ratio(prom: Prom, spec: Spec, variables: dict[str, str] | None) -> float:
    name = c.ROLLOUT_FIG_COMPUTE_PER_INFERENCE
    (template,) = [t for t in metric_templates(spec) if t["metadata"]["name"].endswith(name)]
    result = prom.query(flagger_render(template["spec"]["query"], variables))
    assert len(result) == 1, result
    return float(result[0]["value"][1])


def test_the_flagger_templates_read_the_canarys_cluster_of_a_global_store(store: Prom) -> None:
    """The MetricTemplates summed every cluster's primary: the equal canary in east read 1.75 times
    the primary's compute per inference (west's fast primary pulled the baseline down), a failed
    analysis at the default 1.2. With `templateVariables: {cluster: east}` it reads east only (1.0);
    without the variable it reads as before, every series (what a cluster's own Prometheus holds)."""
    spec = fleet_spec()
    east = _compute_ratio(store, spec, {ARG_CLUSTER: EAST})
    assert east == pytest.approx(1.0, abs=0.02)
    primaries = [(rps, compute) for _, pod, _, rps, compute in PODS if "primary" in pod]
    mixed = sum(rps * compute for rps, compute in primaries) / sum(rps for rps, _ in primaries)
    unset = _compute_ratio(store, spec, {})
    assert unset == pytest.approx(0.010 / mixed, rel=0.02)
    assert _compute_ratio(store, fleet_spec(cluster_label=False), {}) == pytest.approx(unset, rel=0.02)


def test_every_flagger_series_is_selected_by_the_cluster_variable() -> None:
    pinned = pq.selector("", [(c.LABEL_CLUSTER, "=~", FLAGGER_CLUSTER)]).strip("{}")
    for template in metric_templates(fleet_spec()):
        query = template["spec"]["query"]
        sides = query.count('pod=~"{{ target }}-')
        assert sides > 0 and query.count(pinned) == sides, (template["metadata"]["name"], query)
    for template in metric_templates(fleet_spec(cluster_label=False)):
        assert "variables" not in template["spec"]["query"]


def _rendered(spec: Spec, variables: dict[str, str] | None) -> dict[str, str]:
    names = [t["metadata"]["name"] for t in metric_templates(spec)]
    queries = [t["spec"]["query"] for t in metric_templates(spec)]
    rows = flagger_go.render(queries, variables, namespace=NAMESPACE, target=MODEL, interval="20s")
    assert [error for _, error in rows] == [""] * len(rows), rows
    return dict(zip(names, (query for query, _ in rows), strict=True))


def test_every_template_renders_in_gos_text_template_and_runs_on_prometheus(store: Prom) -> None:
    """Flagger's renderer (Go's text/template, missingkey=error) on every generated MetricTemplate, with
    and without cluster_label, templateVariables left out, empty, east and west: each renders, and the
    real Prometheus runs every query. Only east runs a canary: west's answers are empty (but
    batching-ratio-judged's, 0: not judged), east's equal
    the unset ones where the primary's other cluster does not count (error ratio, no failures)."""
    answers: dict[tuple[bool, str], dict[str, list[dict[str, Any]]]] = {}
    at = time.time() - 2  # one instant for every query: equal selections give equal answers
    for pinned in (True, False):
        for key, variables in (
            ("none", None),
            ("empty", {}),
            (EAST, {ARG_CLUSTER: EAST}),
            (WEST, {ARG_CLUSTER: WEST}),
        ):
            rendered = _rendered(fleet_spec(cluster_label=pinned), variables)
            assert all("{{" not in q and "variables" not in q for q in rendered.values()), rendered
            answers[pinned, key] = {name: store.query(query, at) for name, query in rendered.items()}
    every = answers[False, "none"]
    assert all(answers[False, key] == every for key in ("empty", EAST, WEST))  # no cluster matcher
    assert answers[True, "none"] == answers[True, "empty"] == every  # `=~".*"`: every series
    judged = f"{TEMPLATE_NAME}-{c.ROLLOUT_BATCHING_JUDGED}"  # answers whatever the traffic: 0 there
    west = answers[True, WEST]
    assert [float(r["value"][1]) for r in west.pop(judged)] == [NOT_JUDGED_FLAG]
    assert all(rows == [] for rows in west.values())  # west runs no canary pod
    error_ratio = f"{TEMPLATE_NAME}-{c.ROLLOUT_FIG_ERROR_RATIO}"
    assert [float(r["value"][1]) for r in answers[True, EAST][error_ratio]] == [0.0]
    answered = {name for name, rows in answers[True, EAST].items() if rows}
    assert len(answered) >= 3, answers[True, EAST]  # error ratio, queue share, compute per inference


def test_a_bare_variables_key_fails_a_canary_without_template_variables() -> None:
    """Why the templates write `or (index variables ...) ...`: Flagger renders with missingkey=error,
    so `{{ (variables).cluster }}` fails every Canary that sets no templateVariables."""
    bare = f"{{{{ (variables).{ARG_CLUSTER} }}}}"
    ((_, unset_error), (_, empty_error), (east, east_error)) = [
        flagger_go.render([bare], variables, namespace=NAMESPACE, target=MODEL, interval="20s")[0]
        for variables in (None, {}, {ARG_CLUSTER: EAST})
    ]
    assert "map has no entry for key" in unset_error and "map has no entry for key" in empty_error
    assert (east, east_error) == (EAST, "")
    ((default, error),) = flagger_go.render(
        [FLAGGER_CLUSTER], None, namespace=NAMESPACE, target=MODEL, interval="1m"
    )
    assert (default, error) == (".*", "")


def canary(spec: Spec, cluster: str) -> dict[str, Any]:
    """A Canary whose analysis reads the generated templates in its own cluster (docs/rollouts.md)."""
    metrics = []
    for template in metric_templates(spec):
        name = template["metadata"]["name"].removeprefix(f"{TEMPLATE_NAME}-")
        if name == c.ROLLOUT_BATCHING_JUDGED:  # not a figure: a range holding both its answers
            bounds: dict[str, float] = dict(JUDGED_RANGE)
        else:
            side, bound = threshold(FIGURES_BY_NAME[name], spec.rollout.margins[name])
            bounds = {side: bound}
        metrics.append(
            {
                "name": name,
                "templateRef": {"name": template["metadata"]["name"]},
                "templateVariables": {ARG_CLUSTER: cluster},
                "thresholdRange": bounds,
                "interval": "1m",
            }
        )
    return {
        "apiVersion": "flagger.app/v1beta1",
        "kind": "Canary",
        "metadata": {"name": MODEL, "namespace": NAMESPACE},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": MODEL},
            "service": {"port": 8000},
            "analysis": {
                "interval": "1m",
                "threshold": 5,
                "maxWeight": 50,
                "stepWeight": 10,
                "metrics": metrics,
            },
        },
    }


def test_the_templates_and_a_canary_setting_the_variable_validate_against_flaggers_crds() -> None:
    spec = fleet_spec()
    objects = [*metric_templates(spec), canary(spec, EAST)]
    assert [p for obj in objects for p in problems(obj)] == []
    assert objects[-1]["spec"]["analysis"]["metrics"]
    # the check can fail: a misspelt field is refused
    wrong = canary(spec, EAST)
    wrong["spec"]["analysis"]["metrics"][0]["templateVars"] = {ARG_CLUSTER: EAST}
    assert problems(wrong)


def test_the_rollout_answer_judges_each_cluster_of_a_global_store_on_its_own(store: Prom) -> None:
    """`/triton rollout ranker` on the global store answered `ranker v2 vs ranker v1: FAIL` (compute
    per inference 5.714 -> 10 ms): east's equal canary against both clusters' version 1 summed. Now each
    cluster the model served in is judged on its own, and the answer says which clusters it read."""
    assert_judged_per_cluster(store.url)


def assert_judged_per_cluster(url: str) -> None:
    """The answer of the store at `url` (holding this module's two clusters) to `/triton rollout ranker`."""
    lines = model_answer(Prometheus(url), MODEL, fleet_spec())
    text = "\n".join(lines)
    assert lines[0] == f"{MODEL} served requests in 2 clusters ({c.LABEL_CLUSTER}: {EAST}, {WEST}): " + (
        "each is judged on its own."
    ), text
    assert f"{MODEL} v2 in {EAST} vs {MODEL} v1 in {EAST}: {c.ROLLOUT_PASS.upper()}" in text
    assert f"{c.ROLLOUT_FIG_COMPUTE_PER_INFERENCE}: 10 ms -> 10 ms" in text
    assert f"fewer than two versions served requests in {c.LABEL_CLUSTER} {WEST} " in text
    assert c.ROLLOUT_FAIL.upper() not in text


def test_the_slash_command_takes_a_cluster(store: Prom, tmp_path: Path) -> None:
    settings = BotSettings(channel="#c", listen="127.0.0.1:0", prometheus_url=store.url, spec=fleet_spec())
    server = BotServer(settings, Outbox(tmp_path / "outbox.sqlite3"), TOKEN).start()
    try:
        east, west = (server.command(f"rollout {MODEL} {name}") for name in (EAST, WEST))
        usage = server.command("help")
    finally:
        server.stop()
    assert east.startswith(f"{MODEL} v2 in {EAST} vs {MODEL} v1 in {EAST}: {c.ROLLOUT_PASS.upper()}"), east
    assert WEST not in east
    assert west.startswith(f"{MODEL}: fewer than two versions served requests in {c.LABEL_CLUSTER} {WEST} ")
    assert "rollout <model> [cluster]" in usage


def test_a_store_of_one_cluster_is_answered_as_before(store: Prom) -> None:
    """A cluster's own Prometheus has no cluster label: one answer, no cluster named."""
    spec = dataclasses.replace(fleet_spec(), cluster_label="region")
    lines = model_answer(Prometheus(store.url), MODEL, spec)
    assert lines[0].startswith(f"{MODEL} v2 vs {MODEL} v1: "), lines


def test_the_default_step_on_a_global_store_is_the_samples_own_spacing(
    global_store: Prom, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The global store scrapes nothing: its configuration says 1m, so the default step was 3 minutes
    and a 30s window one sample a side (inconclusive). The clusters' samples are 1 s apart: 3 s steps."""
    prom = Prometheus(global_store.url)
    assert prom.scrape_interval(c.DEFAULT_TRITON_JOB) == 60
    matchers = [(c.LABEL_JOB, "=", c.DEFAULT_TRITON_JOB), (c.LABEL_MODEL, "=", MODEL)]
    assert sample_spacing(prom, matchers) == pytest.approx(1.0, abs=0.05)
    assert default_step(prom, c.DEFAULT_TRITON_JOB, WINDOW_S, matchers) == pytest.approx(3.0, abs=0.15)
    spec = tmp_path / "slos.yaml"
    spec.write_text(fleet_spec_text())
    argv = ["rollout", "check", "--prometheus", global_store.url, "--spec", str(spec), "--model", MODEL]
    argv += ["--baseline-version", "1", "--candidate-version", "2", "--cluster", EAST, "--format", "json"]
    code = main(argv)
    body = json.loads(capsys.readouterr().out)
    assert code == c.EXIT_OK, body
    counted = {f["name"]: f["samples"] for f in body["figures"]}
    assert min(counted[c.ROLLOUT_FIG_COMPUTE_PER_INFERENCE]) >= WINDOW_S // 3 - 1, counted


OVERLAY_MARK = "<!-- per-cluster-overlay -->"


def _documented_patches() -> list[dict[str, Any]]:
    text = (REPO / "docs" / "autoscaling.md").read_text()
    block = text.split(OVERLAY_MARK, 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    patches: list[dict[str, Any]] = yaml.safe_load(block)["patches"]
    return patches


def _apply(obj: dict[str, Any], ops: list[dict[str, Any]]) -> None:
    """RFC 6902 `add` / `replace` on object members and list indexes (what the overlay uses)."""
    for op in ops:
        *parents, last = op["path"].lstrip("/").split("/")
        node: Any = obj
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        key: Any = int(last) if isinstance(node, list) else last
        assert op["op"] == "add" or (op["op"] == "replace" and key in node), op
        node[key] = op["value"]


def _value(prom: Prom, expr: str) -> float:
    (row,) = prom.query(expr)
    return float(row["value"][1])


def test_the_documented_per_cluster_overlay_reads_its_cluster(global_store: Prom) -> None:
    """The generated ScaledObject's query names no cluster: on the global store west scaled on
    east's backlog (3). The overlay in docs/autoscaling.md reads west's own (2), and both patched
    objects still validate."""
    objects = {
        doc["kind"]: doc
        for name in ("triton-keda.yaml", "triton-hpa.yaml")
        for doc in yaml.safe_load_all((REPO / "deploy" / "k8s" / "autoscaling" / name).read_text())
        if doc
    }
    keda, hpa = objects["ScaledObject"], objects["HorizontalPodAutoscaler"]
    generated = keda["spec"]["triggers"][0]["metadata"]["query"]
    for patch in _documented_patches():
        target = objects[patch["target"]["kind"]]
        assert target["metadata"]["name"] == patch["target"]["name"]
        _apply(target, yaml.safe_load(patch["patch"]))
    assert problems(keda) == [] and problems(hpa) == []
    job = pq.equal([(c.LABEL_JOB, c.DEFAULT_TRITON_JOB)])
    west = pq.equal([(c.LABEL_JOB, c.DEFAULT_TRITON_JOB), (c.LABEL_CLUSTER, WEST)])
    patched = keda["spec"]["triggers"][0]["metadata"]["query"]
    assert patched == generated.replace(pq.selector("", job), pq.selector("", west))
    selector = hpa["spec"]["metrics"][0]["external"]["metric"]["selector"]["matchLabels"]
    assert selector == {c.LABEL_JOB: c.DEFAULT_TRITON_JOB, c.LABEL_CLUSTER: WEST}
    assert (_value(global_store, generated), _value(global_store, patched)) == (PENDING[EAST], PENDING[WEST])


def test_the_cli_says_when_it_sums_several_clusters(
    global_store: Prom, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """journey28: on a global store `rollout check` without --cluster summed east's failing canary with
    west's and said nothing of it (the bot's answer names the clusters). It says so on stderr now, and
    not with --cluster."""
    spec = tmp_path / "slos.yaml"
    spec.write_text(fleet_spec_text())
    argv = ["rollout", "check", "--prometheus", global_store.url, "--spec", str(spec), "--model", MODEL]
    argv += ["--baseline-version", "1", "--candidate-version", "2", "--format", "json"]
    main(argv)
    err = capsys.readouterr().err
    assert f"{MODEL} served requests in 2 clusters ({c.LABEL_CLUSTER}: {EAST}, {WEST})" in err, err
    assert "give --cluster to judge one" in err
    main([*argv, "--cluster", WEST])
    assert "served requests in" not in capsys.readouterr().err


def test_the_cli_says_when_a_blue_green_pair_sums_several_clusters(
    global_store: Prom, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """journey28 left: the note covered only --model; the blue/green form (two model names, no --model)
    summed the clusters silently. `ranker` serves in both clusters, the green model in none."""
    spec = tmp_path / "slos.yaml"
    spec.write_text(fleet_spec_text())
    argv = ["rollout", "check", "--prometheus", global_store.url, "--spec", str(spec), "--format", "json"]
    argv += ["--baseline-model", MODEL, "--candidate-model", f"{MODEL}_green"]
    main(argv)
    err = capsys.readouterr().err
    assert f"{MODEL} served requests in 2 clusters ({c.LABEL_CLUSTER}: {EAST}, {WEST})" in err, err
    assert f"{MODEL}_green served" not in err and f"and {MODEL}_green" not in err, err
    main([*argv, "--cluster", EAST])
    assert "served requests in" not in capsys.readouterr().err


def test_the_batching_ratio_left_unjudged_names_no_batcher_the_model_has_not(
    global_store: Prom, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """journey28 left: summed over both clusters the canary has 8 of 42 requests/s, its batching ratio
    is not judged, and the reason said a dynamic batcher makes smaller batches at lower load, of a model
    the exporter says has none. It says what the exporter says now."""
    spec = tmp_path / "slos.yaml"
    spec.write_text(fleet_spec_text())
    argv = ["rollout", "check", "--prometheus", global_store.url, "--spec", str(spec), "--model", MODEL]
    argv += ["--baseline-version", "1", "--candidate-version", "2", "--format", "json"]
    main(argv)
    body = json.loads(capsys.readouterr().out)
    batching = next(f for f in body["figures"] if f["name"] == c.ROLLOUT_FIG_BATCHING_RATIO)
    assert batching["verdict"] == BATCHING_AT_LOWER_LOAD, batching
    assert NO_BATCHER in body["reason"], body["reason"]
    assert "a dynamic batcher" not in body["reason"], body["reason"]
    # rollout31: /triton rollout (east's canary at 67% of its baseline) says it as `rollout check` does
    answer = "\n".join(model_answer(Prometheus(global_store.url), MODEL, fleet_spec(), EAST))
    assert f"{c.ROLLOUT_FIG_BATCHING_RATIO} not judged: {NO_BATCHER}" in answer, answer
    assert BATCHER_SAID[None] not in answer, answer
