"""The store behind synchronization (`SyncStore`), on SQLite or PostgreSQL through
SQLAlchemy Core."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql import bulk, search_index, threads
from mailfathom.adapters.sql.folder_rows import SqlFolderRows
from mailfathom.adapters.sql.held_back import SqlHeldBackContent
from mailfathom.adapters.sql.rows import (
    MESSAGE_COLUMNS,
    ChildRows,
    add_child_rows,
    flag_values,
    index_document,
    keyword_rows,
    keyword_tuples,
    message_row,
)
from mailfathom.adapters.sql.schema import (
    folders,
    keywords,
    messages,
    mutation_records,
    same_message,
)
from mailfathom.adapters.sql.store_base import CHUNK, account_of
from mailfathom.adapters.sql.trust_rows import insert_trust, trust_tuple
from mailfathom.app.sync.types import FlagChange, FolderRecord, NewMessage
from mailfathom.domain.content_state import RemoteFlags
from mailfathom.domain.mutations import MutationKind, MutationState


class SqlSyncStore(SqlFolderRows, SqlHeldBackContent):
    """`SyncStore`: the folders and messages synchronization keeps."""

    def __init__(self, engine: sa.Engine) -> None:
        super().__init__(engine)
        self._converters: list[bulk.Converter] | None = None

    def stored_uids(self, folder_id: int, uidvalidity: int) -> set[int]:
        with self.engine.connect() as c:
            account_id = account_of(c, folder_id)
            return set(
                c.execute(
                    sa.select(messages.c.uid).where(
                        messages.c.account_id == account_id,
                        messages.c.folder_id == folder_id,
                        messages.c.uidvalidity == uidvalidity,
                    )
                ).scalars()
            )

    def stored_flags(self, folder_id: int, uidvalidity: int) -> dict[int, FlagChange]:
        with self.engine.connect() as c:
            account_id = account_of(c, folder_id)
            mine = (
                messages.c.account_id == account_id,
                messages.c.folder_id == folder_id,
                messages.c.uidvalidity == uidvalidity,
            )
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
                ).where(*mine)
            ).all()
            words: dict[int, set[str]] = {}
            for seq, keyword in c.execute(
                sa.select(keywords.c.seq, keywords.c.keyword)
                .join(messages, same_message(keywords, messages))
                .where(*mine)
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
            inserted = self._insert_messages(
                c, folder.account_id, folder.folder_id, uidvalidity, rows
            )
            children = ChildRows()
            documents = []
            trust = []
            for seq, uid in inserted:
                item = by_uid[uid]
                if item.verdict is not None or item.authorship is not None:
                    trust.append(trust_tuple(seq, item.verdict, item.authorship))
                stored = item.stored_text
                add_child_rows(
                    children,
                    seq,
                    folder.account_id,
                    item.normalized,
                    text_stored=stored is not None,
                )
                children.keywords.extend(keyword_tuples(folder.account_id, seq, item.flags))
                documents.append(index_document(folder.account_id, seq, item.normalized, stored))
            for table_name, columns, values in children.tables():
                bulk.insert_rows(c, table_name, columns, values)
            insert_trust(c, folder.account_id, trust)
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
        account_id: str,
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
            suffix=" ON CONFLICT DO NOTHING",
        )
        # Identifiers compared as the driver holds them, as they were just written.
        ours = {row[0]: row[4] for row in values}
        mark = bulk.placeholder(c)
        found = c.exec_driver_sql(
            f"SELECT seq, uid, stored_email_id FROM messages WHERE account_id = {mark} "
            f"AND folder_id = {mark} AND uidvalidity = {mark} "
            f"AND uid IN ({', '.join([mark] * len(ours))})",
            (account_id, folder_id, uidvalidity, *ours.values()),
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
            account_id = account_of(c, folder_id)
            for chunk_start in range(0, len(changes), CHUNK):
                chunk = changes[chunk_start : chunk_start + CHUNK]
                found = c.execute(
                    sa.select(messages.c.uid, messages.c.seq).where(
                        messages.c.account_id == account_id,
                        messages.c.folder_id == folder_id,
                        messages.c.uidvalidity == uidvalidity,
                        messages.c.uid.in_([ch.uid for ch in chunk]),
                    )
                ).all()
                seq_by_uid = {int(r.uid): int(r.seq) for r in found}
                present = [ch for ch in chunk if ch.uid in seq_by_uid]
                if not present:
                    continue
                c.execute(
                    messages.update()
                    .where(messages.c.account_id == account_id)
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
                c.execute(
                    keywords.delete().where(
                        keywords.c.account_id == account_id, keywords.c.seq.in_(seqs)
                    )
                )
                words = [
                    row
                    for ch in present
                    for row in keyword_rows(account_id, seq_by_uid[ch.uid], ch.flags)
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
            account_id = account_of(c, folder_id)
            for start in range(0, len(wanted), CHUNK):
                seqs.extend(
                    c.execute(
                        sa.select(messages.c.seq).where(
                            messages.c.account_id == account_id,
                            messages.c.folder_id == folder_id,
                            messages.c.uidvalidity == uidvalidity,
                            messages.c.uid.in_(wanted[start : start + CHUNK]),
                            ~sa.exists(_moving_from(folder_id)),
                        )
                    ).scalars()
                )
        return self._delete_rows(account_id, seqs)

    def _delete_rows(self, account_id: str, seqs: Sequence[int]) -> list[str]:
        """Delete an account's message rows, re-place what remains of their conversations,
        and return the content keys no remaining row refers to."""
        if not seqs:
            return []
        keys: set[str] = set()
        thread_ids: set[Any] = set()
        of_account = messages.c.account_id == account_id
        with self.engine.begin() as c:
            for start in range(0, len(seqs), CHUNK):
                chunk = list(seqs[start : start + CHUNK])
                for key, thread_id in c.execute(
                    sa.select(messages.c.content_key, messages.c.thread_id).where(
                        of_account, messages.c.seq.in_(chunk)
                    )
                ):
                    if key:
                        keys.add(key)
                    if thread_id is not None:
                        thread_ids.add(thread_id)
                search_index.unindex(c, account_id, chunk)
                c.execute(messages.delete().where(of_account, messages.c.seq.in_(chunk)))
            if thread_ids:
                remaining = list(
                    c.execute(
                        sa.select(messages.c.seq).where(
                            of_account, messages.c.thread_id.in_(thread_ids)
                        )
                    ).scalars()
                )
                threads.rethread(c, account_id, remaining)
            still_used = _still_named(c, sorted(keys))
        return sorted(keys - still_used)

    def stale_identities(
        self, folder_id: int, uidvalidity: int
    ) -> dict[tuple[str | None, int], list[int]]:
        result: dict[tuple[str | None, int], list[int]] = {}
        with self.engine.connect() as c:
            account_id = account_of(c, folder_id)
            for seq, message_id, size in c.execute(
                sa.select(messages.c.seq, messages.c.message_id_header, messages.c.size_octets)
                .where(
                    messages.c.account_id == account_id,
                    messages.c.folder_id == folder_id,
                    messages.c.uidvalidity != uidvalidity,
                )
                .order_by(messages.c.uid)
            ):
                result.setdefault((message_id, size), []).append(seq)
        return result

    def rekey(self, folder_id: int, uidvalidity: int, pairs: Sequence[tuple[int, int]]) -> int:
        if not pairs:
            return 0
        with self.engine.begin() as c:
            account_id = account_of(c, folder_id)
            c.execute(
                messages.update()
                .where(messages.c.account_id == account_id)
                .where(messages.c.seq == sa.bindparam("b_seq"))
                .where(messages.c.folder_id == folder_id)
                .values(uidvalidity=uidvalidity, uid=sa.bindparam("b_uid")),
                [{"b_seq": seq, "b_uid": uid} for seq, uid in pairs],
            )
        return len(pairs)

    def drop_stale(self, folder_id: int, uidvalidity: int) -> list[str]:
        with self.engine.connect() as c:
            account_id = account_of(c, folder_id)
            seqs = list(
                c.execute(
                    sa.select(messages.c.seq).where(
                        messages.c.account_id == account_id,
                        messages.c.folder_id == folder_id,
                        messages.c.uidvalidity != uidvalidity,
                    )
                ).scalars()
            )
        return self._delete_rows(account_id, seqs)


def _still_named(c: sa.Connection, keys: Sequence[str]) -> set[str]:
    """Which of `keys` a message row of any account still names. Content is kept once per
    content, whichever accounts hold it, so a key is free only when no account's row names
    it: this is the one look-up of a deletion that spans accounts."""
    named: set[str] = set()
    for start in range(0, len(keys), CHUNK):
        named.update(
            c.execute(
                sa.select(messages.c.content_key).where(
                    messages.c.content_key.in_(keys[start : start + CHUNK])
                )
            ).scalars()
        )
    return named


def _moving_from(folder_id: int) -> sa.Select[Any]:
    """A move of the row's message out of this folder being carried right now: the message
    left the folder for another one, and the run carrying it re-points the row rather than
    have it removed here (which would lose the email's identifier)."""
    r = mutation_records.c
    return sa.select(r.seq).where(
        r.stored_email_id == messages.c.stored_email_id,
        r.folder_id == folder_id,
        r.kind == MutationKind.MOVE.value,
        r.state == MutationState.CONVERGING.value,
    )
