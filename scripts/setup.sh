#!/usr/bin/env bash
# Idempotent setup of a development / CI machine (Debian, Python 3.10+):
#   - Debian packages prometheus, prometheus-alertmanager, docker-compose, chromium, victoria-metrics and
#     golang-go, if their binaries are missing;
#   - the venv .venv in the repository, with triton-sre installed editable with [server,dev];
#   - the shared libpython the Triton Python-backend stub links against, if missing.
# Safe to run again: it only installs what is not there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
APT_UPDATED=0

apt_install() {
    # Install Debian packages without starting their services (prometheus would start on :9090).
    if [ "$APT_UPDATED" -eq 0 ]; then
        $SUDO apt-get update -q
        APT_UPDATED=1
    fi
    local policy=/usr/sbin/policy-rc.d added_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
        $SUDO chmod +x "$policy"
        added_policy=1
    fi
    local rc=0
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" || rc=$?
    if [ "$added_policy" -eq 1 ]; then
        $SUDO rm -f "$policy"
    fi
    return "$rc"
}

# --- Debian packages, by the binary each one provides ------------------------------------------
missing=()
command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
command -v prometheus-alertmanager >/dev/null 2>&1 || missing+=(prometheus-alertmanager)
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)  # `triton-sre report` HTML test: headless screenshot
command -v victoria-metrics >/dev/null 2>&1 || missing+=(victoria-metrics)  # vmalert, vmagent: issue 24 tests
command -v go >/dev/null 2>&1 || missing+=(golang-go)  # Flagger's templates rendered by text/template

PYTHON="${PYTHON:-python3}"
PYV="$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
# Debian's python3 needs python3-venv (ensurepip) for `python3 -m venv`.
if [ ! -x .venv/bin/python ] && ! "$PYTHON" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    missing+=("python${PYV}-venv")
fi
if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: installing Debian packages: ${missing[*]}"
    apt_install "${missing[@]}"
fi

# --- the project venv ---------------------------------------------------------------------------
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv with $PYTHON ($PYV)"
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[server,dev]'

# --- the Python-backend stub links the shared libpython of its Python version -----------------
STUB="$(.venv/bin/python -c 'from triton_sre.stack.local_triton import find_server; print(find_server().stub)')"
if ldd "$STUB" 2>/dev/null | grep -q 'libpython.*not found'; then
    VENV_PYV="$(.venv/bin/python -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
    echo "setup: installing libpython${VENV_PYV} for the Triton Python backend stub"
    apt_install "libpython${VENV_PYV}"
fi
echo "setup: ok ($(.venv/bin/python --version), triton-sre installed in .venv)"
