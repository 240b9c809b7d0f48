"""Contact cursors: issued by the deployment, carrying where a walk of the book stopped. The
position holds a case-folded name, so the deployment seals them (the signer it is given
encrypts as well as authenticates): a cursor in a link or a log names nobody.

A contact cursor is not bound to the filters: the book is walked in one order whatever
narrows it, so continuing after changing search or origin is defined. Anything this
deployment did not issue as a contact cursor (a mailbox cursor included) is 52003.
"""

from __future__ import annotations

import json
import uuid

from mailfathom.app.contacts.ports import BookPosition
from mailfathom.app.shared.cursor_signing import CursorSigner
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal

# A name key is at most 256 characters before case folding, which can triple it.
MAX_CURSOR_CHARACTERS = 4096
_KIND = "contacts"


def issue(signer: CursorSigner, position: BookPosition) -> str:
    body = {"v": 1, "k": _KIND, "n": position.name_key, "i": str(position.contact_id)}
    return signer.sign(json.dumps(body, separators=(",", ":")).encode())


def accept(signer: CursorSigner, token: object) -> BookPosition:
    foreign = Refusal(
        Code.CONTACT_CURSOR_NOT_ISSUED_HERE,
        "The cursor is not a contact cursor this server issued.",
    )
    if not isinstance(token, str) or not token or len(token) > MAX_CURSOR_CHARACTERS:
        raise foreign
    payload = signer.open(token)
    if payload is None:
        raise foreign
    try:
        body = json.loads(payload)
        if not isinstance(body, dict) or set(body) != {"v", "k", "n", "i"}:
            raise foreign
        version, kind, name, identity = body["v"], body["k"], body["n"], body["i"]
        if isinstance(version, bool) or version != 1 or kind != _KIND:
            raise foreign
        if not isinstance(name, str) or not isinstance(identity, str):
            raise foreign
        return BookPosition(name, uuid.UUID(identity))
    except (ValueError, TypeError) as exc:
        raise foreign from exc
