"""set_mail_flags over Streamable HTTP with the official client, against a deployment
synchronized from the test Dovecot: every refusal it can produce, a retry and a reused
request identity, and the local copy showing the asked values at once."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url
from mailfathom.adapters.sql.schema import folders, messages
from mcp_tests.client import call, code, structured
from mcp_tests.deployment import KEYS, Deployment, deploy
from servers.dovecot import DovecotServer

ZERO = "00000000-0000-0000-0000-000000000000"
ASK_NOTHING = 51012


@pytest.fixture(scope="module")
def flags_deployment(
    dovecot: DovecotServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    yield from deploy(dovecot, tmp_path_factory)


def _email(d: Deployment, subject: str, folder: str = "INBOX") -> dict[str, Any]:
    listed = structured(
        call(d.url, KEYS["full"], "list_emails", {"folders": [folder], "pageSize": 100})
    )
    return next(e for e in listed["emails"] if e["subject"] == subject)


def _flags(d: Deployment, subject: str) -> dict[str, Any]:
    return dict(_email(d, subject)["remoteFlags"])


def _set(d: Deployment, **arguments: Any) -> Any:
    return call(d.url, KEYS["full"], "set_mail_flags", arguments)


def test_a_change_is_recorded_per_value_and_shown_on_the_local_copy_at_once(
    flags_deployment: Deployment,
) -> None:
    d = flags_deployment
    email = _email(d, "Filler note 04")["storedEmailId"]
    answer = structured(
        _set(
            d,
            storedEmailId=email,
            seen=True,
            flagged=True,
            keywordChange="add",
            keywords=["Later", "$Work"],
        )
    )
    assert answer["storedEmailId"] == email
    assert answer["accountId"] == "work"
    assert answer["folderAlias"] == "INBOX"
    changes = answer["recordedChanges"]
    assert [c["change"] for c in changes] == ["set-seen", "set-flagged", "add-keywords"]
    assert all(c["state"] in ("pending", "converging", "completed") for c in changes)
    assert len({c["changeRecordId"] for c in changes}) == 3
    shown = _flags(d, "Filler note 04")
    assert shown["seen"] is True
    assert shown["flagged"] is True
    assert {"later", "$work"} <= set(shown["keywords"])


def test_a_retry_answers_the_same_records_and_a_reuse_for_another_value_is_refused(
    flags_deployment: Deployment,
) -> None:
    d = flags_deployment
    email = _email(d, "Filler note 06")["storedEmailId"]
    request = uuid.uuid4().hex
    first = structured(_set(d, storedEmailId=email, flagged=True, requestId=request))
    again = structured(_set(d, storedEmailId=email, flagged=True, requestId=request))
    ids = [c["changeRecordId"] for c in first["recordedChanges"]]
    assert [c["changeRecordId"] for c in again["recordedChanges"]] == ids
    assert code(_set(d, storedEmailId=email, flagged=False, requestId=request)) == ASK_NOTHING
    # The identity names the whole request: a change added to it, or one left out of a
    # request of two, is another request, refused without writing anything.
    added = _set(d, storedEmailId=email, flagged=True, seen=True, requestId=request)
    assert code(added) == ASK_NOTHING
    both = uuid.uuid4().hex
    pair = structured(_set(d, storedEmailId=email, seen=True, flagged=True, requestId=both))
    assert code(_set(d, storedEmailId=email, seen=True, requestId=both)) == ASK_NOTHING
    repeated = structured(_set(d, storedEmailId=email, seen=True, flagged=True, requestId=both))
    assert [c["changeRecordId"] for c in repeated["recordedChanges"]] == [
        c["changeRecordId"] for c in pair["recordedChanges"]
    ]
    fresh = structured(_set(d, storedEmailId=email, flagged=True))
    assert [c["changeRecordId"] for c in fresh["recordedChanges"]] != ids
    unnamed = structured(_set(d, storedEmailId=email, flagged=True))
    assert unnamed["recordedChanges"] != fresh["recordedChanges"]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, ASK_NOTHING),
        ({"keywordChange": "add"}, ASK_NOTHING),
        ({"keywords": ["a"]}, ASK_NOTHING),
        ({"keywordChange": "add", "keywords": []}, ASK_NOTHING),
        ({"keywordChange": "remove", "keywords": []}, ASK_NOTHING),
        ({"keywordChange": "add", "keywords": ["two words"]}, ASK_NOTHING),
        ({"keywordChange": "add", "keywords": ["\\Seen"]}, ASK_NOTHING),
        ({"keywordChange": "add", "keywords": ["x" * 65]}, ASK_NOTHING),
        ({"keywordChange": "add", "keywords": ["same"] * 65}, ASK_NOTHING),
        ({"seen": True, "requestId": ""}, ASK_NOTHING),
        ({"seen": True, "requestId": "r" * 129}, ASK_NOTHING),
        ({"seen": True, "requestId": "a\nb"}, ASK_NOTHING),
    ],
)
def test_a_change_that_asks_for_nothing_or_half_of_one_is_refused(
    flags_deployment: Deployment, arguments: dict[str, Any], expected: int
) -> None:
    d = flags_deployment
    email = _email(d, "Filler note 08")["storedEmailId"]
    assert code(_set(d, storedEmailId=email, **arguments)) == expected


def test_sixty_four_keywords_differing_in_case_are_accepted_and_replace_may_clear(
    flags_deployment: Deployment,
) -> None:
    d = flags_deployment
    email = _email(d, "Filler note 10")["storedEmailId"]
    words = [f"Tag{n}" if n % 2 else f"tag{n}" for n in range(64)]
    assert not _set(d, storedEmailId=email, keywordChange="add", keywords=words).is_error
    cleared = structured(_set(d, storedEmailId=email, keywordChange="replace", keywords=[]))
    assert [c["change"] for c in cleared["recordedChanges"]] == ["set-keywords"]
    assert _flags(d, "Filler note 10")["keywords"] == []


@pytest.mark.parametrize("named", ["", "not-a-uuid", ZERO])
def test_a_text_naming_no_email_is_refused_before_anything_is_looked_up(
    flags_deployment: Deployment, named: str
) -> None:
    assert code(_set(flags_deployment, storedEmailId=named, seen=True)) == 51004


def test_unknown_and_withheld_emails_are_one_answer(flags_deployment: Deployment) -> None:
    d = flags_deployment
    unknown = _set(d, storedEmailId=str(uuid.uuid4()), seen=True)
    assert code(unknown) == 53002
    # The Private folder is mapped but withheld from tools: its mail cannot be named at all,
    # so its identifier is read from the store the deployment keeps.
    withheld = _withheld_email(d)
    assert code(_set(d, storedEmailId=withheld, seen=True)) == 53002


def _withheld_email(d: Deployment) -> str:
    engine = create_store_engine(sqlite_url(d.data_dir / "mailfathom.sqlite3"))
    try:
        with engine.connect() as c:
            value = c.execute(
                sa.select(messages.c.stored_email_id)
                .join(folders, folders.c.folder_id == messages.c.folder_id)
                .where(folders.c.alias == "Private")
            ).scalar_one()
    finally:
        engine.dispose()
    return str(value)
