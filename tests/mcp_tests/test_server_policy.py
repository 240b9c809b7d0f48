"""Start-up rules of the MCP host and the reading of the categories header."""

from __future__ import annotations

import pytest
from mcp.types import CallToolResult

from mailfathom.domain.access import Permission, ToolCategory
from mailfathom.domain.errors import ConfigurationError
from mailfathom.entrypoints.mcp.registry import READ_ONLY, ToolRegistry, ToolSpec
from mailfathom.entrypoints.mcp.server import EndpointPolicy, MailFathomMcp, requested_categories
from mailfathom.entrypoints.mcp.telemetry import ToolTelemetry


async def _noop() -> CallToolResult:
    return CallToolResult(content=[])


def _registry(category: ToolCategory | None) -> ToolRegistry:
    registry = ToolRegistry()
    registry.add(
        ToolSpec(
            "probe_tool",
            "Probe",
            "A probe.",
            category,
            frozenset({Permission.MAIL_READ}),
            READ_ONLY,
            _noop,
        )
    )
    return registry


def test_a_tool_without_a_category_refuses_to_start_the_host() -> None:
    policy = EndpointPolicy(frozenset(ToolCategory))
    with pytest.raises(ConfigurationError):
        MailFathomMcp(_registry(None), policy, ToolTelemetry(frozenset({"probe_tool"})))


def test_a_category_the_deployment_does_not_publish_is_never_served() -> None:
    from mailfathom.domain.access import ALL_PERMISSIONS, Caller

    policy = EndpointPolicy(frozenset({ToolCategory.CONTACTS}))
    server = MailFathomMcp(
        _registry(ToolCategory.MAILBOX), policy, ToolTelemetry(frozenset({"probe_tool"}))
    )
    caller = Caller(ALL_PERMISSIONS, "t")
    assert server.visible_tools(caller, []) == frozenset()
    assert server.visible_tools(caller, ["mailbox"]) == frozenset()


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([], None),
        (["mailbox"], {ToolCategory.MAILBOX}),
        (["Mailbox , FLAGS", "contacts"], {ToolCategory.MAILBOX, ToolCategory.FLAGS,
                                           ToolCategory.CONTACTS}),
        (["nothing-known, ,"], None),
        (["mailbox," + "x" * 510], None),
        ([",".join(["bogus"] * 16 + ["mailbox"])], None),
        ([",".join(["flags"] * 16 + ["mailbox"])], {ToolCategory.FLAGS}),
    ],
)  # fmt: skip
def test_categories_header_rules(values: list[str], expected: set[ToolCategory] | None) -> None:
    assert requested_categories(values) == (frozenset(expected) if expected else None)
