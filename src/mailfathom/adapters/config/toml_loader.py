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

import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path

from mailfathom.adapters.config.accounts_section import check_account_names, parse_account
from mailfathom.adapters.config.answering_section import parse_answering
from mailfathom.adapters.config.authorship_section import parse_machine_authorship
from mailfathom.adapters.config.console_section import parse_console
from mailfathom.adapters.config.delivery_section import parse_deployment, parse_mail_delivery
from mailfathom.adapters.config.downloads_section import parse_downloads
from mailfathom.adapters.config.embeddings_section import parse_embeddings
from mailfathom.adapters.config.mcp_section import parse_mcp_endpoint
from mailfathom.adapters.config.operations_section import parse_operations
from mailfathom.adapters.config.sender_trust_section import parse_sender_trust
from mailfathom.adapters.config.sender_verification_section import parse_sender_verification
from mailfathom.adapters.config.sensitive_section import parse_sensitive_content
from mailfathom.adapters.config.store_section import parse_store
from mailfathom.adapters.config.sync_section import parse_sync
from mailfathom.adapters.config.toml_syntax import TomlSyntaxError, describe_syntax_error
from mailfathom.adapters.config.toml_tables import Problems, Table, string_keyed
from mailfathom.domain.config import DeploymentConfig
from mailfathom.domain.errors import ConfigurationError

__all__ = ["ConfigurationProblems", "load_config", "parse_config"]

_TOP_KEYS = frozenset(
    {
        "Store",
        "Sync",
        "Accounts",
        "McpEndpoint",
        "Deployment",
        "MailDelivery",
        "Downloads",
        "Console",
        "Operations",
        "MachineAuthorship",
        "SenderVerification",
        "SenderTrust",
        "SensitiveContent",
        "Answering",
        "Embeddings",
    }
)


class ConfigurationProblems(ConfigurationError):
    """Every rule a configuration breaks, reported together.

    `problems` holds one `<key path>: <rule>` line per broken rule: section by section in file
    order, then the checks that compare accounts with each other.
    """

    def __init__(
        self,
        problems: Sequence[str],
        *,
        source: str | None = None,
        syntax_errors: Sequence[TomlSyntaxError] = (),
        suggestions: Mapping[str, str] | None = None,
    ) -> None:
        self.problems = tuple(problems)
        self.source = source
        self.syntax_errors = tuple(syntax_errors)
        self.suggestions = dict(suggestions or {})
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
    # A file that cannot be read or decoded is one line: there are no keys to list.
    try:
        raw = path.read_bytes()
    except OSError:
        raise ConfigurationError(
            f"The configuration file {source} cannot be read (missing, not a file, or not "
            "permitted)."
        ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigurationError(
            f"The configuration file {source} is not valid UTF-8 text."
        ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        syntax = describe_syntax_error(error, text)
        raise ConfigurationProblems(
            [syntax.problem], source=source, syntax_errors=[syntax]
        ) from None
    return _parse(data, base_dir=path.resolve().parent, source=source)


def parse_config(data: Mapping[str, object], *, base_dir: Path) -> DeploymentConfig:
    """Validate a decoded configuration document; relative paths resolve against `base_dir`."""
    return _parse(data, base_dir=base_dir, source=None)


def _parse(data: Mapping[str, object], *, base_dir: Path, source: str | None) -> DeploymentConfig:
    problems = Problems()
    root = Table(string_keyed(data), "", problems)
    root.refuse_unknown(_TOP_KEYS)

    store = parse_store(root.table("Store"), base_dir, problems)
    sync = parse_sync(root.table("Sync"))
    account_tables = root.tables("Accounts")
    accounts = [parse_account(table, base_dir) for table in account_tables]
    check_account_names(account_tables, problems)
    mcp = parse_mcp_endpoint(
        root.table("McpEndpoint"),
        problems,
        base_dir,
        on_postgresql=store is not None and (store.database_url or "").startswith("postgresql"),
    )
    read_only, authserv_id = parse_deployment(root.table("Deployment"))
    mail_delivery = parse_mail_delivery(root.table("MailDelivery"))
    downloads = parse_downloads(root.table("Downloads"), base_dir)
    machine_authorship = parse_machine_authorship(root.table("MachineAuthorship"))
    sender_verification = parse_sender_verification(root.table("SenderVerification"))
    sender_trust = parse_sender_trust(root.table("SenderTrust"))
    sensitive_content = parse_sensitive_content(root.table("SensitiveContent"))
    answering = parse_answering(root.table("Answering"), base_dir)
    embeddings = parse_embeddings(root.table("Embeddings"), base_dir)
    console = parse_console(root.table("Console"))
    operations = parse_operations(root.table("Operations"))

    if problems.items:
        raise ConfigurationProblems(problems.items, source=source, suggestions=problems.suggestions)
    assert store is not None
    assert all(account is not None for account in accounts)
    return DeploymentConfig(
        store=store,
        accounts=tuple(account for account in accounts if account is not None),
        sync=sync,
        mcp=mcp,
        read_only=read_only,
        authserv_id=authserv_id,
        mail_delivery=mail_delivery,
        downloads=downloads,
        machine_authorship=machine_authorship,
        sender_verification=sender_verification,
        sender_trust=sender_trust,
        sensitive_content=sensitive_content,
        answering=answering,
        embeddings=embeddings,
        console=console,
        operations=operations,
    )
