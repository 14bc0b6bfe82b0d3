"""Fault probes, round eight (branch `probes8`, 2026-12-05): time (a clock stepping back, odd
`TZ`), restarts and repeated starts, empty answers — docs/failure-behaviour.md, "Fault probes,
round eight"."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from client_double import PollClient
from prometheus_client.parser import text_string_to_metric_families
from test_bot_delivery import SLACK_TOKEN, TOKEN, notification, ok_posts, send
from test_collector import samples as samples_of_text
from test_fault_probes import assert_clean_error, run

from triton_sre import conventions as c
from triton_sre.bot.command import Bot
from triton_sre.bot.config import BotSettings
from triton_sre.bot.dev_slack_standin import SlackStandin
from triton_sre.config import ExporterSettings
from triton_sre.exporter.service import Exporter
from triton_sre.pricing import Pricing
from triton_sre.stack.guard import LOCK_FILE, workdir_lock

MODELS = ("alpha", "beta")
READY_INDEX = [{"name": m, "version": "1", "state": c.STATE_READY} for m in MODELS]


def metrics_body(poll: int, models: tuple[str, ...] = MODELS) -> bytes:
    """Triton's per-model counters after `poll` polls of steady traffic (2 inferences/execution)."""
    lines = []
    for scale, model in enumerate(MODELS, start=1):
        if model not in models:
            continue
        lines += [f"# HELP {c.NV_INFERENCE_COUNT} inferences", f"# TYPE {c.NV_INFERENCE_COUNT} counter"]
        lines += model_counter_lines(model, "1", 100 * poll * scale)
    return ("\n".join(lines) + "\n").encode()


def model_counter_lines(model: str, version: str, n: int) -> list[str]:
    """One model version's request counters at `n` inferences (2 per execution), as Triton writes them."""
    labels = f'model="{model}",version="{version}"'
    lines = [
        f"{c.NV_INFERENCE_COUNT}{{{labels}}} {n}",
        f"{c.NV_EXEC_COUNT}{{{labels}}} {n // 2}",
        f"{c.NV_REQUEST_DURATION_US}{{{labels}}} {n * 1000}",
        f"{c.NV_REQUEST_SUCCESS}{{{labels}}} {n}",
    ]
    return lines + [f"{stage}{{{labels}}} {n * 100}" for stage in c.STAGE_COUNTERS.values()]


def stats_body(poll: int) -> str:
    entries = []
    for scale, model in enumerate(MODELS, start=1):
        n = 100 * poll * scale
        ns = {"count": n, "ns": n * 1000}
        entries.append(
            {
                "name": model,
                "version": "1",
                "inference_count": n,
                "execution_count": n // 2,
                "batch_stats": [
                    {"batch_size": 2, "compute_input": ns, "compute_infer": ns, "compute_output": ns}
                ],
            }
        )
    return json.dumps({"model_stats": entries})


class Stub(PollClient):
    """A Triton answering the given metrics body, index and statistics."""

    def __init__(self, metrics: bytes, index: list, stats: str) -> None:
        self._metrics, self._index, self._stats = metrics, index, stats

    def metrics(self) -> bytes:
        return self._metrics

    def repository_index(self) -> list:
        return self._index

    def all_stats(self) -> Iterator:
        from triton_sre.triton.client import iter_model_stats

        return iter_model_stats(self._stats)

    def model_config(self, name: str) -> object:
        return {"name": name, "max_batch_size": 8, "dynamic_batching": {}}


def exporter_with(clock: Callable[[], float]) -> Exporter:
    settings = ExporterSettings(
        triton_url="http://stub:8000",
        interval=15,
        window=60,
        pricing=Pricing(currency="USD", node_hour=1.0, cpu_execution_slots=2),
    )
    return Exporter(settings, client=Stub(b"", [], "{}"), clock=clock)


def poll(exporter: Exporter, n: int, *, metrics: bytes | None = None, index: list | None = None) -> None:
    exporter.client = Stub(
        metrics_body(n) if metrics is None else metrics,
        READY_INDEX if index is None else index,
        stats_body(n),
    )
    assert exporter.poll_once() is not None


def exported(exporter: Exporter) -> dict[tuple[str, tuple], float]:
    return samples_of_text(exporter.metrics_text().decode())


