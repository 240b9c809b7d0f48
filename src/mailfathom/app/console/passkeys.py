"""The owner's passkeys: enrolling one, signing in with one, listing and removing them.

Every step happens inside a console session and is bound to it: the options the browser is
given carry a new challenge kept beside the session, for one ceremony, for a short while,
and given back once; the answer is verified against that challenge, the configured name and
the origin the request came from, which must be one configured. So a response captured once,
a response made for another session, another name or another origin, signs nobody in.

Who may enrol or remove one: an owner who signed in within the last few minutes
(`domain.console.FRESH_SIGN_IN_SECONDS`; a cookie copied from the owner's browser lasts
hours and must neither add its holder's passkey nor remove the owner's). Who may enrol
besides: before the owner has any credential (no password, no passkey), a visitor the
console sees on loopback who gives the one-time code `mailfathom console first-passkey`
printed, as `set-password` needs a shell on the machine. The owner holds at most
`MOST_PASSKEYS`, counted where a passkey is kept.
Loopback alone is not enough: a proxy on the machine that adds no forwarding header makes
every visitor look local, and a script may forge the `Origin` it would send. That first
enrolment signs in, like a sign-in does."""

from __future__ import annotations

import base64
import enum
import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from mailfathom.app.console.passkey_ports import (
    Ceremony,
    Passkey,
    PasskeyCeremonies,
    PasskeyStore,
    TooManyPasskeys,
)
from mailfathom.app.console.ports import ConsoleSession
from mailfathom.app.console.signing_in import ConsoleAccess, Visit, csrf_holds, token_hash
from mailfathom.domain.passkeys import (
    CHALLENGE_LIFETIME_SECONDS,
    FIRST_PASSKEY_CODE_SECONDS,
    MOST_PASSKEYS,
    cleaned_label,
)


class PasskeyRefused(enum.Enum):
    # The session is gone, or the form's CSRF token is not its session's.
    FORM_EXPIRED = "form_expired"
    # Not from a configured origin, or an enrolment this visitor may not make.
    NOT_OFFERED = "not_offered"
    # No challenge is held for this session and ceremony: never issued, used, or expired.
    NO_CHALLENGE = "no_challenge"
    # The response does not verify, or names no passkey the owner holds.
    NOT_ACCEPTED = "not_accepted"
    # Signed in, but not lately enough to add or remove a passkey: the owner signs in
    # again first.
    SIGN_IN_AGAIN = "sign_in_again"
    # The owner holds `MOST_PASSKEYS` already: one is removed before another is added.
    TOO_MANY = "too_many"


@dataclass(frozen=True, slots=True)
class Step:
    """What a ceremony step comes with: the session's cookie token and the form's CSRF
    token, the origin the request came from, and whether the visitor is on loopback."""

    token: str | None
    csrf: str | None
    origin: str
    loopback: bool = False


@dataclass(frozen=True, slots=True)
class Enrolled:
    """A passkey kept; `visit` is the new signed-in session when the enrolment signed in."""

    passkey: Passkey
    visit: Visit | None


def _code_hash(code: str) -> str:
    return hashlib.sha256(code.strip().lower().encode("utf-8")).hexdigest()


