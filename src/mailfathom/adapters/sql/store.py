"""The store behind synchronization, on SQLite or PostgreSQL through SQLAlchemy Core."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from mailfathom.adapters.sql import bulk, search_index, threads
from mailfathom.adapters.sql.rows import (
    MESSAGE_COLUMNS,
    ChildRows,
    add_child_rows,
    derived_values,
    flag_values,
    index_document,
    keyword_rows,
    keyword_tuples,
    message_row,
)
from mailfathom.adapters.sql.schema import (
    accounts,
    folders,
    keywords,
    message_bodies,
    message_identifiers,
    messages,
    participants,
    parts,
    repair_requests,
)
from mailfathom.app.sync_types import (
    ContentState,
    FlagChange,
    FolderRecord,
    NewMessage,
    RemoteFlags,
)
from mailfathom.domain.config import AccountConfig, FolderMapping
from mailfathom.domain.conversations import ThreadInput
from mailfathom.domain.message import NormalizedMessage

_CHUNK = 500


def _now() -> datetime:
    return datetime.now(UTC)


def _folder_record(row: sa.Row[Any]) -> FolderRecord:
    return FolderRecord(
        folder_id=row.folder_id,
        account_id=row.account_id,
        remote_name=row.remote_name,
        alias=row.alias,
        role=row.role,
        visible_to_tools=row.visible_to_tools,
        uidvalidity=row.uidvalidity,
        highest_modseq=row.highest_modseq,
        uid_next=row.uid_next,
        last_committed_at=row.last_committed_at,
        push_supported=row.push_supported,
    )


# Questions about held-back messages start from the rare rows: the unary `+` keeps SQLite
# from walking a whole folder by its (folder, UIDVALIDITY) index to find the few rows in a
# given state or with a repair request; those are looked up one by one instead.
_WAITING = "FROM messages WHERE content_state = :waiting AND +folder_id = :f AND +uidvalidity = :u"
_DAMAGED = (
    "FROM messages WHERE seq IN (SELECT seq FROM repair_requests) "
    "AND +folder_id = :f AND +uidvalidity = :u"
)
_AWAITING_HEADROOM = sa.text(f"SELECT uid {_WAITING} ORDER BY uid").bindparams(
    waiting=ContentState.AWAITING_HEADROOM.value
)
_AWAITING_REPAIR = sa.text(f"SELECT uid {_DAMAGED} ORDER BY uid")
_HOLDS_BACK = sa.text(
    f"SELECT EXISTS (SELECT 1 {_WAITING}) OR EXISTS (SELECT 1 {_DAMAGED})"
).bindparams(waiting=ContentState.AWAITING_HEADROOM.value)


def _folder_values(mapping: FolderMapping) -> dict[str, Any]:
    """The columns of a folder row its mapping decides."""
    return {
        "alias": mapping.alias,
        "role": mapping.role.value if mapping.role else None,
        "visible_to_tools": mapping.visible_to_tools,
    }


class SqlStore:
    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self._dialect = engine.dialect.name
        self._converters: list[bulk.Converter] | None = None

    def _insert(self, table: sa.Table) -> Any:
        if self._dialect == "postgresql":
            return postgresql.insert(table)
        return sqlite.insert(table)

    # -- accounts and folders ------------------------------------------------------------

    def ensure_account(self, account: AccountConfig) -> None:
        """Create or update the account row; a pass that changes nothing writes nothing."""
        wanted = (account.display_name, account.kind.value)
        with self.engine.connect() as c:
            row = c.execute(
                sa.select(accounts.c.display_name, accounts.c.kind).where(
                    accounts.c.account_id == account.account_id
                )
            ).first()
        if row is not None and tuple(row) == wanted:
            return
        with self.engine.begin() as c:
            if row is None:
                c.execute(
                    self._insert(accounts)
                    .values(
                        account_id=account.account_id,
                        display_name=account.display_name,
                        kind=account.kind.value,
                        created_at=_now(),
                    )
                    .on_conflict_do_nothing(index_elements=["account_id"])
                )
            c.execute(
                accounts.update()
                .where(accounts.c.account_id == account.account_id)
                .values(display_name=account.display_name, kind=account.kind.value)
            )

    def ensure_folder(self, account_id: str, mapping: FolderMapping) -> FolderRecord:
        """Create or update the folder row from its mapping; unchanged mappings write nothing."""
        return self.ensure_folders(account_id, [mapping])[0]

    def ensure_folders(
        self, account_id: str, mappings: Sequence[FolderMapping]
    ) -> list[FolderRecord]:
        """The folder rows of `mappings`, in their order, created or updated from them. The
        account's rows are read with one query; only a new or changed mapping writes."""
        with self.engine.connect() as c:
            rows = {
                row.remote_name: row
                for row in c.execute(sa.select(folders).where(folders.c.account_id == account_id))
            }
        records: list[FolderRecord] = []
        for mapping in mappings:
            row = rows.get(mapping.remote_name)
            values = _folder_values(mapping)
            if row is None or any(getattr(row, k) != v for k, v in values.items()):
                row = self._write_folder(account_id, mapping, present=row is not None)
            records.append(_folder_record(row))
        return records

    def _write_folder(
        self, account_id: str, mapping: FolderMapping, *, present: bool
    ) -> sa.Row[Any]:
        values = _folder_values(mapping)
        where = (folders.c.account_id == account_id, folders.c.remote_name == mapping.remote_name)
        with self.engine.begin() as c:
            if not present:
                c.execute(
                    self._insert(folders)
                    .values(account_id=account_id, remote_name=mapping.remote_name, **values)
                    .on_conflict_do_nothing(index_elements=["account_id", "remote_name"])
                )
            c.execute(folders.update().where(*where).values(**values))
            return c.execute(sa.select(folders).where(*where)).one()

    def folder(self, folder_id: int) -> FolderRecord:
        with self.engine.connect() as c:
            row = c.execute(sa.select(folders).where(folders.c.folder_id == folder_id)).one()
        return _folder_record(row)

    def folders_of(self, account_id: str) -> list[FolderRecord]:
        with self.engine.connect() as c:
            rows = c.execute(
                sa.select(folders)
                .where(folders.c.account_id == account_id)
                .order_by(folders.c.alias)
            ).all()
        return [_folder_record(r) for r in rows]

    # -- what is held --------------------------------------------------------------------

    def stored_uids(self, folder_id: int, uidvalidity: int) -> set[int]:
        with self.engine.connect() as c:
            return set(
                c.execute(
                    sa.select(messages.c.uid).where(
                        messages.c.folder_id == folder_id,
                        messages.c.uidvalidity == uidvalidity,
                    )
                ).scalars()
            )

    def stored_flags(self, folder_id: int, uidvalidity: int) -> dict[int, FlagChange]:
        with self.engine.connect() as c:
            rows = c.execute(
                sa.select(
                    messages.c.seq,
                    messages.c.uid,
                    messages.c.modseq,
                    messages.c.seen,
                    messages.c.flagged,
                    messages.c.answered,
                    messages.c.draft,
                    messages.c.deleted,
                ).where(messages.c.folder_id == folder_id, messages.c.uidvalidity == uidvalidity)
            ).all()
            words: dict[int, set[str]] = {}
            for seq, keyword in c.execute(
                sa.select(keywords.c.seq, keywords.c.keyword)
                .join(messages, messages.c.seq == keywords.c.seq)
                .where(messages.c.folder_id == folder_id, messages.c.uidvalidity == uidvalidity)
            ):
                words.setdefault(seq, set()).add(keyword)
        return {
            r.uid: FlagChange(
                uid=r.uid,
                modseq=r.modseq,
                flags=RemoteFlags(
                    seen=r.seen,
                    flagged=r.flagged,
                    answered=r.answered,
                    draft=r.draft,
                    deleted=r.deleted,
                    keywords=frozenset(words.get(r.seq, ())),
                ),
            )
            for r in rows
        }

    def stored_octets(self, account_id: str) -> int:
        with self.engine.connect() as c:
            total = c.execute(
                sa.select(sa.func.coalesce(sa.func.sum(messages.c.size_octets), 0)).where(
                    messages.c.account_id == account_id,
                    messages.c.content_state == ContentState.STORED.value,
                )
            ).scalar_one()
        return int(total)

    # -- writing -------------------------------------------------------------------------

    def add_messages(
        self,
        folder: FolderRecord,
        uidvalidity: int,
        items: Sequence[NewMessage],
        committed_at: datetime,
    ) -> int:
        if not items:
            return 0
        rows = [
            message_row(
                item,
                account_id=folder.account_id,
                folder_id=folder.folder_id,
                uidvalidity=uidvalidity,
                now=committed_at,
            )
            for item in items
        ]
        by_uid = {item.uid: item for item in items}
        with self.engine.begin() as c:
            inserted = self._insert_messages(c, folder.folder_id, uidvalidity, rows)
            children = ChildRows()
            documents = []
            for seq, uid in inserted:
                item = by_uid[uid]
                stored = item.stored_text
                add_child_rows(
                    children,
                    seq,
                    folder.account_id,
                    item.normalized,
                    text_stored=stored is not None,
                )
                children.keywords.extend(keyword_tuples(seq, item.flags))
                documents.append(index_document(seq, item.normalized, stored))
            for table_name, columns, values in children.tables():
                bulk.insert_rows(c, table_name, columns, values)
            search_index.index_documents(c, documents)
            threads.place_new_messages(c, folder.account_id, [seq for seq, _ in inserted])
            c.execute(
                folders.update()
                .where(folders.c.folder_id == folder.folder_id)
                .values(last_committed_at=committed_at)
            )
        return len(inserted)

    def _insert_messages(
        self,
        c: sa.Connection,
        folder_id: int,
        uidvalidity: int,
        rows: Sequence[tuple[Any, ...]],
    ) -> list[tuple[int, int]]:
        """Insert `messages` rows, skipping UIDs already stored (a repeated batch), and return
        (seq, uid) of the rows this call inserted, in UID order.

        The rows go to the driver in one call; which of them are new is read back by the
        stored-email identifiers this call generated, since a row some earlier pass stored
        keeps its own."""
        if self._converters is None:
            self._converters = bulk.converters(c, messages, MESSAGE_COLUMNS)
        values = bulk.driver_rows(self._converters, rows)
        bulk.insert_rows(
            c,
            "messages",
            MESSAGE_COLUMNS,
            values,
            suffix=" ON CONFLICT (folder_id, uidvalidity, uid) DO NOTHING",
        )
        # Identifiers compared as the driver holds them, as they were just written.
        ours = {row[0]: row[4] for row in values}
        mark = bulk.placeholder(c)
        found = c.exec_driver_sql(
            f"SELECT seq, uid, stored_email_id FROM messages WHERE folder_id = {mark} "
            f"AND uidvalidity = {mark} AND uid IN ({', '.join([mark] * len(ours))})",
            (folder_id, uidvalidity, *ours.values()),
        )
        return sorted(
            ((int(seq), int(uid)) for seq, uid, email_id in found if email_id in ours),
            key=lambda pair: pair[1],
        )

    def apply_flag_changes(
        self,
        folder_id: int,
        uidvalidity: int,
        changes: Sequence[FlagChange],
        observed_at: datetime,
    ) -> int:
        if not changes:
            return 0
        updated = 0
        with self.engine.begin() as c:
            for chunk_start in range(0, len(changes), _CHUNK):
                chunk = changes[chunk_start : chunk_start + _CHUNK]
                seq_by_uid = dict(
                    c.execute(
                        sa.select(messages.c.uid, messages.c.seq).where(
                            messages.c.folder_id == folder_id,
                            messages.c.uidvalidity == uidvalidity,
                            messages.c.uid.in_([ch.uid for ch in chunk]),
                        )
                    ).all()
                )
                present = [ch for ch in chunk if ch.uid in seq_by_uid]
                if not present:
                    continue
                c.execute(
                    messages.update()
                    .where(messages.c.seq == sa.bindparam("b_seq"))
                    .values(
                        modseq=sa.bindparam("b_modseq"),
                        flags_observed_at=sa.bindparam("b_observed"),
                        **{k: sa.bindparam(f"b_{k}") for k in flag_values(RemoteFlags())},
                    ),
                    [
                        {
                            "b_seq": seq_by_uid[ch.uid],
                            "b_modseq": ch.modseq,
                            "b_observed": observed_at,
                            **{f"b_{k}": v for k, v in flag_values(ch.flags).items()},
                        }
                        for ch in present
                    ],
                )
                seqs = [seq_by_uid[ch.uid] for ch in present]
                c.execute(keywords.delete().where(keywords.c.seq.in_(seqs)))
                words = [
                    row for ch in present for row in keyword_rows(seq_by_uid[ch.uid], ch.flags)
                ]
                if words:
                    c.execute(keywords.insert(), words)
                updated += len(present)
            c.execute(
                folders.update()
                .where(folders.c.folder_id == folder_id)
                .values(last_committed_at=observed_at)
            )
        return updated

    def remove_uids(self, folder_id: int, uidvalidity: int, uids: Iterable[int]) -> list[str]:
        wanted = sorted(set(uids))
        if not wanted:
            return []
        seqs: list[int] = []
        with self.engine.connect() as c:
            for start in range(0, len(wanted), _CHUNK):
                seqs.extend(
                    c.execute(
                        sa.select(messages.c.seq).where(
                            messages.c.folder_id == folder_id,
                            messages.c.uidvalidity == uidvalidity,
                            messages.c.uid.in_(wanted[start : start + _CHUNK]),
                        )
                    ).scalars()
                )
        return self._delete_rows(seqs)

    def _delete_rows(self, seqs: Sequence[int]) -> list[str]:
        """Delete message rows, re-place what remains of their conversations, and return the
        content keys no remaining row refers to."""
        if not seqs:
            return []
        keys: set[str] = set()
        affected: dict[str, set[Any]] = {}
        with self.engine.begin() as c:
            for start in range(0, len(seqs), _CHUNK):
                chunk = list(seqs[start : start + _CHUNK])
                for key, account_id, thread_id in c.execute(
                    sa.select(
                        messages.c.content_key, messages.c.account_id, messages.c.thread_id
                    ).where(messages.c.seq.in_(chunk))
                ):
                    if key:
                        keys.add(key)
                    if thread_id is not None:
                        affected.setdefault(account_id, set()).add(thread_id)
                search_index.unindex(c, chunk)
                c.execute(messages.delete().where(messages.c.seq.in_(chunk)))
            for thread_ids in affected.values():
                remaining = list(
                    c.execute(
                        sa.select(messages.c.seq).where(messages.c.thread_id.in_(thread_ids))
                    ).scalars()
                )
                threads.rethread(c, remaining)
            still_used: set[str] = set()
            key_list = sorted(keys)
            for start in range(0, len(key_list), _CHUNK):
                still_used.update(
                    c.execute(
                        sa.select(messages.c.content_key).where(
                            messages.c.content_key.in_(key_list[start : start + _CHUNK])
                        )
                    ).scalars()
                )
        return sorted(keys - still_used)

    # -- UIDVALIDITY change --------------------------------------------------------------

    def stale_identities(
        self, folder_id: int, uidvalidity: int
    ) -> dict[tuple[str | None, int], list[int]]:
        result: dict[tuple[str | None, int], list[int]] = {}
        with self.engine.connect() as c:
            for seq, message_id, size in c.execute(
                sa.select(messages.c.seq, messages.c.message_id_header, messages.c.size_octets)
                .where(messages.c.folder_id == folder_id, messages.c.uidvalidity != uidvalidity)
                .order_by(messages.c.uid)
            ):
                result.setdefault((message_id, size), []).append(seq)
        return result

    def rekey(self, folder_id: int, uidvalidity: int, pairs: Sequence[tuple[int, int]]) -> int:
        if not pairs:
            return 0
        with self.engine.begin() as c:
            c.execute(
                messages.update()
                .where(messages.c.seq == sa.bindparam("b_seq"))
                .where(messages.c.folder_id == folder_id)
                .values(uidvalidity=uidvalidity, uid=sa.bindparam("b_uid")),
                [{"b_seq": seq, "b_uid": uid} for seq, uid in pairs],
            )
        return len(pairs)

    def drop_stale(self, folder_id: int, uidvalidity: int) -> list[str]:
        with self.engine.connect() as c:
            seqs = list(
                c.execute(
                    sa.select(messages.c.seq).where(
                        messages.c.folder_id == folder_id, messages.c.uidvalidity != uidvalidity
                    )
                ).scalars()
            )
        return self._delete_rows(seqs)

    def record_progress(
        self,
        folder_id: int,
        *,
        uidvalidity: int,
        highest_modseq: int | None,
        uid_next: int | None,
        committed_at: datetime,
        push_supported: bool | None = None,
    ) -> None:
        values: dict[str, Any] = {
            "uidvalidity": uidvalidity,
            "highest_modseq": highest_modseq,
            "uid_next": uid_next,
            "last_committed_at": committed_at,
        }
        if push_supported is not None:
            values["push_supported"] = push_supported
        with self.engine.begin() as c:
            c.execute(folders.update().where(folders.c.folder_id == folder_id).values(**values))

    # -- content held back or damaged ----------------------------------------------------

    def awaiting_headroom(self, folder_id: int, uidvalidity: int) -> list[int]:
        with self.engine.connect() as c:
            return list(c.execute(_AWAITING_HEADROOM, {"f": folder_id, "u": uidvalidity}).scalars())

    def holds_back(self, folder_id: int, uidvalidity: int) -> bool:
        """Whether any message of the folder awaits storage room or a content repair: one
        query, for a pass that would otherwise find nothing to do."""
        with self.engine.connect() as c:
            return bool(c.execute(_HOLDS_BACK, {"f": folder_id, "u": uidvalidity}).scalar())

    def fill_content(
        self,
        folder_id: int,
        uidvalidity: int,
        uid: int,
        normalized: NormalizedMessage,
        content_key: str,
    ) -> None:
        """Complete a row whose content was held back, re-deriving it from the full MIME."""
        with self.engine.begin() as c:
            row = c.execute(
                sa.select(messages.c.seq, messages.c.account_id).where(
                    messages.c.folder_id == folder_id,
                    messages.c.uidvalidity == uidvalidity,
                    messages.c.uid == uid,
                )
            ).first()
            if row is None:
                return
            seq, account_id = row
            c.execute(
                messages.update()
                .where(messages.c.seq == seq)
                .values(
                    content_state=ContentState.STORED.value,
                    content_key=content_key,
                    **derived_values(normalized),
                )
            )
            for table in (participants, message_identifiers, parts, message_bodies):
                c.execute(table.delete().where(table.c.seq == seq))
            c.execute(repair_requests.delete().where(repair_requests.c.seq == seq))
            children = ChildRows()
            add_child_rows(children, seq, account_id, normalized)
            for table_name, columns, values in children.tables():
                bulk.insert_rows(c, table_name, columns, values)
            search_index.replace_document(c, index_document(seq, normalized))
            threads.place_new_messages(c, account_id, [seq])

    def request_repair(self, seq: int, reason: str) -> None:
        statement = self._insert(repair_requests).on_conflict_do_nothing(index_elements=["seq"])
        with self.engine.begin() as c:
            c.execute(statement.values(seq=seq, reason=reason, requested_at=_now()))

    def awaiting_repair(self, folder_id: int, uidvalidity: int) -> list[int]:
        """UIDs in this folder whose stored content was found missing or damaged."""
        with self.engine.connect() as c:
            return list(c.execute(_AWAITING_REPAIR, {"f": folder_id, "u": uidvalidity}).scalars())

    def content_references(self, account_id: str | None = None) -> list[tuple[int, str, bool]]:
        """(seq, content key, whether the bodies are in the content store) of every row whose
        content is meant to be held locally. Bodies are in the content store unless the
        database holds them (messages repaired, or stored by earlier versions)."""
        query = (
            sa.select(messages.c.seq, messages.c.content_key, message_bodies.c.seq.is_(None))
            .select_from(messages.outerjoin(message_bodies, message_bodies.c.seq == messages.c.seq))
            .where(
                messages.c.content_state == ContentState.STORED.value,
                messages.c.content_key.is_not(None),
            )
        )
        if account_id is not None:
            query = query.where(messages.c.account_id == account_id)
        with self.engine.connect() as c:
            return [(int(seq), str(key), bool(held)) for seq, key, held in c.execute(query)]

    def content_key_of(self, stored_email_id: uuid.UUID) -> tuple[int, str | None] | None:
        with self.engine.connect() as c:
            row = c.execute(
                sa.select(messages.c.seq, messages.c.content_key).where(
                    messages.c.stored_email_id == stored_email_id
                )
            ).first()
        return None if row is None else (int(row.seq), row.content_key)

    # -- overview ------------------------------------------------------------------------

    def message_counts(self, account_id: str) -> dict[int, int]:
        with self.engine.connect() as c:
            return {
                int(folder_id): int(count)
                for folder_id, count in c.execute(
                    sa.select(messages.c.folder_id, sa.func.count())
                    .where(messages.c.account_id == account_id)
                    .group_by(messages.c.folder_id)
                )
            }

    def summary(self, account_id: str) -> list[tuple[str, int, int, int, int]]:
        """Per folder: alias, messages, conversations, messages with attachments, unread."""
        with self.engine.connect() as c:
            rows = c.execute(
                sa.select(
                    folders.c.alias,
                    sa.func.count(messages.c.seq),
                    sa.func.count(sa.distinct(messages.c.thread_id)),
                    sa.func.count(messages.c.seq).filter(messages.c.attachment_count > 0),
                    sa.func.count(messages.c.seq).filter(messages.c.seen.is_(False)),
                )
                .select_from(
                    folders.outerjoin(messages, messages.c.folder_id == folders.c.folder_id)
                )
                .where(folders.c.account_id == account_id)
                .group_by(folders.c.alias)
                .order_by(folders.c.alias)
            ).all()
        return [(r[0], int(r[1]), int(r[2]), int(r[3]), int(r[4])) for r in rows]

    # -- conversations -------------------------------------------------------------------

    def thread_inputs(self, account_id: str) -> list[ThreadInput]:
        with self.engine.connect() as c:
            return [
                ThreadInput(
                    key=str(r.stored_email_id),
                    message_id=r.message_id_header,
                    in_reply_to=threads.split_ids(r.in_reply_to),
                    references=threads.split_ids(r.references_header),
                    sent_at=r.sent_at,
                )
                for r in c.execute(
                    sa.select(
                        messages.c.stored_email_id,
                        messages.c.message_id_header,
                        messages.c.in_reply_to,
                        messages.c.references_header,
                        messages.c.sent_at,
                    ).where(messages.c.account_id == account_id)
                )
            ]

    def rederive_conversations(self, account_id: str) -> int:
        with self.engine.begin() as c:
            return threads.rederive_account(c, account_id)
