"""One message's key lookups: the budget they share and what each one found.

dkimpy reports a signature whose key could not be had exactly as one that did not verify
(`False`). The contract separates the two (a key that cannot be resolved leaves the author
not established, never failed), so every lookup dkimpy asks for goes through `dnsfunc`,
which records the outcome by name for the caller to consult after dkimpy answered.
"""

from __future__ import annotations

import logging

import structlog

from mailfathom.adapters.authentication.dns_keys import UNAVAILABLE, Outcome, TxtLookup

log = structlog.get_logger("mailfathom.authentication")

QUIET = logging.Logger("mailfathom.authentication.library", level=logging.CRITICAL + 1)
"""The logger dkimpy is handed. It writes domains, selectors and header text into its
messages; none of that may reach a log line, so nothing it says is kept. The logger belongs
to no hierarchy and is above every level."""
QUIET.addHandler(logging.NullHandler())


def key_name(selector: bytes, domain: bytes) -> str | None:
    """The lookup name of a key (RFC 6376 section 3.6.2.1), in the form outcomes are kept."""
    try:
        return f"{selector.decode('ascii')}._domainkey.{domain.decode('ascii')}".lower()
    except UnicodeDecodeError:
        return None


class KeySession:
    """Not shared between threads: one session per message."""

    def __init__(self, lookup: TxtLookup, budget_seconds: float) -> None:
        self._lookup = lookup
        self._deadline = lookup.clock() + budget_seconds
        self.outcomes: dict[str, Outcome] = {}
        self._log: list[Outcome] = []

    def dnsfunc(self, name: bytes, timeout: float = 0.0) -> bytes | None:
        """dkimpy's lookup hook. dkimpy's own timeout is ignored: the deadline is the
        configured one, inside the message's budget. A lookup that raises had no answer, as
        one that timed out: left to dkimpy, the exception would read as a signature that did
        not verify, and the author as failed."""
        del timeout
        try:
            text = name.decode("ascii").rstrip(".").lower()
        except UnicodeDecodeError:
            return None
        try:
            answer = self._lookup.lookup(text, self._deadline)
        except Exception as error:
            log.error("key lookup failed", error=type(error).__name__)
            answer = UNAVAILABLE
        self.outcomes[text] = answer.outcome
        self._log.append(answer.outcome)
        return answer.record

    def outcome(self, name: str | None) -> Outcome | None:
        return None if name is None else self.outcomes.get(name)

    def lookups(self) -> int:
        """How many lookups this session made so far; a mark for `unresolved_since`."""
        return len(self._log)

    def unavailable_since(self, mark: int) -> bool:
        """Whether a lookup made after `mark` had no answer at all (as opposed to an answer
        that no key exists)."""
        return any(outcome is Outcome.UNAVAILABLE for outcome in self._log[mark:])
