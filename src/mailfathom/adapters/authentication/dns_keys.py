"""Looking up the TXT records DKIM and ARC keys are published in (RFC 6376 section 3.6.2).

Every lookup has its own deadline and runs inside the message's remaining budget, so one
unresponsive name server delays a synchronization pass by at most that budget per message.
Answers are kept in a bounded cache for their TTL, capped by configuration, so the thousands
of messages one sender's selector signed cost one query; an answer that there is no such
record is kept for a short while too (negative caching, RFC 2308), because the same missing
key is typically asked for by every message of one mailing. A lookup that failed (timeout,
SERVFAIL, no server) is not kept: asking again later may succeed.
"""

from __future__ import annotations

import enum
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import dns.exception
import dns.name
import dns.rdatatype
import dns.resolver


class Outcome(enum.Enum):
    FOUND = "found"
    ABSENT = "absent"
    """The name server answered that no such record exists (NXDOMAIN, or no TXT record)."""
    UNAVAILABLE = "unavailable"
    """No answer was had: a timeout, SERVFAIL, no reachable server, or the budget was spent."""


@dataclass(frozen=True, slots=True)
class TxtAnswer:
    outcome: Outcome
    record: bytes | None = None


UNAVAILABLE = TxtAnswer(Outcome.UNAVAILABLE)
ABSENT = TxtAnswer(Outcome.ABSENT)


@dataclass(frozen=True, slots=True)
class ResolverSettings:
    """`nameserver` None uses the system resolver configuration (`/etc/resolv.conf`)."""

    nameserver: tuple[str, int] | None = None
    lookup_timeout_seconds: float = 2.0
    max_cache_entries: int = 10_000
    max_cache_ttl_seconds: float = 3600.0
    negative_cache_seconds: float = 300.0


class _Cache:
    """A bounded, thread-safe map of names to answers that expire; least recently used first
    out when full."""

    def __init__(self, capacity: int, clock: Callable[[], float]) -> None:
        self._capacity = capacity
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, TxtAnswer]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, name: str) -> TxtAnswer | None:
        with self._lock:
            entry = self._entries.get(name)
            if entry is None:
                return None
            expires, answer = entry
            if expires <= self._clock():
                del self._entries[name]
                return None
            self._entries.move_to_end(name)
            return answer

    def put(self, name: str, answer: TxtAnswer, seconds: float) -> None:
        if seconds <= 0 or self._capacity <= 0:
            return
        with self._lock:
            self._entries[name] = (self._clock() + seconds, answer)
            self._entries.move_to_end(name)
            while len(self._entries) > self._capacity:
                self._entries.popitem(last=False)


class TxtLookup:
    """TXT lookups through dnspython with a per-lookup deadline and a shared cache.

    Thread-safe: the resolver is configured once and never changed, and the cache locks.
    """

    def __init__(
        self, settings: ResolverSettings, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._settings = settings
        self._clock = clock
        self._cache = _Cache(settings.max_cache_entries, clock)
        self._resolver = _resolver(settings)

    @property
    def clock(self) -> Callable[[], float]:
        return self._clock

    def lookup(self, name: str, deadline: float) -> TxtAnswer:
        """The first TXT record at `name`, answered before `deadline` (on this lookup's
        clock) or not at all."""
        key = name.rstrip(".").lower()
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        remaining = deadline - self._clock()
        if remaining <= 0 or self._resolver is None:
            return UNAVAILABLE
        lifetime = min(self._settings.lookup_timeout_seconds, remaining)
        answer, ttl = self._query(key, lifetime)
        if answer.outcome is Outcome.FOUND:
            self._cache.put(key, answer, min(ttl, self._settings.max_cache_ttl_seconds))
        elif answer.outcome is Outcome.ABSENT:
            self._cache.put(key, answer, self._settings.negative_cache_seconds)
        return answer

    def _query(self, key: str, lifetime: float) -> tuple[TxtAnswer, float]:
        assert self._resolver is not None
        try:
            qname = dns.name.from_text(key)
            response = self._resolver.resolve(
                qname,
                dns.rdatatype.TXT,
                lifetime=lifetime,
                raise_on_no_answer=False,
                search=False,
            )
        except dns.resolver.NXDOMAIN:
            return ABSENT, 0.0
        except (dns.name.NameTooLong, dns.name.EmptyLabel, dns.name.LabelTooLong):
            return ABSENT, 0.0
        except dns.exception.DNSException:
            return UNAVAILABLE, 0.0
        rrset = response.rrset
        if rrset is None or len(rrset) == 0:
            return ABSENT, 0.0
        first = next(iter(rrset))
        strings: tuple[bytes, ...] = getattr(first, "strings", ())
        return TxtAnswer(Outcome.FOUND, b"".join(strings)), float(rrset.ttl)


def _resolver(settings: ResolverSettings) -> dns.resolver.Resolver | None:
    try:
        resolver = dns.resolver.Resolver(configure=settings.nameserver is None)
    except dns.exception.DNSException:
        return None
    if settings.nameserver is not None:
        host, port = settings.nameserver
        resolver.nameservers = [host]
        resolver.port = port
    resolver.cache = None
    resolver.timeout = settings.lookup_timeout_seconds
    resolver.lifetime = settings.lookup_timeout_seconds
    return resolver
