"""Under `UnvouchedRecipients = "Refuse"`, what a caller writes into the contact book through
MCP vouches for nobody: a record it created, an address it added to the operator's record, a
collected record it promoted. What the operator writes with `mfctl contact` does, and the
operator may let callers' records vouch (`CallerWrittenContactsVouch`). Driven over HTTP with
the official client against `mailfathom serve`, the operator's side with the real `mfctl`."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from cli.operator_cli import run_to_exit
from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.sql.contacts import SqlContactBook
from mailfathom.adapters.sql.engine import create_store_engine, store_url
from mailfathom.bootstrap import Services
from mailfathom.domain.contact_collection import SeenPerson
from mcp_tests.client import call, code, structured
from sending.helpers import SMTP_PASSWORD, SMTP_USER
from sending.served import KEYS, Served, serve, strict_config
from servers.smtp import SmtpServer

AGENT = KEYS["agent"]
NAME = "Vera Vouchless"


@pytest.fixture(scope="module")
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


def _config(root: Path, smtp: SmtpServer, mail_delivery: str = "") -> str:
    text = strict_config(root, smtp).replace(
        "Client = { PerHour = 3 }", "Client = { PerHour = 100 }"
    )
    return text.replace(
        'UnvouchedRecipients = "Refuse"', f'UnvouchedRecipients = "Refuse"\n{mail_delivery}'
    )


def _served(root: Path, smtp: SmtpServer, mail_delivery: str = "") -> Iterator[Served]:
    yield from serve(root, _config(root, smtp, mail_delivery), smtp, deliver=False)


@pytest.fixture(scope="module")
def refusing(tmp_path_factory: pytest.TempPathFactory, smtp: SmtpServer) -> Iterator[Served]:
    yield from _served(tmp_path_factory.mktemp("vouching"), smtp)


def _address(label: str) -> str:
    address = f"{label}-{uuid.uuid4().hex[:8]}@example.net"
    register_all([address, NAME])
    return address


def _send(d: Served, to: str) -> Any:
    arguments = {
        "account": "work",
        "to": [to],
        "subject": "Hello",
        "plainTextBody": "Hello there.",
        "idempotencyKey": uuid.uuid4().hex,
    }
    return call(d.url, AGENT, "send_email", arguments)


def _queued(d: Served, to: str) -> None:
    assert structured(_send(d, to))["state"] == "queued"


def _unvouched(d: Served, to: str) -> None:
    assert code(_send(d, to)) == 53009


def _create(d: Served, *addresses: str) -> str:
    arguments = {
        "displayName": NAME,
        "addresses": list(addresses),
        "preferredAddress": addresses[0],
    }
    created = structured(call(d.url, AGENT, "create_contact", arguments))
    assert created["state"] == "written"
    return str(created["contact"]["contactId"])


def _operator(d: Served, *args: str) -> Any:
    done = run_to_exit(d.config_path.parent, "contact", *args, "--config", str(d.config_path))
    assert done.returncode == 0, done.stderr
    return done.stdout


def _collected(d: Served, address: str) -> str:
    """A person picked up from mail, written where the server reads it."""
    engine = create_store_engine(store_url(load_config(d.config_path).store))
    try:
        book = SqlContactBook(engine)
        assert book.collect([SeenPerson(address, NAME)], datetime.now(UTC)) == 1
        held = book.find_by_address(address)
    finally:
        engine.dispose()
    assert held is not None
    return str(held.contact_id)


def test_a_contact_the_agent_created_vouches_for_nobody(refusing: Served) -> None:
    stranger = _address("stranger")
    _unvouched(refusing, stranger)
    _create(refusing, stranger)
    _unvouched(refusing, stranger)
    with Services.open(load_config(refusing.config_path)) as services:
        assert services.outbox().listing(1000) == []


def test_an_address_the_agent_added_to_the_operators_record_vouches_for_nobody(
    refusing: Served,
) -> None:
    friend, added = _address("friend"), _address("added")
    written = json.loads(
        _operator(refusing, "create", "--name", NAME, "--address", friend, "--json")
    )
    _queued(refusing, friend)
    arguments = {
        "contactId": written["contactId"],
        "displayName": NAME,
        "addresses": [friend, added],
        "preferredAddress": added,
    }
    assert structured(call(refusing.url, AGENT, "update_contact", arguments))["state"] == "written"
    _unvouched(refusing, added)
    _queued(refusing, friend)
    # Taken out and put back by the agent, the operator's address is the agent's now.
    for kept in ([added], [friend, added]):
        arguments |= {"addresses": kept, "preferredAddress": added}
        answer = structured(call(refusing.url, AGENT, "update_contact", arguments))
        assert answer["state"] == "written"
    _unvouched(refusing, friend)


def test_the_operator_takes_on_a_record_by_promoting_it(refusing: Served) -> None:
    stranger = _address("taken-on")
    contact_id = _create(refusing, stranger)
    _unvouched(refusing, stranger)
    assert "vouch" in _operator(refusing, "promote", contact_id)
    _queued(refusing, stranger)


def test_a_promotion_by_the_agent_vouches_no_more_than_the_collected_record_did(
    tmp_path: Path, smtp: SmtpServer
) -> None:
    for d in _served(tmp_path, smtp, 'VouchingContacts = "Asserted"'):
        seen = _address("seen")
        contact_id = _collected(d, seen)
        _unvouched(d, seen)
        promoted = structured(call(d.url, AGENT, "promote_contact", {"contactId": contact_id}))
        assert promoted["state"] == "written"
        _unvouched(d, seen)
        _operator(d, "promote", contact_id)
        _queued(d, seen)


def test_the_operator_may_let_what_callers_write_vouch(tmp_path: Path, smtp: SmtpServer) -> None:
    for d in _served(tmp_path, smtp, "CallerWrittenContactsVouch = true"):
        stranger = _address("allowed")
        _unvouched(d, stranger)
        _create(d, stranger)
        _queued(d, stranger)
