#!/usr/bin/env bash
# Set the machine up, lint, then run the whole test suite (the real Triton included) in two phases:
#   1. the quick subset (no Triton, no [server] extra, no whole rule-engine suite) in pytest-xdist workers;
#      its tests mostly wait on bounded timeouts, so workers overlap the waits even on two cores;
#   2. the real-component tests (markers triton, server, slow) in one process, sharing one Triton and one
#      Prometheus for the session, in file order as before.
# Arguments go to both phases (e.g. a test path, --durations=50). TRITON_SRE_TEST_WORKERS sets phase 1's
# worker count (default 4; 0 runs it in one process).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
.venv/bin/ruff check .
.venv/bin/triton-sre generate --check

QUICK='not triton and not server and not slow'
workers="${TRITON_SRE_TEST_WORKERS:-4}"

# pytest's exit 5 is "no test collected": a path given as argument may hold tests of one phase only.
phase() {
    local rc=0
    .venv/bin/pytest -q "$@" || rc=$?
    if [ "$rc" -eq 5 ]; then rc=0; fi
    return "$rc"
}

# Both phases run whatever the first gives, so one run shows every failure; the exit is the first non-zero.
status=0
echo "== phase 1/2: quick subset ($workers workers)"
if [ "$workers" = 0 ]; then
    phase -m "$QUICK" "$@" || status=$?
else
    phase -n "$workers" -m "$QUICK" "$@" || status=$?
fi
echo "== phase 2/2: real-component tests (one process)"
rc=0
phase -m "not ($QUICK)" "$@" || rc=$?
if [ "$status" -eq 0 ]; then status=$rc; fi
exit "$status"
