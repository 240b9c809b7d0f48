"""Prepared messages cross from the workers to the synchronizing process intact, and as a
constructor call with their fields rather than through per-object state methods."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import dataclass, fields

import pytest

from mailfathom.adapters.mime import normalize_headers, normalize_message
from mailfathom.app.sync.types import PreparedMessage
from mailfathom.domain.message import NormalizedMessage, PartDescription, Participant
from mailfathom.domain.pickling import pickled_by_fields

RAW = (
    b"From: =?utf-8?q?J=C3=BCrgen?= <jurgen@example.org>\r\n"
    b"To: a@example.com, B <b@example.com>\r\n"
    b"Cc: c@example.net\r\n"
    b"Subject: Quarterly numbers\r\n"
    b"Date: Mon, 06 Jan 2025 10:10:00 +0100\r\n"
    b"Message-ID: <m2@example.org>\r\n"
    b"In-Reply-To: <m1@example.org>\r\n"
    b"References: <m0@example.org> <m1@example.org>\r\n"
    b"MIME-Version: 1.0\r\n"
    b'Content-Type: multipart/mixed; boundary="b1"\r\n'
    b"\r\n"
    b"--b1\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\n"
    b"Content-Transfer-Encoding: quoted-printable\r\n"
    b"\r\n"
    b"Gr=C3=BC=C3=9Fe, the figures are attached.\r\n"
    b"--b1\r\n"
    b'Content-Type: application/pdf; name="q4.pdf"\r\n'
    b'Content-Disposition: attachment; filename="q4.pdf"\r\n'
    b"Content-Transfer-Encoding: base64\r\n"
    b"\r\n"
    b"JVBERi0xLjQK\r\n"
    b"--b1--\r\n"
)


def test_a_prepared_message_survives_pickling_field_for_field() -> None:
    normalized = normalize_message(RAW)
    assert normalized.participants
    assert normalized.parts
    assert normalized.in_reply_to
    prepared = [
        PreparedMessage("ab" * 32, normalized.without_bodies(), "Grüße".encode()),
        PreparedMessage("cd" * 32, normalized),
        PreparedMessage(None, normalize_headers(RAW)),
    ]
    # Our own bytes, made one line above: nothing untrusted is loaded here.
    back = pickle.loads(pickle.dumps(prepared, protocol=pickle.HIGHEST_PROTOCOL))  # noqa: S301
    assert back == prepared
    for before, after in zip(prepared, back, strict=True):
        for f in fields(NormalizedMessage):
            assert getattr(after.normalized, f.name) == getattr(before.normalized, f.name), f.name
    assert type(back[0].normalized.participants[0]) is Participant
    assert type(back[0].normalized.parts[0]) is PartDescription


@pytest.mark.parametrize("cls", [PreparedMessage, NormalizedMessage, Participant, PartDescription])
def test_each_crossing_class_pickles_as_a_call_with_its_fields(cls: type) -> None:
    normalized = normalize_message(RAW)
    sample = {
        PreparedMessage: PreparedMessage("ab" * 32, normalized),
        NormalizedMessage: normalized,
        Participant: normalized.participants[0],
        PartDescription: normalized.parts[0],
    }[cls]
    reduced = sample.__reduce_ex__(pickle.HIGHEST_PROTOCOL)
    assert isinstance(reduced, tuple)
    rebuild, arguments = reduced
    assert rebuild is cls
    assert arguments == tuple(getattr(sample, f.name) for f in fields(cls))


def test_a_class_with_fewer_than_two_fields_is_refused() -> None:
    with pytest.raises(TypeError):

        @pickled_by_fields
        @dataclass(frozen=True, slots=True)
        class Single:
            value: int


def test_a_class_with_a_keyword_only_field_is_refused() -> None:
    # A call with the fields in order would put the keyword-only one in the wrong place.
    with pytest.raises(TypeError):

        @pickled_by_fields
        @dataclass(frozen=True, slots=True)
        class Mixed:
            first: int
            second: int = dataclasses.field(kw_only=True)


def test_a_message_without_bodies_keeps_every_other_field() -> None:
    # Every field is given a value other than its default, so a field added later and not
    # copied by `without_bodies` shows up here.
    base = normalize_message(RAW)
    values = {f.name: getattr(base, f.name) for f in fields(NormalizedMessage)}
    values.update(
        html="<p>figures</p>",
        headers_only=True,
        list_id="numbers.example.org",
        authentication_results=("mx.example.org; dkim=pass",),
    )
    full = NormalizedMessage(**values)
    for f in fields(NormalizedMessage):
        assert getattr(full, f.name) != f.default, f.name
    stripped = full.without_bodies()
    assert stripped == dataclasses.replace(full, plain_text="", html=None)
    assert (stripped.plain_text, stripped.html) == ("", None)