def family(samples: dict, name: str) -> dict[tuple, float]:
    return {labels: value for (n, labels), value in samples.items() if n == name}


def ready_states(samples: dict) -> set[str]:
    return {
        dict(labels)[c.LABEL_MODEL]
        for labels, value in family(samples, c.M_MODEL_STATE).items()
        if dict(labels)[c.L_STATE] == c.STATE_READY and value == 1
    }


# -- time --------------------------------------------------------------------------------------


def test_a_clock_stepping_back_between_polls_keeps_the_window_and_never_goes_negative() -> None:
    """The wall clock steps back 10 minutes (NTP, a VM restored from a snapshot) after three polls.
    Before: the poll read as older than the window, every model state and rate vanished and
    `triton_sre_window_seconds` was -600 until the clock caught up with the old polls."""
    times = iter([1000.0, 1015.0, 1030.0, 400.0, 415.0])
    exporter = exporter_with(lambda: next(times))
    for n in (1, 2, 3):
        poll(exporter, n)
    before = exported(exporter)
    assert set(family(before, c.M_BATCHING_RATIO).values()) == {2.0}
    for n in (4, 5):  # the clock stepped back between poll 3 and 4
        poll(exporter, n)
        after = exported(exporter)
        (window,) = family(after, c.M_WINDOW_SECONDS).values()
        assert window >= 30.0  # the three earlier polls are still in the window
        assert set(family(after, c.M_BATCHING_RATIO).values()) == {2.0}
        assert ready_states(after) == set(MODELS)
        assert all(v >= 0 for (name, _), v in after.items() if name.startswith("triton_sre_"))
    # the last success is the wall clock's reading: what an alert compares with time()
    assert family(after, c.M_LAST_SUCCESS) == {(): 415.0}


def test_a_clock_stepping_back_then_forward_again_keeps_the_window() -> None:
    """The wall clock steps back 10 minutes, then NTP steps it forward again (the step corrected).
    The correction must undo the timeline's offset, not add to it: a 10-minute jump emptied the
    window (rates gone) and the timeline stayed 10 minutes ahead of the wall clock for good."""
    times = iter([1000.0, 1015.0, 1030.0, 445.0, 460.0, 1075.0, 1090.0])
    exporter = exporter_with(lambda: next(times))
    for n in range(1, 8):  # back between poll 3 and 4, forward again between 5 and 6
        poll(exporter, n)
        samples = exported(exporter)
        assert set(family(samples, c.M_BATCHING_RATIO).values()) == ({2.0} if n > 1 else set()), n
        (window,) = family(samples, c.M_WINDOW_SECONDS).values()
        assert 0 <= window <= 120.0, (n, window)
    assert family(samples, c.M_LAST_SUCCESS) == {(): 1090.0}
    assert exporter._timeline.offset == 0.0  # back on the wall clock


# -- empty answers -----------------------------------------------------------------------------


def errors(samples: dict, target: str, kind: str) -> float:
    return samples.get((c.M_POLL_ERRORS, ((c.L_KIND, kind), (c.L_TARGET, target))), 0.0)


def test_an_empty_metrics_body_while_models_are_ready_is_a_counted_fault_keeping_the_last_values() -> None:
    """A proxy (or another service on the port) answers Triton's /metrics with 200 and no sample.
    Before: `up` 1, no error counted, every rate gone: read as a Triton with no series."""
    times = iter(range(1000, 2000, 15))
    exporter = exporter_with(lambda: float(next(times)))
    poll(exporter, 1)
    poll(exporter, 2)
    good = exported(exporter)
    for n, body in ((3, b""), (4, b"# HELP nv_inference_count x\n# TYPE nv_inference_count counter\n\n")):
        poll(exporter, n, metrics=body)
        after = exported(exporter)
        assert family(after, c.M_UP) == {(): 0.0}
        assert errors(after, c.TARGET_METRICS, c.FAULT_EMPTY) == n - 2
        assert errors(after, c.TARGET_METRICS, c.FAULT_PARSE) == 0
        # the window's good polls still stand: the same ratios, the last success not moved
        assert family(after, c.M_BATCHING_RATIO) == family(good, c.M_BATCHING_RATIO)
        assert family(after, c.M_LAST_SUCCESS) == family(good, c.M_LAST_SUCCESS)
    poll(exporter, 5)  # the real metrics are back
    assert family(exported(exporter), c.M_UP) == {(): 1.0}


