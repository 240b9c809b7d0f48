"""organize_email over Streamable HTTP with the official client, against a deployment
synchronized from the test Dovecot: who is offered it, every refusal it can produce, a retry
and a reused request identity, and a batch of a hundred emails."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_tests.client import UNKNOWN_TOOL, call, code, refusal, structured, tool_names
from mcp_tests.deployment import KEYS, Deployment, deploy
from servers.dovecot import DovecotServer
from waiting import wait_for

from .support import HEAP, HEAP_COUNT, fill_heap, more_folders, withheld_email
from .test_moves_dovecot import Mailbox

ZERO = "00000000-0000-0000-0000-000000000000"
NOT_ACCEPTED = 51020


@pytest.fixture(scope="module")
def organized(
    dovecot: DovecotServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    yield from deploy(dovecot, tmp_path_factory, more_config=more_folders, more_mail=fill_heap)


def _emails(d: Deployment, folder: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    cursor = None
    while True:
        arguments: dict[str, Any] = {"folders": [folder], "pageSize": 100}
        if cursor:
            arguments["cursor"] = cursor
        page = structured(call(d.url, KEYS["full"], "list_emails", arguments))
        found.extend(page["emails"])
        cursor = page.get("nextCursor")
        if not cursor:
            return found


def _ids(d: Deployment, folder: str, prefix: str) -> list[str]:
    return [e["storedEmailId"] for e in _emails(d, folder) if e["subject"].startswith(prefix)]


def _organize(d: Deployment, key: str = "full", **arguments: Any) -> Any:
    return call(d.url, KEYS[key], "organize_email", arguments)


def test_only_a_caller_granted_organizing_is_offered_the_tool(organized: Deployment) -> None:
    d = organized
    assert "organize_email" in tool_names(d.url, KEYS["organizer"])
    assert "organize_email" in tool_names(d.url, KEYS["full"])
    for key in ("reader", "flagger", "drafter-sender", "nothing"):
        assert "organize_email" not in tool_names(d.url, KEYS[key])
    (email,) = _ids(d, "INBOX", "Filler note 01")
    # The organizing grant alone is enough: no read grant is needed to file mail.
    answer = structured(_organize(d, "organizer", action="archive", storedEmailIds=[email]))
    assert [c["change"] for c in answer["changed"]] == ["move"]
    refused = refusal(
        d.url, KEYS["reader"], "organize_email", {"action": "archive", "storedEmailIds": [email]}
    )
    unknown = refusal(d.url, KEYS["reader"], "organize_email_absent", {})
    assert refused == unknown == UNKNOWN_TOOL


def test_each_action_writes_one_record_per_email(organized: Deployment) -> None:
    d = organized
    a, b = _ids(d, "INBOX", "Filler note 02") + _ids(d, "INBOX", "Filler note 03")
    moved = structured(_organize(d, action="move", storedEmailIds=[a, b], folder="bulk"))
    assert moved["action"] == "move"
    assert moved["accountId"] == "work"
    assert moved["destinationAlias"] == "Bulk"
    assert [c["storedEmailId"] for c in moved["changed"]] == [a, b]
    assert [c["folderAlias"] for c in moved["changed"]] == ["INBOX", "INBOX"]
    assert all(c["state"] in ("pending", "converging", "completed") for c in moved["changed"])
    trashed = structured(_organize(d, action="trash", storedEmailIds=[a]))
    assert trashed["destinationAlias"] == "Trash"
    archived = structured(_organize(d, action="archive", storedEmailIds=[b]))
    assert archived["destinationAlias"] == "Archive"
    (c,) = _ids(d, "INBOX", "Filler note 05")
    labelled = structured(
        _organize(d, action="label", storedEmailIds=[c], keywords=["Later", "$Work"])
    )
    assert labelled["destinationAlias"] is None
    assert [x["change"] for x in labelled["changed"]] == ["add-keywords"]
    # A keyword change shows on the local copy at once, as set_mail_flags' does.
    shown = next(e for e in _emails(d, "INBOX") if e["storedEmailId"] == c)
    assert {"later", "$work"} <= set(shown["remoteFlags"]["keywords"])
    unlabelled = structured(_organize(d, action="unlabel", storedEmailIds=[c], keywords=["LATER"]))
    assert [x["change"] for x in unlabelled["changed"]] == ["remove-keywords"]
    shown = next(e for e in _emails(d, "INBOX") if e["storedEmailId"] == c)
    assert "later" not in shown["remoteFlags"]["keywords"]


def test_a_retry_answers_the_same_records_and_a_reuse_for_another_change_is_refused(
    organized: Deployment,
) -> None:
    d = organized
    *emails, beside = [_ids(d, "INBOX", f"Filler note {n:02d}")[0] for n in (6, 7, 8, 9)]
    request = uuid.uuid4().hex
    first = structured(_organize(d, action="archive", storedEmailIds=emails, requestId=request))
    again = structured(_organize(d, action="archive", storedEmailIds=emails, requestId=request))
    ids = [c["changeRecordId"] for c in first["changed"]]
    assert [c["changeRecordId"] for c in again["changed"]] == ids
    # The same identity asking another folder of the same emails is refused, and nothing of
    # the second call is written.
    reused = _organize(d, action="trash", storedEmailIds=emails, requestId=request)
    assert code(reused) == NOT_ACCEPTED
    # The emails are part of the request: one more, or one fewer, is another request.
    for named in ([*emails, beside], emails[:2]):
        refused = _organize(d, action="archive", storedEmailIds=named, requestId=request)
        assert code(refused) == NOT_ACCEPTED
    assert beside in [e["storedEmailId"] for e in _emails(d, "INBOX")]
    reordered = _organize(d, action="archive", storedEmailIds=emails[::-1], requestId=request)
    assert [c["changeRecordId"] for c in structured(reordered)["changed"]] == ids[::-1]
    fresh = structured(_organize(d, action="archive", storedEmailIds=emails))
    assert not {c["changeRecordId"] for c in fresh["changed"]} & set(ids)


def test_a_hundred_emails_are_one_call_and_a_hundred_and_one_are_refused(
    organized: Deployment,
) -> None:
    d = organized
    heap = _ids(d, HEAP, "Heap item")
    assert len(heap) == HEAP_COUNT
    request = uuid.uuid4().hex
    answer = structured(
        _organize(d, action="label", storedEmailIds=heap[:100], keywords=["sorted"],
                  requestId=request)
    )  # fmt: skip
    assert [c["storedEmailId"] for c in answer["changed"]] == heap[:100]
    assert len({c["changeRecordId"] for c in answer["changed"]}) == 100
    too_many = _organize(d, action="label", storedEmailIds=heap[:101], keywords=["sorted"])
    assert code(too_many) == 51005


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"action": "move"}, NOT_ACCEPTED),
        ({"action": "move", "folder": ""}, NOT_ACCEPTED),
        ({"action": "move", "folder": "a\nb"}, NOT_ACCEPTED),
        ({"action": "move", "folder": "x" * 257}, NOT_ACCEPTED),
        ({"action": "archive", "folder": "Bulk"}, NOT_ACCEPTED),
        ({"action": "archive", "keywords": ["a"]}, NOT_ACCEPTED),
        ({"action": "label"}, NOT_ACCEPTED),
        ({"action": "label", "keywords": []}, NOT_ACCEPTED),
        ({"action": "label", "keywords": ["two words"]}, NOT_ACCEPTED),
        ({"action": "label", "keywords": ["\\Seen"]}, NOT_ACCEPTED),
        ({"action": "label", "keywords": ["x" * 65]}, NOT_ACCEPTED),
        ({"action": "unlabel", "keywords": ["same"] * 65}, NOT_ACCEPTED),
        ({"action": "unlabel", "keywords": ["a"], "folder": "Bulk"}, NOT_ACCEPTED),
        ({"action": "archive", "requestId": ""}, NOT_ACCEPTED),
        ({"action": "archive", "requestId": "r" * 129}, NOT_ACCEPTED),
        ({"action": "archive", "requestId": "a\nb"}, NOT_ACCEPTED),
        ({"action": "delete"}, 51017),
        ({"action": "move", "folder": "Nowhere"}, 53012),
        # A folder withheld from tools is the same answer as one that does not exist.
        ({"action": "move", "folder": "Private"}, 53012),
    ],
)
def test_a_request_breaking_a_rule_is_refused_naming_the_rule(
    organized: Deployment, arguments: dict[str, Any], expected: int
) -> None:
    d = organized
    emails = _ids(d, "INBOX", "Filler note 1")[:2]
    refused = _organize(d, storedEmailIds=emails, **arguments)
    assert code(refused) == expected
    for value in (arguments.get("folder"), arguments.get("requestId")):
        if value and len(value) > 3:
            assert value not in refused.content[0].text


@pytest.mark.parametrize(
    ("emails", "expected"),
    [
        ([], 51005),
        (["not-a-uuid"], 51004),
        ([ZERO], 51004),
        ([str(uuid.uuid4())], 53002),
    ],
)
def test_emails_that_name_nothing_served_are_refused(
    organized: Deployment, emails: list[str], expected: int
) -> None:
    assert code(_organize(organized, action="archive", storedEmailIds=emails)) == expected


def test_one_email_twice_a_withheld_email_and_an_unknown_one_are_refused(
    organized: Deployment,
) -> None:
    d = organized
    (email,) = _ids(d, "INBOX", "Filler note 12")
    assert code(_organize(d, action="archive", storedEmailIds=[email, email])) == 51006
    withheld = withheld_email(d)
    assert code(_organize(d, action="archive", storedEmailIds=[email, withheld])) == 53002
    unknown = str(uuid.uuid4())
    assert code(_organize(d, action="archive", storedEmailIds=[email, unknown])) == 53002


def test_a_role_no_folder_carries_is_refused_naming_the_role(
    dovecot: DovecotServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The shared deployment maps no Trash folder."""
    for d in deploy(dovecot, tmp_path_factory):
        (email,) = _ids(d, "INBOX", "Filler note 13")
        refused = _organize(d, action="trash", storedEmailIds=[email])
        assert code(refused) == 53003
        assert "Trash" in refused.content[0].text
        assert code(_organize(d, action="archive", storedEmailIds=[email])) is None


