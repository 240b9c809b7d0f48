"""What keeps the console's open pages current: whether a visit is still signed in, and a
mark of the store that differs whenever what the live pages show may have changed.

A mark rather than the news itself: a page that learns something changed asks for itself
again, so what it shows is always what the page's own use case answers, and the stream
carries no mail, address or count. An alert raised in this process wakes the streams at
once; a change written by another process (a `deliver` or `serve` beside this one, an
operator's `mfctl`) or one no signal tells of (a send that finished, a send coming due) is
found by reading the mark again, which costs a few counting queries."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from datetime import UTC, datetime
from typing import Protocol

from mailfathom.app.console.signing_in import ConsoleAccess


class NewsMarks(Protocol):
    def mark(self, now: datetime) -> Hashable:
        """A value equal to the last one unless an owner alert was raised or dismissed, a
        send changed stage or came due, or a mailbox change changed state; read in one
        transaction."""
        ...


class ConsoleNews:
    def __init__(
        self,
        marks: NewsMarks,
        access: ConsoleAccess,
        listen: Callable[[Callable[[], None]], None],
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._marks = marks
        self._access = access
        self._listen = listen
        self._clock = clock

    def look(self, token: str | None) -> Hashable | None:
        """The store's mark for the visit holding `token`; None once it is no longer
        signed in (signed out, expired, or the password changed)."""
        if self._access.signed_in(token) is None:
            return None
        return self._marks.mark(self._clock())

    def listen(self, wake: Callable[[], None]) -> None:
        """Have `wake` called whenever this process records news (an owner alert); it may
        be called from any thread."""
        self._listen(wake)