def test_an_empty_metrics_body_of_a_triton_without_ready_models_is_still_read() -> None:
    """A Triton with no model loaded (CPU metrics off) may write nothing: not a fault."""
    times = iter(range(1000, 2000, 15))
    exporter = exporter_with(lambda: float(next(times)))
    unavailable = [{"name": "alpha", "version": "1", "state": c.STATE_UNAVAILABLE, "reason": "x"}]
    for index in ([], unavailable):
        poll(exporter, 1, metrics=b"", index=index)
        samples = exported(exporter)
        assert family(samples, c.M_UP) == {(): 1.0}
        assert errors(samples, c.TARGET_METRICS, c.FAULT_EMPTY) == 0


# -- the bot: repeated and out-of-order notifications -------------------------------------------


def _bot_messages(bot: Any, action: str) -> float:
    text = requests.get(f"{bot.url}{c.PATH_METRICS}", timeout=5).text
    return sum(
        s.value
        for f in text_string_to_metric_families(text)
        for s in f.samples
        if s.name == c.M_BOT_ACTIONS and s.labels.get(c.L_ACTION) == action
    )


def _shown(standin: Any, case: str) -> list[Any]:
    return [
        x
        for method in ("chat.postMessage", "chat.update")
        for x in standin.calls(method, ok_only=True)
        if case in json.dumps(x.params)
    ]


def test_the_same_notification_twice_at_once_is_one_slack_message(tmp_path: Path) -> None:
    """Alertmanager (two replicas, or a retry racing its first try) sends one notification twice
    at the same moment: two receiver threads, one Slack message, nothing edited. Probed already
    right: the outbox's group supersedes the older, an equal digest posts nothing."""
    with SlackStandin(token=SLACK_TOKEN) as standin:
        settings = BotSettings(channel="#c", listen="127.0.0.1:0")
        with Bot(settings, tmp_path / "o.sqlite3", TOKEN, SLACK_TOKEN, standin.url) as bot:
            for _ in range(3):
                case = uuid.uuid4().hex[:8]
                threads = [threading.Thread(target=send, args=(bot, notification(case))) for _ in range(2)]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
                key = notification(case)["groupKey"]
                assert standin.wait_for(lambda key=key: bot.outbox.pending() == 0, 10)
                assert len(ok_posts(standin, case)) == 1
                assert [x.method for x in _shown(standin, case)] == ["chat.postMessage"]


def test_a_firing_delivered_after_its_resolution_leaves_the_message_resolved(tmp_path: Path) -> None:
    """Out-of-order delivery: the resolution arrives first, the older firing notification after.
    Before: the message was edited back to FIRING, and stayed so (Alertmanager sends a resolution
    once). Now the older notification is skipped and counted as `stale`."""
    with SlackStandin(token=SLACK_TOKEN) as standin:
        settings = BotSettings(channel="#c", listen="127.0.0.1:0")
        with Bot(settings, tmp_path / "o.sqlite3", TOKEN, SLACK_TOKEN, standin.url) as bot:
            case = uuid.uuid4().hex[:8]
            key = notification(case)["groupKey"]
            send(bot, notification(case, status=c.AM_STATUS_RESOLVED))
            assert standin.wait_for(
                lambda: bot.outbox.pending() == 0 and bot.outbox.message(key) is not None, 10
            )
            send(bot, notification(case))  # the same episode (same startsAt), delivered late
            assert standin.wait_for(lambda: bot.outbox.pending() == 0, 10)
            assert standin.wait_for(lambda: _bot_messages(bot, c.BOT_ACTION_STALE) == 1, 5)
            ref = bot.outbox.message(key)
            assert ref is not None and ref.status == c.AM_STATUS_RESOLVED
            assert [x.method for x in _shown(standin, case)] == ["chat.postMessage"]
            assert "RESOLVED" in json.dumps(_shown(standin, case)[0].params)
            # firing again (a new episode: a later startsAt) is still shown
            again = notification(case)
            again["alerts"][0]["startsAt"] = "2026-11-29T11:00:00Z"
            send(bot, again)
            assert standin.wait_for(lambda: bot.outbox.message(key).status == c.AM_STATUS_FIRING, 10)
            assert "FIRING" in json.dumps(_shown(standin, case)[-1].params)


