"""Over Streamable HTTP with the official client, in both protocol generations: the question
the client is given writes out the characters that render as nothing, and Send queues the
message with the characters themselves."""

from __future__ import annotations

import email
import email.policy
import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp.types import ElicitRequestParams, ElicitResult

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.bootstrap import Services
from mcp_tests.client import structured
from sending.served import Served

from .asking_served import MODES, connected, send_arguments, serve_asking, stored_mime

# Reads "Salary slip April.pdf" where the override is honoured.
SUBJECT = "Salary slip \u202efdp.lirpA"
BODY = "Open the attachment\u200b today.\U000e0041\n"
MARKERS = [
    "\u27e6U+202E RIGHT-TO-LEFT OVERRIDE\u27e7",
    "\u27e6U+200B ZERO WIDTH SPACE\u27e7",
    "\u27e6U+E0041 TAG LATIN CAPITAL LETTER A\u27e7",
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    register_all(["Salary slip", "Open the attachment", "guest@example.net", "desk@example.org"])
    yield from serve_asking(tmp_path_factory.mktemp("unseen"))


def _sent_mime(served: Served, outgoing_id: str) -> bytes:
    with Services.open(load_config(served.config_path)) as services:
        return stored_mime(services, uuid.UUID(outgoing_id))


@pytest.mark.parametrize("mode", MODES)
def test_the_client_is_shown_every_hidden_character_and_the_characters_are_sent(
    served: Served, mode: str
) -> None:
    asked: list[str] = []

    async def person(context: Any, params: ElicitRequestParams) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"choice": "send"})

    async def run() -> dict[str, Any]:
        async with connected(served, "asks", mode, person) as client:
            result = await client.call_tool(
                "send_email", send_arguments(SUBJECT, BODY, language="cs")
            )
        return structured(result)

    answer = anyio.run(run)
    assert answer["status"] == "queued"
    [message] = asked
    assert [m for m in MARKERS if m not in message] == []
    assert [hex(ord(c)) for c in message if c in "\u202e\u200b\U000e0041"] == []
    assert "Předmět: Salary slip \u27e6U+202E RIGHT-TO-LEFT OVERRIDE\u27e7fdp.lirpA" in message

    sent = email.message_from_bytes(
        _sent_mime(served, answer["outgoingEmailId"]), policy=email.policy.default
    )
    assert str(sent["Subject"]) == SUBJECT
    plain = sent.get_body(("plain",))
    assert plain is not None
    assert plain.get_content().replace("\r\n", "\n") == BODY
