"""Drafts on SQLite and PostgreSQL: `DraftStore`.

Every change of a draft's life is one conditional UPDATE naming the life it changes from, so a
deletion, an edit and a promotion racing each other cannot all win. A promotion's UPDATE runs in
the outbox's transaction that writes the send (`mark_promoted`), so the two stand or fall
together.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql.owner_alerts import dismiss_with_draft
from mailfathom.adapters.sql.schema import (
    draft_copies,
    draft_files,
    draft_recipients,
    drafts,
    outgoing_emails,
)
from mailfathom.app.drafting.ports import CopyWork, DraftContent, NewDraft
from mailfathom.app.sending.ports import PromotedDraft
from mailfathom.domain.drafts import (
    FIRST_REVISION,
    Answering,
    AppendMark,
    CopyPlace,
    Draft,
    DraftCopy,
    DraftFile,
    DraftLife,
    DraftRecipient,
    PendingAppend,
)
from mailfathom.domain.outgoing import AddressField, Stage

_D = drafts.c
_R = draft_recipients.c
_C = draft_copies.c
_F = draft_files.c
_O = outgoing_emails.c


_APPEND_COLUMNS = ("append_revision", "append_folder", "append_uidvalidity", "append_since_uid")

# A draft's row as its children are keyed: its account and its `seq`.
_Held = tuple[str, int]


def _held(row: Any) -> _Held | None:
    return None if row is None else (str(row.account_id), int(row.seq))


def _put_copy(c: sa.Connection, held: _Held, revision: int, place: CopyPlace) -> None:
    account_id, seq = held
    c.execute(
        sa.delete(draft_copies).where(
            _C.account_id == account_id, _C.draft_seq == seq, _C.revision == revision
        )
    )
    c.execute(
        sa.insert(draft_copies),
        {
            "account_id": account_id,
            "draft_seq": seq,
            "revision": revision,
            "folder": place.folder,
            "uidvalidity": place.uidvalidity,
            "uid": place.uid,
        },
    )


def _content_values(content: DraftContent) -> dict[str, Any]:
    return {
        "account_id": content.account_id,
        "answering": content.answering.value if content.answering else None,
        "answered_email_id": content.answered_email_id,
        "message_id_header": content.message_id,
        "mime": content.mime,
        "body_characters": content.body_characters,
        "saved_at": content.saved_at,
    }


def mark_promoted(
    c: sa.Connection, promoted: PromotedDraft, outgoing_id: uuid.UUID, at: datetime
) -> bool:
    """Mark the draft, live at the promoted revision, sent as `outgoing_id` and dismiss its
    owner alert as of `at`, within the outbox's transaction that writes that send
    (`SqlOutbox.record`); False otherwise."""
    changed = c.execute(
        sa.update(drafts)
        .where(
            _D.draft_id == promoted.draft_id,
            _D.life == DraftLife.LIVE.value,
            _D.revision == promoted.revision,
        )
        .values(life=DraftLife.SENT.value, outgoing_id=outgoing_id)
    ).rowcount
    if changed == 1:
        dismiss_with_draft(c, promoted.draft_id, at)
    return changed == 1


def _of_draft(child: Any) -> sa.ColumnElement[bool]:
    """`child`'s row (a recipient, file or copy) belongs to the draft: its account and `seq`
    both, so a join names the account on each side."""
    return sa.and_(child.account_id == _D.account_id, child.draft_seq == _D.seq)


def _at_revision(revision: int | None) -> sa.ColumnElement[bool]:
    """The draft is still at `revision` (any revision when None)."""
    return sa.true() if revision is None else _D.revision == revision


class SqlDraftStore:
    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine

    def create(self, new: NewDraft) -> tuple[Draft, bool]:
        try:
            with self._engine.begin() as c:
                existing = self._seq_of_key(c, new.retry_key)
                if existing is not None:
                    return self._load(c, existing), False
                seq = c.execute(
                    sa.insert(drafts).returning(_D.seq),
                    {
                        **_content_values(new.content),
                        "draft_id": new.draft_id,
                        "caller": new.caller,
                        "revision": FIRST_REVISION,
                        "life": DraftLife.LIVE.value,
                        "retry_key": new.retry_key,
                    },
                ).scalar_one()
                self._write_lists(c, (new.content.account_id, int(seq)), new.content)
                return self._load(c, int(seq)), True
        except sa.exc.IntegrityError:
            # An identical call wrote the same key first; its draft is the answer.
            with self._engine.connect() as c:
                found = self._seq_of_key(c, new.retry_key)
                if found is None:
                    raise
                return self._load(c, found), False

    @staticmethod
    def _seq_of_key(c: sa.Connection, key: str) -> int | None:
        found = c.execute(sa.select(_D.seq).where(_D.retry_key == key)).scalar_one_or_none()
        return None if found is None else int(found)

    @staticmethod
    def _write_lists(c: sa.Connection, held: _Held, content: DraftContent) -> None:
        account_id, seq = held
        c.execute(
            sa.delete(draft_recipients).where(_R.account_id == account_id, _R.draft_seq == seq)
        )
        if content.recipients:
            c.execute(
                sa.insert(draft_recipients),
                [
                    {
                        "account_id": account_id,
                        "draft_seq": seq,
                        "position": position,
                        "field": r.field.value,
                        "address": r.address,
                        "written": r.written,
                    }
                    for position, r in enumerate(content.recipients)
                ],
            )
        c.execute(sa.delete(draft_files).where(_F.account_id == account_id, _F.draft_seq == seq))
        if content.files:
            c.execute(
                sa.insert(draft_files),
                [
                    {
                        "account_id": account_id,
                        "draft_seq": seq,
                        "position": position,
                        "file_name": f.file_name,
                        "size_octets": f.size_octets,
                    }
                    for position, f in enumerate(content.files)
                ],
            )

    def find(self, draft_id: uuid.UUID) -> Draft | None:
        with self._engine.connect() as c:
            seq = c.execute(sa.select(_D.seq).where(_D.draft_id == draft_id)).scalar_one_or_none()
            return None if seq is None else self._load(c, int(seq))

    def find_sent(self, outgoing_id: uuid.UUID) -> Draft | None:
        with self._engine.connect() as c:
            seq = c.execute(
                sa.select(_D.seq).where(_D.outgoing_id == outgoing_id)
            ).scalar_one_or_none()
            return None if seq is None else self._load(c, int(seq))

    def revise(
        self, draft_id: uuid.UUID, content: DraftContent, revision: int | None = None
    ) -> Draft | None:
        with self._engine.begin() as c:
            seq = c.execute(
                sa.update(drafts)
                .where(
                    _D.draft_id == draft_id,
                    _D.life == DraftLife.LIVE.value,
                    _D.account_id == content.account_id,
                    _at_revision(revision),
                )
                .values(**_content_values(content), revision=_D.revision + 1)
                .returning(_D.seq)
            ).scalar_one_or_none()
            if seq is None:
                return None
            self._write_lists(c, (content.account_id, int(seq)), content)
            return self._load(c, int(seq))

    def mark_deleted(
        self, draft_id: uuid.UUID, at: datetime, revision: int | None = None
    ) -> Draft | None:
        with self._engine.begin() as c:
            seq = c.execute(
                sa.update(drafts)
                .where(
                    _D.draft_id == draft_id,
                    _D.life == DraftLife.LIVE.value,
                    _at_revision(revision),
                )
                .values(life=DraftLife.DELETED.value, retry_key=None)
                .returning(_D.seq)
            ).scalar_one_or_none()
            if seq is None:
                return None
            dismiss_with_draft(c, draft_id, at)
            return self._load(c, int(seq))

    def claim_filing(self, draft_id: uuid.UUID, now: datetime, until: datetime) -> bool:
        with self._engine.begin() as c:
            taken = c.execute(
                sa.update(drafts)
                .where(
                    _D.draft_id == draft_id,
                    sa.or_(_D.filing_until.is_(None), _D.filing_until <= now),
                )
                .values(filing_until=until)
            ).rowcount
        return taken == 1

    def release_filing(self, draft_id: uuid.UUID) -> None:
        with self._engine.begin() as c:
            c.execute(sa.update(drafts).where(_D.draft_id == draft_id).values(filing_until=None))

    @staticmethod
    def _held(c: sa.Connection, draft_id: uuid.UUID) -> _Held | None:
        return _held(
            c.execute(sa.select(_D.account_id, _D.seq).where(_D.draft_id == draft_id)).first()
        )

    def record_copy(self, draft_id: uuid.UUID, revision: int, place: CopyPlace) -> None:
        with self._engine.begin() as c:
            held = self._held(c, draft_id)
            if held is not None:
                _put_copy(c, held, revision, place)

    def note_append(self, draft_id: uuid.UUID, pending: PendingAppend) -> None:
        with self._engine.begin() as c:
            c.execute(
                sa.update(drafts)
                .where(_D.draft_id == draft_id)
                .values(
                    append_revision=pending.revision,
                    append_folder=pending.mark.folder,
                    append_uidvalidity=pending.mark.uidvalidity,
                    append_since_uid=pending.mark.since_uid,
                )
            )

    def settle_append(self, draft_id: uuid.UUID, revision: int, place: CopyPlace | None) -> None:
        with self._engine.begin() as c:
            held = self._held(c, draft_id)
            if held is None:
                return
            if place is not None:
                _put_copy(c, held, revision, place)
            c.execute(
                sa.update(drafts)
                .where(_D.seq == held[1], _D.append_revision == revision)
                .values(dict.fromkeys(_APPEND_COLUMNS))
            )

    def forget_copy(self, draft_id: uuid.UUID, revision: int) -> None:
        with self._engine.begin() as c:
            held = self._held(c, draft_id)
            if held is not None:
                account_id, seq = held
                c.execute(
                    sa.delete(draft_copies).where(
                        _C.account_id == account_id,
                        _C.draft_seq == seq,
                        _C.revision == revision,
                    )
                )

    def copy_work(self, account_id: str) -> CopyWork:
        with self._engine.connect() as c:
            filed = sa.exists().where(_of_draft(_C), _C.revision == _D.revision)
            unfiled = c.execute(
                sa.select(_D.seq)
                .where(_D.account_id == account_id, _D.life == DraftLife.LIVE.value, ~filed)
                .order_by(_D.seq)
            ).scalars()
            to_file = tuple(self._load(c, int(seq)) for seq in list(unfiled))
            delivered = sa.exists().where(
                _O.outgoing_id == _D.outgoing_id, _O.stage == Stage.SENT.value
            )
            rows = c.execute(
                sa.select(_D.draft_id, _C.revision, _C.folder, _C.uidvalidity, _C.uid)
                .join(draft_copies, _of_draft(_C))
                .where(
                    _D.account_id == account_id,
                    sa.or_(
                        _C.revision != _D.revision,
                        _D.life == DraftLife.DELETED.value,
                        sa.and_(_D.life == DraftLife.SENT.value, delivered),
                    ),
                )
                .order_by(_D.seq, _C.revision)
            )
            to_remove = tuple(
                (r.draft_id, int(r.revision), CopyPlace(r.folder, int(r.uidvalidity), int(r.uid)))
                for r in rows
            )
            unsettled = c.execute(
                sa.select(_D.seq)
                .where(_D.account_id == account_id, _D.append_revision.is_not(None))
                .order_by(_D.seq)
            ).scalars()
            to_settle = tuple(self._load(c, int(seq)) for seq in list(unsettled))
        return CopyWork(to_file, to_remove, to_settle)

    def _load(self, c: sa.Connection, seq: int) -> Draft:
        row = c.execute(sa.select(drafts).where(_D.seq == seq)).one()
        account_id = row.account_id
        recipients = tuple(
            DraftRecipient(AddressField(f), address, bool(written))
            for f, address, written in c.execute(
                sa.select(_R.field, _R.address, _R.written)
                .where(_R.account_id == account_id, _R.draft_seq == seq)
                .order_by(_R.position)
            )
        )
        files = tuple(
            DraftFile(name, int(size))
            for name, size in c.execute(
                sa.select(_F.file_name, _F.size_octets)
                .where(_F.account_id == account_id, _F.draft_seq == seq)
                .order_by(_F.position)
            )
        )
        copies = tuple(
            DraftCopy(int(r.revision), CopyPlace(r.folder, int(r.uidvalidity), int(r.uid)))
            for r in c.execute(
                sa.select(_C.revision, _C.folder, _C.uidvalidity, _C.uid)
                .where(_C.account_id == account_id, _C.draft_seq == seq)
                .order_by(_C.revision)
            )
        )
        pending = None
        if row.append_revision is not None:
            mark = AppendMark(
                row.append_folder, int(row.append_uidvalidity), int(row.append_since_uid)
            )
            pending = PendingAppend(int(row.append_revision), mark)
        return Draft(
            draft_id=row.draft_id,
            account_id=row.account_id,
            caller=row.caller,
            answering=Answering(row.answering) if row.answering else None,
            answered_email_id=row.answered_email_id,
            revision=int(row.revision),
            message_id=row.message_id_header,
            mime=bytes(row.mime),
            body_characters=int(row.body_characters),
            recipients=recipients,
            saved_at=row.saved_at,
            life=DraftLife(row.life),
            copies=copies,
            outgoing_id=row.outgoing_id,
            files=files,
            pending_append=pending,
        )
