"""save_draft, update_draft, delete_draft and send_draft at the use cases, on the in-memory
store with a local account's Maildir drafts folder: what each call writes and files, the
refusal each bad request earns with nothing written, and a draft's life from its first
revision to its send, and a draft already sent answered with its send, nobody asked."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from fakes.deployment import FakeDeployment
from fakes.person import ANSWERS, ScriptedPerson, chooses
from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.local.maildir import LocalConnector
from mailfathom.app.confirmation.confirmed_sending import Status
from mailfathom.app.confirmation.ports import Answer, Choice, Question
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.domain.access import ALL_PERMISSIONS, Caller, ConfirmationMode, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.drafts import CopyState, DeleteOutcome, DraftLife
from mailfathom.domain.errors import PermissionDenied, Refusal
from mailfathom.domain.outgoing import OutgoingRecord, Stage

AGENT = Caller(ALL_PERMISSIONS, "agent")
ASKS = Caller(ALL_PERMISSIONS, "careful", ConfirmationMode.ASK)
PEOPLE = [
    "me@example.org",
    "friend@example.net",
    "other@example.net",
    "Plans",
    "Plans again",
    "Edited",
]


def _config(root: Path) -> Path:
    text = f"""
[Store]
DataDir = "{root / "data"}"

[MailDelivery]
HoldSeconds = 0

[[Accounts]]
Id = "home"
DisplayName = "Home"
Kind = "local"
Addresses = ["me@example.org"]

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[[Accounts.Folders]]
Remote = "Drafts"
Role = "Drafts"

[Accounts.Delivery]
Enabled = true
Address = "me@example.org"

[[Accounts]]
Id = "notes"
DisplayName = "Notes"
Kind = "local"
Addresses = ["notes@example.org"]

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"
"""
    path = root / "mailfathom.toml"
    path.write_text(text)
    return path


@pytest.fixture
def d(tmp_path: Path) -> FakeDeployment:
    register_all(PEOPLE)
    return FakeDeployment(load_config(_config(tmp_path)))


def _own(**changes: object) -> DraftRequest:
    fields: dict[str, object] = {
        "account": "home",
        "subject": "Plans",
        "to": ["friend@example.net"],
        "plain_text_body": "The plan is ready.\n",
    }
    fields.update(changes)
    return DraftRequest(**fields)  # type: ignore[arg-type]


def _copies(d: FakeDeployment, account: str = "home") -> list[bytes]:
    """The messages the account's Maildir drafts folder holds."""
    folder = LocalConnector(d.config.store.data_dir).folder(account, "Drafts")
    return [path.read_bytes() for path in folder.scan()[1].values()]


def test_a_saved_draft_is_held_at_revision_one_and_filed_in_the_drafts_folder(
    d: FakeDeployment,
) -> None:
    standing = d.save_draft().save(AGENT, _own(cc=["other@example.net"]))
    assert (standing.account_id, standing.revision, standing.state) == (
        "home",
        1,
        CopyState.FILED,
    )
    assert (standing.recipient_count, standing.attachment_count) == (2, 0)
    assert standing.saved_at == d.clock()
    (copy,) = _copies(d)
    draft = d.memory.drafts.find(standing.draft_id)
    assert draft is not None
    assert copy.replace(b"\r\n", b"\n") == draft.mime.replace(b"\r\n", b"\n")
    assert draft.life is DraftLife.LIVE


def test_an_identical_save_answers_the_same_draft_and_files_no_second_copy(
    d: FakeDeployment,
) -> None:
    first = d.save_draft().save(AGENT, _own())
    d.clock.advance(30)
    again = d.save_draft().save(AGENT, _own())
    assert again.draft_id == first.draft_id
    assert len(_copies(d)) == 1
    other = d.save_draft().save(AGENT, _own(plain_text_body="Another plan.\n"))
    assert other.draft_id != first.draft_id
    assert len(_copies(d)) == 2


def test_a_draft_of_an_account_without_a_drafts_folder_is_held_here(d: FakeDeployment) -> None:
    standing = d.save_draft().save(AGENT, _own(account="notes"))
    assert standing.state is CopyState.HELD
    assert d.memory.drafts.copy_work("notes").to_file[0].draft_id == standing.draft_id


