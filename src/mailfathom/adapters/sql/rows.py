"""Turning a normalized message into the rows that store and index it."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mailfathom.adapters.content.texts import storable_text
from mailfathom.adapters.sql.search_index import IndexDocument
from mailfathom.adapters.sql.threads import join_ids
from mailfathom.app.sync.types import NewMessage
from mailfathom.domain.content_state import RemoteFlags
from mailfathom.domain.message import ContentMarker, HeaderRole, NormalizedMessage

_MAX_ID = 998
# A subject longer than this is kept up to it: no reader needs more, and a hostile message
# should not be able to put megabytes into every listing row.
MAX_SUBJECT = 16_384


# Text as a column can hold it: PostgreSQL refuses NUL in text, so every store drops it.
text_value = storable_text


def flag_values(flags: RemoteFlags) -> dict[str, Any]:
    return {
        "seen": flags.seen,
        "flagged": flags.flagged,
        "answered": flags.answered,
        "draft": flags.draft,
        "deleted": flags.deleted,
    }


def derived_tuple(n: NormalizedMessage) -> tuple[Any, ...]:
    """Columns of `messages` that come from the MIME rather than from the server, in
    `_DERIVED_COLUMNS` order (this runs for every stored message)."""
    headers_only = n.headers_only
    markers = n.markers
    parts = n.parts
    sender = None
    for p in n.participants:
        if p.role is HeaderRole.FROM:
            sender = p.address_key[:_MAX_ID]
            break
    return (
        n.message_id[:_MAX_ID] if n.message_id else None,
        text_value(n.subject[:MAX_SUBJECT]) if n.subject is not None else None,
        n.sent_at,
        None if headers_only else n.attachment_count,
        None if headers_only else n.inline_resource_count,
        None if headers_only else sum(p.size_octets for p in parts),
        ContentMarker.ENCRYPTED in markers,
        ContentMarker.UNVERIFIED_SIGNATURE in markers,
        ContentMarker.UNEXPANDED_TNEF in markers,
        ",".join(n.defects) if n.defects else None,
        join_ids([i[:_MAX_ID] for i in n.in_reply_to]),
        join_ids([i[:_MAX_ID] for i in n.references]),
        sender,
    )


def derived_values(n: NormalizedMessage) -> dict[str, Any]:
    """The same columns by name."""
    return dict(zip(_DERIVED_COLUMNS, derived_tuple(n), strict=True))


_DERIVED_COLUMNS = (
    "message_id_header",
    "subject",
    "sent_at",
    "attachment_count",
    "inline_count",
    "attachment_octets",
    "is_encrypted",
    "has_unverified_signature",
    "has_unexpanded_tnef",
    "defects",
    "in_reply_to",
    "references_header",
    "sender_key",
)
MESSAGE_COLUMNS = (
    "stored_email_id",
    "account_id",
    "folder_id",
    "uidvalidity",
    "uid",
    "modseq",
    "received_at",
    "size_octets",
    "flags_observed_at",
    "content_state",
    "content_key",
    "stored_at",
    "seen",
    "flagged",
    "answered",
    "draft",
    "deleted",
    *_DERIVED_COLUMNS,
)


def message_row(
    item: NewMessage, *, account_id: str, folder_id: int, uidvalidity: int, now: datetime
) -> tuple[Any, ...]:
    """The `messages` row of a new message, in `MESSAGE_COLUMNS` order."""
    flags = item.flags
    return (
        uuid.uuid4(),
        account_id,
        folder_id,
        uidvalidity,
        item.uid,
        item.modseq,
        item.received_at,
        item.size_octets,
        now,
        item.content_state.value,
        item.content_key,
        now,
        flags.seen,
        flags.flagged,
        flags.answered,
        flags.draft,
        flags.deleted,
        *derived_tuple(item.normalized),
    )


# Identifiers are looked up through a B-tree, whose entries PostgreSQL caps at about 2.7 kB;
# a longer identifier (no real mail writes one) is indexed by its digest instead, which keeps
# lookups exact because the same identifier always yields the same digest.
_MAX_INDEXED_ID_OCTETS = 512


def lookup_identifier(identifier: str) -> str:
    encoded = identifier.encode("utf-8", "surrogatepass")
    if len(encoded) <= _MAX_INDEXED_ID_OCTETS:
        return identifier
    return "sha256:" + hashlib.sha256(encoded).hexdigest()


PARTICIPANT_COLUMNS = (
    "account_id",
    "seq",
    "position",
    "role",
    "address",
    "address_key",
    "display_name",
)
IDENTIFIER_COLUMNS = ("account_id", "seq", "identifier")
PART_COLUMNS = (
    "account_id",
    "seq",
    "position",
    "kind",
    "file_name",
    "name_was_normalized",
    "media_type",
    "size_octets",
    "part_path",
    "content_id",
)
BODY_COLUMNS = ("account_id", "seq", "plain_text", "html")
KEYWORD_COLUMNS = ("account_id", "seq", "keyword")


@dataclass(slots=True)
class ChildRows:
    """The rows of the tables hanging off `messages`, as tuples in the column orders above."""

    participants: list[tuple[Any, ...]] = field(default_factory=list)
    identifiers: list[tuple[Any, ...]] = field(default_factory=list)
    parts: list[tuple[Any, ...]] = field(default_factory=list)
    bodies: list[tuple[Any, ...]] = field(default_factory=list)
    keywords: list[tuple[Any, ...]] = field(default_factory=list)

    def tables(self) -> tuple[tuple[str, tuple[str, ...], list[tuple[Any, ...]]], ...]:
        return (
            ("participants", PARTICIPANT_COLUMNS, self.participants),
            ("message_identifiers", IDENTIFIER_COLUMNS, self.identifiers),
            ("parts", PART_COLUMNS, self.parts),
            ("message_bodies", BODY_COLUMNS, self.bodies),
            ("keywords", KEYWORD_COLUMNS, self.keywords),
        )


def add_child_rows(
    rows: ChildRows, seq: int, account_id: str, n: NormalizedMessage, *, text_stored: bool = False
) -> None:
    """The child rows of one message. `text_stored`: its bodies are in the content store, so
    `message_bodies` gets no row (a read finds them there by the content key)."""
    identifiers = {lookup_identifier(i[:_MAX_ID]) for i in (*n.references, *n.in_reply_to)}
    if n.message_id:
        identifiers.add(lookup_identifier(n.message_id[:_MAX_ID]))
    rows.participants.extend(
        (
            account_id,
            seq,
            position,
            p.role.value,
            p.address[:_MAX_ID],
            p.address_key[:_MAX_ID],
            p.display_name,
        )
        for position, p in enumerate(n.participants)
    )
    rows.identifiers.extend((account_id, seq, i) for i in sorted(identifiers))
    rows.parts.extend(
        (
            account_id,
            seq,
            position,
            p.kind.value,
            p.file_name,
            p.name_was_normalized,
            p.media_type[:255],
            p.size_octets,
            p.part_path[:255],
            p.content_id[:_MAX_ID] if p.content_id else None,
        )
        for position, p in enumerate(n.parts)
    )
    if not n.headers_only and not text_stored:
        rows.bodies.append(
            (
                account_id,
                seq,
                text_value(n.plain_text),
                text_value(n.html) if n.html is not None else None,
            )
        )


def keyword_tuples(account_id: str, seq: int, flags: RemoteFlags) -> list[tuple[Any, ...]]:
    return [(account_id, seq, k[:255]) for k in sorted(flags.keywords)]


def keyword_rows(account_id: str, seq: int, flags: RemoteFlags) -> list[dict[str, Any]]:
    return [
        {"account_id": account_id, "seq": seq, "keyword": k[:255]} for k in sorted(flags.keywords)
    ]


def _address_words(address: str) -> str:
    """The address whole, plus its local part and domain labels as words of their own.

    PostgreSQL's parser keeps an address as one token while FTS5 splits it; indexing the
    parts explicitly lets a search for a name or a domain behave the same on both."""
    return f"{address} {address.replace('@', ' ').replace('.', ' ')}"


def index_document(
    account_id: str, seq: int, n: NormalizedMessage, stored_text: bytes | None = None
) -> IndexDocument:
    """What the lexical index holds of a message; `stored_text` is its plain body in UTF-8
    when `n` does not carry it (see `PreparedMessage.stored_text`)."""
    people = " ".join(
        f"{p.display_name or ''} {_address_words(p.address)}".strip() for p in n.participants
    )
    return IndexDocument(
        account_id=account_id,
        seq=seq,
        subject=text_value((n.subject or "")[:MAX_SUBJECT]),
        participants=text_value(people),
        body=text_value(n.plain_text) if stored_text is None else stored_text,
    )
