"""Walking a parsed MIME tree: which text is the body, which parts are files, what is sealed.

The body is what a mail reader would display: the text/plain (else text/html) alternative
of a multipart/alternative (RFC 2046 section 5.1.4), the root of a multipart/related
(RFC 2387 section 3.2), and each inline text part of a multipart/mixed in turn. Everything
else that is a leaf is described as a part: an inline resource when the HTML body shows it
in place (referenced by ``cid:``, RFC 2392) or it is an image of a multipart/related,
otherwise an attachment. Encapsulated messages (message/rfc822) are attachments; their own
bodies and parts belong to them, not to this message.

Parts are numbered as IMAP numbers body sections (RFC 3501 section 6.4.5), so a described
part can be fetched again by its ``part_path``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from email.message import Message
from urllib.parse import unquote

from inscriptis import get_text

from mailfathom.adapters.mime.text import (
    clean_body_text,
    decode_bytes,
    decode_encoded_words,
    header_to_unicode,
    single_line,
    unfold,
)
from mailfathom.domain.filenames import normalize_file_name
from mailfathom.domain.message import ContentMarker, PartDescription, PartKind

MAX_DEPTH = 64
"""Deepest MIME nesting walked; deeper content is left out and recorded as a defect."""

MAX_PARTS = 5000
"""Most MIME entities visited in one message; beyond it the rest is left out."""

DEPTH_LIMIT_DEFECT = "mime:depth-limit"
PART_LIMIT_DEFECT = "mime:part-limit"

_SIGNATURE_TYPES = frozenset(
    {"application/pgp-signature", "application/pkcs7-signature", "application/x-pkcs7-signature"}
)
_PKCS7_MIME_TYPES = frozenset({"application/pkcs7-mime", "application/x-pkcs7-mime"})
_TNEF_TYPES = frozenset({"application/ms-tnef", "application/vnd.ms-tnef"})
_BODY_TYPES = frozenset({"text/plain", "text/html"})
_CID_REFERENCE = re.compile(r"cid:([^\"'\s<>)]+)", re.IGNORECASE)
_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?([A-Za-z0-9_:.\-]+)", re.IGNORECASE)
_TAG = re.compile(r"<[^>]*>")


@dataclass(frozen=True, slots=True)
class _Html:
    """HTML body text whose plain-text rendering is only computed when it is needed."""

    text: str


@dataclass(slots=True)
class _Body:
    plain: list[str | _Html] = field(default_factory=list)
    html: list[str] = field(default_factory=list)

    def extend(self, other: _Body) -> None:
        self.plain.extend(other.plain)
        self.html.extend(other.html)

    def has_content(self) -> bool:
        return bool(self.html) or any(
            piece.strip() if isinstance(piece, str) else piece.text.strip() for piece in self.plain
        )

    def has_plain_text(self) -> bool:
        return any(isinstance(piece, str) and piece.strip() for piece in self.plain)


@dataclass(frozen=True, slots=True)
class _Candidate:
    part: Message
    path: str
    media_type: str
    in_related: bool


@dataclass(frozen=True, slots=True)
class MimeContent:
    """What the body walk found: body text, described parts, markers and defects."""

    plain_text: str
    html: str | None
    parts: tuple[PartDescription, ...]
    markers: frozenset[ContentMarker]
    defects: tuple[str, ...]


def read_content(message: Message) -> MimeContent:
    """Walk ``message``'s MIME tree (RFC 2045 to RFC 2049) and describe its content."""
    walker = _Walker()
    if message.is_multipart() and _media_type(message).startswith("multipart/"):
        body = walker.visit(message, "", 0)
    else:
        body = walker.visit(message, "1", 0, top_level=True)
    html = "\n".join(body.html) if body.html else None
    return MimeContent(
        plain_text=_render_plain(body.plain),
        html=html,
        parts=tuple(walker.describe_parts()),
        markers=frozenset(walker.markers),
        defects=tuple(walker.defects),
    )


