"""The [McpEndpoint] section: off by default, and never enabled without saying who may call."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from config.test_config_loading import imap_account, parse, problems_of
from mailfathom.domain.access import Permission, ToolCategory
from mailfathom.domain.config import CallerEntry

DIGEST = hashlib.sha256(b"a-key").hexdigest()


def with_endpoint(**endpoint: Any) -> dict[str, Any]:
    return {"Accounts": [imap_account()], "McpEndpoint": endpoint}


def keyed(name: str = "agent", **overrides: Any) -> dict[str, Any]:
    return {"Name": name, "Credential": "apiKey", "ApiKeySha256": DIGEST, **overrides}


def test_endpoint_is_off_unless_enabled() -> None:
    config = parse({"Accounts": [imap_account()]})
    assert config.mcp.enabled is False
    assert config.mcp.callers == ()


def test_enabled_endpoint_reads_callers_categories_and_address() -> None:
    config = parse(
        with_endpoint(
            Enabled=True,
            Listen="127.0.0.1:9000",
            PublishedToolCategories=["mailbox", "Contacts"],
            Callers=[
                keyed(Permissions=["mailfathom.mail.read"]),
                {"Name": "desk", "Credential": "none"},
            ],
        )
    )
    assert config.mcp.enabled is True
    assert (config.mcp.host, config.mcp.port) == ("127.0.0.1", 9000)
    assert config.mcp.published_categories == frozenset(
        {ToolCategory.MAILBOX, ToolCategory.CONTACTS}
    )
    assert config.mcp.callers == (
        CallerEntry("agent", DIGEST, frozenset({Permission.MAIL_READ})),
        CallerEntry("desk", None, None),
    )


@pytest.mark.parametrize(
    ("endpoint", "expected"),
    [
        ({"Enabled": True}, "McpEndpoint.Callers: an enabled endpoint needs at least one entry"),
        (
            {"PublishedToolCategories": ["mailbox", "calendar"]},
            "McpEndpoint.PublishedToolCategories[1]: names no tool category; accepted: "
            "mailbox, flags, organize, sending, drafts, answering, contacts",
        ),
        (
            {"Listen": "0.0.0.0:8625", "Callers": [{"Name": "x", "Credential": "none"}]},
            'McpEndpoint.Callers[0].Credential: "none" is allowed only when',
        ),
        ({"Callers": [keyed(ApiKeySha256="ABC")]}, "must be 64 lower-case hexadecimal digits"),
        ({"Callers": [keyed(ApiKey="plain")]}, "McpEndpoint.Callers[0].ApiKey: a secret is not"),
        ({"Callers": [keyed(Permissions=["mail.everything"])]}, "names no permission"),
        ({"Callers": [keyed(), keyed()]}, "every entry needs a Name of its own"),
        ({"Listen": "localhost"}, 'must be "host:port"'),
        ({"Callers": [keyed(Credential="token")]}, 'must be "apiKey", "oauth" or "none"'),
    ],
)
def test_endpoint_problems_name_the_key_and_the_rule(
    endpoint: dict[str, Any], expected: str
) -> None:
    problems = problems_of(with_endpoint(**endpoint))
    assert any(expected in p for p in problems), problems
    assert not any("plain" in p for p in problems)
