"""Sealing a download grant into a link and opening it again, with no server: what a link
carries, that no altered byte opens, and rotation through the key ring."""

from __future__ import annotations

import base64
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

from downloads.keys import new_key_text
from mailfathom.adapters.download_links import (
    MAX_TOKEN_CHARACTERS,
    KeyMaterialRefused,
    RingKey,
    SealedLinks,
    decode_key,
    links_of,
)
from mailfathom.domain.config import SecretRef
from mailfathom.domain.download_links import DownloadGrant, DownloadKey, DownloadsConfig, LinkFault
from mailfathom.domain.errors import ConfigurationError

BASE = "https://mail.example.org/files"
GRANT = DownloadGrant(
    "work",
    uuid.UUID("6b0f3c1e-8a51-4c36-9e0c-6f7b1d2a9c44"),
    "2.3",
    datetime(2026, 6, 1, tzinfo=UTC),
)


def _key(key_id: str) -> RingKey:
    return RingKey(key_id, decode_key(new_key_text()))


NEW, OLD = _key("new"), _key("old")


def _token(url: str) -> str:
    return url.rsplit("/", 1)[1]


def test_a_link_opens_to_the_grant_it_was_issued_for() -> None:
    links = SealedLinks(BASE, [NEW])
    url = links.issue(GRANT)
    assert url.startswith("https://mail.example.org/files/downloads/new.")
    assert links.open(_token(url)) == GRANT


def test_two_links_for_one_grant_differ() -> None:
    links = SealedLinks(BASE, [NEW])
    assert links.issue(GRANT) != links.issue(GRANT)


def test_the_link_carries_no_identifier_in_clear() -> None:
    token = _token(SealedLinks(BASE, [NEW]).issue(GRANT))
    sealed = base64.urlsafe_b64decode(token.split(".", 1)[1] + "==")
    for clear in (GRANT.stored_email_id.bytes, b"work", b"2.3", str(GRANT.stored_email_id)):
        assert (clear if isinstance(clear, bytes) else clear.encode()) not in sealed
    assert GRANT.stored_email_id.hex not in token


def test_no_altered_character_opens() -> None:
    links = SealedLinks(BASE, [NEW])
    token = _token(links.issue(GRANT))
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    start = len("new.")
    for position in range(start, len(token)):
        replacement = alphabet[(alphabet.index(token[position]) + 1) % len(alphabet)]
        altered = token[:position] + replacement + token[position + 1 :]
        assert links.open(altered) is LinkFault.NOT_ISSUED_HERE, position


@pytest.mark.parametrize(
    "token",
    ["", "new", "new.", ".AAAA", "new.!!!!", "new.AAAA", "new/x.AAAA", "a" * 40 + ".AAAA"],
)
def test_malformed_links_are_not_recognized(token: str) -> None:
    assert SealedLinks(BASE, [NEW]).open(token) is LinkFault.NOT_ISSUED_HERE


def test_an_oversized_link_is_refused_before_it_is_decoded() -> None:
    links = SealedLinks(BASE, [NEW])
    token = _token(links.issue(GRANT))
    assert links.open(token + "A" * (MAX_TOKEN_CHARACTERS - len(token) + 1)) is (
        LinkFault.NOT_ISSUED_HERE
    )


def test_a_link_sealed_by_another_deployment_under_the_same_key_id_is_not_recognized() -> None:
    other = SealedLinks(BASE, [_key("new")])
    assert SealedLinks(BASE, [NEW]).open(_token(other.issue(GRANT))) is LinkFault.NOT_ISSUED_HERE


def test_rotation_keeps_older_links_until_their_key_is_removed() -> None:
    before = SealedLinks(BASE, [OLD])
    issued_before = _token(before.issue(GRANT))
    rotated = SealedLinks(BASE, [NEW, OLD])
    assert rotated.open(issued_before) == GRANT
    issued_after = _token(rotated.issue(GRANT))
    assert issued_after.startswith("new.")
    removed = SealedLinks(BASE, [NEW])
    assert removed.open(issued_before) is LinkFault.KEY_RETIRED
    assert removed.open(issued_after) == GRANT


@pytest.mark.parametrize("text", ["", "not base64 at all!", base64.b64encode(b"x" * 16).decode()])
def test_key_material_must_be_32_bytes_in_base64(text: str) -> None:
    with pytest.raises(KeyMaterialRefused):
        decode_key(text)


def test_both_base64_alphabets_are_read() -> None:
    raw = bytes(range(200, 232))
    assert decode_key(base64.b64encode(raw).decode()) == raw
    assert decode_key(base64.urlsafe_b64encode(raw).decode().rstrip("=")) == raw


def _config(*keys: DownloadKey, url: str | None = BASE) -> DownloadsConfig:
    return DownloadsConfig(public_base_url=url, keys=keys)


def test_no_links_without_a_public_address_or_a_key() -> None:
    key = DownloadKey("k", SecretRef(env="UNUSED"))
    assert links_of(_config(key, url=None), lambda _: new_key_text()) is None
    assert links_of(_config(), lambda _: new_key_text()) is None


def test_the_first_key_seals_and_every_key_opens(tmp_path: Path) -> None:
    texts = {"NEW_KEY": new_key_text(), "OLD_KEY": new_key_text()}
    config = _config(
        DownloadKey("new", SecretRef(env="NEW_KEY")), DownloadKey("old", SecretRef(env="OLD_KEY"))
    )
    links = links_of(config, lambda ref: texts[str(ref.env)])
    assert links is not None
    assert _token(links.issue(GRANT)).startswith("new.")
    older = SealedLinks(BASE, [RingKey("old", decode_key(texts["OLD_KEY"]))])
    assert links.open(_token(older.issue(GRANT))) == GRANT


def test_a_key_secret_that_is_no_key_stops_start_up_without_repeating_it() -> None:
    secret = "short-and-not-a-key"
    key = DownloadKey("k", SecretRef(env="K", origin="Downloads.Keys[0].Secret"))
    with pytest.raises(ConfigurationError) as caught:
        links_of(_config(key), lambda _: secret)
    assert caught.value.code == 11001
    assert caught.value.message.startswith("Downloads.Keys[0].Secret: the key ")
    assert secret not in str(caught.value)
