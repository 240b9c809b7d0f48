"""What the drafting use cases rely on from the draft store, on SQLite, PostgreSQL and the
in-memory fake alike:
a stable identifier across revisions, one draft per retry key under racing calls, changes of
life that cannot both win, and the copies a drafts folder still needs."""

from __future__ import annotations

import dataclasses
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql.drafts import SqlDraftStore
from mailfathom.adapters.sql.schema import drafts
from mailfathom.app.drafting.ports import DraftContent, NewDraft
from mailfathom.app.sending.ports import (
    AttemptResult,
    CeilingLimit,
    CeilingReached,
    DraftMovedOn,
    NewOutgoing,
    OutboxStore,
    PromotedDraft,
)
from mailfathom.domain.drafts import (
    Answering,
    CopyPlace,
    CopyState,
    DraftFile,
    DraftLife,
    DraftRecipient,
)
from mailfathom.domain.outgoing import (
    AddressField,
    OutgoingKind,
    OutgoingRecord,
    Recipient,
    Stage,
)
from store.conftest import Backend
from store.overlapping_writes import overlapped

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def _content(
    body: bytes = b"Subject: x\r\n\r\nbody\r\n",
    *,
    account: str = "acct",
    at: datetime = T0,
    recipients: tuple[DraftRecipient, ...] = (
        DraftRecipient(AddressField.TO, "a@example.net"),
        DraftRecipient(AddressField.CC, "b@example.net", written=False),
    ),
) -> DraftContent:
    return DraftContent(
        account_id=account,
        answering=None,
        answered_email_id=None,
        message_id="<d@example.org>",
        mime=body,
        body_characters=4,
        recipients=recipients,
        saved_at=at,
    )


def _new(key: str = "k1", **options: object) -> NewDraft:
    return NewDraft(uuid.uuid4(), "agent", key, _content(**options))  # type: ignore[arg-type]


def test_a_draft_is_written_at_revision_one_and_read_back(backend: Backend) -> None:
    store = backend.drafts()
    new = _new()
    draft, created = store.create(new)
    assert created
    assert draft.draft_id == new.draft_id
    assert draft.revision == 1
    assert draft.life is DraftLife.LIVE
    assert draft.copy_state is CopyState.HELD
    assert draft.saved_at == T0
    assert draft.mime == new.content.mime
    assert draft.recipients == new.content.recipients
    assert store.find(new.draft_id) == draft
    assert store.find(uuid.uuid4()) is None


def test_a_draft_lists_its_files_and_a_revision_replaces_them(backend: Backend) -> None:
    store = backend.drafts()
    files = (DraftFile("plan.pdf", 6_000_000_000), DraftFile(None, 0), DraftFile("a.txt", 3))
    new = _new()
    draft, _ = store.create(
        NewDraft(new.draft_id, "agent", "files", dataclasses.replace(new.content, files=files))
    )
    assert draft.files == files
    assert store.find(draft.draft_id) == draft
    revised = store.revise(draft.draft_id, _content(b"second"))
    assert revised is not None
    assert revised.files == ()
    again = store.revise(draft.draft_id, dataclasses.replace(_content(b"third"), files=files[2:]))
    assert again is not None
    assert again.files == files[2:]
    assert store.find(draft.draft_id) == again


def test_an_answer_keeps_what_it_answers(backend: Backend) -> None:
    store = backend.drafts()
    answered = uuid.uuid4()
    content = DraftContent(
        account_id="acct",
        answering=Answering.EVERYONE,
        answered_email_id=answered,
        message_id="<d@example.org>",
        mime=b"x",
        body_characters=1,
        recipients=(),
        saved_at=T0,
    )
    draft, _ = store.create(NewDraft(uuid.uuid4(), "agent", "k", content))
    assert (draft.answering, draft.answered_email_id, draft.recipients) == (
        Answering.EVERYONE,
        answered,
        (),
    )


def test_a_revision_keeps_the_identifier_and_counts_one(backend: Backend) -> None:
    store = backend.drafts()
    draft, _ = store.create(_new())
    later = T0 + timedelta(minutes=5)
    revised = store.revise(
        draft.draft_id,
        _content(b"second", at=later, recipients=(DraftRecipient(AddressField.BCC, "c@x.org"),)),
    )
    assert revised is not None
    assert (revised.draft_id, revised.revision, revised.mime, revised.saved_at) == (
        draft.draft_id,
        2,
        b"second",
        later,
    )
    assert revised.recipients == (DraftRecipient(AddressField.BCC, "c@x.org"),)
    # Another account never edits it, and a draft given up is edited by nobody.
    assert store.revise(draft.draft_id, _content(account="other")) is None
    assert store.mark_deleted(draft.draft_id, T0) is not None
    assert store.revise(draft.draft_id, _content()) is None
    assert store.mark_deleted(draft.draft_id, T0) is None


