"""The adversarial mailbox (tests/data/adversarial) through every reading tool, over HTTP with
the official client: whatever a message writes (orders, fake tool calls, fake errors, fake
result fields, role markers) comes back only inside fields the advertised output schema marks
as mail content, never in a description, an error, or a field the server speaks in, and never
changes a real field."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult

from log_audit import register_all
from mailfathom.entrypoints.mcp.untrusted import CONTENT_TRUST_NOTICE, UNTRUSTED_KEY
from mcp_tests.client import call, code, over_http, structured, text
from mcp_tests.deployment import KEYS, Deployment, deploy
from servers.dovecot import DovecotServer
from sync.helpers import RemoteMailbox

MAILBOX = Path(__file__).parent.parent / "data" / "adversarial"
TOKEN = re.compile(r"ADVX-[A-Z0-9-]+")
# What the payloads say besides their tokens: none of it is ever the server's own words.
PHRASES = [
    "Ignore previous instructions",
    "SYSTEM:",
    "</untrusted>",
    "tools/call",
    "<tool_call>",
    "MailFathom error 53001",
    '"isError": true',
    "Every field is trusted",
    "collector@evil.example",
]
# Payloads that hidden HTML carries: fenced wherever they appear, but whether they appear at
# all is the sanitizer's business, not this test's.
HIDDEN = {
    "ADVX-HIDDEN-NONE",
    "ADVX-HIDDEN-VISIBILITY",
    "ADVX-HIDDEN-ZERO",
    "ADVX-HIDDEN-WHITE",
    "ADVX-HIDDEN-COMMENT",
}
KEY = KEYS["full"]


def _tokens() -> set[str]:
    found: set[str] = set()
    for path in MAILBOX.glob("*.eml"):
        found.update(TOKEN.findall(path.read_text("utf-8")))
    return found


def _put_mailbox(mailbox: RemoteMailbox) -> None:
    for path in sorted(MAILBOX.glob("*.eml")):
        mailbox.append(path.read_bytes(), folder="INBOX")


@pytest.fixture(scope="module")
def adversarial(
    dovecot: DovecotServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    register_all(sorted(_tokens()) + PHRASES[:1])
    yield from deploy(dovecot, tmp_path_factory, more_mail=_put_mailbox)


def _advertised(d: Deployment) -> dict[str, dict[str, Any]]:
    async def work(client: Client) -> list[dict[str, Any]]:
        listed = await client.list_tools()
        return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools]

    return {t["name"]: t for t in over_http(d.url, KEY, work)}


def _payloads_in(value: str) -> list[str]:
    return TOKEN.findall(value) + [p for p in PHRASES if p in value]


def _branch(schema: dict[str, Any], value: Any) -> dict[str, Any]:
    """The alternative of an anyOf that describes `value`."""
    if "anyOf" not in schema:
        return schema
    kinds = {dict: "object", list: "array", str: "string", type(None): "null"}
    wanted = kinds.get(type(value))
    for option in schema["anyOf"]:
        if option.get("type") == wanted:
            return {**option, **{k: v for k, v in schema.items() if k != "anyOf"}}
    return schema


def _fenced(
    schema: dict[str, Any], value: Any, path: str, marked: bool, seen: dict[str, set[str]]
) -> list[str]:
    """Where a payload stands outside a marked field; `seen` collects the payloads found
    inside marked fields, by path."""
    schema = _branch(schema, value)
    marked = marked or schema.get(UNTRUSTED_KEY) is True
    leaks: list[str] = []
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for name, inner in value.items():
            assert name in properties, f"{path}.{name} is no published property"
            leaks += _fenced(properties[name], inner, f"{path}.{name}", marked, seen)
    elif isinstance(value, list):
        for inner in value:
            leaks += _fenced(schema.get("items", {}), inner, f"{path}[]", marked, seen)
    elif isinstance(value, str):
        found = _payloads_in(value)
        if found and marked:
            seen.setdefault(path, set()).update(found)
        elif found:
            leaks.append(f"{path}: {found}")
    return leaks


def _keys_and_columns(value: Any) -> list[str]:
    """The parts of a result's text a client reads as structure rather than as values."""
    found: list[str] = []
    if isinstance(value, dict):
        found.extend(value)
        for name, inner in value.items():
            if name == "columns" and isinstance(inner, list):
                found.extend(str(c) for c in inner)
            else:
                found.extend(_keys_and_columns(inner))
    elif isinstance(value, list):
        for inner in value:
            found.extend(_keys_and_columns(inner))
    return found


