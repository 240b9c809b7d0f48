"""What replicas of the MCP endpoint share through the store: open sessions of the
handshake protocol generation, questions waiting for a person within a call held open, and
answers that reached a replica other than the one waiting for them.

Every bound is decided in the store, in the transaction that takes the place, so two
replicas opening a session (or putting a question) for the same caller at the same moment
cannot both pass a bound that had room for one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


class SharedClock(Protocol):
    """The time every replica reads alike (the store's), answered without a round trip;
    `measure` sets it again against the store (blocking: a worker thread's to run)."""

    def __call__(self) -> datetime: ...

    def measure(self) -> None: ...


@dataclass(frozen=True, slots=True)
class StoredSession:
    """An open session as every replica sees it. `principal` is the token principal the
    session was opened with (None for an API key); `client_params` the client's `initialize`
    parameters as JSON."""

    session_id: str
    caller: str
    principal: str | None
    protocol_version: str
    client_params: str
    last_used: datetime


class SharedSessions(Protocol):
    def reserve(
        self, reservation: str, caller: str, at: datetime, live_since: datetime, most: int
    ) -> bool:
        """Take a place for a session `caller` is opening, unless `caller` already holds
        `most` places used after `live_since`."""

    def describe(
        self,
        reservation: str,
        session_id: str,
        principal: str | None,
        protocol_version: str,
        client_params: str,
        at: datetime,
    ) -> None:
        """The place `reservation` became the open session `session_id`."""

    def release(self, reservation: str) -> None:
        """The session being opened in `reservation` was not opened."""

    def close(self, session_id: str) -> None: ...

    def find(self, session_id: str, live_since: datetime) -> StoredSession | None:
        """The session, when it was used after `live_since`."""

    def touch(self, session_ids: Sequence[str], at: datetime) -> None: ...

    def first_used(self, caller: str, live_since: datetime) -> datetime | None:
        """When the least recently used of `caller`'s places was last used."""


class SharedQuestions(Protocol):
    def hold(
        self,
        question_id: str,
        caller: str,
        session_id: str,
        replica: str,
        at: datetime,
        live_since: datetime,
        most: int,
    ) -> bool:
        """Take a place for a question `replica` waits on, unless `caller` already keeps
        `most` questions waiting that were asked after `live_since`."""

    def release(self, question_id: str) -> None: ...

    def waiting(self, caller: str, live_since: datetime) -> int: ...

    def route(self, session_id: str, body: str, at: datetime, live_since: datetime) -> int:
        """Hand `body` (a client's answer in `session_id`) to every replica waiting on a
        question there; how many replicas it was handed to."""

    def collect(self, replica: str) -> list[tuple[str, str]]:
        """Take the answers handed to `replica`: (session id, body) each, oldest first."""
