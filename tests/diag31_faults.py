"""Server-level faults no real-Triton sweep had reached (diag31): cloud repository paths with no credentials
or network, a second repository that does not exist, the backend directory, the memory-pool, SSL, trace,
header-forwarding and thread-count flags, model configs read strictly, the response cache on a model, and
``--exit-on-error=false`` with a failing model.

Each runbook was written down from the injected fault before triage ran; where 2.51 did something else the
comment says what, and the label follows the log (a setting 2.51 accepts is a healthy log: no finding).
Sources: server ``src/command_line_parser.cc``, ``src/main.cc``, ``src/grpc/grpc_server.cc``, core
``src/filesystem/api.cc``, ``src/model_config_utils.cc``, ``src/server.cc`` (r24.10 = 2.51).
"""

# ruff: noqa: E501 - model code and configs are test data

from __future__ import annotations

from pathlib import Path

from corpus import OK_PY, config_pbtxt
from runtime_faults import Prepare

from triton_sre import conventions as c

ABSENT = "/nonexistent/triton-sre-diag31"


def _model(name: str, files: dict[str, str]) -> Prepare:
    def prepare(repo: Path, _backends: Path) -> list[str]:
        for rel, text in files.items():
            (repo / name / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / name / rel).write_text(text)
        return []

    return prepare


def _backend_directory_is_a_file(repo: Path, _backends: Path) -> list[str]:
    path = repo.with_name("backends-file")
    path.write_text("not a directory\n")
    return [f"--backend-directory={path}"]


NO_CONFIG = _model("no_config", {"1/model.py": OK_PY})
CACHED = _model("cached", {"config.pbtxt": config_pbtxt("cached", extra="response_cache { enable: true }\n"), "1/model.py": OK_PY})
BROKEN = _model("broken", {"config.pbtxt": 'name: "broken"\nbackend: "python"\nmax_batch_size: lots\n', "1/model.py": OK_PY})
STRICT = "--strict-model-config=true"

