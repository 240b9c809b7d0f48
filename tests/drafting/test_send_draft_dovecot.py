"""A draft saved, edited and sent: the recipient receives one message, the owner's Sent folder
holds one, and the drafts folder none, read back with an independent IMAP client."""

from __future__ import annotations

import email
import email.policy
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from drafting.helpers import AGENT, PEER, Drafting, open_drafting
from log_audit import register_all
from mailfathom.adapters.sql.drafts import SqlDraftStore
from mailfathom.adapters.sql.schema import folders, messages
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.domain.codes import Code
from mailfathom.domain.drafts import CopyState
from mailfathom.domain.errors import Refusal
from mailfathom.domain.outgoing import Stage
from peer_copies import as_sent
from servers.dovecot import ImapAccount

SUBJECT = "Minutes of the allotment meeting"


def _request(body: str) -> DraftRequest:
    register_all([SUBJECT, body])
    return DraftRequest(plain_text_body=body, account="work", subject=SUBJECT, to=[PEER])


@pytest.fixture
def drafting(tmp_path: Path, imap_account: ImapAccount) -> Iterator[Drafting]:
    yield from open_drafting(tmp_path, imap_account)


def _stored_in(d: Drafting, role: str) -> list[str]:
    """Message-IDs the store holds in the work account's folder of that role."""
    with d.services.engine.connect() as c:
        return list(
            c.execute(
                sa.select(messages.c.message_id_header)
                .join(folders, folders.c.folder_id == messages.c.folder_id)
                .where(folders.c.account_id == "work", folders.c.role == role)
            ).scalars()
        )


def test_a_draft_edited_three_times_and_sent_arrives_once_and_leaves_drafts(
    drafting: Drafting,
) -> None:
    uses = drafting.services.drafting()
    saved = uses.save.save(AGENT, _request("First notes from the meeting."))
    for n in range(3):
        uses.update.update(AGENT, str(saved.draft_id), _request(f"Notes, version {n + 2}."))
    drafting.sync()
    (draft_copy,) = drafting.folder_messages("Drafts")
    # The store holds the copy as the one email of the drafts folder, under the draft's
    # own Message-ID: the mailbox's view of the draft, never a second draft.
    draft = SqlDraftStore(drafting.services.engine).find(saved.draft_id)
    assert draft is not None
    assert draft_copy == draft.mime
    assert _stored_in(drafting, "Drafts") == [draft.message_id.strip("<>")]

    record = uses.send.send(AGENT, str(saved.draft_id))
    assert record.stage is Stage.QUEUED
    assert [r.address for r in record.recipients] == [PEER]
    # The copy stays until the message has been delivered.
    assert len(drafting.folder_uids("Drafts")) == 1
    assert uses.send.send(AGENT, str(saved.draft_id)) == record  # a repeat sends nothing

    report = drafting.services.delivery_pass().run_once()
    assert report.sent == 1
    assert drafting.folder_uids("Drafts") == []
    (sent_copy,) = drafting.folder_messages("Sent")
    inbox = drafting.services.connectors.local.folder("peer", "INBOX")
    _, received = inbox.scan()
    assert len(received) == 1
    arrived = next(iter(received.values())).read_bytes()
    # The bytes sent are the draft's bytes: the last version, unchanged (the peer's copy below
    # the field the deployment adds as it delivers; the IMAP Sent copy as it is).
    assert as_sent(arrived, draft.mime)
    assert sent_copy == draft.mime
    parsed = email.message_from_bytes(sent_copy, policy=email.policy.default)
    assert "Notes, version 4." in parsed.get_body(("plain",)).get_content()  # type: ignore[union-attr]

    with pytest.raises(Refusal) as edited:
        uses.update.update(AGENT, str(saved.draft_id), _request("Too late."))
    assert edited.value.code == Code.DRAFT_NOT_HELD
    with pytest.raises(Refusal) as deleted:
        uses.delete.delete(AGENT, str(saved.draft_id))
    assert deleted.value.code == Code.DRAFT_NOT_HELD

    drafting.sync()
    assert _stored_in(drafting, "Drafts") == []
    assert _stored_in(drafting, "Sent") == [draft.message_id.strip("<>")]


def test_a_repeated_save_answers_the_draft_and_after_sending_claims_none(
    drafting: Drafting,
) -> None:
    uses = drafting.services.drafting()
    first = uses.save.save(AGENT, _request("Agenda:\r\n- compost  \r\n"))
    # The same text through another transport's line handling is the same draft.
    repeat = uses.save.save(AGENT, _request("Agenda:\n- compost\n\n"))
    assert repeat.draft_id == first.draft_id
    assert not repeat.already_sent
    assert repeat.state is CopyState.FILED
    assert len(drafting.folder_uids("Drafts")) == 1

    record = uses.send.send(AGENT, str(first.draft_id))
    after = uses.save.save(AGENT, _request("Agenda:\n- compost"))
    assert after.draft_id == first.draft_id
    assert after.already_sent
    assert after.outgoing_id == record.outgoing_id
    assert len(drafting.folder_uids("Drafts")) == 1
    # A different body is a different draft.
    other = uses.save.save(AGENT, _request("Agenda:\n- compost\n- seeds"))
    assert other.draft_id != first.draft_id
    assert len(drafting.folder_uids("Drafts")) == 2
