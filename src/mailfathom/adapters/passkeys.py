"""The relying party's side of WebAuthn, by py_webauthn: options for the browser, and the
verification of what it answers. The library checks the challenge, the origin, the hash of
the passkey's name, the user's presence, the signature, and that the signature count grew
(a count that did not grow, where an authenticator keeps one, may be a cloned
authenticator's, and is refused). What this adds: user verification is `required`, asked for
in both ceremonies' options and checked in both answers, since the passkey is the only
factor of a sign-in: an authenticator that only saw someone touch it (no PIN, no biometric)
neither enrols nor signs in; a sign-in's user handle, when
the authenticator returns one, must be the one the passkey was made under; passkeys are
discoverable (`residentKey: required`), so a sign-in names no credential before the
authenticator has chosen one. Any refusal is None: why is kept from the visitor."""

from __future__ import annotations

from webauthn import (
    base64url_to_bytes,
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import bytes_to_base64url, parse_authentication_credential_json
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from mailfathom.app.console.passkey_ports import Assertion, NewCredential, Passkey
from mailfathom.domain.passkeys import CEREMONY_TIMEOUT_MILLISECONDS

RP_NAME = "MailFathom console"
OWNER_NAME = "owner"
_REFUSED = (WebAuthnException, ValueError, TypeError, KeyError)


class WebAuthnCeremonies:
    def registration_options(
        self, *, rp_id: str, user_handle: bytes, challenge: bytes, existing: list[str]
    ) -> str:
        options = generate_registration_options(
            rp_id=rp_id,
            rp_name=RP_NAME,
            user_name=OWNER_NAME,
            user_id=user_handle,
            user_display_name=OWNER_NAME,
            challenge=challenge,
            timeout=CEREMONY_TIMEOUT_MILLISECONDS,
            authenticator_selection=AuthenticatorSelectionCriteria(
                resident_key=ResidentKeyRequirement.REQUIRED,
                user_verification=UserVerificationRequirement.REQUIRED,
            ),
            exclude_credentials=[
                PublicKeyCredentialDescriptor(id=base64url_to_bytes(known)) for known in existing
            ],
        )
        return options_to_json(options)

    def registration(
        self, response: str, *, rp_id: str, origin: str, challenge: bytes
    ) -> NewCredential | None:
        try:
            verified = verify_registration_response(
                credential=response,
                expected_challenge=challenge,
                expected_rp_id=rp_id,
                expected_origin=origin,
                require_user_verification=True,
            )
        except _REFUSED:
            return None
        return NewCredential(
            credential_id=bytes_to_base64url(verified.credential_id),
            public_key=verified.credential_public_key,
            sign_count=verified.sign_count,
        )

    def sign_in_options(self, *, rp_id: str, challenge: bytes) -> str:
        options = generate_authentication_options(
            rp_id=rp_id,
            challenge=challenge,
            timeout=CEREMONY_TIMEOUT_MILLISECONDS,
            user_verification=UserVerificationRequirement.REQUIRED,
        )
        return options_to_json(options)

    def presented_id(self, response: str) -> str | None:
        try:
            return parse_authentication_credential_json(response).id
        except _REFUSED:
            return None

    def assertion(
        self, response: str, *, rp_id: str, origin: str, challenge: bytes, passkey: Passkey
    ) -> Assertion | None:
        try:
            credential = parse_authentication_credential_json(response)
            handle = credential.response.user_handle
            if handle is not None and bytes_to_base64url(handle) != passkey.user_handle:
                return None
            verified = verify_authentication_response(
                credential=credential,
                expected_challenge=challenge,
                expected_rp_id=rp_id,
                expected_origin=origin,
                credential_public_key=passkey.public_key,
                credential_current_sign_count=passkey.sign_count,
                require_user_verification=True,
            )
        except _REFUSED:
            return None
        return Assertion(bytes_to_base64url(verified.credential_id), verified.new_sign_count)
