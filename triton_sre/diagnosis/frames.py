"""Pure: classify one text by `rules.CAUSE_RULES`, reading a Python traceback by its exception line.

In a traceback the exception line decides and the frames are context (an ``import`` frame, a
library's path): `classify` prefers what the text names without its frames, `from_frames` says when
a runbook came only from frames (weaker evidence than any exception line about the same model).
"""

from __future__ import annotations

import functools
import re

from triton_sre import conventions as c
from triton_sre.diagnosis.backend_rules import STATIC_TLS
from triton_sre.diagnosis.classes import cause_class, without_debugger_notes
from triton_sre.diagnosis.hand_rules import ENTRY_POINT_FRAME
from triton_sre.diagnosis.lineshape import join_hand_wraps
from triton_sre.diagnosis.logparse import STUB_FRAME
from triton_sre.diagnosis.prefilter import fold, required
from triton_sre.diagnosis.rules import CAUSE_RULES
from triton_sre.diagnosis.stack_rules import CauseRule

__all__ = ["FRAME_PATH", "classify", "from_frames"]


# Traceback frames, in the three shapes a Triton log shows them: pybind11's "At:" block (the Python
# stub's error_already_set::what(): "  /path/file.py(36): func"), CPython's own traceback
# ('  File "/path/file.py", line 36, in func' and the source line under it), and the "At:" header.
_FRAME_LINE = re.compile(
    r"^\s*(?:"
    rf"{STUB_FRAME}"
    r"|File \"[^\"\n]+\", line \d+(?:, in \S+)?"
    r"|At:"
    r")\s*$"
)
# A Python exception line: "ValueError: ...", "module.SomeError: ...", "KeyboardInterrupt".
_EXCEPTION_LINE = re.compile(
    r"(?m)^\s*(?:Internal: )?(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b"
)
# A frame in the model's own model.py (pybind11's or CPython's shape), the whole line.
_MODEL_PY_FRAME = re.compile(
    r'(?m)^\s*(?:\S*/)?model\.py\(\d+\): \S+\s*$|^\s*File "[^"\n]*model\.py", line \d+.*$'
)
# tritonclient's exception (tritonclient/utils/__init__.py InferenceServerException, raised by
# raise_error_grpc / raise_error for the server's error), and grpcio's own (grpc/_channel.py
# _InactiveRpcError, "status = StatusCode.X / details = ..."): its message is the server's, not the client's.
_RELAYED = re.compile(r"\bInferenceServerException: |\b_InactiveRpcError: ")
_CPYTHON_FRAME = re.compile(r'^\s*File "[^"\n]+", line \d+')
_LOADER_FAILURE = re.compile(STATIC_TLS)
_PYTHON_GENERIC = (c.RUNBOOK_PYTHON_MODULE_MISSING, c.RUNBOOK_PYTHON_MODEL_ERROR)


@functools.cache
def _plan() -> tuple[dict[str, tuple[str, ...]], tuple[tuple[CauseRule, tuple[frozenset[str], ...]], ...]]:
    """The words some rule requires by their first two characters, and each rule of `CAUSE_RULES` in
    order with the sets of words it requires (`prefilter.required`; derived on first use, not at import)."""
    plan = tuple((rule, required(rule.pattern)) for rule in CAUSE_RULES)
    by_start: dict[str, list[str]] = {}
    for word in sorted({word for _rule, needs in plan for need in needs for word in need}):
        by_start.setdefault(word[:2], []).append(word)
    return {start: tuple(words) for start, words in by_start.items()}, plan


def _present(folded: str, by_start: dict[str, tuple[str, ...]]) -> set[str]:
    """The required words ``folded`` holds: only those starting with one of its character pairs
    are looked for (one-character words are keyed by themselves)."""
    starts = set(map(str.__add__, folded, folded[1:]))
    starts.update(folded)
    return {word for start in starts.intersection(by_start) for word in by_start[start] if word in folded}


# Texts classified by the plain loop before the plan is built (rent, then buy): deriving the plan costs
# ~0.12 s of CPU once and saves ~1.5 ms per text (1.75 -> 0.25 ms, bench/bench_classify.py), so it
# pays for itself after ~80 texts. A triage (a few dozen distinct texts; 70 in bench_triage's plain
# log) never builds it; a fleet exporter's thousands of UNAVAILABLE reasons do, early.
PLAIN_TEXTS = 80
_plain_left = [PLAIN_TEXTS]


def _first_rule(text: str) -> CauseRule | None:
    """The first rule of `CAUSE_RULES` whose pattern finds a match in ``text``: the plain first-match
    loop for the process's first PLAIN_TEXTS texts, then `_planned_first_rule` (the same answer)."""
    if _plain_left[0] > 0:
        _plain_left[0] -= 1
        return next((rule for rule in CAUSE_RULES if rule.pattern.search(text)), None)
    return _planned_first_rule(text)


def _planned_first_rule(text: str) -> CauseRule | None:
    """The first rule of `CAUSE_RULES` whose pattern finds a match in ``text``. A rule is searched only
    when the text holds a word of each set it requires: a rule skipped cannot match (the same first
    rule, sooner)."""
    by_start, plan = _plan()
    present = _present(fold(text), by_start)
    for rule, needs in plan:
        for need in needs:
            if need.isdisjoint(present):
                break
        else:
            if rule.pattern.search(text):
                return rule
    return None


def _first(text: str) -> str | None:
    rule = _first_rule(text)
    return rule.runbook if rule is not None else None


