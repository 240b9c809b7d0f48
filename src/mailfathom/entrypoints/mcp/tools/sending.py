"""The five sending tools, registered together.

Each tool's descriptor and the call of its use case live in the module named like the tool;
what they share (annotations, repeated sentences, the published record) is `outgoing`.
"""

from __future__ import annotations

from mailfathom.bootstrap import SendingUseCases
from mailfathom.entrypoints.mcp.registry import ToolRegistry
from mailfathom.entrypoints.mcp.tools import (
    cancel_outgoing_email,
    forward_email,
    get_outgoing_email,
    reply_to_email,
    send_email,
)


def register_sending_tools(
    registry: ToolRegistry, services: SendingUseCases, confirmation_timeout: float
) -> None:
    """`confirmation_timeout`: how long a person asked to confirm a send has to answer."""
    registry.add(send_email.spec(registry, services.send, confirmation_timeout))
    registry.add(reply_to_email.spec(registry, services.replies, confirmation_timeout))
    registry.add(forward_email.spec(registry, services.forwards, confirmation_timeout))
    registry.add(get_outgoing_email.spec(registry, services.outgoing))
    registry.add(cancel_outgoing_email.spec(registry, services.cancellation))
