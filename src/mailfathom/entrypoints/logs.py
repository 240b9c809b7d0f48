"""Log output for every entrypoint: structured events on standard error.

Events carry counts, account identifiers and folder aliases only; nothing read from mail is
ever passed to a logger, so nothing here needs to filter it out.
"""

from __future__ import annotations

import logging
import os
import sys

import structlog


def configure(*, json: bool | None = None) -> None:
    level_name = os.environ.get("MAILFATHOM_LOG_LEVEL", "INFO").upper()
    level = logging.getLevelNamesMapping().get(level_name, logging.INFO)
    as_json = json if json is not None else not sys.stderr.isatty()
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if as_json
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