def test_the_same_alert_firing_again_well_after_its_resolution_is_shown_firing(tmp_path: Path) -> None:
    """Prometheus away longer than an alert's endsAt (a restart, a network cut): Alertmanager resolves
    the alert, then Prometheus posts it again with the same startsAt (its restored ActiveAt) and
    Alertmanager notifies it firing, a group_interval (5 min by default) or more after the
    resolution. That is no late copy: the message must say FIRING again, not stay RESOLVED while the
    alert fires (until its repeat_interval, and every repeat skipped the same way)."""
    with SlackStandin(token=SLACK_TOKEN) as standin:
        settings = BotSettings(channel="#c", listen="127.0.0.1:0")
        with Bot(settings, tmp_path / "o.sqlite3", TOKEN, SLACK_TOKEN, standin.url) as bot:
            case = uuid.uuid4().hex[:8]
            key = notification(case)["groupKey"]
            send(bot, notification(case))
            assert standin.wait_for(lambda: bot.outbox.pending() == 0 and bot.outbox.message(key), 10)
            send(bot, notification(case, status=c.AM_STATUS_RESOLVED))
            assert standin.wait_for(
                lambda: (ref := bot.outbox.message(key)) is not None and ref.status == c.AM_STATUS_RESOLVED,
                10,
            )
            with bot.outbox._lock:  # the resolution was shown five minutes ago
                bot.outbox._db.execute("UPDATE messages SET updated = updated - 300")
                bot.outbox._db.commit()
            send(bot, notification(case))  # firing again, same startsAt
            assert standin.wait_for(
                lambda: (ref := bot.outbox.message(key)) is not None and ref.status == c.AM_STATUS_FIRING, 10
            )
            assert _bot_messages(bot, c.BOT_ACTION_STALE) == 0
            assert [x.method for x in _shown(standin, case)] == [
                "chat.postMessage",
                "chat.update",
                "chat.update",
            ]


# -- stack up twice ----------------------------------------------------------------------------


def test_a_second_stack_up_while_one_is_starting_in_the_workdir_is_refused(tmp_path: Path) -> None:
    """Before: a second `stack up` in the first one's render phase (nothing in stack.json yet) saw
    no running stack, rewrote the first's configs with its own ports and stack.json with its own
    processes: the first's were left running untracked. Now the workdir's lock refuses it, and
    `stack down` alike, touching nothing."""
    workdir = tmp_path / "stack"
    workdir.mkdir()
    with workdir_lock(workdir):  # what a `stack up` holds while it starts
        code, _out, err = run(["stack", "up", "--workdir", str(workdir), "--timeout", "5"], tmp_path)
        assert_clean_error(
            code, err, c.EXIT_FAILURE, "is starting or stopping the stack in", str(os.getpid())
        )
        assert sorted(p.name for p in workdir.iterdir()) == [LOCK_FILE]  # nothing rendered, nothing started
        code, _out, err = run(["stack", "down", "--workdir", str(workdir)], tmp_path)
        assert_clean_error(code, err, c.EXIT_FAILURE, "is starting or stopping the stack in")