def test_a_save_repeated_after_its_draft_was_edited_is_refused_and_writes_nothing(
    d: FakeDeployment,
) -> None:
    first = d.save_draft().save(AGENT, _own())
    d.update_draft().update(AGENT, str(first.draft_id), _own(subject="Edited"))
    edited = d.memory.drafts.find(first.draft_id)
    held = d.memory.drafts.row_count()
    with pytest.raises(Refusal) as refused:
        d.save_draft().save(AGENT, _own())
    assert refused.value.code == Code.STATE_ALREADY_PASSED
    assert str(first.draft_id) in refused.value.message
    assert (d.memory.drafts.row_count(), d.memory.drafts.find(first.draft_id)) == (held, edited)
    (copy,) = _copies(d)
    assert b"Subject: Edited" in copy
    # Once sent, what left was the edit: the repeat is still not told its message was sent.
    d.send_draft().send(AGENT, str(first.draft_id))
    with pytest.raises(Refusal) as refused:
        d.save_draft().save(AGENT, _own())
    assert refused.value.code == Code.STATE_ALREADY_PASSED
    assert (d.memory.drafts.row_count(), len(d.memory.outbox.listing(10))) == (held, 1)


def test_deleting_an_edited_draft_frees_its_request(d: FakeDeployment) -> None:
    first = d.save_draft().save(AGENT, _own())
    d.update_draft().update(AGENT, str(first.draft_id), _own(subject="Edited"))
    d.delete_draft().delete(AGENT, str(first.draft_id))
    again = d.save_draft().save(AGENT, _own())
    assert (again.draft_id != first.draft_id, again.revision) == (True, 1)


@pytest.mark.parametrize(
    ("request_", "code"),
    [
        (DraftRequest(plain_text_body="x"), Code.MESSAGE_FIELD_NOT_COMPOSABLE),
        (_own(answered_email_id=str(uuid.uuid4())), Code.MESSAGE_FIELD_NOT_COMPOSABLE),
        (_own(subject=None), Code.MESSAGE_FIELD_NOT_COMPOSABLE),
        (
            DraftRequest(plain_text_body="x", answering="everyone"),
            Code.MESSAGE_FIELD_NOT_COMPOSABLE,
        ),
        (
            DraftRequest(plain_text_body="x", answered_email_id=str(uuid.uuid4()), answering="all"),
            Code.MESSAGE_FIELD_NOT_COMPOSABLE,
        ),
        (
            DraftRequest(plain_text_body="x", answered_email_id="nope", answering="everyone"),
            Code.NOT_AN_EMAIL_IDENTIFIER,
        ),
        (
            DraftRequest(
                plain_text_body="x", answered_email_id=str(uuid.uuid4()), answering="forward"
            ),
            Code.EMAIL_NOT_ANSWERABLE,
        ),
        (_own(account="nobody"), Code.ACCOUNT_NOT_SERVED),
        (_own(subject="a\nb"), Code.MESSAGE_FIELD_NOT_COMPOSABLE),
        (_own(to="friend@example.net"), Code.MESSAGE_FIELD_NOT_COMPOSABLE),
        (_own(plain_text_body=None), Code.MESSAGE_FIELD_NOT_COMPOSABLE),
    ],
)
def test_a_draft_request_that_cannot_be_composed_is_refused_and_nothing_written(
    d: FakeDeployment, request_: DraftRequest, code: int
) -> None:
    with pytest.raises(Refusal) as refused:
        d.save_draft().save(AGENT, request_)
    assert refused.value.code == code
    assert d.memory.drafts.copy_work("home").to_file == ()
    assert _copies(d) == []


def test_drafting_needs_the_drafting_grant_and_sending_one_the_sending_grant(
    d: FakeDeployment,
) -> None:
    no_drafts = Caller(ALL_PERMISSIONS - {Permission.DRAFTS_WRITE}, "no-drafts")
    with pytest.raises(PermissionDenied):
        d.save_draft().save(no_drafts, _own())
    standing = d.save_draft().save(AGENT, _own())
    for call in (
        lambda: d.update_draft().update(no_drafts, str(standing.draft_id), _own()),
        lambda: d.delete_draft().delete(no_drafts, str(standing.draft_id)),
    ):
        with pytest.raises(PermissionDenied):
            call()
    no_send = Caller(ALL_PERMISSIONS - {Permission.SEND}, "no-send")
    with pytest.raises(PermissionDenied):
        d.send_draft().send(no_send, str(standing.draft_id))
    # The path that asks nobody refuses a caller whose entry asks a person.
    with pytest.raises(PermissionDenied):
        d.send_draft().send(ASKS, str(standing.draft_id))
    assert d.memory.outbox.listing(10) == []


