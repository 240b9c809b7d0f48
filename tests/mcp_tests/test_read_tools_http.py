"""The reading tools over Streamable HTTP with the official client, against a store
synchronized from the test Dovecot."""

from __future__ import annotations

import sqlite3
import uuid
from typing import Any

import httpx2
import pytest

from mailfathom.adapters.content.packs import PackContentStore
from mcp_tests.client import call, code, structured, text, tool_names
from mcp_tests.deployment import BULK_COUNT, FILLER_COUNT, KEYS, Deployment

READ_TOOLS = ["get_email_content", "list_accounts", "list_emails", "search_emails"]
SEND_TOOLS = [
    "cancel_outgoing_email",
    "forward_email",
    "get_outgoing_email",
    "reply_to_email",
    "send_draft",
    "send_email",
]
DRAFT_TOOLS = ["delete_draft", "save_draft", "update_draft"]
FLAG_TOOLS = ["set_mail_flags"]
ORGANIZE_TOOLS = ["organize_email"]
CONTACT_TOOLS = sorted(
    ["list_contacts", "get_contact", "create_contact", "update_contact", "delete_contact"]
)
CONTACT_TOOLS = sorted([*CONTACT_TOOLS, "promote_contact"])
ALL_TOOLS = sorted(
    READ_TOOLS + SEND_TOOLS + DRAFT_TOOLS + FLAG_TOOLS + ORGANIZE_TOOLS + CONTACT_TOOLS
)
# An answer quotes or carries the message it answers: replying and forwarding need both grants.
SEND_ONLY_TOOLS = ["cancel_outgoing_email", "get_outgoing_email", "send_draft", "send_email"]
ZERO = "00000000-0000-0000-0000-000000000000"


