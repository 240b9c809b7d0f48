"""One message kept in several folders of one account, read as one.

Gmail publishes labels as folders: a message labelled INBOX and Work is listed in INBOX, in
Work and in `[Gmail]/All Mail`, and each folder gives the same octets. A read over several
folders returns it once.

Which rows are one message: those of one account with the same content key, the SHA-256 of
the raw octets. Gmail's copies of a message are byte for byte the same, so the key finds
exactly them. Message-ID would not do: the sender writes it, two different messages may carry
one (a message sent again, a list's copy), and merging on it would let anybody hide a message
behind another by reusing its identifier. The copy a person sent and the copy a list or a
recipient delivered back differ in their octets (Received fields, a footer), are two messages
on the server too, and stay two. A message whose content is not held (over the size limit,
or waiting for storage room) has no key and is never merged.

Which copy stands for the message: the first one that passes the request's filters (and holds
a search's words), in the order of the scope's folders: the account's folder with the Inbox
role first, then its folders in the order the deployment first mapped them (their
`folder_id`). Flags and INTERNALDATE belong to each copy (Dovecot, Fastmail and Exchange keep
them per copy, and Gmail's copies differ while one folder's synchronization lags another's),
so a copy failing a filter never hides one that passes: a message is listed once whenever one
of its copies passes. Copies in one folder are that folder's own messages and are each listed,
and a folder read alone lists its own copies. The choice is made in the query, before the page
is cut, so pages stay full and a cursor continues exactly; each row read asks the index
`ix_messages_content_copies` once whether a copy lies in a folder that comes first, and reads
the filters only on the few copies found there.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from mailfathom.adapters.sql.fixed_reads import rows as fixed_rows
from mailfathom.adapters.sql.reading_rows import arrays, chunks, listed, named_folder
from mailfathom.adapters.sql.schema import messages
from mailfathom.app.shared.stored_mail import FolderView
from mailfathom.domain.folders import FolderRole


def precedence(scope: Iterable[FolderView]) -> dict[int, int]:
    """The place of each folder of the scope among its account's folders (0 comes first)."""
    by_account: dict[str, list[FolderView]] = {}
    for folder in scope:
        by_account.setdefault(folder.account_id, []).append(folder)
    ranks: dict[int, int] = {}
    for folders in by_account.values():
        folders.sort(key=lambda f: (f.role is not FolderRole.INBOX, f.folder_id))
        ranks.update((f.folder_id, place) for place, f in enumerate(folders))
    return ranks


def merges(ranks: Mapping[int, int]) -> bool:
    """Whether some account has two folders in the scope, so that copies can meet."""
    return any(place > 0 for place in ranks.values())


# Built once: an alias's columns are made on first use, which costs more than the query.
# A read writes its filters on EARLIER to ask them of the copies that come first.
EARLIER = messages.alias("earlier_copy")
_COPY = messages.alias("copy")
_OTHER_FOLDERS = {
    array: sa.select(messages.c.seq, _COPY.c.folder_id)
    .select_from(
        messages.join(
            _COPY,
            sa.and_(
                _COPY.c.content_key == messages.c.content_key,
                _COPY.c.account_id == messages.c.account_id,
                _COPY.c.folder_id != messages.c.folder_id,
            ),
        )
    )
    .where(
        listed(array, messages.c.account_id, "accounts"),
        listed(array, messages.c.seq, "seqs"),
        listed(array, named_folder(_COPY.c.folder_id), "folders"),
    )
    for array in (False, True)
}


def first_copies(
    ranks: Mapping[int, int], passing: Sequence[sa.ColumnElement[bool]] = (), *, array: bool
) -> sa.ColumnElement[bool]:
    """A row stands for its message: no copy of it passing the conditions `passing` (the
    request's filters and a search's words, written on `EARLIER`) lies in a folder of the
    scope that comes first. A condition on `messages`, added to a read's others, which the
    row passes too; `array` writes it for PostgreSQL (`reading_rows.arrays`)."""
    key = tuple(sorted(ranks.items()))
    if not passing:
        return _first_copies(key, array)
    return ~_earlier_copies(key, array).where(*passing).exists()


@functools.lru_cache(maxsize=256)
def _first_copies(ranks: tuple[tuple[int, int], ...], array: bool) -> sa.ColumnElement[bool]:
    """Kept per scope: building the condition costs more than SQLite takes to run it."""
    return ~_earlier_copies(ranks, array).exists()


