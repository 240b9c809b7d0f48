"""The note a draft store keeps of an APPEND sent and not answered, on SQLite, PostgreSQL and
the in-memory fake alike: written before the APPEND, cleared with the copy it found (or
without one), listed for the account's next pass whatever became of the draft, and (on the
SQL stores) a migration that comes and goes without touching anything else a draft holds."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.drafts import SqlDraftStore
from mailfathom.app.drafting.ports import DraftContent, DraftStore, NewDraft
from mailfathom.domain.drafts import (
    AppendMark,
    CopyPlace,
    CopyState,
    Draft,
    DraftRecipient,
    PendingAppend,
)
from mailfathom.domain.outgoing import AddressField
from store.conftest import Backend

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
MARK = AppendMark("Drafts", 1700000000, 41)


def _content(account: str = "acct", body: bytes = b"body") -> DraftContent:
    return DraftContent(
        account_id=account,
        answering=None,
        answered_email_id=None,
        message_id="<d@example.org>",
        mime=b"Subject: x\r\n\r\n" + body + b"\r\n",
        body_characters=len(body),
        recipients=(DraftRecipient(AddressField.TO, "a@example.net"),),
        saved_at=T0,
    )


def _draft(store: DraftStore, account: str = "acct") -> Draft:
    new = NewDraft(uuid.uuid4(), "agent", uuid.uuid4().hex, _content(account))
    draft, _ = store.create(new)
    return draft


def _found(store: DraftStore, draft: Draft) -> Draft:
    found = store.find(draft.draft_id)
    assert found is not None
    return found


def test_a_noted_append_is_read_back_and_listed_for_the_pass(backend: Backend) -> None:
    store = backend.drafts()
    draft, other = _draft(store), _draft(store, "other")
    assert _found(store, draft).pending_append is None
    store.note_append(draft.draft_id, PendingAppend(1, MARK))
    store.note_append(other.draft_id, PendingAppend(1, MARK))
    assert _found(store, draft).pending_append == PendingAppend(1, MARK)
    assert [d.draft_id for d in store.copy_work("acct").to_settle] == [draft.draft_id]
    # Given up, the draft is still listed: its lost copy is to be found and taken out.
    assert store.mark_deleted(draft.draft_id, T0) is not None
    assert [d.draft_id for d in store.copy_work("acct").to_settle] == [draft.draft_id]


def test_settling_records_the_copy_found_and_clears_the_note(backend: Backend) -> None:
    store = backend.drafts()
    draft = _draft(store)
    store.note_append(draft.draft_id, PendingAppend(1, MARK))
    place = CopyPlace("Drafts", MARK.uidvalidity, 43)
    store.settle_append(draft.draft_id, 1, place)
    settled = _found(store, draft)
    assert settled.pending_append is None
    assert settled.copy_state is CopyState.FILED
    assert [c.place for c in settled.copies] == [place]
    assert store.copy_work("acct").to_settle == ()
    store.settle_append(draft.draft_id, 1, place)
    assert _found(store, draft) == settled


def test_settling_without_a_copy_clears_only_that_revisions_note(backend: Backend) -> None:
    store = backend.drafts()
    draft = _draft(store)
    store.note_append(draft.draft_id, PendingAppend(2, MARK))
    store.settle_append(draft.draft_id, 1, None)
    assert _found(store, draft).pending_append == PendingAppend(2, MARK)
    store.settle_append(draft.draft_id, 2, None)
    settled = _found(store, draft)
    assert settled.pending_append is None
    assert settled.copies == ()


def test_a_later_note_replaces_an_earlier_one_and_an_edit_keeps_it(backend: Backend) -> None:
    store = backend.drafts()
    first, second = _draft(store), _draft(store)
    store.note_append(second.draft_id, PendingAppend(1, MARK))
    store.note_append(first.draft_id, PendingAppend(1, MARK))
    later = AppendMark("Drafts", MARK.uidvalidity, 50)
    store.note_append(first.draft_id, PendingAppend(1, later))
    store.note_append(uuid.uuid4(), PendingAppend(1, MARK))
    edited = store.revise(first.draft_id, _content(body=b"edited"))
    assert edited is not None
    assert edited.revision == 2
    assert edited.pending_append == PendingAppend(1, later)
    # Listed in the order the drafts were written, as the pass finds them.
    work = store.copy_work("acct")
    assert [d.draft_id for d in work.to_settle] == [first.draft_id, second.draft_id]
    assert work.to_settle[0] == _found(store, first)


def test_a_copy_found_for_an_edited_revision_is_taken_out_not_filed(backend: Backend) -> None:
    store = backend.drafts()
    draft = _draft(store)
    store.note_append(draft.draft_id, PendingAppend(1, MARK))
    assert store.revise(draft.draft_id, _content(body=b"edited")) is not None
    place = CopyPlace("Drafts", MARK.uidvalidity, 42)
    store.settle_append(draft.draft_id, 1, place)
    settled = _found(store, draft)
    assert settled.pending_append is None
    assert settled.copy_state is CopyState.HELD
    work = store.copy_work("acct")
    assert work.to_remove == ((draft.draft_id, 1, place),)
    assert [d.draft_id for d in work.to_file] == [draft.draft_id]
    assert work.to_settle == ()


def test_the_migration_goes_down_and_up_keeping_every_draft_whole(engine: sa.Engine) -> None:
    store = SqlDraftStore(engine)
    draft = _draft(store)
    store.record_copy(draft.draft_id, 1, CopyPlace("Drafts", MARK.uidvalidity, 7))
    store.note_append(draft.draft_id, PendingAppend(1, MARK))
    whole = _found(store, draft)
    migrate.downgrade(engine, "0015_contact_vouching")
    columns = {c["name"] for c in sa.inspect(engine).get_columns("drafts")}
    assert not columns & {"append_revision", "append_folder", "append_uidvalidity"}
    migrate.upgrade(engine)
    back = _found(store, draft)
    assert back.pending_append is None
    assert (back.recipients, back.copies, back.mime) == (whole.recipients, whole.copies, whole.mime)
