#!/usr/bin/env bash
# Set the machine up, then run `triton-sre demo` (a real local Triton, the exporter and traffic).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
exec .venv/bin/triton-sre demo "$@"