def parser_defects(message: Message) -> list[str]:
    """Class names of the parser's defects anywhere in the tree, in order, once each."""
    names: dict[str, None] = {}
    stack: list[tuple[Message, int]] = [(message, 0)]
    visited = 0
    while stack and visited < MAX_PARTS:
        node, depth = stack.pop()
        visited += 1
        for defect in node.defects:
            names.setdefault(type(defect).__name__, None)
        if depth >= MAX_DEPTH:
            continue
        payload = node.get_payload()
        if isinstance(payload, list):
            stack.extend(
                (child, depth + 1) for child in reversed(payload) if isinstance(child, Message)
            )
    return list(names)


class _Walker:
    def __init__(self) -> None:
        self.candidates: list[_Candidate] = []
        self.html_texts: list[str] = []
        self.markers: set[ContentMarker] = set()
        self.defects: list[str] = []
        self.visited = 0

    def visit(
        self,
        part: Message,
        path: str,
        depth: int,
        *,
        body: bool = True,
        in_related: bool = False,
        alternative: bool = False,
        top_level: bool = False,
    ) -> _Body:
        if depth > MAX_DEPTH:
            self._defect(DEPTH_LIMIT_DEFECT)
            return _Body()
        self.visited += 1
        if self.visited > MAX_PARTS:
            self._defect(PART_LIMIT_DEFECT)
            return _Body()
        media_type = _media_type(part)
        payload = part.get_payload()
        if isinstance(payload, list) and media_type.startswith("multipart/"):
            children = [child for child in payload if isinstance(child, Message)]
            return self._multipart(part, children, media_type, path, depth, body, in_related)
        if isinstance(payload, list):
            # An encapsulated message (message/rfc822, message/global, delivery-status).
            self.candidates.append(_Candidate(part, path, media_type, in_related))
            return _Body()
        return self._leaf(part, media_type, path, body, in_related, alternative, top_level)

    def _multipart(
        self,
        part: Message,
        children: list[Message],
        media_type: str,
        path: str,
        depth: int,
        body: bool,
        in_related: bool,
    ) -> _Body:
        subtype = media_type.partition("/")[2]
        paths = [f"{path}.{index}" if path else str(index) for index in range(1, len(children) + 1)]
        if subtype == "encrypted":
            # RFC 1847 section 2.2: a control part and an opaque one; nothing readable.
            self.markers.add(ContentMarker.ENCRYPTED)
            return _Body()
        result = _Body()
        if subtype == "signed":
            # RFC 1847 section 2.1: the first part is the content, the signature follows.
            self.markers.add(ContentMarker.UNVERIFIED_SIGNATURE)
            protocol = _param(part, "protocol")
            for index, (child, child_path) in enumerate(zip(children, paths, strict=True)):
                child_type = _media_type(child)
                if index > 0 and (child_type in _SIGNATURE_TYPES or child_type == protocol):
                    continue
                result.extend(
                    self.visit(child, child_path, depth + 1, body=body, in_related=in_related)
                )
            return result
        if subtype == "alternative":
            choices = [
                self.visit(
                    child, child_path, depth + 1, body=body, in_related=in_related, alternative=True
                )
                for child, child_path in zip(children, paths, strict=True)
            ]
            return _choose_alternative(choices)
        if subtype == "related":
            root = _related_root(part, children)
            for index, (child, child_path) in enumerate(zip(children, paths, strict=True)):
                is_root = index == root
                found = self.visit(
                    child,
                    child_path,
                    depth + 1,
                    body=body and is_root,
                    in_related=in_related or not is_root,
                )
                if is_root:
                    result = found
            return result
        # multipart/mixed and the subtypes treated like it (RFC 2046 section 5.1.3): the
        # first part that reads as a body is the body. Later inline text (a list footer, a
        # second text segment) is body text too, but not the message's body.
        for child, child_path in zip(children, paths, strict=True):
            found = self.visit(child, child_path, depth + 1, body=body, in_related=in_related)
            if not result.has_content():
                result = found
        return result

    def _leaf(
        self,
        part: Message,
        media_type: str,
        path: str,
        body: bool,
        in_related: bool,
        alternative: bool,
        top_level: bool,
    ) -> _Body:
        if media_type in _PKCS7_MIME_TYPES:
            self._pkcs7_marker(part)
            if top_level:
                # The whole message is one S/MIME object; its content is inside it.
                return _Body()
        if media_type in _TNEF_TYPES:
            self.markers.add(ContentMarker.UNEXPANDED_TNEF)
        # A multipart without a usable boundary arrives as a leaf; its text is still the body.
        textual = media_type in _BODY_TYPES or media_type.startswith("multipart/")
        if (
            body
            and textual
            and _disposition(part) != "attachment"
            and (alternative or top_level or _file_name(part) is None)
        ):
            text = _decode_text(part, media_type)
            if media_type == "text/html":
                self.html_texts.append(text)
                return _Body([_Html(text)], [text])
            return _Body([text])
        self.candidates.append(_Candidate(part, path, media_type, in_related))
        return _Body()

    def _pkcs7_marker(self, part: Message) -> None:
        """S/MIME objects, RFC 8551 section 3.2.2: the smime-type says sealed or signed."""
        smime_type = _param(part, "smime-type")
        if smime_type in ("enveloped-data", "authenveloped-data"):
            self.markers.add(ContentMarker.ENCRYPTED)
        elif smime_type == "signed-data":
            self.markers.add(ContentMarker.UNVERIFIED_SIGNATURE)
        elif smime_type is None and (_file_name(part) or "").lower().endswith(".p7m"):
            self.markers.add(ContentMarker.ENCRYPTED)

    def _defect(self, name: str) -> None:
        if name not in self.defects:
            self.defects.append(name)

    def describe_parts(self) -> list[PartDescription]:
        referenced = _referenced_content_ids(self.html_texts)
        described: list[PartDescription] = []
        for candidate in self.candidates:
            part = candidate.part
            written_name = _file_name(part)
            file_name, rewritten = normalize_file_name(written_name)
            if file_name is not None and file_name.lower() == "winmail.dat":
                self.markers.add(ContentMarker.UNEXPANDED_TNEF)
            content_id = _content_id(part)
            is_referenced = content_id is not None and content_id.lower() in referenced
            disposition = _disposition(part)
            if (is_referenced and (disposition != "attachment" or candidate.in_related)) or (
                candidate.in_related
                and disposition != "attachment"
                and candidate.media_type.startswith("image/")
            ):
                kind = PartKind.INLINE
            else:
                kind = PartKind.ATTACHMENT
            described.append(
                PartDescription(
                    kind=kind,
                    file_name=file_name,
                    name_was_normalized=rewritten,
                    media_type=candidate.media_type,
                    size_octets=_decoded_size(part),
                    part_path=candidate.path,
                    content_id=content_id,
                )
            )
        return described


