"""With `[SensitiveContent]` on, no value a detector finds reaches any tool's answer.

An account holds mail carrying one valid value of every category, in subjects, plain and HTML
bodies, display names (which synchronization also collects into the contact book), and past
the scan ceiling; every reading tool and contact tool is called through the official client
in process, and each whole serialized result (structured and text content) is searched for
every value as written and with its separators dropped."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest
from mcp.types import CallToolResult

from log_audit import register_all
from mailfathom.adapters.sensitive import scanner
from mailfathom.bootstrap import Services
from mailfathom.domain.sensitive_content import SensitiveCategory
from mcp_tests.client import code, structured, text
from mcp_tests.in_process import InProcess, caller_entries, in_process
from sensitive.labelled import VALUES

CEILING = 2000
BASE = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
CARD = VALUES[SensitiveCategory.PAYMENT_CARD]
IBAN = VALUES[SensitiveCategory.IBAN]
NATIONAL = VALUES[SensitiveCategory.NATIONAL_IDENTIFIER]
TOKEN = VALUES[SensitiveCategory.CREDENTIAL]
CODE = VALUES[SensitiveCategory.ONE_TIME_CODE]
PASSWORD = "Jahoda2024!"
SSN = "536-90-4399"
SECRETS = [CARD, IBAN, NATIONAL, TOKEN, CODE, PASSWORD, SSN]
# Past the 40th named participant no display name is published, scanned or not.
CROWD = [f'"Guest {n:02d}" <guest{n}@example.org>' for n in range(1, 41)]
CROWD.append(f'"Late {IBAN}" <late@example.org>')


def _message(
    subject: str,
    sender: str,
    to: str,
    body: str,
    html: str | None = None,
    file_name: str | None = None,
) -> bytes:
    m = EmailMessage()
    m["From"] = sender
    m["To"] = to
    m["Subject"] = subject
    m["Date"] = format_datetime(BASE)
    m["Message-ID"] = f"<{uuid.uuid4().hex}@example.org>"
    m.set_content(body)
    if html is not None:
        m.add_alternative(html, subtype="html")
    if file_name is not None:
        m.add_attachment(b"%PDF-1.4", maintype="application", subtype="pdf", filename=file_name)
    return bytes(m)


def _fill(services: Services) -> None:
    inbox = services.connectors.local.folder("work", "INBOX")
    mail = [
        _message(
            f"Quarterly payment {CARD}",
            f'"Jan {IBAN}" <jan@example.org>',
            f'"Eva {SSN}" <eva@example.org>',
            f"Quarterly note. Rodné číslo: {NATIONAL}, token {TOKEN}.\n"
            f"Your verification code is {CODE}.\nheslo: {PASSWORD}\n",
            f"<p>Quarterly card {CARD} and IBAN {IBAN}</p><p>heslo: {PASSWORD}</p>",
            f"statement {SSN}.pdf",
        ),
        _message(
            "Quarterly archive",
            "Archive Robot <robot@example.org>",
            "owner@example.net",
            "quarterly " * (CEILING // 10 + 5) + f"\nCard {CARD} past the ceiling.\n",
        ),
        _message("Quarterly crowd", "Host <host@example.org>", ", ".join(CROWD), "Hello all.\n"),
    ]
    for n, raw in enumerate(mail):
        inbox.deliver(raw, "", received_at=BASE + timedelta(minutes=n))


def _config(root: Path) -> str:
    return f"""
[Store]
DataDir = "{root / "data"}"

[SensitiveContent]
Enabled = true
ScanCeiling = {CEILING}

[[Accounts]]
Id = "work"
DisplayName = "Work Mail"
Kind = "local"
Addresses = ["owner@example.net"]

[[Accounts.Folders]]
Remote = "INBOX"
Alias = "INBOX"
Role = "Inbox"

[McpEndpoint]
Enabled = true
Listen = "127.0.0.1:8625"

