"""Every command that reads the SLO spec takes it as `--spec` and as `--slo-file` (the two names grew apart:
generate, doctor and rollout said --spec; report, lint, stack and bot --slo-file)."""

from __future__ import annotations

import pytest

from triton_sre.cli import build_parser

COMMANDS = (
    ["generate"],
    ["doctor", "--triton-url", "http://t:8000"],
    [
        "rollout",
        "check",
        "--prometheus",
        "http://p:9090",
        "--model",
        "m",
        "--baseline-version",
        "1",
        "--candidate-version",
        "2",
    ],
    ["report", "--prometheus-url", "http://p:9090"],
    ["bot"],
    ["lint", "models"],
    ["stack", "up"],
)


@pytest.mark.parametrize("flag", ["--spec", "--slo-file"])
@pytest.mark.parametrize("command", COMMANDS, ids=lambda words: " ".join(words))
def test_both_names_of_the_spec_flag(command: list[str], flag: str) -> None:
    parser = build_parser()
    args = parser.parse_args([*command, flag, "my-slos.yaml"])
    value = getattr(args, "spec", None) or getattr(args, "slo_file", None)
    assert str(value) == "my-slos.yaml"
