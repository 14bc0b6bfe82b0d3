"""The exporter's memory budgets for one Triton /metrics body (triton/budget.py, exporter/budgets.py).

A body past a budget is refused whole, as a failed metrics read: `up` 0, one
`triton_sre_poll_errors_total{target="metrics",kind="over_budget"}`, the window's last good polls kept,
`triton_sre_metrics_over_budget{budget,limit}` saying which budget and what was seen. A real fleet's
body is far inside every budget and folds as before.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from scrape_triton import ScrapeTriton
from synthetic import triton_metrics_payload
from test_exporter_scrapes import exposed, value

from triton_sre import conventions as c
from triton_sre.checks import ConfigError
from triton_sre.config import ExporterSettings, settings_from_mapping
from triton_sre.exporter.service import Exporter
from triton_sre.exporter.snapshot import keep_family
from triton_sre.triton.budget import BodyBudget, BudgetExceeded
from triton_sre.triton.exposition import iter_parse

TESTS = Path(__file__).parent
REAL_BODY = (TESTS / "data" / "triton_2.51_metrics_cpu.txt").read_bytes()


def huge_label_line(pairs: int, name: str = "hostile_labels") -> bytes:
    return (name + "{" + ",".join(f'l{i:06d}="v"' for i in range(pairs)) + "} 1\n").encode()


def exporter_for(triton: ScrapeTriton, **budget: int) -> Exporter:
    settings = ExporterSettings(
        triton_url=triton.url,
        metrics_url=triton.url + c.PATH_METRICS,
        interval=15,
        window=600,
        metrics_budget={**c.DEFAULT_METRICS_BUDGET, **budget},
    )
    return Exporter(settings, clock=itertools.count(1_700_000_000, 15).__next__)


# -- the parser's checks ---------------------------------------------------------------------------
def parsed(text: str, budget: BodyBudget, chunk_chars: int = 1 << 20) -> int:
    return sum(map(len, iter_parse(text, keep=keep_family, budget=budget, chunk_chars=chunk_chars)))


def test_label_pairs_past_the_budget_are_refused_before_they_are_parsed():
    with pytest.raises(BudgetExceeded) as caught:
        parsed(REAL_BODY.decode() + huge_label_line(33).decode(), BodyBudget(label_pairs=32))
    assert (caught.value.budget, caught.value.limit, caught.value.seen) == (c.BUDGET_LABEL_PAIRS, 32, 33)
    assert "l000" not in str(caught.value)  # nothing of the body in the message
    assert parsed(REAL_BODY.decode() + huge_label_line(32).decode(), BodyBudget(label_pairs=32)) > 0


def test_escaped_quotes_in_a_value_are_not_counted_as_pairs():
    line = 'x{a="' + '\\"' * 200 + '",b="1"} 1\n'
    assert parsed(line, BodyBudget(label_pairs=2)) == 0  # `x` is not read, only validated
    with pytest.raises(BudgetExceeded):
        parsed(line, BodyBudget(label_pairs=1))


def test_a_long_label_set_is_refused_whatever_family_it_is_in():
    long_model = f'{c.NV_INFERENCE_COUNT}{{model="{"m" * 5000}",version="1"}} 5\n'
    for line in (long_model, 'unread{a="' + "x" * 5000 + '"} 1\n'):
        with pytest.raises(BudgetExceeded) as caught:
            parsed(line, BodyBudget(label_set_chars=4096))
        assert caught.value.budget == c.BUDGET_LABEL_SET_CHARS and caught.value.seen > 5000


def test_samples_are_counted_over_the_body_for_the_families_read_only():
    body = REAL_BODY.decode()
    kept = parsed(body, BodyBudget())
    unread = "".join(f'unread_family{{n="{n}"}} 1\n' for n in range(5000))
    assert parsed(body + unread, BodyBudget(samples=kept)) == kept
    with pytest.raises(BudgetExceeded) as caught:  # slices of 4 kB: counted over all of them
        twice = body + body.replace(c.NV_INFERENCE_COUNT, "x_" + c.NV_INFERENCE_COUNT)
        parsed(twice, BodyBudget(samples=kept), chunk_chars=4096)
    assert caught.value.budget == c.BUDGET_SAMPLES and caught.value.seen > kept


# -- the exporter ----------------------------------------------------------------------------------
def test_a_body_past_a_budget_is_a_counted_fault_naming_it_and_the_last_good_polls_stay():
    with ScrapeTriton(REAL_BODY, api="404") as triton:
        exporter = exporter_for(triton)
        exporter.poll_once()
        samples = exposed(exporter)
        assert value(samples, c.M_UP) == 1
        pairs = dict(budget=c.BUDGET_LABEL_PAIRS, limit=str(c.DEFAULT_METRICS_BUDGET[c.BUDGET_LABEL_PAIRS]))
        assert value(samples, c.M_METRICS_OVER_BUDGET, **pairs) == 0
        good_window = exporter.derivation.window_seconds
        triton.body = REAL_BODY + huge_label_line(1000)
        exporter.poll_once()
        samples = exposed(exporter)
        assert value(samples, c.M_UP) == 0
        assert value(samples, c.M_POLL_ERRORS, target=c.TARGET_METRICS, kind=c.FAULT_OVER_BUDGET) == 1
        assert value(samples, c.M_METRICS_OVER_BUDGET, **pairs) == 1000
        others = [s for s in samples[c.M_METRICS_OVER_BUDGET] if s.labels[c.L_BUDGET] != c.BUDGET_LABEL_PAIRS]
        assert len(others) == len(c.DEFAULT_METRICS_BUDGET) - 1 and all(s.value == 0 for s in others)
        assert exporter.derivation.window_seconds >= good_window  # the good poll is still in the window
        triton.body = REAL_BODY
        exporter.poll_once()
        samples = exposed(exporter)
        assert value(samples, c.M_UP) == 1
        assert value(samples, c.M_METRICS_OVER_BUDGET, **pairs) == 0


def test_a_body_naming_more_model_versions_than_the_budget_is_refused_while_folded():
    """Distinct model versions, each in two families: 450,000 samples of 225,000 models took the first poll
    to 677-703 MB (bench/RESULTS.md, memguard); the fold stops at the first model version past the budget."""
    lines = [
        f'{family}{{model="h{m:06d}",version="1"}} {m}\n'
        for family in (c.NV_INFERENCE_COUNT, c.NV_EXEC_COUNT)
        for m in range(1200)
    ]
    with ScrapeTriton(REAL_BODY + "".join(lines).encode(), api="404") as triton:
        exporter = exporter_for(triton, **{c.BUDGET_MODEL_VERSIONS: 1000})
        exporter.poll_once()
        samples = exposed(exporter)
    assert value(samples, c.M_UP) == 0
    assert value(samples, c.M_POLL_ERRORS, target=c.TARGET_METRICS, kind=c.FAULT_OVER_BUDGET) == 1
    assert value(samples, c.M_METRICS_OVER_BUDGET, budget=c.BUDGET_MODEL_VERSIONS, limit="1000") == 1001


def test_the_log_line_names_the_budget_without_the_hostile_text(caplog):
    with ScrapeTriton(REAL_BODY + huge_label_line(40, name="secret_token_abc"), api="404") as triton:
        exporter_for(triton).poll_once()
    lines = [r.getMessage() for r in caplog.records if c.FAULT_OVER_BUDGET in r.getMessage()]
    assert len(lines) == 1 and c.BUDGET_LABEL_PAIRS in lines[0] and "40" in lines[0]
    assert "secret_token_abc" not in caplog.text and "l0000" not in caplog.text


def _varies(line: str) -> bool:
    """A line of the exporter's self-metrics that differs between two runs (times), or names a limit."""
    name = line.split("{")[0].split(" ")[0]
    return name.endswith("_created") or line.startswith((c.M_METRICS_OVER_BUDGET, c.M_POLL_DURATION))


