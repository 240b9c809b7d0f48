"""reply_to_email and forward_email, from stored mail through the delivery pass to the test
SMTP server, checked on the bytes it received."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest

from log_audit import register_all
from mailfathom.app.sending.forward_email import ForwardRequest
from mailfathom.app.sending.reply_to_email import ReplyRequest
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from servers.smtp import SmtpServer

from .helpers import (
    AGENT,
    SMTP_PASSWORD,
    SMTP_USER,
    SendingDeployment,
    deliver_and_read,
    stored,
)
from .helpers import open_deployment as _open

ORIGINAL_SUBJECT = "Budget review for the spring"
ORIGINAL_BODY = "Could you check the numbers?\nThe second table looks wrong.\n"
PDF = b"%PDF-1.4 a small document\n" * 40
PEOPLE = [
    "alice@example.net",
    "replies@example.net",
    "carol@example.net",
    "dave@example.net",
    "Alice Sender",
]


def _original(
    *,
    with_reply_to: bool = True,
    subject: str = ORIGINAL_SUBJECT,
    to: str = "me@example.org, carol@example.net",
    cc: str = "dave@example.net, Me@Example.org",
    references: str | None = "<root-0@example.net>",
    in_reply_to: str = "<root-0@example.net>",
) -> bytes:
    m = EmailMessage()
    m["From"] = "Alice Sender <alice@example.net>"
    if with_reply_to:
        m["Reply-To"] = "replies@example.net"
    m["To"] = to
    m["Cc"] = cc
    m["Subject"] = subject
    m["Date"] = "Mon, 29 Jun 2026 10:00:00 +0000"
    m["Message-ID"] = "<original-1@example.net>"
    if references is not None:
        m["References"] = references
    m["In-Reply-To"] = in_reply_to
    m.set_content(ORIGINAL_BODY)
    m.add_attachment(PDF, maintype="application", subtype="pdf", filename="figures.pdf")
    return bytes(m)


@pytest.fixture(scope="module")
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


@pytest.fixture
def deployment(
    tmp_path: Path, smtp: SmtpServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SendingDeployment]:
    smtp.clear()
    register_all([ORIGINAL_SUBJECT, ORIGINAL_BODY, *PEOPLE, "figures.pdf", "boss@example.net"])
    yield from _open(tmp_path, smtp, monkeypatch, mail_delivery="MaxAttachmentSize = 4000")


def _text(message: EmailMessage) -> str:
    body = message.get_body(("plain",))
    assert body is not None
    return str(body.get_content()).replace("\r\n", "\n")


def test_a_reply_to_everyone_is_derived_from_the_stored_email(
    deployment: SendingDeployment, smtp: SmtpServer
) -> None:
    email_id = stored(deployment, _original())
    responding = deployment.services.sending().replies
    record = responding.reply(
        AGENT,
        ReplyRequest(
            stored_email_id=email_id,
            everyone=True,
            plain_text_body="The second table is fixed now.",
            idempotency_key="reply-1",
            cc=["boss@example.net"],
        ),
    )
    assert len(record.recipients) == 4
    rcpt, message = deliver_and_read(deployment.services, smtp)
    # Reply-To answers for the sender; everybody else once, never this account's own address.
    assert rcpt == [
        "replies@example.net",
        "carol@example.net",
        "dave@example.net",
        "boss@example.net",
    ]
    assert message["To"] == "replies@example.net"
    assert message["Cc"] == "carol@example.net, dave@example.net, boss@example.net"
    assert message["Subject"] == f"Re: {ORIGINAL_SUBJECT}"
    assert message["In-Reply-To"] == "<original-1@example.net>"
    assert message["References"] == "<root-0@example.net> <original-1@example.net>"
    text = _text(message)
    assert text.startswith("The second table is fixed now.\n\nOn Mon, 29 Jun 2026 10:00 +0000")
    assert "Alice Sender <alice@example.net> wrote:" in text
    assert "> Could you check the numbers?\n> The second table looks wrong." in text
    assert not list(message.iter_attachments())


def test_a_reply_to_an_email_without_references_follows_the_linking_rule(
    deployment: SendingDeployment, smtp: SmtpServer
) -> None:
    """Without References, the parent an email claims is its first In-Reply-To identifier
    (RFC 5256 section 2.2, the rule conversations are linked by), so the reply's References
    carry that one, then the answered email."""
    original = _original(references=None, in_reply_to="<first-0@example.net> <other-0@example.net>")
    email_id = stored(deployment, original)
    deployment.services.sending().replies.reply(
        AGENT,
        ReplyRequest(
            stored_email_id=email_id,
            everyone=False,
            plain_text_body="Noted.",
            idempotency_key="reply-in-reply-to",
        ),
    )
    _rcpt, message = deliver_and_read(deployment.services, smtp)
    assert message["In-Reply-To"] == "<original-1@example.net>"
    assert message["References"] == "<first-0@example.net> <original-1@example.net>"


def test_a_reply_to_the_sender_only_reaches_reply_to_or_else_from_and_keeps_re_once(
    deployment: SendingDeployment, smtp: SmtpServer
) -> None:
    email_id = stored(deployment, _original(with_reply_to=False, subject="RE: Old thread"))
    register_all(["Old thread"])
    responding = deployment.services.sending().replies
    responding.reply(
        AGENT,
        ReplyRequest(
            stored_email_id=email_id,
            everyone=False,
            plain_text_body="Noted.",
            idempotency_key="reply-2",
        ),
    )
    rcpt, message = deliver_and_read(deployment.services, smtp)
    assert rcpt == ["alice@example.net"]
    assert message["Cc"] is None
    assert message["Subject"] == "RE: Old thread"


def test_a_forward_carries_the_original_files_and_text(
    deployment: SendingDeployment, smtp: SmtpServer
) -> None:
    email_id = stored(deployment, _original())
    responding = deployment.services.sending().forwards
    responding.forward(
        AGENT,
        ForwardRequest(
            stored_email_id=email_id,
            to=["boss@example.net"],
            plain_text_body="For your information.",
            idempotency_key="fwd-1",
        ),
    )
    rcpt, message = deliver_and_read(deployment.services, smtp)
    assert rcpt == ["boss@example.net"]
    assert message["Subject"] == f"Fwd: {ORIGINAL_SUBJECT}"
    assert message["In-Reply-To"] is None
    text = _text(message)
    assert text.startswith("For your information.\n\n---------- Forwarded message ----------")
    assert "Subject: " + ORIGINAL_SUBJECT in text
    assert ORIGINAL_BODY.strip() in text
    (attachment,) = list(message.iter_attachments())
    assert attachment.get_filename() == "figures.pdf"
    assert attachment.get_content_type() == "application/pdf"
    assert attachment.get_content() == PDF


def test_a_forward_past_the_attachment_bounds_is_refused_before_anything_is_read(
    tmp_path: Path, smtp: SmtpServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_all([ORIGINAL_SUBJECT, *PEOPLE])
    for d in _open(tmp_path, smtp, monkeypatch, mail_delivery="MaxAttachmentSize = 100"):
        email_id = stored(d, _original())
        with pytest.raises(Refusal) as refused:
            d.services.sending().forwards.forward(
                AGENT,
                ForwardRequest(
                    stored_email_id=email_id,
                    to=["boss@example.net"],
                    plain_text_body="x",
                    idempotency_key="too-big",
                ),
            )
        assert refused.value.code == Code.MESSAGE_TOO_LARGE
        assert "100 octets" in refused.value.message


def test_an_email_that_cannot_be_answered_is_one_answer(
    deployment: SendingDeployment,
) -> None:
    responding = deployment.services.sending().replies
    email_id = stored(deployment, _original())
    # Its stored content goes missing: unanswerable, like an identifier nothing is held under.
    content_dir = deployment.services.config.store.content_dir
    for path in content_dir.rglob("*.pack"):
        path.unlink()
    answers = []
    for identifier in (email_id, "7c9e6679-7425-40de-944b-e07fc1f90ae7"):
        with pytest.raises(Refusal) as refused:
            responding.reply(
                AGENT,
                ReplyRequest(
                    stored_email_id=identifier,
                    everyone=False,
                    plain_text_body="x",
                    idempotency_key="k",
                ),
            )
        answers.append((refused.value.code, refused.value.message))
    assert answers[0] == answers[1]
    assert answers[0][0] == Code.EMAIL_NOT_ANSWERABLE
    with pytest.raises(Refusal) as malformed:
        deployment.services.sending().forwards.forward(
            AGENT,
            ForwardRequest(
                stored_email_id="not-an-id", to=["a@example.net"], plain_text_body="x",
                idempotency_key="k",
            ),
        )  # fmt: skip
    assert malformed.value.code == Code.NOT_AN_EMAIL_IDENTIFIER


def test_a_reply_to_everyone_leaves_out_every_address_the_account_receives_as(
    tmp_path: Path, smtp: SmtpServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    smtp.clear()
    aliases = ("me@example.org", "me.alias@example.org", "Team@Example.org")
    register_all([ORIGINAL_SUBJECT, ORIGINAL_BODY, *PEOPLE, *aliases, "figures.pdf"])
    original = _original(
        to="ME.ALIAS@example.org, carol@example.net",
        cc="team@example.org, dave@example.net, me@example.org",
    )
    for d in _open(tmp_path, smtp, monkeypatch, addresses=aliases):
        record = d.services.sending().replies.reply(
            AGENT,
            ReplyRequest(
                stored_email_id=stored(d, original),
                everyone=True,
                plain_text_body="Thanks, all.",
                idempotency_key="reply-aliases",
            ),
        )
        kept = ["replies@example.net", "carol@example.net", "dave@example.net"]
        assert [r.address for r in record.recipients] == kept
        rcpt, message = deliver_and_read(d.services, smtp)
        assert rcpt == kept
        assert message["To"] == "replies@example.net"
        assert message["Cc"] == "carol@example.net, dave@example.net"


def test_a_stored_subject_with_a_line_separator_is_answered_on_one_line(
    deployment: SendingDeployment, smtp: SmtpServer
) -> None:
    """Header text read from mail is folded to one line by the same rule the composer holds
    a header value to, so an answer never inherits a separator it would refuse."""
    encoded = base64.b64encode("Budget\u2028review\u2029for spring".encode()).decode()
    raw = _original(subject="Subject written over below")
    raw = raw.replace(b"Subject written over below", f"=?utf-8?b?{encoded}?=".encode())
    email_id = stored(deployment, raw)
    deployment.services.sending().replies.reply(
        AGENT,
        ReplyRequest(
            stored_email_id=email_id,
            everyone=False,
            plain_text_body="Noted.",
            idempotency_key="reply-separator",
        ),
    )
    _rcpt, message = deliver_and_read(deployment.services, smtp)
    assert message["Subject"] == "Re: Budget review for spring"