def _all_emails(d: Deployment, **filters: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    cursor = None
    while True:
        args = {**filters, "pageSize": 7}
        if cursor:
            args["cursor"] = cursor
        page = structured(call(d.url, KEYS["full"], "list_emails", args))
        found.extend(page["emails"])
        cursor = page.get("nextCursor")
        if not cursor:
            return found


def _subject_id(d: Deployment, subject: str, **filters: Any) -> str:
    for email in _all_emails(d, **filters):
        if email["subject"] == subject:
            return str(email["storedEmailId"])
    raise AssertionError("no such subject")


def test_list_accounts_names_readable_folders_and_no_connection_detail(
    mcp_deployment: Deployment,
) -> None:
    result = structured(call(mcp_deployment.url, KEYS["full"], "list_accounts"))
    (account,) = result["accounts"]
    assert account["accountId"] == "work"
    assert account["displayName"] == "Work Mail"
    assert account["synchronizationMode"] == "polling"
    assert sorted(f["alias"] for f in account["folders"]) == ["Archive", "Bulk", "INBOX", "Junk"]
    assert all(f["wasSynchronized"] for f in account["folders"])
    assert result["synchronizationEnabled"] is True
    flat = text(call(mcp_deployment.url, KEYS["full"], "list_accounts"))
    for secret_ish in ("127.0.0.1", "Private", "Imap", "mcp-", "Secret"):
        assert secret_ish not in flat


def test_timeline_walk_visits_every_visible_email_once_newest_first(
    mcp_deployment: Deployment,
) -> None:
    emails = _all_emails(mcp_deployment)
    subjects = [e["subject"] for e in emails]
    # INBOX, Archive and Bulk: 2 thread messages, the newsletter, the fillers, the bulk
    # exports; never Junk or Private.
    assert len(emails) == FILLER_COUNT + BULK_COUNT + 3
    assert len({e["storedEmailId"] for e in emails}) == len(emails)
    assert "You won a prize" not in subjects
    assert all("Confidential" not in str(e) for e in emails)
    received = [e["receivedAt"] for e in emails]
    assert received == sorted(received, reverse=True)


def test_oldest_first_is_the_reverse_walk(mcp_deployment: Deployment) -> None:
    newest = [e["storedEmailId"] for e in _all_emails(mcp_deployment)]
    oldest = [e["storedEmailId"] for e in _all_emails(mcp_deployment, direction="oldestFirst")]
    assert oldest == list(reversed(newest))


def test_filters_narrow_the_walk(mcp_deployment: Deployment) -> None:
    d = mcp_deployment
    assert len(_all_emails(d, senderAddress="DANA@example.org")) == FILLER_COUNT
    assert len(_all_emails(d, isRemotelySeen=True)) == FILLER_COUNT // 2
    flagged = _all_emails(d, isRemotelyFlagged=True)
    assert [e["subject"] for e in flagged] == ["Newsletter with pictures"]
    assert flagged[0]["remoteFlags"]["keywords"] == ["$important"]
    assert [e["subject"] for e in _all_emails(d, keyword="$IMPORTANT")] == [
        "Newsletter with pictures"
    ]
    with_files = _all_emails(d, hasAttachments=True)
    assert [e["subject"] for e in with_files] == ["Quarterly report draft"]
    assert with_files[0]["attachments"]["attachmentCount"] == 1
    assert len(_all_emails(d, subjectFragment="FILLER NOTE 0")) == 10
    assert _all_emails(d, subjectFragment="%") == []
    assert [e["folderAlias"] for e in _all_emails(d, folders=["archive"])] == ["Archive"]


def test_junk_is_left_out_unless_asked_for(mcp_deployment: Deployment) -> None:
    url = mcp_deployment.url
    default = structured(call(url, KEYS["full"], "list_emails", {"pageSize": 100}))
    assert default["includedJunkMail"] is False
    assert "Junk" not in [f["alias"] for f in default["folderFreshness"]]
    asked = structured(
        call(url, KEYS["full"], "list_emails", {"pageSize": 100, "includeJunkMail": True})
    )
    assert asked["includedJunkMail"] is True
    assert "You won a prize" in [e["subject"] for e in asked["emails"]]
    by_role = structured(call(url, KEYS["full"], "list_emails", {"folders": ["role:Junk"]}))
    assert [e["subject"] for e in by_role["emails"]] == ["You won a prize"]


def test_withheld_folder_reads_as_empty_and_its_mail_as_not_found(
    mcp_deployment: Deployment,
) -> None:
    url = mcp_deployment.url
    page = structured(call(url, KEYS["full"], "list_emails", {"folders": ["Private"]}))
    assert page["emails"] == []
    assert page["folderFreshness"] == []
    found = structured(
        call(url, KEYS["full"], "search_emails", {"queryText": "confidential remark"})
    )
    assert found["matches"] == []


def test_cursor_is_bound_to_filters_and_authenticated(mcp_deployment: Deployment) -> None:
    url = mcp_deployment.url
    first = structured(call(url, KEYS["full"], "list_emails", {"pageSize": 2}))
    cursor = first["nextCursor"]
    assert cursor
    # The same walk continues under the account's display name, which resolves to one id.
    same = call(
        url,
        KEYS["full"],
        "list_emails",
        {"pageSize": 2, "cursor": cursor, "accounts": ["work mail"]},
    )
    assert not same.is_error
    other_filter = call(
        url, KEYS["full"], "list_emails", {"pageSize": 2, "cursor": cursor, "isRemotelySeen": True}
    )
    assert code(other_filter) == 52002
    other_direction = call(
        url,
        KEYS["full"],
        "list_emails",
        {"pageSize": 2, "cursor": cursor, "direction": "oldestFirst"},
    )
    assert code(other_direction) == 52002
    forged = cursor[:-2] + ("AA" if not cursor.endswith("AA") else "BB")
    assert code(call(url, KEYS["full"], "list_emails", {"cursor": forged})) == 52001
    assert code(call(url, KEYS["full"], "list_emails", {"cursor": "x" * 600})) == 52001


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"pageSize": 0}, 51001),
        ({"pageSize": 101}, 51001),
        ({"accounts": ["nobody"]}, 53001),
        ({"accounts": ["work"] * 65}, 51002),
        ({"folders": ["INBOX"] * 65}, 51002),
        ({"accounts": [""]}, 51002),
        ({"accounts": ["a" * 257]}, 51002),
        ({"accounts": ["bad\nname"]}, 51002),
        ({"folders": ["role:Drafts"]}, 53003),
        ({"folders": ["role:NoSuchRole"]}, 51002),
        ({"senderAddress": "not an address"}, 51002),
        ({"recipientAddress": "@example.org"}, 51002),
        ({"subjectFragment": "s" * 257}, 51002),
        ({"subjectFragment": "tab\there"}, 51002),
        ({"keyword": "k" * 65}, 51002),
        ({"keyword": "two words"}, 51002),
        (
            {"receivedOnOrAfter": "2026-05-02T00:00:00Z", "receivedBefore": "2026-05-01T00:00:00Z"},
            51002,
        ),
        ({"pageSize": "many"}, 51017),
    ],
)
def test_list_emails_refusals(
    mcp_deployment: Deployment, arguments: dict[str, Any], expected: int
) -> None:
    result = call(mcp_deployment.url, KEYS["full"], "list_emails", arguments)
    assert code(result) == expected
    body = text(result)
    for value in arguments.values():
        if isinstance(value, str) and len(value) > 3:
            assert value not in body or expected == 53001


