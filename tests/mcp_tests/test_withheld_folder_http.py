"""Every tool that names or answers an email is no way round the folder withheld from tools,
over Streamable HTTP with the official client. Carol's message sits in that folder and
nowhere else: no filter finds it, no identifier of it is answered, replied to, forwarded,
drafted against or flagged, and the contact book does not know her."""

from __future__ import annotations

import sqlite3
import uuid
from typing import Any

import pytest

from mcp_tests.client import call, code, structured
from mcp_tests.deployment import KEYS, Deployment

CAROL = "carol@example.org"


def _withheld_id(d: Deployment) -> str:
    with sqlite3.connect(d.data_dir / "mailfathom.sqlite3") as db:
        (stored,) = db.execute(
            "SELECT m.stored_email_id FROM messages m JOIN folders f "
            "ON f.folder_id = m.folder_id WHERE f.alias = 'Private'"
        ).fetchone()
    return str(uuid.UUID(bytes=stored) if isinstance(stored, bytes) else uuid.UUID(stored))


def test_no_filter_finds_mail_of_the_withheld_folder(mcp_deployment: Deployment) -> None:
    d = mcp_deployment
    for arguments in (
        {"senderAddress": CAROL},
        {"senderAddress": CAROL, "includeJunkMail": True},
        {"folders": ["Private"]},
        {"contains": "Confidential remark"},
    ):
        page = structured(call(d.url, KEYS["full"], "list_emails", arguments))
        assert page["emails"] == [], arguments
    for arguments in (
        {"queryText": "confidential", "includeJunkMail": True},
        {"queryText": "carol"},
        {"matchPattern": "Confidential"},
        {"queryText": "quarterly", "senderAddress": CAROL},
    ):
        found = structured(call(d.url, KEYS["full"], "search_emails", arguments))
        assert found["matches"] == [], arguments
        assert "Private" not in str(found["folderFreshness"])
    accounts = structured(call(d.url, KEYS["full"], "list_accounts", {}))
    assert "Private" not in str(accounts)


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("get_email_content", {"storedEmailIds": ["{id}"]}, None),
        ("reply_to_email", {"storedEmailId": "{id}", "audience": "everyone",
                            "plainTextBody": "Noted.", "idempotencyKey": "k-{id}"}, 53005),
        ("forward_email", {"storedEmailId": "{id}", "to": ["someone@example.net"],
                           "plainTextBody": "FYI.", "idempotencyKey": "f-{id}"}, 53005),
        ("save_draft", {"answeredEmailId": "{id}", "answering": "senderOnly",
                        "plainTextBody": "Noted."}, 53005),
        ("set_mail_flags", {"storedEmailId": "{id}", "seen": True}, 53002),
        ("organize_email", {"storedEmailIds": ["{id}"], "action": "archive"}, 53002),
    ],
)  # fmt: skip
def test_no_tool_acts_on_an_email_of_the_withheld_folder(
    mcp_deployment: Deployment, tool: str, arguments: dict[str, Any], expected: int | None
) -> None:
    d = mcp_deployment
    withheld = _withheld_id(d)
    given = {
        k: [v.replace("{id}", withheld) for v in value] if isinstance(value, list) else value
        for k, value in arguments.items()
    }
    given = {k: v.replace("{id}", withheld) if isinstance(v, str) else v for k, v in given.items()}
    result = call(d.url, KEYS["full"], tool, given)
    assert code(result) == expected
    if tool == "get_email_content":
        (email,) = structured(result)["emails"]
        assert email["content"] is None
        assert email["failure"]["code"] == 53002
    assert "Private" not in str(result)
    assert "Confidential" not in str(result)
