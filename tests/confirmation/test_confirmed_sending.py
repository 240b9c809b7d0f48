"""The confirmation step against small fakes of its ports: what each answer leads to, what is
written for it, and a message that changed between the question and the answer."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
import structlog.testing

from fakes.person import ScriptedPerson
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.confirmation.confirmed_sending import (
    ConfirmedSending,
    NobodyToAsk,
    Prepared,
    Settled,
    Status,
    alert_key,
)
from mailfathom.app.confirmation.ports import (
    Answer,
    AnswerKind,
    Choice,
    OwnerAlert,
    Question,
)
from mailfathom.app.confirmation.question import ShownFile, ShownMessage, question
from mailfathom.app.confirmation.wording import WORDINGS, Language, size
from mailfathom.app.sending.send_email import SendRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller, ConfirmationMode
from mailfathom.domain.errors import PermissionDenied, Refusal
from sending.helpers import sending_config

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
ASKS = Caller(ALL_PERMISSIONS, "careful", ConfirmationMode.ASK)
SENDS = Caller(ALL_PERMISSIONS, "plain")
SHOWN = ShownMessage(
    account_id="work",
    sender="Me <me@example.org>",
    to=("friend@example.net",),
    cc=(),
    bcc=("hidden@example.net",),
    subject="Lunch",
    files=(ShownFile("menu.pdf", 2048),),
    body="Noon?\n",
    html=None,
    envelope=("to:friend@example.net", "bcc:hidden@example.net"),
)


class Alerts:
    def __init__(self, fail: bool = False) -> None:
        self.raised: list[OwnerAlert] = []
        self._fail = fail

    def raise_alert(self, alert: OwnerAlert) -> bool:
        if self._fail:
            raise OSError("the store is gone")
        if self.held_reason(alert.key) is not None:
            return False
        self.raised.append(alert)
        return True

    def held_reason(self, key: str) -> str | None:
        return next((a.reason for a in self.raised if a.key == key), None)

    def listing(self, include_dismissed: bool, limit: int) -> list[OwnerAlert]:
        return self.raised

    def waiting(self) -> list[OwnerAlert]:
        return self.raised

    def find_waiting(self, key: str) -> OwnerAlert | None:
        return next((a for a in self.raised if a.key == key), None)

    def dismiss(self, key: str, now: datetime) -> bool:
        return False


class Outcomes:
    """What the step wrote: sends and drafts."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.drafts: list[str] = []

    def send(self, message: str) -> str:
        self.sent.append(message)
        return "record-of-" + message

    def save_draft(self, message: str) -> str:
        self.drafts.append(message)
        return f"draft-{len(self.drafts)}"


def _settle(
    caller: Caller,
    answer: Callable[[Question], Answer],
    *,
    alerts: Alerts | None = None,
    shown_now: Callable[[int], ShownMessage] = lambda _: SHOWN,
    language: Language = Language.EN,
    told: list[OwnerAlert] | None = None,
) -> tuple[Settled[str] | Refusal, Outcomes, ScriptedPerson, Alerts]:
    outcomes, person, kept = Outcomes(), ScriptedPerson(answer), alerts or Alerts()
    heard = told if told is not None else []
    prepared = 0

    def prepare() -> Prepared[str]:
        nonlocal prepared
        prepared += 1
        return Prepared(shown_now(prepared), f"message-{prepared}")

    step = ConfirmedSending(kept, clock=lambda: T0, raised=heard.append)
    try:
        settled: Settled[str] | Refusal = step.settle(
            caller, person, language, prepare, outcomes.send, outcomes.save_draft
        )
    except Refusal as refusal:
        settled = refusal
    return settled, outcomes, person, kept


def chose(choice: Choice) -> Callable[[Question], Answer]:
    return lambda q: Answer(AnswerKind.CHOSEN, q.binding, choice)


def test_a_caller_that_asks_nobody_sends_without_a_question() -> None:
    settled, _outcomes, person, _ = _settle(SENDS, chose(Choice.CANCEL))
    assert isinstance(settled, Settled)
    assert (settled.status, settled.record) == (Status.QUEUED, "record-of-message-1")
    assert person.asked == []


def test_send_writes_the_message_prepared_again_after_the_answer() -> None:
    settled, outcomes, person, _ = _settle(ASKS, chose(Choice.SEND))
    assert isinstance(settled, Settled)
    assert settled.status is Status.QUEUED
    assert outcomes.sent == ["message-2"]
    assert outcomes.drafts == []
    assert len(person.asked) == 1


def test_save_draft_keeps_a_draft_and_sends_nothing() -> None:
    settled, outcomes, _, alerts = _settle(ASKS, chose(Choice.SAVE_DRAFT))
    assert isinstance(settled, Settled)
    assert (settled.status, settled.draft_id, settled.reason) == (Status.DRAFT, "draft-1", None)
    assert outcomes.sent == []
    assert alerts.raised == []