def _choose_alternative(choices: list[_Body]) -> _Body:
    """Plain text from the first alternative that has some, HTML from the richest.

    RFC 2046 section 5.1.4 orders alternatives from plainest to richest, so the last one
    with HTML is the preferred rendering; an empty text/plain alternative (some senders
    write one) does not hide the HTML.
    """
    with_html = [choice for choice in choices if choice.html]
    html_choice = with_html[-1] if with_html else None
    plain_choice = next((choice for choice in choices if choice.has_plain_text()), None)
    if plain_choice is None:
        plain_choice = html_choice or next((choice for choice in choices if choice.plain), None)
    return _Body(
        plain=list(plain_choice.plain) if plain_choice else [],
        html=list(html_choice.html) if html_choice else [],
    )


def _related_root(part: Message, children: list[Message]) -> int:
    """Index of the root of a multipart/related: its ``start`` part, else the first."""
    start = _param(part, "start")
    if start:
        wanted = start.strip("<> ").lower()
        for index, child in enumerate(children):
            content_id = _content_id(child)
            if content_id is not None and content_id.lower() == wanted:
                return index
    return 0


def _render_plain(pieces: list[str | _Html]) -> str:
    texts = [
        piece if isinstance(piece, str) else clean_body_text(html_to_text(piece.text))
        for piece in pieces
    ]
    texts = [text for text in texts if text.strip()]
    if len(texts) == 1:
        return texts[0]
    return "\n\n".join(text.strip("\n") for text in texts)


