"""Slack's Block Kit and chat.postMessage limits (api.slack.com/reference/block-kit).

The real client (slack.py) cuts messages to them; the local stand-in (dev_slack_standin.py, a dev
tool) rejects what exceeds them, as Slack does. Defined once here, for both.
"""

from __future__ import annotations

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
