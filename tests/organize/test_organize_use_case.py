"""organize_email at the use case, on the in-memory record store, local copy and folder
creation records: what each action records and shows, where each action may file mail, each
argument's refusal with nothing recorded, a retry's answer, and createFolder's records."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from fakes.deployment import Clock
from fakes.store import MemoryStore
from mailfathom.app.organize.organize_email import EmailOrganizer, OrganizeRequest
from mailfathom.app.shared.mailbox_selection import ServedAccount
from mailfathom.domain.access import ALL_PERMISSIONS, Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.content_state import RemoteFlags
from mailfathom.domain.errors import PermissionDenied, Refusal
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.mutations import MutationKind, MutationState

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
AGENT = Caller(ALL_PERMISSIONS, "agent")
SERVED = [ServedAccount("work", "Work", "continuous"), ServedAccount("home", "Home", "continuous")]
KEPT = RemoteFlags(keywords=frozenset({"old"}))


@dataclass
class Mailboxes:
    """The work account: Inbox (three messages), Archive, Trash, Projects, and a withheld
    Secret folder (one message, with the junk role); the home account: an Inbox alone."""

    memory: MemoryStore = field(default_factory=MemoryStore)
    clock: Clock = field(default_factory=lambda: Clock(T0))
    woken: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        local = self.memory.local
        self.inbox = local.ensure_folder("work", "INBOX", "Inbox", FolderRole.INBOX)
        self.archive = local.ensure_folder("work", "Arch", "Archive", FolderRole.ARCHIVE)
        self.trash = local.ensure_folder("work", "Bin", "Trash", FolderRole.TRASH)
        self.projects = local.ensure_folder("work", "Projects", "Projects")
        secret = local.ensure_folder("work", "Secret", "Secret", FolderRole.JUNK, visible=False)
        home = local.ensure_folder("home", "INBOX", "Inbox", FolderRole.INBOX)
        for folder in (self.inbox, self.archive, self.trash, self.projects, secret, home):
            local.record_progress(folder, 7, T0)
        self.mail = local.add_messages(self.inbox, 7, [(n, KEPT, n) for n in (1, 2, 3)], T0)
        (self.withheld,) = local.add_messages(secret, 7, [(1, KEPT, 1)], T0)
        (self.home_mail,) = local.add_messages(home, 7, [(1, KEPT, 1)], T0)

    def organizer(self, served: list[ServedAccount] = SERVED) -> EmailOrganizer:
        return EmailOrganizer(
            self.memory.mutations,
            self.memory.local,
            served,
            self.memory.creations,
            wake=self.woken.append,
            clock=self.clock,
        )

    def ids(self, *emails: uuid.UUID) -> list[str]:
        return [str(e) for e in emails]

    def recorded(self) -> int:
        return len(self.memory.mutations.listing(1000, tuple(MutationState), None))


@pytest.fixture
def boxes() -> Mailboxes:
    return Mailboxes()


def _refused(boxes: Mailboxes, request: OrganizeRequest) -> int:
    with pytest.raises(Refusal) as refused:
        boxes.organizer().organize(AGENT, request)
    return refused.value.code


@pytest.mark.parametrize(
    ("action", "folder", "destination"),
    [
        ("move", "projects", "Projects"),
        ("archive", None, "Archive"),
        ("trash", None, "Trash"),
    ],
)
def test_a_filing_action_records_one_move_per_email_and_shows_nothing_yet(
    boxes: Mailboxes, action: str, folder: str | None, destination: str
) -> None:
    a, b, _ = boxes.mail
    done = boxes.organizer().organize(
        AGENT, OrganizeRequest(action, boxes.ids(b, a), folder=folder)
    )
    target = {"Projects": boxes.projects, "Archive": boxes.archive, "Trash": boxes.trash}
    assert (done.action, done.account_id, done.destination_alias) == (action, "work", destination)
    assert [(c.stored_email_id, c.folder_alias) for c in done.changed] == [
        (str(b), "Inbox"),
        (str(a), "Inbox"),
    ]
    assert {(c.record.kind, c.record.value) for c in done.changed} == {
        (MutationKind.MOVE, str(target[destination]))
    }
    assert boxes.memory.local.flags_of(a) == (boxes.inbox, KEPT)
    assert boxes.woken == ["work"]


def test_labels_are_added_and_taken_off_and_shown_at_once(boxes: Mailboxes) -> None:
    a, b, _ = boxes.mail
    boxes.organizer().organize(AGENT, OrganizeRequest("label", boxes.ids(a, b), keywords=["Due"]))
    assert [boxes.memory.local.flags_of(e)[1].keywords for e in (a, b)] == [{"old", "due"}] * 2
    boxes.organizer().organize(
        AGENT, OrganizeRequest("unlabel", boxes.ids(a), keywords=["OLD", "due"])
    )
    assert boxes.memory.local.flags_of(a)[1].keywords == frozenset()
    assert boxes.memory.local.flags_of(b)[1].keywords == {"old", "due"}
    for keywords in (None, [], ["two words"], "due"):
        request = OrganizeRequest("label", boxes.ids(a), keywords=keywords)
        assert _refused(boxes, request) == Code.ORGANIZE_REQUEST_NOT_ACCEPTED
    assert boxes.recorded() == 3


@pytest.mark.parametrize(
    ("request_", "code"),
    [
        (OrganizeRequest("move", [], folder="Projects"), Code.EMAIL_COUNT_OUT_OF_RANGE),
        (OrganizeRequest("archive", "one-id"), Code.EMAIL_COUNT_OUT_OF_RANGE),
        (
            OrganizeRequest("archive", [str(uuid.uuid4()) for _ in range(101)]),
            Code.EMAIL_COUNT_OUT_OF_RANGE,
        ),
        (OrganizeRequest("archive", ["not-an-id"]), Code.NOT_AN_EMAIL_IDENTIFIER),
        (OrganizeRequest("flag", [str(uuid.uuid4())]), Code.ORGANIZE_REQUEST_NOT_ACCEPTED),
        (OrganizeRequest(None, [str(uuid.uuid4())]), Code.ORGANIZE_REQUEST_NOT_ACCEPTED),
        (
            OrganizeRequest("archive", [str(uuid.uuid4())], folder="Projects"),
            Code.ORGANIZE_REQUEST_NOT_ACCEPTED,
        ),
        (
            OrganizeRequest("archive", [str(uuid.uuid4())], request_id=""),
            Code.ORGANIZE_REQUEST_NOT_ACCEPTED,
        ),
    ],
)
def test_a_request_that_cannot_be_carried_out_is_refused_before_any_lookup(
    boxes: Mailboxes, request_: OrganizeRequest, code: int
) -> None:
    assert _refused(boxes, request_) == code
    assert boxes.recorded() == 0
    assert boxes.woken == []


def test_every_email_must_be_held_in_a_readable_folder_of_one_account(boxes: Mailboxes) -> None:
    a, b, _ = boxes.mail
    for emails, code in [
        (boxes.ids(a, a), Code.EMAIL_NAMED_TWICE),
        (boxes.ids(a, boxes.withheld), Code.EMAIL_NOT_HELD),
        (boxes.ids(a, uuid.uuid4()), Code.EMAIL_NOT_HELD),
        (boxes.ids(a, boxes.home_mail), Code.ORGANIZE_REQUEST_NOT_ACCEPTED),
    ]:
        assert _refused(boxes, OrganizeRequest("archive", emails)) == code
    # An email of an account the deployment no longer serves is not held either.
    only_home = boxes.organizer([SERVED[1]])
    with pytest.raises(Refusal) as refused:
        only_home.organize(AGENT, OrganizeRequest("archive", boxes.ids(b)))
    assert refused.value.code == Code.EMAIL_NOT_HELD
    assert boxes.recorded() == 0


@pytest.mark.parametrize("folder", ["Secret", "Nowhere", "  "])
def test_mail_is_filed_only_in_a_folder_served_to_tools(boxes: Mailboxes, folder: str) -> None:
    request = OrganizeRequest("move", boxes.ids(boxes.mail[0]), folder=folder)
    expected = Code.ORGANIZE_REQUEST_NOT_ACCEPTED if not folder.strip() else 53012
    assert _refused(boxes, request) == expected
    assert boxes.recorded() == 0


def test_an_account_without_the_role_mapped_cannot_archive_or_trash(boxes: Mailboxes) -> None:
    for action in ("archive", "trash"):
        request = OrganizeRequest(action, boxes.ids(boxes.home_mail))
        assert _refused(boxes, request) == Code.FOLDER_ROLE_NOT_MAPPED
    # The home account's folders are no destination for the work account's mail.
    request = OrganizeRequest("move", boxes.ids(boxes.home_mail), folder="Projects")
    assert _refused(boxes, request) == Code.DESTINATION_NOT_SERVED


def test_a_retry_answers_the_first_records_and_a_reused_identity_is_refused(
    boxes: Mailboxes,
) -> None:
    a, b, c = boxes.mail
    first = boxes.organizer().organize(
        AGENT, OrganizeRequest("label", boxes.ids(a, b), keywords=["x"], request_id="r1")
    )
    boxes.clock.advance(60)
    again = boxes.organizer().organize(
        AGENT, OrganizeRequest("label", boxes.ids(a, b), keywords=["x"], request_id="r1")
    )
    assert [ch.record for ch in again.changed] == [ch.record for ch in first.changed]
    reused = OrganizeRequest("label", boxes.ids(c, b), keywords=["y"], request_id="r1")
    assert _refused(boxes, reused) == Code.ORGANIZE_REQUEST_NOT_ACCEPTED
    assert boxes.recorded() == 2
    assert boxes.memory.local.flags_of(c)[1].keywords == {"old"}


def test_a_caller_without_the_organizing_grant_records_nothing(boxes: Mailboxes) -> None:
    reader = Caller(ALL_PERMISSIONS - {Permission.ORGANIZE}, "reader")
    with pytest.raises(PermissionDenied):
        boxes.organizer().organize(reader, OrganizeRequest("archive", boxes.ids(boxes.mail[0])))
    assert boxes.recorded() == 0


def test_a_folder_asked_for_is_one_pending_record_under_its_parent(boxes: Mailboxes) -> None:
    request = OrganizeRequest(
        "createFolder", account="Work", name="Garden", parent="projects", request_id="f1"
    )
    done = boxes.organizer().organize(AGENT, request)
    assert (done.action, done.account_id, done.changed) == ("createFolder", "work", ())
    assert done.folder is not None
    assert (done.folder.alias, done.folder.parent_alias) == ("Projects/Garden", "Projects")
    record = done.folder.record
    assert (record.name, record.parent_folder_id, record.state) == (
        "Garden",
        boxes.projects,
        MutationState.PENDING,
    )
    assert boxes.woken == ["work"]
    # The same request again: the same record.
    again = boxes.organizer().organize(AGENT, request)
    assert again.folder is not None
    assert again.folder.record == record


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"account": None}, Code.ORGANIZE_REQUEST_NOT_ACCEPTED),
        ({"account": "nobody"}, Code.ACCOUNT_NOT_SERVED),
        ({"name": None}, Code.ORGANIZE_REQUEST_NOT_ACCEPTED),
        ({"name": "a/b"}, Code.ORGANIZE_REQUEST_NOT_ACCEPTED),
        ({"name": " padded"}, Code.ORGANIZE_REQUEST_NOT_ACCEPTED),
        ({"name": "inbox"}, Code.ORGANIZE_REQUEST_NOT_ACCEPTED),
        ({"name": "Archive"}, Code.ORGANIZE_REQUEST_NOT_ACCEPTED),
        ({"name": "n" * 257}, Code.ORGANIZE_REQUEST_NOT_ACCEPTED),
        # Characters that render as nothing, which would let a name look like another's.
        ({"name": "IN\u200bBOX"}, Code.ORGANIZE_REQUEST_NOT_ACCEPTED),
        ({"name": "\u200b"}, Code.ORGANIZE_REQUEST_NOT_ACCEPTED),
        ({"name": "Gar\u2060den"}, Code.ORGANIZE_REQUEST_NOT_ACCEPTED),
        ({"name": "\ufeffGarden"}, Code.ORGANIZE_REQUEST_NOT_ACCEPTED),
        ({"name": "Gar\u00adden"}, Code.ORGANIZE_REQUEST_NOT_ACCEPTED),
        ({"name": "Garden\U000e0041"}, Code.ORGANIZE_REQUEST_NOT_ACCEPTED),
        ({"name": "Garden\ufe0f"}, Code.ORGANIZE_REQUEST_NOT_ACCEPTED),
        ({"name": "Gar\u200eden"}, Code.ORGANIZE_REQUEST_NOT_ACCEPTED),
        ({"name": "\u3164"}, Code.ORGANIZE_REQUEST_NOT_ACCEPTED),
        ({"parent": "Secret"}, Code.DESTINATION_NOT_SERVED),
        ({"name": "Garden", "parent": "P" * 250}, Code.DESTINATION_NOT_SERVED),
    ],
)
def test_a_folder_that_cannot_be_asked_for_is_refused_and_nothing_recorded(
    boxes: Mailboxes, changes: dict[str, object], code: int
) -> None:
    fields: dict[str, object] = {"account": "work", "name": "Garden"}
    fields.update(changes)
    request = OrganizeRequest("createFolder", request_id="f1", **fields)
    assert _refused(boxes, request) == code
    assert boxes.memory.creations.held("work", "agent", "f1") is None


def test_a_folder_name_already_asked_for_is_refused_and_an_identity_is_not_reused(
    boxes: Mailboxes,
) -> None:
    organizer = boxes.organizer()
    organizer.organize(
        AGENT, OrganizeRequest("createFolder", account="work", name="Receipts", request_id="f1")
    )
    taken = OrganizeRequest("createFolder", account="work", name="RECEIPTS", request_id="f2")
    assert _refused(boxes, taken) == Code.ORGANIZE_REQUEST_NOT_ACCEPTED
    reused = OrganizeRequest("createFolder", account="work", name="Bills", request_id="f1")
    assert _refused(boxes, reused) == Code.ORGANIZE_REQUEST_NOT_ACCEPTED
    # The home account may have a folder of that name of its own.
    home = OrganizeRequest("createFolder", account="home", name="Receipts", request_id="f3")
    assert organizer.organize(AGENT, home).account_id == "home"
