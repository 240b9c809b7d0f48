"""The console owner's passkeys and their ceremonies' challenges on SQLite and PostgreSQL.

A challenge is taken by deleting exactly the row that was read: of two takers racing, only
the one whose delete removed it gets the challenge. A signature count moves only from the
value the verification saw, so two sign-ins racing with one passkey cannot both count. The
passkeys held are counted against their bound in the transaction that adds one, writers of
passkeys waiting for each other, so two enrolments at once cannot pass it together."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import (
    console_challenges,
    console_first_passkey,
    console_owner,
    console_passkeys,
    console_sessions,
)
from mailfathom.adapters.sql.store_base import SqlTables, serialize_writers
from mailfathom.app.console.passkey_ports import Ceremony, Passkey, TooManyPasskeys

_P = console_passkeys.c
_C = console_challenges.c
_CODE = console_first_passkey.c


def _passkey(row: sa.Row[Any]) -> Passkey:
    return Passkey(
        credential_id=row.credential_id,
        user_handle=row.user_handle,
        public_key=bytes(row.public_key),
        sign_count=int(row.sign_count),
        label=row.label,
        created_at=row.created_at,
        last_used_at=row.last_used_at,
    )


class SqlPasskeyStore(SqlTables):
    def passkeys(self) -> list[Passkey]:
        with self.engine.connect() as c:
            rows = c.execute(
                sa.select(console_passkeys).order_by(_P.created_at, _P.credential_id)
            ).all()
        return [_passkey(row) for row in rows]

    def passkey(self, credential_id: str) -> Passkey | None:
        with self.engine.connect() as c:
            row = c.execute(
                sa.select(console_passkeys).where(_P.credential_id == credential_id)
            ).first()
        return None if row is None else _passkey(row)

    def add_passkey(
        self, passkey: Passkey, *, only_if_first: bool, most: int, first_code: str | None = None
    ) -> bool:
        with self.engine.begin() as c:
            serialize_writers(c, console_passkeys)
            held = c.execute(sa.select(sa.func.count()).select_from(console_passkeys)).scalar_one()
            if only_if_first:
                owner = c.execute(sa.select(sa.func.count()).select_from(console_owner))
                if held or owner.scalar_one():
                    return False
                code = c.execute(
                    sa.delete(console_first_passkey).where(
                        _CODE.code_sha256 == (first_code or ""),
                        _CODE.expires_at > passkey.created_at,
                    )
                )
                if code.rowcount != 1:
                    return False
                c.execute(sa.delete(console_first_passkey))
            if held >= most:
                raise TooManyPasskeys(most)
            added = c.execute(
                self._insert(console_passkeys)
                .values(
                    credential_id=passkey.credential_id,
                    user_handle=passkey.user_handle,
                    public_key=passkey.public_key,
                    sign_count=passkey.sign_count,
                    label=passkey.label,
                    created_at=passkey.created_at,
                    last_used_at=passkey.last_used_at,
                )
                .on_conflict_do_nothing(index_elements=["credential_id"])
                .returning(_P.credential_id)
            ).first()
        return added is not None

    def open_first_enrolment(self, code_sha256: str, expires_at: datetime) -> None:
        with self.engine.begin() as c:
            c.execute(sa.delete(console_first_passkey))
            c.execute(
                sa.insert(console_first_passkey).values(
                    code_sha256=code_sha256, expires_at=expires_at
                )
            )

    def first_enrolment_waiting(self, now: datetime) -> bool:
        with self.engine.connect() as c:
            found = c.execute(
                sa.select(sa.func.count())
                .select_from(console_first_passkey)
                .where(_CODE.expires_at > now)
            ).scalar_one()
        return bool(found)

    def record_use(self, credential_id: str, was: int, now: int, at: datetime) -> bool:
        with self.engine.begin() as c:
            moved = c.execute(
                sa.update(console_passkeys)
                .where(_P.credential_id == credential_id, _P.sign_count == was)
                .values(sign_count=now, last_used_at=at)
            )
        return moved.rowcount == 1

    def remove_passkey(self, credential_id: str, *, keep: str) -> bool:
        with self.engine.begin() as c:
            removed = c.execute(
                sa.delete(console_passkeys).where(_P.credential_id == credential_id)
            )
            if removed.rowcount != 1:
                return False
            c.execute(sa.delete(console_sessions).where(console_sessions.c.token_hash != keep))
        return True

    def issue_challenge(
        self, token_hash: str, ceremony: Ceremony, challenge: str, now: datetime, lasts: timedelta
    ) -> None:
        expires_at = now + lasts
        with self.engine.begin() as c:
            c.execute(sa.delete(console_challenges).where(_C.expires_at <= now))
            # A session ended or forgotten (see `open_session`'s `forms_kept`) takes its
            # challenges with it: they are as many as the sessions kept, at most.
            c.execute(
                sa.delete(console_challenges).where(
                    _C.token_hash.not_in(sa.select(console_sessions.c.token_hash))
                )
            )
            c.execute(
                sa.delete(console_challenges).where(
                    _C.token_hash == token_hash, _C.ceremony == ceremony.value
                )
            )
            c.execute(
                sa.insert(console_challenges).values(
                    token_hash=token_hash,
                    ceremony=ceremony.value,
                    challenge=challenge,
                    expires_at=expires_at,
                )
            )

    def take_challenge(self, token_hash: str, ceremony: Ceremony, now: datetime) -> str | None:
        mine = sa.and_(_C.token_hash == token_hash, _C.ceremony == ceremony.value)
        with self.engine.begin() as c:
            row = c.execute(sa.select(_C.challenge, _C.expires_at).where(mine)).first()
            if row is None:
                return None
            taken = c.execute(
                sa.delete(console_challenges).where(mine, _C.challenge == row.challenge)
            )
        if taken.rowcount != 1 or row.expires_at <= now:
            return None
        return str(row.challenge)
