"""Loading and validating the deployment configuration from a TOML file.

`load_config` reads a file; `parse_config` validates an already-decoded document. Every rule is
checked before anything is returned, and every broken rule is reported in one
`ConfigurationProblems` error, so a deployment either starts with a configuration that is
entirely valid or does not start at all.

A problem is reported as `<key path>: <rule>`, for example `Accounts[1].Imap.Port: must be an
integer from 1 to 65535`. Array indices count from 0 in file order. Messages never repeat a
configured value: some values (secret references, database URLs, user names) can be sensitive,
and a uniform rule is easier to keep than a per-key judgement.

Secrets are not read here. A secret reference is checked for shape only; `read_secret` reads it
when a connection needs it.
"""

from __future__ import annotations

import enum
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import TypeVar
from urllib.parse import parse_qsl, urlsplit

from mailfathom.adapters.config.delivery_section import (
    parse_account_delivery,
    parse_deployment,
    parse_mail_delivery,
)
from mailfathom.adapters.config.mcp_section import parse_mcp_endpoint
from mailfathom.adapters.config.toml_loader_base import (
    _REFERENCE_HINT,
    _is_loopback,
    _Problems,
    _string_keyed,
    _Table,
)
from mailfathom.domain import text_rules
from mailfathom.domain.config import (
    AccountConfig,
    AccountKind,
    DeploymentConfig,
    FolderMapping,
    ImapConnection,
    SecretRef,
    StoreConfig,
    SyncConfig,
    SyncMode,
    TlsMode,
)
from mailfathom.domain.errors import ConfigurationError
from mailfathom.domain.folders import FolderRole

__all__ = ["ConfigurationProblems", "load_config", "parse_config"]

_E = TypeVar("_E", bound=enum.Enum)


class ConfigurationProblems(ConfigurationError):
    """Every rule a configuration breaks, reported together.

    `problems` holds one `<key path>: <rule>` line per broken rule: section by section in file
    order, then the checks that compare accounts with each other.
    """

    def __init__(self, problems: Sequence[str], *, source: str | None = None) -> None:
        self.problems = tuple(problems)
        where = f"the configuration file {source}" if source else "the configuration"
        count = len(self.problems)
        noun = "problem" if count == 1 else "problems"
        lines = "".join(f"\n  - {problem}" for problem in self.problems)
        super().__init__(f"{where} has {count} {noun}:{lines}")


def load_config(path: Path, *, environ: Mapping[str, str] | None = None) -> DeploymentConfig:
    """Read, decode and validate the TOML configuration file at `path`.

    Relative paths inside the file resolve against the file's directory. `environ` is accepted
    so callers can pass one environment to both loading and `read_secret`; loading itself never
    consults it, because secrets are read only when a connection needs them.
    """
    del environ  # see the docstring: secrets are not read at load time
    source = str(path)
    try:
        raw = path.read_bytes()
    except OSError:
        raise ConfigurationProblems(
            ["the file cannot be read (missing, not a file, or not permitted)"], source=source
        ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigurationProblems(["the file is not valid UTF-8 text"], source=source) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigurationProblems([_describe_toml_error(error)], source=source) from None
    return _parse(data, base_dir=path.resolve().parent, source=source)


def parse_config(data: Mapping[str, object], *, base_dir: Path) -> DeploymentConfig:
    """Validate a decoded configuration document; relative paths resolve against `base_dir`."""
    return _parse(data, base_dir=base_dir, source=None)


# --------------------------------------------------------------------------------------------
# Vocabulary and limits

_TOP_KEYS = frozenset({"Store", "Sync", "Accounts", "McpEndpoint", "Deployment", "MailDelivery"})
_STORE_KEYS = frozenset({"DataDir", "DatabaseUrl", "DatabasePasswordSecret"})
_SYNC_KEYS = frozenset({"Enabled", "BatchMessages", "BatchSize"})
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
    }
)
_IMAP_KEYS = frozenset({"Host", "Port", "Username", "Tls", "Secret", "TimeoutSeconds"})
_SECRET_KEYS = frozenset({"Env", "File"})
_FOLDER_KEYS = frozenset({"Remote", "Alias", "Role", "VisibleToTools"})


