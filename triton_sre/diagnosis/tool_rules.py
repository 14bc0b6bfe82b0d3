"""Pure data: what the tools that drive Triton say when the server or the tool they run refuses them.

Model Analyzer (triton-inference-server/model_analyzer) starts a Triton of its own (``--triton-launch-mode``
local, docker, c_api; ``entrypoint.py``: "Starting a local Triton Server", "Starting a Triton Server using
docker"), writes each model config variant into its output model repository ("Creating model config:
<name>", ``config_generators``), asks the server to load it in explicit mode (``triton/client/client.py``:
"Model <variant> load failed: <error>") and runs perf_analyzer against it (``perf_analyzer/
perf_analyzer.py``: "Running perf_analyzer failed with exit status <n> : <output>"). A failure there is
read in the light of who wrote what: the tool wrote the model's folder just before the load, and the tool
chose the options of the command it ran. Open MPI's mpirun starts TensorRT-LLM's server ranks
(``launch_triton_server.py``): its refusals and a rank's death are read here, its other failure lines are
signals (`signals.SERVER_FAILURE`). `hand_rules.py` places these rules; `rules.py` orders them.
"""

from __future__ import annotations

import re
from typing import Final

from triton_sre import conventions as c
from triton_sre.diagnosis.stack_rules import CauseRule

__all__ = ["CONSOLE_SCRIPT_RUN", "TOOL_RULES"]

# Model Analyzer's own lines (its logger's "[Model Analyzer] " prefix, 1.x on; the older "INFO[client.py:82]
# Model <name> load failed:" layout; the launcher's and the config generator's messages).
_MODEL_ANALYZER = (
    r"\[Model Analyzer\] |\bStarting a (?:local )?Triton Server(?: using docker)?\b"
    r"|\bCreating model config: \S|\bModel \S+ load failed: "
)

# Open MPI's launcher (ORTE's mpirun/orterun up to Open MPI 4.x, PRRTE's prterun in 5.x; mpiexec is the
# same program), which TensorRT-LLM's launch_triton_server.py puts in front of one tritonserver per rank.
_MPI_LAUNCHER = r"(?:mpirun|mpiexec|orterun|prterun|prte)"

# A Python traceback whose first frame is a console script: the launcher pip writes into a bin folder for a
# package's entry point (pip's distlib ScriptMaker template: no .py suffix, a module-level
# ``sys.exit(<main>())``), e.g. ``File "/usr/local/bin/download-to-cache", line 8, in <module>``. A
# program the user or the container's command ran from a shell failed, not a model.py the Python backend's
# stub imports (the stub's frames start in the model's file): python-model-error does not claim it, and
# the cause the paste states beside it (a folder it may not write, a download refused) decides.
CONSOLE_SCRIPT_RUN: Final = r':?[ \t]*\r?\n[^\n]*?\bFile "[^"\n]*/bin/[^"/.\n]+", line \d+, in <module>'

