"""Reading messages' bodies, wherever they are kept.

Messages stored by a synchronization pass have their text (plain and HTML body) in the content
store beside their MIME, found by the content key; messages whose content was filled in later
(held back for room, or repaired), and those stored before text moved there, have a row in
`message_bodies`. A row in `message_bodies` wins: it is the newer copy where both exist.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import sqlalchemy as sa

from mailfathom.adapters.sql.fixed_reads import rows as fixed_rows
from mailfathom.adapters.sql.reading_rows import arrays, chunks, inside, listed
from mailfathom.adapters.sql.schema import message_bodies, messages, same_message
from mailfathom.adapters.sql.search_index import INDEXED_BODY_CHARACTERS
from mailfathom.domain.content_state import ContentState
from mailfathom.domain.errors import ContentMissingError


class TextSource(Protocol):
    """(plain, html) of the message stored under a content key, html None unless asked for;
    raises `ContentMissingError`."""

    def __call__(self, key: str, *, with_html: bool = True) -> tuple[str, str | None]: ...


@dataclass(frozen=True, slots=True)
class LoadedText:
    plain: str | None
    html: str | None
    # The text should be in the content store and could not be read from it.
    missing: bool = False


_TEXTS = {
    (array, with_html): sa.select(
        messages.c.seq,
        messages.c.content_key,
        messages.c.content_state,
        message_bodies.c.seq.is_not(None).label("in_database"),
        message_bodies.c.plain_text,
        message_bodies.c.html if with_html else sa.null().label("html"),
    )
    .select_from(messages.outerjoin(message_bodies, same_message(message_bodies, messages)))
    .where(listed(array, messages.c.account_id, "accounts"), listed(array, messages.c.seq, "seqs"))
    for array in (False, True)
    for with_html in (False, True)
}
_STORED = ContentState.STORED.value


def load_texts(
    connection: sa.Connection,
    seqs: Sequence[int],
    accounts: Iterable[str],
    source: TextSource | None,
    *,
    with_html: bool,
) -> dict[int, LoadedText]:
    """The bodies of `seqs` (messages of `accounts`; the HTML body only when asked for). A
    message with no text anywhere (only its header block was fetched) is left out. SQLite
    reads a long value's overflow pages only when the value is selected, so leaving the HTML
    out saves reading it."""
    found: dict[int, LoadedText] = {}
    held_by = sorted(set(accounts))
    statement = _TEXTS[arrays(connection), with_html]
    for chunk in chunks(seqs):
        bound = {"accounts": held_by, "seqs": list(chunk)}
        for row in fixed_rows(connection, statement, bound):
            seq = int(row.seq)
            if row.in_database:
                found[seq] = LoadedText(row.plain_text, row.html)
            elif source is not None and row.content_key and row.content_state == _STORED:
                found[seq] = _from_content(source, row.content_key, with_html)
    return found


def _from_content(source: TextSource, content_key: str, with_html: bool) -> LoadedText:
    try:
        plain, html = source(content_key, with_html=with_html)
    except ContentMissingError:
        return LoadedText(None, None, missing=True)
    return LoadedText(plain, html)


def indexed(text: LoadedText | None) -> str:
    """The body as far as the lexical index holds it, which is what snippets come from and
    what a pattern or a body fragment is matched against."""
    return (text.plain or "")[:INDEXED_BODY_CHARACTERS] if text is not None else ""


def indexed_texts_in(
    connection: sa.Connection,
    seqs: Sequence[int],
    folder_ids: Sequence[int],
    accounts: Iterable[str],
    source: TextSource | None,
) -> dict[int, str]:
    """`indexed` of each message of `seqs` lying in `folder_ids` (of `accounts`); "" for one
    without text."""
    held_by = sorted(set(accounts))
    found = inside(connection, sorted(set(seqs)), folder_ids, held_by)
    bodies = load_texts(connection, found, held_by, source, with_html=False)
    return {seq: indexed(bodies.get(seq)) for seq in found}
