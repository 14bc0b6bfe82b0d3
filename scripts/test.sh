#!/usr/bin/env bash
# Set the machine up, lint, then run the whole test suite (the real Triton included).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
.venv/bin/ruff check .
.venv/bin/triton-sre generate --check
.venv/bin/pytest -q "$@"
