"""How large a request body the HTTP listeners of `serve` read at most.

A body is read into memory before it is parsed, so every listener bounds it before reading:
one declared larger is refused unread, and one sent in chunks is cut at the bound. The bound
follows from the largest thing a request may legitimately carry, a message body of
`MailDelivery.MaxBodyCharacters`, encoded the costliest way a client may encode it."""

from __future__ import annotations

OCTETS_PER_CHARACTER = 12
"""The most one character of text takes in a request: four UTF-8 octets, each written `%XX`
in a URL-encoded form, or a surrogate pair of `\\uXXXX` escapes in JSON."""

BESIDE_THE_BODIES = 1024 * 1024
"""What a request carries besides its message bodies: addresses, a subject, a token, the
protocol's own framing."""

FORM_OCTETS = 8192
"""A console form that carries no message: a token, an identifier, a password."""

CEREMONY_OCTETS = 16384
"""A console form carrying a passkey ceremony's answer, an attestation's certificates
included."""


def edit_form_octets(max_body_characters: int) -> int:
    """The console's Edit form: one message body and its fields."""
    return max_body_characters * OCTETS_PER_CHARACTER + BESIDE_THE_BODIES


def tool_request_octets(max_body_characters: int) -> int:
    """An MCP request: a tool call composing a message carries a plain text and an HTML
    body, each of up to `max_body_characters`."""
    return 2 * max_body_characters * OCTETS_PER_CHARACTER + BESIDE_THE_BODIES