@pytest.mark.parametrize("gpus", [0, 1])
def test_a_real_fleet_is_far_inside_the_budgets_and_exports_the_same_series(gpus):
    """1,000 models x 3 versions: the same exposition with the default budgets as with none at all
    (budgets a hundred times larger), and each budget's use at most a third of it."""
    bodies = [triton_metrics_payload(1000, 3, seed=s, summaries=True, gpus=gpus).encode() for s in range(2)]
    generous = {name: limit * 100 for name, limit in c.DEFAULT_METRICS_BUDGET.items()}
    texts = []
    for budget in (c.DEFAULT_METRICS_BUDGET, generous):
        with ScrapeTriton(bodies[0], api="404") as triton:
            exporter = exporter_for(triton, **budget)
            exporter.poll_once()
            triton.body = bodies[1]
            exporter.poll_once()
            text = exporter.metrics_text().decode()
        texts.append([line for line in text.splitlines() if not _varies(line)])
    assert texts[0] == texts[1]
    assert f"{c.M_UP} 1.0" in texts[0]
    third = BodyBudget(**{name: limit // 3 for name, limit in c.DEFAULT_METRICS_BUDGET.items()})
    assert parsed(bodies[0].decode(), third) > 0  # raises past a third of any budget


def test_budgets_come_from_the_config_file_and_bad_ones_are_refused():
    settings = settings_from_mapping({"exporter": {"metrics_budget": {c.BUDGET_SAMPLES: 900_000}}}, "f.yaml")
    assert settings.metrics_budget == {**c.DEFAULT_METRICS_BUDGET, c.BUDGET_SAMPLES: 900_000}
    with pytest.raises(ConfigError, match=r"metrics_budget\.label_pairs: must be a whole number"):
        settings_from_mapping({"exporter": {"metrics_budget": {c.BUDGET_LABEL_PAIRS: 0}}}, "f.yaml")
    with pytest.raises(ConfigError, match="unknown key 'series'"):
        settings_from_mapping({"exporter": {"metrics_budget": {"series": 5}}}, "f.yaml")


# -- memory, in a child process --------------------------------------------------------------------
# The first poll of a 28 MB body holding two lines of 1.08 million label pairs each: 753 MB of peak RSS
# in this child before the budgets, 136 MB after (the interpreter and the stand-in holding the body
# included); bench/RESULTS.md, memguard.
PEAK_BOUND_MB = 250

_CHILD = textwrap.dedent(
    """
    import itertools, sys
    from pathlib import Path
    from scrape_triton import ScrapeTriton
    from triton_sre import conventions as c
    from triton_sre.config import ExporterSettings
    from triton_sre.exporter.service import Exporter

    real = Path(sys.argv[1]).read_bytes()
    line = lambda n: ("hostile_labels{" + ",".join(f'l{i:07d}="{n}"' for i in range(1_080_000)) + "} 1\\n")
    with ScrapeTriton(real + (line(0) + line(1)).encode(), api="404") as triton:
        exporter = Exporter(
            ExporterSettings(triton_url=triton.url, metrics_url=triton.url + c.PATH_METRICS, timeout=120),
            clock=itertools.count(1_700_000_000, 15).__next__,
        )
        Path("/proc/self/clear_refs").write_text("5")  # the peak from here on
        exporter.poll_once()  # the first poll: a parse, and (before the budgets) the replay plan's learning
        hwm = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith("VmHWM:"))
        print(len(triton.body), int(hwm.split()[1]) // 1024, int(exporter.up))
    """
)


def test_the_first_poll_of_a_body_of_two_million_label_pairs_stays_under_a_bound():
    tree = Path(__file__).resolve().parent.parent
    run = subprocess.run(
        [sys.executable, "-c", _CHILD, str(TESTS / "data" / "triton_2.51_metrics_cpu.txt")],
        capture_output=True,
        text=True,
        timeout=600,
        env={"PYTHONPATH": f"{tree}:{TESTS}", "PATH": "/usr/bin:/bin"},
        cwd=tree,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    size, peak_mb, up = map(int, run.stdout.split())
    assert size > 25_000_000 and size < c.DEFAULT_MAX_RESPONSE_BYTES  # under the response cap
    assert peak_mb < PEAK_BOUND_MB, f"peak RSS {peak_mb} MB"
    assert up == 0


_PARSE_CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from triton_sre.exporter.snapshot import keep_family
    from triton_sre.triton.exposition import iter_parse

    def kb(field):
        lines = Path("/proc/self/status").read_text().splitlines()
        return int(next(line for line in lines if line.startswith(field)).split()[1])

    text = Path(sys.argv[1]).read_text()
    Path("/proc/self/clear_refs").write_text("5")
    before = kb("VmRSS:")
    samples = sum(map(len, iter_parse(text, keep=keep_family)))
    print(samples, (kb("VmHWM:") - before) // 1024)
    """
)


def test_distinct_label_sets_of_unread_families_are_not_all_held_through_the_parse(tmp_path):
    """A body of a million distinct label sets of a family the exporter does not read (each set
    validated, none parsed): the sets checked in earlier slices were all remembered until the body's
    end (the parse grew the heap by 137 MB); now at most `VALIDATED_KEPT` of them (29 MB)."""
    body = tmp_path / "unread.txt"
    with body.open("w") as out:
        for start in range(0, 1_000_000, 100_000):
            out.write("".join(f'unread{{a="{i:07d}"}} 1\n' for i in range(start, start + 100_000)))
    tree = Path(__file__).resolve().parent.parent
    run = subprocess.run(
        [sys.executable, "-c", _PARSE_CHILD, str(body)],
        capture_output=True,
        text=True,
        timeout=600,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        cwd=tree,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    samples, grown_mb = map(int, run.stdout.split())
    assert samples == 0
    assert grown_mb < 60, f"the parse grew the heap by {grown_mb} MB"
