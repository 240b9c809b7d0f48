"""Putting the MCP server together from the use cases behind its tools.

`build_server_from` needs only the use-case bundles, the endpoint's configuration and the
caller of a session that reaches the server without HTTP; what stands behind the bundles
(the store of a deployment, or anything else honouring the ports) is not its concern.
`build_server` is the deployment's server: its bundles, its configuration, its stdio caller.
"""

from __future__ import annotations

from dataclasses import dataclass

from mailfathom.app.answering.ask_mail import MailboxQuestionReader
from mailfathom.app.confirmation.signal import AlertSignal
from mailfathom.app.console.tool_calls import ToolCalls
from mailfathom.app.flags.set_mail_flags import MailFlagChangeRecorder
from mailfathom.app.organize.organize_email import EmailOrganizer
from mailfathom.bootstrap import (
    ContactUseCases,
    DraftingUseCases,
    ReadingUseCases,
    SendingUseCases,
    Services,
)
from mailfathom.domain.access import ALL_PERMISSIONS, Caller, ConfirmationMode, ToolCategory
from mailfathom.domain.config import McpEndpointConfig
from mailfathom.domain.contacts import ContactWriter
from mailfathom.entrypoints.mcp.call_journal import CallJournal
from mailfathom.entrypoints.mcp.confirmation import Questions
from mailfathom.entrypoints.mcp.http_app import caller_of
from mailfathom.entrypoints.mcp.registry import ToolRegistry
from mailfathom.entrypoints.mcp.replica_state import Replicas
from mailfathom.entrypoints.mcp.server import EndpointPolicy, MailFathomMcp
from mailfathom.entrypoints.mcp.telemetry import ToolTelemetry
from mailfathom.entrypoints.mcp.tools.answering import register_answering_tools
from mailfathom.entrypoints.mcp.tools.contact_book import register_contact_tools
from mailfathom.entrypoints.mcp.tools.drafting import register_drafting_tools
from mailfathom.entrypoints.mcp.tools.flags import register_flag_tools
from mailfathom.entrypoints.mcp.tools.organizing import register_organizing_tools
from mailfathom.entrypoints.mcp.tools.reading import register_reading_tools
from mailfathom.entrypoints.mcp.tools.sending import register_sending_tools


@dataclass(frozen=True, slots=True)
class ToolBundles:
    """The use cases every published tool calls, one bundle per group of tools."""

    reading: ReadingUseCases
    sending: SendingUseCases
    drafting: DraftingUseCases
    flags: MailFlagChangeRecorder
    organizer: EmailOrganizer
    contacts: ContactUseCases
    answering: MailboxQuestionReader
    # Tells of each owner alert the sending bundles record, for the endpoint to count.
    alert_signal: AlertSignal | None = None
    # Where each answered call is kept for the console's recent-calls page (none: nowhere).
    tool_calls: ToolCalls | None = None

    @classmethod
    def of(cls, services: Services) -> ToolBundles:
        reading = services.reading()
        return cls(
            reading=reading,
            sending=services.sending(),
            drafting=services.drafting(),
            flags=services.flags(),
            organizer=services.organizer(),
            contacts=services.contacts(ContactWriter.CALLER),
            answering=services.answering(reading.search),
            alert_signal=services.alert_signal,
            tool_calls=services.caller_access().calls,
        )


def build_server(services: Services, replicas: Replicas | None = None) -> MailFathomMcp:
    """The server for this deployment. Over stdio the caller is the operator's open entry
    (`Credential = "none"`) when there is one, and otherwise served every permission: whoever
    can start the process can read the store it opens. That caller is still asked before mail
    leaves: the process is started by an agent's client, and being able to start it is no
    person's yes to a message."""
    config = services.config.mcp
    return build_server_from(
        ToolBundles.of(services),
        config,
        stdio_caller(config),
        services.request_state_key(),
        replicas,
    )


def build_server_from(
    bundles: ToolBundles,
    config: McpEndpointConfig,
    caller: Caller,
    request_state_key: bytes | None = None,
    replicas: Replicas | None = None,
) -> MailFathomMcp:
    """A server whose tools call `bundles`, published as `config` says. `caller` is whom a
    session without an HTTP request is served as (stdio, or a client in the same process);
    a request over HTTP is always served as the caller its credential admits."""
    timeout = config.confirmation_timeout_seconds
    registry = ToolRegistry(config.tool_threads)
    register_reading_tools(registry, bundles.reading)
    questions = Questions(timeout, config.questions_waiting_per_caller, replicas)
    register_sending_tools(registry, bundles.sending, questions)
    register_drafting_tools(registry, bundles.drafting, questions)
    register_flag_tools(registry, bundles.flags)
    register_organizing_tools(registry, bundles.organizer)
    register_contact_tools(registry, bundles.contacts)
    register_answering_tools(registry, bundles.answering)
    published = config.published_categories
    policy = EndpointPolicy(
        published_categories=published if published is not None else frozenset(ToolCategory),
        stdio_caller=caller,
    )
    journal = CallJournal(bundles.tool_calls) if bundles.tool_calls is not None else None
    telemetry = ToolTelemetry(frozenset(registry.specs), journal)
    if bundles.alert_signal is not None:
        bundles.alert_signal.listen(telemetry.owner_alert_raised)
    return MailFathomMcp(registry, policy, telemetry, timeout, request_state_key)


def stdio_caller(config: McpEndpointConfig) -> Caller:
    """Whom a deployment serves over stdio: its first open entry, else every permission."""
    entries = [e for e in config.callers if e.is_open]
    if entries:
        return caller_of(entries[0])
    return Caller(permissions=ALL_PERMISSIONS, label="stdio", confirmation=ConfirmationMode.ASK)