def test_stack_up_on_ports_another_stack_holds_is_refused_before_anything_starts(tmp_path: Path) -> None:
    """A second stack on the first one's `--port-base` (another workdir). Before: it started its
    exporter, whose readiness check the first stack's exporter answered, then Triton, which failed
    on the port; now the ports are checked first, the message names the one in use."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        base = listener.getsockname()[1]  # Triton's HTTP port of a stack at this base
        if base > 65535 - 8:
            pytest.skip(f"the free port {base} leaves no room for a port base")  # pragma: no cover
        workdir = tmp_path / "second"
        started = time.monotonic()
        code, _out, err = run(["stack", "up", "--workdir", str(workdir), "--port-base", str(base)], tmp_path)
        assert_clean_error(code, err, c.EXIT_FAILURE, f"triton_http {base}", "choose another --port-base")
        assert time.monotonic() - started < 20
        assert not (workdir / "generated").exists() and not (workdir / "stack.json").exists()


def test_an_alert_start_with_a_zone_offset_is_shown_in_utc_not_relabelled(tmp_path: Path) -> None:
    """Alertmanager keeps the offset of an alert posted from another zone (`startsAt` of
    `…T17:25:52+13:45`, Chatham). Before: the message said `since 2026-11-29 17:25:52 UTC`, 13 h 45
    off; now the time is converted. Same under any TZ of the bot's own (UTC is written)."""
    with SlackStandin(token=SLACK_TOKEN) as standin:
        settings = BotSettings(channel="#c", listen="127.0.0.1:0")
        with Bot(settings, tmp_path / "o.sqlite3", TOKEN, SLACK_TOKEN, standin.url) as bot:
            shown = {}
            for starts, utc in (
                ("2026-11-29T17:25:52+13:45", "2026-11-29 03:40:52 UTC"),
                ("2026-11-29T17:25:52.123456789-07:00", "2026-11-30 00:25:52 UTC"),
                ("2026-11-29T17:25:52.5Z", "2026-11-29 17:25:52 UTC"),
            ):
                case = uuid.uuid4().hex[:8]
                body = notification(case)
                body["alerts"][0]["startsAt"] = starts
                send(bot, body)
                assert standin.wait_for(lambda case=case: bool(ok_posts(standin, case)), 10)
                shown[starts] = json.dumps(ok_posts(standin, case)[0].params)
                assert f"since {utc}" in shown[starts], (starts, shown[starts])


def test_a_clock_stepping_back_does_not_hold_the_bots_retries_for_the_size_of_the_step(
    tmp_path: Path,
) -> None:
    """Slack refused a message (500, then 429 with Retry-After) and the clock then stepped back an
    hour. Before: the retry, scheduled in the old clock's future, waited the whole hour (and the
    rate-limit pause alike) while Slack was fine again. Now no wait longer than the longest the
    worker sets is kept: the notification is delivered at the next step."""
    from triton_sre.bot.outbox import Outbox
    from triton_sre.bot.slack import SlackDelivery
    from triton_sre.bot.worker import Worker

    for status, retry_after in ((500, None), (429, 30.0)):
        clock = [1_000_000.0]
        with SlackStandin(token=SLACK_TOKEN) as standin:
            settings = BotSettings(channel="#c", listen="127.0.0.1:0")
            outbox = Outbox(tmp_path / f"o{status}.sqlite3")
            worker = Worker(
                settings,
                outbox,
                SlackDelivery(SLACK_TOKEN, standin.url),
                {},
                clock=lambda clock=clock: clock[0],
            )
            case = uuid.uuid4().hex[:8]
            outbox.enqueue(notification(case)["groupKey"], notification(case))
            standin.fail_next(status=status, retry_after=retry_after)
            assert worker.step() is None  # the attempt failed: a retry is scheduled
            assert not ok_posts(standin, case)
            clock[0] -= 3600.0  # the clock steps back an hour
            wait = worker.step()
            if wait is not None:  # a short pause of the worker's own is fine, not the hour
                assert wait <= 120.0
                clock[0] += wait
                assert worker.step() is None
            assert len(ok_posts(standin, case)) == 1
            outbox.close()


def test_a_rate_limit_pause_set_before_the_clock_stepped_back_never_comes_back(tmp_path: Path) -> None:
    """Slack's 429 paused the worker 30 s, then the clock stepped back an hour. The pause, beyond
    the longest the worker sets, was passed over, but kept: 40 minutes later it was within reach
    again and held every delivery for the 17 minutes until the clock met it. It is dropped."""
    from triton_sre.bot.outbox import Outbox
    from triton_sre.bot.slack import SlackDelivery
    from triton_sre.bot.worker import Worker

    clock = [1_000_000.0]
    with SlackStandin(token=SLACK_TOKEN) as standin:
        settings = BotSettings(channel="#c", listen="127.0.0.1:0")
        outbox = Outbox(tmp_path / "o.sqlite3")
        worker = Worker(settings, outbox, SlackDelivery(SLACK_TOKEN, standin.url), {}, clock=lambda: clock[0])
        first = uuid.uuid4().hex[:8]
        outbox.enqueue(notification(first)["groupKey"], notification(first))
        standin.fail_next(status=429, retry_after=30.0)
        assert worker.step() is None  # refused: a retry, and the worker paused 30 s
        clock[0] -= 3600.0  # the clock steps back an hour
        assert worker.step() is None and len(ok_posts(standin, first)) == 1
        clock[0] += 2600.0  # 43 minutes on: the old pause's end is 1030 s ahead
        second = uuid.uuid4().hex[:8]
        outbox.enqueue(notification(second)["groupKey"], notification(second))
        assert worker.step() is None  # delivered now, not after a 1030 s pause
        assert len(ok_posts(standin, second)) == 1
        outbox.close()