def test_emails_of_two_accounts_are_refused(organized: Deployment) -> None:
    d = organized
    (email,) = _ids(d, "INBOX", "Filler note 14")
    other = _ids(d, "Elsewhere", "Elsewhere item")
    assert other
    refused = _organize(d, action="archive", storedEmailIds=[email, other[0]])
    assert code(refused) == NOT_ACCEPTED


def test_a_moved_email_is_carried_by_the_running_server_and_still_reads(
    organized: Deployment,
) -> None:
    d = organized
    assert d.account is not None
    (email,) = _ids(d, "INBOX", "Filler note 20")
    request = uuid.uuid4().hex
    _organize(d, action="move", storedEmailIds=[email], folder="Bulk", requestId=request)
    mailbox = Mailbox(d.account)
    try:
        wait_for(
            lambda: "Filler note 20" in mailbox.subjects("Bulk").values(),
            "the move reached the server",
        )
        assert "Filler note 20" not in mailbox.subjects("INBOX").values()
    finally:
        mailbox.close()

    def settled() -> bool:
        answer = structured(
            _organize(d, action="move", storedEmailIds=[email], folder="Bulk", requestId=request)
        )
        return bool(answer["changed"][0]["state"] == "completed")

    wait_for(settled, "the record completed")
    read = structured(call(d.url, KEYS["full"], "get_email_content", {"storedEmailIds": [email]}))
    (entry,) = read["emails"]
    assert entry["failure"] is None
    assert entry["content"]["folderAlias"] == "Bulk"
    assert "Routine filler body number 20" in entry["content"]["body"]["plainText"]["text"]
    assert email in {e["storedEmailId"] for e in _emails(d, "Bulk")}
    assert email not in {e["storedEmailId"] for e in _emails(d, "INBOX")}