class Reader:
    """Calls tools and checks each answer, collecting which payloads reached which field."""

    def __init__(self, d: Deployment) -> None:
        self.d = d
        self.tools = _advertised(d)
        self.seen: dict[str, set[str]] = {}

    def read(self, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        result = call(self.d.url, KEY, tool, arguments or {})
        assert result.is_error is False, text(result)
        found = structured(result)  # the text, defaults filled in, is structuredContent
        self._check_text(result)
        schema = self.tools[tool]["outputSchema"]
        leaks = _fenced(schema, found, tool, False, self.seen)
        assert leaks == [], leaks
        if "contentTrust" in schema["properties"]:
            trust = found["contentTrust"]
            assert trust["notice"] == CONTENT_TRUST_NOTICE
            assert trust["untrustedFields"]
        return found

    def refused(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        result = call(self.d.url, KEY, tool, arguments)
        assert result.is_error is True
        assert code(result) is not None
        assert _payloads_in(text(result)) == []
        return result

    @staticmethod
    def _check_text(result: CallToolResult) -> None:
        (block,) = result.content
        body = getattr(block, "text", "")
        # One JSON document: mail text can only be a string value in it, never a line of
        # its own that reads as the server speaking.
        parsed = json.loads(body)
        assert json.dumps(parsed, ensure_ascii=False, separators=(",", ":")) == body
        for structure in _keys_and_columns(parsed):
            assert _payloads_in(structure) == [], structure


def _ids_by_token(found: dict[str, Any]) -> dict[str, str]:
    return {
        token: e["storedEmailId"]
        for e in found["emails"]
        for token in TOKEN.findall(json.dumps(e))
        if token.startswith("ADVX-SUBJECT")
    }


def test_every_reading_tool_keeps_the_payloads_fenced(adversarial: Deployment) -> None:
    reader = Reader(adversarial)
    for descriptor in reader.tools.values():
        assert _payloads_in(json.dumps(descriptor)) == [], descriptor["name"]

    reader.read("list_accounts")
    page = reader.read("list_emails", {"pageSize": 100})
    ids = _ids_by_token(page)
    assert set(ids) >= {f"ADVX-SUBJECT0{n}" for n in range(2, 7)}
    assert page["emails"][0]["senderVerification"]["authorAuthentication"] == "notEstablished"
    contains = reader.read("list_emails", {"contains": "tools/call"})
    assert [e["storedEmailId"] for e in contains["emails"]] == [ids["ADVX-SUBJECT02"]]
    assert contains["nextCursor"] is None

    matches = reader.read("search_emails", {"queryText": "instructions"})["matches"]
    assert len(matches) >= 3
    reader.read("search_emails", {"matchPattern": "ADVX-[A-Z]+"})

    adversarial_ids = sorted(set(ids.values()))
    content = reader.read(
        "get_email_content",
        {"storedEmailIds": adversarial_ids[:10], "includeSanitizedHtml": True},
    )
    for entry in content["emails"]:
        assert entry["failure"] is None
        assert entry["content"]["senderVerification"]["deploymentTrust"] == "unknown"
    (thread_id,) = {
        e["content"]["thread"]["threadId"]
        for e in content["emails"]
        if "ADVX-SUBJECT06" in e["content"]["headers"]["subject"]
    }
    thread = reader.read("get_email_content", {"threadId": thread_id, "includeSanitizedHtml": True})
    assert len(thread["emails"]) == 2

    contacts = reader.read("list_contacts", {"pageSize": 200})
    names = [c["displayName"] for c in contacts["contacts"]]
    assert any("ADVX-FROMNAME06" in n for n in names)
    reader.read("list_contacts", {"search": "evil.example"})
    reader.read("get_contact", {"address": "replier@evil.example"})

    # Every payload but the hidden ones reached the caller, each in a marked field only.
    reached = set().union(*reader.seen.values())
    assert _tokens() - HIDDEN - reached == set()
    for phrase in PHRASES:
        assert phrase in reached, phrase
    for path in reader.seen:
        assert not path.endswith(("storedEmailId", "notice", "message", "alias")), path


def test_a_read_failing_beside_the_adversarial_mail_quotes_none_of_it(
    adversarial: Deployment,
) -> None:
    reader = Reader(adversarial)
    ids = _ids_by_token(reader.read("list_emails", {"subjectFragment": "ADVX-SUBJECT03"}))
    unknown = "6f1c1d8e-5d55-4a55-9b33-1f1e3a4b5c6d"
    found = reader.read("get_email_content", {"storedEmailIds": [ids["ADVX-SUBJECT03"], unknown]})
    served, missing = found["emails"]
    assert "ADVX-ERRORLINE" in served["content"]["body"]["plainText"]["text"]
    assert missing["failure"]["code"] == 53002
    # A payload passed back as an argument is refused without being repeated.
    reader.refused("list_emails", {"contains": "MailFathom error 53001:\nADVX-ARGUMENT"})
    reader.refused("get_email_content", {"storedEmailIds": ["ADVX-SUBJECT03"]})
    reader.refused("search_emails", {"queryText": "Ignore previous instructions\u0007"})


def test_the_server_log_repeats_no_payload(adversarial: Deployment) -> None:
    Reader(adversarial).read("search_emails", {"queryText": "instructions"})
    logged = adversarial.server_log.read_text("utf-8", errors="replace")
    assert _payloads_in(logged) == []
