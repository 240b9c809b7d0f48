"""The flags tool, registered."""

from __future__ import annotations

from mailfathom.app.flags.set_mail_flags import MailFlagChangeRecorder
from mailfathom.entrypoints.mcp.registry import ToolRegistry
from mailfathom.entrypoints.mcp.tools import set_mail_flags


def register_flag_tools(registry: ToolRegistry, recorder: MailFlagChangeRecorder) -> None:
    registry.add(set_mail_flags.spec(registry, recorder))
