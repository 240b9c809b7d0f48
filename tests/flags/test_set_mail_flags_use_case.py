"""set_mail_flags and the operator's retry at the use cases, on the in-memory record store
and local copy: what a change records and shows at once, a retry's answer, each argument's
refusal with nothing written, and the folders a change may reach."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from fakes.deployment import Clock
from fakes.store import MemoryStore
from mailfathom.app.flags.administer_mutations import MutationAdministration, Retried
from mailfathom.app.flags.set_mail_flags import FlagChangeRequest, MailFlagChangeRecorder
from mailfathom.app.shared.mailbox_selection import ServedAccount
from mailfathom.domain.access import ALL_PERMISSIONS, Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.content_state import RemoteFlags
from mailfathom.domain.errors import PermissionDenied, Refusal
from mailfathom.domain.mutations import MutationFailure, MutationKind, MutationState

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
AGENT = Caller(ALL_PERMISSIONS, "agent")
SERVED = [ServedAccount("work", "Work", "continuous")]


@dataclass
class Mailboxes:
    """The work account's Inbox (two messages) and a withheld folder (one), an account this
    deployment does not serve (one), and the use cases over them."""

    memory: MemoryStore = field(default_factory=MemoryStore)
    clock: Clock = field(default_factory=lambda: Clock(T0))
    woken: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        local = self.memory.local
        inbox = local.ensure_folder("work", "INBOX", "Inbox")
        secret = local.ensure_folder("work", "Secret", "Secret", visible=False)
        elsewhere = local.ensure_folder("gone", "INBOX", "Inbox")
        for folder in (inbox, secret, elsewhere):
            local.record_progress(folder, 7, T0)
        kept = RemoteFlags(keywords=frozenset({"old"}))
        self.mail, self.other = local.add_messages(inbox, 7, [(1, kept, 1), (2, kept, 2)], T0)
        (self.withheld,) = local.add_messages(secret, 7, [(1, RemoteFlags(), 1)], T0)
        (self.unserved,) = local.add_messages(elsewhere, 7, [(1, RemoteFlags(), 1)], T0)
        self.inbox = inbox

    def flags(self) -> MailFlagChangeRecorder:
        return MailFlagChangeRecorder(
            self.memory.mutations,
            self.memory.local,
            SERVED,
            wake=self.woken.append,
            clock=self.clock,
        )

    def shown(self, email: uuid.UUID) -> RemoteFlags:
        return self.memory.local.flags_of(email)[1]

    def recorded(self) -> int:
        return len(self.memory.mutations.listing(100, tuple(MutationState), None))


@pytest.fixture
def boxes() -> Mailboxes:
    return Mailboxes()


def test_a_change_records_each_value_shows_it_at_once_and_wakes_the_run(
    boxes: Mailboxes,
) -> None:
    request = FlagChangeRequest(
        str(boxes.mail), seen=True, flagged=True, keyword_change="add", keywords=["Urgent"]
    )
    recorded = boxes.flags().record(AGENT, request)
    assert (recorded.stored_email_id, recorded.account_id, recorded.folder_alias) == (
        str(boxes.mail),
        "work",
        "Inbox",
    )
    assert [(r.kind, r.value, r.state) for r in recorded.records] == [
        (MutationKind.SET_SEEN, "true", MutationState.PENDING),
        (MutationKind.SET_FLAGGED, "true", MutationState.PENDING),
        (MutationKind.ADD_KEYWORDS, "urgent", MutationState.PENDING),
    ]
    assert boxes.shown(boxes.mail) == RemoteFlags(
        seen=True, flagged=True, keywords=frozenset({"old", "urgent"})
    )
    assert boxes.shown(boxes.other) == RemoteFlags(keywords=frozenset({"old"}))
    assert boxes.woken == ["work"]
    assert [o.uid for o in boxes.memory.mutations.open_mutations("work")] == [1, 1, 1]


def test_a_retry_answers_the_first_records_and_a_reused_identity_is_refused(
    boxes: Mailboxes,
) -> None:
    first = boxes.flags().record(
        AGENT, FlagChangeRequest(str(boxes.mail), seen=True, request_id="r1")
    )
    boxes.clock.advance(60)
    again = boxes.flags().record(
        AGENT, FlagChangeRequest(str(boxes.mail), seen=True, request_id="r1")
    )
    assert again.records == first.records
    with pytest.raises(Refusal) as refused:
        boxes.flags().record(
            AGENT, FlagChangeRequest(str(boxes.mail), flagged=True, seen=False, request_id="r1")
        )
    assert refused.value.code == Code.FLAG_CHANGE_NOT_ACCEPTED
    assert boxes.recorded() == 1
    assert boxes.shown(boxes.mail).flagged is False
    # Without a requestId every call is a change of its own.
    boxes.flags().record(AGENT, FlagChangeRequest(str(boxes.mail), seen=True))
    boxes.flags().record(AGENT, FlagChangeRequest(str(boxes.mail), seen=True))
    assert boxes.recorded() == 3


def test_replace_sets_exactly_the_keywords_named(boxes: Mailboxes) -> None:
    replace = FlagChangeRequest(str(boxes.mail), keyword_change="replace", keywords=["A", "b"])
    boxes.flags().record(AGENT, replace)
    assert boxes.shown(boxes.mail).keywords == {"a", "b"}
    clear = FlagChangeRequest(str(boxes.mail), keyword_change="replace", keywords=[])
    boxes.flags().record(AGENT, clear)
    assert boxes.shown(boxes.mail).keywords == frozenset()


@pytest.mark.parametrize("which", ["withheld", "unserved", "unknown"])
def test_an_email_outside_the_readable_folders_is_not_held(boxes: Mailboxes, which: str) -> None:
    email = {"withheld": boxes.withheld, "unserved": boxes.unserved, "unknown": uuid.uuid4()}
    with pytest.raises(Refusal) as refused:
        boxes.flags().record(AGENT, FlagChangeRequest(str(email[which]), seen=True))
    assert refused.value.code == Code.EMAIL_NOT_HELD
    assert boxes.recorded() == 0
    assert boxes.woken == []


def test_a_row_of_a_folder_whose_uidvalidity_changed_is_not_held(boxes: Mailboxes) -> None:
    boxes.memory.local.record_progress(boxes.inbox, 8, T0)
    with pytest.raises(Refusal) as refused:
        boxes.flags().record(AGENT, FlagChangeRequest(str(boxes.mail), seen=True))
    assert refused.value.code == Code.EMAIL_NOT_HELD


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"seen": "yes"},
        {"flagged": 1},
        {"keyword_change": "add"},
        {"keywords": ["a"]},
        {"keyword_change": "toggle", "keywords": ["a"]},
        {"keyword_change": "add", "keywords": []},
        {"keyword_change": "remove", "keywords": "a"},
        {"keyword_change": "add", "keywords": ["two words"]},
        {"keyword_change": "add", "keywords": ["(paren"]},
        {"keyword_change": "add", "keywords": ["\\Seen"]},
        {"keyword_change": "add", "keywords": ["k" * 65]},
        {"keyword_change": "add", "keywords": [f"k{n}" for n in range(65)]},
        {"keyword_change": "add", "keywords": [7]},
        {"seen": True, "request_id": ""},
        {"seen": True, "request_id": "r" * 129},
        {"seen": True, "request_id": "a\tb"},
    ],
)
def test_a_change_that_cannot_be_written_is_refused_and_nothing_recorded(
    boxes: Mailboxes, changes: dict[str, object]
) -> None:
    with pytest.raises(Refusal) as refused:
        boxes.flags().record(AGENT, FlagChangeRequest(str(boxes.mail), **changes))  # type: ignore[arg-type]
    assert refused.value.code == Code.FLAG_CHANGE_NOT_ACCEPTED
    assert boxes.recorded() == 0
    assert boxes.shown(boxes.mail) == RemoteFlags(keywords=frozenset({"old"}))


@pytest.mark.parametrize("identifier", ["", "nope", 5, None])
def test_text_that_is_no_email_identifier_is_told_apart(
    boxes: Mailboxes, identifier: object
) -> None:
    with pytest.raises(Refusal) as refused:
        boxes.flags().record(AGENT, FlagChangeRequest(identifier, seen=True))
    assert refused.value.code == Code.NOT_AN_EMAIL_IDENTIFIER


def test_a_caller_without_the_flag_grant_records_nothing(boxes: Mailboxes) -> None:
    reader = Caller(ALL_PERMISSIONS - {Permission.FLAGS_WRITE}, "reader")
    with pytest.raises(PermissionDenied):
        boxes.flags().record(reader, FlagChangeRequest(str(boxes.mail), seen=True))
    assert boxes.recorded() == 0


def test_the_operator_retries_a_dead_lettered_change_once(boxes: Mailboxes) -> None:
    recorded = boxes.flags().record(AGENT, FlagChangeRequest(str(boxes.mail), seen=True))
    (record,) = recorded.records
    woken: list[str] = []
    administration = MutationAdministration(
        boxes.memory.mutations, boxes.memory.creations, wake=woken.append, clock=boxes.clock
    )
    assert administration.retry(record.record_id) == administration.retry(record.record_id)
    retry = administration.retry(record.record_id)
    assert retry is not None
    assert retry.outcome is Retried.NOT_DEAD_LETTERED
    boxes.memory.mutations.begin([record.record_id], T0)
    boxes.memory.mutations.settle(
        [record.record_id], MutationState.DEAD_LETTERED, int(MutationFailure.ATTEMPTS_SPENT), T0
    )
    assert [r.record_id for r in administration.listing(10)] == [record.record_id]
    boxes.clock.advance(3600)
    retry = administration.retry(record.record_id)
    assert retry is not None
    assert retry.outcome is Retried.NOW
    assert (retry.record.state, retry.record.attempts, retry.record.updated_at) == (
        MutationState.PENDING,
        0,
        boxes.clock(),
    )
    assert woken == ["work"]
    assert administration.folder_aliases([retry.record]) == {boxes.inbox: "Inbox"}
    assert administration.retry(uuid.uuid4()) is None
