"""Finding and loading the configuration a command runs with."""

from __future__ import annotations

import os
from pathlib import Path

from mailfathom.bootstrap import load_deployment
from mailfathom.domain import text_rules
from mailfathom.domain.config import AccountConfig, DeploymentConfig
from mailfathom.domain.errors import ConfigurationError
from mailfathom.entrypoints import logs
from mailfathom.entrypoints.cli.terminal import status_err


def config_file(path: Path | None) -> Path:
    """The configuration file a command reads: `path`, else $MAILFATHOM_CONFIG, else
    mailfathom.toml in the working directory."""
    if path is None:
        env = os.environ.get("MAILFATHOM_CONFIG")
        path = Path(env) if env else Path("mailfathom.toml")
    return path.expanduser()  # a quoted `~` (or one after --config=) reaches here unexpanded


def load(path: Path | None) -> DeploymentConfig:
    """The deployment's configuration; on a terminal, log lines go to its data directory
    from here on (see `logs.use_data_dir`)."""
    path = config_file(path)
    if not path.is_file():
        raise ConfigurationError(
            "No configuration file was found: pass --config or set MAILFATHOM_CONFIG."
        )
    config = load_deployment(path)
    logs.use_data_dir(config.store.data_dir, status_err)
    return config


def account_not_configured(name: str) -> ConfigurationError:
    """The refusal of an account name nothing configured. The name is repeated only when it
    is a name at all: a terminal escape, a line break or undecodable bytes are not echoed."""
    if text_rules.is_name(name):
        return ConfigurationError(f"Account '{name}' is not configured.")
    return ConfigurationError(
        "The account named is not configured: the name is not one line of text."
    )


def selected_accounts(config: DeploymentConfig, wanted: list[str] | None) -> list[AccountConfig]:
    if not wanted:
        return list(config.accounts)
    chosen = []
    for name in wanted:
        account = config.account(name)
        if account is None:
            raise account_not_configured(name)
        chosen.append(account)
    return chosen
