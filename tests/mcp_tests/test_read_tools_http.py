"""The reading tools over Streamable HTTP with the official client, against a store
synchronized from the test Dovecot: each tool once, and what only HTTP carries (the key that
decides the caller, the categories header, the 401). The tools' logic is tried call by call in
process, in test_read_tools.py and test_grant_matrix.py."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from mcp_tests.client import (
    UNKNOWN_TOOL,
    call,
    every_email,
    refusal,
    structured,
    text,
    tool_names,
)
from mcp_tests.deployment import FILLER_COUNT, KEYS, Deployment

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


def _all_emails(d: Deployment, **filters: Any) -> list[dict[str, Any]]:
    return every_email(
        lambda arguments: call(d.url, KEYS["full"], "list_emails", arguments), **filters
    )


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
        hidden = refusal(mcp_deployment.url, KEYS["nothing"], "list_accounts", mode=mode)
        unknown = refusal(mcp_deployment.url, KEYS["nothing"], "list_accountz", mode=mode)
        assert hidden == unknown == UNKNOWN_TOOL


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
    for authorization, error in [
        ("Bearer wrong-key", 'error="invalid_token", '),
        # No credential this endpoint takes: a challenge without an error (RFC 6750 3.1).
        ("Basic abc", ""),
        ("Bearer", ""),
    ]:
        response = httpx2.post(
            mcp_deployment.url, json=body, headers={**headers, "Authorization": authorization}
        )
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith(f"Bearer {error}resource_metadata=")