def test_stack_down_names_a_component_whose_pid_is_now_another_process_and_leaves_it(tmp_path: Path) -> None:
    """`stack down` on a workdir whose processes died, one pid since taken by a stranger. Already
    right: nothing but the recorded process (pid and start time) is signalled. Before: it said
    `stopping exporter (pid N)` and `stopped 2 component(s)`, stopping none."""
    workdir = tmp_path / "stack"
    workdir.mkdir()
    stranger = subprocess.Popen(["sleep", "60"])
    try:
        dead = subprocess.Popen(["true"])
        dead.wait()
        components = [
            {"name": "exporter", "pid": stranger.pid, "start_time": 1, "url": "u", "log": "l", "argv": []},
            {"name": "prometheus", "pid": dead.pid, "start_time": 1, "url": "u", "log": "l", "argv": []},
        ]
        (workdir / "stack.json").write_text(json.dumps({"components": components}))
        code, out, err = run(["stack", "down", "--workdir", str(workdir)], tmp_path)
        assert code == c.EXIT_OK, err
        assert f"exporter (pid {stranger.pid}) was not running, its pid is another process's" in err
        assert f"prometheus (pid {dead.pid}) was not running" in err
        assert "stopped 0 component(s)" in out
        assert stranger.poll() is None  # the stranger was left alone
        assert not (workdir / "stack.json").exists()
    finally:
        stranger.kill()
        stranger.wait()


def test_counter_resets_between_polls_never_give_a_negative_or_made_up_value() -> None:
    """Triton restarted between two polls (every counter smaller), then one model reloaded (only
    its counters reset). Already right (also `test_derive.py`, `test_exporter_window.py`): the
    drop counts from zero, as Prometheus' increase(), through the service too."""
    times = iter(range(1000, 2000, 15))
    exporter = exporter_with(lambda: float(next(times)))
    poll(exporter, 5)
    poll(exporter, 6)
    poll(exporter, 1)  # restarted: every counter at a fifth of before
    poll(exporter, 2)
    poll(exporter, 3, metrics=metrics_body(3, ("alpha",)) + metrics_body(1, ("beta",)))  # beta reloaded
    samples = exported(exporter)
    assert all(v >= 0 for (name, _), v in samples.items() if name.startswith("triton_sre_"))
    ratios = family(samples, c.M_BATCHING_RATIO)
    assert ratios and set(ratios.values()) == {2.0}  # inferences per execution, whatever the resets
    fractions = family(samples, c.M_REQUEST_STAGE_FRACTION)
    assert fractions and all(0 <= v <= 1 for v in fractions.values())


# ----------------------------------------------------------------------------- out of descriptors mid-request
def test_a_request_that_fails_below_requests_is_a_connection_fault(monkeypatch: pytest.MonkeyPatch) -> None:
    """Out of descriptors, requests' lazy `import netrc` (inside every request) raised OSError past its own
    errors: the exporter's poll logged "poll failed unexpectedly" with a traceback (seen in the round-seven
    EMFILE probe under load). It is the fetch's connection fault now, with the OS' words."""
    from triton_sre.triton.client import FetchError, TritonClient

    def no_descriptor(*_args: object, **_kwargs: object) -> None:
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(requests.Session, "request", no_descriptor)
    with pytest.raises(FetchError) as caught:
        TritonClient("http://127.0.0.1:9", "http://127.0.0.1:9/metrics").metrics()
    assert caught.value.kind == c.FAULT_CONNECTION and "Too many open files" in str(caught.value)


def test_the_http_client_imports_netrc_before_any_request() -> None:
    probe = "import sys, triton_sre.httpclient; print('netrc' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    ).stdout
    assert out.strip() == "True"
