"""A sending call repeated with its idempotencyKey after the first one kept the message as a
draft (nobody could be asked), over Streamable HTTP with the official client, both from a
client that cannot be asked and from one that can.

The repeat answers what became of that draft, before anybody is asked: the first record once
the draft was sent, the draft while it is held, nothing sent once the owner deleted it. It
never asks the person again, never raises a second alert and never writes a second send. A
send_draft or delete_draft of the kept draft dismisses its alert: nothing is left to decide.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from mailfathom.adapters.sql.drafts import SqlDraftStore
from mailfathom.domain.drafts import DraftLife
from mcp_tests.client import structured
from sending.helpers import SMTP_PASSWORD, SMTP_USER
from servers.dovecot import DovecotServer
from servers.smtp import SmtpServer

from .served import Served, serve
from .test_confirmation_http import (
    BODY,
    MODES,
    Person,
    _alerts_of,
    _call,
    _outbox_keys,
    _send_arguments,
    _stored_email_id,
    choosing,
)

TOOLS = ["send_email", "reply_to_email", "forward_email"]
# A client that cannot be asked (None) and one whose person would send if asked.
CLIENTS = ["unaskable", "askable"]


@pytest.fixture(scope="module")
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


@pytest.fixture(scope="module")
def served(
    dovecot: DovecotServer, smtp: SmtpServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    suffix = uuid.uuid4().hex[:10]
    account = dovecot.add_user(f"kept-{suffix}", f"pw-{suffix}")
    yield from serve(tmp_path_factory.mktemp("kept-sends"), account, smtp)


def _arguments(served: Served, tool: str) -> dict[str, Any]:
    if tool == "send_email":
        return _send_arguments("en")
    common = {"plainTextBody": BODY, "idempotencyKey": uuid.uuid4().hex}
    if tool == "reply_to_email":
        return {"storedEmailId": _stored_email_id(served), "audience": "senderOnly", **common}
    return {"storedEmailId": _stored_email_id(served), "to": ["friend@example.org"], **common}


def _kept(served: Served, tool: str, mode: str) -> tuple[dict[str, Any], str]:
    """The call made from a client that cannot be asked: kept as a draft, one alert."""
    arguments = _arguments(served, tool)
    first = structured(_call(served, tool, arguments, mode, None))
    assert (first["status"], first["reason"]) == ("draft", "confirmation_unavailable")
    draft_id = str(first["draftId"])
    assert len(_alerts_of(served, draft_id)) == 1
    return arguments, draft_id


def _drafts_and_sends(served: Served) -> tuple[int, int]:
    with served.services() as services, services.engine.connect() as connection:
        drafts = connection.exec_driver_sql("SELECT count(*) FROM drafts").scalar_one()
        sends = connection.exec_driver_sql("SELECT count(*) FROM outgoing_emails").scalar_one()
    return int(drafts), int(sends)


def _repeat(
    served: Served, tool: str, arguments: dict[str, Any], mode: str, client: str
) -> tuple[dict[str, Any], Person]:
    person = Person(choosing("send"))
    answer = structured(
        _call(served, tool, arguments, mode, person if client == "askable" else None)
    )
    return answer, person


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tool", TOOLS)
def test_a_repeat_after_the_kept_draft_was_sent_answers_that_send(
    served: Served, tool: str, mode: str, client: str
) -> None:
    arguments, draft_id = _kept(served, tool, mode)
    sent = structured(_call(served, "send_draft", {"draftId": draft_id}, mode, None, key="plain"))
    assert sent["status"] == "queued"
    before = _drafts_and_sends(served)

    again, person = _repeat(served, tool, arguments, mode, client)

    assert (again["status"], again["outgoingEmailId"]) == ("queued", sent["outgoingEmailId"])
    assert (again["draftId"], again["reason"]) == (None, None)
    assert person.asked == []
    assert _drafts_and_sends(served) == before
    assert arguments["idempotencyKey"] not in _outbox_keys(served)
    (alert,) = _alerts_of(served, draft_id)
    assert alert.dismissed_at is not None, "a draft sent waits for nobody"


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("tool", TOOLS)
def test_a_repeat_while_the_kept_draft_is_held_answers_that_draft(
    served: Served, tool: str, client: str
) -> None:
    arguments, draft_id = _kept(served, tool, MODES[0])
    before = _drafts_and_sends(served)

    again, person = _repeat(served, tool, arguments, MODES[0], client)

    assert (again["status"], again["sent"], again["draftId"], again["reason"]) == (
        "draft",
        False,
        draft_id,
        "confirmation_unavailable",
    )
    assert person.asked == []
    assert _drafts_and_sends(served) == before
    assert len(_alerts_of(served, draft_id)) == 1


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("tool", TOOLS)
def test_a_repeat_after_the_owner_deleted_the_kept_draft_sends_nothing(
    served: Served, tool: str, client: str
) -> None:
    arguments, draft_id = _kept(served, tool, MODES[0])
    deleted = _call(served, "delete_draft", {"draftId": draft_id}, MODES[0], None, key="plain")
    assert not deleted.is_error
    before = _drafts_and_sends(served)

    again, person = _repeat(served, tool, arguments, MODES[0], client)

    assert (again["status"], again["sent"], again["draftId"]) == ("cancelled", False, None)
    assert person.asked == []
    assert _drafts_and_sends(served) == before
    (alert,) = _alerts_of(served, draft_id)
    assert alert.dismissed_at is not None, "a draft given up waits for nobody"
    with served.services() as services:
        draft = SqlDraftStore(services.engine).find(uuid.UUID(draft_id))
    assert draft is not None
    assert draft.life is DraftLife.DELETED
