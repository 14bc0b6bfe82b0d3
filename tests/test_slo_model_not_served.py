"""TritonSLOModelNotServed (absent26): a model an SLO names that no instance serves READY pages.

journey26 measured on the real Triton 2.51: a model whose config.pbtxt Triton refuses is in the repository
index by its name alone, the exporter shows it UNKNOWN with an empty version, and its availability SLO read
100 % while every request to it failed. The promtool cases below run the generated rule on the exporter's
one-hot state series as the exporter writes them (a 1 for the current state, a 0 for every other).
"""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from binaries import binary
from refused_scrape import input_series, refused_config_samples

from triton_sre import conventions as c
from triton_sre.generate import rulefile, slo_rules
from triton_sre.slo import Spec, parse_spec

REFUSED, READY, LOADING, UNSEEN = "reranker", "resnet", "big_llm", "ghost"
TRITON_JOB, EXPORTER_JOB = "triton", "triton-sre"
SPEC = f"""
scrape: {{triton_job: {TRITON_JOB}, exporter_job: {EXPORTER_JOB}}}
slos:
  - {{name: avail, type: {c.SLO_AVAILABILITY}, models: [{READY}, {REFUSED}, {LOADING}], objective: 99.9}}
  - {{name: fast, type: {c.SLO_LATENCY}, models: [{READY}, {UNSEEN}], objective: 99, threshold: 500ms}}
  - {{name: everything, type: {c.SLO_AVAILABILITY}, models: all, objective: 99}}
"""
_FOR_MIN = int(c.SLO_MODEL_NOT_SERVED_FOR.removesuffix("m"))


def _labels(**labels: str) -> str:
    return "{" + ", ".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def _states(model: str, version: str, phases: list[tuple[str, int]], **extra: str) -> list[dict[str, str]]:
    """The exporter's one-hot state series of one model version: `phases` are (state, minutes) in order."""
    series = []
    for state in c.MODEL_STATES:
        values = " ".join(f"{int(s == state)}x{n - 1}" if n > 1 else str(int(s == state)) for s, n in phases)
        labels = _labels(
            job=EXPORTER_JOB, instance="e1:8003", model=model, version=version, state=state, **extra
        )
        series.append({"series": f"{c.M_MODEL_STATE}{labels}", "values": values})
    return series


def _up(value: int, minutes: int = 30, **extra: str) -> dict[str, str]:
    labels = _labels(job=EXPORTER_JOB, instance="e1:8003", **extra)
    return {"series": f"{c.M_UP}{labels}", "values": f"{value}x{minutes}"}


def _firing(slo: str, model: str, **extra: str) -> dict[str, Any]:
    return {"exp_labels": {c.L_SEVERITY: c.SEVERITY_PAGE, c.L_SLO: slo, c.LABEL_MODEL: model, **extra}}


def _ticket(slo: str, model: str, **extra: str) -> dict[str, Any]:
    """The index alert of an `all`/regex SLO: a ticket (the SLO names no model it expects)."""
    return {"exp_labels": {c.L_SEVERITY: c.SEVERITY_TICKET, c.L_SLO: slo, c.LABEL_MODEL: model, **extra}}


