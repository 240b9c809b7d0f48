"""The book as vCard: written as vCard 4.0 (RFC 6350), read from vCard 3.0 (RFC 2426) or 4.0.

A contact is one card: FN, one EMAIL per address (the preferred one carries PREF=1), NOTE,
UID as `urn:uuid:<contactId>`, CREATED (RFC 9554) for when it was recorded, REV for when it
last changed, and its origin in X-MAILFATHOM-ORIGIN. Escaping and line folding are the
library's, so a comma, a semicolon, a backslash or a line break in a value survives.

Reading splits the file into cards first and parses each on its own, so one card the parser
rejects is counted and the cards around it are still read. Whatever the parser raises on one
card counts it as malformed: the library documents no closed set of failures, and a file from
another program must never end an import. Text is UTF-8; a card that is not,
that names another version, or that carries an origin this version does not know is counted
as malformed. A timestamp that cannot be read is left out rather than failing the card.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import vobject

from mailfathom.app.contacts.cards import Card, CardReading
from mailfathom.domain.contacts import Contact, ContactOrigin

ORIGIN_PROPERTY = "x-mailfathom-origin"
VERSIONS = frozenset({"3.0", "4.0"})
_URN = "urn:uuid:"
_BEGIN = b"BEGIN:VCARD"
_END = b"END:VCARD"


def _silence_library_log() -> None:
    """vobject's messages quote the line it could not read (a name, an address, a note), and
    it attaches a handler of its own that prints them on standard error past the deployment's
    log settings; none of that may reach a log line, so its logger says nothing."""
    library = logging.getLogger("vobject.base")
    library.handlers.clear()
    library.propagate = False
    library.disabled = True


_silence_library_log()


class Malformed(Exception):
    """A card this reader cannot take: named only inside this module, and only counted."""


class VCardFormat:
    def write(self, contacts: Sequence[Contact]) -> bytes:
        return b"".join(_card(contact).serialize().encode("utf-8") for contact in contacts)

    def read(self, data: bytes) -> CardReading:
        cards: list[Card] = []
        malformed = 0
        for chunk in _chunks(data.removeprefix(b"\xef\xbb\xbf")):
            try:
                cards.append(_parse(chunk))
            except Exception:
                malformed += 1
        return CardReading(tuple(cards), malformed)


def _timestamp(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def _card(contact: Contact) -> Any:
    card = vobject.vCard()
    card.add("version").value = "4.0"
    card.add("uid").value = f"{_URN}{contact.contact_id}"
    card.add("fn").value = contact.display_name
    for address in contact.addresses:
        email = card.add("email")
        email.value = address
        if address == contact.preferred_address:
            email.params["PREF"] = ["1"]
    if contact.note is not None:
        card.add("note").value = contact.note
    card.add("created").value = _timestamp(contact.recorded_at)
    card.add("rev").value = _timestamp(contact.amended_at or contact.recorded_at)
    card.add(ORIGIN_PROPERTY).value = contact.origin.value
    return card


def _chunks(data: bytes) -> Iterator[bytes | None]:
    """Each card's lines, from BEGIN:VCARD to END:VCARD; None for a card that never ends
    (one that runs into the next BEGIN, or into the end of the file). A folded line goes on
    with white space first, so a value that folds into those words is never taken for one."""
    lines: list[bytes] | None = None
    for line in data.splitlines(keepends=True):
        marker = line.rstrip().upper()
        if marker == _BEGIN:
            if lines is not None:
                yield None
            lines = [line]
        elif lines is not None:
            lines.append(line)
            if marker == _END:
                yield b"".join(lines)
                lines = None
    if lines is not None:
        yield None


def _texts(card: Any, name: str) -> list[Any]:
    return list(card.contents.get(name, []))


def _text(line: Any) -> str:
    if not isinstance(line.value, str):
        raise Malformed
    return line.value


def _parse(chunk: bytes | None) -> Card:
    if chunk is None:
        raise Malformed
    card = vobject.readOne(chunk.decode("utf-8"), validate=False)
    versions = [_text(v).strip() for v in _texts(card, "version")]
    if len(versions) != 1 or versions[0] not in VERSIONS:
        raise Malformed
    origin = ContactOrigin.ASSERTED
    for line in _texts(card, ORIGIN_PROPERTY):
        parsed = ContactOrigin.parse(_text(line).strip())
        if parsed is None:
            raise Malformed
        origin = parsed
    addresses, preferred = _emails(card)
    notes = [_text(n) for n in _texts(card, "note")]
    recorded = _when(card, "created")
    revised = _when(card, "rev")
    if recorded is None:
        recorded, revised = revised, None
    elif revised is not None and revised <= recorded:
        revised = None
    return Card(
        contact_id=_identity(card),
        display_name=_name(card),
        addresses=addresses,
        preferred_address=preferred,
        note="\n".join(notes) if notes else None,
        origin=origin,
        recorded_at=recorded,
        amended_at=revised,
    )


def _identity(card: Any) -> uuid.UUID | None:
    for line in _texts(card, "uid"):
        value = _text(line).strip()
        if value[: len(_URN)].lower() == _URN:
            try:
                return uuid.UUID(value[len(_URN) :])
            except ValueError:
                return None
    return None


def _name(card: Any) -> str | None:
    for line in _texts(card, "fn"):
        if _text(line).strip():
            return _text(line)
    for line in _texts(card, "n"):
        name = line.value
        parts = (name.prefix, name.given, name.additional, name.family, name.suffix)
        words = [_joined(p) for p in parts]
        spoken = " ".join(w for w in words if w)
        if spoken:
            return spoken
    return None


def _joined(part: object) -> str:
    if isinstance(part, str):
        return part.strip()
    if isinstance(part, list) and all(isinstance(p, str) for p in part):
        return " ".join(p.strip() for p in part if p.strip())
    raise Malformed


def _rank(line: Any) -> int | None:
    """How preferred an EMAIL is: PREF's value (1 is most), TYPE=pref as 1, else None."""
    params = {key.upper(): values for key, values in line.params.items()}
    for value in params.get("PREF", []):
        try:
            return int(value)
        except ValueError:
            continue
    if "PREF" in params:
        return 1
    if any(str(t).lower() == "pref" for t in params.get("TYPE", [])):
        return 1
    return None


def _emails(card: Any) -> tuple[tuple[str, ...], str | None]:
    addresses: list[str] = []
    preferred: tuple[int, str] | None = None
    for line in _texts(card, "email"):
        address = _text(line).strip()
        addresses.append(address)
        rank = _rank(line)
        if rank is not None and (preferred is None or rank < preferred[0]):
            preferred = (rank, address)
    return tuple(addresses), None if preferred is None else preferred[1]


def _when(card: Any, name: str) -> datetime | None:
    for line in _texts(card, name):
        value = line.value
        if not isinstance(value, str):
            return None
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed
    return None
