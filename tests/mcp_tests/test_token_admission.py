"""Whom a verified token is served as: the entry its issuer and subject name, holding what
both the entry and the token's scopes grant, or a refusal saying why not."""

from __future__ import annotations

from dataclasses import replace

import anyio
from mcp.server.auth.provider import AccessToken

from mailfathom.domain.access import Caller, ConfirmationMode, Permission
from mailfathom.domain.config import CallerEntry
from mailfathom.domain.mcp_oauth import McpOAuthConfig, OAuthSubject
from mailfathom.entrypoints.mcp.oauth.admission import Admitted, Refused, TokenAdmission

ISSUER = "https://id.example.org/realms/mail"
OTHER = "https://other-id.example.net/"
CONFIG = McpOAuthConfig(resource="https://mail.example.com/mcp", authorization_servers=(ISSUER,))
READ = Permission.MAIL_READ
SEND = Permission.SEND
DRAFT = Permission.DRAFTS_WRITE
# What the published tools need: reading alone, sending alone, replying needs both, drafting.
PUBLISHED = [frozenset({READ}), frozenset({SEND}), frozenset({READ, SEND}), frozenset({DRAFT})]


class Tokens:
    """Tokens already verified, by their text: the verifier port, in memory."""

    def __init__(self, **tokens: AccessToken) -> None:
        self.tokens = tokens

    async def verify_token(self, token: str) -> AccessToken | None:
        return self.tokens.get(token)


def token(subject: str, *scopes: str, issuer: str = ISSUER) -> AccessToken:
    return AccessToken(
        token="x", client_id="c", scopes=list(scopes), subject=subject, claims={"iss": issuer}
    )


def entry(name: str, subject: str, **changes: object) -> CallerEntry:
    return replace(CallerEntry(name, None, oauth=OAuthSubject(subject)), **changes)  # type: ignore[arg-type]


def admit(
    entries: list[CallerEntry], found: AccessToken | None, config: McpOAuthConfig = CONFIG
) -> Admitted | Refused:
    verifier = Tokens(t=found) if found is not None else Tokens()
    admission = TokenAdmission(config, entries, verifier, PUBLISHED)
    return anyio.run(admission.admit, "t")


def test_the_entry_naming_the_subject_is_served_with_what_both_grant() -> None:
    person = entry(
        "person",
        "sub-1",
        permissions=frozenset({READ, DRAFT}),
        confirmation=ConfirmationMode.ASK,
    )
    outcome = admit(
        [entry("other", "sub-2"), person],
        token("sub-1", "mailfathom.mail.read", "mailfathom.mail.send", "openid"),
    )
    assert isinstance(outcome, Admitted)
    assert outcome.caller == Caller(frozenset({READ}), "person", ConfirmationMode.ASK)
    assert outcome.token.subject == "sub-1"


def test_an_entry_may_serve_its_grant_whatever_the_scopes() -> None:
    person = entry(
        "person",
        "sub-1",
        permissions=frozenset({READ, SEND}),
        oauth=OAuthSubject("sub-1", permissions_from_token_scopes=False),
    )
    outcome = admit([person], token("sub-1", "openid", "email"))
    assert isinstance(outcome, Admitted)
    assert outcome.caller.permissions == frozenset({READ, SEND})


def test_scopes_are_read_with_or_without_the_configured_prefix() -> None:
    config = replace(CONFIG, scope_prefix="api://6d1c/")
    scopes = (
        "api://6d1c/mailfathom.mail.read",
        "mailfathom.mail.send",
        "api://x/mailfathom.mail.drafts.write",
    )
    outcome = admit([entry("person", "sub-1")], token("sub-1", *scopes), config)
    assert isinstance(outcome, Admitted)
    assert outcome.caller.permissions == frozenset({READ, SEND})


def test_a_subject_no_entry_names_is_not_admitted() -> None:
    assert admit([entry("person", "sub-1")], token("sub-9", "mailfathom.mail.read")) == Refused(
        "notAdmitted"
    )


