"""What the configuration says about sending mail, as values.

Sending is off unless an operator turns it on twice: the account declares a `Delivery` block
with `Enabled = true`, and the deployment is not read-only. Everything else here bounds what
one message, one account, one caller and the whole installation may send.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from mailfathom.domain.connections import SecretRef, TlsMode
from mailfathom.domain.oauth import ConnectionAuth


@dataclass(frozen=True, slots=True)
class SmtpConnection:
    """The submission server an account's mail is handed to (RFC 6409). With `auth` `OAUTH2`
    `username` is required, `secret` is None, and the account's `OAuthCredential` supplies the
    access token."""

    host: str
    port: int
    username: str | None
    secret: SecretRef | None
    tls: TlsMode = TlsMode.IMPLICIT
    timeout_seconds: float = 60.0
    auth: ConnectionAuth = ConnectionAuth.PASSWORD


@dataclass(frozen=True, slots=True)
class AccountDelivery:
    """An account's `Delivery` block.

    `address` is the only address mail from this account is ever sent as; no caller can
    change it. Without `smtp`, the account reaches only the mailboxes of this deployment
    (peer delivery); mail for anybody else ends as not deliverable."""

    enabled: bool = False
    address: str | None = None
    display_name: str | None = None
    smtp: SmtpConnection | None = None


class UnvouchedRecipients(enum.Enum):
    """What to do with an address a caller wrote out that nothing here holds a record of."""

    ALLOW = "Allow"
    REFUSE = "Refuse"


class VouchingContacts(enum.Enum):
    """Which records of the contact book vouch for an address under `Refuse`: any record,
    only asserted ones (somebody wrote the person down), or none (only the deployment's own
    addresses vouch)."""

    ANY = "Any"
    ASSERTED = "Asserted"
    NONE = "None"


@dataclass(frozen=True, slots=True)
class RecipientPolicy:
    """Allowed and denied recipients, each entry a whole address or a domain.

    A denied entry always wins. Where any allowed entry is written, only the recipients it
    covers are admitted; without one, everybody not denied is."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Ceiling:
    """How many messages may be queued per hour and per day; None is no ceiling."""

    per_hour: int | None = None
    per_day: int | None = None


@dataclass(frozen=True, slots=True)
class SendCeilings:
    account: Ceiling = field(default_factory=Ceiling)
    installation: Ceiling = field(default_factory=Ceiling)
    client: Ceiling = field(default_factory=Ceiling)


@dataclass(frozen=True, slots=True)
class MailDeliveryConfig:
    """The deployment's `[MailDelivery]` section."""

    max_recipient_count: int = 25
    max_body_characters: int = 100_000
    hold_seconds: float = 0.0
    max_attempts: int = 5
    retry_base_seconds: float = 60.0
    lease_seconds: float = 300.0
    unvouched_recipients: UnvouchedRecipients = UnvouchedRecipients.ALLOW
    vouching_contacts: VouchingContacts = VouchingContacts.ANY
    # Whether what MCP callers wrote into the contact book vouches as the operator's records
    # do; off, a caller cannot vouch for the addresses it then writes to.
    caller_written_contacts_vouch: bool = False
    recipient_policy: RecipientPolicy = field(default_factory=RecipientPolicy)
    ceilings: SendCeilings = field(default_factory=SendCeilings)
    # The files one message carries: how many, how large each, how large together. They
    # bound a forward's files and files attached by reference alike.
    max_attachment_count: int = 20
    max_attachment_octets: int = 20 * 1024 * 1024
    max_total_attachment_octets: int = 25 * 1024 * 1024
    # A composed message as written into the outbox, files included (base64 makes a file
    # about a third larger than its octets).
    max_message_octets: int = 40 * 1024 * 1024
    # Absolute directories whose files may be attached to a message and into which a file
    # from mail may be saved; none means no file on this machine is read or written.
    attachment_roots: tuple[str, ...] = ()
