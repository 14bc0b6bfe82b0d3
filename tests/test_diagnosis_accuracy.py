"""The honest accuracy figure: top-1 runbook on real logs users posted, scored on a held-out part.

The corpus and its split are described in tests/data/logs/SPLIT.md; `tests/accuracy.py` loads and
scores it. Run ``python tests/test_diagnosis_accuracy.py`` to print the table for bench/RESULTS.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import accuracy
import pytest

from triton_sre.conventions import (
    RUNBOOK_LIBRARY_VERSION_MISMATCH,
    RUNBOOK_LLM_BACKEND_CONFIG,
    RUNBOOK_MODEL_CONTROL_REFUSED,
    RUNBOOK_POD_ADMISSION_REFUSED,
    RUNBOOK_PYTHON_MODULE_MISSING,
    RUNBOOK_SERVER_CRASHED,
    RUNBOOK_SERVER_OPTION_INVALID,
    RUNBOOK_SERVER_PORT_IN_USE,
    RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
    RUNBOOK_UNKNOWN_LOAD_FAILURE,
)


@pytest.mark.parametrize("split", accuracy.SPLITS)
def test_split_follows_the_rule(split: str) -> None:
    cases = accuracy.load(split)
    assert cases
    for case in cases:
        assert case.source.startswith("https://github.com/"), f"{case.name}: cite the issue URL"
        want = accuracy.split_of(case.source)
        assert want == split, f"{case.name} belongs in {want}/"


def test_no_log_is_in_both_parts() -> None:
    tune = {c.source for c in accuracy.load("tune")}
    heldout = {c.source for c in accuracy.load("heldout")}
    assert not tune & heldout


HELDOUT_TOP1_AT_LEAST = 0.90
"""What this engine measured on heldout/ (27/30); a change that loses a held-out log fails here."""


HELDOUT2_TOP1_AT_LEAST = 19 / 21
"""Measured once on heldout2/ (19/21, clean); 21/21 after the next round's rule changes (not clean)."""
HELDOUT2_KNOWN_MISSES: set[str] = set()  # seldon-4871, tensorrt-1384 were right by round 3


def test_heldout2_top1_measured_once() -> None:
    score = accuracy.score(accuracy.load("heldout2"))
    assert score.cases == 21
    assert score.top1 >= HELDOUT2_TOP1_AT_LEAST, f"heldout2 top-1 {score.top1:.1%}; misses: {score.misses}"
    assert {name for name, _want, _got in score.misses} <= HELDOUT2_KNOWN_MISSES


HELDOUT3_TOP1_AT_LEAST = 21 / 22
"""Measured once on heldout3/ after the rule changes of that round (21/22, clean)."""
HELDOUT3_KNOWN_MISSES = {"server-2095"}
HELDOUT3_LABEL_CONFLICT = {
    # Round 13's principle (TensorRT's own version-mismatch wording is trt-engine-incompatible whatever
    # backend wraps the engine, runbooks/trt-engine-incompatible.md "Meaning") answers this log's
    # "stdVersionRead == kSERIALIZATION_VERSION ... Version tag does not match" by TensorRT's page; its
    # label (the reporter's fix, SPLIT.md) is llm-backend-config: recorded, the label stays.
    "tensorrtllm-190": RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
}


def _heldout3() -> tuple[list[accuracy.Case], list[accuracy.Case]]:
    cases = accuracy.load("heldout3")
    healthy = [c for c in cases if c.expect == accuracy.HEALTHY]
    return [c for c in cases if c.expect != accuracy.HEALTHY], healthy


def test_heldout3_top1_measured_once() -> None:
    failed, _healthy = _heldout3()
    score = accuracy.score(failed)
    assert score.cases == 22
    conflicts = {name: got for name, _want, got in score.misses if name in HELDOUT3_LABEL_CONFLICT}
    assert conflicts == {n: g for n, g in HELDOUT3_LABEL_CONFLICT.items() if n in conflicts}
    hits = score.hits + len(conflicts)  # the recorded figure counts the label disputed since
    assert hits / score.cases >= HELDOUT3_TOP1_AT_LEAST, f"heldout3 {hits}/22; misses: {score.misses}"
    assert {name for name, _want, _got in score.misses} - set(conflicts) <= HELDOUT3_KNOWN_MISSES
    assert all(accuracy.top1(c) != "(no finding)" for c in failed)


def test_heldout3_healthy_logs_stay_clean() -> None:
    _failed, healthy = _heldout3()
    assert len(healthy) >= 2
    for case in healthy:
        assert not accuracy.has_failure(case), case.name


def test_heldout3_is_new() -> None:
    """Every heldout3 log cites an issue no other corpus or gpu/ fixture cites."""
    cited = {
        line.split("# source: ", 1)[1].strip()
        for folder in ("tune", "heldout", "heldout2", "gpu", "real")
        for path in (accuracy.LOGS / folder).glob("*.log")
        for line in path.read_text().splitlines()[:4]
        if line.startswith("# source: ")
    }
    for case in accuracy.load("heldout3"):
        assert case.source.startswith("https://"), case.name  # a public page: a thread, a forum post, a blog
        assert case.source not in cited, f"{case.name}: {case.source} is already in another corpus"


def _layered(split: str) -> tuple[list[accuracy.Case], list[accuracy.Case]]:
    cases = accuracy.load(split)
    return [c for c in cases if c.expect != accuracy.HEALTHY], [
        c for c in cases if c.expect == accuracy.HEALTHY
    ]


HELDOUT4_BEFORE = 3 / 15
"""heldout4 scored with main's engine (07e2a84) before this round: 3/15, 7 empty answers, 2 of 6
healthy logs flagged (tests/data/logs/SPLIT.md)."""
HELDOUT5_TOP1_AT_LEAST = 10 / 12
"""heldout5, collected after the round's last rule change and scored once (clean): 10/12."""
HELDOUT5_KNOWN_MISSES = {"docker-cli-2425"}  # libnvidia-container-103 right since
HELDOUT5_LABEL_DISPUTED = {
    # Labelled python-module-missing; `No module named 'nvtabular.column_group'` names a submodule of a
    # package that imported (Python reports the first part it cannot find), which round 25 reads as
    # another release of the package (library-version-mismatch): the workflow was saved by an NVTabular
    # that still had `column_group` (NVIDIA-Merlin/HugeCTR#364: "an old API from v0.6.1"). The label stays
    # as written; what the engine answers is pinned here.
    "nvtabular-1035": RUNBOOK_LIBRARY_VERSION_MISMATCH,
}


def test_heldout4_and_heldout5_are_new() -> None:
    """Neither set cites a thread another corpus file cites (heldout4 came first, heldout5 after it)."""

    def sources(folders: tuple[str, ...]) -> set[str]:
        return {
            line.split("# source: ", 1)[1].strip()
            for folder in folders
            for path in (accuracy.LOGS / folder).glob("*.log")
            for line in path.read_text().splitlines()[:4]
            if line.startswith("# source: ")
        }

    older = sources(("tune", "heldout", "heldout2", "heldout3", "gpu", "real", "dev4"))
    assert not sources(("heldout4",)) & older
    assert not sources(("heldout5",)) & (older | sources(("heldout4",)))
    for case in accuracy.load("heldout4") + accuracy.load("heldout5"):
        assert "triton-inference-server/server/" not in case.source, f"{case.name}: not the server tracker"


def test_heldout6_is_new() -> None:
    """heldout6 cites no thread any other corpus file cites; only a healthy log may come from the
    server's tracker (a vLLM startup no other file quotes)."""
    folders = (*accuracy.SPLITS, "heldout2", "heldout3", "heldout4", "heldout5", "gpu", "real", "dev4")
    older = {
        line.split("# source: ", 1)[1].strip()
        for folder in folders
        for path in (accuracy.LOGS / folder).glob("*.log")
        for line in path.read_text().splitlines()[:4]
        if line.startswith("# source: ")
    }
    cases = accuracy.load("heldout6")
    assert len(cases) == 14
    for case in cases:
        assert case.source.startswith("https://"), case.name  # a public page: a thread, a forum post, a blog
        assert case.source not in older, f"{case.name}: {case.source} is already in another corpus"
        if case.expect != accuracy.HEALTHY:
            assert "triton-inference-server/server/" not in case.source, case.name


def _cited_outside(name: str) -> str:
    """Every corpus file, test, doc and bench note outside the held-out set `name`, as one text.

    Metrics bodies (tests/data/scrapes: what a thread's server exported, read by the exporter's tests) are
    left out: the diagnosis never reads them, so a log from the same thread is still unseen by it."""
    root = accuracy.LOGS.parents[2]
    scrapes = root / "tests" / "data" / "scrapes"
    return "\n".join(
        path.read_text(errors="replace")
        for folder in ("tests", "docs", "bench")
        for path in (root / folder).rglob("*")
        if path.is_file()
        and name not in path.parts
        and path.suffix in (".py", ".md", ".log", ".txt")
        and scrapes not in path.parents
    )


SERVER_TRACKER_RANGES = {
    "heldout36": (8000, 10**6),
    "heldout37": (1, 8000),
    "heldout38": (1, 4500),
    "heldout39": (4500, 8000),
    "heldout59": (1, 10**6),
    "heldout61": (1, 4000),
    "heldout62": (4000, 10**6),
    "heldout64": (4000, 10**6),
    "heldout67": (1, 4000),
    "heldout68": (4000, 10**6),
    "heldout69": (1, 10**6),
    "heldout71": (1, 3000),
    "heldout72": (3000, 6000),
    "heldout73": (6000, 10**6),
    "heldout74": (1, 10**6),
    "heldout75": (1, 10**6),
    "heldout77": (1, 10**6),
    "heldout78": (1, 10**6),
    "heldout79": (1, 10**6),
    "heldout80": (1, 10**6),
    "heldout81": (1, 10**6),
    "heldout82": (1, 10**6),
    "heldout88": (1, 10**6),
    "heldout89": (7500, 10**6),
    "heldout106": (1, 10**6),
    "heldout119": (8000, 10**6),
    "heldout135": (1, 10**6),
}
"""Later held-out sets whose brief allowed the server's own tracker: the thread numbers each took (first,
past the last), threads nothing had cited before (heldout36 the 2025-26 ones, heldout37 the older; after
it, heldout38 those below 4500 and heldout39 4500-7999; heldout59 any number nothing cited; heldout61
those below 4000 and heldout62 those from 4000 up, nothing cited; heldout64 again those from 4000 up,
nothing cited; heldout67 again those below 4000, nothing cited; heldout68 those from 4000 up again,
nothing cited; heldout69 any number again, nothing cited; heldout71 those below 3000, nothing cited;
heldout72 those numbered 3000-5999, nothing cited; heldout73 those from 6000 up, nothing cited; heldout74 any
number again, in the backends' words, and heldout75 any number, in the server's words, nothing cited;
heldout77 any number, failures seen through a client or a tool, nothing cited; heldout78 any number again,
healthy starts only, nothing cited; heldout79 any number, failures after a change (an upgrade, a reload,
growing load), nothing cited; heldout80 any number, the deciding line core's or the Python backend's
own, nothing cited; heldout81 any number, failures the platform or the hardware decides, nothing cited;
heldout82 any number, the LLM backends' threads, nothing cited; heldout88 any number, the feature query
families earlier sets did not use (cloud repositories, sequence batching and implicit state, warm-up, custom
builds, Windows, the in-process API), nothing cited; heldout89 those numbered from 7500 up (the 2024-26
releases, the LLM era), nothing cited; heldout106 any number again, healthy starts only, nothing cited;
heldout119 those numbered from 8000 up again (the newest threads, beside the tensorrtllm_backend tracker
from 600 up), nothing cited; heldout135 any number again, failures decided around Triton (the container,
the platform, the orchestrator), nothing cited)."""


