"""Synchronization asks the wired trust ports about every message it stores and writes their
answers in the message's own commit; with no port wired it records nothing. Against Dovecot,
on SQLite and PostgreSQL."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import sqlalchemy as sa

from fakes.trust import PROFILE, BrokenVerifier, FakeAssessor, FakeVerifier
from mailfathom.adapters.sql.schema import message_trust
from mailfathom.bootstrap import Services
from mailfathom.domain.authorship import NOT_ASSESSED, AuthorshipReading, AuthorshipState
from mailfathom.domain.sender_verdict import AuthorAuthentication, SenderVerdict, VerdictSource
from servers.dovecot import ImapAccount

from .helpers import (
    RemoteMailbox,
    imap_account_config,
    open_services,
    sample,
    trust_by_subject,
)


def _marked(subject: str, verdict: str, body: str = "Hello there.\n") -> bytes:
    raw = sample(subject, body=body)
    return f"X-Test-Verdict: {verdict}\r\n".encode() + raw


def _by_subject(services: Services) -> dict[str, tuple[SenderVerdict, AuthorshipReading]]:
    return trust_by_subject(services)


def _trust_rows(services: Services) -> int:
    with services.engine.connect() as c:
        return int(c.execute(sa.select(sa.func.count()).select_from(message_trust)).scalar_one())


def test_every_stored_message_carries_what_the_ports_answered(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox, database_url: str | None
) -> None:
    remote.append(_marked("Signed", "authenticated"))
    remote.append(_marked("Forged", "failed", body="This text was generated.\n"))
    remote.append(_marked("Too large", "authenticated", body="x" * 5000 + "\n"))
    # Enough mail for the batch to be prepared in the worker processes.
    for i in range(26):
        remote.append(_marked(f"Plain {i}", "none"))
    account = imap_account_config(imap_account, max_message_octets=3000)
    verifier, assessor = FakeVerifier(), FakeAssessor()
    with open_services(tmp_path, account, database_url) as services:
        services.sender_verifier = verifier
        services.authorship_assessor = assessor
        services.account_synchronizer().run_once(account)
        stored = _by_subject(services)

    assert len(stored) == 29
    signed_verdict, signed_reading = stored["Signed"]
    assert signed_verdict.author_authentication is AuthorAuthentication.AUTHENTICATED
    assert signed_verdict.displayed_author_domain == "EXAMPLE.ORG"
    assert signed_reading.state is AuthorshipState.UNLIKELY
    forged_verdict, forged_reading = stored["Forged"]
    assert forged_verdict.author_authentication is AuthorAuthentication.FAILED
    assert forged_verdict.verdict_source is VerdictSource.LOCAL_VERIFICATION
    assert forged_reading.state is AuthorshipState.LIKELY
    assert forged_reading.profile_revision == PROFILE
    # Stored by its header block alone: verified from it, and no text to assess.
    large_verdict, large_reading = stored["Too large"]
    assert large_verdict.author_authentication is AuthorAuthentication.AUTHENTICATED
    assert large_reading == NOT_ASSESSED
    assert sorted(headers_only for headers_only, _ in verifier.asked) == [False] * 28 + [True]
    assert {ids for _, ids in verifier.asked} == {frozenset()}
    assert ("Forged", "This text was generated.\n") in assessor.asked


def test_nothing_is_recorded_where_no_port_is_wired(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox, database_url: str | None
) -> None:
    remote.append(_marked("Signed", "authenticated"))
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account, database_url) as services:
        services.sender_verifier = None
        services.authorship_assessor = None
        services.account_synchronizer().run_once(account)
        assert _trust_rows(services) == 0


def test_a_message_held_back_is_verified_again_once_its_content_arrives(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    first = _marked("First", "none", body="a" * 1500 + "\n")
    remote.append(first)
    remote.append(_marked("Held", "authenticated", body="generated " * 150 + "\n"))
    account = imap_account_config(imap_account, storage_ceiling_octets=len(first) + 200)
    verifier, assessor = FakeVerifier(), FakeAssessor()
    with open_services(tmp_path, account) as services:
        services.sender_verifier = verifier
        services.authorship_assessor = assessor
        sync = services.account_synchronizer()
        sync.run_once(account)
        assert _by_subject(services)["Held"][1] == NOT_ASSESSED
        asked_before = len(verifier.asked)
        sync.run_once(replace(account, storage_ceiling_octets=10 * len(first)))
        verdict, reading = _by_subject(services)["Held"]
    assert verifier.asked[asked_before:] == [(False, frozenset())]
    assert verdict.author_authentication is AuthorAuthentication.AUTHENTICATED
    assert reading.state is AuthorshipState.LIKELY
    assert _trust_rows(services) == 2


def test_a_verifier_that_raises_costs_the_verdict_and_never_the_message(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    remote.append(_marked("Signed", "authenticated"))
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        services.sender_verifier = BrokenVerifier()
        services.authorship_assessor = FakeAssessor()
        services.account_synchronizer().run_once(account)
        verdict, reading = _by_subject(services)["Signed"]
    assert verdict.author_authentication is AuthorAuthentication.NOT_ESTABLISHED
    assert verdict.state.value == "notYetVerified"
    assert reading.state is AuthorshipState.UNLIKELY
