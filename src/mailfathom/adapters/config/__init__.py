"""Loading the deployment configuration, and reading the secrets it refers to."""

from mailfathom.adapters.config.secrets import read_secret
from mailfathom.adapters.config.toml_loader import ConfigurationProblems, load_config, parse_config

__all__ = ["ConfigurationProblems", "load_config", "parse_config", "read_secret"]
