"""Which pip extra each `triton-sre` command needs, and the check that names it when it is missing.

The base install is the exporter and triage; every other command's third-party libraries come from an
extra declared in pyproject.toml. The CLI checks a command's modules before running it, so a missing
extra is a one-line `pip install` hint and exit 2, never a traceback.
"""

from __future__ import annotations

import importlib.util

# command -> (extras to install, top-level modules those extras provide that the command imports)
COMMAND_EXTRAS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "bot": (("bot",), ("slack_sdk", "jinja2")),
    "generate": (("generate",), ("grafanalib", "jinja2")),
    "report": (("report",), ("pandas", "matplotlib", "jinja2")),
    "lint": (("lint",), ("tritonclient", "google.protobuf", "re2")),
    # The local stack runs Triton, renders the configs and dashboards, and starts the bot
    # (`stack status` and `stack down` only read the state file: base install).
    "stack up": (("server", "generate", "bot"), ("pytriton", "grafanalib", "jinja2", "slack_sdk")),
    "demo": (("server", "generate", "bot"), ("pytriton", "grafanalib", "jinja2", "slack_sdk")),
    # `doctor` needs only requests and pyyaml: base install (it renders the rules, not dashboards).
    # the stack of `stack up` plus traffic (`--list` needs no more than the base install, but one
    # extra set for the command keeps the hint simple)
    "gameday": (("server", "generate", "bot"), ("pytriton", "grafanalib", "jinja2", "slack_sdk")),
}


def install_hint(extras: tuple[str, ...]) -> str:
    return f"pip install 'triton-sre[{','.join(extras)}]'"


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a module entry set to None
        return False


def command_key(command: str, action: str | None = None) -> str:
    """The COMMAND_EXTRAS key of a command line: ``stack up`` is keyed with its action."""
    return f"{command} {action}" if action and f"{command} {action}" in COMMAND_EXTRAS else command


def missing_modules(command: str) -> list[str]:
    """The modules `command` needs that cannot be imported here (empty for base-install commands)."""
    _, modules = COMMAND_EXTRAS.get(command, ((), ()))
    return [m for m in modules if not _importable(m)]


def is_optional(module_name: str | None) -> bool:
    """Whether a ModuleNotFoundError's module belongs to one of the extras."""
    if not module_name:
        return False
    top = module_name.split(".")[0]
    return any(m.split(".")[0] == top for _, mods in COMMAND_EXTRAS.values() for m in mods)


def missing_extra_message(command: str, missing: list[str]) -> str:
    extras, _ = COMMAND_EXTRAS[command]
    return (
        f"triton-sre {command}: needs {', '.join(missing)}, not installed; "
        f"install the extra with: {install_hint(extras)}"
    )