def test_a_write_naming_a_revision_applies_only_to_that_revision(backend: Backend) -> None:
    store = backend.drafts()
    draft, _ = store.create(_new())
    assert store.revise(draft.draft_id, _content(b"second"), revision=1) is not None
    assert store.revise(draft.draft_id, _content(b"stale"), revision=1) is None
    assert store.mark_deleted(draft.draft_id, T0, revision=1) is None
    held = store.find(draft.draft_id)
    assert held is not None
    assert (held.life, held.revision, held.mime) == (DraftLife.LIVE, 2, b"second")
    gone = store.mark_deleted(draft.draft_id, T0, revision=2)
    assert gone is not None
    assert gone.life is DraftLife.DELETED


def test_identical_saves_at_once_leave_one_draft(engine: sa.Engine) -> None:
    """The second save comes while the first has written its draft but not committed: it
    meets the key's unique constraint (or waits at SQLite's BEGIN) and answers that draft."""
    store = SqlDraftStore(engine)

    def save() -> tuple[uuid.UUID, bool]:
        draft, created = store.create(_new("same-key"))
        return draft.draft_id, created

    first, second = overlapped(engine, save, save, at=f"^INSERT INTO {drafts.name} ")
    assert isinstance(first, tuple)
    assert isinstance(second, tuple)
    assert (first[1], second[1]) == (True, False)
    assert second[0] == first[0]
    draft_id = first[0]
    assert [d.draft_id for d in store.copy_work("acct").to_file] == [draft_id]


def _send(key: str = "\x1fdraft") -> NewOutgoing:
    return NewOutgoing(
        outgoing_id=uuid.uuid4(),
        account_id="acct",
        idempotency_key=key,
        caller="agent",
        kind=OutgoingKind.NEW,
        queued_at=T0,
        not_before=T0,
        message_id="<d@example.org>",
        envelope_from="me@example.org",
        mime=b"x",
        recipients=(Recipient(AddressField.TO, "a@example.net"),),
    )


def _promote(
    outbox: OutboxStore,
    draft_id: uuid.UUID,
    revision: int,
    key: str = "\x1fdraft",
    **options: Any,
) -> OutgoingRecord | None:
    """The draft's send as the outbox writes it with the draft's mark; None when the draft
    had moved on."""
    try:
        record, _ = outbox.record(
            _send(key), options.get("ceilings", []), PromotedDraft(draft_id, revision)
        )
    except DraftMovedOn:
        return None
    return record


def _sends(outbox: OutboxStore, key: str | None = None) -> list[uuid.UUID]:
    """The sends the outbox holds (under `key`, when one is given)."""
    return [
        entry.record.outgoing_id
        for entry in outbox.listing(1000)
        if key is None or entry.idempotency_key == key
    ]


def test_a_deleted_draft_frees_its_key_and_a_sent_one_keeps_it(backend: Backend) -> None:
    store = backend.drafts()
    first, _ = store.create(_new("key"))
    store.mark_deleted(first.draft_id, T0)
    second, created = store.create(_new("key"))
    assert created
    assert second.draft_id != first.draft_id
    record = _promote(backend.outbox(), second.draft_id, 1)
    assert record is not None
    again, created = store.create(_new("key"))
    assert not created
    assert (again.draft_id, again.life, again.outgoing_id) == (
        second.draft_id,
        DraftLife.SENT,
        record.outgoing_id,
    )
    assert store.find_sent(record.outgoing_id) == again


def test_a_promotion_needs_the_revision_it_read_and_a_live_draft(backend: Backend) -> None:
    store, outbox = backend.drafts(), backend.outbox()
    draft, _ = store.create(_new())
    store.revise(draft.draft_id, _content(b"second"))
    assert _promote(outbox, draft.draft_id, 1, "rev 1") is None
    assert _sends(outbox) == []
    record = _promote(outbox, draft.draft_id, 2, "rev 2")
    assert record is not None
    # The same promotion again answers its send; any other writes nothing.
    assert _promote(outbox, draft.draft_id, 2, "rev 2") == record
    assert _promote(outbox, draft.draft_id, 2, "another") is None
    assert _sends(outbox) == [record.outgoing_id]
    assert store.mark_deleted(draft.draft_id, T0) is None
    sent = store.find(draft.draft_id)
    assert sent is not None
    assert (sent.life, sent.outgoing_id) == (DraftLife.SENT, record.outgoing_id)


def test_a_promotion_past_a_ceiling_writes_nothing_and_leaves_the_draft_live(
    backend: Backend,
) -> None:
    store, outbox = backend.drafts(), backend.outbox()
    draft, _ = store.create(_new())
    with pytest.raises(CeilingReached):
        _promote(outbox, draft.draft_id, 1, ceilings=[CeilingLimit("none", 0, 60)])
    assert _sends(outbox) == []
    held = store.find(draft.draft_id)
    assert held is not None
    assert (held.life, held.outgoing_id) == (DraftLife.LIVE, None)


def test_a_send_written_without_its_mark_is_the_draft_s_send_once_promoted(
    backend: Backend,
) -> None:
    """A send a stopped process wrote before the mark, when they were two steps."""
    store, outbox = backend.drafts(), backend.outbox()
    draft, _ = store.create(_new())
    written, _ = outbox.record(_send(), [])
    assert _promote(outbox, draft.draft_id, 1) == written
    marked = store.find(draft.draft_id)
    assert marked is not None
    assert (marked.life, marked.outgoing_id) == (DraftLife.SENT, written.outgoing_id)
    assert _sends(outbox) == [written.outgoing_id]


