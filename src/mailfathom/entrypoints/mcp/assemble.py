"""Putting the MCP server together from a deployment's configuration and services."""

from __future__ import annotations

from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller, ConfirmationMode, ToolCategory
from mailfathom.domain.contacts import ContactWriter
from mailfathom.entrypoints.mcp.http_app import caller_of
from mailfathom.entrypoints.mcp.registry import ToolRegistry
from mailfathom.entrypoints.mcp.server import EndpointPolicy, MailFathomMcp
from mailfathom.entrypoints.mcp.telemetry import ToolTelemetry
from mailfathom.entrypoints.mcp.tools.contact_book import register_contact_tools
from mailfathom.entrypoints.mcp.tools.drafting import register_drafting_tools
from mailfathom.entrypoints.mcp.tools.flags import register_flag_tools
from mailfathom.entrypoints.mcp.tools.organizing import register_organizing_tools
from mailfathom.entrypoints.mcp.tools.reading import register_reading_tools
from mailfathom.entrypoints.mcp.tools.sending import register_sending_tools


def build_server(services: Services) -> MailFathomMcp:
    """The server for this deployment. Over stdio the caller is the operator's open entry
    (`Credential = "none"`) when there is one, and otherwise served every permission: whoever
    can start the process can read the store it opens. That caller is still asked before mail
    leaves: the process is started by an agent's client, and being able to start it is no
    person's yes to a message."""
    config = services.config.mcp
    registry = ToolRegistry()
    register_reading_tools(registry, services.reading())
    register_sending_tools(registry, services.sending(), config.confirmation_timeout_seconds)
    register_drafting_tools(registry, services.drafting(), config.confirmation_timeout_seconds)
    register_flag_tools(registry, services.flags())
    register_organizing_tools(registry, services.organizer())
    register_contact_tools(registry, services.contacts(ContactWriter.CALLER))
    published = config.published_categories
    policy = EndpointPolicy(
        published_categories=published if published is not None else frozenset(ToolCategory),
        stdio_caller=_stdio_caller(services),
    )
    telemetry = ToolTelemetry(frozenset(registry.specs))
    return MailFathomMcp(registry, policy, telemetry, config.confirmation_timeout_seconds)


def _stdio_caller(services: Services) -> Caller:
    entries = [e for e in services.config.mcp.callers if e.api_key_sha256 is None]
    if entries:
        return caller_of(entries[0])
    return Caller(permissions=ALL_PERMISSIONS, label="stdio", confirmation=ConfirmationMode.ASK)
