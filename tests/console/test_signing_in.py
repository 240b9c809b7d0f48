"""The sign-in use case on a real store: the bound on wrong passwords holds per client and
for all clients together, and a new owner password signs everyone out."""

from __future__ import annotations

import pytest

from mailfathom.app.console.signing_in import ConsoleAccess, Refused, SignInRefused, Visit
from mailfathom.domain.codes import CommandCode
from mailfathom.domain.errors import ConfigurationError

from .conftest import PASSWORD, Console


def _try(access: ConsoleAccess, password: str, client: str) -> Visit | Refused:
    form = access.visit()
    return access.sign_in(form.token, form.session.csrf_secret, password, client)


def test_wrong_passwords_spread_over_many_addresses_hold_every_address(owned: Console) -> None:
    access = owned.services.console_access()
    for n in range(20):
        assert _try(access, "not the owner password", f"192.0.2.{n}") == Refused(
            SignInRefused.MISMATCH
        )
    assert _try(access, PASSWORD, "198.51.100.7") == Refused(SignInRefused.WAIT, 30)
    owned.clock.advance(30)
    assert isinstance(_try(access, PASSWORD, "198.51.100.7"), Visit)
    assert isinstance(_try(access, PASSWORD, "192.0.2.1"), Visit)


def test_one_clients_wrong_passwords_do_not_hold_another(owned: Console) -> None:
    access = owned.services.console_access()
    for _ in range(6):
        _try(access, "not the owner password", "192.0.2.1")
    assert isinstance(_try(access, PASSWORD, "192.0.2.1"), Refused)
    assert isinstance(_try(access, PASSWORD, "192.0.2.2"), Visit)


def test_a_new_owner_password_signs_everyone_out(owned: Console) -> None:
    access = owned.services.console_access()
    signed_in = _try(access, PASSWORD, "192.0.2.1")
    assert isinstance(signed_in, Visit)
    access.set_password("another long owner password")
    assert access.signed_in(signed_in.token) is None
    assert isinstance(_try(access, "another long owner password", "192.0.2.1"), Visit)


@pytest.mark.parametrize("password", ["short", "x" * 1025, "twelve chars\nand more"])
def test_a_password_the_console_cannot_take_is_refused_with_a_code(
    console: Console, password: str
) -> None:
    access = console.services.console_access()
    with pytest.raises(ConfigurationError) as refused:
        access.set_password(password)
    assert refused.value.code == CommandCode.CONSOLE_PASSWORD_NOT_USABLE
    assert access.password_is_set() is False