# name -> (LocalTriton arguments, a change to the repository or backends before the start (its extra flags),
#          the runbook, the model it is about (None: server-wide); runbook None = a healthy log: no finding)
FAULTS: dict[str, tuple[dict[str, object], Prepare | None, str | None, str | None]] = {
    # --- repositories
    # 2.51 prints nothing for ~50 s with an s3:// path and no network (the AWS SDK asks the instance metadata
    # service, then resolves the bucket's host) before "Unable to create S3 filesystem client": WAIT.
    "repository-s3": ({"exit_on_error": True, "extra_args": ["--model-repository=s3://triton-sre-absent/models"]}, None, c.RUNBOOK_CLOUD_REPOSITORY_ACCESS, None),
    "repository-as": ({"exit_on_error": True, "extra_args": ["--model-repository=as://account/container/models"]}, None, c.RUNBOOK_CLOUD_REPOSITORY_ACCESS, None),
    "repository-missing-exit-false": ({"extra_args": [f"--model-repository={ABSENT}"]}, None, c.RUNBOOK_REPOSITORY_PATH_INVALID, None),
    # --- backends
    "backend-directory-missing": ({"exit_on_error": True, "extra_args": [f"--backend-directory={ABSENT}"]}, None, c.RUNBOOK_BACKEND_NOT_FOUND, "ok_model"),
    "backend-directory-is-a-file": ({"exit_on_error": True}, _backend_directory_is_a_file, c.RUNBOOK_BACKEND_NOT_FOUND, "ok_model"),
    # --- memory pools
    "pinned-pool-word": ({"extra_args": ["--pinned-memory-pool-byte-size=lots"]}, None, c.RUNBOOK_SERVER_OPTION_INVALID, None),
    "pinned-pool-huge": ({"extra_args": ["--pinned-memory-pool-byte-size=1099511627776000"]}, None, None, None),
    "cuda-pool-word": ({"extra_args": ["--cuda-memory-pool-byte-size=0:lots"]}, None, c.RUNBOOK_SERVER_OPTION_INVALID, None),
    "cuda-pool-no-device": ({"extra_args": ["--cuda-memory-pool-byte-size=1024"]}, None, c.RUNBOOK_SERVER_OPTION_INVALID, None),
    # --- SSL
    "grpc-ssl-files-missing": ({"extra_args": ["--grpc-use-ssl=true", f"--grpc-server-cert={ABSENT}/cert.pem", f"--grpc-server-key={ABSENT}/key.pem"]}, None, c.RUNBOOK_SERVER_OPTION_INVALID, None),
    "grpc-ssl-mutual-root-missing": ({"extra_args": ["--grpc-use-ssl-mutual=true", f"--grpc-root-cert={ABSENT}/ca.pem"]}, None, c.RUNBOOK_SERVER_OPTION_INVALID, None),
    # --- endpoints and threads
    # Labelled server-option-invalid; 2.51 words every bind failure "Socket '<addr>:<port>' already in use "
    # (src/http_server.cc, src/grpc/grpc_server.cc): the log cannot tell an address the host lacks from a taken port.
    "http-address-not-local": ({"extra_args": ["--http-address=192.0.2.1"]}, None, c.RUNBOOK_SERVER_PORT_IN_USE, None),
    "grpc-port-word": ({"extra_args": ["--grpc-port=abc"]}, None, c.RUNBOOK_SERVER_OPTION_INVALID, None),
    "grpc-address-not-local": ({"extra_args": ["--grpc-address=192.0.2.1"]}, None, c.RUNBOOK_SERVER_OPTION_INVALID, None),
    # Labelled server-option-invalid; as HTTP's, the metrics service's bind failure is "already in use" alone.
    "metrics-address-not-local": ({"extra_args": ["--metrics-address=192.0.2.1"]}, None, c.RUNBOOK_SERVER_PORT_IN_USE, None),
    # Labelled server-option-invalid; 2.51 starts and serves the index, then dies on signal 11 in
    # TRITONBACKEND_ResponseSend at the first HTTP inference (ASKED): the log shows the crash, not the flag.
    "http-thread-count-zero": ({"extra_args": ["--http-thread-count=0"]}, None, c.RUNBOOK_SERVER_CRASHED, None),
    # Labelled server-option-invalid; 2.51 prints re2's "Error parsing '(?i)(': missing ): (?i)(" unprefixed and
    # serves, forwarding no header: a healthy server, so a WARNING naming the flag (diag32; WARNED below).
    "http-header-pattern-bad-regex": ({"extra_args": ["--http-header-forward-pattern=("]}, None, None, None),
    "exit-timeout-word": ({"extra_args": ["--exit-timeout-secs=soon"]}, None, c.RUNBOOK_SERVER_OPTION_INVALID, None),
    # Labelled server-option-invalid; 2.51 aborts on std::bad_alloc before its first line of its own (the pool
    # sized from -1): the log does not name the flag, only the failed allocation (host-resource-exhausted).
    "model-load-thread-count-negative": ({"extra_args": ["--model-load-thread-count=-1"]}, None, c.RUNBOOK_HOST_RESOURCE_EXHAUSTED, None),
    # Labelled server-option-invalid before the run; 2.51 started and served with each of the next four.
    "buffer-manager-threads-negative": ({"extra_args": ["--buffer-manager-thread-count=-1"]}, None, None, None),
    "poll-secs-negative": ({"model_control_mode": "poll", "extra_args": ["--repository-poll-secs=-1"]}, None, None, None),
    "compute-capability-word": ({"extra_args": ["--min-supported-compute-capability=new"]}, None, c.RUNBOOK_SERVER_OPTION_INVALID, None),
    # --- traces
    "trace-rate-word": ({"extra_args": ["--trace-config=rate=often"]}, None, c.RUNBOOK_SERVER_OPTION_INVALID, None),
    "trace-file-unwritable": ({"extra_args": ["--trace-config=level=TIMESTAMPS", "--trace-config=rate=1", f"--trace-config=triton,file={ABSENT}/trace.json"]}, None, None, None),
    # --- model configs, the response cache, exit-on-error
    "strict-config-none": ({"exit_on_error": True, "extra_args": [STRICT]}, NO_CONFIG, c.RUNBOOK_MODEL_FILE_MISSING, "no_config"),
    "no-auto-complete-none": ({"exit_on_error": True, "extra_args": ["--disable-auto-complete-config"]}, NO_CONFIG, c.RUNBOOK_MODEL_FILE_MISSING, "no_config"),
    # Labelled server-option-invalid about the model; 2.51 loads a model asking for the response cache on a
    # server with none, without a word.
    "response-cache-no-server-cache": ({"exit_on_error": True}, CACHED, None, None),
    "exit-on-error-false-broken-model": ({"exit_on_error": False}, BROKEN, c.RUNBOOK_CONFIG_PARSE_ERROR, "broken"),
}
# Failures whose first finding names another runbook, and why (bench/RESULTS.md diag31): each must still get a
# critical finding quoting a line of its log (no empty answer).
# (repository-missing-exit-false was one until diag32: core's ServerNew error logged alone by tritonserver.cc
# with --exit-on-error=false reads as a model's missing file; the options table's model_repository_path row
# now tells the repository from a file, diagnosis/repositories.py.)
KNOWN_MISSES: dict[str, str] = {}
# Servers that start and serve with a setting they dropped: no critical finding, one warning of this runbook.
WARNED = {"http-header-pattern-bad-regex": c.RUNBOOK_SERVER_OPTION_INVALID}
# Seconds a failing server is given to exit (40 by default).
WAIT = {"repository-s3": 150.0}
# Started, then sent one inference (the crash comes with it), then stopped.
ASKED = ("http-thread-count-zero",)
# Served with a failing model beside ok_model (no exit): started, asked, stopped.
SERVING = ("exit-on-error-false-broken-model",)
# Serving with no model at all (--exit-on-error=false): run until stopped, exit code 0.
NO_EXIT = (*SERVING, "repository-missing-exit-false")