_ACCOUNT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAME_LIMIT = 256
_HOST_LIMIT = 253
_ADDRESS_LIMIT = 254
_DATABASE_REFERENCE_HINT = 'give it with DatabasePasswordSecret = { Env = "VARIABLE" } instead'
_DRIVERLESS_POSTGRES = "postgresql"
_POSTGRES_SCHEME = "postgresql+psycopg"
_SQLITE_SCHEME = "sqlite"
_DEFAULT_PORTS: Mapping[TlsMode, int] = {
    TlsMode.IMPLICIT: 993,
    TlsMode.STARTTLS: 143,
    TlsMode.NONE: 143,
}
_TOML_CONSTANT_MESSAGES = frozenset(
    {
        "Invalid statement",
        "Expected newline or end of document after a statement",
        "Cannot overwrite a value",
        "Expected ']' at the end of a table declaration",
        "Expected ']]' at the end of an array declaration",
        "Expected '=' after a key in a key/value pair",
        "Invalid initial character for a key part",
        "Unclosed array",
        "Unclosed inline table",
        "Unescaped '\\' in a string",
        "Invalid hex value",
        "Escaped character is not a Unicode scalar value",
        "Unterminated string",
        "Invalid date or datetime",
        "Invalid value",
    }
)


# --------------------------------------------------------------------------------------------
# Problem collection and typed access


def _check_name(problems: _Problems, path: str, name: str, *, what: str = "") -> bool:
    """A human-facing name: 1–256 characters, no control characters, no outer whitespace."""
    prefix = f"{what} " if what else ""
    if not 1 <= len(name) <= _NAME_LIMIT:
        problems.add(path, f"{prefix}must be 1 to {_NAME_LIMIT} characters long")
        return False
    if not text_rules.is_name(name):
        problems.add(path, f"{prefix}must not contain control characters")
        return False
    if name != name.strip():
        problems.add(path, f"{prefix}must not begin or end with whitespace")
        return False
    return True


def _config_path(problems: _Problems, path: str, text: str, base_dir: Path) -> Path | None:
    if not text:
        problems.add(path, "must not be empty")
        return None
    if not text_rules.is_name(text):
        problems.add(path, "must not contain control characters")
        return None
    if text.startswith("~"):
        problems.add(
            path,
            "a leading ~ is not expanded; write an absolute path or one relative to the "
            "configuration file's directory",
        )
        return None
    candidate = Path(text)
    return candidate if candidate.is_absolute() else base_dir / candidate


def _describe_toml_error(error: tomllib.TOMLDecodeError) -> str:
    # The parser's message can quote characters or keys from the file, so only messages
    # known to be constant are passed on; the position is always kept.
    message = str(error)
    description, _, position = message.rpartition(" (at ")
    if not description:
        return "is not valid TOML"
    shown = description if description in _TOML_CONSTANT_MESSAGES else "syntax error"
    return f"is not valid TOML: {shown} (at {position}"


# --------------------------------------------------------------------------------------------
# Sections


def _parse(data: Mapping[str, object], *, base_dir: Path, source: str | None) -> DeploymentConfig:
    problems = _Problems()
    root = _Table(_string_keyed(data), "", problems)
    root.refuse_unknown(_TOP_KEYS)

    store = _parse_store(root.table("Store"), base_dir, problems)
    sync = _parse_sync(root.table("Sync"))
    account_tables = root.tables("Accounts")
    accounts = [_parse_account(table, base_dir) for table in account_tables]
    _check_account_names(account_tables, problems)
    mcp = parse_mcp_endpoint(root.table("McpEndpoint"), problems)
    read_only = parse_deployment(root.table("Deployment"))
    mail_delivery = parse_mail_delivery(root.table("MailDelivery"))

    if problems.items:
        raise ConfigurationProblems(problems.items, source=source)
    assert store is not None
    assert all(account is not None for account in accounts)
    return DeploymentConfig(
        store=store,
        accounts=tuple(account for account in accounts if account is not None),
        sync=sync,
        mcp=mcp,
        read_only=read_only,
        mail_delivery=mail_delivery,
    )