@pytest.mark.parametrize(
    ("name", "size"),
    [
        ("heldout7", 21),
        ("heldout8", 21),
        ("heldout9", 20),
        ("heldout10", 21),
        ("heldout11", 21),
        ("heldout12", 20),
        ("heldout13", 22),
        ("heldout14", 21),
        ("heldout15", 21),
        ("heldout16", 21),
        ("heldout17", 21),
        ("heldout18", 21),
        ("heldout19", 22),
        ("heldout20", 22),
        ("heldout21", 17),
        ("heldout22", 22),
        ("heldout23", 12),
        ("heldout24", 16),
        ("heldout25", 12),
        ("heldout26", 14),
        ("heldout27", 10),
        ("heldout28", 13),
        ("heldout29", 12),
        ("heldout30", 2),
        ("heldout31", 7),
        ("heldout32", 8),
        ("heldout33", 4),
        ("heldout34", 1),
        ("heldout36", 1),
        ("heldout37", 15),
        ("heldout38", 11),
        ("heldout39", 7),
        ("heldout40", 5),
        ("heldout41", 4),
        ("heldout42", 8),
        ("heldout43", 4),
        ("heldout44", 3),
        ("heldout47", 12),
        ("heldout48", 13),
        ("heldout49", 8),
        ("heldout54", 2),
        ("heldout55", 1),
        ("heldout56", 2),
        ("heldout57", 3),
        ("heldout59", 21),
        ("heldout60", 4),
        ("heldout61", 11),
        ("heldout62", 13),
        ("heldout63", 3),
        ("heldout64", 8),
        ("heldout65", 5),
        ("heldout66", 3),
        ("heldout67", 14),
        ("heldout68", 11),
        ("heldout69", 9),
        ("heldout70", 3),
        ("heldout71", 12),
        ("heldout72", 8),
        ("heldout73", 9),
        ("heldout74", 19),
        ("heldout75", 7),
        ("heldout76", 2),
        ("heldout77", 3),
        ("heldout78", 9),
        ("heldout79", 8),
        ("heldout80", 6),
        ("heldout81", 6),
        ("heldout82", 5),
        ("heldout83", 1),
        ("heldout87", 2),
        ("heldout84", 3),
        ("heldout86", 7),
        ("heldout88", 10),
        ("heldout85", 6),
        ("heldout89", 2),
        ("heldout90", 1),
        ("heldout91", 3),
        ("heldout92", 10),
        ("heldout93", 14),
        ("heldout94", 15),
        ("heldout96", 4),
        ("heldout95", 18),
        ("heldout97", 17),
        ("heldout98", 14),
        ("heldout99", 8),
        ("heldout101", 1),
        ("heldout102", 2),
        ("heldout103", 1),
        ("heldout104", 3),
        ("heldout105", 6),
        ("heldout100", 17),
        ("heldout106", 7),
        ("heldout107", 20),
        ("heldout108", 15),
        ("heldout109", 18),
        ("heldout110", 8),
        ("heldout112", 17),
        ("heldout113", 16),
        ("heldout114", 14),
        ("heldout115", 14),
        ("heldout116", 18),
        ("heldout117", 6),
        ("heldout118", 9),
        ("heldout119", 2),
        ("heldout120", 5),
        ("heldout124", 19),
        ("heldout122", 16),
        ("heldout125", 16),
        ("heldout128", 14),
        ("heldout127", 13),
        ("heldout121", 20),
        ("heldout123", 24),
        ("heldout126", 20),
        ("heldout135", 8),
        ("heldout132", 10),
        ("heldout130", 13),
        ("heldout134", 13),
        ("heldout131", 19),
        ("heldout129", 14),
        ("heldout133", 22),
        ("heldout136", 6),
        ("heldout138", 6),
        ("heldout137", 8),
        ("heldout143", 9),
        ("heldout139", 6),
        ("heldout140", 15),
        ("heldout141", 16),
        ("heldout142", 27),
        ("heldout144", 9),
    ],
)
def test_later_heldout_sets_are_new(name: str, size: int) -> None:
    """heldout7 on (each collected after the previous round's rules) cite no page that any other
    corpus file, test, doc or bench note cites, and none from the server's own tracker, except the
    sets in SERVER_TRACKER_RANGES, whose brief allowed that tracker's threads in a range of numbers."""
    cited = _cited_outside(name)
    cases = accuracy.load(name)
    assert len(cases) == size
    for case in cases:
        assert case.source.startswith("https://"), case.name  # a public page: a thread, a forum post, a blog
        # issues/1 must not match issues/109: a cited URL ends where its number ends.
        cited_here = re.search(re.escape(case.source) + r"(?!\d)", cited)
        assert cited_here is None, f"{case.name}: {case.source} is cited elsewhere"
        if name in SERVER_TRACKER_RANGES and "triton-inference-server/server/" in case.source:
            thread = re.fullmatch(
                r"https://github\.com/triton-inference-server/server/(?:issues|pull)/(\d+)", case.source
            )
            assert thread is not None, case.name
            first, past = SERVER_TRACKER_RANGES[name]
            assert first <= int(thread.group(1)) < past, case.name
            # A thread may be cited as server/issues/N or server#N elsewhere, not only by its full URL.
            number = thread.group(1)
            assert re.search(rf"server(?:/issues/|/pull/|#){number}(?!\d)", cited) is None, case.name
        else:
            assert "triton-inference-server/server/" not in case.source, case.name


def test_heldout9_has_15_failures_and_5_healthy_logs() -> None:
    failed, healthy = _layered("heldout9")
    assert (len(failed), len(healthy)) == (15, 5)


HELDOUT9_TOP1_AT_LEAST = 7 / 15
"""heldout9, collected after round 5's rules and scored once (clean, after merging main): 7/15, one
empty answer, none of five healthy logs flagged (tests/data/logs/SPLIT.md, bench/RESULTS.md)."""
HELDOUT9_KNOWN_MISSES: set[str] = set()
"""Round 6 fixed the classes behind the eight misses of the once-scored run (async-cosyvoice-71,
eks-ml-117, gpu-operator-1374, gpu-operator-265, gpu-operator-425, jetson-inference-1593,
jetson-inference-1878, kops-12718): none is a miss any more."""
HELDOUT9_LABEL_SUPERSEDED = {
    # Labelled the fallback because "no runbook covers a port conflict" (the log's own note); round 6
    # added that page (server-port-in-use, issue 20) and Docker's "Bind for ... failed: port is already
    # allocated" is its wording. The label stays as it was written; this is the one case the new page
    # answers differently, and what it answers is pinned here.
    "openai-trtllm-39": RUNBOOK_SERVER_PORT_IN_USE,
}


def test_heldout9_top1_measured_once() -> None:
    failed, healthy = _layered("heldout9")
    score = accuracy.score(failed)
    assert (score.cases, len(healthy)) == (15, 5)
    assert score.top1 >= HELDOUT9_TOP1_AT_LEAST, score.misses
    misses = {name: got for name, _want, got in score.misses}
    assert set(misses) <= HELDOUT9_KNOWN_MISSES | set(HELDOUT9_LABEL_SUPERSEDED)
    for name in misses.keys() & HELDOUT9_LABEL_SUPERSEDED.keys():
        assert misses[name] == HELDOUT9_LABEL_SUPERSEDED[name], name
    empty = {name for name, _want, got in score.misses if got == "(no finding)"}
    assert not empty  # gpu-operator-265's empty answer of the once-scored run is a finding since round 6
    assert not any(accuracy.has_failure(case) for case in healthy)


def test_heldout9_misses_as_development_cases() -> None:
    """Round 6 fixed heldout9's misses by class (TensorRT's profile wording, a 0-byte file, an import
    failure inside an LLM backend line, a logrus "Error:" at info, the GPU operator's validators): every
    failure log lands on its label but the one the new port page answers, no healthy log is flagged."""
    failed, healthy = _layered("heldout9")
    misses = {name: got for name, _want, got in accuracy.score(failed).misses}
    assert misses == HELDOUT9_LABEL_SUPERSEDED
    assert not any(accuracy.has_failure(case) for case in healthy)


@dataclass(frozen=True)
class BlindSet:
    """A held-out set collected blind (the collector ran no diagnosis) and scored once: the figure
    recorded then, and upper bounds that shrink as later rounds fix its misses by class."""

    failures: int
    healthy: int
    top1_at_least: float
    known_misses: frozenset[str] = frozenset()
    known_empty: frozenset[str] = frozenset()
    known_flagged: frozenset[str] = frozenset()


