"""The composer's own check on header values: whatever reaches it, it writes no header the
use case would have refused."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from mailfathom.adapters.mime.compose import StdlibComposer
from mailfathom.app.sending.ports import AuthoredMessage

LONE = "\udc80"


@pytest.mark.parametrize(
    "changes",
    [
        {"subject": f"Minutes {LONE}"},
        {"subject": "Minutes\x85more"},
        {"from_name": f"Me {LONE}"},
        {"to": (f"friend{LONE}@example.net",)},
        {"in_reply_to": f"<a{LONE}@example.net>"},
    ],
    ids=lambda changes: next(iter(changes)),
)
def test_the_composer_refuses_a_header_value_the_rule_refuses(changes: dict[str, Any]) -> None:
    """A lone surrogate is refused rather than written as an unknown-8bit encoded word."""
    message = AuthoredMessage(
        from_address="me@example.org",
        from_name="Me",
        to=("friend@example.net",),
        cc=(),
        subject="Minutes",
        plain_text="Attached below.\n",
        html=None,
    )
    composer = StdlibComposer()
    assert composer.compose(message).mime
    with pytest.raises(ValueError, match="header value"):
        composer.compose(dataclasses.replace(message, **changes))