def test_an_update_is_a_new_revision_of_the_same_message_and_replaces_the_copy(
    d: FakeDeployment,
) -> None:
    first = d.save_draft().save(AGENT, _own())
    before = d.memory.drafts.find(first.draft_id)
    assert before is not None
    d.clock.advance(60)
    standing = d.update_draft().update(AGENT, str(first.draft_id), _own(subject="Plans again"))
    assert (standing.draft_id, standing.revision, standing.state) == (
        first.draft_id,
        2,
        CopyState.FILED,
    )
    after = d.memory.drafts.find(first.draft_id)
    assert after is not None
    assert after.message_id == before.message_id
    assert [c.revision for c in after.copies] == [2]
    (copy,) = _copies(d)
    assert b"Subject: Plans again" in copy


def test_a_draft_not_held_here_is_one_answer_for_every_tool(d: FakeDeployment) -> None:
    live = d.save_draft().save(AGENT, _own())
    gone = d.save_draft().save(AGENT, _own(subject="Gone"))
    d.delete_draft().delete(AGENT, str(gone.draft_id))
    for draft_id in ["", "nope", str(uuid.uuid4()), str(gone.draft_id), 5]:
        for call in (
            lambda i=draft_id: d.update_draft().update(AGENT, i, _own()),
            lambda i=draft_id: d.delete_draft().delete(AGENT, i),
            lambda i=draft_id: d.send_draft().send(AGENT, i),
        ):
            with pytest.raises(Refusal) as refused:
                call()
            assert refused.value.code == Code.DRAFT_NOT_HELD
    # A revision must stay in the draft's own account.
    with pytest.raises(Refusal) as refused:
        d.update_draft().update(AGENT, str(live.draft_id), _own(account="notes"))
    assert refused.value.code == Code.DRAFT_NOT_HELD


def test_a_deleted_draft_leaves_the_drafts_folder_and_frees_its_request(
    d: FakeDeployment,
) -> None:
    standing = d.save_draft().save(AGENT, _own())
    deleted = d.delete_draft().delete(AGENT, str(standing.draft_id))
    assert (deleted.draft_id, deleted.outcome) == (standing.draft_id, DeleteOutcome.DELETED)
    assert _copies(d) == []
    draft = d.memory.drafts.find(standing.draft_id)
    assert draft is not None
    assert (draft.life, draft.copies) == (DraftLife.DELETED, ())
    again = d.save_draft().save(AGENT, _own())
    assert again.draft_id != standing.draft_id


def test_sending_a_draft_queues_its_own_message_once(d: FakeDeployment) -> None:
    standing = d.save_draft().save(AGENT, _own(cc=["other@example.net"]))
    draft = d.memory.drafts.find(standing.draft_id)
    assert draft is not None
    record = d.send_draft().send(AGENT, str(standing.draft_id))
    assert (record.stage, record.caller, record.account_id) == (Stage.QUEUED, "agent", "home")
    assert [r.address for r in record.recipients] == ["friend@example.net", "other@example.net"]
    (claimed,) = d.memory.outbox.claim("w", d.clock(), 60, 10)
    assert claimed.mime == draft.mime
    sent = d.memory.drafts.find(standing.draft_id)
    assert sent is not None
    assert (sent.life, sent.outgoing_id) == (DraftLife.SENT, record.outgoing_id)
    # Asked again: the same send; the draft can no longer change.
    assert d.send_draft().send(AGENT, str(standing.draft_id)).outgoing_id == record.outgoing_id
    with pytest.raises(Refusal) as refused:
        d.update_draft().update(AGENT, str(standing.draft_id), _own())
    assert refused.value.code == Code.DRAFT_NOT_HELD
    # A save repeating the request that made it answers that it was sent.
    repeat = d.save_draft().save(AGENT, _own(cc=["other@example.net"]))
    assert (repeat.already_sent, repeat.outgoing_id) == (True, record.outgoing_id)


