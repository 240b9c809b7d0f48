"""An authenticator in software, for the ceremony's tests in process: it makes a P-256 key
pair per credential and answers registration and sign-in options as a browser would hand
them back (`PublicKeyCredential.toJSON()`), signing with the key, so the console's
verification (py_webauthn's) runs on real signatures. `origin` is what the browser would
write into the client data; `rp_id` overrides the name the options carry (as a page of
another name would use)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import struct
from dataclasses import dataclass, field

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

AAGUID = bytes(16)
UP, UV, AT = 0x01, 0x04, 0x40


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Credential:
    credential_id: bytes
    key: ec.EllipticCurvePrivateKey
    rp_id: str
    user_handle: bytes
    sign_count: int = 0

    def cose(self) -> bytes:
        numbers = self.key.public_key().public_numbers()
        return cbor2.dumps(
            {
                1: 2,
                3: -7,
                -1: 1,
                -2: numbers.x.to_bytes(32, "big"),
                -3: numbers.y.to_bytes(32, "big"),
            }
        )


@dataclass
class SoftAuthenticator:
    counting: bool = True
    # Whether it verifies its user (a PIN, a fingerprint) and says so in the UV flag.
    verifying: bool = True
    credentials: list[Credential] = field(default_factory=list)

    def create(self, options_json: str, origin: str, rp_id: str | None = None) -> str:
        options = json.loads(options_json)
        rp = rp_id or options["rp"]["id"]
        credential = Credential(
            os.urandom(32),
            ec.generate_private_key(ec.SECP256R1()),
            rp,
            unb64(options["user"]["id"]),
        )
        self.credentials.append(credential)
        client_data = _client_data("webauthn.create", options["challenge"], origin)
        attested = (
            AAGUID
            + struct.pack(">H", len(credential.credential_id))
            + credential.credential_id
            + credential.cose()
        )
        auth_data = _auth_data(rp, self._flags() | AT, 0) + attested
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        return json.dumps(
            {
                "id": b64(credential.credential_id),
                "rawId": b64(credential.credential_id),
                "type": "public-key",
                "response": {
                    "clientDataJSON": b64(client_data),
                    "attestationObject": b64(attestation),
                    "transports": ["internal"],
                },
                "clientExtensionResults": {},
                "authenticatorAttachment": "platform",
            }
        )

    def _flags(self) -> int:
        return UP | UV if self.verifying else UP

    def get(
        self,
        options_json: str,
        origin: str,
        rp_id: str | None = None,
        credential: Credential | None = None,
    ) -> str:
        options = json.loads(options_json)
        chosen = credential or self.credentials[-1]
        if self.counting:
            chosen.sign_count += 1
        client_data = _client_data("webauthn.get", options["challenge"], origin)
        auth_data = _auth_data(rp_id or options["rpId"], self._flags(), chosen.sign_count)
        signature = chosen.key.sign(
            auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256())
        )
        return json.dumps(
            {
                "id": b64(chosen.credential_id),
                "rawId": b64(chosen.credential_id),
                "type": "public-key",
                "response": {
                    "clientDataJSON": b64(client_data),
                    "authenticatorData": b64(auth_data),
                    "signature": b64(signature),
                    "userHandle": b64(chosen.user_handle),
                },
                "clientExtensionResults": {},
                "authenticatorAttachment": "platform",
            }
        )


def _client_data(kind: str, challenge: str, origin: str) -> bytes:
    return json.dumps(
        {"type": kind, "challenge": challenge, "origin": origin, "crossOrigin": False}
    ).encode()


def _auth_data(rp_id: str, flags: int, sign_count: int) -> bytes:
    return hashlib.sha256(rp_id.encode()).digest() + bytes([flags]) + struct.pack(">I", sign_count)