BLIND_SETS = {
    # 6/16 after round 6, six empty answers; round 7 fixed all but a symptom-only paste (a front
    # end's gRPC "is not at ready state", labelled cuda-driver-mismatch from the thread's fix)
    "heldout10": BlindSet(16, 5, 6 / 16, frozenset({"clearml-serving-22"})),
    # 8/16 after round 7, three empty answers; round 8 fixed six by class, two disputed labels left
    "heldout11": BlindSet(16, 5, 8 / 16, frozenset({"fastertransformer-backend-111", "model-analyzer-160"})),
    # 7/15 after round 8, two empty answers; round 9 fixed six, two disputed labels left
    "heldout12": BlindSet(15, 5, 7 / 15, frozenset({"fil-backend-325", "isaac-ros-dnn-inference-44"})),
    # 9/17 after round 9, three empty answers, one healthy log flagged; round 10 fixed five by class
    # and the false alarm, three disputed labels left (SPLIT.md)
    "heldout13": BlindSet(
        17,
        5,
        9 / 17,
        frozenset({"dali-backend-223", "model-analyzer-120", "tensorrtllm-backend-375"}),
        frozenset(),
        frozenset(),
    ),
    # 8/16 after round 10, two empty answers, no healthy log flagged; round 11 fixed six by class, two
    # disputed labels left (SPLIT.md)
    "heldout14": BlindSet(
        16,
        5,
        8 / 16,
        frozenset({"kserve-1941", "tensorrtllm-backend-118"}),
        frozenset({"kserve-1941"}),
    ),
    # 10/16 after round 11, two empty answers, one healthy log flagged; round 12 fixed three by class and
    # the false alarm, no empty answer left; two disputed labels and one fallback answer left (SPLIT.md)
    "heldout15": BlindSet(
        16,
        5,
        10 / 16,
        frozenset({"clearml-serving-36", "pytriton-37", "tensorrt-llm-2079"}),
    ),
    # 7/16 after round 12, one empty answer, no healthy log flagged; round 13 fixed six by class and the
    # empty answer; three disputed labels left (SPLIT.md, round 13 development); diag37 fixed one from
    # FastDeploy's source (its bare import failure is its compiled extension not loading)
    "heldout16": BlindSet(
        16,
        5,
        7 / 16,
        frozenset({"fastertransformer-backend-121", "nim-deploy-18"}),
        frozenset(),  # round 13: fastertransformer-backend-140's crash gives a finding
    ),
    # 5/16 after round 13, four empty answers, no healthy log flagged; round 14 fixed six by class and
    # three of the empty answers (SPLIT.md, round 14 development); diag37 one more (a console script's
    # traceback is no model code: nim-deploy-51's cache-folder permission decides)
    "heldout17": BlindSet(
        16,
        5,
        5 / 16,
        frozenset(
            {
                "isaac-ros-image-segmentation-19",
                "kserve-2246",
                "nim-deploy-109",
                "tensorrt-llm-689",
            }
        ),
        frozenset({"isaac-ros-image-segmentation-19"}),
    ),
    # 7/16 after round 14, six empty answers, no healthy log flagged; round 15 fixed the scanner/parser
    # disagreement, the levelless failure prose and a wrapped protobuf error (three flipped, five empty
    # answers gone); fil-backend-368
    # is a disputed label (the design: a CPU model loading after the driver warning is not flagged);
    # round 16 fixed three more by class (a poll failure under Model Analyzer, a child tool refusing an
    # option, a step's error inside an ensemble); three disputed labels left (SPLIT.md)
    "heldout18": BlindSet(
        16,
        5,
        7 / 16,
        frozenset({"azure-docs-75619", "fil-backend-368", "modelmesh-serving-216"}),
        frozenset({"fil-backend-368"}),
    ),
    # 8/16 after round 16, three empty answers, no healthy log flagged; round 17 fixed the three empty
    # answers (glibc aborts, getopt's refusal, Kubernetes admission) and two wrong findings by class, the
    # library table (diagsrc) the missing TensorRT plugin; three disputed labels left (SPLIT.md)
    "heldout19": BlindSet(
        16,
        6,
        8 / 16,
        frozenset(
            {
                "mmdeploy-756",
                "tensorrtllm-backend-517",
                "tensorrtllm-backend-526",
            }
        ),
    ),
    # 8/17 after round 17 and the library error table, four empty answers, no healthy log flagged; round
    # 18 fixed eight by class and the four empty answers (and the hit at warning severity); one disputed
    # label left (SPLIT.md, round 18 development)
    "heldout20": BlindSet(
        17,
        5,
        8 / 17,
        frozenset({"tensorrtllm-backend-297"}),
        frozenset(),
    ),
    # 7/12 after round 18, one empty answer, no healthy log flagged (GitHub threads); round 19 fixed three
    # by class and the empty answer; two disputed labels left (SPLIT.md, round 19 development)
    "heldout21": BlindSet(
        12,
        5,
        7 / 12,
        frozenset({"ai-assisted-annotation-client-62", "seldon-core-4617"}),
        frozenset(),
    ),
    # 9/17 after round 18, two empty answers, no healthy log flagged (no GitHub thread: blogs, docs, notes);
    # round 19 fixed two by class and both empty answers; the rest disputed (SPLIT.md, round 19 development)
    "heldout22": BlindSet(
        17,
        5,
        9 / 17,
        frozenset(
            {
                "gitcode-017fe110",
                "gitcode-350981ab",
                "gitcode-46df31bd",
                "gitcode-59f9d688",
                "gitcode-c055ba0f",
                "triton-rootless-cuda",
            }
        ),
        frozenset(),
    ),
    # 6/9 after round 19, one empty answer, no healthy log flagged (GitHub threads); round 20 fixed two
    # by class, the empty one disputed (SPLIT.md, round 20 development)
    "heldout23": BlindSet(
        9,
        3,
        6 / 9,
        # cmssw-37767: bash's "Killed" job report reads as the OOM kill (host-resource-exhausted's Meaning)
        frozenset({"tensorrt-llm-1670", "cmssw-37767"}),
        frozenset({"tensorrt-llm-1670"}),
    ),
    # 8/13 after round 19, two empty answers, no healthy log flagged (no GitHub thread); round 20 fixed
    # four by class and both empty answers, one disputed (SPLIT.md, round 20 development)
    "heldout24": BlindSet(
        13,
        3,
        8 / 13,
        frozenset({"mlops-troubleshooting-no-cuda-device"}),
        frozenset(),
    ),
    # 5/10 after round 20, one empty answer, no healthy log flagged (GitHub threads); round 21 fixed two
    # by class, three disputed left, the empty one among them (SPLIT.md, round 21 development)
    "heldout25": BlindSet(
        10,
        2,
        5 / 10,
        frozenset({"lmdeploy-102", "model-analyzer-786", "tensorrtllm-backend-646"}),
        frozenset({"lmdeploy-102"}),
    ),
    # 5/11 after round 20, one empty answer, no healthy log flagged (no GitHub thread); round 21 fixed four
    # by class and the empty answer, two disputed left (SPLIT.md, round 21 development)
    "heldout26": BlindSet(
        11,
        3,
        5 / 11,
        frozenset({"isaac-ros-dope-gpu-memory", "morpheus-openshift-trt-plan-not-generated"}),
        frozenset(),
    ),
    # 4/7 after round 21, no empty answer, one healthy log flagged (repository files at a commit); round 22
    # fixed the three misses and the false alarm by class (SPLIT.md, round 22 development)
    "heldout27": BlindSet(7, 3, 4 / 7),
    # 3/10 after round 21, two empty answers, no healthy log flagged (non-English speakers' threads); round
    # 22 fixed six by class and both empty answers, one cut title left (SPLIT.md, round 22 development)
    "heldout28": BlindSet(10, 3, 3 / 10, frozenset({"tensorrtllm-backend-568"})),
    # 9/11 after round 22, one empty answer, no healthy log flagged (GitHub threads found by error text);
    # both misses fixed by class since (a cut cell's import frames, grpcio's relayed error; round 23)
    "heldout29": BlindSet(11, 1, 9 / 11),
    # 0/2 after round 22, one empty answer, no healthy log (documentation and discussion pages)
    "heldout30": BlindSet(
        2, 0, 0 / 2, frozenset({"balacoon-tts-hf-7", "balacoon-tts-hf-8"}), frozenset({"balacoon-tts-hf-7"})
    ),
    # 4/5 after round 23, no empty answer, no healthy log flagged (files in repositories at a commit)
    "heldout31": BlindSet(5, 2, 4 / 5, frozenset({"speech-cascade-stub-host-oom"})),
    # 1/7 after round 23, four empty answers (each excerpt ends before any failure line), no healthy log
    # flagged (the trackers of Triton's backends and tools)
    "heldout32": BlindSet(
        7,
        1,
        1 / 7,
        frozenset(
            {
                "fil-backend-328",
                "model-analyzer-209",
                "model-analyzer-56",
                "model-analyzer-606",
                "paddlepaddle-backend-5",
                "tensorrtllm-backend-59",
            }
        ),
        frozenset({"fil-backend-328", "model-analyzer-209", "model-analyzer-56", "tensorrtllm-backend-59"}),
    ),
    # 1/2 after round 24 and the LLM libraries' error table, no empty answer, no healthy log flagged
    # (article and note repositories); round 24 fixed the miss (the stub binary without libpython)
    "heldout33": BlindSet(2, 2, 1 / 2),
    # 0/1 after round 24, no empty answer, no healthy log (web pages; the pages corpus ran dry); round 25
    # fixed the miss by class (a missing submodule of a package that imported is another release of it)
    "heldout34": BlindSet(1, 0, 0 / 1),
    # 1/1 at 75e4e50 (the server tracker's threads 8000 and above that nothing had cited; the sources ran dry
    # after one)
    "heldout36": BlindSet(1, 0, 1 / 1),
    # 6/11 at 75e4e50, no empty answer, 0/4 healthy flagged (the server tracker's uncited threads below 8000);
    # round 26 fixed three misses by class (an unresolved symbol in a backend library found; the stub's
    # classes used at import time), left: a stub-unhealthy boundary and a log that names no cause
    "heldout37": BlindSet(
        11,
        4,
        6 / 11,
        frozenset(
            {"server-3678-gke-python-stub-not-healthy-shm", "server-6682-openvino-default-model-filename"}
        ),
    ),
    # 3/5 at 4ebff12, one empty answer (a pod's df of a full /dev/shm), no healthy log flagged; round 27
    # reads df's /dev/shm row; left: a disputed label (`failed to stat file  s3://...` went to the local
    # filesystem, a leading space in the path: repository-path-invalid, labelled cloud-repository-access)
    # 7/10 at c14a784, no empty answer, no healthy log flagged; round 27 reads a GraphDef with no
    # inputs at all as model-io-unsupported; left: two Jetson logs whose one line names no platform
    # (KIND_GPU with no GPUs, a CUDA memory manager never initialised), labelled from the threads' fix
    "heldout38": BlindSet(
        10,
        1,
        7 / 10,
        frozenset({"server-1468-nano-kind-gpu-no-gpus", "server-1925-jetson-min-compute-capability"}),
    ),
    "heldout39": BlindSet(5, 2, 3 / 5, frozenset({"server-5341-helm-s3-https-repository-stat"})),
    # 1/3 at 68c4cb6 (product docs and repository files), one empty answer (a Riva launcher's flag error
    # after every model was READY), one healthy log flagged (a NIM's wrapper printing Triton's INFO lines
    # at ERROR); round 28 fixed all three by class (another logger's ERROR: line after an I line, a relay's
    # prefix peeled, a version folder named -1)
    "heldout40": BlindSet(3, 2, 1 / 3),
    # 2/4 at 68c4cb6 (rarely cited trackers), no empty answer; misses: a relayed `no version is available`
    # labelled from the maintainer's GPU-runtime fix, TensorRT-LLM's `Failed to deserialize cuda engine`
    # alone (labelled trt-engine-incompatible here, llm-backend-config in two earlier sets)
    "heldout41": BlindSet(
        4,
        0,
        2 / 4,
        frozenset(
            {
                "instill-model-backend-122-gpu-model-no-nvidia-runtime",
                "trtllm-1664-engine-v090-on-24.02-deserialize",
            }
        ),
    ),
    # 4/5 at b30883f (files in public repositories: committed logs, repro READMEs), no empty answer, none of
    # three healthy logs flagged; the miss: TensorRT's bare "unable to load plan file to auto complete
    # config" read as trt-engine-incompatible, labelled model-file-invalid from the repository's history
    "heldout42": BlindSet(5, 3, 4 / 5, frozenset({"studentbehavior-classnet-v1-plan-unloadable"})),
    # 1/1 at 9ee499b (more repository files: READMEs' "what success looks like" blocks), no empty answer,
    # none of three healthy logs flagged
    "heldout43": BlindSet(1, 3, 1 / 1),
    "heldout44": BlindSet(2, 1, 2 / 2),
    # 6/10 scored once at 9f88da9 (two empty answers); the hand-wrap reading then fixed the stub's wrapped
    # line, a request for an unknown model became a failure, and a log quoted in code comments is read
    # (diagnosis/quoted.py). Left: a client's "unknown model" labelled from the author's fix
    # (version-dir-invalid) and a paraphrased message no Triton source prints.
    "heldout47": BlindSet(
        10,
        2,
        8 / 10,
        frozenset({"mles-text-detection-ensemble-no-version-dir", "signature-service-vgg16-no-version-dir"}),
    ),
    # 5/9 scored once at 9953919 (git history: commit messages, notebooks' overwritten outputs), no empty
    # answer, one of four healthy logs flagged; the next commits read the NGC banner of a container running
    # in Minor Version Compatibility mode and a library's INFO record's announced rest (faiss) as no failure.
    # Left: a client's "no version is available" labelled from the next commit's instance-group fix, a bare
    # "No module named 'model'" labelled from a backend-directory fix, and a repository one folder too high
    # that reads as a missing model (the collector's inference).
    "heldout48": BlindSet(
        9,
        4,
        6 / 9,
        frozenset(
            {
                "merlin-movielens-tf-repository-one-level-up",
                "nvtabular-hugectr-movielens-gpu-id-2",
                "python-backend-commit-backend-dir-trailing-slash",
            }
        ),
    ),
    # 2/3 scored once at 81c63bb (the history of large repositories), no empty answer, one of five healthy
    # logs flagged (core's E-level "Failed to set config modification time" on a PyTriton load); then core's
    # line is harmless and a Python warnings line is a warning, not the first cause: 3/3, none flagged.
    "heldout49": BlindSet(3, 5, 3 / 3),
    # 1/1 scored once (NVIDIA trackers the corpus barely cites: a JetPack tarball's "Exec format error" on
    # an x86 host), no empty answer, the one healthy log (a backend table) not flagged.
    "heldout54": BlindSet(1, 1, 1 / 1),
    # No failure log (non-English sources and never-cited Triton-runtime trackers: only thread openings are
    # stored); the one healthy log, a towhee pipeline's start on 22.07 with a requests warning, not flagged.
    "heldout55": BlindSet(0, 1, 0.0),
    # 2/2 scored once at 8119879 (GitHub threads the docs corpus stores, outside the server's tracker: two
    # tensorrtllm_backend load failures, an engine unfit for in-flight batching and a SIGFPE in initialize),
    # no empty answer, no healthy log.
    "heldout56": BlindSet(2, 0, 2 / 2),
    # No failure log (whole repositories' git histories around Triton: only healthy starts are uncited);
    # one of three healthy logs flagged, scored once at 430709a: gRPC core's E-level backup_poller line of
    # the notebook kernel's forked child, in a FIL notebook's `docker logs` cell, read as an error line.
    "heldout57": BlindSet(
        0,
        3,
        0.0,
        known_flagged=frozenset({"healthy-fil-fraud-detection-notebook-2112-four-models-two-gpus"}),
    ),
    # No failure log (files in the code corpus outside the organization: the failures there are cited or
    # cannot be tied to a repository); none of three healthy logs flagged, scored once at f4dcf2c3 (a
    # SageMaker ensemble, PyTriton on a CPU host with CUDA and NVML errors, PyTriton's E-level config mtime).
    "heldout63": BlindSet(0, 3, 0.0),
    # 10/10 scored once at 7c5c8048 (server-tracker threads from 4000 up, tensorrtllm_backend, model_analyzer:
    # backend 4/4, core 4/4, container 1/1, platform 1/1), no empty answer, none of three healthy logs
    # flagged.
    "heldout62": BlindSet(10, 3, 10 / 10),
    # 7/9 scored once at 24178cd0 (uncited server-tracker threads below 4000, 2019-2021: backend 4/6, core
    # 3/3), no empty answer, neither healthy log flagged. Both misses fixed from the sources: r19's "first
    # dimension of tensor ... is not a variable-size batch dimension" (inventory r19-batch-dim) and the r20
    # custom loader's dlerror decided as core's shared-library one.
    "heldout61": BlindSet(9, 2, 7 / 9),
    # 12/17 scored once at d740c012 (uncited threads of the triton-inference-server organization, 2019-2023:
    # backend 4/7, core 4/5, platform 4/5), one empty answer, none of four healthy logs flagged. Fixed by
    # class from the wordings' sources (test_diagnosis_heldout59_classes.py): TensorRT's "Cuda Error in
    # allocate: 2", TorchScript's "Unknown type name", the AWS SDK's "curlCode: 60" (the empty answer). Left:
    # a bare libnvidia-ml.so.1 missing on a Jetson the log does not name, and a Python backend terminate
    # whose shared-memory cause is only in the thread.
    "heldout59": BlindSet(
        17,
        4,
        12 / 17,
        known_misses=frozenset(
            {
                "server-2882-jetson-nx-self-built-libnvidia-ml-missing",
                "server-2932-two-python-models-21.05-terminate-shm",
            }
        ),
    ),
    # 2/4 scored once at 6256d0a (trackers outside triton-inference-server: wenet, a YOLOv7 DeepStream
    # project, Isaac ROS, TensorRT-LLM), no empty answer, no healthy log. Both misses were read as
    # unknown-load-failure; fixed by class from the wordings' sources (test_diagnosis_heldout60_classes.py):
    # a ROS 2 launcher's "exit code -11" is a fatal signal, and ONNX Runtime's "TRT:EfficientNMS_TRT(-1) is
    # not a registered function/op" a custom-domain op.
    "heldout60": BlindSet(4, 0, 2 / 4),
    # 3/4 scored once at 14928667 (tensorrtllm_backend threads), no empty answer, the healthy log not
    # flagged. The miss is a disputed label: "maxTokensInPagedKvCache (N) must be large enough to process at
    # least 1 sequence" labelled gpu-out-of-memory from the wording alone (no answer in the thread); the
    # engine keeps llm-backend-config, the page of the config's KV budget (heldout18's sherpa-688 decided
    # that from a maintainer's answer).
    # 6/8 scored once at 60713afc (server-tracker threads from 4000 up: feature and platform corners;
    # platform 2/3, core 3/3, container 1/1, backend 0/1), one empty answer (CUDA's insufficient-driver
    # warning after the NGC entrypoint's "NVIDIA Tegra driver detected."), no healthy log; the other miss: a
    # custom backend's library on S3 that core dlopens by its s3:// path, read as backend-not-found,
    # labelled the fallback (no page covers that regression).
    # The empty answer fixed by class: after a banner that a driver is on the host, the warning is the
    # driver's (test_diagnosis_driver_banner.py).
    "heldout64": BlindSet(
        8, 0, 6 / 8, frozenset({"server-7550-24.07-custom-backend-library-from-s3-not-loaded"})
    ),
    # 2/3 scored once at 60713afc (other organizations' trackers: CMSSW SonicTriton, CosyVoice), no empty
    # answer, no healthy log. The miss: PyTorch's "CUDA error: unknown error" after core's "Unable to get
    # device UUID", read as the fallback; the thread traces it to a driver the container did not see, which
    # the log does not say.
    "heldout66": BlindSet(
        3, 0, 2 / 3, frozenset({"cmssw-40911-sonictriton-a100-gat-test-cuda-unknown-error"})
    ),
    # 10/13 scored once at c5d76b2e (uncited server-tracker threads below 4000, 2019-2022: core 5/5, backend
    # 3/4, platform 2/3, container 0/1), two empty answers, the healthy log not flagged. The empty answers:
    # CUDA's insufficient-driver line on a host whose NVML found a T4 (the model went to the CPU), and an
    # image's entrypoint exec'ing the server's first flag (`exec: --: invalid option`). The other miss is a
    # disputed label: "configuration expects 1 inputs, model provides at most 0" (a graph whose input is
    # no Placeholder) labelled tensor-name-mismatch, read as model-io-unsupported as heldout38's was. Both
    # empty answers fixed by class (test_diagnosis_driver_banner.py, test_diagnosis_entrypoint_flags.py).
    "heldout67": BlindSet(
        13,
        1,
        10 / 13,
        frozenset({"server-1285-trtis-19.05-graphdef-identity-input-no-inputs"}),
    ),
    # 2/4 scored once at 93ad3b3e (healthy starts first, server-tracker threads from 4000 up: core 1/2,
    # backend 1/1, platform 0/1), two empty answers, none of seven healthy logs flagged. The empty answers:
    # TensorFlow's fatal CPU-feature guard ("compiled to use AVX2 instructions, but these aren't available
    # on your machine") and Triton's crash stack without its "Signal (11) received." line; both fixed by
    # class (test_diagnosis_heldout68_classes.py).
    "heldout68": BlindSet(
        4,
        7,
        2 / 4,
    ),
    # 5/9 scored once at d3eaeedf (server-tracker threads, the layers around Triton: core 3/3, platform 1/2,
    # container 1/3, orchestrator 0/1), no empty answer, no healthy log. Misses: Docker's OCI runtime unable
    # to stat the image's entrypoint (a volume mounted over its folder; model-file-missing, labelled
    # pod-start-failed), runc mounting AKS's NVIDIA driver folder (the fallback, labelled
    # gpu-container-runtime), core's NUMA policy "Operation not permitted" (permission-denied, labelled the
    # fallback: disputed), a log's tail with no cause (cuda-driver-mismatch only in the thread). The two runc
    # wordings fixed by class (test_diagnosis_heldout69_classes.py).
    "heldout69": BlindSet(
        9,
        0,
        5 / 9,
        frozenset(
            {
                "server-4887-22.02-host-policy-numa-memory-policy-not-permitted",
                "server-4891-22.07-driver-470-quickstart-failed-to-load-all-models",
            }
        ),
    ),
    # 3/3 scored once at 7aeede75 (other trackers: fil_backend, TensorRT-LLM, tensorrtllm_backend; backend
    # 3/3), no empty answer, no healthy log.
    "heldout70": BlindSet(3, 0, 3 / 3),
    "heldout65": BlindSet(
        4, 1, 3 / 4, frozenset({"tensorrtllm-backend-366-kv-cache-too-small-for-one-sequence"})
    ),
    # 6/9 scored once at fbe034eb (server-tracker threads below 3000, TRTIS-era formats: core 3/4, backend
    # 3/5), no empty answer, one of three healthy logs flagged: 20.03's dynamic batcher printing its "Wait:
    # N us" debug line at E level. Misses: the TF backend's --backend-config value refused by RapidJSON
    # ("attempt to access JSON non-number as double", labelled server-option-invalid), a GraphDef folder
    # with no config ("must specify platform", labelled model-file-missing, read as
    # backend-platform-mismatch), and a sequence control's dims on a max_batch_size 0 model (labelled
    # max-batch-size-unsupported, read as shape-or-dims-mismatch). The false alarm fixed from r20.03's source
    # (test_diagnosis_heldout71_73_classes.py); the three misses are disputed labels.
    "heldout71": BlindSet(
        9,
        3,
        6 / 9,
        frozenset(
            {
                "server-2790-20.08-backend-config-gpu-memory-fraction-json-non-number",
                "server-704-trtis-2019-graphdef-dir-no-config-must-specify-platform",
                "server-842-trtis-2019-savedmodel-sequence-control-dims-max-batch-size-1",
            }
        ),
    ),
    # 5/8 scored once at 909c99d8 (server-tracker threads 3000-5999: backend 3/5, core 2/2, container 0/1), no
    # empty answer, no healthy log. Misses, each read as the fallback: python_backend's "Failed to get the
    # canonical path for $$TRITON_MODEL_DIRECTORY/..." (EXECUTION_ENV_PATH before 21.09), TensorRT's
    # "Cannot deserialize plugin since corresponding IPluginCreator not found" (labelled model-file-invalid),
    # the Docker daemon's "received unexpected HTTP status: 502 Bad Gateway" on a pull. The first fixed from
    # python_backend's source (inventory py-env-canonical-path: realpath of EXECUTION_ENV_PATH, r21.06 on),
    # the last from the distribution registry client's UnexpectedHTTPStatusError.
    "heldout72": BlindSet(
        8,
        0,
        5 / 8,
        frozenset(
            {
                "server-4365-21.04-mmdeploy-engine-plugin-creator-not-found",
            }
        ),
    ),
    # 8/9 scored once at 7a3b58b4 (server-tracker threads from 6000 up: backend 5/6, core 3/3), no empty
    # answer, no healthy log. The miss: the vllm backend's own model.py calling an attribute vLLM 0.10 dropped
    # ("'AsyncLLM' object has no attribute 'engine'"), labelled library-version-mismatch, read as
    # llm-backend-config; fixed by class: an exception raised in a shipped backend's own frame.
    "heldout73": BlindSet(9, 0, 8 / 9),
    # 9/15 scored once at 093213c2 (server-tracker threads in the backends' words: backend 8/14, core 1/1), no
    # empty answer, none of four healthy logs flagged. Misses: a 2019 custom backend's "model outputs must be
    # named" (labelled tensor-name-mismatch), TorchScript's schema matching "Arguments for call are not valid"
    # (labelled library-version-mismatch), ONNX Runtime 1.9's "grid_sampler is not a registered function/op"
    # (labelled library-version-mismatch), Myelin's "Compiled against cuDNN X but running against cuDNN Y"
    # (labelled trt-engine-incompatible), each read as the fallback; a 1.2 GB GraphDef protobuf cannot parse
    # (labelled library-version-mismatch, read as model-file-invalid), and a title-only "EfficientNMS_TRT is
    # not a registered function/op" (labelled model-file-invalid, read as the fallback). The first, second,
    # fourth and last fixed by class from their sources (test_diagnosis_heldout74_classes.py).
    "heldout74": BlindSet(
        15,
        4,
        9 / 15,
        frozenset(
            {
                "server-3686-2.15-onnx-grid-sampler-not-registered-ort-1.9",
                "server-4724-21.03-graphdef-1.2g-cant-parse-binary-proto",
            }
        ),
    ),
    # 6/6 scored once at 0ea20798 (server-tracker threads in the server's and its surroundings' words: core
    # 2/2, container 1/1, platform 1/1, orchestrator 1/1, backend 1/1), no empty answer, the healthy log not
    # flagged.
    "heldout75": BlindSet(6, 1, 6 / 6),
    # 2/2 scored once at 3e4a4498 (trackers other than the server's: clearml-serving's PTX toolchain
    # refusal, a NIM pod's unbound PersistentVolumeClaim; platform 1/1, orchestrator 1/1), no empty answer,
    # no healthy log.
    "heldout76": BlindSet(2, 0, 2 / 2),
    # 1/2 scored once at dbba7d2e (server-tracker threads, failures seen through a client or a tool: core
    # 1/2), no empty answer, the healthy log not flagged. The miss: a Java gRPC client's "This protocol is
    # restricted, expecting header xxxxx" (the header's quoted name blanked by the poster), read as the
    # fallback.
    "heldout77": BlindSet(2, 1, 1 / 2),
    # No failure log (healthy starts only, nine after the duplicate of heldout77's 3178 was dropped); one of
    # nine flagged, scored once at cfbe360d: the mpirun command line before a FasterTransformer start,
    # "--model-repository=${WORKSPACE}/all_models/t5/", read as config.pbtxt's unfilled ${...} placeholder;
    # fixed by class (a command line's flag values are the shell's to expand: test_diagnosis_round20.py).
    "heldout78": BlindSet(0, 9, 0.0),
    # 6/8 scored once at 90ac398d (server-tracker threads, failures after a change: backend 6/6, core 0/2),
    # one empty answer, no healthy log. The empty answer: only the Python stubs' "Non-graceful termination
    # detected." lines of a server that died under requests (labelled server-crashed). The other miss: a load
    # API's config override refused ("Invalid config override: (parameters[0].value): invalid value
    # \"EXECUTION_ENV_PATH\" for", cut there), labelled config-parse-error, read as python-module-missing.
    # Both fixed by class (test_diagnosis_heldout79_classes.py; inventory core-config-override-invalid).
    "heldout79": BlindSet(8, 0, 6 / 8),
    # 4/6 scored once at 08974882 (server-tracker threads whose deciding line is core's or the Python
    # backend's: backend 3/4, core 1/2), two empty answers, no healthy log. The empty answers: GDB's reports
    # of the server's SIGSEGV ("Program terminated with signal SIGSEGV, Segmentation fault." on a core file,
    # "Thread 327 \"tritonserver\" received signal SIGSEGV, Segmentation fault." live), both labelled
    # server-crashed; both fixed by class (test_diagnosis_heldout80_81_classes.py).
    "heldout80": BlindSet(6, 0, 4 / 6),
    # 4/5 scored once at c3c9828a (server-tracker threads the platform or the hardware decides: platform 2/3,
    # orchestrator 2/2), no empty answer, the healthy log not flagged. The miss: "failed to allocate pinned
    # system memory: all CUDA-capable devices are busy or unavailable" on a host whose NVML found two T4s,
    # read as the harmless CPU-host line, then "failed to enable peer access" as the fallback (labelled
    # cuda-driver-mismatch); fixed by class (test_diagnosis_heldout80_81_classes.py).
    "heldout81": BlindSet(5, 1, 4 / 5),
    # 4/4 scored once at 8732b428 (the LLM backends' threads: container 1/1, platform 1/1, core 1/1, backend
    # 1/1), no empty answer, the healthy log not flagged.
    "heldout82": BlindSet(4, 1, 4 / 4),
    # 0/1 scored once at 0ab729af (Chinese-language pages: container 0/1), one empty answer, no healthy log:
    # pynvml's "NVML Shared Library Not Found" alone, labelled cuda-driver-mismatch. Fixed by class (NVML's
    # codes as pynvml raises them: library_errors.yaml, group nvml).
    "heldout83": BlindSet(1, 0, 0 / 1),
    # 1/2 scored once at 93448470 (the triton-inference-server organization's trackers other than the
    # server's: backend 1/2), no empty answer, no healthy log. The miss: TensorRT-LLM's NCCL "internal error"
    # then glibc's "double free or corruption" and "Signal: Aborted (6)", labelled server-crashed, read as
    # llm-backend-config. Fixed by class (test_diagnosis_heldout83_98_classes.py).
    "heldout87": BlindSet(2, 0, 1 / 2),
    # 2/3 scored once at 1bb83d51 (web pages and product troubleshooting pages: orchestrator 1/1, core 1/1,
    # backend 0/1), no empty answer, no healthy log. The miss: NIM for LLMs' "Missing HuggingFace
    # configuration file named config.json", labelled model-file-missing, read as unknown-load-failure; fixed
    # by class (test_diagnosis_heldout83_98_classes.py).
    "heldout84": BlindSet(3, 0, 2 / 3),
    # 6/6 scored once at 18c435a4 (trackers of projects that use Triton: backend 3/3, core 1/1, platform 1/1,
    # container 1/1), no empty answer, the healthy log not flagged.
    "heldout86": BlindSet(6, 1, 6 / 6),
    # 6/10 scored once at e389bf80 (the server tracker's feature families: core 5/8, container 1/2), one empty
    # answer (server-5150, a model name not unique across repositories), no healthy log (SPLIT.md). Three
    # fixed by class (test_diagnosis_heldout83_98_classes.py); left: a warm-up sample's data file of the wrong
    # size, labelled the fallback (no page named warm-up), read as config-parse-error (inventory r20-warmup,
    # whose page now names it).
    "heldout88": BlindSet(
        10, 0, 6 / 10, frozenset({"server-1796-2.0.0-warmup-input-data-file-png-wrong-byte-size"})
    ),
    # 2/5 scored once at 38043407 (the code corpus, NIM and Kubernetes layers: orchestrator 2/2, platform
    # 0/3), no empty answer, the healthy log flagged (as gpu-out-of-memory). The misses: NIM for LLMs' profile
    # selector finding no runnable profile, read as unknown-load-failure (SPLIT.md). All fixed by class, the
    # false alarm too (test_diagnosis_heldout83_98_classes.py).
    "heldout85": BlindSet(5, 1, 2 / 5),
    # 0/1 scored once at d0160228 (the server tracker from thread 7500: backend 0/1), no empty answer, the
    # healthy log not flagged. The miss: a conda-pack archive with hard links refused ("archive_write_header()
    # failed with error code = -25 ... Hard-link tar", cut there), labelled python-module-missing, read as the
    # fallback; fixed by class (inventory py-env-archive-extract: every libarchive refusal of pb_env.cc).
    "heldout89": BlindSet(1, 1, 0 / 1),
    # Healthy starts only (one log), not flagged, scored once at f22f1ccf.
    "heldout90": BlindSet(0, 1, 0.0),
    # 2/2 scored once at 70ef0c01 (forums, Q&A sites, gists and discussions: backend 1/1, core 1/1), no empty
    # answer, the healthy log not flagged.
    "heldout91": BlindSet(2, 1, 2 / 2),
    # 8/10 scored once at d28146e2 (Kubernetes-side trackers: orchestrator 8/9, container 0/1), no empty
    # answer, no healthy log. The misses: vLLM pods crash-looping ("No platform detected") and evicted for
    # ephemeral storage, each read as llm-backend-config (SPLIT.md); both fixed by class (a container named
    # after vLLM, kubectl's "Defaulted container" note, vLLM's "No platform detected").
    "heldout92": BlindSet(10, 0, 8 / 10),
    # 9/12 scored once at b47f8071 (LLM-serving trackers around Triton's LLM backends: platform 2/2, container
    # 2/2, backend 5/8), no empty answer, neither healthy log flagged (SPLIT.md). All three misses fixed by
    # class (test_diagnosis_heldout83_98_classes.py).
    "heldout93": BlindSet(12, 2, 9 / 12),
    # 15/17 scored once at cc1399fe (the GPU container stack around model-server containers: platform 3/3,
    # container 12/14), no empty answer, no healthy log (SPLIT.md); 13/15 once its copies of heldout93's
    # bring-llms-to-nim-7 and nim-anywhere-4 (hits in both) were dropped. Both misses fixed by class
    # (test_diagnosis_heldout83_98_classes.py: vLLM's no-platform symptom yields to the loader's libcuda text;
    # a CRI runtime without the nvidia handler).
    "heldout94": BlindSet(15, 0, 13 / 15),
    # 7/16 scored once at e46a32d4 (ai-dynamo/dynamo's tracker: core 1/5, orchestrator 2/3, platform 1/2,
    # backend 2/5, container 1/1), no empty answer, neither healthy log flagged; the misses are mostly
    # Dynamo's own words (SPLIT.md). Five fixed by class (test_diagnosis_heldout83_98_classes.py); left: two
    # of Dynamo's own option refusals worded as no other program's, a Helm chart's 404, KVBM's allocation on a
    # GB200.
    "heldout95": BlindSet(
        16,
        2,
        7 / 16,
        frozenset(
            {
                "dynamo-101-dynamo-run-echo-full-pass-model-name-or-model-path",
                "dynamo-12372-helm-install-dynamo-platform-ngc-chart-404-not-found",
                "dynamo-5328-kvbm-gb200-pinned-write-combined-alloc-cuda-error-invalid-value",
                "dynamo-847-dynamo-serve-frontend-model-name-cannot-start-with-slash",
            }
        ),
    ),
    # 1/4 scored once at 96a954f7 (NVIDIA's NIM and blueprint trackers: container 1/1, core 0/1, backend 0/1,
    # platform 0/1), one empty answer (cuInit's error 802), no healthy log (SPLIT.md). The empty answer fixed
    # by class (cuInit's failure codes: library_errors.py); two disputed labels left (a NIM hub's "repo file
    # list has not been validated", with no source or answer to decide it; a blueprint's bare exception).
    "heldout96": BlindSet(
        4,
        0,
        1 / 4,
        frozenset(
            {
                "nim-deploy-27-kserve-llm-nim-errors-fetching-files-not-validated",
                "video-search-and-summarization-18-via-server-embedding-generator-gpu-0",
            }
        ),
    ),
    # 7/14 scored once at 19c7ce03 (GPU inference servers' platform and container failures: platform 5/10,
    # container 2/4), two empty answers, none of three healthy logs flagged (SPLIT.md). All seven fixed by
    # class (test_diagnosis_heldout83_98_classes.py).
    "heldout97": BlindSet(14, 3, 7 / 14),
    # 10/12 scored once at 19e09547 (GPU model servers' platform, container and host failures: platform 6/6,
    # backend 3/3, container 1/3), one empty answer, neither healthy log flagged (SPLIT.md). Both fixed by
    # class (Ray's small /dev/shm warning, a warning of shm-too-small; TorchServe's nvidia-smi assertion).
    "heldout98": BlindSet(12, 2, 10 / 12),
    # heldout99-105 scored once at 2396e546 (seven collectors of the thirty-seventh session, SPLIT.md), each
    # at that head and at 7e029092 (before the session's cause-class vocabulary): the same answers at both.
    # 8/8 (speech and audio servers' containers and platforms).
    "heldout99": BlindSet(8, 0, 8 / 8),
    # 12/14 (vision, video analytics and edge: backend 7/8, platform 4/4, container 1/2), one of three
    # healthy logs flagged (TensorRT's own INFO line naming deserializeCudaEngine). All three fixed by class
    # (GDB's no-source note, the hook's unknown driver capability, TensorRT's logger levels).
    "heldout100": BlindSet(14, 3, 12 / 14),
    # 1/1 (cloud providers' samples: a gated Hugging Face repository).
    "heldout101": BlindSet(1, 0, 1 / 1),
    # 0/1 (MLOps platforms: KServe's "No runtime found to support predictor", labelled backend-not-found).
    "heldout102": BlindSet(
        1, 1, 0 / 1, frozenset({"digits-recognizer-kubeflow-9-no-runtime-found-for-tensorflow-predictor"})
    ),
    # A healthy log only (LLM projects deploying through Triton).
    "heldout103": BlindSet(0, 1, 0.0),
    # 1/2 (the Triton organization's sibling trackers), one empty answer (Open MPI's abort banner), now a
    # finding: the fallback, as Open MPI's fatal error handler reads (test_diagnosis_mpi.py); the label
    # (server-crashed) is disputed: the process exits through MPI_Abort, no signal is named.
    "heldout104": BlindSet(
        2, 1, 1 / 2, frozenset({"fastertransformer-backend-59-t5-reload-mpi-init-after-finalize-abort"})
    ),
    # 1/5 (the GPU-sharing and cluster layer: orchestrator 0/1, platform 1/3, container 0/1), three empty
    # answers (a scheduler's Info line, HAMi-core's own ERROR and segfault banner, a RayService status). The
    # three empty answers fixed by class; two disputed labels left (vLLM's memory-profiling assertion,
    # gpu-out-of-memory by its source, labelled the vGPU layer's fault; a RayService status whose cause,
    # NVML failing, is in the thread's text, not in the log: a finding now, the fallback).
    "heldout105": BlindSet(
        5,
        1,
        1 / 5,
        frozenset(
            {
                "hami-1381-vllm-0.9.2-vgpu-index-1-memory-profiling-assertion-host-pid-error",
                "ray-59265-rayservice-llmserver-qwen3-30b-failed-to-start-nvml-zero-gpus",
            }
        ),
    ),
    # Healthy starts only, scored once at 9bce33d2: none of the seven flagged.
    "heldout106": BlindSet(0, 7, 0.0),
    # heldout107-114 scored once at c7c5048c (eight collectors of the session's second round; heldout111 found
    # nothing), each also at 7e029092: the same answers at both heads. No healthy log of the 31 flagged.
    # 11/16 (image-generation and LLM web UIs: platform 5/10, backend 2/2, container 4/4), one empty answer.
    # All but one fixed by class; a bash job report of a SIGKILL (labelled host-resource-exhausted) stays a
    # failure with no page: a script's own kill -9 reads the same.
    "heldout107": BlindSet(
        16,
        4,
        11 / 16,
        frozenset(
            {
                "a1111-11951-webui-sh-killed-loading-sdxl-weights",
            }
        ),
    ),
    # 6/13 (ONNX Runtime, OpenVINO and CTranslate2 in applications: platform 1/6, backend 4/4, container 1/3),
    # two empty answers, fixed by class with two more; left: the hook's initialization error (the driver's
    # page by the runbooks' boundary), OpenCL finding no platform (two labels for one wording).
    "heldout108": BlindSet(
        13,
        2,
        6 / 13,
        frozenset(
            {
                "immich-17448-ml-cuda-nvidia-container-cli-libnvidia-ml-missing",
                "openvino-docker-ci-152-tgl-igpu-cldnn-clgetplatformids-1001",
                "ovms-126-ie-serving-gpu-cldnnplugin-no-opencl-platform",
            }
        ),
    ),
    # 12/16 (WSL2, Windows and macOS hosts: platform 8/10, container 4/5, backend 0/1), one empty answer,
    # fixed by class with one more; left: the hook's WSL initialization error (the driver's page by the
    # boundary), Metal's library failing on an Apple M5.
    "heldout109": BlindSet(
        16,
        2,
        12 / 16,
        frozenset(
            {
                "docker-for-win-14999-desktop-4.54-wsl-no-adapters-found",
                "ollama-15849-apple-m5-metal-library-static-assert",
            }
        ),
    ),
    # 4/7 (HPC container runtimes: container 3/6, platform 1/1), two empty answers, both fixed by class; left:
    # Singularity's --nv failing to make its libs folder.
    "heldout110": BlindSet(
        7,
        1,
        4 / 7,
        frozenset(
            {
                "singularity-1548-osg-cvmfs-tensorflow-gpu-nv-libs-dir-abort",
            }
        ),
    ),
    # 9/14 (TensorRT, Torch-TensorRT and ONNX-TensorRT: backend 9/11, platform 0/3), no empty answer; four
    # fixed by class; left: a plugin not found, whose operator only the answer names.
    "heldout112": BlindSet(
        14,
        3,
        9 / 14,
        frozenset(
            {
                "onnx-tensorrt-800-trtexec-8-0-round-op-plugin-not-found",
            }
        ),
    ),
    # Healthy starts of GPU model servers other than Triton only: none of the sixteen flagged.
    "heldout113": BlindSet(0, 16, 0.0),
    # 3/11 (NVR, home-lab and edge detection servers: backend 1/4, container 2/3, platform 0/4), three empty
    # answers, fixed by class with two more; left: Myelin's cuBLASLt query, a library file too short (a
    # finding now, no page), darknet's cuDNN check on a Kepler card.
    "heldout114": BlindSet(
        11,
        3,
        3 / 11,
        frozenset(
            {
                "deepstream-lpr-app-19-ds6.0-base-image-myelin-cublaslt-version-query-failed",
                "jetson-inference-1061-docker-segnet-console-libnvinfer7-file-too-short",
                "viseron-591-darknet-quadro-k5000-cudnn-check-error-failed-to-load",
            }
        ),
    ),
    # heldout115-120 scored once at f1ee15f1 (six collectors of the session's third round), each also at
    # 7e029092: the same answers at both heads. None of the eleven healthy logs flagged. 9/11 (vLLM's
    # trackers: backend 4/5, platform 2/3, container 3/3), one empty answer; fixed by class with one more;
    # left: a Python import's libcudart.so.12 missing (python-shared-library-missing by its page's Meaning,
    # labelled the library's version).
    "heldout115": BlindSet(
        11,
        3,
        9 / 11,
        frozenset(
            {
                "vllm-1738-vllm-0-2-2-import-libcudart-so-12-missing",
            }
        ),
    ),
    # 11/16 (llama.cpp, Ollama, LocalAI, llama-cpp-python, llamafile, RamaLama: platform 10/13, container 0/2,
    # backend 1/1), three empty answers; all three fixed by class with one more; left: CUDA's error 304 (no
    # page: seccomp by the poster's fix) and a runner killed by a signal (a finding, no page).
    "heldout116": BlindSet(
        16,
        2,
        11 / 16,
        frozenset(
            {
                "llama-cpp-python-645-cuda-simple-docker-error-304-seccomp",
                "ollama-9685-jetson-orin-gemma3-27b-runner-signal-killed",
            }
        ),
    ),
    # 3/6 (Hugging Face serving at GPU start-up: platform 1/4, container 1/1, backend 1/1), one empty answer;
    # left as they were: a kernel symbol not found, TGI's flash-attention refusal on a V100, and the poster's
    # own words "Illegal instructions" (the empty answer: no program's line).
    "heldout117": BlindSet(
        6,
        0,
        3 / 6,
        frozenset(
            {
                "candle-353-rtx-2080-ti-sm75-named-symbol-not-found-cast-f32-bf16",
                "text-embeddings-inference-179-router-built-on-gha-runner-illegal-instruction-on-intel-m1",
                "text-generation-inference-686-tesla-v100-sharded-llama-requires-flash-attention",
            }
        ),
        frozenset(
            {
                "text-embeddings-inference-179-router-built-on-gha-runner-illegal-instruction-on-intel-m1",
            }
        ),
    ),
    # 2/8 (Kubernetes LLM-serving platforms: core 1/4, backend 0/2, platform 1/1, orchestrator 0/1), two empty
    # answers; both empty answers and one more fixed by class; left: an engine attribute error, NVSHMEM's
    # topology failure, GKE Warden's refusal read from a W line naming the vllm container.
    "heldout118": BlindSet(
        8,
        1,
        2 / 8,
        frozenset(
            {
                "kubeai-533-vllm-0-8-3-llama3-2-columnparallellinear-no-input-scale",
                "llm-d-pr-675-wide-ep-prefill-nvshmem-detect-topo-failed-efa",
                "substratusai-helm-8-vllm-chart-gke-autopilot-warden-gpu-type-denied",
            }
        ),
    ),
    # 1/2 (the server tracker from 8000, tensorrtllm_backend from 600: core 0/1, backend 1/1), one empty
    # answer; the empty answer fixed by class (the S3 client's s2n_init).
    "heldout119": BlindSet(
        2,
        0,
        1 / 2,
    ),
    # Healthy Triton starts only (documentation excerpts): none of the five flagged.
    "heldout120": BlindSet(0, 5, 0.0),
    # 15/18 at first score (GPU framework libraries at import and initialisation: platform 5/6, backend 7/8,
    # container 3/4), no empty answer; the same at a18804dd (before the worded last resort).
    "heldout121": BlindSet(
        18,
        2,
        15 / 18,
        frozenset(
            {
                "max-weather-forecaster-31-docker-run-tensorflow-illegal-instruction-no-avx",
                "mxnet-20279-mxnet-cu112-import-libnvrtc-libcusolver-libcudnn-missing",
                "numba-5303-docker-image-cuinit-unknown-cuda-error",
            }
        ),
    ),
    # 9/14 at first score (GPU kernel and extension libraries: backend 8/10, platform 1/4), no empty answer;
    # 7/14 with two empty answers at a18804dd: the worded last resort answered both, right.
    "heldout122": BlindSet(
        14,
        2,
        9 / 14,
        frozenset(
            {
                "autogptq-403-auto-gptq-0.5.0-windows-exllama-kernels-dll-load-failed",
                "bitsandbytes-118-tesla-p40-load-in-8bit-int8-matmul-unsupported-assertion",
                "bitsandbytes-1199-colab-t4-libcusparse-so-11-cuda-setup-failed",
                "flash-attention-1230-nvidia-t1000-turing-flash-attention-2-ampere-only",
                "triton-lang-8539-dgx-spark-sm-121a-bundled-ptxas-gpu-name-not-defined",
            }
        ),
    ),
    # 9/23 at first score (the driver and kernel-module layer: platform 5/19, orchestrator 4/4), no empty
    # answer; 9/23 with seven empty answers at a18804dd (the worded last resort answered them, none right).
    "heldout123": BlindSet(
        23,
        1,
        9 / 23,
        frozenset(
            {
                "amazon-ecs-agent-2424-gpu-ami-on-c5-nvidia-gpu-manager-nvml-init-fails",
                "amazon-ecs-ami-256-al2-gpu-ami-persistenced-fails-nvrm-api-mismatch",
                "compute-gpu-installation-33-gcp-debian11-kernel-6.1-driver-build-fails",
                "gpu-burn-92-h100-sxm-system-not-yet-initialized-terminate",
                "gpu-operator-1142-rtx3090-secure-boot-unsigned-module-load-not-permitted",
                "gpu-operator-266-openshift-driver-container-module-not-signed",
                "gpu-operator-8-driver-container-dkms-conf-missing-nvidia-ko-not-loaded",
                "nvidia-docker-182-service-fails-nvrm-api-mismatch-after-driver-upgrade",
                "nvtrust-55-h100-passthrough-vm-gpu-not-supported-by-550-driver",
                "ollama-1083-v100-cuda-error-3-initialization-error-llama-runner-terminated",
                "ollama-5567-a100-docker-cuda-driver-library-init-failure-802",
                "ollama-6647-gentoo-after-sleep-cudart-init-failure-999",
                "open-gpu-kernel-modules-1151-rtx5090-xid-79-gpu-fallen-off-the-bus",
                "open-gpu-kernel-modules-789-rtx3090-rminitadapter-gsp-firmware-gfw-boot",
            }
        ),
    ),
    # 15/19 at first score (managed Kubernetes GPU nodes and cloud launchers: platform 5/6, container 6/8,
    # orchestrator 4/5), one empty answer; 14/19 with four empty answers at a18804dd.
    "heldout124": BlindSet(
        19,
        0,
        15 / 19,
        frozenset(
            {
                "amazon-eks-ami-1817-al2023-standard-ami-device-plugin-no-libnvidia-ml",
                "karpenter-provider-aws-5974-g4dn-containerd-misconfigured-device-plugin-platform-detection",
                "kubernetes-engine-samples-1581-gke-tgi-llama3-70b-evicted-ephemeral-storage",
                "nomad-device-nvidia-48-docker-task-requested-runtime-nvidia-not-found",
            }
        ),
        frozenset(
            {
                "kubernetes-engine-samples-1581-gke-tgi-llama3-70b-evicted-ephemeral-storage",
            }
        ),
    ),
    # 6/13 at first score (LLM engines not yet used: backend 5/9, platform 0/2, container 1/2), no empty
    # answer, two healthy FastChat controller logs flagged; at a18804dd the same with one empty answer.
    "heldout125": BlindSet(
        13,
        3,
        6 / 13,
        frozenset(
            {
                "deepspeed-mii-258-mistral-multi-gpu-server-return-code-minus-9",
                "lightllm-1029-v100-sm70-triton-ptxas-bf16-requires-sm80",
                "lightllm-37-llama-7b-tokenizer-class-llamatokenizer-does-not-exist",
                "mistralrs-478-gguf-iq2-m-unknown-dtype-for-tensor",
                "mistralrs-596-cuda-86-image-unable-to-load-cuda-shared-library",
                "mlc-llm-2838-llama-num-kv-heads-not-divisible-by-tensor-parallel-shards",
                "mlc-llm-3024-qwen-engine-insufficient-gpu-memory-weights-plus-temp-buffer",
            }
        ),
        frozenset(),
        frozenset(
            {
                "healthy-fastchat-2502-controller-baichuan-7b-worker-registered",
                "healthy-fastchat-589-controller-vicuna-13b-worker-registered",
            }
        ),
    ),
    # 9/18 at first score (classic model servers: core 1/5, backend 6/9, platform 2/2, orchestrator 0/1,
    # container 0/1), one empty answer; 9/18 with three empty answers at a18804dd.
    "heldout126": BlindSet(
        18,
        2,
        9 / 18,
        frozenset(
            {
                "bentoml-4634-class-service-serve-grpc-not-supported",
                "kflab-48-kubeflow-tf-serving-mnist-base-path-mnt-export-missing",
                "kserve-1942-sklearnserver-pvc-pickle-no-extension-missing-model-file",
                "kserve-4077-mlserver-mlflow-runtime-unexpected-keyword-required",
                "mlserver-1401-huggingface-example-grpc-8081-bind-failed",
                "seldon-core-4767-v2-mlflow-model-failed-to-schedule-no-server",
                "tf-serving-1299-nightly-gpu-nvidia-container-cli-requirement-invalid-expression",
                "tf-serving-1562-warmup-requests-not-tfrecord-data-loss",
                "tf-serving-411-fifoqueuev2-op-not-registered",
            }
        ),
        frozenset(
            {
                "kserve-1942-sklearnserver-pvc-pickle-no-extension-missing-model-file",
            }
        ),
    ),
    # 5/11 at first score (NVIDIA domain SDKs embedding Triton or TensorRT: backend 3/8, platform 1/2,
    # container 1/1), no empty answer; 4/11 with two empty answers at a18804dd.
    "heldout127": BlindSet(
        11,
        2,
        5 / 11,
        frozenset(
            {
                "deepstream-tao-apps-16-frcnn-failed-to-open-tlt-encoded-model-file",
                "deepstream-tao-apps-24-yolov3-tx2-uff-batchtileplugin-unsupported-needs-trt-oss",
                "face-mask-detection-16-etlt-wrong-key-uffparser-could-not-read-buffer",
                "holohub-642-byom-inference-op-failed-to-build-trt-engine-file-not-root",
                "isaac-ros-cli-22-tensorrt-10.13-target-gpu-sm87-not-supported-orin",
                "monai-deploy-app-sdk-461-holoscan-graphs-import-libcudart-so-11-missing",
            }
        ),
    ),
    # Healthy starts of model servers other than Triton only: none of the fourteen flagged.
    "heldout128": BlindSet(0, 14, 0.0),
    # 8/12 at first score, at d5232ace (MLPerf harnesses and GPU CI runners: platform 4/6, container 2/4,
    # backend 2/2), no empty answer.
    "heldout129": BlindSet(
        12,
        2,
        8 / 12,
        frozenset(
            {
                "iree-17661-a100-runner-image-pull-no-space-left",
                "mlcommons-inference-1840-intel-retinanet-docker-build-openimages-killed",
                "sglang-omni-510-ci-runner-nvidia-persistenced-socket-missing-driver-mismatch",
                "tlcpack-186-conda-gpu-nightly-image-pull-no-space-left",
            }
        ),
    ),
    # 2/11 at first score, at d5232ace (desktop and local AI apps (Jan, Cortex, LM Studio, GPT4All): backend
    # 2/6, core 0/1, platform 0/4), no empty answer.
    "heldout130": BlindSet(
        11,
        2,
        2 / 11,
        frozenset(
            {
                "cortex-cpp-133-nitro-0.1.8-gguf-v1-no-longer-supported-exits",
                "cortex-cpp-1439-models-import-relative-path-gguf-failed-to-open-empty",
                "cortex-cpp-45-nitro-loads-pytorch-model-bin-invalid-gguf-magic",
                "jan-2111-nitro-exited-3221225501-cpu-without-avx",
                "jan-2490-windows-nitro-exited-3221225781-dll-not-found",
                "jan-2729-tesla-p40-xeon-e5-2696-v2-nitro-avx2-illegal-instruction",
                "jan-4149-jan-beta-cortex-llamacpp-engine-dll-cuda-toolkit-missing",
                "jan-4971-nightly-llama-cpp-engine-not-installed-engine-dll-not-found",
                "lms-68-lm-studio-0.2.28-done-getting-tensors-wrong-number-needs-newer-llama-cpp",
            }
        ),
    ),
    # 12/17 at first score, at d5232ace (autonomous driving and robotics stacks: backend 7/9, container 2/4,
    # platform 2/3, core 1/1), no empty answer.
    "heldout131": BlindSet(
        17,
        2,
        12 / 17,
        frozenset(
            {
                "apollo-6574-dev-start-nvidia-container-cli-no-cuda-capable-device",
                "apollo-7130-dev-start-nvidia-driver-volume-create-error",
                "autoware-universe-6461-lidar-centerpoint-not-compiled-for-sm-89",
                "lidar-ai-solution-62-centerpoint-parse-onnx-failed-partial-download",
                "ros-deep-learning-50-ros2-detectnet-onnx-empty-input-binding",
            }
        ),
    ),
    # 5/9 at first score, at d5232ace (vector search and embedding services with GPU inference: platform 3/5,
    # backend 2/4), no empty answer.
    "heldout132": BlindSet(
        9,
        1,
        5 / 9,
        frozenset(
            {
                "fastembed-412-jina-colbert-v2-cuda-libcublaslt-so-11-missing",
                "milvus-1124-v0.6.0-source-build-cuda-error-35-invalid-gpu-resource",
                "milvus-36894-v2.4.12-gpu-build-no-gpu-raft-cuda-error-terminate",
                "ml-commons-3204-os-2.18-llama-3.2-1b-onnx-model-cannot-be-loaded-old-onnxruntime",
            }
        ),
    ),
    # 14/19 at first score, at d5232ace (scientific GPU containers: backend 5/6, container 6/8, platform 3/5),
    # 1 empty answer.
    "heldout133": BlindSet(
        19,
        3,
        14 / 19,
        frozenset(
            {
                "alphafold-425-docker-run-alphafold-killed-reduced-dbs",
                "alphafold-816-docker-run-alphafold-py-permission-denied",
                "alphafold3-354-run-alphafold-killed-after-jackhmmer-more-ram",
                "cactus-1343-gpu-image-nvidia-driver-not-detected-entrypoint-exec",
                "colabfold-63-notebook-params-model-1-ptm-npz-not-found",
            }
        ),
        frozenset(
            {
                "alphafold-816-docker-run-alphafold-py-permission-denied",
            }
        ),
    ),
    # 5/9 at first score, at d5232ace (vision inference servers and labelling tools: backend 3/6, container
    # 2/3), no empty answer.
    "heldout134": BlindSet(
        9,
        4,
        5 / 9,
        frozenset(
            {
                "custom-yolov8-cvat-blueprint-5-nuclio-handler-no-module-named-main",
                "cvat-2127-nuclio-faster-rcnn-no-module-named-model-loader",
                "cvat-3629-nuclio-openvino-function-cant-find-python-exe-common-volume",
                "vpf-467-sampleencode-docker-nvenc-library-not-found",
            }
        ),
    ),
    # 5/8 at first score, at d5232ace (the server tracker, failures in the layers around Triton: container
    # 5/7, platform 0/1), no empty answer.
    "heldout135": BlindSet(
        8,
        0,
        5 / 8,
        frozenset(
            {
                "server-3162-20.03-py3-entrypoint-exec-tritonserver-not-found",
                "server-4272-k8s-cpu-pod-libnvidia-ml-file-too-short",
                "server-6373-jetson-agx-23.08-py3-dgpu-image-cuda-status-35",
            }
        ),
    ),
    # Healthy Triton starts from projects that embed it only: none of the 6 flagged.
    "heldout136": BlindSet(0, 6, 0.0),
    # 0/7 at first score, at 625885f3 (OpenVINO Model Server and Intel GPU serving: core 0/6, backend 0/1), 2
    # empty answers.
    "heldout137": BlindSet(
        7,
        1,
        0 / 7,
        frozenset(
            {
                "ovms-1921-old-image-layout-parameter-wrong-format",
                "ovms-2907-yolov8-version-directory-named-0",
                "ovms-3718-hf-download-without-version-folder-no-version-found",
                "ovms-3917-qwen3-vl-unsupported-vlm-model-type",
                "ovms-471-config-base-path-not-in-container-directory-does-not-exist",
                "ovms-755-config-json-layout-key-rejected-by-schema",
                "ovms-operator-96-helm-hostpath-mounted-at-models-config-says-opt",
            }
        ),
        frozenset(
            {
                "ovms-2907-yolov8-version-directory-named-0",
                "ovms-3718-hf-download-without-version-folder-no-version-found",
            }
        ),
    ),
    # 4/6 at first score, at 625885f3 (DJL Serving and AWS LMI containers: backend 2/3, platform 1/2, core
    # 1/1), no empty answer.
    "heldout138": BlindSet(
        6,
        0,
        4 / 6,
        frozenset(
            {
                "djl-2117-jna-native-load-nosuchmethoderror-engine-start",
                "djl-2372-asmjit-dll-cant-find-dependent-libraries-windows",
            }
        ),
    ),
    # 2/5 at first score, at 625885f3 (serverless GPU platforms: core 0/1, container 1/1, orchestrator 0/1,
    # platform 1/1, backend 0/1), no empty answer.
    "heldout139": BlindSet(
        5,
        1,
        2 / 5,
        frozenset(
            {
                "bentoml-sagemaker-deploy-53-no-module-named-sagemaker-service",
                "modal-examples-1154-vllm-runner-initializing-too-long-300-seconds",
                "truss-examples-87-local-docker-mistral-exception-while-loading-model",
            }
        ),
    ),
    # 7/12 at first score, at 625885f3 (speech servers outside Triton: backend 1/3, platform 5/6, container
    # 1/2, core 0/1), no empty answer.
    "heldout140": BlindSet(
        12,
        3,
        7 / 12,
        frozenset(
            {
                "coqui-tts-2716-tts-server-tortoise-docker-config-path-none",
                "speaches-464-cuda-image-segfault-libnvidia-ptxjitcompiler",
                "whisper-asr-webservice-264-asr-engine-env-typo-unsupported",
                "whisper-asr-webservice-44-macos-nvidia-container-cli-libnvidia-ml",
                "whisperlive-209-run-server-unexpected-keyword-backend",
            }
        ),
    ),
    # 10/14 at first score, at 625885f3 (notebook and dev environments on GPUs: platform 3/4, container 4/7,
    # orchestrator 3/3), one empty answer.
    "heldout141": BlindSet(
        14,
        2,
        10 / 14,
        frozenset(
            {
                "data-science-stack-7-run-jupyter-nvidia-smi-not-found-max-gpus-0",
                "kubeflow-2522-notebook-fastai-dataloader-unable-to-write-torch-shm-file",
                "kubeflow-3357-tensorflow-2-0-0a-notebook-gpu-libcublas-10-0-missing",
                "workbench-sdxl-customization-7-ai-workbench-pytorch-base-register-layer-no-space",
            }
        ),
        frozenset(
            {
                "workbench-sdxl-customization-7-ai-workbench-pytorch-base-register-layer-no-space",
            }
        ),
    ),
    # 16/23 at first score, at 625885f3 (ONNX Runtime's tracker and its bindings at GPU provider load: backend
    # 12/19, platform 4/4), no empty answer.
    "heldout142": BlindSet(
        23,
        4,
        16 / 23,
        frozenset(
            {
                "fooocus-inswapper-25-tensorrt-libraries-missing-then-cuda-loadlibrary-126",
                "onnxruntime-17394-trt-ep-loadlibrary-126-then-cuda-ep-loadlibrary-126",
                "onnxruntime-20571-csharp-nuget-1-16-cuda-12-2-loadlibrary-126",
                "onnxruntime-21049-cuda-12-4-with-ort-gpu-for-cuda-11-8-cuda-path-set",
                "onnxruntime-22491-cpp-loadlibrary-126-providers-cuda-in-system32",
                "onnxruntime-8283-java-1-8-addcuda-failed-to-load-shared-library",
                "onnxstack-140-csharp-stable-diffusion-cuda-loadlibrary-126",
            }
        ),
    ),
    # 3/6 at first score, at 625885f3 (PyTorch-ecosystem serving and optimisation toolkits: platform 0/2, core
    # 1/1, backend 2/3), no empty answer.
    "heldout143": BlindSet(
        6,
        3,
        3 / 6,
        frozenset(
            {
                "gpt-fast-124-rtx2080ti-int4-quantize-named-symbol-not-found",
                "model-optimizer-70-rtx-a6000-fp8-qdq-trtexec-build-fails",
                "torchchat-1357-aoti-package-llama3-2-1b-zip-archive-invalid-header",
            }
        ),
    ),
    # Healthy starts of this round's servers only (625885f3): 1 of 9 flagged (DJL Serving's log4j Permission
    # denied lines).
    "heldout144": BlindSet(
        0,
        9,
        0.0,
        frozenset(),
        frozenset(),
        frozenset(
            {
                "healthy-djl-serving-pr-2879-lmi-vllm-tp4-two-workers-log4j-permission-noise-bind",
            }
        ),
    ),
}
"""Figures, labels and every miss: tests/data/logs/SPLIT.md and bench/RESULTS.md."""

