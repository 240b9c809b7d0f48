"""Describing the non-body leaves of a message: attachment or inline resource.

A part is an inline resource when the HTML body displays it in place, that is when the
HTML references its Content-ID with a ``cid:`` URL (RFC 2392), or when it is an image of
a multipart/related body (RFC 2387) not explicitly marked as an attachment. Every other
described part is an attachment: the author attached it as a file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from email.message import Message
from urllib.parse import unquote

from mailfathom.adapters.mime import entity
from mailfathom.domain.filenames import normalize_file_name
from mailfathom.domain.message import PartDescription, PartKind

_CID_REFERENCE = re.compile(r"cid:([^\"'\s<>)]+)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class PartCandidate:
    """A leaf the body walk did not take as body text, with where it was found."""

    part: Message
    path: str
    media_type: str
    in_related: bool


def describe_parts(
    candidates: Iterable[PartCandidate], html_texts: Iterable[str]
) -> list[PartDescription]:
    """Classify and describe each candidate, in the order they were found."""
    found = [(candidate, entity.content_id(candidate.part)) for candidate in candidates]
    # The HTML is scanned for cid: references only when some part could be referenced.
    if any(content_id is not None for _, content_id in found):
        referenced = _referenced_content_ids(html_texts)
    else:
        referenced = set()
    described: list[PartDescription] = []
    for candidate, content_id in found:
        part = candidate.part
        file_name, rewritten = normalize_file_name(entity.file_name(part))
        described.append(
            PartDescription(
                kind=_kind(candidate, content_id, referenced),
                file_name=file_name,
                name_was_normalized=rewritten,
                media_type=candidate.media_type,
                size_octets=entity.decoded_size(part),
                part_path=candidate.path,
                content_id=content_id,
            )
        )
    return described


def _kind(candidate: PartCandidate, content_id: str | None, referenced: set[str]) -> PartKind:
    disposition = entity.disposition(candidate.part)
    is_referenced = content_id is not None and content_id.lower() in referenced
    # Some clients mark the images of a multipart/related body as attachments although
    # the HTML shows them; the reference decides then.
    if is_referenced and (disposition != "attachment" or candidate.in_related):
        return PartKind.INLINE
    if (
        candidate.in_related
        and disposition != "attachment"
        and candidate.media_type.startswith("image/")
    ):
        return PartKind.INLINE
    return PartKind.ATTACHMENT


def _referenced_content_ids(html_texts: Iterable[str]) -> set[str]:
    """Content-IDs named by ``cid:`` URLs, URL-decoded and lower-cased (RFC 2392 section 2)."""
    referenced: set[str] = set()
    for html in html_texts:
        for match in _CID_REFERENCE.finditer(html):
            referenced.add(unquote(match.group(1)).strip("<>").lower())
    return referenced
