"""A continuation cursor's fields are read with their own JSON types: a signed body whose
version or position is true, a fraction or text is no cursor this server issued (52001)."""

from __future__ import annotations

import json
import os

import pytest

from mailfathom.adapters.cursor_signing import HmacCursorSigner
from mailfathom.app.reading.cursors import accept, issue
from mailfathom.app.shared.stored_mail import TimelinePosition
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal

DIGEST = "0" * 32


def test_an_issued_cursor_is_accepted() -> None:
    signer = HmacCursorSigner(os.urandom(32))
    token = issue(signer, DIGEST, TimelinePosition(None, 7))
    assert accept(signer, token, DIGEST) == TimelinePosition(None, 7)


@pytest.mark.parametrize("seq", [True, False, 7.0, 7.5, "7"])
def test_a_position_of_another_type_is_refused(seq: object) -> None:
    signer = HmacCursorSigner(os.urandom(32))
    body = json.dumps({"v": 1, "d": DIGEST, "r": None, "s": seq})
    token = signer.sign(body.encode())
    with pytest.raises(Refusal) as refused:
        accept(signer, token, DIGEST)
    assert refused.value.code == Code.CURSOR_NOT_ISSUED_HERE


@pytest.mark.parametrize("version", [True, 1.5, "1"])
def test_a_version_of_another_type_is_refused(version: object) -> None:
    signer = HmacCursorSigner(os.urandom(32))
    body = json.dumps({"v": version, "d": DIGEST, "r": None, "s": 7})
    token = signer.sign(body.encode())
    with pytest.raises(Refusal) as refused:
        accept(signer, token, DIGEST)
    assert refused.value.code == Code.CURSOR_NOT_ISSUED_HERE


def test_a_cursor_altered_in_any_character_is_refused() -> None:
    """Base64 leaves spare bits in a last character that decoding ignores: an altered cursor
    must not be read as the one issued."""
    signer = HmacCursorSigner(os.urandom(32))
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    accepted = []
    # Three positions of different lengths: one body length at least leaves spare bits.
    for seq in (7, 77, 777):
        token = issue(signer, DIGEST, TimelinePosition(None, seq))
        for position in range(len(token)):
            for step in (1, 2, 3):
                replacement = alphabet[(alphabet.index(token[position]) + step) % len(alphabet)]
                altered = token[:position] + replacement + token[position + 1 :]
                if signer.open(altered) is not None:
                    accepted.append((seq, position))
    assert accepted == []