BLIND_LABEL_SUPERSEDED: dict[str, dict[str, str]] = {
    # Labelled the fallback because no page covered a start-up setting the server refuses (each log's own
    # note); server-option-invalid is that page: Vertex AI's default-model rule, an unknown flag. The
    # labels stay as they were written; what the new page answers is pinned here.
    "heldout18": {"pytriton-45": RUNBOOK_SERVER_OPTION_INVALID},
    "heldout19": {
        "clearml-serving-88": RUNBOOK_SERVER_OPTION_INVALID,
        "fauxpilot-226": RUNBOOK_SERVER_CRASHED,
        # Labelled the fallback because no page covered a pod the API server refused (its note: the SCC
        # rejects the image's user 1000); pod-admission-refused is that page (diag43, 2026-12-07).
        "seldon-core-3019": RUNBOOK_POD_ADMISSION_REFUSED,
    },
    # Labelled the fallback because no page covered a load request refused outside explicit mode (the
    # log's own note says so); model-control-refused is that page.
    "heldout15": {"model-analyzer-130": RUNBOOK_MODEL_CONTROL_REFUSED},
    # Labelled the fallback because no page covered a process that died on a signal (each log's note: "no
    # page covers a backend segfault", "a crash ... which no runbook covers"); server-crashed is that page.
    "heldout21": {
        "hugectr-334": RUNBOOK_SERVER_CRASHED,
        "hugectr-440": RUNBOOK_SERVER_CRASHED,
        "qanything-60": RUNBOOK_SERVER_CRASHED,
    },
    "heldout22": {"gitcode-f1d99a9f": RUNBOOK_SERVER_CRASHED},
    "heldout28": {"qwen-tensorrt-llm-60": RUNBOOK_SERVER_CRASHED},
    "heldout29": {"python-backend-pr-188": RUNBOOK_SERVER_CRASHED},
    "heldout42": {"custom-trt-plugin-ld-preload-segfault": RUNBOOK_SERVER_CRASHED},
    # Collected on 2026-12-02, before server-crashed existed (12-04): Triton's signal-handler stack of an
    # abort (frame 2 `abort`, an uncaught exception) with no cause named, labelled the fallback. Once the
    # handler's stack reads as a crash without its "Signal (6) received." line (heldout68's class),
    # server-crashed is the page its Meaning names for it.
    "heldout20": {"fastertransformer-backend-77": RUNBOOK_SERVER_CRASHED},
    "heldout23": {"morpheus-259": RUNBOOK_SERVER_CRASHED},
    # Collected on 2026-12-02 and labelled the fallback ("no page covers the cause"): a packed Python
    # environment libarchive could not unpack. python-module-missing's Meaning names an EXECUTION_ENV_PATH
    # archive that cannot be unpacked since 2026-12-03, and pb_env.cc's every libarchive refusal reads as that
    # page since heldout89 (inventory py-env-archive-extract).
    "heldout16": {"sagemaker-examples-3780": RUNBOOK_PYTHON_MODULE_MISSING},
}


