"""Characters that render as nothing are written out in the question a person answers, in
every field it shows and in each of its languages, while the answer stays bound to what is
sent: the characters themselves."""

from __future__ import annotations

import dataclasses
import email
import email.policy
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.confirmation.confirmed_sending import Status
from mailfathom.app.confirmation.ports import Answer, AnswerKind, Choice, Question
from mailfathom.app.confirmation.question import ShownFile, ShownMessage, question
from mailfathom.app.confirmation.wording import WORDINGS, Language
from mailfathom.app.sending.send_email import SendRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller, ConfirmationMode
from mailfathom.domain.unseen import is_unseen
from sending.helpers import sending_config

from .asking_served import stored_mime

ASKS = Caller(ALL_PERMISSIONS, "careful", ConfirmationMode.ASK)
RLO = "\u202e"
ZWSP = "\u200b"
# A subject that reads "Invoice March.pdf" on screen while it holds an override and a
# zero-width space.
SUBJECT = f"Invoice {RLO}fdp.hcraM\u200b"
BODY = (
    "Please pay 100 EUR\u2066\u2067 to the account below.\n"
    "Account: CZ65 0800 0000 1920 0014 5399\u200d\ufe0f\n"
    "Tagged:\U000e0069\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065\n"
    "Marks\u200e\u200f\u061c\u2060\ufeff\u00ad\u034f end.\n"
)
HTML = "<p>Please pay\u200b 100 EUR</p>"
HIDDEN = {c for c in SUBJECT + BODY + HTML if c != "\n" and is_unseen(c)}
SHOWN_AS = {
    RLO: "\u27e6U+202E RIGHT-TO-LEFT OVERRIDE\u27e7",
    "\u200b": "\u27e6U+200B ZERO WIDTH SPACE\u27e7",
    "\U000e0069": "\u27e6U+E0069 TAG LATIN SMALL LETTER I\u27e7",
    "\ufe0f": "\u27e6U+FE0F VARIATION SELECTOR-16\u27e7",
    "\u2066": "\u27e6U+2066 LEFT-TO-RIGHT ISOLATE\u27e7",
}


class Answering:
    """A person who answers Send to the question they were shown, remembering it."""

    def __init__(self) -> None:
        self.asked: list[Question] = []

    def ask(self, question: Question) -> Answer:
        self.asked.append(question)
        return Answer(AnswerKind.CHOSEN, question.binding, Choice.SEND)


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    register_all(["me@example.org", "friend@example.net", "account below", "Please pay"])
    config = load_config(sending_config(tmp_path, None, mail_delivery="HoldSeconds = 3600"))
    with Services.open(config) as opened:
        yield opened


@pytest.mark.parametrize("language", list(Language))
def test_the_question_writes_out_every_unseen_character_and_sends_them_as_written(
    services: Services, language: Language
) -> None:
    request = SendRequest(
        account="work",
        to=["friend@example.net"],
        subject=SUBJECT,
        plain_text_body=BODY,
        html_body=HTML,
        idempotency_key=uuid.uuid4().hex,
        language=language.value,
    )
    person = Answering()
    settled = services.sending().send.settle(ASKS, request, person)
    assert settled.status is Status.QUEUED
    assert settled.record is not None

    [asked] = person.asked
    assert [hex(ord(c)) for c in asked.text if c in HIDDEN] == []
    assert [shown for shown in SHOWN_AS.values() if shown not in asked.text] == []
    lines = asked.text.splitlines()
    assert lines[:2] == [WORDINGS[language].question, WORDINGS[language].unseen]
    assert f"{WORDINGS[language].subject}: Invoice {SHOWN_AS[RLO]}fdp.hcraM" in asked.text

    # What leaves is what was written, the hidden characters with it.
    sent = email.message_from_bytes(
        stored_mime(services, settled.record.outgoing_id), policy=email.policy.default
    )
    assert str(sent["Subject"]) == SUBJECT
    plain = sent.get_body(("plain",))
    assert plain is not None
    assert plain.get_content().replace("\r\n", "\n") == BODY


SHOWN = ShownMessage(
    account_id="work",
    sender=f"Pay{RLO}roll <me@example.org>",
    to=("friend@example.net",),
    cc=("pal\u200b@example.net",),
    bcc=("hidden@example.net",),
    subject="Lunch",
    files=(ShownFile(f"invoice{RLO}fdp.exe", 2048), ShownFile("menu\U000e0041.pdf", 10)),
    body="Noon?\n",
    html="<p>Noon\u2067?</p>",
    envelope=("to:friend@example.net",),
)


@pytest.mark.parametrize("language", list(Language))
def test_every_row_of_the_question_writes_its_unseen_characters_out(language: Language) -> None:
    text = question(SHOWN, language).text
    wording = WORDINGS[language]
    assert f"{wording.sender}: Pay{SHOWN_AS[RLO]}roll <me@example.org>" in text
    assert f"{wording.cc}: pal{SHOWN_AS[ZWSP]}@example.net" in text
    assert f"{wording.attachments}: invoice{SHOWN_AS[RLO]}fdp.exe (" in text
    assert "menu\u27e6U+E0041 TAG LATIN CAPITAL LETTER A\u27e7.pdf" in text
    assert "<p>Noon\u27e6U+2067 RIGHT-TO-LEFT ISOLATE\u27e7?</p>" in text
    assert not any(is_unseen(c) for c in text if c != "\n")


def test_a_question_without_unseen_characters_carries_no_note_about_them() -> None:
    plain = dataclasses.replace(
        SHOWN,
        sender="Payroll <me@example.org>",
        cc=(),
        files=(),
        html=None,
    )
    for language in Language:
        lines = question(plain, language).text.splitlines()
        assert lines[1] == ""
        assert WORDINGS[language].unseen not in lines


def test_the_answer_is_bound_to_the_characters_not_to_how_they_are_written_out() -> None:
    hidden = dataclasses.replace(SHOWN, subject=f"Lunch{RLO}")
    spelled = dataclasses.replace(SHOWN, subject="Lunch" + SHOWN_AS[RLO])
    asked, lookalike = question(hidden, Language.EN), question(spelled, Language.EN)
    # The two read the same, and only one of them holds the override.
    assert asked.text == lookalike.text
    assert asked.binding != lookalike.binding