def _parse_store(table: _Table | None, base_dir: Path, problems: _Problems) -> StoreConfig | None:
    default_dir = base_dir / "data"
    if table is None:
        return StoreConfig(data_dir=default_dir)
    table.refuse_unknown(_STORE_KEYS, reference_hint=_DATABASE_REFERENCE_HINT)

    data_dir: Path | None = default_dir
    data_dir_text = table.string("DataDir")
    if data_dir_text is not None:
        data_dir = _config_path(problems, table.at("DataDir"), data_dir_text, base_dir)

    secret: SecretRef | None = None
    if table.has("DatabasePasswordSecret"):
        secret = _parse_secret(table, "DatabasePasswordSecret", base_dir)

    url: str | None = None
    url_text = table.string("DatabaseUrl")
    if url_text is not None:
        url = _parse_database_url(problems, table.at("DatabaseUrl"), url_text, base_dir)
    if table.has("DatabasePasswordSecret") and (
        not table.has("DatabaseUrl") or (url is not None and url.startswith(_SQLITE_SCHEME))
    ):
        problems.add(table.at("DatabasePasswordSecret"), "applies only to a PostgreSQL DatabaseUrl")

    if data_dir is None:
        return None
    return StoreConfig(data_dir=data_dir, database_url=url, database_password_secret=secret)


def _parse_database_url(problems: _Problems, path: str, text: str, base_dir: Path) -> str | None:
    if not text or any(char.isspace() for char in text) or not text_rules.is_name(text):
        problems.add(path, "must be a URL without spaces or control characters")
        return None
    try:
        parts = urlsplit(text)
        password = parts.password
        _ = parts.port
    except ValueError:
        problems.add(path, "is not a valid URL")
        return None
    scheme = parts.scheme.lower()
    # Everything after the scheme, kept verbatim: urlunsplit would drop the empty authority
    # of forms such as sqlite:///file.db or postgresql:///db.
    rest = text[len(parts.scheme) :]
    if not scheme or not rest.startswith("://"):
        problems.add(path, "is not a valid URL")
        return None
    query_keys = {key.lower() for key, _ in parse_qsl(parts.query, keep_blank_values=True)}
    if password is not None or "password" in query_keys:
        problems.add(path, f"must not contain a password; {_DATABASE_REFERENCE_HINT}")
        return None
    if parts.fragment:
        problems.add(path, "must not have a #fragment")
        return None

    if scheme in {_DRIVERLESS_POSTGRES, _POSTGRES_SCHEME}:
        # psycopg (version 3) is the PostgreSQL driver this product ships with.
        return _POSTGRES_SCHEME + rest

    if scheme == _SQLITE_SCHEME:
        if parts.netloc:
            problems.add(path, 'an SQLite URL has no host: write "sqlite:///relative/file.db"')
            return None
        # As in SQLAlchemy: sqlite:///name is relative, sqlite:////name absolute, and an
        # empty name or :memory: is an in-memory database.
        database = parts.path[1:]
        if database in {"", ":memory:"} or PurePosixPath(database).is_absolute():
            return _SQLITE_SCHEME + rest
        query = f"?{parts.query}" if parts.query else ""
        return f"{_SQLITE_SCHEME}:///{base_dir / database}{query}"

    problems.add(path, "must be an sqlite:// or postgresql+psycopg:// URL")
    return None


