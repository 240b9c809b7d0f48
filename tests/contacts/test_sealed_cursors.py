"""Contact cursors are sealed: what they carry (a case-folded name) cannot be read from the
token, and a token altered, issued under another key or merely signed is refused."""

from __future__ import annotations

import base64
import os
import uuid

import pytest

from mailfathom.adapters.cursor_signing import HmacCursorSigner, SealedCursorSigner
from mailfathom.app.contacts import cursors
from mailfathom.app.contacts.ports import BookPosition
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal

POSITION = BookPosition("zdenka quixotic", uuid.uuid4())


def test_a_sealed_cursor_is_accepted_and_names_nobody() -> None:
    signer = SealedCursorSigner(os.urandom(32))
    token = cursors.issue(signer, POSITION)
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    assert b"zdenka" not in raw
    assert str(POSITION.contact_id).encode() not in raw
    assert cursors.accept(signer, token) == POSITION
    assert cursors.issue(signer, POSITION) != token


@pytest.mark.parametrize(
    "other",
    [
        lambda key: SealedCursorSigner(os.urandom(32)),
        lambda key: HmacCursorSigner(key),
    ],
    ids=["another-key", "signed-only"],
)
def test_a_cursor_sealed_elsewhere_or_only_signed_is_refused(other: object) -> None:
    key = os.urandom(32)
    foreign = other(key)  # type: ignore[operator]
    with pytest.raises(Refusal) as refused:
        cursors.accept(SealedCursorSigner(key), cursors.issue(foreign, POSITION))
    assert refused.value.code == Code.CONTACT_CURSOR_NOT_ISSUED_HERE


def test_a_sealed_cursor_altered_in_any_character_is_refused() -> None:
    signer = SealedCursorSigner(os.urandom(32))
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    token = cursors.issue(signer, POSITION)
    accepted = []
    for position in range(len(token)):
        replacement = alphabet[(alphabet.index(token[position]) + 1) % len(alphabet)]
        altered = token[:position] + replacement + token[position + 1 :]
        if signer.open(altered) is not None:
            accepted.append(position)
    assert accepted == []
    assert signer.open("") is None
    assert signer.open("short") is None