def test_cancel_writes_nothing() -> None:
    settled, outcomes, _, alerts = _settle(ASKS, chose(Choice.CANCEL))
    assert isinstance(settled, Settled)
    assert (settled.status, settled.record, settled.draft_id) == (Status.CANCELLED, None, None)
    assert outcomes.sent == outcomes.drafts == []
    assert alerts.raised == []


@pytest.mark.parametrize(
    ("kind", "code"),
    [
        (AnswerKind.DECLINED, 59001),
        (AnswerKind.EXPIRED, 59002),
        (AnswerKind.NOT_UNDERSTOOD, 59003),
    ],
)
def test_an_answer_that_is_no_choice_writes_nothing(kind: AnswerKind, code: int) -> None:
    settled, outcomes, _, alerts = _settle(ASKS, lambda q: Answer(kind, q.binding))
    assert isinstance(settled, Refusal)
    assert settled.code == code
    assert outcomes.sent == outcomes.drafts == []
    assert alerts.raised == []


@pytest.mark.parametrize("choice", [Choice.SEND, Choice.SAVE_DRAFT])
def test_a_message_changed_after_the_question_is_refused(choice: Choice) -> None:
    later = dataclasses.replace(SHOWN, body="Noon? Bring the contract.\n")
    settled, outcomes, _, _ = _settle(
        ASKS, chose(choice), shown_now=lambda n: SHOWN if n == 1 else later
    )
    assert isinstance(settled, Refusal)
    assert settled.code == 59004
    assert outcomes.sent == outcomes.drafts == []


@pytest.mark.parametrize(
    "changed",
    [
        {"envelope": ("to:friend@example.net", "bcc:other@example.net")},
        {"unshown": ("<other@example.org>",)},
        {"account_id": "home"},
    ],
)
def test_what_is_sent_unshown_is_bound_as_well(changed: dict[str, object]) -> None:
    later = dataclasses.replace(SHOWN, **changed)  # type: ignore[arg-type]
    settled, outcomes, _, _ = _settle(
        ASKS, chose(Choice.SEND), shown_now=lambda n: SHOWN if n == 1 else later
    )
    assert isinstance(settled, Refusal)
    assert settled.code == 59004
    assert outcomes.sent == []


def test_nobody_to_ask_keeps_a_draft_and_alerts_the_owner() -> None:
    settled, outcomes, _, alerts = _settle(ASKS, NobodyToAsk().ask)
    assert isinstance(settled, Settled)
    assert (settled.status, settled.draft_id, settled.reason) == (
        Status.DRAFT,
        "draft-1",
        "confirmation_unavailable",
    )
    assert outcomes.sent == []
    assert alerts.raised == [
        OwnerAlert(alert_key("draft-1"), "work", "draft-1", "confirmation_unavailable", T0)
    ]
    assert alert_key("draft-1").startswith("draft:")
    assert len(alert_key("draft-1")) == 70


def test_a_recorded_alert_is_told_and_logged_as_a_warning_without_the_message() -> None:
    told: list[OwnerAlert] = []
    with structlog.testing.capture_logs() as logged:
        settled, _, _, alerts = _settle(ASKS, NobodyToAsk().ask, told=told)
    assert isinstance(settled, Settled)
    assert told == alerts.raised
    [warning] = [e for e in logged if e["event"] == "confirmation.owner_alert_raised"]
    assert warning == {
        "event": "confirmation.owner_alert_raised",
        "log_level": "warning",
        "account": "work",
        "alert": alert_key("draft-1"),
        "reason": "confirmation_unavailable",
    }


def test_an_alert_already_held_is_neither_told_nor_logged_again() -> None:
    alerts = Alerts()
    told: list[OwnerAlert] = []
    alerts.raise_alert(OwnerAlert(alert_key("draft-1"), "work", "draft-1", "earlier", T0))
    with structlog.testing.capture_logs() as logged:
        settled, _, _, _ = _settle(ASKS, NobodyToAsk().ask, alerts=alerts, told=told)
    assert isinstance(settled, Settled)
    assert settled.draft_id == "draft-1"
    assert told == []
    assert [e for e in logged if e["event"] == "confirmation.owner_alert_raised"] == []


def test_an_alert_that_cannot_be_recorded_fails_naming_the_draft() -> None:
    settled, outcomes, _, _ = _settle(ASKS, NobodyToAsk().ask, alerts=Alerts(fail=True))
    assert isinstance(settled, Refusal)
    assert settled.code == 59005
    assert "draft-1" in settled.message
    assert outcomes.drafts == ["message-1"]
    assert outcomes.sent == []