def _parse_sync(table: _Table | None) -> SyncConfig:
    defaults = SyncConfig()
    if table is None:
        return defaults
    table.refuse_unknown(_SYNC_KEYS)
    enabled = table.boolean("Enabled", defaults.enabled)
    batch_messages = table.integer("BatchMessages")
    if batch_messages is not None and batch_messages <= 0:
        table.problems.add(table.at("BatchMessages"), "must be greater than zero")
        batch_messages = None
    batch_octets = table.size("BatchSize")
    return SyncConfig(
        enabled=enabled,
        batch_messages=defaults.batch_messages if batch_messages is None else batch_messages,
        batch_octets=defaults.batch_octets if batch_octets is None else batch_octets,
    )


def _parse_secret(owner: _Table, key: str, base_dir: Path) -> SecretRef | None:
    problems = owner.problems
    path = owner.at(key)
    value = owner.data[key]
    if isinstance(value, str):
        problems.add(path, f"a secret is not accepted in the file; {_REFERENCE_HINT}")
        return None
    table = owner.table(key)
    if table is None:
        return None
    table.refuse_unknown(_SECRET_KEYS)
    env = table.string("Env")
    file_text = table.string("File")
    given = [name for name in ("Env", "File") if table.has(name)]
    if len(given) != 1:
        problems.add(path, "exactly one of Env or File must be given")
        return None
    if table.has("Env"):
        if env is None:
            return None
        if not _ENV_NAME.fullmatch(env):
            problems.add(
                table.at("Env"),
                "must be an environment variable name (letters, digits and underscores, "
                "not starting with a digit)",
            )
            return None
        return SecretRef(env=env, origin=path)
    if file_text is None:
        return None
    file_path = _config_path(problems, table.at("File"), file_text, base_dir)
    if file_path is None:
        return None
    return SecretRef(file=file_path, origin=path)


def _parse_account(table: _Table, base_dir: Path) -> AccountConfig | None:
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
    elif display_name is not None and not _check_name(
        problems, table.at("DisplayName"), display_name
    ):
        display_name = None

    kind = _parse_enum(table, "Kind", AccountKind, required=True)
    sync_mode = _parse_enum(table, "SyncMode", SyncMode) or SyncMode.POLLING
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

    folders = _parse_folders(table)
    ok &= folders is not None

    delivery = None
    delivery_table = table.table("Delivery")
    if delivery_table is not None:
        delivery = parse_account_delivery(
            delivery_table, lambda owner, key: _parse_secret(owner, key, base_dir)
        )
        ok &= delivery is not None

    if not ok or account_id is None or display_name is None or kind is None:
        return None
    assert folders is not None
    assert addresses is not None
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
    )


def _parse_enum(
    table: _Table, key: str, enum_type: type[_E], *, required: bool = False
) -> _E | None:
    text = table.string(key, required=required)
    if text is None:
        return None
    for member in enum_type:
        if member.value == text.lower():
            return member
    choices = " | ".join(member.value for member in enum_type)
    table.problems.add(table.at(key), f"must be one of {choices}")
    return None


def _parse_addresses(table: _Table) -> tuple[str, ...] | None:
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


def _parse_imap(table: _Table, base_dir: Path) -> ImapConnection | None:
    problems = table.problems
    table.refuse_unknown(_IMAP_KEYS)
    ok = True

    host = table.string("Host", required=True)
    if host is not None and (
        not host
        or len(host) > _HOST_LIMIT
        or any(char.isspace() for char in host)
        or not text_rules.is_name(host)
    ):
        problems.add(
            table.at("Host"),
            f"must be a host name or address of 1 to {_HOST_LIMIT} characters, no spaces",
        )
        host = None

    tls = _parse_enum(table, "Tls", TlsMode)
    ok &= tls is not None or not table.has("Tls")
    tls = tls or TlsMode.IMPLICIT
    if tls is TlsMode.NONE and host is not None and not _is_loopback(host):
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

    secret: SecretRef | None = None
    if table.has("Secret"):
        secret = _parse_secret(table, "Secret", base_dir)
    else:
        problems.add(table.at("Secret"), f"is required; {_REFERENCE_HINT}")

    if not ok or host is None or username is None or secret is None:
        return None
    defaults = ImapConnection(host="", port=0, username="", secret=secret)
    return ImapConnection(
        host=host,
        port=_DEFAULT_PORTS[tls] if port is None else port,
        username=username,
        secret=secret,
        tls=tls,
        timeout_seconds=defaults.timeout_seconds if timeout is None else timeout,
    )