@pytest.mark.parametrize("name", sorted(BLIND_SETS))
def test_blind_set_top1_measured_once(name: str) -> None:
    blind = BLIND_SETS[name]
    failed, healthy = _layered(name)
    score = accuracy.score(failed)
    superseded = BLIND_LABEL_SUPERSEDED.get(name, {})
    assert (score.cases, len(healthy)) == (blind.failures, blind.healthy)
    # A superseded label answered by the page that replaced the fallback counts as it was measured: a hit.
    answered = sum(superseded.get(miss) == got for miss, _want, got in score.misses)
    # A set of healthy logs only (heldout55) has no top-1 figure: only its healthy logs are checked.
    assert score.cases == 0 or (score.hits + answered) / score.cases >= blind.top1_at_least, score.misses
    misses = {miss: got for miss, _want, got in score.misses}
    assert set(misses) <= blind.known_misses | set(superseded)
    assert all(misses[m] == superseded[m] for m in misses.keys() & superseded.keys()), misses
    empty = {miss for miss, _want, got in score.misses if got == "(no finding)"}
    assert empty <= blind.known_empty
    assert {case.name for case in healthy if accuracy.has_failure(case)} <= blind.known_flagged


def test_heldout10_misses_as_development_cases() -> None:
    """Round 7 fixed heldout10's misses by class (a status cell alone, the summary inside prose, dmlc's
    Check failed and Treelite's ill-formed file, gRPC client codes, a poll-mode refusal answered by
    another server, no CUDA device where a GPU backend runs, ONNX Runtime's external data, CUDA's
    invalid device function, glibc's static TLS): every failure log gets a finding, all but the
    symptom-only paste land on their label, and no healthy log is flagged."""
    failed, healthy = _layered("heldout10")
    misses = {name: got for name, _want, got in accuracy.score(failed).misses}
    assert misses == {"clearml-serving-22": RUNBOOK_UNKNOWN_LOAD_FAILURE}
    assert not any(accuracy.has_failure(case) for case in healthy)


