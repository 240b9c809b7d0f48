"""Mail between two local accounts of one deployment, delivered by the delivery pass without
any mail server, then synchronized and read like any other mail."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from log_audit import register_all
from mailfathom.app.reading.list_emails import TimelineRequest
from mailfathom.app.sending.reply_to_email import ReplyRequest
from mailfathom.app.sending.send_email import SendRequest
from mailfathom.app.shared.mailbox_selection import SelectionInput
from mailfathom.domain.codes import DeliveryCode
from mailfathom.domain.outgoing import RecipientState, Stage

from .helpers import AGENT, SendingDeployment
from .helpers import open_deployment as _open

PEER = """
[[Accounts]]
Id = "peer"
DisplayName = "Peer agent"
Kind = "local"
Addresses = ["peer@example.org"]

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[Accounts.Delivery]
Enabled = true
Address = "peer@example.org"
"""
SUBJECT = "Handing over the rota"


@pytest.fixture
def deployment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SendingDeployment]:
    register_all([SUBJECT, "peer@example.org", "outsider@example.net"])
    yield from _open(tmp_path, None, monkeypatch, extra_accounts=PEER)


def _subjects(d: SendingDeployment, account: str, folder: str) -> list[str | None]:
    page = d.services.reading().timeline.read(
        AGENT,
        TimelineRequest(selection=SelectionInput(accounts=[account], folders=[folder])),
    )
    return [e.subject for e in page.emails]


def _request(account: str, to: list[str], body: str, key: str) -> SendRequest:
    return SendRequest(
        account=account, to=to, subject=SUBJECT, plain_text_body=body, idempotency_key=key
    )


def _sync(d: SendingDeployment, account_id: str) -> None:
    account = d.services.config.account(account_id)
    assert account is not None
    d.services.account_synchronizer().run_once(account)


def test_a_message_to_a_peer_mailbox_lands_in_its_inbox_once(
    deployment: SendingDeployment,
) -> None:
    sending = deployment.services.sending()
    record = sending.send.send(
        AGENT,
        _request("work", ["PEER@example.org"], "The rota is yours from Monday.\n", "rota"),
    )
    deployment.services.delivery_pass().run_once()
    # A second pass (as after a crash) adds nothing.
    deployment.services.delivery_pass().run_once()
    after = sending.outgoing.read(AGENT, str(record.outgoing_id))
    assert after.stage is Stage.SENT
    assert [r.state for r in after.recipients] == [RecipientState.ACCEPTED]

    _sync(deployment, "peer")
    _sync(deployment, "work")
    assert _subjects(deployment, "peer", "INBOX") == [SUBJECT]
    assert _subjects(deployment, "work", "Sent") == [SUBJECT]


def test_an_outsider_without_a_submission_server_ends_as_no_route(
    deployment: SendingDeployment,
) -> None:
    sending = deployment.services.sending()
    record = sending.send.send(
        AGENT,
        _request("peer", ["outsider@example.net"], "Nobody can carry this.\n", "nowhere"),
    )
    deployment.services.delivery_pass().run_once()
    after = sending.outgoing.read(AGENT, str(record.outgoing_id))
    assert (after.stage, after.failure_code) == (Stage.FAILED, DeliveryCode.NO_ROUTE)
    assert [r.state for r in after.recipients] == [RecipientState.REFUSED]


def test_peers_reply_to_each_other_and_see_one_conversation(
    deployment: SendingDeployment,
) -> None:
    services = deployment.services
    sending = services.sending()
    sending.send.send(
        AGENT,
        _request("work", ["peer@example.org"], "The rota is yours from Monday.\n", "rota"),
    )
    services.delivery_pass().run_once()
    _sync(deployment, "peer")
    page = services.reading().timeline.read(
        AGENT, TimelineRequest(selection=SelectionInput(accounts=["peer"], folders=["INBOX"]))
    )
    (received,) = page.emails
    reply = sending.replies.reply(
        AGENT,
        ReplyRequest(
            stored_email_id=str(received.stored_email_id),
            everyone=False,
            plain_text_body="Thanks, I have it.",
            idempotency_key="rota-thanks",
        ),
    )
    assert [r.address for r in reply.recipients] == ["me@example.org"]
    services.delivery_pass().run_once()
    _sync(deployment, "work")

    def conversation(folder: str) -> list[tuple[str | None, object]]:
        listed = services.reading().timeline.read(
            AGENT, TimelineRequest(selection=SelectionInput(accounts=["work"], folders=[folder]))
        )
        return [(e.subject, e.thread_id) for e in listed.emails]

    ((answer_subject, answer_thread),) = conversation("INBOX")
    ((sent_subject, sent_thread),) = conversation("Sent")
    assert (answer_subject, sent_subject) == (f"Re: {SUBJECT}", SUBJECT)
    assert answer_thread == sent_thread
    assert answer_thread is not None


def test_a_peer_is_served_even_when_another_recipient_has_no_route(
    deployment: SendingDeployment,
) -> None:
    sending = deployment.services.sending()
    record = sending.send.send(
        AGENT,
        _request(
            "work",
            ["peer@example.org", "outsider@example.net"],
            "Half of this can be carried.\n",
            "half",
        ),
    )
    deployment.services.delivery_pass().run_once()
    after = sending.outgoing.read(AGENT, str(record.outgoing_id))
    assert (after.stage, after.failure_code) == (Stage.SENT, DeliveryCode.NO_ROUTE)
    assert [r.state for r in after.recipients] == [RecipientState.ACCEPTED, RecipientState.REFUSED]
    _sync(deployment, "peer")
    assert _subjects(deployment, "peer", "INBOX") == [SUBJECT]