def _without_frames(text: str) -> str | None:
    """``text`` without its traceback frames (None when it has none): the exception lines."""
    if "\n" not in text and not _FRAME_LINE.match(text):
        return None
    kept: list[str] = []
    dropped = False
    skip_source = False
    for line in text.split("\n"):
        if skip_source:
            skip_source = False
            if line.startswith("    ") and not _FRAME_LINE.match(line):
                continue  # the source line CPython prints under a File line
        if _FRAME_LINE.match(line):
            dropped = True
            skip_source = _CPYTHON_FRAME.match(line) is not None
            continue
        kept.append(line)
    return "\n".join(kept) if dropped else None


def classify(text: str) -> str | None:
    """The runbook id of the first rule that claims ``text``; None when no rule does (a text no rule
    claims is read once more with its hand-wrapped lines joined, `lineshape.join_hand_wraps`).

    In a Python traceback the exception line decides and the frames are context: when the text
    without its frames names a cause more specific than a generic Python error, that cause wins over
    anything read from the frames (an ``import`` frame, a library's path). A rule that reads an
    exception together with its frames (`CauseRule.reads_frames`: ENOSPC inside ``multiprocessing`` = a
    full /dev/shm) keeps its place in `PRIORITY`."""
    text = without_debugger_notes(text)
    whole = _first_rule(text)
    if whole is None:
        joined = join_hand_wraps(text)
        return classify(joined) if joined != text else None
    if (
        whole is not None
        and whole.runbook in _PYTHON_GENERIC
        and "static TLS" in text
        and _LOADER_FAILURE.search(text)
    ):
        # The dynamic loader's failure surfacing as a Python ImportError/OSError: the module is there,
        # glibc cannot place its TLS; no page covers it (backend_rules.py).
        return None
    if whole.reads_frames:
        return whole.runbook  # (the frames are the evidence, not context)
    head = _without_frames(text)
    if head is None:
        return whole.runbook
    relayed = _RELAYED.search(head)
    if relayed is not None and not _MODEL_PY_FRAME.search(text):
        # A client relaying the server's error: the server's message decides, the client's frames and its
        # traceback header say nothing of the server (python-model-error is for a model's own code).
        return _first(head[relayed.end() :])
    exception = _first(head)
    if (
        exception in (None, c.RUNBOOK_PYTHON_MODEL_ERROR)
        and _EXCEPTION_LINE.search(head)
        and not whole.pattern.search(_MODEL_PY_FRAME.sub("", text))
    ):
        # Only a frame of the model's own model.py matched (its repository path, e.g. TensorRT-LLM's
        # ``inflight_batcher_llm/preprocessing/1/model.py(35): <module>``): that path says where the
        # model lives, the exception line says what failed: the model's Python code raised.
        return c.RUNBOOK_PYTHON_MODEL_ERROR
    if exception is None or exception == c.RUNBOOK_PYTHON_MODEL_ERROR:
        named = (
            _exception_class(head)
            if whole.runbook == c.RUNBOOK_PYTHON_MODEL_ERROR and not _MODEL_PY_FRAME.search(text)
            else None
        )
        if named is not None:
            return named
        if whole.runbook == c.RUNBOOK_PYTHON_MODEL_ERROR and _host_library_only(text):
            return None  # an application around Triton raised in its own installed code, not a model.py
        if whole.runbook == c.RUNBOOK_PYTHON_MODULE_MISSING and _EXCEPTION_LINE.search(head):
            # The exception line is there and names no import failure: the import frames only say
            # the error was raised while model.py was being imported.
            return c.RUNBOOK_PYTHON_MODEL_ERROR
        return whole.runbook
    return exception


# A frame's file path (CPython's 'File "<path>"' or pybind11's "<path>(N): func").
FRAME_PATH = re.compile(r'(?m)^\s*(?:File "([^"\n]+)", line \d+|(\S+\.py)\(\d+\): \S+\s*$)')
_INSTALLED = re.compile(r"/(?:site|dist)-packages/|/lib/python\d[\d.]*/")


def _host_library_only(text: str) -> bool:
    """True when every frame of a traceback is installed library code (site-/dist-packages, the
    standard library) and none is a model's: the page of a model's Python code ("the model's model.py
    raises") does not fit an application around Triton (a serving framework, a client) that failed in
    its own package; the failure stays unexplained (unknown-load-failure) unless its words name a class."""
    paths = [m[0] or m[1] for m in FRAME_PATH.findall(text)]
    if _ENTRY_POINT_FRAME.search(text):
        return False  # the Python backend called it: a model class, wherever it is installed
    return bool(paths) and all(_INSTALLED.search(path) for path in paths)


# A frame of the Python backend's entry points (the stub calls TritonPythonModel.initialize/execute/
# finalize/auto_complete_config), in the stub's "At:" shape: the code that raised is a Triton model's.
_ENTRY_POINT_FRAME = re.compile(ENTRY_POINT_FRAME)


def _exception_class(head: str) -> str | None:
    """The cause class (classes.py) an exception line names, if any (called outside a model.py).

    A traceback is only how Python reports a failure; when no rule knows the exception's message
    but its words name a class the runbooks define (``RuntimeError: Unable to write to
    NIM_CACHE_PATH (...)``: an unwritable directory), that class says more than "a Python error"."""
    for line in head.split("\n"):
        if _EXCEPTION_LINE.match(line):
            named = cause_class(line)
            if named is not None and named not in _PYTHON_GENERIC:
                return named
    return None


def from_frames(text: str) -> bool:
    """True when ``text``'s runbook comes only from traceback frames (its exception lines name no
    cause): weaker evidence than any exception line, in this text or another one about the model."""
    head = _without_frames(text)
    if head is None:
        return False
    return _first(head) in (None, c.RUNBOOK_PYTHON_MODEL_ERROR) and classify(text) not in (
        None,
        c.RUNBOOK_PYTHON_MODEL_ERROR,
    )