def test_refusal_names_the_account_but_no_other_value(mcp_deployment: Deployment) -> None:
    result = call(mcp_deployment.url, KEYS["full"], "list_emails", {"accounts": ["nobody"]})
    assert text(result) == "MailFathom error 53001: Mail account 'nobody' is not accessible."


def test_search_ranks_matches_with_marked_snippets(mcp_deployment: Deployment) -> None:
    result = structured(
        call(mcp_deployment.url, KEYS["full"], "search_emails", {"queryText": "revenue"})
    )
    assert result["retrievalMode"] == "lexical"
    assert result["semanticSearch"] == "inactive"
    subjects = sorted(m["summary"]["subject"] for m in result["matches"])
    assert subjects == ["Quarterly report draft", "Re: Quarterly report draft"]
    for match in result["matches"]:
        assert any("**revenue**" in s.lower() for s in match["snippets"])
    ranks = [m["relevanceRank"] for m in result["matches"]]
    assert ranks == sorted(ranks, reverse=True)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"queryText": "  "}, 51002),
        ({"queryText": "q" * 513}, 51002),
        ({"queryText": "bad\u0007"}, 51002),
        ({"queryText": "x", "resultLimit": 0}, 51003),
        ({"queryText": "x", "resultLimit": 51}, 51003),
        ({"queryText": "x", "accounts": ["nobody"]}, 53001),
        ({"queryText": "x", "folders": ["role:Sent"]}, 53003),
        # Neither queryText nor matchPattern: nothing to search for.
        ({"resultLimit": 5}, 51002),
    ],
)
def test_search_refusals(
    mcp_deployment: Deployment, arguments: dict[str, Any], expected: int
) -> None:
    assert code(call(mcp_deployment.url, KEYS["full"], "search_emails", arguments)) == expected


def test_search_treats_query_syntax_as_words(mcp_deployment: Deployment) -> None:
    for query in ['"unbalanced', "NEAR(a b)", "revenue OR prize", "col:umn", "-x *"]:
        result = call(mcp_deployment.url, KEYS["full"], "search_emails", {"queryText": query})
        assert not result.is_error, query


def test_content_read_serves_emails_beside_per_email_failures(
    mcp_deployment: Deployment,
) -> None:
    d = mcp_deployment
    newsletter = _subject_id(d, "Newsletter with pictures")
    unknown = "6f1c1d8e-5d55-4a55-9b33-1f1e3a4b5c6d"
    result = structured(
        call(
            d.url,
            KEYS["full"],
            "get_email_content",
            {"storedEmailIds": [newsletter, unknown], "includeSanitizedHtml": True},
        )
    )
    served, missing = result["emails"]
    assert served["storedEmailId"] == newsletter
    assert served["failure"] is None
    body = served["content"]["body"]
    assert body["availability"] == "readable"
    assert "Plain version of the newsletter." in body["plainText"]["text"]
    html = body["sanitizedHtml"]["text"]
    assert "<b>reader</b>" in html
    assert "script" not in html
    assert "tracker.example" not in html
    assert missing == {
        "storedEmailId": unknown,
        "content": None,
        "failure": {"code": 53002, "message": missing["failure"]["message"]},
    }