def _remote_identity(remote: str) -> str:
    # INBOX is case-insensitive in IMAP (RFC 3501 §5.1); every other name is case-sensitive.
    return "INBOX" if remote.upper() == "INBOX" else remote


def _parse_folders(account: _Table) -> tuple[FolderMapping, ...] | None:
    problems = account.problems
    ok = True
    folders: list[FolderMapping] = []
    remotes: dict[str, int] = {}
    aliases: dict[str, int] = {}
    roles: dict[FolderRole, int] = {}
    for index, table in enumerate(account.tables("Folders")):
        table.refuse_unknown(_FOLDER_KEYS)
        before = len(problems.items)

        remote = table.string("Remote", required=True)
        if remote is not None:
            if not remote:
                problems.add(table.at("Remote"), "must not be empty")
                remote = None
            elif not text_rules.is_name(remote):
                problems.add(table.at("Remote"), "must not contain control characters")
                remote = None
            elif (first := remotes.setdefault(_remote_identity(remote), index)) != index:
                problems.add(
                    table.at("Remote"),
                    f"names the same folder as {account.at('Folders')}[{first}].Remote",
                )

        alias = table.string("Alias")
        if alias is None and not table.has("Alias"):
            alias = remote
            alias_what = "(taken from Remote, as Alias is not given)"
        else:
            alias_what = ""
        if alias is not None:
            if not _check_name(problems, table.at("Alias"), alias, what=alias_what):
                alias = None
            elif (first := aliases.setdefault(alias.casefold(), index)) != index:
                problems.add(
                    table.at("Alias"),
                    f"equals {account.at('Folders')}[{first}].Alias "
                    "(aliases are compared case-insensitively)",
                )

        role: FolderRole | None = None
        role_text = table.string("Role")
        if role_text is not None:
            role = FolderRole.parse(role_text)
            if role is None:
                choices = ", ".join(member.value for member in FolderRole)
                problems.add(table.at("Role"), f"must be one of {choices} (case-insensitive)")
            elif (first := roles.setdefault(role, index)) != index:
                problems.add(
                    table.at("Role"),
                    f"is already given to {account.at('Folders')}[{first}]; "
                    "each role may be used once per account",
                )

        visible = table.boolean("VisibleToTools", True)

        if len(problems.items) != before or remote is None or alias is None:
            ok = False
            continue
        folders.append(
            FolderMapping(remote_name=remote, alias=alias, role=role, visible_to_tools=visible)
        )
    return tuple(folders) if ok else None


def _check_account_names(accounts: Iterable[_Table], problems: _Problems) -> None:
    """Ids are unique, and a display name never equals another account's Id or display name.

    All comparisons ignore case, so that any name an operator or a tool caller uses picks out
    exactly one account. Only values that passed their own checks take part.
    """
    entries: list[tuple[_Table, str | None, str | None]] = []
    for table in accounts:
        raw_id = table.data.get("Id")
        account_id = raw_id if isinstance(raw_id, str) and _ACCOUNT_ID.fullmatch(raw_id) else None
        raw_name = table.data.get("DisplayName", account_id)
        name = raw_name if isinstance(raw_name, str) and _valid_name(raw_name) else None
        entries.append((table, account_id, name))

    seen_ids: dict[str, _Table] = {}
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


def _valid_name(name: str) -> bool:
    return _check_name(_Problems(), "", name)