def test_heldout14_misses_as_development_cases() -> None:
    """Round 11 fixed heldout14's misses by class (core's TablePrinter wrapping and cutting the status
    cell, a Python exception in a Python-backend status, TensorRT's bare plugin-deserialization lines,
    a storage initializer refusing a URI scheme, a traceback the DALI backend recovered from): what is
    left are the two disputed labels (a clean start labelled by its thread's probe kill; a TensorRT-LLM
    config.json key labelled otherwise in heldout11), and no healthy log is flagged."""
    failed, healthy = _layered("heldout14")
    misses = {name: got for name, _want, got in accuracy.score(failed).misses}
    assert misses == {
        "kserve-1941": "(no finding)",
        "tensorrtllm-backend-118": RUNBOOK_LLM_BACKEND_CONFIG,
    }
    assert not any(accuracy.has_failure(case) for case in healthy)


def test_heldout16_misses_as_development_cases() -> None:
    """Round 13 fixed heldout16's misses by class (crashes as failure signals with the what() text as the
    cause, TensorRT's version wording inside the LLM backend, a warning never outranking an error, CUDA's
    newer-driver error, a bare Python exception in a quoted status, transformers' auto mapping): what is
    left are two disputed labels (SPLIT.md; diag37 read fastdeploy-2003's FastDeploy message from its
    source), and no healthy log is flagged."""
    failed, healthy = _layered("heldout16")
    misses = {name: got for name, _want, got in accuracy.score(failed).misses}
    assert misses == {
        "fastertransformer-backend-121": RUNBOOK_UNKNOWN_LOAD_FAILURE,
        "nim-deploy-18": RUNBOOK_LIBRARY_VERSION_MISMATCH,
        "sagemaker-examples-3780": BLIND_LABEL_SUPERSEDED["heldout16"]["sagemaker-examples-3780"],
    }
    assert not any(accuracy.has_failure(case) for case in healthy)


