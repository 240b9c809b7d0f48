"""The passkey ceremonies in process, on a real store, verified by py_webauthn against a
software authenticator's real signatures: who may enrol, what signs in, and that a
challenge serves one session, one ceremony, once, for a short while, from a configured
origin and for the configured name only."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql.schema import console_challenges
from mailfathom.app.console.passkey_ports import Ceremony
from mailfathom.app.console.passkeys import ConsolePasskeys, Enrolled, PasskeyRefused, Step
from mailfathom.app.console.signing_in import Visit
from mailfathom.domain.console import FRESH_SIGN_IN_SECONDS, SIGN_IN_FORMS_KEPT
from mailfathom.domain.passkeys import CHALLENGE_LIFETIME_SECONDS, FIRST_PASSKEY_CODE_SECONDS

from .conftest import PASSWORD, Console
from .soft_authenticator import SoftAuthenticator

ORIGIN = "http://localhost:8626"


def _form(console: Console, *, origin: str = ORIGIN, loopback: bool = True) -> Step:
    visit = console.services.console_access().visit()
    return Step(visit.token, visit.session.csrf_secret, origin, loopback)


def _options(passkeys: ConsolePasskeys, step: Step, ceremony: Ceremony) -> str:
    options = passkeys.options(step, ceremony)
    assert isinstance(options, str), options
    return options


def _enrol_first(console: Console, key: SoftAuthenticator) -> Visit:
    passkeys = console.services.console_passkeys()
    code = passkeys.first_enrolment_code()
    assert code is not None
    step = _form(console)
    response = key.create(_options(passkeys, step, Ceremony.REGISTER), ORIGIN)
    enrolled = passkeys.enrol(step, response, "Laptop", "Passkey", code)
    assert isinstance(enrolled, Enrolled), enrolled
    assert enrolled.visit is not None
    return enrolled.visit


def test_the_first_passkey_enrolled_from_loopback_signs_in_and_then_signs_in_again(
    console: Console,
) -> None:
    key = SoftAuthenticator()
    visit = _enrol_first(console, key)
    access = console.services.console_access()
    assert access.signed_in(visit.token) is not None
    (kept,) = console.services.console_passkeys().passkeys()
    assert kept.label == "Laptop"
    assert kept.public_key == key.credentials[0].cose()

    access.sign_out(visit.token)
    passkeys = console.services.console_passkeys()
    step = _form(console, loopback=False)
    response = key.get(_options(passkeys, step, Ceremony.SIGN_IN), ORIGIN)
    signed_in = passkeys.sign_in(step, response)
    assert isinstance(signed_in, Visit)
    assert signed_in.token != step.token
    assert access.session(step.token) is None
    (used,) = passkeys.passkeys()
    assert used.sign_count == 1
    assert used.last_used_at == console.clock.now


def test_the_first_enrolment_is_refused_off_loopback_and_once_a_password_is_set(
    console: Console,
) -> None:
    passkeys = console.services.console_passkeys()
    assert passkeys.first_enrolment_code() is not None
    assert passkeys.options(_form(console, loopback=False), Ceremony.REGISTER) is (
        PasskeyRefused.NOT_OFFERED
    )
    step = _form(console)
    options = _options(passkeys, step, Ceremony.REGISTER)
    console.services.console_access().set_password(PASSWORD)
    response = SoftAuthenticator().create(options, ORIGIN)
    assert passkeys.enrol(step, response, "", "Passkey") is PasskeyRefused.FORM_EXPIRED
    step = _form(console)
    assert passkeys.options(step, Ceremony.REGISTER) is PasskeyRefused.NOT_OFFERED
    assert passkeys.passkeys() == []


def test_a_signed_in_owner_adds_a_second_passkey_under_the_same_user_and_removes_one(
    console: Console,
) -> None:
    key, other = SoftAuthenticator(), SoftAuthenticator()
    visit = _enrol_first(console, key)
    passkeys = console.services.console_passkeys()
    step = Step(visit.token, visit.session.csrf_secret, ORIGIN)
    options = _options(passkeys, step, Ceremony.REGISTER)
    assert json.loads(options)["excludeCredentials"][0]["id"] == (
        passkeys.passkeys()[0].credential_id
    )
    console.clock.advance(1)
    added = passkeys.enrol(step, other.create(options, ORIGIN), "\x1b[31mPhone\n", "Passkey")
    assert isinstance(added, Enrolled)
    assert added.visit is None
    first, second = passkeys.passkeys()
    assert second.label == "[31mPhone"
    assert first.user_handle == second.user_handle
    assert passkeys.remove(first.credential_id, visit.token) is True
    assert passkeys.remove(first.credential_id, visit.token) is False
    assert [p.credential_id for p in passkeys.passkeys()] == [second.credential_id]


def test_a_sign_in_answer_is_used_once(console: Console) -> None:
    key = SoftAuthenticator()
    _enrol_first(console, key)
    passkeys = console.services.console_passkeys()
    step = _form(console)
    response = key.get(_options(passkeys, step, Ceremony.SIGN_IN), ORIGIN)
    assert isinstance(passkeys.sign_in(step, response), Visit)
    again = _form(console)
    assert passkeys.sign_in(again, response) is PasskeyRefused.NO_CHALLENGE
    _options(passkeys, again, Ceremony.SIGN_IN)
    assert passkeys.sign_in(again, response) is PasskeyRefused.NOT_ACCEPTED


def test_a_challenge_serves_only_the_session_it_was_issued_to(console: Console) -> None:
    key = SoftAuthenticator()
    _enrol_first(console, key)
    passkeys = console.services.console_passkeys()
    victim, attacker = _form(console), _form(console)
    response = key.get(_options(passkeys, victim, Ceremony.SIGN_IN), ORIGIN)
    assert passkeys.sign_in(attacker, response) is PasskeyRefused.NO_CHALLENGE
    _options(passkeys, attacker, Ceremony.SIGN_IN)
    assert passkeys.sign_in(attacker, response) is PasskeyRefused.NOT_ACCEPTED
    assert isinstance(passkeys.sign_in(victim, response), Visit)


def test_a_challenge_expires(console: Console) -> None:
    key = SoftAuthenticator()
    _enrol_first(console, key)
    passkeys = console.services.console_passkeys()
    step = _form(console)
    response = key.get(_options(passkeys, step, Ceremony.SIGN_IN), ORIGIN)
    console.clock.advance(CHALLENGE_LIFETIME_SECONDS)
    assert passkeys.sign_in(step, response) is PasskeyRefused.NO_CHALLENGE


def test_a_registration_challenge_does_not_serve_a_sign_in(console: Console) -> None:
    key = SoftAuthenticator()
    visit = _enrol_first(console, key)
    passkeys = console.services.console_passkeys()
    step = Step(visit.token, visit.session.csrf_secret, ORIGIN)
    options = json.loads(_options(passkeys, step, Ceremony.REGISTER))
    response = key.get(json.dumps({"challenge": options["challenge"], "rpId": "localhost"}), ORIGIN)
    assert passkeys.sign_in(step, response) is PasskeyRefused.NO_CHALLENGE


@pytest.mark.parametrize(
    ("written", "rp_id"),
    [("http://localhost:9999", None), ("http://127.0.0.1:8626", None), (ORIGIN, "example.org")],
)
def test_an_answer_made_for_another_origin_or_name_is_refused(
    console: Console, written: str, rp_id: str | None
) -> None:
    key = SoftAuthenticator()
    _enrol_first(console, key)
    passkeys = console.services.console_passkeys()
    step = _form(console)
    response = key.get(_options(passkeys, step, Ceremony.SIGN_IN), written, rp_id=rp_id)
    assert passkeys.sign_in(step, response) is PasskeyRefused.NOT_ACCEPTED
    (kept,) = passkeys.passkeys()
    assert kept.sign_count == 0


def test_an_enrolment_made_for_another_origin_is_refused(console: Console) -> None:
    passkeys = console.services.console_passkeys()
    code = passkeys.first_enrolment_code()
    assert code is not None
    step = _form(console)
    options = _options(passkeys, step, Ceremony.REGISTER)
    response = SoftAuthenticator().create(options, "http://localhost:9999")
    assert passkeys.enrol(step, response, "", "Passkey", code) is PasskeyRefused.NOT_ACCEPTED
    assert passkeys.passkeys() == []


def test_a_request_from_an_origin_not_configured_gets_no_options(console: Console) -> None:
    passkeys = console.services.console_passkeys()
    for ceremony in Ceremony:
        step = _form(console, origin="http://127.0.0.1:8626")
        assert passkeys.options(step, ceremony) is PasskeyRefused.NOT_OFFERED


def test_a_wrong_csrf_token_gets_nothing(console: Console) -> None:
    passkeys = console.services.console_passkeys()
    step = _form(console)
    forged = Step(step.token, "forged", ORIGIN, True)
    assert passkeys.options(forged, Ceremony.REGISTER) is PasskeyRefused.FORM_EXPIRED
    assert passkeys.options(Step(None, None, ORIGIN, True), Ceremony.SIGN_IN) is (
        PasskeyRefused.FORM_EXPIRED
    )


def test_a_cloned_authenticator_whose_count_did_not_grow_is_refused(console: Console) -> None:
    key = SoftAuthenticator()
    _enrol_first(console, key)
    passkeys = console.services.console_passkeys()
    step = _form(console)
    assert isinstance(
        passkeys.sign_in(step, key.get(_options(passkeys, step, Ceremony.SIGN_IN), ORIGIN)), Visit
    )
    key.credentials[0].sign_count -= 1
    step = _form(console)
    response = key.get(_options(passkeys, step, Ceremony.SIGN_IN), ORIGIN)
    assert passkeys.sign_in(step, response) is PasskeyRefused.NOT_ACCEPTED
    (kept,) = passkeys.passkeys()
    assert kept.sign_count == 1


def test_an_authenticator_keeping_no_count_signs_in_each_time(console: Console) -> None:
    key = SoftAuthenticator(counting=False)
    _enrol_first(console, key)
    passkeys = console.services.console_passkeys()
    for _ in range(2):
        step = _form(console)
        response = key.get(_options(passkeys, step, Ceremony.SIGN_IN), ORIGIN)
        assert isinstance(passkeys.sign_in(step, response), Visit)


def test_both_ceremonies_ask_the_authenticator_to_verify_its_user(console: Console) -> None:
    passkeys = console.services.console_passkeys()
    passkeys.first_enrolment_code()
    for ceremony, where in (
        (Ceremony.REGISTER, ("authenticatorSelection",)),
        (Ceremony.SIGN_IN, ()),
    ):
        options = json.loads(_options(passkeys, _form(console), ceremony))
        for key in where:
            options = options[key]
        assert options["userVerification"] == "required"


def test_an_enrolment_without_user_verification_is_refused(console: Console) -> None:
    passkeys = console.services.console_passkeys()
    code = passkeys.first_enrolment_code()
    assert code is not None
    step = _form(console)
    response = SoftAuthenticator(verifying=False).create(
        _options(passkeys, step, Ceremony.REGISTER), ORIGIN
    )
    assert passkeys.enrol(step, response, "", "Passkey", code) is PasskeyRefused.NOT_ACCEPTED
    assert passkeys.passkeys() == []
    step = _form(console)
    response = SoftAuthenticator().create(_options(passkeys, step, Ceremony.REGISTER), ORIGIN)
    assert isinstance(passkeys.enrol(step, response, "", "Passkey", code), Enrolled)


def test_a_sign_in_without_user_verification_is_refused(console: Console) -> None:
    key = SoftAuthenticator()
    _enrol_first(console, key)
    key.verifying = False
    passkeys = console.services.console_passkeys()
    step = _form(console)
    response = key.get(_options(passkeys, step, Ceremony.SIGN_IN), ORIGIN)
    assert passkeys.sign_in(step, response) is PasskeyRefused.NOT_ACCEPTED
    (kept,) = passkeys.passkeys()
    assert kept.sign_count == 0


def test_adding_a_passkey_needs_a_sign_in_made_lately(console: Console) -> None:
    key, other = SoftAuthenticator(), SoftAuthenticator()
    visit = _enrol_first(console, key)
    passkeys = console.services.console_passkeys()
    step = Step(visit.token, visit.session.csrf_secret, ORIGIN)
    options = _options(passkeys, step, Ceremony.REGISTER)
    console.clock.advance(FRESH_SIGN_IN_SECONDS + 1)
    assert passkeys.options(step, Ceremony.REGISTER) is PasskeyRefused.SIGN_IN_AGAIN
    answer = other.create(options, ORIGIN)
    assert passkeys.enrol(step, answer, "Phone", "Passkey") is PasskeyRefused.SIGN_IN_AGAIN
    assert len(passkeys.passkeys()) == 1

    again = passkeys.sign_in(step, key.get(_options(passkeys, step, Ceremony.SIGN_IN), ORIGIN))
    assert isinstance(again, Visit)
    fresh = Step(again.token, again.session.csrf_secret, ORIGIN)
    added = passkeys.enrol(
        fresh,
        other.create(_options(passkeys, fresh, Ceremony.REGISTER), ORIGIN),
        "Phone",
        "Passkey",
    )
    assert isinstance(added, Enrolled)


def test_removing_a_passkey_ends_every_other_session(console: Console) -> None:
    key, other = SoftAuthenticator(), SoftAuthenticator()
    owner = _enrol_first(console, key)
    passkeys = console.services.console_passkeys()
    step = Step(owner.token, owner.session.csrf_secret, ORIGIN)
    options = _options(passkeys, step, Ceremony.REGISTER)
    assert isinstance(passkeys.enrol(step, other.create(options, ORIGIN), "", "Passkey"), Enrolled)
    copied = _form(console)
    signed = passkeys.sign_in(
        copied, other.get(_options(passkeys, copied, Ceremony.SIGN_IN), ORIGIN)
    )
    assert isinstance(signed, Visit)
    access = console.services.console_access()
    lingering = access.visit()

    _, second = passkeys.passkeys()
    assert passkeys.remove(second.credential_id, owner.token) is True
    assert access.signed_in(signed.token) is None
    assert access.session(lingering.token) is None
    assert access.signed_in(owner.token) is not None
    assert passkeys.remove(second.credential_id, owner.token) is False


def test_removing_a_passkey_needs_a_sign_in_made_lately(console: Console) -> None:
    key, other = SoftAuthenticator(), SoftAuthenticator()
    owner = _enrol_first(console, key)
    passkeys = console.services.console_passkeys()
    step = Step(owner.token, owner.session.csrf_secret, ORIGIN)
    options = _options(passkeys, step, Ceremony.REGISTER)
    assert isinstance(passkeys.enrol(step, other.create(options, ORIGIN), "", "Passkey"), Enrolled)
    console.clock.advance(FRESH_SIGN_IN_SECONDS + 1)
    _, second = passkeys.passkeys()
    assert passkeys.remove(second.credential_id, owner.token) is PasskeyRefused.SIGN_IN_AGAIN
    assert len(passkeys.passkeys()) == 2
    assert passkeys.remove(second.credential_id, "no such session") is (PasskeyRefused.FORM_EXPIRED)

    again = passkeys.sign_in(step, key.get(_options(passkeys, step, Ceremony.SIGN_IN), ORIGIN))
    assert isinstance(again, Visit)
    assert passkeys.remove(second.credential_id, again.token) is True
    assert len(passkeys.passkeys()) == 1


def test_the_first_enrolment_needs_a_code_given_on_the_machine(console: Console) -> None:
    passkeys = console.services.console_passkeys()
    assert passkeys.first_enrolment_open() is False
    assert passkeys.options(_form(console), Ceremony.REGISTER) is PasskeyRefused.NOT_OFFERED
    code = passkeys.first_enrolment_code()
    assert code is not None
    assert passkeys.first_enrolment_open() is True
    step = _form(console)
    options = _options(passkeys, step, Ceremony.REGISTER)
    response = SoftAuthenticator().create(options, ORIGIN)
    assert passkeys.enrol(step, response, "", "Passkey", "0" * len(code)) is (
        PasskeyRefused.NOT_ACCEPTED
    )
    assert passkeys.passkeys() == []
    step = _form(console)
    response = SoftAuthenticator().create(_options(passkeys, step, Ceremony.REGISTER), ORIGIN)
    assert isinstance(passkeys.enrol(step, response, "", "Passkey", code), Enrolled)
    assert passkeys.first_enrolment_code() is None


def test_a_first_enrolment_code_lasts_a_quarter_of_an_hour_and_the_newest_counts(
    console: Console,
) -> None:
    passkeys = console.services.console_passkeys()
    older = passkeys.first_enrolment_code()
    code = passkeys.first_enrolment_code()
    assert older is not None
    assert code is not None
    assert older != code
    step = _form(console)
    response = SoftAuthenticator().create(_options(passkeys, step, Ceremony.REGISTER), ORIGIN)
    assert passkeys.enrol(step, response, "", "Passkey", older) is PasskeyRefused.NOT_ACCEPTED
    console.clock.advance(FIRST_PASSKEY_CODE_SECONDS + 1)
    assert passkeys.first_enrolment_open() is False
    step = _form(console)
    assert passkeys.options(step, Ceremony.REGISTER) is PasskeyRefused.NOT_OFFERED
    assert passkeys.passkeys() == []


def test_challenges_are_kept_only_for_sessions_still_kept(console: Console) -> None:
    passkeys = console.services.console_passkeys()
    for _ in range(SIGN_IN_FORMS_KEPT + 25):
        _options(passkeys, _form(console), Ceremony.SIGN_IN)
    with console.services.engine.connect() as c:
        held = c.execute(sa.select(sa.func.count()).select_from(console_challenges)).scalar_one()
    assert held <= SIGN_IN_FORMS_KEPT
