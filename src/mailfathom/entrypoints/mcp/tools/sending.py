"""The five sending tools, registered together.

Each tool's descriptor and the call of its use case live in the module named like the tool;
what they share (annotations, repeated sentences, the published record) is `outgoing`.
"""

from __future__ import annotations

from mailfathom.bootstrap import SendingUseCases
from mailfathom.entrypoints.mcp.confirmation import Questions
from mailfathom.entrypoints.mcp.registry import ToolRegistry
from mailfathom.entrypoints.mcp.tools import (
    cancel_outgoing_email,
    forward_email,
    get_outgoing_email,
    reply_to_email,
    send_email,
)


def register_sending_tools(
    registry: ToolRegistry, services: SendingUseCases, questions: Questions
) -> None:
    """`questions`: what the questions a person is asked before a send are allowed."""
    registry.add(send_email.spec(registry, services.send, questions))
    registry.add(reply_to_email.spec(registry, services.replies, questions))
    registry.add(forward_email.spec(registry, services.forwards, questions))
    registry.add(get_outgoing_email.spec(registry, services.outgoing))
    registry.add(cancel_outgoing_email.spec(registry, services.cancellation))
