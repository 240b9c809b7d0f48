"""An answering run's lookup (`MailLookup`): the adapter over search_emails' use case on
SQLite and PostgreSQL, and the in-memory fake the use-case tests run on, answer alike."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from fakes.answering import MemoryLookup, MemoryMailbox
from mailfathom.adapters.answering_lookup import SearchLookup
from mailfathom.adapters.patterns.re2_patterns import Re2PatternCompiler
from mailfathom.adapters.sql.reading import SqlMailboxReader
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.answering.ports import LookupRequest, MailLookup
from mailfathom.app.reading.search_emails import MailboxSearchReader
from mailfathom.app.shared.mailbox_selection import SelectionInput, ServedAccount
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from mailfathom.domain.folders import FolderRole

from .conftest import BACKENDS, _migrated
from .reading_builders import Mail, add_folder, at, store_mail

READER = Caller(frozenset({Permission.MAIL_READ}), "reader")
SERVED = [ServedAccount("work", "Work Mail", "polling"), ServedAccount("home", "home", "polling")]
# (account, folder alias, role, subject, body, sender)
MAIL = [
    ("work", "INBOX", FolderRole.INBOX, "Leak in the flat", "water damage in the kitchen",
     "landlord@example.org"),
    ("work", "INBOX", FolderRole.INBOX, "Invoice", "a leak of money", "billing@example.org"),
    ("work", "Junk", FolderRole.JUNK, "Prize", "a leak prize", "spam@example.org"),
    ("home", "INBOX", FolderRole.INBOX, "At home", "leak at home", "friend@example.org"),
]  # fmt: skip


@dataclass
class Mailroom:
    lookup: MailLookup
    held: list[str] = field(default_factory=list)

    def subjects(self, query: str, **selection: object) -> set[str | None]:
        found = self.lookup.find(
            READER,
            LookupRequest(query, SelectionInput(**selection)),  # type: ignore[arg-type]
        )
        return {f.subject for f in found}


def _sql(store: SqlSyncStore) -> MailLookup:
    folders = {}
    for n, (account, alias, role, subject, body, sender) in enumerate(MAIL):
        if (account, alias) not in folders:
            folders[account, alias] = add_folder(store, alias, account_id=account, role=role)
        mail = Mail(subject, received=at(n), sender=sender, body=body)
        store_mail(store, folders[account, alias], mail, first_uid=n + 1)
    search = MailboxSearchReader(SqlMailboxReader(store.engine), SERVED, Re2PatternCompiler())
    return SearchLookup(search)


def _memory() -> MailLookup:
    box = MemoryMailbox(served=list(SERVED))
    folders = {}
    for n, (account, alias, role, subject, body, sender) in enumerate(MAIL):
        if (account, alias) not in folders:
            folders[account, alias] = box.folder(account, alias, role)
        box.add(folders[account, alias], subject, body, sender=sender, minutes=n)
    return MemoryLookup(box)


@pytest.fixture(params=BACKENDS)
def mailroom(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Mailroom]:
    if request.param == "memory":
        yield Mailroom(_memory())
        return
    with _migrated(request.param, request, tmp_path) as engine:
        yield Mailroom(_sql(SqlSyncStore(engine)))


def test_every_word_is_required_and_junk_is_left_out(mailroom: Mailroom) -> None:
    assert mailroom.subjects("leak") == {"Leak in the flat", "Invoice", "At home"}
    assert mailroom.subjects("leak water") == {"Leak in the flat"}


def test_the_scope_is_resolved_by_identifier_or_display_name(mailroom: Mailroom) -> None:
    assert mailroom.subjects("leak", accounts=["Work Mail"]) == {"Leak in the flat", "Invoice"}
    assert mailroom.subjects("leak", accounts=["home"]) == {"At home"}
    assert mailroom.subjects("leak", accounts=[]) == set()


def test_a_junk_folder_named_takes_part(mailroom: Mailroom) -> None:
    assert mailroom.subjects("leak", accounts=["work"], folders=["Junk"]) == {"Prize"}


def test_filters_narrow_as_a_search_narrows(mailroom: Mailroom) -> None:
    assert mailroom.subjects("leak", sender_address="LANDLORD@example.org") == {"Leak in the flat"}
    found = mailroom.lookup.find(READER, LookupRequest("leak", SelectionInput(), 1))
    assert len(found) == 1


@pytest.mark.parametrize(
    ("query", "selection", "limit", "code"),
    [
        ("leak", {"accounts": ["nobody"]}, None, Code.ACCOUNT_NOT_SERVED),
        ("leak", {"folders": ["role:Sent"]}, None, Code.FOLDER_ROLE_NOT_MAPPED),
        ("leak", {"sender_address": "nobody"}, None, Code.FILTER_NOT_ACCEPTED),
        ("  ", {}, None, Code.FILTER_NOT_ACCEPTED),
        ("x" * 513, {}, None, Code.FILTER_NOT_ACCEPTED),
        ("leak", {}, 0, Code.RESULT_LIMIT_OUT_OF_RANGE),
        ("leak", {}, 51, Code.RESULT_LIMIT_OUT_OF_RANGE),
    ],
)
def test_what_a_search_refuses_a_lookup_refuses(
    mailroom: Mailroom, query: str, selection: dict[str, object], limit: int | None, code: Code
) -> None:
    request = LookupRequest(query, SelectionInput(**selection), limit)  # type: ignore[arg-type]
    with pytest.raises(Refusal) as refused:
        mailroom.lookup.find(READER, request)
    assert refused.value.code == code


def test_what_a_lookup_shows_of_an_email(mailroom: Mailroom) -> None:
    (found,) = mailroom.lookup.find(READER, LookupRequest("water", SelectionInput()))
    assert (found.account_id, found.account_display_name, found.folder_alias) == (
        "work",
        "Work Mail",
        "INBOX",
    )
    assert (found.subject, found.sender_address) == ("Leak in the flat", "landlord@example.org")
    assert any("water" in extract for extract in found.extracts)
