"""`mfctl mailbox reverify` end to end: mail synchronized while sender verification and machine
authorship were switched off reads as not yet verified and not assessed over HTTP; once the
configuration switches both on and the command has run in its own process, the next read of
the same running server carries the real verdicts and readings."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from authentication.helpers import key_name, rsa_key
from authentication.mail import GENERATED_TEXT, generated_file, mail, results, signed
from authentication.served import Served, served
from mailfathom.domain.authorship_profile import DEFAULT_PROFILE
from servers.dns import DnsServer
from servers.dovecot import DovecotServer

SIGNED = "Signed before anything verified it"
REPORTED = "Reported by the receiving server earlier"
UNSIGNED = "Unsigned and stored earlier"
GENERATED = "Generated update stored earlier"
TAGGED = "Agenda for Thursday"
ADDRESSES = ["alice@signed.example", "erin@relay.example", "dana@plain.example"]


@pytest.fixture(scope="module")
def dns() -> Iterator[DnsServer]:
    server = DnsServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def deployment(
    dovecot: DovecotServer, dns: DnsServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    key = rsa_key()
    dns.publish(key_name("rsa1", "signed.example"), key.record)
    relay = "Erin Relay <erin@relay.example>"
    messages = {
        SIGNED: signed(mail(SIGNED, "Alice <alice@signed.example>"), key, "signed.example", "rsa1"),
        REPORTED: mail(
            REPORTED, relay, "Hi.\r\n", results("mx.trusted.example", "pass", "relay.example")
        ),
        UNSIGNED: mail(UNSIGNED, "Dana <dana@plain.example>"),
        GENERATED: mail(GENERATED, "Dana <dana@plain.example>", GENERATED_TEXT),
        TAGGED: generated_file("chars-01-tag-characters"),
    }
    with served(
        dovecot,
        tmp_path_factory.mktemp("reverify"),
        dns,
        messages,
        account_keys='TrustedAuthservIds = ["mx.trusted.example"]',
        sections='[SenderTrust]\nTrustedDomains = ["signed.example"]\n',
        readings=False,
    ) as found:
        yield found


def _read(deployment: Served) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Every summary and every content read, by subject."""
    listed = deployment.listed()
    subjects = sorted(listed)
    contents = deployment.contents([listed[s]["storedEmailId"] for s in subjects])
    return listed, dict(zip(subjects, contents, strict=True))


def _switch_on(deployment: Served) -> None:
    text = deployment.config_path.read_text("utf-8")
    assert text.count("Enabled = false") == 2
    deployment.config_path.write_text(text.replace("Enabled = false", "Enabled = true"), "utf-8")


def _switch_verification_off(deployment: Served) -> None:
    text = deployment.config_path.read_text("utf-8")
    on = "[SenderVerification]\nEnabled = true"
    assert on in text
    deployment.config_path.write_text(
        text.replace(on, "[SenderVerification]\nEnabled = false"), "utf-8"
    )


def test_reverify_gives_stored_mail_its_real_verdicts(deployment: Served) -> None:
    listed, content = _read(deployment)
    assert set(listed) == {SIGNED, REPORTED, UNSIGNED, GENERATED, TAGGED}
    for subject, found in content.items():
        auth = found["headers"]["senderAuthentication"]
        assert auth["verificationState"] == "notYetVerified", subject
        assert found["senderVerification"]["authorAuthentication"] == "notEstablished"
        assert found["machineAuthorship"] == {"state": "notAssessed", "likelihood": 0}
        assert found["authorshipEvidence"] == {"signals": [], "profileRevision": None}
        assert listed[subject]["machineAuthorship"]["state"] == "notAssessed"

    _switch_on(deployment)
    done = deployment.run("mailbox", "reverify")

    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    assert "5 message(s) verified and assessed again" in said
    for private in [*listed, *ADDRESSES, "signed.example", "relay.example"]:
        assert private.lower() not in said.lower(), private

    listed, content = _read(deployment)
    pairs = {s: tuple(found["senderVerification"].values()) for s, found in listed.items()}
    assert pairs == {
        SIGNED: ("authenticated", "trusted"),
        REPORTED: ("authenticated", "unknown"),
        UNSIGNED: ("notEstablished", "unknown"),
        GENERATED: ("notEstablished", "unknown"),
        TAGGED: ("notEstablished", "unknown"),
    }
    for subject, found in content.items():
        assert found["headers"]["senderAuthentication"]["verificationState"] == "verified"
        assert found["senderVerification"] == listed[subject]["senderVerification"]
    assert content[SIGNED]["headers"]["senderAuthentication"]["verdictSource"] == (
        "localVerification"
    )
    assert content[REPORTED]["headers"]["senderAuthentication"]["dmarc"] == "pass"
    assert listed[GENERATED]["machineAuthorship"]["state"] == "likely"
    assert content[TAGGED]["authorshipEvidence"] == {
        "signals": ["tagCharacters"],
        "profileRevision": DEFAULT_PROFILE.revision,
    }

    # Run again with verification switched off: the verdicts stay, the readings are redone.
    _switch_verification_off(deployment)
    again = deployment.run("mailbox", "reverify")
    assert again.returncode == 0, again.stderr
    relisted, reread = _read(deployment)
    assert relisted == listed
    assert reread == content
