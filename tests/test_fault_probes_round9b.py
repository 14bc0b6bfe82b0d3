"""Fault probes, round nine, what it left open (branch `probes9b`, 2026-12-05): the bot's body cap and
Slack channel names, Kubernetes names in the autoscaling objects, the gameday's HTTP sessions, Grafana
variables in queries and runbook links — docs/failure-behaviour.md, "Fault probes, round nine"."""

from __future__ import annotations

from typing import Any

import pytest

from triton_sre.bot.command import resolve_bot_settings
from triton_sre.bot.config import MAX_BODY_BYTES_LIMIT, settings_from_mapping
from triton_sre.checks import ConfigError
from triton_sre.cli import build_parser


def bot_config(**values: Any) -> dict[str, Any]:
    return {"bot": values}


# -- bot: max_body_bytes -----------------------------------------------------------------------------
@pytest.mark.parametrize("size", [MAX_BODY_BYTES_LIMIT + 1, 99999999999999999999999])
def test_the_bots_body_cap_has_an_upper_bound_named_at_load(size: int) -> None:
    """Before: any size was accepted, and the webhook read a body that large into memory."""
    with pytest.raises(ConfigError) as caught:
        settings_from_mapping(bot_config(max_body_bytes=size), "bot.yaml")
    message = str(caught.value)
    assert "bot.yaml: bot.max_body_bytes" in message
    assert f"from 1 to {MAX_BODY_BYTES_LIMIT}" in message


def test_the_bots_body_cap_at_the_limit_is_accepted() -> None:
    settings = settings_from_mapping(bot_config(max_body_bytes=MAX_BODY_BYTES_LIMIT), "bot.yaml")
    assert settings.max_body_bytes == MAX_BODY_BYTES_LIMIT


# -- bot: Slack channel names ------------------------------------------------------------------------
WRONG_CHANNELS = [
    "#a\nb",
    "#Alerts",
    "#ml pages",
    "#ml.pages",
    "#" + "a" * 81,
    "##x",
    "#<!channel>",
    "c0123abcd!",
]


@pytest.mark.parametrize("channel", WRONG_CHANNELS)
def test_a_slack_channel_slack_would_not_know_is_refused_at_load(channel: str) -> None:
    """Before: accepted; every notification to it failed with Slack's `channel_not_found`."""
    with pytest.raises(ConfigError, match=r"^bot.yaml: bot.channel: must be a Slack channel: "):
        settings_from_mapping(bot_config(channel=channel), "bot.yaml")
    route = {"match": {"team": "ml"}, "channel": channel}
    with pytest.raises(ConfigError, match=r"^bot.yaml: bot.routes\[0\].channel: must be a Slack channel"):
        settings_from_mapping(bot_config(channel="#ok", routes=[route]), "bot.yaml")
    with pytest.raises(ConfigError, match=r"^--channel: must be a Slack channel"):
        resolve_bot_settings(build_parser().parse_args(["bot", "--channel", channel]))


@pytest.mark.parametrize(
    "channel", ["#triton-alerts", "ml_pages-2", "C0123ABCD", "G01ABCDEFG", "#運用", "#" + "a" * 80]
)
def test_a_slack_channel_by_slacks_rules_or_an_id_is_accepted(channel: str) -> None:
    assert settings_from_mapping(bot_config(channel=channel), "bot.yaml").channel == channel