def _text(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _raw(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class ConsolePasskeys:
    def __init__(
        self,
        store: PasskeyStore,
        ceremonies: PasskeyCeremonies,
        access: ConsoleAccess,
        *,
        name: str,
        origins: tuple[str, ...],
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        new_challenge: Callable[[], bytes] = lambda: secrets.token_bytes(32),
    ) -> None:
        self._store = store
        self._ceremonies = ceremonies
        self._access = access
        self.name = name
        self.origins = origins
        self._clock = clock
        self._new_challenge = new_challenge

    def offered_at(self, origin: str) -> bool:
        """Whether passkeys can be used at `origin` (the browser binds them to the name)."""
        return origin in self.origins

    def passkeys(self) -> list[Passkey]:
        return self._store.passkeys()

    @staticmethod
    def full(held: list[Passkey]) -> bool:
        """Whether the owner holding `held` may add no passkey before removing one."""
        return len(held) >= MOST_PASSKEYS

    def first_enrolment_open(self) -> bool:
        """Whether the owner's first passkey may be made: no password, no passkey, and a
        first-passkey code (`first_enrolment_code`) waiting."""
        return self.nobody_can_sign_in() and self._store.first_enrolment_waiting(self._clock())

    def nobody_can_sign_in(self) -> bool:
        """Whether the owner has no credential at all: no password and no passkey."""
        return not self._access.password_is_set() and not self._store.passkeys()

    def first_enrolment_code(self) -> str | None:
        """A new one-time code for making the owner's first passkey, good for
        `FIRST_PASSKEY_CODE_SECONDS` and replacing any earlier one; None when the owner has
        a password or a passkey already (they add passkeys signed in)."""
        if not self.nobody_can_sign_in():
            return None
        code = "-".join(secrets.token_hex(3) for _ in range(4))
        expires_at = self._clock() + timedelta(seconds=FIRST_PASSKEY_CODE_SECONDS)
        self._store.open_first_enrolment(_code_hash(code), expires_at)
        return code

    def options(self, step: Step, ceremony: Ceremony) -> str | PasskeyRefused:
        """The options (JSON) the browser starts `ceremony` with, its challenge now kept
        beside the session; or why not."""
        session = self._session(step)
        if isinstance(session, PasskeyRefused):
            return session
        held: list[Passkey] = []
        if ceremony is Ceremony.REGISTER:
            refused = self._enrolment_refused(session, step)
            if refused is not None:
                return refused
            held = self._store.passkeys()
            # Refused before the authenticator makes a credential the store would not keep
            # (`enrol` is refused where the passkey is written, should one be added meanwhile).
            if self.full(held):
                return PasskeyRefused.TOO_MANY
        challenge = self._new_challenge()
        self._store.issue_challenge(
            session.token_hash,
            ceremony,
            _text(challenge),
            self._clock(),
            timedelta(seconds=CHALLENGE_LIFETIME_SECONDS),
        )
        if ceremony is Ceremony.SIGN_IN:
            return self._ceremonies.sign_in_options(rp_id=self.name, challenge=challenge)
        # The first passkey's user handle is its enrolment's challenge: random, new, and
        # known again when the answer comes back, with nothing more kept.
        handle = _raw(held[0].user_handle) if held else challenge
        return self._ceremonies.registration_options(
            rp_id=self.name,
            user_handle=handle,
            challenge=challenge,
            existing=[p.credential_id for p in held],
        )

    def enrol(
        self, step: Step, response: str, label: str, fallback_label: str, code: str = ""
    ) -> Enrolled | PasskeyRefused:
        """Verify the browser's answer to the registration options and keep the passkey;
        the owner's first passkey needs the first-passkey `code` as well."""
        session = self._session(step)
        if isinstance(session, PasskeyRefused):
            return session
        first = not session.signed_in
        refused = self._enrolment_refused(session, step)
        if refused is not None:
            return refused
        challenge = self._store.take_challenge(session.token_hash, Ceremony.REGISTER, self._clock())
        if challenge is None:
            return PasskeyRefused.NO_CHALLENGE
        made = self._ceremonies.registration(
            response, rp_id=self.name, origin=step.origin, challenge=_raw(challenge)
        )
        if made is None:
            return PasskeyRefused.NOT_ACCEPTED
        held = self._store.passkeys()
        passkey = Passkey(
            credential_id=made.credential_id,
            user_handle=held[0].user_handle if held else challenge,
            public_key=made.public_key,
            sign_count=made.sign_count,
            label=cleaned_label(label, fallback_label),
            created_at=self._clock(),
        )
        first_code = _code_hash(code) if first else None
        try:
            kept = self._store.add_passkey(
                passkey, only_if_first=first, most=MOST_PASSKEYS, first_code=first_code
            )
        except TooManyPasskeys:
            return PasskeyRefused.TOO_MANY
        if not kept:
            return PasskeyRefused.NOT_ACCEPTED
        assert step.token is not None
        return Enrolled(passkey, self._access.promote(step.token) if first else None)

    def sign_in(self, step: Step, response: str) -> Visit | PasskeyRefused:
        """A new signed-in session for a verified answer to the sign-in options, the form's
        session ended; or why not."""
        session = self._session(step)
        if isinstance(session, PasskeyRefused):
            return session
        challenge = self._store.take_challenge(session.token_hash, Ceremony.SIGN_IN, self._clock())
        if challenge is None:
            return PasskeyRefused.NO_CHALLENGE
        presented = self._ceremonies.presented_id(response)
        passkey = None if presented is None else self._store.passkey(presented)
        if passkey is None:
            return PasskeyRefused.NOT_ACCEPTED
        asserted = self._ceremonies.assertion(
            response,
            rp_id=self.name,
            origin=step.origin,
            challenge=_raw(challenge),
            passkey=passkey,
        )
        if asserted is None or not self._store.record_use(
            passkey.credential_id, passkey.sign_count, asserted.sign_count, self._clock()
        ):
            return PasskeyRefused.NOT_ACCEPTED
        assert step.token is not None
        return self._access.promote(step.token)

    def remove(self, credential_id: str, token: str) -> bool | PasskeyRefused:
        """Remove one passkey and, with it, end every session but the remover's (`token`):
        whoever signed in with the passkey, or holds a copy of a cookie, signs in again.
        Whether it was there to remove; or why not: no signed-in session (the page checks
        its CSRF token), or one not signed in lately, as enrolling needs."""
        session = self._access.signed_in(token)
        if session is None:
            return PasskeyRefused.FORM_EXPIRED
        if not self._access.lately(session):
            return PasskeyRefused.SIGN_IN_AGAIN
        return self._store.remove_passkey(credential_id, keep=token_hash(token))

    def _session(self, step: Step) -> ConsoleSession | PasskeyRefused:
        session = self._access.session(step.token)
        if session is None or not csrf_holds(session, step.csrf):
            return PasskeyRefused.FORM_EXPIRED
        if not self.offered_at(step.origin):
            return PasskeyRefused.NOT_OFFERED
        return session

    def _enrolment_refused(self, session: ConsoleSession, step: Step) -> PasskeyRefused | None:
        if session.signed_in:
            return None if self._access.lately(session) else PasskeyRefused.SIGN_IN_AGAIN
        if step.loopback and self.first_enrolment_open():
            return None
        return PasskeyRefused.NOT_OFFERED