def _promtool(tmp_path: Path, spec: Spec, tests: list[dict[str, Any]]) -> subprocess.CompletedProcess[str]:
    rules = slo_rules.rule_file(spec, "runbooks/")
    annotations = {  # the generated rule's, `$labels.model` filled in as Prometheus does (promtool compares)
        r["labels"][c.L_SLO]: r["annotations"]
        for g in rules["groups"] for r in g["rules"] if r.get("alert") == c.ALERT_SLO_MODEL_NOT_SERVED
    }  # fmt: skip
    per_name = {  # a named model's rule has the model as a label (its annotations name it)
        (r["labels"][c.L_SLO], r["labels"][c.LABEL_MODEL]): r["annotations"]
        for g in rules["groups"] for r in g["rules"]
        if r.get("alert") == c.ALERT_SLO_MODEL_NOT_SERVED and c.LABEL_MODEL in r["labels"]
    }  # fmt: skip
    for case in (a for t in tests for a in t["alert_rule_test"]):
        for exp in case["exp_alerts"]:
            slo, model = exp["exp_labels"][c.L_SLO], exp["exp_labels"][c.LABEL_MODEL]
            texts = per_name.get((slo, model), annotations[slo])
            exp["exp_annotations"] = {k: v.replace("{{ $labels.model }}", model) for k, v in texts.items()}
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules))
    doc = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": tests}
    (tmp_path / "t.test.yaml").write_text(yaml.safe_dump(doc))
    return subprocess.run(
        [binary("promtool"), "test", "rules", "t.test.yaml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _alerts(at: int, expected: list[dict[str, Any]]) -> dict[str, Any]:
    return {"eval_time": f"{at}m", "alertname": c.ALERT_SLO_MODEL_NOT_SERVED, "exp_alerts": expected}


def test_one_alert_per_named_model_and_one_for_the_all_slo() -> None:
    rules = [
        r for g in slo_rules.rule_file(parse_spec(SPEC), "runbooks/")["groups"] for r in g["rules"]
        if r.get("alert") == c.ALERT_SLO_MODEL_NOT_SERVED
    ]  # fmt: skip
    assert [(r["labels"][c.L_SLO], r["labels"].get(c.LABEL_MODEL)) for r in rules] == [
        ("avail", READY), ("avail", REFUSED), ("avail", LOADING), ("fast", UNSEEN), ("everything", None)
    ]  # fmt: skip
    runbook = c.ALERT_RUNBOOKS[c.ALERT_SLO_MODEL_NOT_SERVED]
    assert all(r["annotations"]["runbook_url"] == f"runbooks/{runbook}.md" for r in rules)
    assert (Path(__file__).resolve().parents[1] / "runbooks" / f"{runbook}.md").is_file()


def test_fires_for_a_refused_or_unseen_model_not_for_ready_or_a_short_load(tmp_path: Path) -> None:
    series = [
        _up(1),
        *_states(READY, "1", [(c.STATE_READY, 31)]),
        *_states(REFUSED, "", [(c.STATE_UNKNOWN, 31)]),  # refused config: by name alone, no version
        # a load shorter than `for:` (then READY) does not page
        *_states(LOADING, "1", [(c.STATE_LOADING, _FOR_MIN - 2), (c.STATE_READY, 33 - _FOR_MIN)]),
    ]
    late = _FOR_MIN + 2
    tests = [
        {
            "interval": "1m",
            "input_series": series,
            "alert_rule_test": [
                _alerts(_FOR_MIN - 1, []),  # pending, not yet firing
                _alerts(late, [_firing("avail", REFUSED), _firing("fast", UNSEEN)]),
                _alerts(25, [_firing("avail", REFUSED), _firing("fast", UNSEEN)]),
            ],
        },
        {  # the exporter cannot read Triton: TritonServerDown/ExporterPollFailing speak, not this alert
            "interval": "1m",
            "input_series": [_up(0), *_states(REFUSED, "", [(c.STATE_UNKNOWN, 31)])],
            "alert_rule_test": [_alerts(late, [])],
        },
    ]
    done = _promtool(tmp_path, parse_spec(SPEC), tests)
    assert done.returncode == 0, done.stdout + done.stderr


def test_per_cluster_with_a_cluster_label(tmp_path: Path) -> None:
    spec = dataclasses.replace(parse_spec(SPEC), cluster_label=c.LABEL_CLUSTER)
    a, b = {c.LABEL_CLUSTER: "a"}, {c.LABEL_CLUSTER: "b"}
    series = [_up(1, **a), _up(1, **b)]
    for model in (READY, REFUSED, LOADING, UNSEEN):
        series += _states(model, "1", [(c.STATE_READY, 31)], **a)
    series += _states(READY, "1", [(c.STATE_READY, 31)], **b) + _states(
        LOADING, "1", [(c.STATE_READY, 31)], **b
    )
    series += _states(REFUSED, "", [(c.STATE_UNKNOWN, 31)], **b)
    expected = [_firing("avail", REFUSED, **b), _firing("fast", UNSEEN, **b)]
    tests = [{"interval": "1m", "input_series": series, "alert_rule_test": [_alerts(_FOR_MIN + 2, expected)]}]
    done = _promtool(tmp_path, spec, tests)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.triton
def test_the_exporter_series_of_a_refused_config_on_real_triton_fire_it(
    fresh_triton_factory: Any, tmp_path: Path
) -> None:
    """The real Triton 2.51 refuses reranker's config (preferred_batch_size above max_batch_size, as in
    journey26); the exporter's own series, fed to promtool unchanged, fire the alert for it alone."""
    families = (c.M_UP, c.M_MODEL_STATE)
    samples = refused_config_samples(fresh_triton_factory, tmp_path, REFUSED, READY, families)
    assert [s.value for s in samples if s.name == c.M_UP] == [1]
    series = input_series(samples, 30, job=EXPORTER_JOB, instance="e1:8003")
    spec = parse_spec(SPEC.replace(f", {LOADING}]", "]").replace(f", {UNSEEN}]", "]"))
    late = _alerts(_FOR_MIN + 2, [_firing("avail", REFUSED)])
    done = _promtool(tmp_path, spec, [{"interval": "1m", "input_series": series, "alert_rule_test": [late]}])
    assert done.returncode == 0, done.stdout + done.stderr


# notserved27: SLOs of `all` models or a regex take the repository index as the list of expected models
RANKER, RERANK_V2, OTHER, RETIRED = "ranker", "rerank_v2", "classifier", "retired"
INDEX_SPEC = f"""
scrape: {{triton_job: {TRITON_JOB}, exporter_job: {EXPORTER_JOB}}}
slos:
  - {{name: avail, type: {c.SLO_AVAILABILITY}, models: [{READY}, {REFUSED}], objective: 99.9}}
  - {{name: rank, type: {c.SLO_AVAILABILITY}, models: {{regex: "r.*"}}, objective: 99.9}}
  - {{name: everything, type: {c.SLO_AVAILABILITY}, models: all, objective: 99}}
  - {{name: fast, type: {c.SLO_LATENCY}, models: all, objective: 99, threshold: 500ms}}
"""


def test_all_and_regex_slos_ticket_once_for_a_model_the_index_lists_by_name_alone(tmp_path: Path) -> None:
    """`rank` (regex) tickets for rerank_v2, `everything` (all) for classifier, both in the index by name
    alone; reranker is named by `avail` (its own page, once); `fast`, a later `all` SLO, adds nothing; a
    short load does not alert; an UNAVAILABLE version (a failed load pages as TritonModelUnavailable, an
    unload on purpose alerts nobody) is not this alert's."""
    series = [
        _up(1),
        *_states(READY, "1", [(c.STATE_READY, 31)]),
        *_states(REFUSED, "", [(c.STATE_UNKNOWN, 31)]),
        *_states(RANKER, "1", [(c.STATE_LOADING, _FOR_MIN - 2), (c.STATE_READY, 33 - _FOR_MIN)]),
        *_states(RERANK_V2, "", [(c.STATE_UNKNOWN, 31)]),
        *_states(OTHER, "", [(c.STATE_UNKNOWN, 31)]),
        *_states(RETIRED, "2", [(c.STATE_UNAVAILABLE, 31)]),
    ]
    expected = [_firing("avail", REFUSED), _ticket("rank", RERANK_V2), _ticket("everything", OTHER)]
    failed, ready = [(c.STATE_UNAVAILABLE, 31)], [(c.STATE_READY, 31)]
    tests = [
        {
            "interval": "1m",
            "input_series": series,
            "alert_rule_test": [_alerts(_FOR_MIN - 1, []), _alerts(_FOR_MIN + 2, expected)],
        },
        {  # nothing READY (a server starting, every load under way or failing): only the named models page
            "interval": "1m",
            "input_series": [_up(1), *_states(RERANK_V2, "", [(c.STATE_UNKNOWN, 31)])],
            "alert_rule_test": [_alerts(_FOR_MIN + 2, [_firing("avail", READY), _firing("avail", REFUSED)])],
        },
        {  # the exporter cannot read Triton
            "interval": "1m",
            "input_series": [_up(0), *_states(READY, "1", ready), *_states(OTHER, "2", failed)],
            "alert_rule_test": [_alerts(_FOR_MIN + 2, [])],
        },
    ]  # fmt: skip
    done = _promtool(tmp_path, parse_spec(INDEX_SPEC), tests)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_index_alert_is_per_cluster(tmp_path: Path) -> None:
    """classifier is READY in cluster a and not in b: b pages; b's other model READY is what it needs."""
    spec = dataclasses.replace(parse_spec(INDEX_SPEC), cluster_label=c.LABEL_CLUSTER)
    a, b = {c.LABEL_CLUSTER: "a"}, {c.LABEL_CLUSTER: "b"}
    series = [_up(1, **a), _up(1, **b), *_states(OTHER, "2", [(c.STATE_READY, 31)], **a)]
    for model, cluster in ((m, k) for m in (READY, REFUSED) for k in (a, b)):  # the named models: served
        series += _states(model, "1", [(c.STATE_READY, 31)], **cluster)
    series += _states(OTHER, "", [(c.STATE_UNKNOWN, 31)], **b)
    tests = [
        {
            "interval": "1m",
            "input_series": series,
            "alert_rule_test": [_alerts(_FOR_MIN + 2, [_ticket("everything", OTHER, **b)])],
        }
    ]
    done = _promtool(tmp_path, spec, tests)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.triton
def test_the_real_tritons_refused_config_tickets_an_all_models_slo(
    fresh_triton_factory: Any, tmp_path: Path
) -> None:
    """The exporter's own series of the real 2.51 refusing reranker's config, under an SLO of all models."""
    families = (c.M_UP, c.M_MODEL_STATE)
    samples = refused_config_samples(fresh_triton_factory, tmp_path, REFUSED, READY, families)
    series = input_series(samples, 30, job=EXPORTER_JOB, instance="e1:8003")
    spec = parse_spec(INDEX_SPEC.split("  - ", 1)[0] + "  - " + INDEX_SPEC.split("  - ")[3])
    assert [s.name for s in spec.slos] == ["everything"]
    late = _alerts(_FOR_MIN + 2, [_ticket("everything", REFUSED)])
    done = _promtool(tmp_path, spec, [{"interval": "1m", "input_series": series, "alert_rule_test": [late]}])
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_regex_slo_leaves_out_only_the_named_models_it_can_match() -> None:
    """The `model!~` of the named models lists those the regex may match: 500 regex SLOs beside 2,000
    named models repeated every name in each rule (41.8 MB of SLO rules instead of 31.0 MB)."""
    spec = parse_spec(INDEX_SPEC.replace(f"[{READY}, {REFUSED}]", f"[{OTHER}, {REFUSED}]"))
    (rule,) = [
        r for g in slo_rules.rule_file(spec, "runbooks/")["groups"] for r in g["rules"]
        if r.get("record") == c.REC_SLO_NAME_ONLY_RANK and r["labels"][c.L_SLO] == "rank"
    ]  # fmt: skip
    assert f'{c.LABEL_MODEL}!~"{REFUSED}"' in rule["expr"] and OTHER not in rule["expr"]


def _index_rules(regexes: int) -> list[dict[str, Any]]:
    """The not-served rules of the last of `regexes` regex SLOs (`team<i>_.*`, in spec order)."""
    slos = "\n".join(
        f'  - {{name: team-{i}, type: {c.SLO_AVAILABILITY}, models: {{regex: "team{i}_.*"}}, objective: 99}}'
        for i in range(regexes)
    )
    spec = parse_spec(f"scrape: {{triton_job: {TRITON_JOB}, exporter_job: {EXPORTER_JOB}}}\nslos:\n{slos}\n")
    last = f"team-{regexes - 1}"
    return [
        r for g in slo_rules.rule_file(spec, "runbooks/")["groups"] for r in g["rules"]
        if r.get("labels", {}).get(c.L_SLO) == last
        and (r.get("alert") == c.ALERT_SLO_MODEL_NOT_SERVED or r.get("record") == c.REC_SLO_NAME_ONLY_RANK)
    ]  # fmt: skip


def test_a_regex_slos_not_served_rules_do_not_grow_with_the_earlier_regexes() -> None:
    """notserved28: the rules left out every earlier regex (`model!~"team0_.*|..."`: about 2,000 characters
    more at 200 SLOs than at 10, 5.7 MB of rules at 500 regex SLOs). Now each SLO's rules are its own
    size whatever comes before: from team-9 to team-199 only its name (four times) and rank grow."""
    few, many = _index_rules(10), _index_rules(200)
    assert len(few) == len(many) == 2
    assert "team0_" not in str(many)
    grown = sum(len(str(r["expr"])) for r in many) - sum(len(str(r["expr"])) for r in few)
    assert 0 <= grown <= 10, grown


def test_the_tickets_group_reads_the_regex_slos_groups_and_none_reads_it() -> None:
    """Each ticket reads every SLO's record: in the SLO's own group, two regex SLOs' groups read each other
    (generate: "rule groups read each other in a cycle"); in a group of their own, after them, none does."""
    files = {"slo": slo_rules.rule_file(parse_spec(INDEX_SPEC), "runbooks/")}
    order = rulefile.eval_order(files)
    reads = rulefile.group_reads(files)
    assert order[-1] == c.GROUP_SLO_NOT_SERVED
    assert reads[c.GROUP_SLO_NOT_SERVED] == {c.slo_group("rank"), c.slo_group("everything")}
    assert all(deps == set() for name, deps in reads.items() if name != c.GROUP_SLO_NOT_SERVED)


def test_a_model_two_regexes_cover_tickets_for_the_first_in_the_spec(tmp_path: Path) -> None:
    """rerank_v2 matches `rank` (r.*), a later `rerank` (rerank.*|x.*) and `everything`: one ticket, rank's,
    whichever group Prometheus evaluates first; xfmr, rerank's and everything's, is rerank's ticket."""
    spec = parse_spec(
        INDEX_SPEC.replace(
            "  - {name: everything",
            f"  - {{name: rerank, type: {c.SLO_AVAILABILITY}, "
            f'models: {{regex: "rerank.*|x.*"}}, objective: 99}}\n'
            "  - {name: everything",
        )
    )
    series = [
        _up(1),
        *_states(READY, "1", [(c.STATE_READY, 31)]),
        *_states(REFUSED, "1", [(c.STATE_READY, 31)]),
        *_states(RERANK_V2, "", [(c.STATE_UNKNOWN, 31)]),
        *_states("xfmr", "", [(c.STATE_UNKNOWN, 31)]),
    ]
    expected = [_ticket("rank", RERANK_V2), _ticket("rerank", "xfmr")]
    tests = [{"interval": "1m", "input_series": series, "alert_rule_test": [_alerts(_FOR_MIN + 2, expected)]}]
    done = _promtool(tmp_path, spec, tests)
    assert done.returncode == 0, done.stdout + done.stderr