TOOL_RULES: Final[tuple[CauseRule, ...]] = (
    # A load or unload request the server refuses before touching the model, as the caller reports it
    # (tritonclient's InferenceServerException, the HTTP answer's {"error": ...}, a tool quoting it):
    # the model-control API outside explicit mode (core model_repository_manager.cc LoadUnloadModel,
    # UNAVAILABLE / HTTP 503; the same wording in server src/core from r19.06, TRTIS 1.3.0, and in core
    # since the split) and an API or protocol restricted to callers sending a header (server
    # http_server.cc, HTTP 403, r23.11 on; grpc_server.cc, infer_handler.cc, stream_infer_handler.cc, r23.04
    # on), whatever the paste left of the header's quoted name (users blank it out).
    CauseRule(
        c.RUNBOOK_MODEL_CONTROL_REFUSED,
        re.compile(
            r"\bexplicit model load / unload is not allowed if polling is enabled"
            r"|\bThis (?:API|protocol) is restricted, expecting header\b",
            re.I,
        ),
        "core src/model_repository_manager/model_repository_manager.cc (LoadUnloadModel), r19.06 on; server "
        "src/http_server.cc (restricted APIs, r23.11 on) and src/grpc/*.cc (restricted protocols, r23.04 on)",
    ),
    # Core's poll error (model_repository_manager.cc, LoadModel / LoadUnloadModel when Poll() did not poll
    # every named model: "failed to load '<model>', failed to poll from model repository", INTERNAL, r22.06
    # on). Poll() gives up when a repository cannot be listed ("failed to poll model repository '<path>':
    # <why>"), when the model's folder is in none of the repositories ("failed to poll model '<m>': model
    # not found in any model repository"), or is in two. Under Model Analyzer the folder exists: the tool
    # wrote it into its output model repository just before asking for the load, so the server polls
    # another path than the one the tool wrote (docker launch mode: an output path that is relative or not
    # mounted at the same path in the server's container; model_analyzer#120, #160, #480, #786, #852).
    CauseRule(
        c.RUNBOOK_REPOSITORY_PATH_INVALID,
        re.compile(
            rf"^(?=[\s\S]*?(?:{_MODEL_ANALYZER}))[\s\S]*?\bfailed to poll from model repository\b", re.I
        ),
        "core src/model_repository_manager/model_repository_manager.cc (Poll, LoadModel); model_analyzer "
        "entrypoint.py, triton/client/client.py, config_generators (the output model repository)",
    ),
    # mpirun refuses to start the ranks: as root without --allow-run-as-root (orterun.c / prte's schizo
    # "<launcher> has detected an attempt to run as root."), or more ranks than the host's slots (help-orte-
    # rmaps-base.txt / PRRTE: "There are not enough slots available in the system to satisfy the <n>
    # slots that were requested by the application"; slots default to the CPU cores the container sees).
    # A start-up setting of the launcher in front of tritonserver, which never ran.
    CauseRule(
        c.RUNBOOK_SERVER_OPTION_INVALID,
        re.compile(
            rf"\b{_MPI_LAUNCHER} has detected an attempt to run as root\b"
            r"|\bThere are not enough slots available in the system to satisfy the \d+",
            re.I,
        ),
        "open-mpi/ompi orte/tools/orterun/orterun.c, orte/mca/rmaps/base/help-orte-rmaps-base.txt (4.x); "
        "openpmix/prrte src/mca/schizo/base, src/mca/rmaps/base/help-prte-rmaps-base.txt (5.x)",
    ),
    # A rank SIGKILLed (signal 9, "Killed"): the kernel's OOM killer while a large engine loads into host
    # memory, as an exit code 137 says elsewhere (ORTE/PRRTE errmgr's "noticed that process rank").
    CauseRule(
        c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
        re.compile(
            rf"\b{_MPI_LAUNCHER} noticed that process rank \d+ with PID \d+ on node \S+"
            r"\s+exited on signal 9\b",
            re.I,
        ),
        "open-mpi/ompi orte/mca/errmgr/base/help-errmgr-base.txt; openpmix/prrte src/mca/errmgr (5.x)",
    ),
    # A tool that runs another one (Model Analyzer running perf_analyzer, perf2bolt running perf) reports
    # the child's exit status and output; a child that refuses an option (getopt_long: "<prog>:
    # unrecognized option '--x'", older glibc with a backquote; git-style parse-options: "error: unknown
    # option `x'"; argparse: "error: unrecognized arguments: --x") was given an option its installed
    # version does not have: the two tools' versions do not match. An option refused by a command a user
    # typed is not this (a typo has no page).
    CauseRule(
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        re.compile(
            r"\b(?:failed with exit (?:status|code)|return code) [1-9]\d*\b[^\n]{0,80}?"
            r"(?:\bunrecognized option\b|\bunknown option\b|\bunrecognized arguments?: )",
            re.I,
        ),
        "model_analyzer perf_analyzer/perf_analyzer.py (the child's exit status and output); glibc "
        "posix/getopt.c, git parse-options.c, CPython argparse (the refusals)",
    ),
)
