"""Alert content cannot ping a channel, mention a user or hide a link in the bot's Slack messages.

Labels and annotations come from whoever writes alert rules or names a model. Slack's mrkdwn reads
`<!channel>`, `<!here>`, `<@U…>`, `<#C…>`, `<!subteam^…>` and `<http://…|text>` as controls; in the
bot's message, its fallback text and its thread replies they must arrive as text (`&lt;`), and a
runbook URL from an annotation must stay one link (its `<`, `>` and `|` percent-encoded).
"""

from __future__ import annotations

import json
import re
from typing import Any

from triton_sre import conventions as c
from triton_sre.bot.enrich import Facts, Links, enrich
from triton_sre.bot.payload import describe_change, parse_group
from triton_sre.bot.slack import Renderer

HOSTILE = "<!channel> <!here> <@U123> <#C456> <!subteam^S789> <http://evil.example|click here>"
RUNBOOK = "http://rb.example/x>|<!channel>"
CONTROL = re.compile(r"<[!@#]")
LINK = re.compile(r"<([^<>|]*)\|([^<>]*)>")


def group() -> Any:
    labels = {"alertname": c.ALERT_MODEL_UNAVAILABLE, c.LABEL_MODEL: f"m {HOSTILE}", "severity": "page"}
    return parse_group(
        {
            "version": c.AM_WEBHOOK_VERSION,
            "groupKey": "{}:{x}",
            "status": "firing",
            "receiver": "bot",
            "groupLabels": {},
            "commonLabels": labels,
            "commonAnnotations": {},
            "externalURL": "http://am.example:9093",
            "alerts": [
                {
                    "status": "firing",
                    "labels": {**labels, "instance": HOSTILE},
                    "annotations": {
                        "summary": HOSTILE,
                        "description": HOSTILE,
                        c.ANNOTATION_RUNBOOK_URL: RUNBOOK,
                    },
                    "fingerprint": "f00001",
                    "startsAt": "2026-11-29T10:00:00Z",
                }
            ],
        }
    )


def mrkdwn_texts(blocks: list[dict[str, Any]]) -> list[str]:
    """Every text Slack parses as mrkdwn: mrkdwn objects (plain_text ones are shown as written)."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "mrkdwn":
                found.append(str(node.get("text", "")))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(blocks)
    return found


def test_alert_content_is_text_in_every_mrkdwn_field() -> None:
    context = enrich(group(), Facts(), Links(runbook_base_url="https://rb.example/")).context()
    renderer = Renderer()
    blocks = renderer.blocks(context)
    reply = renderer.update({**context, "change": describe_change([], group(), None)})
    assert "channel" in reply  # the new alert is named in the thread reply
    texts = [*mrkdwn_texts(blocks), renderer.text(context), reply]
    assert any("&lt;!channel&gt;" in text for text in texts)  # shown, as text
    for text in texts:
        assert not CONTROL.search(text), text
        for target, _label in LINK.findall(text):
            assert target.startswith(("http://", "https://")) and "evil.example" not in target, text
    assert "evil.example" not in json.dumps([LINK.findall(t) for t in texts])


def test_a_runbook_url_annotation_stays_one_link() -> None:
    context = enrich(group(), Facts(), Links(runbook_base_url="https://rb.example/")).context()
    texts = mrkdwn_texts(Renderer().blocks(context))
    links = [target for text in texts for target, _ in LINK.findall(text) if target.startswith("http://rb")]
    assert links and all(target == "http://rb.example/x%3E%7C%3C!channel%3E" for target in links), links
