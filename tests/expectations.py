"""What the tests expect of the sample repository's broken models and of the real server on a CPU host.

Test support, not product: the demo ships the models (triton_sre/demo), the tests know how each
one must fail and be diagnosed.
"""

from __future__ import annotations

from typing import Final

from triton_sre import conventions as c
from triton_sre.demo import BROKEN_INIT, BROKEN_MISSING_MODULE, BROKEN_VERSION_DIR

# What each broken model's failure says: a substring of its repository-index reason, or (for the
# model that never reaches the index) of Triton's log.
BROKEN_CAUSES: Final[dict[str, str]] = {
    BROKEN_MISSING_MODULE: "No module named 'triton_sre_demo_missing_dependency'",
    BROKEN_VERSION_DIR: "at least one version must be available",
    BROKEN_INIT: "RuntimeError: weights file not found",
}
# The runbook each failure should be diagnosed as.
BROKEN_RUNBOOKS: Final[dict[str, str]] = {
    BROKEN_MISSING_MODULE: c.RUNBOOK_PYTHON_MODULE_MISSING,
    BROKEN_VERSION_DIR: c.RUNBOOK_VERSION_DIR_INVALID,
    BROKEN_INIT: c.RUNBOOK_PYTHON_MODEL_ERROR,
}
# Broken models that Triton lists in POST /v2/repository/index as UNAVAILABLE with a reason.
# A model without any integer version folder is not listed at all: only the log tells.
BROKEN_IN_INDEX: Final = (BROKEN_MISSING_MODULE, BROKEN_INIT)
BROKEN_ONLY_IN_LOG: Final = (BROKEN_VERSION_DIR,)

# The load failures a CPU host with only the Python backend can reproduce on the real server
# (the test corpus captures each); the others need a GPU, TensorRT, cloud storage or an LLM backend.
# (A KIND_GPU group on a CPU host is instance-group-invalid: the group does not fit the host.)
CPU_REPRODUCIBLE_LOAD_FAILURES: Final = frozenset(
    {
        c.RUNBOOK_MODEL_FILE_MISSING,
        c.RUNBOOK_VERSION_DIR_INVALID,
        c.RUNBOOK_CONFIG_NAME_MISMATCH,
        c.RUNBOOK_CONFIG_PARSE_ERROR,
        c.RUNBOOK_BACKEND_NOT_FOUND,
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
        c.RUNBOOK_MAX_BATCH_SIZE_UNSUPPORTED,
        c.RUNBOOK_DATATYPE_MISMATCH,
        c.RUNBOOK_PYTHON_MODULE_MISSING,
        c.RUNBOOK_PYTHON_MODEL_ERROR,
        c.RUNBOOK_SHM_TOO_SMALL,
        c.RUNBOOK_ENSEMBLE_DEPENDENCY,
        c.RUNBOOK_BATCHING_CONFIG_INVALID,
        c.RUNBOOK_BACKEND_PLATFORM_MISMATCH,
        c.RUNBOOK_ENSEMBLE_STEP_VERSION,
        c.RUNBOOK_INSTANCE_GROUP_INVALID,
        c.RUNBOOK_REPOSITORY_PATH_INVALID,
        c.RUNBOOK_PYTHON_SHARED_LIBRARY_MISSING,
        c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
        c.RUNBOOK_SERVER_PORT_IN_USE,
        c.RUNBOOK_SERVER_OPTION_INVALID,
        c.RUNBOOK_MODEL_CONTROL_REFUSED,
    }
)