def test_racing_promotions_and_an_edit_leave_one_send_the_draft_names_or_none(
    backend: Backend,
) -> None:
    store, outbox = backend.drafts(), backend.outbox()
    outcomes: dict[str, int] = {}
    for round_ in range(6):
        draft, _ = store.create(_new(f"race {round_}"))
        key = f"\x1fdraft {draft.draft_id}"
        barrier = threading.Barrier(6)

        def promote(
            _: int, draft_id: uuid.UUID = draft.draft_id, barrier: threading.Barrier = barrier
        ) -> OutgoingRecord | None:
            barrier.wait()
            return _promote(outbox, draft_id, 1, f"\x1fdraft {draft_id}")

        def edit(
            draft_id: uuid.UUID = draft.draft_id, barrier: threading.Barrier = barrier
        ) -> bool:
            barrier.wait()
            return store.revise(draft_id, _content(b"edited")) is not None

        with ThreadPoolExecutor(max_workers=6) as pool:
            edited = pool.submit(edit)
            answers = list(pool.map(promote, range(5)))
        after = store.find(draft.draft_id)
        assert after is not None
        sends = _sends(outbox, key)
        if edited.result():
            # The edit came first: no promotion wrote anything.
            assert answers == [None] * 5
            assert sends == []
            assert (after.life, after.revision) == (DraftLife.LIVE, 2)
        else:
            # A promotion came first: one send, which every promotion answers and the
            # draft names.
            assert sends == [after.outgoing_id]
            assert {a.outgoing_id if a else None for a in answers} == {after.outgoing_id}
            assert (after.life, after.revision) == (DraftLife.SENT, 1)
        first = "edit" if edited.result() else "promotion"
        outcomes[first] = outcomes.get(first, 0) + 1
    print(f"first: {outcomes}")


def test_copies_say_what_the_folder_still_needs(backend: Backend) -> None:
    store, outbox = backend.drafts(), backend.outbox()
    held, _ = store.create(_new("held"))
    edited, _ = store.create(_new("edited"))
    gone, _ = store.create(_new("gone"))
    sent, _ = store.create(_new("sent"))
    elsewhere, _ = store.create(_new("elsewhere", account="other"))
    place = CopyPlace("Drafts", 7, 1)
    for n, draft in enumerate((edited, gone, sent, elsewhere), start=1):
        store.record_copy(draft.draft_id, 1, CopyPlace("Drafts", 7, n))
    store.record_copy(edited.draft_id, 1, place)  # recorded twice: one copy
    store.revise(edited.draft_id, _content(b"second"))
    store.mark_deleted(gone.draft_id, T0)
    record = _promote(outbox, sent.draft_id, 1)
    assert record is not None

    work = store.copy_work("acct")
    # The edited draft's new revision has no copy; the held one never had one.
    assert [d.draft_id for d in work.to_file] == [held.draft_id, edited.draft_id]
    # The superseded copy and the copy of the draft given up go; the sent draft's copy stays
    # until its message has actually been delivered.
    assert work.to_remove == (
        (edited.draft_id, 1, place),
        (gone.draft_id, 1, CopyPlace("Drafts", 7, 2)),
    )
    (claimed,) = outbox.claim("w", T0, 60, 10)
    assert claimed.outgoing_id == record.outgoing_id
    outbox.finish(claimed.seq, "w", AttemptResult(Stage.SENT, claimed.recipients), T0)
    assert store.copy_work("acct").to_remove[-1] == (sent.draft_id, 1, CopyPlace("Drafts", 7, 3))

    store.forget_copy(gone.draft_id, 1)
    assert gone.draft_id not in {d for d, _, _ in store.copy_work("acct").to_remove}
    filed = store.find(held.draft_id)
    assert filed is not None
    assert filed.copy_state is CopyState.HELD
    store.record_copy(held.draft_id, 1, CopyPlace("Drafts", 7, 9))
    now_filed = store.find(held.draft_id)
    assert now_filed is not None
    assert now_filed.copy_state is CopyState.FILED


def test_one_claim_to_file_a_copy_at_a_time_and_a_lapsed_one_is_taken_again(
    engine: sa.Engine,
) -> None:
    """The second claim comes while the first's is written but not committed: it waits for
    it, and then finds the copy claimed."""
    store = SqlDraftStore(engine)
    draft, _ = store.create(_new())
    until = T0 + timedelta(minutes=5)

    def claim() -> bool:
        return store.claim_filing(draft.draft_id, T0, until)

    assert overlapped(engine, claim, claim, at=rf"^UPDATE {drafts.name} SET filing_until=") == (
        True,
        False,
    )
    assert not store.claim_filing(draft.draft_id, T0 + timedelta(minutes=4), until)
    # A holder that never released it (a crash) holds it only until it lapses.
    assert store.claim_filing(draft.draft_id, until, until + timedelta(minutes=5))
    store.release_filing(draft.draft_id)
    assert store.claim_filing(draft.draft_id, T0, until)
