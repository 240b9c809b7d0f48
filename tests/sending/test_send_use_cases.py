"""send_email, get_outgoing_email, cancel_outgoing_email and the operator's withdrawal at the
use cases, on the in-memory store: what is written for each call, the refusal each bad
argument earns with nothing written, who may read and withdraw a send, and what each answer
of the person asked leads to, and that a repeat of a send is answered from the outbox with
nobody asked, whatever they would have answered."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from fakes.deployment import FakeDeployment
from fakes.person import ANSWERS, ScriptedPerson, chooses
from mailfathom.app.confirmation.confirmed_sending import Settled, Status, alert_key
from mailfathom.app.confirmation.ports import Answer, AnswerKind, Choice, Question
from mailfathom.app.sending.administer_outbox import Withdrawn
from mailfathom.app.sending.send_email import SendRequest
from mailfathom.domain.access import ALL_PERMISSIONS, Caller, ConfirmationMode, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.drafts import DraftLife
from mailfathom.domain.errors import PermissionDenied, Refusal
from mailfathom.domain.outgoing import AddressField, OutgoingKind, OutgoingRecord, Stage

from .helpers import AGENT, OTHER_AGENT, fake_deployment

ASKS = Caller(ALL_PERMISSIONS, "careful", ConfirmationMode.ASK)
UNCONFIGURED = """
[[Accounts]]
Id = "archive"
DisplayName = "Archive"
Kind = "local"
"""


@pytest.fixture
def d(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeDeployment:
    return fake_deployment(
        tmp_path, monkeypatch, mail_delivery="HoldSeconds = 60", extra_accounts=UNCONFIGURED
    )


def _request(**changes: object) -> SendRequest:
    fields: dict[str, object] = {
        "account": "work",
        "to": ["friend@example.net"],
        "cc": ["copy@example.net"],
        "bcc": ["hidden@example.net"],
        "subject": "Lunch",
        "plain_text_body": "Noon?\n",
        "idempotency_key": "k1",
    }
    fields.update(changes)
    return SendRequest(**fields)  # type: ignore[arg-type]


def test_a_send_is_written_queued_and_due_after_the_hold(d: FakeDeployment) -> None:
    record = d.send().send(AGENT, _request())
    assert (record.stage, record.kind, record.caller, record.attempt_count) == (
        Stage.QUEUED,
        OutgoingKind.NEW,
        "agent",
        0,
    )
    assert [(r.field, r.address) for r in record.recipients] == [
        (AddressField.TO, "friend@example.net"),
        (AddressField.CC, "copy@example.net"),
        (AddressField.BCC, "hidden@example.net"),
    ]
    (listed,) = d.memory.outbox.listing(10)
    assert (listed.not_before - record.queued_at).total_seconds() == 60
    assert d.memory.outbox.claim("w", d.clock(), 60, 10) == []
    d.clock.advance(60)
    (claimed,) = d.memory.outbox.claim("w", d.clock(), 60, 10)
    # The message as it travels names nobody blind-copied.
    assert b"hidden@example.net" not in claimed.mime
    assert b"Subject: Lunch" in claimed.mime


def test_a_repeated_call_answers_the_first_record_and_writes_nothing(d: FakeDeployment) -> None:
    first = d.send().send(AGENT, _request())
    d.clock.advance(5)
    again = d.send().send(AGENT, _request(subject="Changed"))
    assert again == first
    assert len(d.memory.outbox.listing(10)) == 1


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"idempotency_key": ""}, Code.MESSAGE_FIELD_NOT_COMPOSABLE),
        ({"idempotency_key": "k" * 129}, Code.MESSAGE_FIELD_NOT_COMPOSABLE),
        ({"idempotency_key": "a\nb"}, Code.MESSAGE_FIELD_NOT_COMPOSABLE),
        ({"to": "friend@example.net"}, Code.MESSAGE_FIELD_NOT_COMPOSABLE),
        ({"to": ["Friend <friend@example.net>"]}, Code.MESSAGE_FIELD_NOT_COMPOSABLE),
        ({"to": [], "cc": None, "bcc": None}, Code.MESSAGE_FIELD_NOT_COMPOSABLE),
        ({"to": [f"p{n}@example.net" for n in range(501)]}, Code.MESSAGE_TOO_LARGE),
        ({"to": [f"p{n}@example.net" for n in range(101)]}, Code.MESSAGE_TOO_LARGE),
        ({"subject": "a\r\nBcc: x@example.net"}, Code.MESSAGE_FIELD_NOT_COMPOSABLE),
        ({"subject": "s" * 999}, Code.MESSAGE_TOO_LARGE),
        ({"subject": 5}, Code.MESSAGE_FIELD_NOT_COMPOSABLE),
        ({"plain_text_body": None}, Code.MESSAGE_FIELD_NOT_COMPOSABLE),
        ({"plain_text_body": "a\x00b"}, Code.MESSAGE_FIELD_NOT_COMPOSABLE),
        ({"html_body": "  "}, Code.MESSAGE_FIELD_NOT_COMPOSABLE),
        ({"account": ""}, Code.MESSAGE_FIELD_NOT_COMPOSABLE),
        ({"account": "nobody"}, Code.ACCOUNT_NOT_SERVED),
        ({"account": "archive"}, Code.SENDING_NOT_CONFIGURED),
    ],
)
def test_each_bad_argument_is_refused_with_its_code_and_nothing_is_written(
    d: FakeDeployment, changes: dict[str, object], code: int
) -> None:
    with pytest.raises(Refusal) as refused:
        d.send().send(AGENT, _request(**changes))
    assert refused.value.code == code
    assert d.memory.outbox.listing(10) == []


def test_a_body_over_the_deployments_bound_is_too_large(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = fake_deployment(tmp_path, monkeypatch, mail_delivery="MaxBodyCharacters = 1000")
    with pytest.raises(Refusal) as refused:
        d.send().send(AGENT, _request(plain_text_body="x" * 1001))
    assert refused.value.code == Code.MESSAGE_TOO_LARGE
    assert d.send().send(AGENT, _request(plain_text_body="x" * 1000)).stage is Stage.QUEUED


def test_a_caller_without_the_sending_grant_writes_nothing(d: FakeDeployment) -> None:
    reader = Caller(ALL_PERMISSIONS - {Permission.SEND}, "reader")
    with pytest.raises(PermissionDenied):
        d.send().send(reader, _request())
    assert d.memory.outbox.listing(10) == []


def test_a_send_is_read_and_withdrawn_only_by_the_caller_that_queued_it(
    d: FakeDeployment,
) -> None:
    record = d.send().send(AGENT, _request())
    mine = str(record.outgoing_id)
    assert d.outgoing().read(AGENT, mine) == record
    calls: list[Callable[[], object]] = [
        lambda: d.outgoing().read(OTHER_AGENT, mine),
        lambda: d.cancellation().cancel(OTHER_AGENT, mine),
        lambda: d.outgoing().read(AGENT, str(uuid.uuid4())),
        lambda: d.cancellation().cancel(AGENT, str(uuid.uuid4())),
    ]
    for call in calls:
        with pytest.raises(Refusal) as refused:
            call()
        assert refused.value.code == Code.OUTGOING_NOT_KNOWN
    assert d.memory.outbox.find(record.outgoing_id) == record
    cancelled = d.cancellation().cancel(AGENT, mine)
    assert (cancelled.stage, cancelled.finished_at) == (Stage.CANCELLED, d.clock())
    # Withdrawn twice: the same answer.
    assert d.cancellation().cancel(AGENT, mine) == cancelled


@pytest.mark.parametrize(
    "identifier", ["", "  ", "nope", "00000000-0000-0000-0000-000000000000", 5, None]
)
def test_text_that_is_no_outgoing_identifier_is_told_apart(
    d: FakeDeployment, identifier: object
) -> None:
    for call in (d.outgoing().read, d.cancellation().cancel):
        with pytest.raises(Refusal) as refused:
            call(AGENT, identifier)
        assert refused.value.code == Code.NOT_AN_OUTGOING_IDENTIFIER


def test_a_send_a_delivery_pass_holds_is_not_withdrawn(d: FakeDeployment) -> None:
    record = d.send().send(AGENT, _request())
    d.clock.advance(60)
    assert d.memory.outbox.claim("w", d.clock(), 60, 10)
    with pytest.raises(Refusal) as refused:
        d.cancellation().cancel(AGENT, str(record.outgoing_id))
    assert refused.value.code == Code.STATE_ALREADY_PASSED
    withdrawal = d.outbox_administration().withdraw(record.outgoing_id)
    assert withdrawal is not None
    assert (withdrawal.outcome, withdrawal.record.stage) == (
        Withdrawn.IN_TRANSMISSION,
        Stage.SENDING,
    )


def test_the_operator_withdraws_any_callers_send_once(d: FakeDeployment) -> None:
    record = d.send().send(AGENT, _request())
    administration = d.outbox_administration()
    now = administration.withdraw(record.outgoing_id)
    assert now is not None
    assert (now.outcome, now.record.stage) == (Withdrawn.NOW, Stage.CANCELLED)
    again = administration.withdraw(record.outgoing_id)
    assert again is not None
    assert again.outcome is Withdrawn.ALREADY_ENDED
    assert administration.withdraw(uuid.uuid4()) is None


def test_send_chosen_queues_the_message_that_was_shown(d: FakeDeployment) -> None:
    person = chooses(Choice.SEND)
    settled = d.send().settle(ASKS, _request(), person)
    assert settled.status is Status.QUEUED
    assert settled.record is not None
    assert settled.record.caller == "careful"
    assert [e.record for e in d.memory.outbox.listing(10)] == [settled.record]
    (asked,) = person.asked
    assert "friend@example.net" in asked.text
    assert "hidden@example.net" in asked.text


def test_save_draft_chosen_keeps_a_draft_and_its_repeat_is_answered_without_asking(
    d: FakeDeployment,
) -> None:
    settled = d.send().settle(ASKS, _request(), chooses(Choice.SAVE_DRAFT))
    assert settled.status is Status.DRAFT
    assert settled.draft_id is not None
    draft = d.memory.drafts.find(uuid.UUID(settled.draft_id))
    assert draft is not None
    assert (draft.life, draft.caller, draft.account_id) == (DraftLife.LIVE, "careful", "work")
    assert d.memory.outbox.listing(10) == []
    nobody = ScriptedPerson(lambda q: pytest.fail("a repeat of a kept draft asks nobody"))
    again = d.send().settle(ASKS, _request(), nobody)
    assert (again.status, again.draft_id) == (Status.DRAFT, settled.draft_id)


def test_cancel_chosen_writes_nothing(d: FakeDeployment) -> None:
    settled = d.send().settle(ASKS, _request(), chooses(Choice.CANCEL))
    assert (settled.status, settled.record, settled.draft_id) == (Status.CANCELLED, None, None)
    assert d.memory.outbox.listing(10) == []
    assert d.memory.drafts.copy_work("work").to_file == ()


@pytest.mark.parametrize(
    ("kind", "code"),
    [
        (AnswerKind.DECLINED, Code.CONFIRMATION_DECLINED),
        (AnswerKind.EXPIRED, Code.CONFIRMATION_EXPIRED),
        (AnswerKind.NOT_UNDERSTOOD, Code.CONFIRMATION_NOT_UNDERSTOOD),
    ],
)
def test_an_answer_that_chooses_nothing_is_refused_and_writes_nothing(
    d: FakeDeployment, kind: AnswerKind, code: int
) -> None:
    with pytest.raises(Refusal) as refused:
        d.send().settle(ASKS, _request(), ScriptedPerson(lambda q: Answer(kind, q.binding)))
    assert refused.value.code == code
    assert d.memory.outbox.listing(10) == []
    assert d.memory.drafts.copy_work("work").to_file == ()


def test_an_answer_bound_to_another_message_is_outdated(d: FakeDeployment) -> None:
    stale = ScriptedPerson(lambda q: Answer(AnswerKind.CHOSEN, "0" * 64, Choice.SEND))
    with pytest.raises(Refusal) as refused:
        d.send().settle(ASKS, _request(), stale)
    assert refused.value.code == Code.CONFIRMATION_OUTDATED
    assert d.memory.outbox.listing(10) == []


def test_nobody_to_ask_keeps_a_draft_and_alerts_the_owner_once(d: FakeDeployment) -> None:
    unavailable = ScriptedPerson(lambda q: Answer(AnswerKind.UNAVAILABLE))
    settled = d.send().settle(ASKS, _request(), unavailable)
    assert settled.status is Status.DRAFT
    assert settled.draft_id is not None
    (alert,) = d.alert_administration().listing()
    assert (alert.key, alert.account_id, alert.draft_id) == (
        alert_key(settled.draft_id),
        "work",
        settled.draft_id,
    )
    again = d.send().settle(ASKS, _request(), unavailable)
    assert again.draft_id == settled.draft_id
    assert len(d.alert_administration().listing(include_dismissed=True)) == 1
    assert d.alert_administration().dismiss(alert.key)
    assert d.alert_administration().listing() == []
    assert d.memory.outbox.listing(10) == []


def test_a_kept_draft_sent_later_answers_its_repeat_with_the_send(d: FakeDeployment) -> None:
    settled = d.send().settle(ASKS, _request(), chooses(Choice.SAVE_DRAFT))
    assert settled.draft_id is not None
    record = d.send_draft().send(AGENT, settled.draft_id)
    assert record.stage is Stage.QUEUED
    nobody = ScriptedPerson(lambda q: pytest.fail("a repeat of a sent draft asks nobody"))
    again = d.send().settle(ASKS, _request(), nobody)
    assert (again.status, again.record) == (Status.QUEUED, record)


def _nothing_else_written(d: FakeDeployment, record: OutgoingRecord) -> None:
    """The outbox holds the one send, and no draft or alert was made beside it."""
    assert [e.record.outgoing_id for e in d.memory.outbox.listing(10)] == [record.outgoing_id]
    assert d.memory.drafts.copy_work("work").to_file == ()
    assert d.alert_administration().listing(include_dismissed=True) == []


@pytest.mark.parametrize("answer", ANSWERS.values(), ids=ANSWERS.keys())
def test_a_repeat_after_send_is_answered_from_the_outbox_without_asking(
    d: FakeDeployment, answer: Callable[[Question], Answer]
) -> None:
    first = d.send().settle(ASKS, _request(), chooses(Choice.SEND))
    assert first.record is not None
    person = ScriptedPerson(answer)
    again = d.send().settle(ASKS, _request(subject="Changed"), person)
    assert person.asked == []
    assert (again.status, again.record, again.draft_id) == (Status.QUEUED, first.record, None)
    _nothing_else_written(d, first.record)


@pytest.mark.parametrize("answer", ANSWERS.values(), ids=ANSWERS.keys())
def test_a_repeat_answers_the_send_as_it_stands_taken_or_withdrawn(
    d: FakeDeployment, answer: Callable[[Question], Answer]
) -> None:
    taken = d.send().settle(ASKS, _request(), chooses(Choice.SEND)).record
    withdrawn = d.send().settle(ASKS, _request(idempotency_key="k2"), chooses(Choice.SEND))
    assert taken is not None
    assert withdrawn.record is not None
    d.cancellation().cancel(ASKS, str(withdrawn.record.outgoing_id))
    d.clock.advance(60)
    (claimed,) = d.memory.outbox.claim("w", d.clock(), 60, 10)
    assert claimed.outgoing_id == taken.outgoing_id
    person = ScriptedPerson(answer)
    in_transmission = d.send().settle(ASKS, _request(), person)
    cancelled = d.send().settle(ASKS, _request(idempotency_key="k2"), person)
    assert person.asked == []
    assert (in_transmission.status, in_transmission.record) == (
        Status.QUEUED,
        d.memory.outbox.find(taken.outgoing_id),
    )
    assert in_transmission.record is not None
    assert in_transmission.record.stage is Stage.SENDING
    # Withdrawn, it is answered as withdrawn: never sent again, never "cancelled" anew.
    assert cancelled.status is Status.QUEUED
    assert cancelled.record is not None
    assert (cancelled.record.outgoing_id, cancelled.record.stage) == (
        withdrawn.record.outgoing_id,
        Stage.CANCELLED,
    )
    assert len(d.memory.outbox.listing(10)) == 2


def test_a_key_another_callers_send_holds_is_refused_without_asking(d: FakeDeployment) -> None:
    theirs = d.send().send(AGENT, _request())
    person = chooses(Choice.SEND)
    with pytest.raises(Refusal) as refused:
        d.send().settle(ASKS, _request(), person)
    assert refused.value.code == Code.MESSAGE_FIELD_NOT_COMPOSABLE
    assert person.asked == []
    _nothing_else_written(d, theirs)


@pytest.mark.parametrize("answer", ANSWERS.values(), ids=ANSWERS.keys())
def test_a_send_made_by_another_call_while_the_person_decided_is_the_answer(
    d: FakeDeployment, answer: Callable[[Question], Answer]
) -> None:
    meanwhile: list[Settled[OutgoingRecord]] = []

    def other_call() -> None:
        meanwhile.append(d.send().settle(ASKS, _request(), chooses(Choice.SEND)))

    person = ScriptedPerson(answer, other_call)
    settled = d.send().settle(ASKS, _request(), person)
    assert len(person.asked) == 1
    (other,) = meanwhile
    assert other.record is not None
    assert (settled.status, settled.record, settled.draft_id) == (
        Status.QUEUED,
        other.record,
        None,
    )
    _nothing_else_written(d, other.record)
