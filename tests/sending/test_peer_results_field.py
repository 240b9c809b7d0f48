"""The field the deployment writes on mail between its own accounts, as the verification
engine then reads it: the submitting account's own From authenticates, any other From fails,
and the field is the topmost of the message whatever the message carried."""

from __future__ import annotations

from pathlib import Path

import pytest

from authentication.mail import mail, results
from mailfathom.adapters.authentication.deployment_results import unvouched
from mailfathom.adapters.authentication.engine import build_sender_verifier
from mailfathom.adapters.authentication.header_block import header_fields, values_of
from mailfathom.adapters.config.toml_loader import parse_config
from mailfathom.adapters.local.maildir import LocalConnector
from mailfathom.adapters.local.peers import LocalPeerMailboxes
from mailfathom.domain.config import DEFAULT_AUTHSERV_ID, SenderVerificationConfig
from mailfathom.domain.sender_verdict import AuthorAuthentication, DmarcResult, SenderVerdict

TRUSTED = frozenset({DEFAULT_AUTHSERV_ID})


def _peers(tmp_path: Path) -> tuple[LocalPeerMailboxes, LocalConnector]:
    accounts = [
        {
            "Id": name,
            "Kind": "local",
            "Addresses": [f"{name}@example.org"],
            "Folders": [{"Remote": "INBOX", "Role": "Inbox"}],
            "Delivery": {"Enabled": True, "Address": f"{name}@example.org"},
        }
        for name in ("work", "peer")
    ]
    config = parse_config(
        {"Store": {"DataDir": str(tmp_path)}, "Accounts": accounts}, base_dir=tmp_path
    )
    connector = LocalConnector(tmp_path)
    return LocalPeerMailboxes(config, connector), connector


def _verdict(raw: bytes) -> SenderVerdict:
    engine = build_sender_verifier(SenderVerificationConfig())
    assert engine is not None
    return engine.verify(raw, headers_only=False, trusted_authserv_ids=TRUSTED)


def _delivered(tmp_path: Path, author: str, *above: str) -> bytes:
    peers, connector = _peers(tmp_path)
    peers.deliver("peer", mail("Rota", author, "Yours.\r\n", *above), "k1", sender="work")
    (path,) = (connector.folder("peer", "INBOX").path / "new").iterdir()
    return path.read_bytes()


def test_the_submitting_accounts_own_from_authenticates(tmp_path: Path) -> None:
    raw = _delivered(tmp_path, "Work <Work@Example.org>")
    assert raw.startswith(
        b"Authentication-Results: mailfathom.invalid; auth=pass smtp.auth=work@example.org; "
        b"dmarc=pass header.from=example.org\r\n"
    )
    verdict = _verdict(raw)
    assert verdict.author_authentication is AuthorAuthentication.AUTHENTICATED
    assert verdict.dmarc is DmarcResult.PASS


@pytest.mark.parametrize(
    "author", ["Peer <peer@example.org>", "ceo@example.org", "a@example.org, work@example.org"]
)
def test_a_from_that_is_not_the_submitting_account_fails(tmp_path: Path, author: str) -> None:
    raw = _delivered(tmp_path, author, results(DEFAULT_AUTHSERV_ID, "pass", "example.org"))
    verdict = _verdict(raw)
    assert verdict.author_authentication is AuthorAuthentication.FAILED
    assert verdict.dmarc is DmarcResult.FAIL


def test_an_offered_message_without_the_id_keeps_its_bytes() -> None:
    raw = mail("Note", "x@example.net", "Hi.\r\n", results("mx.example.net", "pass", "x.net"))
    assert unvouched(raw, DEFAULT_AUTHSERV_ID) is raw


def test_an_offered_field_of_the_id_anywhere_in_the_header_is_outranked() -> None:
    forged = results("MailFathom.INVALID", "pass", "example.org")
    raw = mail("Note", "work@example.org", "Hi.\r\n", *([results("mx.example", "none", "x")] * 5))
    raw = raw.replace(b"From:", forged.encode() + b"\r\nFrom:", 1)
    filed = unvouched(raw, DEFAULT_AUTHSERV_ID)
    (first, *_) = values_of(header_fields(filed), "authentication-results")
    assert first == "mailfathom.invalid; none"
    assert _verdict(filed).author_authentication is AuthorAuthentication.NOT_ESTABLISHED
    assert _verdict(raw).author_authentication is AuthorAuthentication.AUTHENTICATED
