"""Pure: the findings of one log weighed against each other, once assembled (`assemble.FindingBuilder`):
which one says why, and which only says what happened.

A warning that names a cause more specific than the failure after it is that failure's root cause; vLLM's
no-platform symptom yields to the driver's own words; the Python stubs' news that the server went away yields
to the failure it exited on; a server abort on a stub's health mutex is that stub's model's failure.
"""

from __future__ import annotations

import re
from dataclasses import replace

from triton_sre import conventions as c
from triton_sre.diagnosis.llm_library_rules import VLLM_NO_PLATFORM
from triton_sre.diagnosis.report import MAX_EVIDENCE, Finding
from triton_sre.diagnosis.rules import RANK
from triton_sre.diagnosis.signals import STUB_DIED, STUB_PARENT_GONE

__all__ = [
    "STUB_DIED_FIX",
    "no_platform_says_why",
    "stub_lock_abort",
    "stubs_saw_the_exit",
    "warnings_as_root_cause",
]

STUB_DIED_FIX = (
    "The stub died without a Python exception: it was killed (the container's memory limit or the host's OOM "
    "killer: check `dmesg` and the pod's last state), crashed in a native library, or lost /dev/shm; give it "
    "memory (or load the models one at a time) before reading model.py."
)
_STUB_DIED = re.compile(STUB_DIED)


def warnings_as_root_cause(final: list[Finding]) -> None:
    """A server-wide warning that names a cause more specific than a failure following it is that
    failure's root cause (Docker's platform-mismatch warning, then the hook cannot mount an x86
    path): it becomes critical and, being earlier, is listed first. Alone it stays a warning."""
    critical = [f for f in final if f.model is None and f.severity == c.IMPACT_CRITICAL and f.evidence]
    for i, f in enumerate(final):
        if f.model is not None or f.severity != c.IMPACT_WARNING or not f.evidence:
            continue
        rank, line = RANK.get(f.runbook, len(RANK)), f.evidence[0].line
        if any(line < g.evidence[0].line and rank < RANK.get(g.runbook, len(RANK)) for g in critical):
            final[i] = replace(f, severity=c.IMPACT_CRITICAL)


_NO_PLATFORM = re.compile(VLLM_NO_PLATFORM)


def no_platform_says_why(final: list[Finding]) -> None:
    """vLLM finding no device platform (gpu-container-runtime: the process sees no GPU) is a symptom. Where
    the log also says why in CUDA's or the loader's words at any level (vLLM's warning ``Failed to import
    from vllm._C with ImportError('libcuda.so.1: cannot open shared object file ...')``), that finding is the
    cause (gpu-container-runtime's "Not this page": the driver's libraries not found, even in a container
    started without the runtime): it becomes critical and the symptom's finding is dropped."""
    symptom = [
        f for f in final
        if f.runbook == c.RUNBOOK_GPU_CONTAINER_RUNTIME and f.model is None and f.evidence
        and all(_NO_PLATFORM.search(e.text) for e in f.evidence)
    ]  # fmt: skip
    why = [i for i, f in enumerate(final) if f.runbook == c.RUNBOOK_CUDA_DRIVER_MISMATCH and f.model is None]
    if not symptom or not why:
        return
    for i in why:
        final[i] = replace(final[i], severity=c.IMPACT_CRITICAL)
    final[:] = [f for f in final if f not in symptom]


_PARENT_GONE = re.compile(STUB_PARENT_GONE)


def stubs_saw_the_exit(final: list[Finding]) -> None:
    """The Python stubs' "Non-graceful termination detected." (signals.STUB_PARENT_GONE) says only that the
    server went away. Beside another critical finding the server exited on that failure (a front end it could
    not start) and the stubs saw it go: their crash finding is dropped. Alone, the server died: it stays."""
    seen = [
        f for f in final
        if f.runbook == c.RUNBOOK_SERVER_CRASHED and f.evidence
        and all(_PARENT_GONE.search(e.text) for e in f.evidence)
    ]  # fmt: skip
    if seen and any(f.severity == c.IMPACT_CRITICAL for f in final if f not in seen):
        final[:] = [f for f in final if f not in seen]


_STUB_LOCK_ABORT = re.compile(r"boost::interprocess::lock_exception")


def stub_lock_abort(found: tuple[Finding, ...], loading: tuple[str, ...]) -> tuple[Finding, ...]:
    """The server aborted on a Python stub's health mutex whose owner died (inventory
    ``py-stub-health-lock-owner-dead``): the stub that exited is the cause. Its model is the one whose
    stub the log already called not healthy (the abort is then more of its evidence), else the one load
    the abort interrupted (``loading``, ``model:version``); with several, the finding names them."""
    abort = next(
        (f for f in found if f.model is None and f.runbook == c.RUNBOOK_PYTHON_MODEL_ERROR
         and f.evidence and _STUB_LOCK_ABORT.search(f.evidence[0].text)),
        None,
    )  # fmt: skip
    if abort is None:
        return found
    rest = [f for f in found if f is not abort]
    fix = f"{STUB_DIED_FIX} {abort.remediation}".strip()
    died = next((f for f in rest if f.model and any(_STUB_DIED.search(e.text) for e in f.evidence)), None)
    if died is not None:
        evidence = (*died.evidence, *abort.evidence)[:MAX_EVIDENCE]
        return tuple(replace(f, evidence=evidence) if f is died else f for f in rest)
    if len(loading) == 1:
        model, _sep, version = loading[0].rpartition(":")
        return (replace(abort, model=model, version=version, remediation=fix), *rest)
    names = ", ".join(loading)
    note = f"It aborted while loading {names}: the stub of one of them exited. " if loading else ""
    return tuple(replace(abort, remediation=f"{note}{fix}") if f is abort else f for f in found)
