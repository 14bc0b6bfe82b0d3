"""Process: ports, defaults, environment variables, HTTP paths and exit codes of the commands and
services, and the images and ports of the sidecar stack.
"""

from __future__ import annotations

from typing import Final

# ---------------------------------------------------------------------------
# Ports, defaults, environment variables.
# ---------------------------------------------------------------------------
TRITON_HTTP_PORT: Final = 8000
TRITON_GRPC_PORT: Final = 8001
TRITON_METRICS_PORT: Final = 8002
EXPORTER_PORT: Final = 8003

DEFAULT_TRITON_URL: Final = f"http://localhost:{TRITON_HTTP_PORT}"
DEFAULT_LISTEN: Final = f"0.0.0.0:{EXPORTER_PORT}"
DEFAULT_INTERVAL_SECONDS: Final = 15.0
DEFAULT_WINDOW_SECONDS: Final = 60.0
DEFAULT_TIMEOUT_SECONDS: Final = 5.0
# `report`'s wait for each Prometheus answer (--timeout): a fleet's range answers of up to 1,000,000
# samples, and counts over the whole range, take seconds where a dashboard's query takes milliseconds.
REPORT_TIMEOUT_SECONDS: Final = 30.0
DEFAULT_MAX_RESPONSE_BYTES: Final = 32 * 1024 * 1024

ENV_TRITON_URL: Final = "TRITON_SRE_TRITON_URL"
ENV_METRICS_URL: Final = "TRITON_SRE_METRICS_URL"
ENV_LISTEN: Final = "TRITON_SRE_LISTEN"
ENV_INTERVAL: Final = "TRITON_SRE_INTERVAL"
ENV_WINDOW: Final = "TRITON_SRE_WINDOW"
ENV_CONFIG: Final = "TRITON_SRE_CONFIG"
ENV_LOG_LEVEL: Final = "TRITON_SRE_LOG_LEVEL"  # default of every command's --log-level
# Colour on a terminal is off when NO_COLOR is set to anything but "" (https://no-color.org) or the
# terminal is TERM=dumb.
ENV_NO_COLOR: Final = "NO_COLOR"
ENV_TERM: Final = "TERM"
TERM_DUMB: Final = "dumb"

# Exit codes of every command (triage and lint: 1 means failures were found).
EXIT_OK: Final = 0
EXIT_FAILURE: Final = 1
EXIT_USAGE: Final = 2  # usage, configuration or input error; also an output that cannot be written
EXIT_INCONCLUSIVE: Final = 3  # `rollout check`: too little to judge; `triage`: a cut log, no failure in it
# The reader of stdout went away (`| head`): quiet, 128 + SIGPIPE like other Unix tools.
EXIT_BROKEN_PIPE: Final = 141
# Ctrl-C (SIGINT) stopped a command before it finished: 128 + SIGINT, like a shell reports it.
# Services (export, bot, demo) treat SIGINT, SIGTERM and SIGHUP as their normal stop and exit 0.
EXIT_INTERRUPTED: Final = 130
# The commands that run until stopped (by SIGINT, SIGTERM or SIGHUP, exit 0).
SERVICE_COMMANDS: Final = ("export", "bot", "demo")

# Exporter HTTP paths.
PATH_METRICS: Final = "/metrics"
PATH_HEALTHZ: Final = "/healthz"
PATH_READYZ: Final = "/readyz"
PATH_DEBUG_MODELS: Final = "/debug/models"

# Where the runbook pages are read from (overrides the packaged/repository `runbooks/`).
ENV_RUNBOOKS_DIR: Final = "TRITON_SRE_RUNBOOKS_DIR"

# ---------------------------------------------------------------------------
# Incident bot (`triton-sre bot`): Alertmanager webhook in, Slack out.
# ---------------------------------------------------------------------------
BOT_PORT: Final = 8004
DEFAULT_BOT_LISTEN: Final = f"0.0.0.0:{BOT_PORT}"
PATH_BOT_ALERTMANAGER: Final = "/alertmanager"
PATH_BOT_SLACK_COMMANDS: Final = "/slack/commands"
ENV_BOT_TOKEN: Final = "TRITON_SRE_BOT_TOKEN"  # bearer token Alertmanager sends (http_config.authorization)
ENV_SLACK_BOT_TOKEN: Final = "SLACK_BOT_TOKEN"
ENV_SLACK_BOT_TOKEN_FILE: Final = "SLACK_BOT_TOKEN_FILE"  # a file holding it (a mounted Secret): read again
ENV_SLACK_SIGNING_SECRET: Final = "SLACK_SIGNING_SECRET"
ENV_SLACK_API_URL: Final = "SLACK_API_URL"
DEFAULT_SLACK_API_URL: Final = "https://slack.com/api/"
SLACK_STANDIN_TOKEN: Final = "xoxb-standin"  # the bot token the local Slack stand-in accepts (stack, gameday)
SLASH_COMMAND: Final = "/triton"

# ---------------------------------------------------------------------------
# The sidecar stack (`triton-sre stack`, docker-compose.yml, deploy/): images, ports, paths.
# ---------------------------------------------------------------------------
# Triton server version -> NGC release of the image carrying it; the tests run 2.51 (nvidia-pytriton).
TRITON_SERVER_RELEASES: Final = {"2.51": "24.10"}
TRITON_TESTED_VERSION: Final = "2.51"
TRITON_IMAGE: Final = f"nvcr.io/nvidia/tritonserver:{TRITON_SERVER_RELEASES[TRITON_TESTED_VERSION]}-py3"
PROMETHEUS_PORT: Final = 9090
# The Prometheus the rendered Argo Rollouts / Flagger templates query (an argument / a field to edit).
K8S_PROMETHEUS_URL: Final = f"http://prometheus-operated.monitoring:{PROMETHEUS_PORT}"
ALERTMANAGER_PORT: Final = 9093
GRAFANA_PORT: Final = 3000
AM_RECEIVER_BOT: Final = "triton-sre-bot"  # Alertmanager receiver posting to the bot's webhook
DEPLOY_DIR: Final = "deploy"
