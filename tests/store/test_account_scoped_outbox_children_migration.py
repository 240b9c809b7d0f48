"""Revision 0033 copies `account_id` into the children of the outbox and the drafts from
their parent: with two accounts whose sends' and drafts' `seq`s interleave, every recipient,
file and copy row gets its own parent's account and none is lost. SQLite rebuilds the tables,
PostgreSQL updates them in place; both run."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.drafts import SqlDraftStore
from mailfathom.adapters.sql.outbox import SqlOutbox
from mailfathom.app.drafting.ports import DraftContent, NewDraft
from mailfathom.app.sending.ports import NewOutgoing
from mailfathom.domain.drafts import CopyPlace, DraftFile, DraftRecipient
from mailfathom.domain.outgoing import AddressField, OutgoingKind, Recipient

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
BEFORE = "0032_lease_holder_process"
# Each child, its parent and the column naming the parent's `seq`.
CHILDREN = (
    ("outgoing_recipients", "outgoing_emails", "outgoing_seq"),
    ("draft_recipients", "drafts", "draft_seq"),
    ("draft_files", "drafts", "draft_seq"),
    ("draft_copies", "drafts", "draft_seq"),
)


def _send(account: str, number: int) -> NewOutgoing:
    return NewOutgoing(
        outgoing_id=uuid.uuid4(),
        account_id=account,
        idempotency_key=f"key-{number}",
        caller="agent",
        kind=OutgoingKind.NEW,
        queued_at=NOW,
        not_before=NOW,
        message_id=f"<{account}-{number}@example.org>",
        envelope_from=f"{account}@example.org",
        mime=b"Subject: x\r\n\r\nbody\r\n",
        recipients=(
            Recipient(AddressField.TO, f"to-{number}@example.net"),
            Recipient(AddressField.CC, f"cc-{number}@example.net"),
        ),
    )


def _draft(account: str, number: int) -> NewDraft:
    content = DraftContent(
        account_id=account,
        answering=None,
        answered_email_id=None,
        message_id=f"<draft-{account}-{number}@example.org>",
        mime=b"Subject: d\r\n\r\nbody\r\n",
        body_characters=4,
        recipients=(DraftRecipient(AddressField.TO, f"to-{number}@example.net"),),
        saved_at=NOW,
        files=(DraftFile(f"file-{number}.pdf", 10 * number),),
    )
    return NewDraft(
        draft_id=uuid.uuid4(), caller="agent", retry_key=f"{account}-{number}", content=content
    )


def _owners(engine: sa.Engine, child: str, parent: str, key: str) -> list[tuple[int, str, str]]:
    """(the parent's `seq`, the row's account, the parent's account) for each row of
    `child`."""
    with engine.connect() as c:
        rows = c.execute(
            sa.text(
                f"SELECT c.{key}, c.account_id, p.account_id FROM {child} c "
                f"JOIN {parent} p ON p.seq = c.{key}"
            )
        )
        return sorted((int(seq), str(own), str(theirs)) for seq, own, theirs in rows)


def test_0033_gives_each_outbox_and_draft_child_its_parents_account(engine: sa.Engine) -> None:
    outbox, drafts = SqlOutbox(engine), SqlDraftStore(engine)
    for number in range(1, 4):
        for account in ("alpha", "beta"):
            outbox.record(_send(account, number), [])
            draft, _ = drafts.create(_draft(account, number))
            drafts.record_copy(draft.draft_id, 1, CopyPlace("Drafts", 7, 10 + number))
    before = {child: _owners(engine, child, parent, key) for child, parent, key in CHILDREN}
    assert all(len({own for _, own, _ in rows}) == 2 for rows in before.values())

    migrate.downgrade(engine, BEFORE)
    with engine.connect() as c:
        for child, _, _ in CHILDREN:
            columns = {col["name"] for col in sa.inspect(c).get_columns(child)}
            assert "account_id" not in columns, child
    migrate.upgrade(engine)

    for child, parent, key in CHILDREN:
        after = _owners(engine, child, parent, key)
        assert after == before[child], child
        assert all(own == theirs for _, own, theirs in after), child