def test_a_subject_is_matched_within_the_issuer_its_entry_names() -> None:
    config = replace(CONFIG, authorization_servers=(ISSUER, OTHER))
    person = entry("person", "sub-1", oauth=OAuthSubject("sub-1", issuer=OTHER))
    assert admit([person], token("sub-1", "mailfathom.mail.read"), config) == Refused("notAdmitted")
    admitted = admit([person], token("sub-1", "mailfathom.mail.read", issuer=OTHER), config)
    assert isinstance(admitted, Admitted)


def test_a_token_whose_scopes_carry_no_permission_is_admitted_holding_none() -> None:
    # The entry writes no grant: its whole surface is a ceiling, and the token's scopes
    # carry nothing of it.
    outcome = admit([entry("person", "sub-1")], token("sub-1", "openid", "profile"))
    assert isinstance(outcome, Admitted)
    assert outcome.caller.permissions == frozenset()


def test_scopes_reaching_no_published_tool_are_admitted_holding_what_they_carry() -> None:
    person = entry("person", "sub-1", permissions=frozenset({READ, DRAFT, Permission.ASK}))
    outcome = admit([person], token("sub-1", "mailfathom.mail.ask", "mailfathom.mail.send"))
    # Asking is no published tool's need, and sending is outside the entry's grant.
    assert isinstance(outcome, Admitted)
    assert outcome.caller.permissions == frozenset({Permission.ASK})


def test_a_token_lacking_a_required_scope_is_refused_naming_every_required_one() -> None:
    config = replace(CONFIG, scope_prefix="api://6d1c/", required_scopes=(READ, SEND))
    refused = Refused(
        "insufficientScope", ("api://6d1c/mailfathom.mail.read", "api://6d1c/mailfathom.mail.send")
    )
    person = entry("person", "sub-1")
    assert admit([person], token("sub-1", "mailfathom.mail.read", "openid"), config) == refused
    # Whatever the entry serves: an entry ignoring scopes is held to them too.
    granted = entry(
        "granted", "sub-2", oauth=OAuthSubject("sub-2", permissions_from_token_scopes=False)
    )
    assert admit([granted], token("sub-2", "openid"), config) == refused
    # Read with or without the prefix, as every scope is.
    scopes = ("api://6d1c/mailfathom.mail.read", "mailfathom.mail.send")
    outcome = admit([person], token("sub-1", *scopes), config)
    assert isinstance(outcome, Admitted)
    assert outcome.caller.permissions == frozenset({READ, SEND})


def test_a_subject_no_entry_names_is_not_admitted_before_its_scopes_are_read() -> None:
    config = replace(CONFIG, required_scopes=(READ,))
    outcome = admit([entry("person", "sub-1")], token("sub-9", "openid"), config)
    assert outcome == Refused("notAdmitted")


def test_an_entry_granting_nothing_is_served_nothing_rather_than_asked_for_scopes() -> None:
    person = entry("person", "sub-1", permissions=frozenset())
    outcome = admit([person], token("sub-1", "mailfathom.mail.read"))
    assert isinstance(outcome, Admitted)
    assert outcome.caller.permissions == frozenset()


def test_a_token_that_does_not_verify_is_an_invalid_token() -> None:
    assert admit([entry("person", "sub-1")], None) == Refused("invalidToken")


def test_the_scopes_supported_are_those_published_tools_need_in_declared_order() -> None:
    admission = TokenAdmission(replace(CONFIG, scope_prefix="p/"), [], Tokens(), PUBLISHED)
    assert admission.scopes_supported() == [
        "p/mailfathom.mail.read",
        "p/mailfathom.mail.send",
        "p/mailfathom.mail.drafts.write",
    ]


def test_the_scopes_supported_name_the_required_ones_too() -> None:
    config = replace(CONFIG, required_scopes=(Permission.CONTACTS_READ,))
    admission = TokenAdmission(config, [], Tokens(), PUBLISHED)
    assert admission.scopes_supported() == [
        "mailfathom.mail.read",
        "mailfathom.mail.send",
        "mailfathom.mail.drafts.write",
        "mailfathom.mail.contacts.read",
    ]
