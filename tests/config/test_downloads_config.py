"""The [Downloads] section: no links unless an address and a key are given, a lifetime
bounded by thirty minutes, and keys kept as secret references only."""

from __future__ import annotations

from typing import Any

import pytest

from config.test_config_loading import BASE_DIR, imap_account, parse, problems_of
from mailfathom.adapters.config.toml_tables import REFERENCE_HINT
from mailfathom.domain.config import SecretRef
from mailfathom.domain.download_links import DownloadKey

KEY = {"Id": "2026-a", "Secret": {"Env": "MF_DOWNLOAD_KEY"}}


def with_downloads(**downloads: Any) -> dict[str, Any]:
    return {"Accounts": [imap_account()], "Downloads": downloads}


def test_no_section_issues_no_links() -> None:
    downloads = parse({"Accounts": [imap_account()]}).downloads
    assert downloads.issues_links is False
    assert downloads.link_lifetime_seconds == 600


@pytest.mark.parametrize(
    "downloads",
    [{"PublicBaseUrl": "https://mail.example.org"}, {"Keys": [KEY]}],
)
def test_an_address_or_a_key_alone_issues_no_links(downloads: dict[str, Any]) -> None:
    assert parse(with_downloads(**downloads)).downloads.issues_links is False


def test_the_section_is_read_in_order_with_the_first_key_sealing() -> None:
    config = parse(
        with_downloads(
            PublicBaseUrl="https://mail.example.org/mf/",
            LinkLifetimeSeconds=1800,
            Keys=[KEY, {"Id": "2025_z", "Secret": {"File": "keys/old.key"}}],
        )
    ).downloads
    assert config.issues_links is True
    assert config.public_base_url == "https://mail.example.org/mf"
    assert config.link_lifetime_seconds == 1800
    assert config.keys == (
        DownloadKey("2026-a", SecretRef(env="MF_DOWNLOAD_KEY")),
        DownloadKey("2025_z", SecretRef(file=BASE_DIR / "keys/old.key")),
    )


@pytest.mark.parametrize("lifetime", [0, 1801, 3600, -5])
def test_a_lifetime_past_thirty_minutes_is_refused(lifetime: int) -> None:
    assert problems_of(with_downloads(LinkLifetimeSeconds=lifetime)) == [
        "Downloads.LinkLifetimeSeconds: must be an integer from 1 to 1800 (thirty minutes)"
    ]


@pytest.mark.parametrize(
    "url",
    [
        "http://mail.example.org",
        "ftp://mail.example.org",
        "https://",
        "mail.example.org",
        "https://user:pw@mail.example.org",
        "https://mail.example.org/?a=1",
        "https://mail.example.org/#top",
        "https://mail.example.org:99999",
        "https://mail.example.org/a b",
    ],
)
def test_a_public_address_must_be_https_with_nothing_a_link_cannot_follow(url: str) -> None:
    (problem,) = problems_of(with_downloads(PublicBaseUrl=url))
    assert problem.startswith("Downloads.PublicBaseUrl: must be an absolute https:// address")
    assert url == "https://" or url not in problem


@pytest.mark.parametrize("url", ["http://127.0.0.1:8625", "http://localhost", "http://[::1]:80"])
def test_plain_http_is_accepted_on_loopback(url: str) -> None:
    assert parse(with_downloads(PublicBaseUrl=url)).downloads.public_base_url == url


def test_keys_need_ids_of_their_own_and_a_secret_reference() -> None:
    problems = problems_of(
        with_downloads(
            Keys=[
                KEY,
                KEY,
                {"Id": "has.dot", "Secret": {"Env": "X"}},
                {"Id": "inline", "Secret": "the-key-itself"},
                {"Id": "none"},
            ]
        )
    )
    assert problems == [
        "Downloads.Keys[2].Id: must be 1 to 32 letters, digits, underscores or hyphens",
        f"Downloads.Keys[3].Secret: a secret is not accepted in the file; {REFERENCE_HINT}",
        "Downloads.Keys[4].Secret: is required",
        "Downloads.Keys: every entry needs an Id of its own",
    ]
    assert not any("the-key-itself" in p for p in problems)