def test_content_read_describes_attachments_and_the_visible_thread(
    mcp_deployment: Deployment,
) -> None:
    d = mcp_deployment
    root = _subject_id(d, "Quarterly report draft")
    result = structured(
        call(
            d.url,
            KEYS["full"],
            "get_email_content",
            {"storedEmailIds": [root], "includeAttachmentDownloadLinks": True},
        )
    )
    content = result["emails"][0]["content"]
    (attachment,) = content["attachments"]
    assert attachment["fileName"] == "figures.pdf"
    assert attachment["mediaType"] == "application/pdf"
    assert attachment["downloadState"] == "unavailable"
    thread = content["thread"]
    # The reply in the withheld folder is not counted, named or read.
    assert thread["messageCount"] == 2
    assert thread["position"] == 0
    assert thread["inReplyToStoredEmailId"] is None
    (other,) = thread["otherMessages"]
    assert other["inReplyToStoredEmailId"] == root
    assert other["senderAddress"] == "bob@example.org"
    by_thread = structured(
        call(d.url, KEYS["full"], "get_email_content", {"threadId": thread["threadId"]})
    )
    assert [e["storedEmailId"] for e in by_thread["emails"]] == [root, other["storedEmailId"]]
    assert by_thread["unreadThreadMessages"] == []
    assert content["headers"]["senderAuthentication"]["displayedAuthorDomain"] == "EXAMPLE.ORG"


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, 51007),
        ({"storedEmailIds": [], "threadId": "x"}, 51007),
        ({"storedEmailIds": []}, 51005),
        (
            {"storedEmailIds": [f"6f1c1d8e-5d55-4a55-9b33-1f1e3a4b5c{n:02d}" for n in range(11)]},
            51005,
        ),
        ({"storedEmailIds": ["not-a-uuid"]}, 51004),
        ({"storedEmailIds": [ZERO]}, 51004),
        ({"storedEmailIds": ["x" * 100]}, 51004),
        (
            {
                "storedEmailIds": [
                    "6F1C1D8E-5D55-4A55-9B33-1F1E3A4B5C6D",
                    "6f1c1d8e5d554a559b331f1e3a4b5c6d",
                ]
            },
            51006,
        ),
        ({"threadId": "not-a-uuid"}, 51008),
        ({"threadId": ZERO}, 51008),
    ],
)
def test_content_read_refusals(
    mcp_deployment: Deployment, arguments: dict[str, Any], expected: int
) -> None:
    assert code(call(mcp_deployment.url, KEYS["full"], "get_email_content", arguments)) == expected


def test_unknown_thread_reads_as_nothing(mcp_deployment: Deployment) -> None:
    result = structured(
        call(
            mcp_deployment.url,
            KEYS["full"],
            "get_email_content",
            {"threadId": "6f1c1d8e-5d55-4a55-9b33-1f1e3a4b5c6d"},
        )
    )
    assert result == {"emails": [], "unreadThreadMessages": [], "savedFile": None}


@pytest.mark.parametrize(
    ("key", "expected"),
    [("full", ALL_TOOLS), ("reader", READ_TOOLS), ("nothing", []), ("sender", SEND_ONLY_TOOLS)],
)
def test_grant_decides_which_tools_are_listed(
    mcp_deployment: Deployment, key: str, expected: list[str]
) -> None:
    assert sorted(tool_names(mcp_deployment.url, KEYS[key])) == expected


def test_omitted_tool_answers_exactly_like_an_unknown_tool(mcp_deployment: Deployment) -> None:
    for mode in ("auto", "legacy"):
        hidden = call(mcp_deployment.url, KEYS["nothing"], "list_accounts", mode=mode)
        unknown = call(mcp_deployment.url, KEYS["nothing"], "list_accountz", mode=mode)
        assert hidden.is_error
        assert unknown.is_error
        hidden_json = hidden.model_dump_json().replace("list_accounts", "NAME")
        unknown_json = unknown.model_dump_json().replace("list_accountz", "NAME")
        assert hidden_json == unknown_json


