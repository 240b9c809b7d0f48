"""Log output for every entrypoint: structured events on standard error.

Events carry counts, account identifiers and folder aliases only; nothing read from mail is
ever passed to a logger, so nothing here needs to filter it out.

`MAILFATHOM_LOG_COPY` names a file every line is also appended to, so an operator (or the
test suite's log audit) can read back everything a process logged.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TextIO

import structlog


class _Tee:
    """A text stream writing to standard error and, when configured, a copy file."""

    def __init__(self, primary: TextIO, copy_path: str | None) -> None:
        self._primary = primary
        self._copy = open(copy_path, "a", encoding="utf-8", buffering=1) if copy_path else None  # noqa: SIM115

    def write(self, text: str) -> int:
        written = self._primary.write(text)
        if self._copy is not None:
            self._copy.write(text)
        return written

    def flush(self) -> None:
        self._primary.flush()
        if self._copy is not None:
            self._copy.flush()


def configure(*, json: bool | None = None) -> None:
    level_name = os.environ.get("MAILFATHOM_LOG_LEVEL", "INFO").upper()
    level = logging.getLevelNamesMapping().get(level_name, logging.INFO)
    as_json = json if json is not None else not sys.stderr.isatty()
    stream = _Tee(sys.stderr, os.environ.get("MAILFATHOM_LOG_COPY"))
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
        logger_factory=structlog.PrintLoggerFactory(file=stream),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )
    # Libraries log through the standard module (the MCP SDK, uvicorn); their warnings and
    # errors go to the same place, their chatter does not.
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(logging.WARNING)