{caller_entries({"full": None})}
"""


@pytest.fixture(scope="module")
def redacting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcess]:
    register_all(SECRETS)
    register_all(s.replace(" ", "") for s in SECRETS)
    root = tmp_path_factory.mktemp("redacting")
    with in_process(root, _config(root), _fill) as deployment:
        yield deployment


def _as_written(secret: str) -> re.Pattern[str]:
    """`secret` as written or with its separators dropped, standing apart from the letters
    and digits around it: an identifier or a timestamp's fraction of a second may hold the
    same digits by chance (a one-time code is six of them)."""
    forms = "|".join(re.escape(f) for f in {secret, secret.replace(" ", "")})
    return re.compile(rf"(?<![0-9A-Za-z])(?:{forms})(?![0-9A-Za-z])")


def _leaked(result: CallToolResult) -> list[str]:
    whole = result.model_dump_json()
    return [s for s in SECRETS if _as_written(s).search(whole)]


def _every_answer(d: InProcess) -> dict[str, CallToolResult]:
    listed = structured(d.call("full", "list_emails", {"pageSize": 100}))
    ids = [e["storedEmailId"] for e in listed["emails"]]
    thread = next(e["threadId"] for e in listed["emails"] if e.get("threadId"))
    calls: dict[str, tuple[str, dict[str, Any]]] = {
        "list_emails": ("list_emails", {"pageSize": 100}),
        "list_emails contains": ("list_emails", {"contains": "verification"}),
        "search_emails words": ("search_emails", {"queryText": "quarterly"}),
        "search_emails a value's words": ("search_emails", {"queryText": "4111 code"}),
        "search_emails pattern": ("search_emails", {"matchPattern": r"\d{4}"}),
        "search_emails both": ("search_emails", {"queryText": "quarterly", "matchPattern": "4"}),
        "get_email_content": (
            "get_email_content",
            {"storedEmailIds": ids, "includeSanitizedHtml": True},
        ),
        "get_email_content thread": ("get_email_content", {"threadId": thread}),
        "list_contacts": ("list_contacts", {"pageSize": 100}),
        "list_contacts search": ("list_contacts", {"search": "jan"}),
        "get_contact": ("get_contact", {"address": "jan@example.org"}),
        "get_contact eva": ("get_contact", {"address": "eva@example.org"}),
        "create_contact": (
            "create_contact",
            {
                "displayName": f"Card {CARD}",
                "addresses": ["card@example.org"],
                "preferredAddress": "card@example.org",
                "note": f"heslo: {PASSWORD}",
            },
        ),
    }
    return {name: d.call("full", tool, arguments) for name, (tool, arguments) in calls.items()}


def test_no_value_a_detector_finds_reaches_any_reading_or_contact_tool(
    redacting: InProcess,
) -> None:
    answers = _every_answer(redacting)
    for name, result in answers.items():
        assert code(result) is None, (name, text(result))
        assert _leaked(result) == [], name
    content = structured(answers["get_email_content"])["emails"]
    first = next(e for e in content if "Quarterly payment" in e["content"]["headers"]["subject"])
    assert first["content"]["headers"]["subject"] == "Quarterly payment [redacted:paymentCard]"
    plain = first["content"]["body"]["plainText"]["text"]
    for marker in ("nationalIdentifier", "credential", "oneTimeCode"):
        assert f"[redacted:{marker}]" in plain
    assert "[redacted:iban]" in first["content"]["body"]["sanitizedHtml"]["text"]
    names = {
        p["address"]: p.get("displayName") for p in first["content"]["headers"]["participants"]
    }
    assert names["jan@example.org"] == "Jan [redacted:iban]"
    (attachment,) = first["content"]["attachments"]
    assert attachment["fileName"] == "statement [redacted:nationalIdentifier].pdf"
    created = structured(answers["create_contact"])["contact"]
    assert created["note"] == "heslo: [redacted:credential]"
    contact = structured(answers["get_contact"])["contact"]
    assert contact["displayName"] == "Jan [redacted:iban]"
    assert contact["addresses"] == ["jan@example.org"]


def test_a_body_past_the_scan_ceiling_is_withheld_and_says_so(redacting: InProcess) -> None:
    found = structured(redacting.call("full", "search_emails", {"queryText": "archive"}))
    (email_id,) = [m["summary"]["storedEmailId"] for m in found["matches"]]
    read = structured(redacting.call("full", "get_email_content", {"storedEmailIds": [email_id]}))
    plain = read["emails"][0]["content"]["body"]["plainText"]
    assert plain["truncatedBy"] == "sensitiveContentScanCeiling"
    assert len(plain["text"]) == CEILING
    assert plain["originalCharacterCount"] > CEILING


def test_display_names_past_the_fortieth_named_participant_are_not_published(
    redacting: InProcess,
) -> None:
    found = structured(redacting.call("full", "search_emails", {"queryText": "crowd"}))
    (email_id,) = [m["summary"]["storedEmailId"] for m in found["matches"]]
    read = structured(redacting.call("full", "get_email_content", {"storedEmailIds": [email_id]}))
    people = read["emails"][0]["content"]["headers"]["participants"]
    named = [p for p in people if p.get("displayName")]
    assert len(named) == 40
    late = next(p for p in people if p["address"] == "late@example.org")
    assert late.get("displayName") is None


def test_a_detector_that_fails_fails_the_call_and_returns_no_mail_text(
    redacting: InProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(_text: str) -> Iterator[Any]:
        raise RuntimeError("detector broke")

    monkeypatch.setitem(scanner.DETECTORS, SensitiveCategory.IBAN, broken)
    fresh = InProcess(redacting.services, redacting.root)
    for tool, arguments in (
        ("list_emails", {"pageSize": 5}),
        ("search_emails", {"queryText": "quarterly"}),
        ("list_contacts", {}),
    ):
        result = fresh.call("full", tool, arguments)
        assert code(result) == 55002, tool
        assert "Quarterly" not in result.model_dump_json()
