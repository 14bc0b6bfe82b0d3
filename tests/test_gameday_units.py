"""The gameday's pure parts: rule scaling (checked by the real promtool), what the observer reads
from Prometheus, Alertmanager and the Slack stand-in, scoring and the scorecard, user scenario files."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest
import yaml
from binaries import binary

from triton_sre import conventions as c
from triton_sre.demo import LLM_VLLM
from triton_sre.durations import parse_duration
from triton_sre.gameday import runner, scorecard
from triton_sre.gameday.context import states_of
from triton_sre.gameday.observer import Timeline, alerts_from_prometheus, post_from_call, runbooks_named
from triton_sre.gameday.scaling import Scale, scale_expr, scale_rules
from triton_sre.gameday.scenarios import (
    LOADED_MODELS,
    STEADY_MODELS,
    Expect,
    ScenarioFileError,
    builtin,
    load_file,
    select,
)
from triton_sre.gameday.stack import LLM_DECODE_MS, TAIL_MODEL, build_repository
from triton_sre.generate.families import rule_files
from triton_sre.generate.rulefile import render_yaml
from triton_sre.slo import default_spec

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "gameday_scenario.py"


def test_scale_expr_divides_ranges_and_subqueries_but_not_record_names() -> None:
    s = Scale(factor=20)
    assert scale_expr("sum(rate(x_rate5m[5m])) / y:ratio_rate1h[1h:1m]", s) == (
        "sum(rate(x_rate5m[15s])) / y:ratio_rate1h[3m:3s]"  # a step floors at one interval
    )
    assert scale_expr("rate(x[1m])", s) == "rate(x[4s])"  # 3 s is under 4 evaluation intervals
    assert scale_expr("max_over_time(x[30d])", s) == "max_over_time(x[36h])"


def test_scale_expr_divides_offsets_as_the_ranges_they_pair_with() -> None:
    """The rollout guard asks for traffic one window ago (`offset 15m`): unscaled, it waited 15 minutes
    in a gameday whose window is 45 s, and TritonRolloutRegression never fired within a scenario."""
    s = Scale(factor=20)
    scaled = scale_expr("x:rate15m offset 15m > 0 and y offset -1h", s)
    assert scaled == "x:rate15m offset 45s > 0 and y offset -3m"
    assert scale_expr("rate(x[5m] offset 1m)", s) == "rate(x[15s] offset 4s)"  # floored as a range
    assert scale_expr("my_offset_total offset 10m", s) == "my_offset_total offset 30s"
    rules = {"groups": [{"rules": [{"record": "r", "expr": "a offset 15m"}]}]}
    assert scale_rules(rules, s)["groups"][0]["rules"][0]["expr"] == "a offset 45s"


def test_every_generated_rule_file_scales_consistently_and_promtool_accepts_it(tmp_path: Path) -> None:
    scale = Scale(factor=20)
    files = rule_files(default_spec(), c.DEFAULT_RUNBOOK_BASE_URL)
    assert files
    promtool = binary("promtool")
    for name, original in files.items():
        scaled_text = render_yaml(scale_rules(original, scale), "slos.yaml")  # as GamedayStack writes it
        scaled = yaml.safe_load(scaled_text)
        for g0, g1 in zip(original["groups"], scaled["groups"], strict=True):
            for r0, r1 in zip(g0["rules"], g1["rules"], strict=True):
                assert r0.get("alert") == r1.get("alert") and r0.get("record") == r1.get("record")
                if "for" in r0:
                    assert parse_duration(r1["for"], "for") == parse_duration(r0["for"], "for") / 20
                assert "[5m]" not in r1["expr"] and "[1h]" not in r1["expr"]
        out = tmp_path / name
        out.write_text(scaled_text, encoding="utf-8")
        checked = subprocess.run([promtool, "check", "rules", str(out)], capture_output=True, text=True)
        assert checked.returncode == 0, checked.stdout + checked.stderr


def _prom_alert(name: str, state: str, **labels: str) -> dict[str, object]:
    return {
        "labels": {"alertname": name, **labels},
        "annotations": {c.ANNOTATION_RUNBOOK_URL: f"runbooks/{c.ALERT_RUNBOOKS.get(name, 'x')}.md"},
        "state": state,
    }


def _post(at: float, alert: str, model: str, runbook: str, *, thread: str | None = None) -> dict[str, object]:
    blocks = [
        {"type": "header", "text": {"type": "plain_text", "text": f"FIRING: {alert}: {model}"}},
        {"type": "section", "fields": [{"type": "mrkdwn", "text": f"*Alert:* {alert}"},
                                       {"type": "mrkdwn", "text": f"*Model:* {model or '—'}"}]},
        {"type": "section", "text": {"type": "mrkdwn",
                                     "text": f":mag: *Diagnosis:* Title (`{runbook}`, live)\n"
                                             f":book: Runbook: runbooks/{runbook}.md"}},
    ]  # fmt: skip
    params = {"channel": "#c", "text": f"FIRING [ticket]: {alert}", "blocks": json.dumps(blocks)}
    if thread:
        params["thread_ts"] = thread
    response = {"ok": True, "ts": f"{at}"}
    return {"method": "chat.postMessage", "params": params, "status": 200, "response": response, "at": at}


def test_observer_reads_firing_alerts_and_the_bots_posts() -> None:
    body = {
        "data": {"alerts": [_prom_alert("A", "pending"), _prom_alert(c.ALERT_SERVER_DOWN, "firing", job="t")]}
    }
    seen = alerts_from_prometheus(body)
    assert [a.name for a in seen] == [c.ALERT_SERVER_DOWN]
    assert seen[0].runbook() == c.ALERT_RUNBOOKS[c.ALERT_SERVER_DOWN]
    post = post_from_call(_post(5.0, c.ALERT_MODEL_UNAVAILABLE, "gd_x", c.RUNBOOK_SHM_TOO_SMALL))
    assert post is not None
    assert (post.alertname, post.model, post.runbooks[0]) == (
        c.ALERT_MODEL_UNAVAILABLE,
        "gd_x",
        c.RUNBOOK_SHM_TOO_SMALL,
    )
    assert post_from_call(_post(6.0, "A", "m", "r", thread="1.0")) is None  # a thread reply
    assert runbooks_named("Runbook: <https://x/runbooks/a-b.md|a-b>") == ("a-b",)


def _timeline(fired_at: float, posts: list[dict[str, object]], resolved_at: float | None = None) -> Timeline:
    t = Timeline()
    t.update_prometheus([], 0.0)
    firing = alerts_from_prometheus(
        {
            "data": {
                "alerts": [
                    _prom_alert(
                        c.ALERT_MODEL_UNAVAILABLE, "firing", model="m", runbook=c.RUNBOOK_SHM_TOO_SMALL
                    )
                ]
            }
        }
    )
    t.update_prometheus(firing, fired_at)
    t.update_alertmanager(firing, fired_at + 0.5)
    if resolved_at is not None:
        t.update_prometheus([], resolved_at)
    t.add_calls(posts)
    t.add_calls(posts)  # the stand-in's record polled twice: merged, not doubled
    return t


def test_score_detection_times_and_runbooks_from_the_timeline() -> None:
    expect = Expect(c.ALERT_MODEL_UNAVAILABLE, c.RUNBOOK_SHM_TOO_SMALL, {c.LABEL_MODEL: "m"})
    t = _timeline(107.0, [_post(109.0, c.ALERT_MODEL_UNAVAILABLE, "m", c.RUNBOOK_SHM_TOO_SMALL)])
    result = runner.Result("s", "injects", expect.alert, expect.runbook)
    assert runner.score_detection(result, t, expect, since=100.0) is not None
    runner.score_losses(result, t, expect, since=100.0)
    assert (result.seconds_to_alert, result.seconds_to_alertmanager, result.seconds_to_notify) == (
        7.0,
        7.5,
        9.0,
    )
    assert result.runbook == result.diagnosis_runbook == c.RUNBOOK_SHM_TOO_SMALL
    assert result.diagnosed_right and not result.lost
    # an alert firing before the injection is not this scenario's detection
    assert runner.score_detection(runner.Result("s", "", "", ""), t, expect, since=108.0) is None


def test_losses_name_a_missing_message_and_a_double_post() -> None:
    expect = Expect(c.ALERT_MODEL_UNAVAILABLE, c.RUNBOOK_SHM_TOO_SMALL, {c.LABEL_MODEL: "m"})
    silent = runner.Result("s", "", expect.alert, expect.runbook)
    t = _timeline(107.0, [], resolved_at=150.0)
    runner.score_detection(silent, t, expect, since=100.0)
    runner.score_losses(silent, t, expect, since=100.0)
    assert silent.detected and silent.lost == [f"{expect.alert} fired but no message reached Slack"]
    assert not silent.passed
    twice = runner.Result("s", "", expect.alert, expect.runbook)
    posts = [_post(at, c.ALERT_MODEL_UNAVAILABLE, "m", c.RUNBOOK_SHM_TOO_SMALL) for at in (109.0, 131.0)]
    t = _timeline(107.0, posts)
    runner.score_detection(twice, t, expect, since=100.0)
    runner.score_losses(twice, t, expect, since=100.0)
    assert twice.lost == [f"{expect.alert} m [ticket] posted 2 times"]


def test_scorecard_json_has_the_issue_shape_and_text_says_what_failed() -> None:
    times = {"seconds_to_alert": 1.0, "seconds_to_notify": 2.0, "seconds_to_restore": 3.0}
    ok = runner.Result("a", "inj", "X", "rb", True, "X", "rb", "rb", restored=True, **times)
    wrong = runner.Result(
        "b", "inj", "X", "rb", detected=True, alert="X", runbook="other", diagnosis_runbook="rb"
    )
    doc = json.loads(scorecard.render([ok, wrong], {"timings": "scaled"}, "json"))
    keys = {"name", "detected", "seconds_to_alert", "seconds_to_notify", "alert", "runbook"}
    keys |= {"expected_runbook", "restored", "seconds_to_restore", "lost"}
    assert all(keys <= set(row) for row in doc["scenarios"])
    assert doc["passed"] is False and doc["timings"] == "scaled"
    text = scorecard.render([ok, wrong], {"timings": "scaled"}, "text")
    assert "FAILED: b" in text and "other / bot: rb (expected rb)" in text
    assert scorecard.render([ok], {"timings": "t"}, "markdown").startswith("| scenario |")


def test_at_least_ten_builtin_scenarios_with_distinct_names_and_known_runbooks() -> None:
    scenarios = builtin()
    assert len(scenarios) >= 10 and len({s.name for s in scenarios}) == len(scenarios)
    known = set(c.ALERT_RUNBOOKS.values()) | set(c.LOAD_FAILURE_RUNBOOKS)
    assert all(s.expect.runbook in known for s in scenarios)
    assert [s.name for s in select(scenarios, ["exporter-killed", "triton-killed"])] == [
        "exporter-killed",
        "triton-killed",
    ]
    with pytest.raises(KeyError):
        select(scenarios, ["no-such-scenario"])


def test_the_documented_example_scenario_file_loads(tmp_path: Path) -> None:
    scenario = load_file(EXAMPLE)
    assert scenario.expect.alert and scenario.expect.runbook and callable(scenario.inject)
    bad = tmp_path / "bad.py"
    bad.write_text("def inject(ctx): pass\n", encoding="utf-8")
    with pytest.raises(ScenarioFileError, match="restore"):
        load_file(bad)


def test_the_gameday_repository_has_its_models_and_a_slower_llm(tmp_path: Path) -> None:
    repo = build_repository(tmp_path / "models")
    names = sorted(p.name for p in repo.iterdir())
    assert names == sorted(LOADED_MODELS)
    config = (repo / LLM_VLLM / "config.pbtxt").read_text(encoding="utf-8")
    assert f'"DECODE_MS_PER_TOKEN" value: {{ string_value: "{LLM_DECODE_MS:g}" }}' in " ".join(config.split())
    assert LLM_VLLM not in STEADY_MODELS and TAIL_MODEL in STEADY_MODELS


def test_the_exit_code_says_what_the_scorecard_says() -> None:
    """Ctrl-C after the last scenario (during the pause before the stack stops) printed `"passed":
    false` and exited 0. An interrupted gameday exits 128 + the signal, as every command's Ctrl-C
    (it exited 1, as a gameday that found a fault: round sixteen, continued)."""
    ok = runner.Result("s", "", "A", "r", detected=True, runbook="r", diagnosis_runbook="r", restored=True)
    assert ok.passed and scorecard.exit_code([ok], {}, expected=1) == c.EXIT_OK
    for meta, code in (
        ({"interrupted": True, "signal": signal.SIGINT}, c.EXIT_INTERRUPTED),
        ({"interrupted": True, "signal": signal.SIGTERM}, 128 + signal.SIGTERM),
        ({"error": "the stack did not start"}, c.EXIT_FAILURE),
    ):
        assert scorecard.as_json([ok], meta)["passed"] is False
        assert scorecard.exit_code([ok], meta, expected=1) == code, meta
    assert scorecard.exit_code([ok], {}, expected=2) == c.EXIT_FAILURE  # a scenario never ran


def test_restarting_triton_never_reads_the_ready_file_a_killed_runner_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A runner killed with SIGKILL cannot remove its ready file; restarting Triton must not read that
    file's pid and log as the new server's (stack up removed it, a gameday restart did not)."""
    from triton_sre.gameday.stack import GamedayStack
    from triton_sre.stack.components import Component
    from triton_sre.stack.local import StackOptions

    stack = GamedayStack(
        StackOptions(tmp_path / "models", tmp_path / "work", port_base=20000), Scale(factor=20), print
    )
    stale = stack.workdir / "triton" / "ready.json"
    stale.parent.mkdir(parents=True)
    stale.write_text('{"pid": 1, "metrics_url": "http://old", "log": "old.log"}')
    stack.components = [Component("triton", 2**22 + 1, -1, "http://127.0.0.1:20000", "t.log", ["run_triton"])]
    seen: list[bool] = []

    def spawn(name: str, argv: list[str], url: str, env: object = None) -> Component:
        seen.append(stale.exists())
        return Component(name, 2**22 + 2, -1, url, "t.log", argv)

    monkeypatch.setattr(stack, "spawn", spawn)
    monkeypatch.setattr(stack, "wait_triton", lambda comp: None)
    monkeypatch.setattr(stack, "save", lambda: None)
    stack.start("triton")
    assert seen == [False]


