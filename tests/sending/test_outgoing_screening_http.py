"""Outgoing screening over Streamable HTTP with the official client, against `mailfathom
serve`: a send carrying a card number is refused with 53013 naming the category and not the
value, a reply whose quotation carries one is refused alike, and the same reply without the
quoted value's category switched on is queued."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

from log_audit import register_all
from mcp_tests.client import call, code, structured, text
from servers.smtp import SmtpServer

from .helpers import SMTP_PASSWORD, SMTP_USER
from .served import KEYS, Served, relaxed_config, serve

CARD = "4111 1111 1111 1111"
ANSWERED = "Room booking"


def _incoming() -> bytes:
    m = EmailMessage()
    m["From"] = "Olga Writer <olga@example.net>"
    m["To"] = "me@example.org"
    m["Subject"] = ANSWERED
    m["Message-ID"] = f"<{uuid.uuid4().hex}@example.net>"
    m.set_content(f"Please charge {CARD} for the room.\n")
    return bytes(m)


def _served(root: Path, smtp: SmtpServer, switches: str) -> Iterator[Served]:
    config = relaxed_config(root, smtp) + f"\n[SensitiveContent]\nEnabled = true\n{switches}"
    yield from serve(root, config, smtp, deliver=False, mail={"work": _incoming()})


@pytest.fixture(scope="module")
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


@pytest.fixture(scope="module")
def screening(smtp: SmtpServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    register_all([CARD, CARD.replace(" ", ""), ANSWERED, "olga@example.net", "Olga Writer"])
    yield from _served(tmp_path_factory.mktemp("screening"), smtp, "")


@pytest.fixture(scope="module")
def cards_off(smtp: SmtpServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from _served(tmp_path_factory.mktemp("cards-off"), smtp, "PaymentCards = false\n")


def _stored(served: Served) -> str:
    page = structured(call(served.url, KEYS["agent"], "list_emails", {"accounts": ["work"]}))
    return str(page["emails"][0]["storedEmailId"])


def _reply(stored: str) -> dict[str, Any]:
    return {
        "storedEmailId": stored,
        "audience": "senderOnly",
        "plainTextBody": "Done.",
        "idempotencyKey": uuid.uuid4().hex,
    }


def test_a_send_carrying_a_card_number_is_refused_naming_only_the_category(
    screening: Served,
) -> None:
    arguments = {
        "account": "work",
        "to": ["friend@example.net"],
        "subject": "Booking",
        "plainTextBody": f"Card {CARD}.\n",
        "idempotencyKey": uuid.uuid4().hex,
    }
    result = call(screening.url, KEYS["agent"], "send_email", arguments)
    assert code(result) == 53013
    assert "paymentCard" in text(result)
    assert "4111" not in result.model_dump_json()


def test_a_reply_quoting_a_card_number_is_refused(screening: Served) -> None:
    result = call(screening.url, KEYS["agent"], "reply_to_email", _reply(_stored(screening)))
    assert code(result) == 53013


def test_with_the_category_switched_off_the_same_reply_is_queued(cards_off: Served) -> None:
    result = call(cards_off.url, KEYS["agent"], "reply_to_email", _reply(_stored(cards_off)))
    assert code(result) is None, text(result)
    assert structured(result)["status"] == "queued"
