"""Over Streamable HTTP with the official client, in both protocol generations: a message
carrying sensitive content, sent by a caller whose entry asks a person, puts a question that
names the category in the person's language and shows the value redacted; Send queues the
message as written."""

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
from sending.served import Served, serve

from .asking_served import MODES, _config, connected, send_arguments, stored_mime

IBAN = "SK31 1200 0000 1987 4263 7541"
BODY = f"Pošlite to na účet {IBAN}, ďakujem.\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    register_all([IBAN, IBAN.replace(" ", ""), "Pošlite to na účet", "Platba"])
    root = tmp_path_factory.mktemp("sensitive-question")
    config = _config(root) + "\n[SensitiveContent]\nEnabled = true\n"
    yield from serve(root, config, None, deliver=False)


@pytest.mark.parametrize("mode", MODES)
def test_the_question_names_the_category_hides_the_value_and_send_sends_it(
    served: Served, mode: str
) -> None:
    asked: list[str] = []

    async def person(context: Any, params: ElicitRequestParams) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"choice": "send"})

    async def run() -> dict[str, Any]:
        async with connected(served, "asks", mode, person) as client:
            result = await client.call_tool(
                "send_email", send_arguments("Platba", BODY, language="sk")
            )
        return structured(result)

    answer = anyio.run(run)
    assert answer["status"] == "queued"
    [message] = asked
    assert "číslo bankového účtu (IBAN)" in message
    assert "[redacted:iban]" in message
    assert IBAN not in message
    assert IBAN.replace(" ", "") not in message

    with Services.open(load_config(served.config_path)) as services:
        mime = stored_mime(services, uuid.UUID(answer["outgoingEmailId"]))
    sent = email.message_from_bytes(mime, policy=email.policy.default)
    plain = sent.get_body(("plain",))
    assert plain is not None
    assert IBAN in plain.get_content()
