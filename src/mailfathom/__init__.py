"""MailFathom: a local, indexed copy of mailboxes with a bounded, permissioned MCP tool surface."""

from __future__ import annotations


def __getattr__(name: str) -> str:
    """`__version__`: the one version number, the installed package's (pyproject.toml declares
    it). Read on first use, so that starting a process does not pay for the look-up."""
    if name == "__version__":
        from importlib.metadata import version

        return version("mailfathom")
    raise AttributeError(f"module 'mailfathom' has no attribute '{name}'")
