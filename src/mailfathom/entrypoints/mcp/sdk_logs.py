"""What the MCP SDK may write to the log about a refused request.

The SDK's DNS-rebinding check logs the `Host` or `Origin` value it refused, word for word:
whoever sends the request chooses that text, so a caller could write into the server's log.
The warning is kept (an operator wants to know requests are being refused) with the value
replaced by a fixed placeholder.
"""

from __future__ import annotations

import logging

REFUSED_VALUE = "[refused value withheld]"
CHECKED_LOGGERS = ("mcp.server.transport_security",)


class WithholdRefusedValues(logging.Filter):
    """Keeps the part of a message before its first `: ` and replaces the rest."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        head, separator, _value = message.partition(": ")
        if separator:
            record.msg = f"{head}: {REFUSED_VALUE}"
            record.args = None
        return True


def withhold_refused_values() -> None:
    """Install the filter on the SDK loggers that quote request headers (once per logger)."""
    for name in CHECKED_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, WithholdRefusedValues) for f in logger.filters):
            logger.addFilter(WithholdRefusedValues())