def test_heldout18_misses_as_development_cases() -> None:
    """Rounds 15 and 16 fixed heldout18's misses by class (levelless failure prose, a wrapped protobuf
    error, the scanner and the line reader agreeing, core's poll error under Model Analyzer, a child tool
    refusing an option, a step's error inside an ensemble): what is left are three disputed labels
    (SPLIT.md, round 16 development), and no healthy log is flagged."""
    failed, healthy = _layered("heldout18")
    misses = {name: got for name, _want, got in accuracy.score(failed).misses}
    assert misses == {
        "azure-docs-75619": RUNBOOK_UNKNOWN_LOAD_FAILURE,
        "fil-backend-368": "(no finding)",
        "modelmesh-serving-216": RUNBOOK_LIBRARY_VERSION_MISMATCH,
        **BLIND_LABEL_SUPERSEDED["heldout18"],
    }
    assert not any(accuracy.has_failure(case) for case in healthy)


HELDOUT8_TOP1_AT_LEAST = 11 / 17
"""heldout8, collected after round 4's rules and scored once (clean): 11/17, four empty answers, one
of four healthy logs flagged (tests/data/logs/SPLIT.md)."""
HELDOUT8_KNOWN_MISSES = {"trtllm-1838"}  # the label conflict below; the other five right since round 5
HELDOUT8_KNOWN_FLAGGED: set[str] = set()  # healthy-qanything-96 not flagged since round 5