@functools.lru_cache(maxsize=256)
def _earlier_copies(ranks: tuple[tuple[int, int], ...], array: bool) -> sa.Select[Any]:
    """The copies of the row's message in folders of the scope that come first.

    SQLite reads a folder's place from a `CASE` of the folders. PostgreSQL reads it from the
    position of the folder in one array of the scope's folders, ordered by their place, so
    that the statement's text does not depend on how many folders the scope has. The two
    places differ, but not their order between two folders of one account, the only ones
    compared: an account's folders have places of their own (0, 1, ...), and the array lists
    every folder of place 0 before every folder of place 1."""
    if array:
        ordered = [folder for folder, _ in sorted(ranks, key=lambda r: (r[1], r[0]))]
        folders = sa.bindparam(None, ordered, type_=postgresql.ARRAY(messages.c.folder_id.type))

        def place(column: sa.ColumnElement[Any]) -> sa.ColumnElement[Any]:
            return sa.func.array_position(folders, column, type_=sa.Integer)

    else:

        def place(column: sa.ColumnElement[Any]) -> sa.ColumnElement[Any]:
            return sa.case(dict(ranks), value=column)

    # A folder outside the scope has no place (NULL, from either form), so its copies never
    # come first; the copies of one message are a few rows of the index, read in one range.
    return sa.select(EARLIER.c.folder_id).where(
        EARLIER.c.content_key == messages.c.content_key,
        EARLIER.c.account_id == messages.c.account_id,
        place(EARLIER.c.folder_id) < place(messages.c.folder_id),
    )


def other_folders(
    connection: sa.Connection,
    seqs: Sequence[int],
    ranks: Mapping[int, int],
    aliases: Mapping[int, str],
    accounts: Iterable[str],
) -> dict[int, tuple[str, ...]]:
    """For each of `seqs` (rows standing for their message, in `accounts`: those of the
    scope's folders), the aliases of the other folders of the scope holding a copy, in their
    order of precedence, whether or not that copy passes the request's filters: the message
    is in those folders all the same."""
    if not seqs or not merges(ranks):
        return {}
    found: dict[int, set[int]] = {}
    held_by = sorted(set(accounts))
    statement = _OTHER_FOLDERS[arrays(connection)]
    for chunk in chunks(seqs):
        bound = {"accounts": held_by, "seqs": list(chunk), "folders": sorted(ranks)}
        for seq, folder_id in fixed_rows(connection, statement, bound):
            found.setdefault(int(seq), set()).add(int(folder_id))
    return {
        seq: tuple(aliases[f] for f in sorted(folder_ids, key=lambda f: ranks[f]))
        for seq, folder_ids in found.items()
    }


@dataclass(frozen=True, slots=True)
class Copy:
    """A conversation's row as the choice of copies needs it."""

    seq: int
    account_id: str
    folder_id: int
    content_key: str | None
    parent_seq: int | None


@dataclass(frozen=True, slots=True)
class Chosen:
    """A row kept, the copies it stands for, and its parent as the kept rows name it."""

    seq: int
    copies: tuple[int, ...]
    parent_seq: int | None


_KEYS = {
    array: sa.select(messages.c.seq, messages.c.account_id, messages.c.content_key).where(
        listed(array, messages.c.account_id, "accounts"),
        listed(array, messages.c.seq, "seqs"),
    )
    for array in (False, True)
}


def one_per_message(
    connection: sa.Connection, rows: Sequence[Copy], ranks: Mapping[int, int]
) -> list[Chosen]:
    """The rows of conversations (in the scope, in their order) with each message once: a
    copy in a folder that comes later is left out, and a parent is named by the copy that
    stands for it, also where the conversation hangs a reply under a copy outside the scope
    whose message the scope holds. A parent of which the scope holds no copy is named as it
    is. A conversation lies in one account, so its parents are looked up in the accounts of
    `rows`."""
    first: dict[tuple[str, str], tuple[int, int]] = {}
    for r in rows:
        if r.content_key is not None:
            identity, candidate = (r.account_id, r.content_key), (ranks[r.folder_id], r.seq)
            first[identity] = min(first.get(identity, candidate), candidate)
    stand_in: dict[int, int] = {}
    for r in rows:
        if r.content_key is not None:
            folder_place, seq = first[(r.account_id, r.content_key)]
            if ranks[r.folder_id] != folder_place:
                stand_in[r.seq] = seq
    copies: dict[int, list[int]] = {}
    for seq, standing in stand_in.items():
        copies.setdefault(standing, []).append(seq)
    read = {r.seq for r in rows}
    outside = sorted({r.parent_seq for r in rows if r.parent_seq is not None} - read)
    accounts = sorted({r.account_id for r in rows})
    statement = _KEYS[arrays(connection)]
    for chunk in chunks(outside):
        bound = {"accounts": accounts, "seqs": list(chunk)}
        for seq, account_id, content_key in connection.execute(statement, bound):
            found = first.get((account_id, content_key)) if content_key is not None else None
            if found is not None:
                stand_in[int(seq)] = found[1]
    return [
        Chosen(
            r.seq,
            tuple(sorted(copies.get(r.seq, ()))),
            None if r.parent_seq is None else stand_in.get(r.parent_seq, r.parent_seq),
        )
        for r in rows
        if r.seq not in stand_in
    ]
