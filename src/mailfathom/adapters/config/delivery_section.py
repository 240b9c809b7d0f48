"""Sending: an account's `[Accounts.Delivery]` block, `[MailDelivery]` and `[Deployment]`.

Every number here bounds what can leave the deployment, so each is checked for a sensible
range rather than merely for its type: a ceiling of zero or a negative hold is a mistake an
operator should hear about at start-up, not discover when mail does or does not go out.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from mailfathom.adapters.config.sender_verification_section import (
    AUTHSERV_ID_RULE,
    is_authserv_id,
)
from mailfathom.adapters.config.toml_tables import Table, is_loopback
from mailfathom.adapters.config.values import HOST_LIMIT, expand_home, is_host
from mailfathom.domain import text_rules
from mailfathom.domain.config import DEFAULT_AUTHSERV_ID, SecretRef, TlsMode
from mailfathom.domain.delivery_config import (
    AccountDelivery,
    Ceiling,
    MailDeliveryConfig,
    RecipientPolicy,
    SendCeilings,
    SmtpConnection,
    UnvouchedRecipients,
    VouchingContacts,
)
from mailfathom.domain.oauth import ConnectionAuth

SecretParser = Callable[[Table, str], SecretRef | None]

_DELIVERY_KEYS = frozenset({"Enabled", "Address", "DisplayName", "Smtp"})
_SMTP_KEYS = frozenset({"Host", "Port", "Tls", "Auth", "Username", "Secret", "TimeoutSeconds"})
_MAIL_DELIVERY_KEYS = frozenset(
    {
        "MaxRecipientCount",
        "MaxBodyCharacters",
        "HoldSeconds",
        "MaxAttempts",
        "RetryBaseSeconds",
        "LeaseSeconds",
        "UnvouchedRecipients",
        "VouchingContacts",
        "CallerWrittenContactsVouch",
        "RecipientPolicy",
        "SendCeilings",
        "MaxAttachmentCount",
        "MaxAttachmentSize",
        "MaxTotalAttachmentSize",
        "MaxMessageSize",
        "AttachmentRoots",
    }
)
_POLICY_KEYS = frozenset({"Allow", "Deny"})
_CEILING_SCOPES = {"Account": "account", "Installation": "installation", "Client": "client"}
_CEILING_KEYS = frozenset({"PerHour", "PerDay"})
_DEPLOYMENT_KEYS = frozenset({"ReadOnly", "AuthservId"})
_SMTP_PORTS = {TlsMode.IMPLICIT: 465, TlsMode.STARTTLS: 587, TlsMode.NONE: 25}
# An address as a sending account or a policy entry writes it: ASCII, no spaces, one "@".
_ADDRESS = re.compile(r"[!-?A-~]{1,64}@[A-Za-z0-9.-]{1,253}")
_DOMAIN = re.compile(r"@?[A-Za-z0-9]([A-Za-z0-9-]{0,62}\.)*[A-Za-z0-9-]{1,63}")
_NAME_LIMIT = 256


def parse_deployment(table: Table | None) -> tuple[bool, str]:
    """Whether the deployment runs read-only (nothing is sent, whatever accounts say), and
    the authserv-id it writes its own `Authentication-Results` under (lower-cased)."""
    if table is None:
        return False, DEFAULT_AUTHSERV_ID
    table.refuse_unknown(_DEPLOYMENT_KEYS)
    authserv_id = table.string("AuthservId")
    if authserv_id is not None and not is_authserv_id(authserv_id):
        table.problems.add(table.at("AuthservId"), AUTHSERV_ID_RULE)
        authserv_id = None
    return table.boolean("ReadOnly", False), (authserv_id or DEFAULT_AUTHSERV_ID).casefold()


def parse_account_delivery(table: Table, parse_secret: SecretParser) -> AccountDelivery | None:
    problems = table.problems
    before = len(problems.items)
    table.refuse_unknown(_DELIVERY_KEYS)
    enabled = table.boolean("Enabled", False)
    address = table.string("Address")
    if address is not None and not _ADDRESS.fullmatch(address):
        problems.add(
            table.at("Address"),
            "must be a plain ASCII address (local@domain) without a display name",
        )
    name = table.string("DisplayName")
    if name is not None and (
        len(name) > _NAME_LIMIT or not text_rules.is_name(name) or not name.strip()
    ):
        problems.add(
            table.at("DisplayName"),
            f"must be 1 to {_NAME_LIMIT} characters on one line, without control characters",
        )
    smtp_table = table.table("Smtp")
    smtp = _parse_smtp(smtp_table, parse_secret) if smtp_table is not None else None
    if len(problems.items) != before:
        return None
    return AccountDelivery(enabled=enabled, address=address, display_name=name, smtp=smtp)


def _parse_smtp(table: Table, parse_secret: SecretParser) -> SmtpConnection | None:
    problems = table.problems
    before = len(problems.items)
    table.refuse_unknown(_SMTP_KEYS)
    host = table.string("Host", required=True)
    if host is not None and not is_host(host):
        problems.add(table.at("Host"), f"must be a host name of 1 to {HOST_LIMIT} characters")
    tls_text = table.string("Tls")
    tls = TlsMode.IMPLICIT
    if tls_text is not None:
        chosen = next((m for m in TlsMode if m.value == tls_text.lower()), None)
        if chosen is None:
            problems.add(table.at("Tls"), "must be one of implicit | starttls | none")
        else:
            tls = chosen
    if tls is TlsMode.NONE and host is not None and not is_loopback(host):
        problems.add(
            table.at("Tls"),
            '"none" is allowed only when Host is a loopback address; credentials and mail '
            "never cross a network in clear text",
        )
    port = table.integer("Port")
    if port is not None and not 1 <= port <= 65535:
        problems.add(table.at("Port"), "must be an integer from 1 to 65535")
    username = table.string("Username")
    if username is not None and (not username or not text_rules.is_name(username)):
        problems.add(table.at("Username"), "must be non-empty, without control characters")
    auth_text = table.string("Auth")
    auth = ConnectionAuth.PASSWORD
    if auth_text is not None:
        found = next((a for a in ConnectionAuth if a.value == auth_text.lower()), None)
        if found is None:
            problems.add(table.at("Auth"), "must be one of password | oauth2")
        else:
            auth = found
    secret = None
    if auth is ConnectionAuth.OAUTH2:
        if table.has("Secret"):
            problems.add(
                table.at("Secret"),
                'is not used with Auth = "oauth2" (the account\'s OAuth.RefreshToken is); '
                "remove it",
            )
        if not table.has("Username"):
            problems.add(table.at("Username"), 'is required with Auth = "oauth2"')
    else:
        secret = parse_secret(table, "Secret") if table.has("Secret") else None
        if (username is None) != (secret is None):
            problems.add(table.at("Secret"), "Username and Secret are given together or not at all")
    timeout = table.number("TimeoutSeconds")
    if timeout is not None and timeout <= 0:
        problems.add(table.at("TimeoutSeconds"), "must be greater than zero")
    if len(problems.items) != before or host is None:
        return None
    return SmtpConnection(
        host=host,
        port=_SMTP_PORTS[tls] if port is None else port,
        username=username,
        secret=secret,
        tls=tls,
        timeout_seconds=60.0 if timeout is None else timeout,
        auth=auth,
    )


def _bounded(table: Table, key: str, low: float, high: float, default: float) -> float:
    value = table.number(key)
    if value is None:
        return default
    if not low <= value <= high:
        table.problems.add(table.at(key), f"must be from {low:g} to {high:g}")
        return default
    return value


def _count(table: Table, key: str, low: int, high: int, default: int) -> int:
    value = table.integer(key)
    if value is None:
        return default
    if not low <= value <= high:
        table.problems.add(table.at(key), f"must be an integer from {low} to {high}")
        return default
    return value


def parse_mail_delivery(table: Table | None) -> MailDeliveryConfig:
    defaults = MailDeliveryConfig()
    if table is None:
        return defaults
    table.refuse_unknown(_MAIL_DELIVERY_KEYS)
    unvouched = defaults.unvouched_recipients
    text = table.string("UnvouchedRecipients")
    if text is not None:
        chosen = next((u for u in UnvouchedRecipients if u.value.lower() == text.lower()), None)
        if chosen is None:
            table.problems.add(table.at("UnvouchedRecipients"), "must be Allow or Refuse")
        else:
            unvouched = chosen
    vouching = defaults.vouching_contacts
    text = table.string("VouchingContacts")
    if text is not None:
        found = next((v for v in VouchingContacts if v.value.lower() == text.lower()), None)
        if found is None:
            table.problems.add(table.at("VouchingContacts"), "must be Any, Asserted or None")
        else:
            vouching = found
    sizes = {}
    for key, default in (
        ("MaxAttachmentSize", defaults.max_attachment_octets),
        ("MaxTotalAttachmentSize", defaults.max_total_attachment_octets),
        ("MaxMessageSize", defaults.max_message_octets),
    ):
        size = table.size(key)
        sizes[key] = default if size is None else size
    return MailDeliveryConfig(
        max_recipient_count=_count(table, "MaxRecipientCount", 1, 500, 25),
        max_body_characters=_count(table, "MaxBodyCharacters", 1, 10_000_000, 100_000),
        hold_seconds=_bounded(table, "HoldSeconds", 0, 86_400, 0.0),
        max_attempts=_count(table, "MaxAttempts", 1, 50, defaults.max_attempts),
        retry_base_seconds=_bounded(table, "RetryBaseSeconds", 0.01, 86_400, 60.0),
        lease_seconds=_bounded(table, "LeaseSeconds", 1, 86_400, defaults.lease_seconds),
        unvouched_recipients=unvouched,
        vouching_contacts=vouching,
        caller_written_contacts_vouch=table.boolean(
            "CallerWrittenContactsVouch", defaults.caller_written_contacts_vouch
        ),
        recipient_policy=_parse_policy(table.table("RecipientPolicy")),
        ceilings=_parse_ceilings(table.table("SendCeilings")),
        max_attachment_count=_count(table, "MaxAttachmentCount", 0, 500, 20),
        max_attachment_octets=sizes["MaxAttachmentSize"],
        max_total_attachment_octets=sizes["MaxTotalAttachmentSize"],
        max_message_octets=sizes["MaxMessageSize"],
        attachment_roots=_parse_roots(table),
    )


def _parse_roots(table: Table) -> tuple[str, ...]:
    """`AttachmentRoots`: absolute directories, a leading `~` expanded, written without `.`
    or `..` components (a root is compared with a caller's path as written)."""
    entries = table.strings("AttachmentRoots") or []
    roots: list[str] = []
    for index, entry in enumerate(entries):
        at = f"{table.at('AttachmentRoots')}[{index}]"
        expanded = expand_home(entry) if text_rules.is_name(entry) else None
        if expanded is None:
            problems = "must be a path without control characters whose home directory is known"
            table.problems.add(at, problems)
            continue
        parts = expanded.split("/")
        if not expanded.startswith("/") or any(p in (".", "..") for p in parts):
            table.problems.add(at, "must be an absolute path without . or .. components")
            continue
        root = "/" + "/".join(p for p in parts if p)
        if root not in roots:
            roots.append(root)
    return tuple(roots)


def _parse_policy(table: Table | None) -> RecipientPolicy:
    if table is None:
        return RecipientPolicy()
    table.refuse_unknown(_POLICY_KEYS)
    lists: dict[str, tuple[str, ...]] = {}
    for key in ("Allow", "Deny"):
        entries = table.strings(key) or []
        for index, entry in enumerate(entries):
            if not (_ADDRESS.fullmatch(entry) or _DOMAIN.fullmatch(entry)):
                table.problems.add(
                    f"{table.at(key)}[{index}]",
                    "must be an address (local@domain) or a domain (example.org)",
                )
        lists[key] = tuple(_policy_entry(e) for e in entries)
    return RecipientPolicy(allow=lists["Allow"], deny=lists["Deny"])


def _policy_entry(entry: str) -> str:
    """An entry in comparison form: lower-cased, a domain written "@example.org" without its
    "@"."""
    folded = entry.lower()
    return folded[1:] if folded.startswith("@") else folded


def _parse_ceilings(table: Table | None) -> SendCeilings:
    if table is None:
        return SendCeilings()
    table.refuse_unknown(frozenset(_CEILING_SCOPES))
    found: dict[str, Ceiling] = {}
    for key, field_name in _CEILING_SCOPES.items():
        scope = table.table(key)
        if scope is None:
            continue
        scope.refuse_unknown(_CEILING_KEYS)
        hour = scope.integer("PerHour")
        day = scope.integer("PerDay")
        for name, value in (("PerHour", hour), ("PerDay", day)):
            if value is not None and value < 1:
                scope.problems.add(scope.at(name), "must be an integer of 1 or more")
        found[field_name] = Ceiling(per_hour=hour, per_day=day)
    return SendCeilings(**found)
