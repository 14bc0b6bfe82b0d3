"""Slack's Block Kit and chat.postMessage limits (api.slack.com/reference/block-kit).

The real client (slack.py) cuts messages to them; the local stand-in (dev_slack_standin.py, a dev
tool) rejects what exceeds them, as Slack does (`validate_blocks`). Defined once here, for both.
"""

from __future__ import annotations

from typing import Any

MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3000
MAX_HEADER_TEXT = 150
MAX_BUTTON_TEXT = 75
MAX_URL = 3000
MAX_FIELDS = 10
MAX_FIELD_TEXT = 2000
MAX_ACTIONS = 25
MAX_CONTEXT_ELEMENTS = 10
MAX_MESSAGE_TEXT = 40000


def validate_blocks(blocks: Any) -> str | None:
    """Why Slack would reject these blocks (``invalid_blocks`` detail), or None when they pass."""
    if not isinstance(blocks, list):
        return "blocks must be a list"
    if len(blocks) > MAX_BLOCKS:
        return f"must have at most {MAX_BLOCKS} blocks, got {len(blocks)}"
    for i, block in enumerate(blocks):
        if not isinstance(block, dict) or "type" not in block:
            return f"block {i}: not an object with a type"
        kind = block["type"]
        if kind == "section":
            text = block.get("text")
            fields = block.get("fields")
            if text is None and not fields:
                return f"block {i}: section needs text or fields"
            if text is not None and len(text_of(text)) > MAX_SECTION_TEXT:
                return f"block {i}: section text longer than {MAX_SECTION_TEXT}"
            if text is not None and not text_of(text):
                return f"block {i}: section text must not be empty"
            if fields is not None:
                if len(fields) > MAX_FIELDS:
                    return f"block {i}: more than {MAX_FIELDS} fields"
                if any(len(text_of(f)) > MAX_FIELD_TEXT for f in fields):
                    return f"block {i}: a field longer than {MAX_FIELD_TEXT}"
        elif kind == "header":
            text = text_of(block.get("text"))
            if not text or len(text) > MAX_HEADER_TEXT:
                return f"block {i}: header text empty or longer than {MAX_HEADER_TEXT}"
        elif kind == "actions":
            elements = block.get("elements") or []
            if not elements or len(elements) > MAX_ACTIONS:
                return f"block {i}: actions need 1..{MAX_ACTIONS} elements"
            for element in elements:
                if len(text_of(element.get("text"))) > MAX_BUTTON_TEXT:
                    return f"block {i}: button text longer than {MAX_BUTTON_TEXT}"
                url = element.get("url")
                if url is not None and (
                    not str(url).startswith(("http://", "https://")) or len(str(url)) > MAX_URL
                ):
                    return f"block {i}: button url must be http(s) and at most {MAX_URL} characters"
        elif kind == "context":
            elements = block.get("elements") or []
            if not elements or len(elements) > MAX_CONTEXT_ELEMENTS:
                return f"block {i}: context needs 1..{MAX_CONTEXT_ELEMENTS} elements"
        elif kind in ("divider", "image", "rich_text", "file", "input", "video"):
            continue
        else:
            return f"block {i}: unknown block type {kind!r}"
    return None


def text_of(obj: Any) -> str:
    """The text of a Block Kit text object (or of a plain string)."""
    if isinstance(obj, dict):
        return str(obj.get("text") or "")
    return "" if obj is None else str(obj)