def html_to_text(html: str) -> str:
    """The text a reader sees in an HTML body, laid out as plain text."""
    try:
        text: str = get_text(html)
    except Exception:
        return " ".join(_TAG.sub(" ", html).split())
    return text


def _decode_text(part: Message, media_type: str) -> str:
    payload = part.get_payload(decode=True)
    data = payload if isinstance(payload, bytes) else b""
    try:
        charset = part.get_content_charset()
    except Exception:
        charset = None
    if charset is None and media_type == "text/html":
        match = _META_CHARSET.search(data, 0, 4096)
        if match:
            charset = match.group(1).decode("ascii")
    return clean_body_text(decode_bytes(data, charset))


def _decoded_size(part: Message) -> int:
    """Octets of the part once its transfer encoding (RFC 2045 section 6) is undone.

    An encapsulated message has no transfer encoding to undo (RFC 2046 section 5.2.1
    allows only 7bit, 8bit and binary); its size is that of the message as written,
    reconstructed from the parsed tree rather than by serializing it again, which is
    costly for deep nesting. Line ends and header spacing can make it differ from the
    original by a few octets.
    """
    try:
        payload = part.get_payload(decode=True)
        if isinstance(payload, bytes):
            return len(payload)
        inner = part.get_payload()
        if isinstance(inner, list):
            return sum(_written_size(child) for child in inner if isinstance(child, Message))
    except Exception:
        return 0
    return 0


def _written_size(entity: Message) -> int:
    total = 0
    stack = [entity]
    visited = 0
    while stack and visited < MAX_PARTS:
        node = stack.pop()
        visited += 1
        total += sum(len(name) + len(str(value)) + 4 for name, value in node.raw_items()) + 2
        payload = node.get_payload()
        if isinstance(payload, str):
            total += len(payload)
            continue
        if not isinstance(payload, list):
            continue
        children = [child for child in payload if isinstance(child, Message)]
        boundary = node.get_boundary() if node.get_content_maintype() == "multipart" else None
        if boundary is not None:
            total += (len(boundary) + 6) * (len(children) + 1)
            total += len(node.preamble or "") + len(node.epilogue or "")
        stack.extend(children)
    return total


def _media_type(part: Message) -> str:
    try:
        return part.get_content_type().lower()
    except Exception:
        return "application/octet-stream"


def _disposition(part: Message) -> str | None:
    try:
        return part.get_content_disposition()
    except Exception:
        return None


def _param(part: Message, name: str) -> str | None:
    try:
        value = part.get_param(name)
    except Exception:
        return None
    if isinstance(value, tuple):
        value = value[2]
    if not isinstance(value, str):
        return None
    return header_to_unicode(value).strip().lower()


def _file_name(part: Message) -> str | None:
    """The written file name (RFC 2183 ``filename``, else the Content-Type ``name``)."""
    try:
        raw = part.get_filename()
    except Exception:
        return None
    if raw is None:
        return None
    name, _ = decode_encoded_words(unfold(header_to_unicode(str(raw))))
    return name


def _content_id(part: Message) -> str | None:
    raw = part.get("content-id")
    if raw is None:
        return None
    text = "".join(single_line(header_to_unicode(str(raw))).split())
    return text.strip("<>") or None


def _referenced_content_ids(html_texts: list[str]) -> set[str]:
    referenced: set[str] = set()
    for html in html_texts:
        for match in _CID_REFERENCE.finditer(html):
            referenced.add(unquote(match.group(1)).strip("<>").lower())
    return referenced