def test_heldout8_top1_measured_once() -> None:
    failed, healthy = _layered("heldout8")
    score = accuracy.score(failed)
    assert (score.cases, len(healthy)) == (17, 4)
    assert score.top1 >= HELDOUT8_TOP1_AT_LEAST, score.misses
    assert {name for name, _want, _got in score.misses} <= HELDOUT8_KNOWN_MISSES
    assert {case.name for case in healthy if accuracy.has_failure(case)} <= HELDOUT8_KNOWN_FLAGGED


HELDOUT8_LABEL_CONFLICT = {
    # Labelled trt-engine-incompatible from its message; the same line ("[TensorRT-LLM][ERROR] Assertion
    # failed: Failed to deserialize cuda engine") is labelled llm-backend-config in tune/tensorrtllm-235,
    # heldout/tensorrtllm-424 and heldout3/tensorrtllm-190, and runbooks/llm-backend-config.md quotes it
    # as its own: the labels disagree, not the engine (SPLIT.md, round 5).
    "trtllm-1838": RUNBOOK_LLM_BACKEND_CONFIG,
}


def test_heldout8_misses_as_development_cases() -> None:
    """Round 5 (general failure-signal and cause-class layers) turned heldout8's misses into development
    cases: every failure log gets a finding, all but the one label conflict land on their label, and no
    healthy log is flagged any more (the measured-once figure above stays as history)."""
    failed, healthy = _layered("heldout8")
    misses = {name: got for name, _want, got in accuracy.score(failed).misses}
    assert misses == HELDOUT8_LABEL_CONFLICT
    assert not any(accuracy.has_failure(case) for case in healthy)


HELDOUT7_TOP1_AT_LEAST = 12 / 17
"""heldout7, collected after round 3's rules and scored once (clean): 12/17, two empty answers."""
HELDOUT7_KNOWN_MISSES: set[str] = set()  # the five of the once-scored run were right by round 4


def test_heldout7_top1_measured_once() -> None:
    # History: the clean figure (12/17) measured once at the end of round 3. Its misses became
    # development cases in round 4 (SPLIT.md); this bound only keeps that figure from regressing.
    failed, healthy = _layered("heldout7")
    score = accuracy.score(failed)
    assert (score.cases, len(healthy)) == (17, 4)
    assert score.top1 >= HELDOUT7_TOP1_AT_LEAST, score.misses
    assert {name for name, _want, _got in score.misses} <= HELDOUT7_KNOWN_MISSES
    assert not any(accuracy.has_failure(case) for case in healthy)


def test_heldout7_misses_as_development_cases() -> None:
    """Round 4 fixed the classes behind heldout7's five misses (not a held-out figure any more):
    every failure log's first finding is the label, none is empty, no healthy log is flagged."""
    failed, healthy = _layered("heldout7")
    assert accuracy.score(failed).misses == ()
    assert not any(accuracy.has_failure(case) for case in healthy)


HELDOUT6_TOP1_AT_LEAST = 10 / 11
"""heldout6, collected before round 2's rules and scored once at its end (clean): 10/11."""
HELDOUT6_KNOWN_MISSES: set[str] = set()  # kserve-2260 right since


def test_heldout6_top1_measured_once() -> None:
    failed, healthy = _layered("heldout6")
    score = accuracy.score(failed)
    assert (score.cases, len(healthy)) == (11, 3)
    assert score.top1 >= HELDOUT6_TOP1_AT_LEAST, score.misses
    assert {name for name, _want, _got in score.misses} <= HELDOUT6_KNOWN_MISSES
    assert not any(accuracy.has_failure(case) for case in healthy)


def test_heldout4_after_the_round() -> None:
    # Not a clean figure (the set was looked at mid-round, SPLIT.md); kept so a change that loses
    # one of these logs is seen.
    failed, healthy = _layered("heldout4")
    score = accuracy.score(failed)
    assert score.cases == 15 and score.top1 > HELDOUT4_BEFORE
    assert score.misses == (), score.misses
    assert not any(accuracy.has_failure(case) for case in healthy)


def test_heldout5_top1_measured_once() -> None:
    failed, healthy = _layered("heldout5")
    score = accuracy.score(failed)
    assert score.cases == 12
    assert score.top1 >= HELDOUT5_TOP1_AT_LEAST, score.misses
    misses = {name: got for name, _want, got in score.misses}
    assert set(misses) <= HELDOUT5_KNOWN_MISSES | set(HELDOUT5_LABEL_DISPUTED)
    for name in misses.keys() & HELDOUT5_LABEL_DISPUTED.keys():
        assert misses[name] == HELDOUT5_LABEL_DISPUTED[name], name
    assert not any(accuracy.has_failure(case) for case in healthy)


def test_tune_is_fully_explained() -> None:
    score = accuracy.score(accuracy.load("tune"))
    assert score.misses == (), score.misses


def test_heldout_top1() -> None:
    score = accuracy.score(accuracy.load("heldout"))
    assert score.cases == 30
    assert score.top1 >= HELDOUT_TOP1_AT_LEAST, f"held-out top-1 {score.top1:.1%}; misses: {score.misses}"


@pytest.mark.parametrize("split", accuracy.SPLITS)
def test_no_corpus_log_has_an_empty_answer(split: str) -> None:
    for case in accuracy.load(split):
        assert accuracy.top1(case) != "(no finding)", case.name


def test_clean_subset_is_what_the_split_record_says() -> None:
    names = {case.name for case in accuracy.load("heldout")}
    assert names >= accuracy.SEEN_BEFORE_SPLIT and names >= accuracy.ALREADY_FIXTURES
    gpu_sources = {
        line.split("# source: ", 1)[1].split(" ", 1)[0]
        for path in (accuracy.LOGS / "gpu").glob("*.log")
        for line in path.read_text().splitlines()[:3]
        if line.startswith("# source: ")
    }
    overlap = {c.name for c in accuracy.load("heldout") if c.source in gpu_sources}
    assert overlap <= accuracy.ALREADY_FIXTURES


if __name__ == "__main__":
    for split in accuracy.SPLITS:
        sc = accuracy.score(accuracy.load(split))
        print(f"{split}: top-1 {sc.hits}/{sc.cases} = {sc.top1:.1%}")
        for name, want, got in sc.misses:
            print(f"  miss {name}: expected {want}, got {got}")
    unseen = [
        case
        for case in accuracy.load("heldout")
        if case.name not in accuracy.SEEN_BEFORE_SPLIT | accuracy.ALREADY_FIXTURES
    ]
    sc = accuracy.score(unseen)
    print(
        "heldout never seen before (without the 2 read before the split and 6 already fixtures): "
        f"top-1 {sc.hits}/{sc.cases} = {sc.top1:.1%}"
    )
    sc = accuracy.score(accuracy.load("heldout2"))
    print(f"heldout2: top-1 {sc.hits}/{sc.cases} = {sc.top1:.1%}")
    for name, want, got in sc.misses:
        print(f"  miss {name}: expected {want}, got {got}")
    failed, healthy = _heldout3()
    sc = accuracy.score(failed)
    print(f"heldout3: top-1 {sc.hits}/{sc.cases} = {sc.top1:.1%}")
    for name, want, got in sc.misses:
        print(f"  miss {name}: expected {want}, got {got}")
    print(f"heldout3 healthy logs with a critical finding: {sum(accuracy.has_failure(c) for c in healthy)}")
