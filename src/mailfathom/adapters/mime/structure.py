"""Walking a parsed MIME tree: which text is the body, which leaves are parts, what is sealed.

The body is what a mail reader would display: the text/plain (else text/html)
alternative of a multipart/alternative (RFC 2046 section 5.1.4), the root of a
multipart/related (RFC 2387 section 3.2), and every inline text part of a multipart/mixed,
in order (section 5.1.3). The plain body holds each of them as text, HTML converted; the
HTML body, present when any of them is HTML, holds each of them as HTML, plain text escaped
inside a ``pre`` element. Other leaves are handed to `parts` to be described. Encapsulated
messages (message/rfc822) are attachments; their own bodies and parts belong to them.

Parts are numbered as IMAP numbers body sections (RFC 3501 section 6.4.5), so a described
part can be fetched again by its ``part_path``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from email.message import Message
from html import escape

from mailfathom.adapters.mime import entity
from mailfathom.adapters.mime.parts import PartCandidate, describe_parts
from mailfathom.adapters.mime.text import html_to_text
from mailfathom.domain.message import ContentMarker, PartDescription

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
_TNEF_FILE_NAME = "winmail.dat"
_BODY_TYPES = frozenset({"text/plain", "text/html"})


@dataclass(frozen=True, slots=True)
class _Html:
    """HTML body text whose plain-text rendering is only computed when it is needed."""

    text: str


@dataclass(slots=True)
class _Body:
    """Body text found in one subtree: ``plain`` as text pieces, ``html`` as HTML pieces.

    A subtree without HTML has only text pieces; one with HTML has its HTML pieces in
    ``html`` and the same content, HTML pieces deferred, in ``plain``.
    """

    plain: list[str | _Html] = field(default_factory=list)
    html: list[str] = field(default_factory=list)

    def has_plain_text(self) -> bool:
        return any(isinstance(piece, str) and piece.strip() for piece in self.plain)


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
    if message.is_multipart() and entity.media_type(message).startswith("multipart/"):
        body = walker.visit(message, "", 0)
    else:
        body = walker.visit(message, "1", 0, top_level=True)
    parts = describe_parts(walker.candidates, walker.html_texts)
    if any(part.file_name and part.file_name.lower() == _TNEF_FILE_NAME for part in parts):
        walker.markers.add(ContentMarker.UNEXPANDED_TNEF)
    return MimeContent(
        plain_text=_render_plain(body.plain),
        html="\n".join(body.html) if body.html else None,
        parts=tuple(parts),
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
        self.candidates: list[PartCandidate] = []
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
        media_type = entity.media_type(part)
        payload = part.get_payload()
        if isinstance(payload, list) and media_type.startswith("multipart/"):
            children = [child for child in payload if isinstance(child, Message)]
            return self._multipart(part, children, media_type, path, depth, body, in_related)
        if isinstance(payload, list):
            # An encapsulated message (message/rfc822, message/global, delivery-status).
            self.candidates.append(PartCandidate(part, path, media_type, in_related))
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
        numbered = [
            (child, f"{path}.{index}" if path else str(index))
            for index, child in enumerate(children, start=1)
        ]
        if subtype == "encrypted":
            # RFC 1847 section 2.2: a control part and an opaque one; nothing readable.
            self.markers.add(ContentMarker.ENCRYPTED)
            return _Body()
        found: list[_Body] = []
        if subtype == "signed":
            # RFC 1847 section 2.1: the first part is the content, the signature follows.
            self.markers.add(ContentMarker.UNVERIFIED_SIGNATURE)
            protocol = entity.param(part, "protocol")
            for index, (child, child_path) in enumerate(numbered):
                child_type = entity.media_type(child)
                if index > 0 and (child_type in _SIGNATURE_TYPES or child_type == protocol):
                    continue
                found.append(
                    self.visit(child, child_path, depth + 1, body=body, in_related=in_related)
                )
            return _in_sequence(found)
        if subtype == "alternative":
            choices = [
                self.visit(
                    child, child_path, depth + 1, body=body, in_related=in_related, alternative=True
                )
                for child, child_path in numbered
            ]
            return _choose_alternative(choices)
        if subtype == "related":
            root = _related_root(part, children)
            result = _Body()
            for index, (child, child_path) in enumerate(numbered):
                is_root = index == root
                visited = self.visit(
                    child,
                    child_path,
                    depth + 1,
                    body=body and is_root,
                    in_related=in_related or not is_root,
                )
                if is_root:
                    result = visited
            return result
        # multipart/mixed and the subtypes read like it (RFC 2046 section 5.1.3): the parts
        # are shown one after the other, so every inline text part (the message, a second
        # text segment, a list footer) is body text, in order.
        for child, child_path in numbered:
            found.append(self.visit(child, child_path, depth + 1, body=body, in_related=in_related))
        return _in_sequence(found)

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
            and entity.disposition(part) != "attachment"
            and (alternative or top_level or entity.file_name(part) is None)
        ):
            is_html = media_type == "text/html"
            text = entity.decode_text(part, is_html)
            if is_html:
                self.html_texts.append(text)
                return _Body([_Html(text)], [text])
            return _Body([text])
        self.candidates.append(PartCandidate(part, path, media_type, in_related))
        return _Body()

    def _pkcs7_marker(self, part: Message) -> None:
        """S/MIME objects, RFC 8551 section 3.2.2: the smime-type says sealed or signed."""
        smime_type = entity.param(part, "smime-type")
        if smime_type in ("enveloped-data", "authenveloped-data"):
            self.markers.add(ContentMarker.ENCRYPTED)
        elif smime_type == "signed-data":
            self.markers.add(ContentMarker.UNVERIFIED_SIGNATURE)
        elif smime_type is None and (entity.file_name(part) or "").lower().endswith(".p7m"):
            self.markers.add(ContentMarker.ENCRYPTED)

    def _defect(self, name: str) -> None:
        if name not in self.defects:
            self.defects.append(name)


def _in_sequence(bodies: list[_Body]) -> _Body:
    """The bodies of parts shown one after the other, as one body.

    The text pieces follow each other. When any part has HTML, the HTML body is every
    part's HTML in turn, the text of a part without HTML escaped inside a ``pre`` element
    so that a reader of the HTML sees it too.
    """
    plain = [piece for found in bodies for piece in found.plain]
    if not any(found.html for found in bodies):
        return _Body(plain)
    html: list[str] = []
    for found in bodies:
        if found.html:
            html.extend(found.html)
            continue
        for piece in found.plain:
            if isinstance(piece, str) and piece.strip():
                html.append(_preformatted(piece))
    return _Body(plain, html)


def _preformatted(text: str) -> str:
    """Plain body text as HTML that shows it as written."""
    shown = escape(text.strip("\n"), quote=False)
    return f"<pre>{shown}</pre>"


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
    start = entity.param(part, "start")
    if start:
        wanted = start.strip("<> ")
        for index, child in enumerate(children):
            content_id = entity.content_id(child)
            if content_id is not None and content_id.lower() == wanted:
                return index
    return 0


def _render_plain(pieces: list[str | _Html]) -> str:
    texts = [piece if isinstance(piece, str) else html_to_text(piece.text) for piece in pieces]
    texts = [text for text in texts if text.strip()]
    if len(texts) == 1:
        return texts[0]
    return "\n\n".join(text.strip("\n") for text in texts)