def test_a_hundred_emails_are_moved_by_one_call_and_keep_their_identifiers(
    organized: Deployment,
) -> None:
    d = organized
    assert d.account is not None
    heap = _ids(d, HEAP, "Heap item")[:100]
    answer = structured(_organize(d, action="move", storedEmailIds=heap, folder="Junk"))
    assert len(answer["changed"]) == 100
    mailbox = Mailbox(d.account)
    try:
        wait_for(
            lambda: len(mailbox.subjects(HEAP)) == HEAP_COUNT - 100, "the moves reached the server"
        )
        junk = [s for s in mailbox.subjects("Junk").values() if s.startswith("Heap item")]
        assert len(junk) == 100
    finally:
        mailbox.close()
    wait_for(
        lambda: {e["storedEmailId"] for e in _emails(d, "Junk")} >= set(heap),
        "the stored rows follow the moves",
    )
    assert len(_ids(d, HEAP, "Heap item")) == HEAP_COUNT - 100


def test_create_folder_is_answered_with_the_folder_and_its_refusals_name_the_rule(
    organized: Deployment,
) -> None:
    """createFolder from the official client: a pending folder under its alias, a retry
    answering the same record; and each refused form, none echoing the name asked for."""
    d = organized
    asked = {"action": "createFolder", "account": "work", "requestId": "new-folder-1"}
    first = structured(_organize(d, name="Quarterly reports", parent="Heap", **asked))
    assert first["changed"] == []
    assert first["accountId"] == "work"
    folder = first["folder"]
    assert (folder["alias"], folder["parentAlias"]) == ("Heap/Quarterly reports", "Heap")
    assert folder["state"] == "pending"
    again = structured(_organize(d, name="Quarterly reports", parent="Heap", **asked))
    assert again["folder"]["changeRecordId"] == folder["changeRecordId"]
    refusals: list[tuple[dict[str, Any], int]] = [
        ({"name": "Another name", "parent": "Heap", **asked}, NOT_ACCEPTED),
        ({"action": "createFolder", "name": "Holder"}, NOT_ACCEPTED),
        ({"action": "createFolder", "account": "work"}, NOT_ACCEPTED),
        ({"action": "createFolder", "account": "work", "name": "a/b"}, NOT_ACCEPTED),
        ({"action": "createFolder", "account": "work", "name": " padded"}, NOT_ACCEPTED),
        ({"action": "createFolder", "account": "work", "name": "x" * 257}, NOT_ACCEPTED),
        ({"action": "createFolder", "account": "work", "name": "inbox"}, NOT_ACCEPTED),
        ({"action": "createFolder", "account": "work", "name": "heap"}, NOT_ACCEPTED),
        ({"action": "createFolder", "account": "work", "name": "IN\u200bBOX"}, NOT_ACCEPTED),
        ({"action": "createFolder", "account": "work", "name": "Hol\u200cder"}, NOT_ACCEPTED),
        ({"action": "createFolder", "account": "nobody", "name": "Holder"}, 53001),
        ({"action": "createFolder", "account": "work", "name": "Sub", "parent": "Private"}, 53012),
        ({"action": "createFolder", "account": "work", "name": "Sub", "parent": "Nowhere"}, 53012),
        (
            {"action": "createFolder", "account": "work", "name": "Holder", "folder": "Heap"},
            NOT_ACCEPTED,
        ),
        ({"action": "archive", "account": "work", "storedEmailIds": [ZERO]}, NOT_ACCEPTED),
    ]
    for arguments, expected in refusals:
        refused = _organize(d, **arguments)
        assert code(refused) == expected, arguments
        assert "Holder" not in refused.content[0].text
        assert "Another name" not in refused.content[0].text
    unseen = _organize(d, action="createFolder", account="work", name="IN\u200bBOX")
    assert "renders as nothing" in unseen.content[0].text
    assert "IN\u200bBOX" not in unseen.content[0].text
    withheld = _organize(d, action="createFolder", account="work", name="Private")
    # A withheld folder's name is not refused as taken: it is written, and the run never
    # takes the server's folder over (dead-lettered there), so the answer reveals nothing.
    assert structured(withheld)["folder"]["state"] == "pending"
    assert "organize_email" not in tool_names(d.url, KEYS["reader"])
