"""Sending configuration: an account's Delivery block, [MailDelivery] and [Deployment]."""

from __future__ import annotations

from typing import Any

import pytest

from config.test_config_loading import imap_account, parse, problems_of
from mailfathom.domain.config import DEFAULT_AUTHSERV_ID, SecretRef, TlsMode
from mailfathom.domain.delivery_config import (
    AccountDelivery,
    Ceiling,
    MailDeliveryConfig,
    RecipientPolicy,
    SmtpConnection,
    UnvouchedRecipients,
)


def with_delivery(**delivery: Any) -> dict[str, Any]:
    return {"Accounts": [imap_account(Delivery=delivery)]}


def test_nothing_is_sent_unless_configured() -> None:
    config = parse({"Accounts": [imap_account()]})
    assert config.accounts[0].delivery is None
    assert config.read_only is False
    assert config.mail_delivery == MailDeliveryConfig()
    assert parse(with_delivery(Address="me@example.org")).accounts[0].delivery == AccountDelivery(
        enabled=False, address="me@example.org"
    )


def test_a_delivery_block_with_a_submission_server() -> None:
    config = parse(
        with_delivery(
            Enabled=True,
            Address="me@example.org",
            DisplayName="Me",
            Smtp={
                "Host": "smtp.example.org",
                "Tls": "starttls",
                "Username": "me",
                "Secret": {"Env": "SMTP_PASSWORD"},
            },
        )
    )
    delivery = config.accounts[0].delivery
    assert delivery == AccountDelivery(
        enabled=True,
        address="me@example.org",
        display_name="Me",
        smtp=SmtpConnection(
            host="smtp.example.org",
            port=587,
            username="me",
            secret=SecretRef(env="SMTP_PASSWORD"),
            tls=TlsMode.STARTTLS,
        ),
    )


def test_delivery_rules_are_checked() -> None:
    found = problems_of(
        with_delivery(
            Address="Me <me@example.org>",
            DisplayName="two\nlines",
            Smtp={"Host": "smtp.example.org", "Tls": "none", "Port": 0, "Username": "me"},
            Bogus=1,
        )
    )
    text = "\n".join(found)
    for fragment in (
        "Accounts[0].Delivery.Address",
        "Accounts[0].Delivery.DisplayName",
        "Accounts[0].Delivery.Smtp.Tls",
        "Accounts[0].Delivery.Smtp.Port",
        "Accounts[0].Delivery.Smtp.Secret",
        "Accounts[0].Delivery.Bogus",
    ):
        assert fragment in text, fragment


_NOT_ONE_LINE = ["\u2028", "\u2029", "\x85", "\x07", "\x7f", "\udc80"]


@pytest.mark.parametrize("bad", [*_NOT_ONE_LINE, "\u202e"])
def test_a_sending_display_name_is_held_to_the_name_rule(bad: str) -> None:
    """The From display name is a header value and a name a person reads."""
    found = problems_of(with_delivery(Address="me@example.org", DisplayName=f"Me{bad}Too"))
    assert [p.split(":")[0] for p in found] == ["Accounts[0].Delivery.DisplayName"]


@pytest.mark.parametrize("key", ["Host", "Username"])
@pytest.mark.parametrize("bad", _NOT_ONE_LINE)
def test_a_submission_server_is_held_to_the_one_line_rule(key: str, bad: str) -> None:
    smtp = {"Host": "smtp.example.org", "Username": "me", "Secret": {"Env": "SMTP_PASSWORD"}}
    smtp[key] = f"{smtp[key]}{bad}x"
    found = problems_of(with_delivery(Address="me@example.org", Smtp=smtp))
    assert [p.split(":")[0] for p in found] == [f"Accounts[0].Delivery.Smtp.{key}"]


def test_mail_delivery_and_deployment_sections() -> None:
    config = parse(
        {
            "Accounts": [imap_account()],
            "Deployment": {"ReadOnly": True},
            "MailDelivery": {
                "MaxRecipientCount": 5,
                "MaxBodyCharacters": 1000,
                "HoldSeconds": 30,
                "UnvouchedRecipients": "refuse",
                "RecipientPolicy": {"Allow": ["Example.org", "@partner.net"], "Deny": ["x@y.org"]},
                "SendCeilings": {"Account": {"PerHour": 10}, "Client": {"PerDay": 3}},
                "MaxAttachmentSize": "5MB",
            },
        }
    )
    assert config.read_only is True
    d = config.mail_delivery
    assert (d.max_recipient_count, d.max_body_characters, d.hold_seconds) == (5, 1000, 30)
    assert d.unvouched_recipients is UnvouchedRecipients.REFUSE
    assert d.recipient_policy == RecipientPolicy(
        allow=("example.org", "partner.net"), deny=("x@y.org",)
    )
    assert d.ceilings.account == Ceiling(per_hour=10)
    assert d.ceilings.client == Ceiling(per_day=3)
    assert d.ceilings.installation == Ceiling()
    assert d.max_attachment_octets == 5_000_000


def test_mail_delivery_bounds_are_checked() -> None:
    found = problems_of(
        {
            "Accounts": [imap_account()],
            "MailDelivery": {
                "MaxRecipientCount": 0,
                "HoldSeconds": -1,
                "UnvouchedRecipients": "Maybe",
                "RecipientPolicy": {"Deny": ["not an entry"]},
                "SendCeilings": {"Account": {"PerHour": 0}, "Galaxy": {}},
            },
        }
    )
    text = "\n".join(found)
    for fragment in (
        "MailDelivery.MaxRecipientCount",
        "MailDelivery.HoldSeconds",
        "MailDelivery.UnvouchedRecipients",
        "MailDelivery.RecipientPolicy.Deny[0]",
        "MailDelivery.SendCeilings.Account.PerHour",
        "MailDelivery.SendCeilings.Galaxy",
    ):
        assert fragment in text, fragment


def test_attachment_roots_are_absolute_and_expanded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/operator")
    config = parse(
        {
            "Accounts": [imap_account()],
            "MailDelivery": {
                "AttachmentRoots": ["~/outgoing", "/srv//files/", "/srv/files"],
                "MaxMessageSize": "10MiB",
            },
        }
    )
    d = config.mail_delivery
    assert d.attachment_roots == ("/home/operator/outgoing", "/srv/files")
    assert d.max_message_octets == 10 * 1024 * 1024
    assert MailDeliveryConfig().attachment_roots == ()


@pytest.mark.parametrize("root", ["relative/dir", "/srv/../etc", "/srv/./files", "/srv\nx"])
def test_an_attachment_root_that_is_not_plainly_absolute_is_refused(root: str) -> None:
    found = problems_of({"Accounts": [imap_account()], "MailDelivery": {"AttachmentRoots": [root]}})
    assert [p.split(":")[0] for p in found] == ["MailDelivery.AttachmentRoots[0]"]


def test_the_deployments_authserv_id() -> None:
    assert parse({"Accounts": [imap_account()]}).authserv_id == DEFAULT_AUTHSERV_ID
    named = parse({"Accounts": [imap_account()], "Deployment": {"AuthservId": "Agents.Example"}})
    assert named.authserv_id == "agents.example"
    for broken in ("", "two words", "semi;colon"):
        found = problems_of({"Accounts": [imap_account()], "Deployment": {"AuthservId": broken}})
        assert [p.split(":")[0] for p in found] == ["Deployment.AuthservId"]
