"""The `[[Accounts]]` entries: each account, its IMAP connection, and the checks between
accounts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from mailfathom.adapters.config.delivery_section import parse_account_delivery
from mailfathom.adapters.config.folders_section import parse_folders
from mailfathom.adapters.config.oauth_section import parse_oauth
from mailfathom.adapters.config.sender_verification_section import parse_trusted_authserv_ids
from mailfathom.adapters.config.toml_tables import REFERENCE_HINT, Problems, Table, is_loopback
from mailfathom.adapters.config.values import (
    HOST_LIMIT,
    check_name,
    is_host,
    parse_enum,
    parse_secret,
    valid_name,
)
from mailfathom.domain import text_rules
from mailfathom.domain.config import (
    AccountConfig,
    AccountKind,
    ImapConnection,
    RemoteImages,
    SecretRef,
    SyncMode,
    TlsMode,
)
from mailfathom.domain.oauth import ConnectionAuth, OAuthCredential

_ACCOUNT_KEYS = frozenset(
    {
        "Id",
        "DisplayName",
        "Kind",
        "SyncMode",
        "PollIntervalSeconds",
        "MaxMessageSize",
        "StorageCeiling",
        "Addresses",
        "Imap",
        "Folders",
        "Delivery",
        "CollectContacts",
        "RemoteImages",
        "TrustedAuthservIds",
        "OAuth",
    }
)
_IMAP_KEYS = frozenset({"Host", "Port", "Username", "Tls", "Auth", "Secret", "TimeoutSeconds"})

_ACCOUNT_ID = text_rules.ACCOUNT_IDENTIFIER
_ADDRESS_LIMIT = 254
_DEFAULT_PORTS: Mapping[TlsMode, int] = {
    TlsMode.IMPLICIT: 993,
    TlsMode.STARTTLS: 143,
    TlsMode.NONE: 143,
}


def parse_account(table: Table, base_dir: Path) -> AccountConfig | None:
    problems = table.problems
    table.refuse_unknown(_ACCOUNT_KEYS)
    ok = True

    account_id = table.string("Id", required=True)
    if account_id is not None and not _ACCOUNT_ID.fullmatch(account_id):
        problems.add(
            table.at("Id"),
            "must be 1 to 64 characters from A-Z, a-z, 0-9, '.', '_' and '-', "
            "starting with a letter or digit",
        )
        account_id = None

    display_name = table.string("DisplayName")
    if display_name is None and not table.has("DisplayName"):
        display_name = account_id
    elif display_name is not None and not check_name(
        problems, table.at("DisplayName"), display_name
    ):
        display_name = None

    kind = parse_enum(table, "Kind", AccountKind, required=True)
    sync_mode = parse_enum(table, "SyncMode", SyncMode) or SyncMode.POLLING
    if kind is AccountKind.LOCAL and sync_mode is SyncMode.PUSH:
        problems.add(table.at("SyncMode"), 'push applies only to Kind = "imap"')
        ok = False

    poll = table.number("PollIntervalSeconds")
    if poll is not None and poll <= 0:
        problems.add(table.at("PollIntervalSeconds"), "must be greater than zero")
        ok = False

    max_message = table.size("MaxMessageSize")
    ok &= max_message is not None or not table.has("MaxMessageSize")
    ceiling = table.size("StorageCeiling")
    ok &= ceiling is not None or not table.has("StorageCeiling")

    addresses = _parse_addresses(table)
    ok &= addresses is not None

    imap: ImapConnection | None = None
    if kind is AccountKind.IMAP:
        imap_table = table.table("Imap")
        if imap_table is None:
            if not table.has("Imap"):
                problems.add(table.at("Imap"), 'is required when Kind = "imap"')
            ok = False
        else:
            imap = _parse_imap(imap_table, base_dir)
            ok &= imap is not None
    elif kind is AccountKind.LOCAL and table.has("Imap"):
        problems.add(table.at("Imap"), 'is not allowed when Kind = "local"')
        ok = False

    folders = parse_folders(table)
    ok &= folders is not None
    collect_contacts = table.boolean("CollectContacts", True)
    remote_images = parse_enum(table, "RemoteImages", RemoteImages)
    ok &= remote_images is not None or not table.has("RemoteImages")
    ok &= not table.has("CollectContacts") or isinstance(table.data["CollectContacts"], bool)

    trusted_ids = parse_trusted_authserv_ids(table)
    ok &= trusted_ids is not None

    delivery = None
    delivery_table = table.table("Delivery")
    if delivery_table is not None:
        delivery = parse_account_delivery(
            delivery_table, lambda owner, key: parse_secret(owner, key, base_dir)
        )
        ok &= delivery is not None

    oauth = _parse_account_oauth(table, base_dir)
    ok &= oauth is not None or not table.has("OAuth")

    if not ok or account_id is None or display_name is None or kind is None:
        return None
    assert folders is not None
    assert addresses is not None
    assert trusted_ids is not None
    defaults = AccountConfig(account_id="", display_name="", kind=kind, folders=())
    return AccountConfig(
        account_id=account_id,
        display_name=display_name,
        kind=kind,
        folders=folders,
        imap=imap,
        sync_mode=sync_mode,
        poll_interval_seconds=defaults.poll_interval_seconds if poll is None else poll,
        max_message_octets=defaults.max_message_octets if max_message is None else max_message,
        storage_ceiling_octets=ceiling,
        addresses=addresses,
        delivery=delivery,
        collect_contacts=collect_contacts,
        remote_images=remote_images or RemoteImages.BLOCK,
        trusted_authserv_ids=trusted_ids,
        oauth=oauth,
    )


def _auth_of(table: Table, *keys: str) -> object:
    """The raw `Auth` value of the sub-table `keys` lead to, whether or not it is valid."""
    data: object = table.data
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data.get("Auth") if isinstance(data, dict) else None


def _parse_account_oauth(table: Table, base_dir: Path) -> OAuthCredential | None:
    """The `OAuth` block, which an account has exactly when one of its connections logs in
    with `Auth = "oauth2"`."""
    wanted = [
        f"{name}.Auth"
        for name, keys in (("Imap", ("Imap",)), ("Delivery.Smtp", ("Delivery", "Smtp")))
        if str(_auth_of(table, *keys)).lower() == ConnectionAuth.OAUTH2.value
    ]
    if not table.has("OAuth"):
        if wanted:
            table.problems.add(
                table.at("OAuth"),
                f'is required: {" and ".join(wanted)} is "oauth2"',
            )
        return None
    if not wanted:
        table.problems.add(
            table.at("OAuth"),
            'is used only where Imap.Auth or Delivery.Smtp.Auth is "oauth2"; remove it or '
            "set one of them",
        )
        return None
    oauth_table = table.table("OAuth")
    if oauth_table is None:
        return None
    return parse_oauth(oauth_table, lambda owner, key: parse_secret(owner, key, base_dir))


def _parse_addresses(table: Table) -> tuple[str, ...] | None:
    values = table.strings("Addresses")
    if values is None:
        return None if table.has("Addresses") else ()
    ok = True
    seen: set[str] = set()
    for index, address in enumerate(values):
        path = f"{table.at('Addresses')}[{index}]"
        local, at, domain = address.rpartition("@")
        if (
            not at
            or not local
            or not domain
            or len(address) > _ADDRESS_LIMIT
            or any(char.isspace() for char in address)
            or not text_rules.is_name(address)
        ):
            problems_rule = (
                f"must be an e-mail address (local@domain, at most {_ADDRESS_LIMIT} "
                "characters, no spaces)"
            )
            table.problems.add(path, problems_rule)
            ok = False
            continue
        folded = address.casefold()
        if folded in seen:
            table.problems.add(path, "repeats an address listed earlier for this account")
            ok = False
        seen.add(folded)
    return tuple(values) if ok else None


def _parse_imap(table: Table, base_dir: Path) -> ImapConnection | None:
    problems = table.problems
    table.refuse_unknown(_IMAP_KEYS)
    ok = True

    host = table.string("Host", required=True)
    if host is not None and not is_host(host):
        problems.add(
            table.at("Host"),
            f"must be a host name or address of 1 to {HOST_LIMIT} characters, no spaces",
        )
        host = None

    tls = parse_enum(table, "Tls", TlsMode)
    ok &= tls is not None or not table.has("Tls")
    tls = tls or TlsMode.IMPLICIT
    if tls is TlsMode.NONE and host is not None and not is_loopback(host):
        problems.add(
            table.at("Tls"),
            '"none" is allowed only when Host is localhost or a loopback address; '
            'use "implicit" or "starttls" so credentials never cross a network in clear text',
        )
        ok = False

    port = table.integer("Port")
    if port is not None and not 1 <= port <= 65535:
        problems.add(table.at("Port"), "must be an integer from 1 to 65535")
        ok = False
    ok &= port is not None or not table.has("Port")

    username = table.string("Username", required=True)
    if username is not None and (not username or not text_rules.is_name(username)):
        problems.add(table.at("Username"), "must be non-empty, without control characters")
        username = None

    timeout = table.number("TimeoutSeconds")
    if timeout is not None and timeout <= 0:
        problems.add(table.at("TimeoutSeconds"), "must be greater than zero")
        ok = False
    ok &= timeout is not None or not table.has("TimeoutSeconds")

    auth = parse_enum(table, "Auth", ConnectionAuth)
    ok &= auth is not None or not table.has("Auth")
    auth = auth or ConnectionAuth.PASSWORD
    secret: SecretRef | None = None
    if auth is ConnectionAuth.OAUTH2:
        if table.has("Secret"):
            problems.add(
                table.at("Secret"),
                'is not used with Auth = "oauth2" (the account\'s OAuth.RefreshToken is); '
                "remove it",
            )
            ok = False
    elif table.has("Secret"):
        secret = parse_secret(table, "Secret", base_dir)
        ok &= secret is not None
    else:
        problems.add(table.at("Secret"), f"is required; {REFERENCE_HINT}")
        ok = False

    if not ok or host is None or username is None:
        return None
    defaults = ImapConnection(host="", port=0, username="", secret=secret)
    return ImapConnection(
        host=host,
        port=_DEFAULT_PORTS[tls] if port is None else port,
        username=username,
        secret=secret,
        tls=tls,
        timeout_seconds=defaults.timeout_seconds if timeout is None else timeout,
        auth=auth,
    )


def check_account_names(accounts: Iterable[Table], problems: Problems) -> None:
    """Ids are unique, and a display name never equals another account's Id or display name.

    All comparisons ignore case, so that any name an operator or a tool caller uses picks out
    exactly one account. Only values that passed their own checks take part.
    """
    entries: list[tuple[Table, str | None, str | None]] = []
    for table in accounts:
        raw_id = table.data.get("Id")
        account_id = raw_id if isinstance(raw_id, str) and _ACCOUNT_ID.fullmatch(raw_id) else None
        raw_name = table.data.get("DisplayName", account_id)
        name = raw_name if isinstance(raw_name, str) and valid_name(raw_name) else None
        entries.append((table, account_id, name))

    seen_ids: dict[str, Table] = {}
    for table, account_id, _ in entries:
        if account_id is None:
            continue
        first = seen_ids.setdefault(account_id.casefold(), table)
        if first is not table:
            problems.add(
                table.at("Id"),
                f"is already used by {first.path} (Ids are compared case-insensitively)",
            )

    for position, (table, _, name) in enumerate(entries):
        # A display name taken from the Id collides only where the Ids themselves do.
        if name is None or not table.has("DisplayName"):
            continue
        folded = name.casefold()
        for other_position, (other, other_id, other_name) in enumerate(entries):
            if other is table:
                continue
            if other_id is not None and other_id.casefold() == folded:
                problems.add(
                    table.at("DisplayName"),
                    f"equals the Id of {other.path}; a name must identify one account "
                    "(compared case-insensitively)",
                )
                break
            if (
                other_position < position
                and other_name is not None
                and other_name.casefold() == folded
            ):
                problems.add(
                    table.at("DisplayName"),
                    f"equals the DisplayName of {other.path}; a name must identify one "
                    "account (compared case-insensitively)",
                )
                break