def test_a_model_with_a_ready_version_is_ready_whatever_the_order_of_its_versions() -> None:
    """Triton 2.51's repository index after the rollout scenario's rollback: version 1 READY, version 2
    unloaded. Read as one state per name, the last row won and the rolled-back model never read READY."""
    rollback = [
        {"name": "gd_rollout", "version": "1", "state": c.STATE_READY},
        {"name": "gd_rollout", "version": "2", "state": c.STATE_UNAVAILABLE, "reason": "unloaded"},
        {"name": "gd_broken", "version": "1", "state": c.STATE_UNAVAILABLE, "reason": "load failed"},
    ]
    assert states_of(rollback) == {"gd_rollout": c.STATE_READY, "gd_broken": c.STATE_UNAVAILABLE}
    assert states_of(rollback[::-1])["gd_rollout"] == c.STATE_READY


def test_the_gameday_bot_judges_rollouts_over_the_window_the_scaled_rules_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rollout31: the gameday's rules read the rollout window scaled (15m -> 45s at factor 20), its bot
    judged `/triton rollout` and a TritonRolloutRegression alert over the spec's 15m. The stack gives
    the bot the scaled window (Scale.rollout_window, as the scenario's `rollout check`)."""
    from triton_sre.bot.command import resolve_bot_settings
    from triton_sre.cli import build_parser
    from triton_sre.gameday.stack import GamedayStack
    from triton_sre.generate.rollout import ROLLOUT_FILE
    from triton_sre.stack.components import Component
    from triton_sre.stack.local import StackOptions

    scale = Scale(factor=20)
    stack = GamedayStack(StackOptions(tmp_path / "models", tmp_path / "work", port_base=20000), scale, print)
    started: dict[str, list[str]] = {}

    def spawn(name: str, argv: list[str], url: str, env: object = None) -> Component:
        started[name] = argv
        return Component(name, 2**22 + 2, -1, url, "t.log", argv)

    monkeypatch.setattr(stack, "spawn", spawn)
    monkeypatch.setattr(stack, "wait_ready", lambda comp, ready: None)
    monkeypatch.setattr(stack, "save", lambda: None)
    monkeypatch.setenv(c.ENV_SLACK_BOT_TOKEN, "xoxb-test")
    stack.start_bot(tmp_path / "token", "http://t", "http://p", "http://a")
    argv = started["bot"]
    settings = resolve_bot_settings(build_parser().parse_args(argv[argv.index("bot") :]))
    window = settings.slo_spec().rollout.window
    assert parse_duration(window, "window") == parse_duration(default_spec().rollout.window, "w") / 20
    scaled = stack.generated_files(default_spec())[f"alerts/{ROLLOUT_FILE}"]
    assert f"[{window}]" in scaled and f"[{default_spec().rollout.window}]" not in scaled