@pytest.mark.parametrize(
    ("language", "rows", "choices"),
    [
        (
            Language.EN,
            ["From: ", "To: ", "Bcc: ", "Subject: ", "Attachments: menu.pdf (2.0 KiB)"],
            ["Send", "Save draft", "Cancel"],
        ),
        (
            Language.CS,
            ["Od: ", "Komu: ", "Skrytá kopie: ", "Předmět: ", "Přílohy: menu.pdf (2,0 KiB)"],
            ["Odeslat", "Uložit koncept", "Zrušit"],
        ),
        (
            Language.SK,
            ["Od: ", "Komu: ", "Skrytá kópia: ", "Predmet: ", "Prílohy: menu.pdf (2,0 KiB)"],
            ["Odoslať", "Uložiť koncept", "Zrušiť"],
        ),
    ],
)
def test_the_question_shows_the_rows_and_the_text_in_the_callers_language(
    language: Language, rows: list[str], choices: list[str]
) -> None:
    asked = question(SHOWN, language)
    lines = asked.text.splitlines()
    assert lines[0] == WORDINGS[language].question
    shown_rows = [line for line in lines[2:] if ": " in line][: len(rows)]
    assert [r.split(": ")[0] for r in shown_rows] == [r.split(": ")[0] for r in rows]
    assert shown_rows[-1] == rows[-1]
    # The empty Cc row is left out; the body closes the question exactly as it is sent.
    assert not any(line.startswith(WORDINGS[language].cc + ":") for line in lines)
    assert asked.text.endswith("\n" + SHOWN.body)
    assert [label for _, label in asked.choices] == choices
    assert [c for c, _ in asked.choices] == [Choice.SEND, Choice.SAVE_DRAFT, Choice.CANCEL]


def test_sizes_climb_the_1024_ladder() -> None:
    en = WORDINGS[Language.EN]
    assert [size(n, en) for n in (0, 1023, 1024, 1536, 5 * 1024**2, 3 * 1024**3)] == [
        "0 B",
        "1023 B",
        "1.0 KiB",
        "1.5 KiB",
        "5.0 MiB",
        "3.0 GiB",
    ]


def test_sending_turned_off_after_the_question_is_refused_and_nothing_written() -> None:
    outcomes, person = Outcomes(), ScriptedPerson(chose(Choice.SEND))
    prepared = 0

    def prepare() -> Prepared[str]:
        nonlocal prepared
        prepared += 1
        if prepared > 1:
            raise Refusal(56003, "Sending from this account is not enabled.")
        return Prepared(SHOWN, "message")

    step = ConfirmedSending(Alerts(), clock=lambda: T0)
    with pytest.raises(Refusal) as refused:
        step.settle(ASKS, person, Language.EN, prepare, outcomes.send, outcomes.save_draft)
    assert refused.value.code == 56003
    assert outcomes.sent == outcomes.drafts == []


def test_the_path_that_asks_nobody_refuses_a_caller_who_must_be_asked(tmp_path: Path) -> None:
    config_path = sending_config(tmp_path, None, mail_delivery="HoldSeconds = 3600")
    with Services.open(load_config(config_path)) as services:
        request = SendRequest(
            account="work",
            to=["listed@example.net"],
            subject="Asked first",
            plain_text_body="Nobody was asked.\n",
            idempotency_key="unasked",
        )
        with pytest.raises(PermissionDenied):
            services.sending().send.send(ASKS, request)
        assert services.outbox().listing(10) == []


@pytest.mark.parametrize(
    "answer",
    [
        chose(Choice.SEND),
        chose(Choice.SAVE_DRAFT),
        chose(Choice.CANCEL),
        lambda q: Answer(AnswerKind.DECLINED, q.binding),
        lambda q: Answer(AnswerKind.EXPIRED, q.binding),
        lambda q: Answer(AnswerKind.NOT_UNDERSTOOD, q.binding),
        NobodyToAsk().ask,
    ],
    ids=["send", "save-draft", "cancel", "declined", "expired", "not-understood", "nobody"],
)
def test_a_message_sent_by_another_call_while_the_person_decided_is_answered_as_that_send(
    answer: Callable[[Question], Answer],
) -> None:
    outcomes, alerts = Outcomes(), Alerts()
    sent_meanwhile: list[Settled[str]] = []

    def decide(asked: Question) -> Answer:
        sent_meanwhile.append(Settled(Status.QUEUED, "work", record="record-of-the-other-call"))
        return answer(asked)

    person = ScriptedPerson(decide)
    step = ConfirmedSending(alerts, clock=lambda: T0)
    settled = step.settle(
        ASKS,
        person,
        Language.EN,
        lambda: Prepared(SHOWN, "message"),
        outcomes.send,
        outcomes.save_draft,
        repeated=lambda _: sent_meanwhile[0] if sent_meanwhile else None,
    )
    assert len(person.asked) == 1
    assert settled == sent_meanwhile[0]
    assert outcomes.sent == outcomes.drafts == []
    assert alerts.raised == []


def test_a_repeat_is_answered_before_anybody_is_asked() -> None:
    outcomes, person = Outcomes(), ScriptedPerson(chose(Choice.CANCEL))
    first: Settled[str] = Settled(Status.QUEUED, "work", record="record-of-the-first-call")
    step = ConfirmedSending(Alerts(), clock=lambda: T0)
    settled = step.settle(
        ASKS,
        person,
        Language.EN,
        lambda: Prepared(SHOWN, "message"),
        outcomes.send,
        outcomes.save_draft,
        repeated=lambda _: first,
    )
    assert settled == first
    assert person.asked == []
    assert outcomes.sent == outcomes.drafts == []