def test_a_draft_addressed_to_nobody_is_kept_but_not_sent(d: FakeDeployment) -> None:
    standing = d.save_draft().save(AGENT, _own(to=None))
    assert standing.recipient_count == 0
    with pytest.raises(Refusal) as refused:
        d.send_draft().send(AGENT, str(standing.draft_id))
    assert refused.value.code == Code.DRAFT_WITHOUT_RECIPIENTS
    assert d.memory.outbox.listing(10) == []


def test_a_draft_sent_after_an_instant_waits_for_it(d: FakeDeployment) -> None:
    standing = d.save_draft().save(AGENT, _own())
    later = d.clock.now.replace(hour=d.clock.now.hour + 2)
    record = d.send_draft().send(AGENT, str(standing.draft_id), later.isoformat())
    assert record.send_after == later
    assert d.memory.outbox.claim("w", d.clock(), 60, 10) == []
    assert d.memory.outbox.next_due() == later


@pytest.mark.parametrize(
    ("choice", "status", "life"),
    [
        (Choice.SEND, Status.QUEUED, DraftLife.SENT),
        (Choice.SAVE_DRAFT, Status.DRAFT, DraftLife.LIVE),
        (Choice.CANCEL, Status.CANCELLED, DraftLife.LIVE),
    ],
)
def test_a_draft_sent_by_a_caller_who_asks_does_what_the_person_chose(
    d: FakeDeployment, choice: Choice, status: Status, life: DraftLife
) -> None:
    standing = d.save_draft().save(AGENT, _own())
    person = chooses(choice)
    settled = d.send_draft().settle(ASKS, str(standing.draft_id), person, None)
    assert settled.status is status
    assert len(person.asked) == 1
    draft = d.memory.drafts.find(standing.draft_id)
    assert draft is not None
    assert draft.life is life
    assert len(d.memory.outbox.listing(10)) == (1 if choice is Choice.SEND else 0)


def test_a_draft_edited_while_the_question_waits_is_not_sent(d: FakeDeployment) -> None:
    standing = d.save_draft().save(AGENT, _own())
    draft_id = str(standing.draft_id)

    def edit() -> object:
        return d.update_draft().update(AGENT, draft_id, _own(subject="Edited"))

    with pytest.raises(Refusal) as refused:
        d.send_draft().settle(ASKS, draft_id, chooses(Choice.SEND, edit), None)
    assert refused.value.code == Code.CONFIRMATION_OUTDATED
    assert d.memory.outbox.listing(10) == []
    draft = d.memory.drafts.find(standing.draft_id)
    assert draft is not None
    assert (draft.life, draft.revision) == (DraftLife.LIVE, 2)


@pytest.mark.parametrize("answer", ANSWERS.values(), ids=ANSWERS.keys())
def test_a_draft_sent_already_is_answered_with_its_send_without_asking(
    d: FakeDeployment, answer: Callable[[Question], Answer]
) -> None:
    draft_id = str(d.save_draft().save(AGENT, _own()).draft_id)
    first = d.send_draft().settle(ASKS, draft_id, chooses(Choice.SEND), None)
    person = ScriptedPerson(answer)
    again = d.send_draft().settle(ASKS, draft_id, person, None)
    assert person.asked == []
    assert (again.status, again.record) == (Status.QUEUED, first.record)
    assert len(d.memory.outbox.listing(10)) == 1


@pytest.mark.parametrize("answer", ANSWERS.values(), ids=ANSWERS.keys())
def test_a_draft_sent_by_another_call_while_the_person_decided_is_answered_with_that_send(
    d: FakeDeployment, answer: Callable[[Question], Answer]
) -> None:
    standing = d.save_draft().save(AGENT, _own())
    meanwhile: list[OutgoingRecord] = []
    person = ScriptedPerson(
        answer, lambda: meanwhile.append(d.send_draft().send(AGENT, str(standing.draft_id)))
    )
    settled = d.send_draft().settle(ASKS, str(standing.draft_id), person, None)
    assert len(person.asked) == 1
    (other,) = meanwhile
    assert (settled.status, settled.record, settled.draft_id) == (Status.QUEUED, other, None)
    assert [e.record.outgoing_id for e in d.memory.outbox.listing(10)] == [other.outgoing_id]
    draft = d.memory.drafts.find(standing.draft_id)
    assert draft is not None
    assert (draft.life, draft.outgoing_id) == (DraftLife.SENT, other.outgoing_id)
    assert d.alert_administration().listing(include_dismissed=True) == []
