"""Pure data: what the layers around Triton say, in their own words, and the runbook each means.

Triton is rarely alone: the NGC image's entrypoint (``/opt/nvidia/nvidia_entrypoint.sh`` and
``/opt/nvidia/entrypoint.d``) checks the driver, the GPU and the CPU before Triton starts and
prints a banner; Kubernetes reports a pod that never ran or keeps restarting in the words of the
kubelet (events ``Back-off restarting failed container``, ``Liveness probe failed``, ``Container
X failed liveness probe, will be restarted``, ``Failed to pull image``), the scheduler's fit and
taint plugins (``0/3 nodes are available: 1 Insufficient nvidia.com/gpu``) and the pod status
reasons (``CrashLoopBackOff``, ``ImagePullBackOff``, ``ErrImagePull``, ``OOMKilled``). Users paste
``kubectl get/describe`` output or ``docker logs`` as "the log". `rules.py` places these rules in
its priority order; ``tests/test_diagnosis_stack.py`` quotes each wording from logs users posted
(``tests/data/logs/dev4/``, never ``heldout4/``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from triton_sre import conventions as c

__all__ = ["RESTART_RULES", "STACK_RULES", "CauseRule", "rx"]


@dataclass(frozen=True, slots=True)
class CauseRule:
    runbook: str
    pattern: re.Pattern[str]
    source: str = "hand"
    """``hand`` for the patterns below, else the inventory entry id the rule comes from."""


def rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{a})" for a in alternatives), re.I)


STACK_RULES: Final[tuple[CauseRule, ...]] = (
    CauseRule(
        c.RUNBOOK_POD_UNSCHEDULABLE,
        rx(
            r"\d+/\d+ nodes are available: [^\n]*(Insufficient|didn't match|untolerated taint|had taint)",
            r"Insufficient nvidia\.com/gpu",
            r"\bFailedScheduling\b",
            r"\bPodScheduled\s+False\b",
        ),
    ),
    CauseRule(
        c.RUNBOOK_IMAGE_PULL_FAILED,
        rx(
            r"\b(ImagePullBackOff|ErrImagePull|ErrImageNeverPull|InvalidImageName)\b",
            r"Failed to pull image",
            r"Back-off pulling image",
            r"manifest (for \S+ )?(not found|unknown)",
            r"pull access denied",
        ),
    ),
    CauseRule(
        c.RUNBOOK_PLATFORM_UNSUPPORTED,
        rx(
            r"Detected NVIDIA [^\n]{0,80}GPU, which is not (yet )?supported",
            r"This container was built for CPUs supporting at least the AVX",
            r"which is lesser than the minimum supported",
        ),
    ),
)

# Kubernetes restarting the container: a probe (a cause of its own), or a crash loop (a symptom:
# any other cause in the same text wins, these come last in the priority order).
RESTART_RULES: Final[tuple[CauseRule, ...]] = (
    CauseRule(
        c.RUNBOOK_POD_PROBE_FAILED,
        rx(r"(Liveness|Startup) probe failed", r"failed (liveness|startup) probe, will be restarted"),
    ),
    CauseRule(
        c.RUNBOOK_POD_CRASH_LOOPING,
        rx(r"\b(Init:)?CrashLoopBackOff\b", r"Back-off restarting failed container"),
    ),
)
