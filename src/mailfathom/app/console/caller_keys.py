"""The caller entries of the MCP endpoint as the owner sees them, and the API keys the owner
creates and revokes for them in the console; and the endpoint's admission of such a key.

What an entry grants lives in the configuration file and is only read here. A console key
belongs to an entry by its name: it admits its holder as that entry, with that entry's
permissions and confirmation rule as configured at the time of the request, and admits
nothing once revoked or once no entry of that name is configured. A key configured in the
file (`ApiKeySha256`) is not the console's to revoke: the page says to remove it there.

The key's text is answered once, by `create`, and kept nowhere: the store holds its SHA-256,
and a presented key is compared with that digest in constant time.

An entry holds at most `MOST_KEYS_PER_CALLER` active keys, counted where the key is
written; revoked keys are not listed, and the store keeps the `REVOKED_KEYS_KEPT` revoked
last."""

from __future__ import annotations

import enum
import hmac
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from mailfathom.app.console.access_ports import (
    ApiKeyStore,
    DuplicateForm,
    IssuedKey,
    TooManyKeys,
)
from mailfathom.domain.access import ToolCategory
from mailfathom.domain.api_keys import (
    CONSOLE_KEY_ID_HEX,
    CONSOLE_KEY_SECRET_BYTES,
    MOST_KEYS_PER_CALLER,
    REVOKED_KEYS_KEPT,
    console_key,
    console_key_id,
    key_digest,
)
from mailfathom.domain.config import CallerEntry
from mailfathom.domain.console import signed_in_lately

NONCE_HEX = 32


class Admission(enum.Enum):
    """How an entry admits its callers besides console keys."""

    API_KEY = "apiKey"
    OAUTH = "oauth"
    OPEN = "none"


@dataclass(frozen=True, slots=True)
class CallerView:
    """A configured entry and the console keys that admit as it. `file_key_digest` is the
    configured key's SHA-256 when the entry has one."""

    entry: CallerEntry
    admission: Admission
    keys: tuple[IssuedKey, ...]

    @property
    def file_key_digest(self) -> str | None:
        return self.entry.api_key_sha256

    @property
    def full(self) -> bool:
        """The entry holds as many active keys as it may: one is revoked before another is
        made."""
        return len(self.keys) >= MOST_KEYS_PER_CALLER


@dataclass(frozen=True, slots=True)
class CallerListing:
    callers: tuple[CallerView, ...]
    # Console keys of entries no longer configured: they admit nothing, and may be revoked.
    orphaned: tuple[IssuedKey, ...]
    # The tool categories the endpoint publishes: a caller is offered the tools of these
    # its permissions cover.
    published: frozenset[ToolCategory]


@dataclass(frozen=True, slots=True)
class NewKey:
    """A key just created: `key` is its text, answered this once."""

    issued: IssuedKey
    key: str


class KeyRefused(enum.Enum):
    NO_SUCH_CALLER = "no-such-caller"
    FORM_USED = "form-used"
    # The owner signed in too long ago to create or revoke a key: signing in again comes
    # first.
    SIGN_IN_AGAIN = "sign-in-again"
    # The entry holds `MOST_KEYS_PER_CALLER` active keys already.
    TOO_MANY = "too-many"


class Revoked(enum.Enum):
    NOW = "revoked"
    NOT_ACTIVE = "not-active"


def admission_of(entry: CallerEntry) -> Admission:
    if entry.api_key_sha256 is not None:
        return Admission.API_KEY
    if entry.oauth is not None:
        return Admission.OAUTH
    return Admission.OPEN


class CallerKeys:
    def __init__(
        self,
        store: ApiKeyStore,
        entries: Sequence[CallerEntry],
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        random_text: Callable[[int], str] = secrets.token_urlsafe,
        published: frozenset[ToolCategory] | None = None,
    ) -> None:
        """`published` None: the endpoint publishes every category."""
        self._store = store
        self._entries = {e.name: e for e in entries}
        self._published = frozenset(ToolCategory) if published is None else published
        self._clock = clock
        self._random_text = random_text

    def listing(self) -> CallerListing:
        active = self._store.active()
        callers = tuple(
            CallerView(entry, admission_of(entry), tuple(k for k in active if k.caller == name))
            for name, entry in self._entries.items()
        )
        orphaned = tuple(k for k in active if k.caller not in self._entries)
        return CallerListing(callers, orphaned, self._published)

    def create(self, caller: str, form_nonce: str, signed_in_at: datetime) -> NewKey | KeyRefused:
        """A new key admitting as the entry `caller`, made once per form (`form_nonce`), by
        an owner who signed in at `signed_in_at`: only lately (`signed_in_lately`), since a
        key is a credential and a copied session cookie must not mint one; and only while
        the entry holds fewer than `MOST_KEYS_PER_CALLER` active keys."""
        if not signed_in_lately(signed_in_at, self._clock()):
            return KeyRefused.SIGN_IN_AGAIN
        if caller not in self._entries:
            return KeyRefused.NO_SUCH_CALLER
        if len(form_nonce) != NONCE_HEX or not all(c in "0123456789abcdef" for c in form_nonce):
            return KeyRefused.FORM_USED
        key_id = secrets.token_hex(CONSOLE_KEY_ID_HEX // 2)
        key = console_key(key_id, self._random_text(CONSOLE_KEY_SECRET_BYTES))
        issued = IssuedKey(
            key_id=key_id,
            caller=caller,
            key_sha256=key_digest(key),
            form_nonce=form_nonce,
            created_at=self._clock(),
        )
        try:
            self._store.add(issued, MOST_KEYS_PER_CALLER)
        except DuplicateForm:
            return KeyRefused.FORM_USED
        except TooManyKeys:
            return KeyRefused.TOO_MANY
        return NewKey(issued, key)

    def revoke(self, key_id: str, signed_in_at: datetime) -> Revoked | KeyRefused:
        """Revoke a console key: the endpoint refuses it from its next request on. Only for
        an owner who signed in lately (`signed_in_lately`), as `create`: a copied session
        cookie must not cut every agent off."""
        if not signed_in_lately(signed_in_at, self._clock()):
            return KeyRefused.SIGN_IN_AGAIN
        if not self._store.revoke(key_id, self._clock(), REVOKED_KEYS_KEPT):
            return Revoked.NOT_ACTIVE
        return Revoked.NOW

    def admit(self, presented: str) -> CallerEntry | None:
        """The configured entry a console key admits as, or None: not a console key, no
        such key, revoked, or its entry is no longer configured. Read from the store on
        every call, so a revocation holds from the next request on."""
        key_id = console_key_id(presented)
        if key_id is None:
            return None
        found = self._store.find(key_id)
        if found is None or found.revoked_at is not None:
            return None
        if not hmac.compare_digest(found.key_sha256, key_digest(presented)):
            return None
        return self._entries.get(found.caller)


def new_form_nonce() -> str:
    return secrets.token_hex(NONCE_HEX // 2)