def test_categories_header_only_narrows(mcp_deployment: Deployment) -> None:
    url = mcp_deployment.url
    contacts = tool_names(url, KEYS["full"], headers={"MailFathom-Tool-Categories": "contacts"})
    assert sorted(contacts) == CONTACT_TOOLS
    assert (
        sorted(
            tool_names(url, KEYS["full"], headers={"MailFathom-Tool-Categories": "Mailbox , bogus"})
        )
        == READ_TOOLS
    )
    # Nothing usable, or too long a header, leaves the deployment's selection in force.
    for value in (",,,", "bogus", "mailbox," * 80):
        names = tool_names(url, KEYS["full"], headers={"MailFathom-Tool-Categories": value})
        assert sorted(names) == ALL_TOOLS
    sending = tool_names(url, KEYS["full"], headers={"MailFathom-Tool-Categories": "sending"})
    assert sorted(sending) == SEND_TOOLS
    narrowed_by_name_limit = "contacts," * 16 + "mailbox"
    assert (
        sorted(
            tool_names(
                url, KEYS["full"], headers={"MailFathom-Tool-Categories": narrowed_by_name_limit}
            )
        )
        == CONTACT_TOOLS
    )


def test_no_credential_is_admitted_on_loopback_by_the_open_entry(
    mcp_deployment: Deployment,
) -> None:
    assert sorted(tool_names(mcp_deployment.url, None)) == ALL_TOOLS


def test_a_wrong_key_is_refused_before_mcp(mcp_deployment: Deployment) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"Accept": "application/json, text/event-stream"}
    for authorization in ("Bearer wrong-key", "Basic abc", "Bearer"):
        response = httpx2.post(
            mcp_deployment.url, json=body, headers={**headers, "Authorization": authorization}
        )
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer")


def test_bodies_are_cut_per_email_and_by_the_shared_budget(mcp_deployment: Deployment) -> None:
    d = mcp_deployment
    bulk = [e["storedEmailId"] for e in _all_emails(d, folders=["Bulk"])]
    assert len(bulk) == BULK_COUNT
    result = structured(call(d.url, KEYS["full"], "get_email_content", {"storedEmailIds": bulk}))
    texts = [e["content"]["body"]["plainText"] for e in result["emails"]]
    assert [t["truncatedBy"] for t in texts] == [
        "bodyCharacterLimit",
        "bodyCharacterLimit",
        "bodyCharacterLimit",
        "readCharacterBudget",
    ]
    assert all(t["originalCharacterCount"] > 60_000 for t in texts)
    assert [len(t["text"]) for t in texts] == [50_000, 50_000, 50_000, 0]
    alone = structured(call(d.url, KEYS["full"], "get_email_content", {"storedEmailIds": bulk[3:]}))
    assert len(alone["emails"][0]["content"]["body"]["plainText"]["text"]) == 50_000


def test_unreadable_content_fails_its_entry_and_requests_repair(mcp_deployment: Deployment) -> None:
    d = mcp_deployment
    victim = _subject_id(d, "Filler note 29")
    neighbour = _subject_id(d, "Filler note 28")
    database = d.data_dir / "mailfathom.sqlite3"
    with sqlite3.connect(database) as db:
        (key, seq) = db.execute(
            "SELECT content_key, seq FROM messages WHERE stored_email_id = ?",
            (uuid.UUID(victim).hex,),
        ).fetchone()
    content = PackContentStore(d.data_dir / "content")
    location = content.locate(key)
    content.close()
    assert location is not None
    with location.path.open("r+b") as pack:  # the copy's octets no longer match its key
        pack.seek(location.offset)
        pack.write(b"\x00")
    result = structured(
        call(d.url, KEYS["full"], "get_email_content", {"storedEmailIds": [neighbour, victim]})
    )
    served, failed = result["emails"]
    assert served["failure"] is None
    assert served["content"]["headers"]["subject"] == "Filler note 28"
    assert failed["content"] is None
    assert failed["failure"]["code"] == 55001
    with sqlite3.connect(database) as db:
        assert (
            db.execute("SELECT count(*) FROM repair_requests WHERE seq = ?", (seq,)).fetchone()[0]
            == 1
        )
