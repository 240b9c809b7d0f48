"""What a stored message is once it has been read: the normalized view every later step uses.

These values are produced by the MIME normalizer (an adapter) and consumed by the store, the
conversation assembler and, later, the tools. They hold no I/O and no library types.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime

from mailfathom.domain.identifiers import normalize_references
from mailfathom.domain.pickling import pickled_by_fields


class HeaderRole(enum.Enum):
    """The header a participant was named in (RFC 5322 section 3.6.2 and 3.6.3)."""

    FROM = "from"
    SENDER = "sender"
    REPLY_TO = "reply-to"
    TO = "to"
    CC = "cc"
    BCC = "bcc"


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Participant:
    """One mailbox named in an address header.

    `address` is the addr-spec as written (local part case kept); `address_key` is the form
    used for comparison: the whole address lower-cased. `display_name` is None when none was
    written.
    """

    role: HeaderRole
    address: str
    display_name: str | None

    @property
    def address_key(self) -> str:
        return self.address.lower()


class PartKind(enum.Enum):
    """How a non-body part was classified.

    An attachment is a file the author attached; an inline resource is something the body
    displays in place (an embedded logo, a signature picture) and is counted separately so a
    reader can tell a document from decoration.
    """

    ATTACHMENT = "attachment"
    INLINE = "inline"


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class PartDescription:
    """A described file: normalized name, media type and decoded size in octets.

    `file_name` is None for a part that carried no usable name ("unnamed").
    `name_was_normalized` says whether the written name had to be rewritten.
    `part_path` locates the part inside the MIME tree ("1.2"), so it can be read back later.
    """

    kind: PartKind
    file_name: str | None
    name_was_normalized: bool
    media_type: str
    size_octets: int
    part_path: str
    content_id: str | None = None


class ContentMarker(enum.Enum):
    """Facts about a message's content that change what a reader can do with it."""

    ENCRYPTED = "encrypted"
    UNVERIFIED_SIGNATURE = "unverifiedSignature"
    UNEXPANDED_TNEF = "unexpandedTnef"


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class NormalizedMessage:
    """Everything read out of one message's MIME (or out of its headers alone).

    Identifiers (`message_id`, `in_reply_to`, `references`) are stored without angle brackets,
    exactly as written otherwise. `references` keeps the order of the header and its repeats,
    the message's own identifier removed. `defects` names what the parser had to work around
    (class names such as "CloseBoundaryNotFoundDefect", or "header:<name>" for a header that
    could not be read); it is never message content.
    """

    subject: str | None
    sent_at: datetime | None
    message_id: str | None
    in_reply_to: tuple[str, ...]
    references: tuple[str, ...]
    participants: tuple[Participant, ...]
    plain_text: str
    html: str | None
    parts: tuple[PartDescription, ...]
    markers: frozenset[ContentMarker]
    defects: tuple[str, ...]
    headers_only: bool = False
    list_id: str | None = None
    authentication_results: tuple[str, ...] = field(default=())

    @property
    def attachment_count(self) -> int:
        return sum(1 for p in self.parts if p.kind is PartKind.ATTACHMENT)

    @property
    def inline_resource_count(self) -> int:
        return sum(1 for p in self.parts if p.kind is PartKind.INLINE)

    def without_bodies(self) -> NormalizedMessage:
        """The same message with an empty plain-text body and no HTML body, for where the
        bodies are kept elsewhere. Built field by field: `dataclasses.replace` costs several
        times more, and this runs for every message a synchronization stores."""
        return NormalizedMessage(
            self.subject,
            self.sent_at,
            self.message_id,
            self.in_reply_to,
            self.references,
            self.participants,
            "",
            None,
            self.parts,
            self.markers,
            self.defects,
            self.headers_only,
            self.list_id,
            self.authentication_results,
        )

    def thread_parent_reference(self) -> str | None:
        """The identifier this message names as the one it answers.

        RFC 5256 section 2.2 (REFERENCES): the last element of References, else the first
        identifier of In-Reply-To; never the message's own (see `normalize_references`).
        """
        references = normalize_references(self.references, self.in_reply_to, self.message_id)
        return references[-1] if references else None
