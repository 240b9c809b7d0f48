"""Log output for every entrypoint: structured events, where the operator can read them.

Where lines go is settled once per process (`configure`), and documented in
docs/operations.md:

- standard error is not a terminal (systemd, CI, a pipe): JSON lines on standard error;
- standard error is a terminal and `--log-level` or MAILFATHOM_LOG_LEVEL asks for a level:
  readable lines on standard error, at that level;
- standard error is a terminal and no level is asked for: JSON lines appended to
  `mailfathom.log` in the data directory, so nothing is written between the lines of a banner
  or a progress bar. Lines logged before the command knows its data directory are held until
  `use_data_dir` opens the file (or written to standard error when the process ends first).

Events carry counts, account identifiers and folder aliases only; nothing read from mail is
ever passed to a logger, so nothing here needs to filter it out.

`MAILFATHOM_LOG_COPY` names a file every line is also appended to, so an operator (or the
test suite's log audit) can read back everything a process logged.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import structlog
from rich.console import Console

from mailfathom.domain.codes import CommandCode, StoreCode
from mailfathom.domain.errors import ConfigurationError, StoreError

LOG_FILE_NAME = "mailfathom.log"
LEVEL_ENVIRONMENT = "MAILFATHOM_LOG_LEVEL"
LEVEL_NAMES = ("debug", "info", "warning", "error", "critical")


class _Sink:
    """Where every log line is written: a stream, or (until one is chosen) held in memory;
    each line also goes to the copy file when one is configured."""

    _HELD_LIMIT = 10_000

    def __init__(self, target: TextIO | None, copy_path: str | None) -> None:
        self._lock = threading.Lock()
        self._target = target
        self._held: list[str] = []
        self._copy = open(copy_path, "a", encoding="utf-8", buffering=1) if copy_path else None  # noqa: SIM115

    @property
    def holding(self) -> bool:
        return self._target is None

    def write(self, text: str) -> int:
        with self._lock:
            if self._target is not None:
                self._target.write(text)
            elif len(self._held) < self._HELD_LIMIT:
                self._held.append(text)
            if self._copy is not None:
                self._copy.write(text)
        return len(text)

    def flush(self) -> None:
        with self._lock:
            if self._target is not None:
                self._target.flush()
            if self._copy is not None:
                self._copy.flush()

    def direct_to(self, target: TextIO) -> None:
        """Write to `target` from now on, starting with what was held."""
        with self._lock:
            self._target = target
            target.write("".join(self._held))
            target.flush()
            self._held.clear()

    def release(self) -> None:
        """At exit: what is still held goes to standard error rather than nowhere."""
        if self.holding and self._held:
            self.direct_to(sys.stderr)


_sink: _Sink | None = None


def level_asked(option: str | None) -> str | None:
    """The level asked for: the `--log-level` option, else MAILFATHOM_LOG_LEVEL, else None."""
    return option if option is not None else (os.environ.get(LEVEL_ENVIRONMENT) or None)


def parse_level(name: str) -> int:
    wanted = name.strip().lower()
    if wanted not in LEVEL_NAMES:
        raise ConfigurationError(
            f"The log level is not known; accepted: {', '.join(LEVEL_NAMES)} "
            f"(from --log-level or {LEVEL_ENVIRONMENT}).",
            code=int(CommandCode.LOG_LEVEL_NOT_KNOWN),
        )
    return logging.getLevelNamesMapping()[wanted.upper()]


def configure(*, json: bool | None = None, level: str | None = None, quiet: bool = False) -> None:
    """Settle where log lines go and from which level. `level` is the `--log-level` option;
    `json` forces JSON lines on standard error (tests configure the process they run in with
    it); `quiet` makes ERROR the level when none is asked for. Raises `ConfigurationError`
    (11007) for a level name that is not known."""
    global _sink, _settings
    _settings = LogSettings(json, level, quiet)
    asked = level_asked(level)
    threshold = parse_level(asked) if asked else (logging.ERROR if quiet else logging.INFO)
    on_terminal = json is not True and sys.stderr.isatty()
    as_json = json if json is not None else not (on_terminal and asked)
    sink = _Sink(
        None if on_terminal and not asked else sys.stderr, os.environ.get("MAILFATHOM_LOG_COPY")
    )
    if sink.holding:
        atexit.register(sink.release)
    _sink = sink
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
        wrapper_class=structlog.make_filtering_bound_logger(threshold),
        logger_factory=structlog.PrintLoggerFactory(file=sink),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )
    # Libraries log through the standard module (the MCP SDK, uvicorn); their warnings and
    # errors go to the same place, their chatter does not.
    handler = logging.StreamHandler(sink)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(max(logging.WARNING, threshold))


@dataclass(frozen=True, slots=True)
class LogSettings:
    """What `configure` was given, so that a process this one starts (`serve --processes`)
    logs the same way."""

    json: bool | None = None
    level: str | None = None
    quiet: bool = False

    def apply(self) -> None:
        configure(json=self.json, level=self.level, quiet=self.quiet)


_settings = LogSettings()


def settled() -> LogSettings:
    return _settings


def use_data_dir(data_dir: Path, announce: Console) -> None:
    """When log lines are going to a file, open it in `data_dir` and say where it is, once, on
    one line of `announce`. Raises `StoreError` (21002) when the file cannot be written."""
    sink = _sink
    if sink is None or not sink.holding:
        return
    path = data_dir / LOG_FILE_NAME
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        target = path.open("a", encoding="utf-8", buffering=1)
    except OSError:
        raise StoreError(
            "Store.DataDir cannot be created or written (not permitted, or a file is in "
            "the way), so the log file cannot be kept there.",
            code=int(StoreCode.DATA_DIR_NOT_WRITABLE),
        ) from None
    sink.direct_to(target)
    announce.print(f"Logs go to {path}", markup=False, highlight=False, soft_wrap=True)
