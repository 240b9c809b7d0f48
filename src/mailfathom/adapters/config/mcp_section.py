"""The `[McpEndpoint]` section: whether the MCP endpoint runs, where, and who may call it.

Enabling the endpoint requires at least one `[[McpEndpoint.Callers]]` entry, each stating how
a caller is admitted: `Credential = "apiKey"` with the SHA-256 of the key (never the key),
`Credential = "oauth"` with the subject of the access tokens it admits (the authorization
servers are named in `[McpEndpoint.OAuth]`, `mcp_oauth_section`), or `Credential = "none"`,
which is accepted only when the endpoint listens on loopback.

`Replicas = true` says several processes serve the endpoint behind one load balancer. They
share what a client carries sealed only through `StateSecret`, a secret reference every
replica reads, and what they hold between requests only through PostgreSQL: without either,
the configuration is refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

from mailfathom.adapters.config.mcp_oauth_section import parse_mcp_oauth, parse_oauth_subject
from mailfathom.adapters.config.toml_tables import Problems, Table, is_loopback
from mailfathom.adapters.config.values import bounded_integer, parse_listen, parse_secret
from mailfathom.domain.access import ConfirmationMode, Permission, ToolCategory
from mailfathom.domain.config import (
    DEFAULT_CONFIRMATION_TIMEOUT_SECONDS,
    DEFAULT_MCP_PORT,
    DEFAULT_QUESTIONS_WAITING_PER_CALLER,
    DEFAULT_SESSION_IDLE_SECONDS,
    DEFAULT_SESSIONS_PER_CALLER,
    DEFAULT_TOOL_THREADS,
    MAX_SERVE_PROCESSES,
    MAX_TOOL_THREADS,
    CallerEntry,
    McpEndpointConfig,
)
from mailfathom.domain.mcp_oauth import McpOAuthConfig, OAuthSubject

_T = TypeVar("_T")
_KEYS = frozenset(
    {
        "Enabled",
        "Listen",
        "PublishedToolCategories",
        "Callers",
        "SessionsPerCaller",
        "SessionIdleSeconds",
        "MetricsApiKeySha256",
        "ConfirmationTimeoutSeconds",
        "QuestionsWaitingPerCaller",
        "OAuth",
        "Replicas",
        "StateSecret",
        "Processes",
        "ToolThreads",
    }
)
_MAX_SESSIONS_PER_CALLER = 1000
_MAX_QUESTIONS_WAITING = 1000
_MIN_IDLE_SECONDS = 1.0
_MAX_IDLE_SECONDS = 86400.0
_MIN_CONFIRMATION_SECONDS = 1.0
_MAX_CONFIRMATION_SECONDS = 3600.0
_CALLER_KEYS = frozenset(
    {
        "Name",
        "Credential",
        "ApiKeySha256",
        "Permissions",
        "Confirmation",
        "Subject",
        "Issuer",
        "PermissionsFromTokenScopes",
    }
)
_OAUTH_ONLY_KEYS = ("Subject", "Issuer", "PermissionsFromTokenScopes")
_CONFIRMATION_MODES = {m.value: m for m in ConfirmationMode}
_SHA256 = re.compile(r"[0-9a-f]{64}")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_ACCEPTED_CATEGORIES = ", ".join(c.value for c in ToolCategory)
_ACCEPTED_PERMISSIONS = ", ".join(p.value for p in Permission)


def parse_mcp_endpoint(
    table: Table | None, problems: Problems, base_dir: Path, *, on_postgresql: bool = False
) -> McpEndpointConfig:
    """The endpoint as configured; `on_postgresql` says whether `[Store]` names a
    PostgreSQL database, which replicas need."""
    if table is None:
        return McpEndpointConfig()
    table.refuse_unknown(_KEYS)
    enabled = table.boolean("Enabled", False)
    host, port = parse_listen(table, DEFAULT_MCP_PORT)
    categories = _parse_categories(table)
    oauth_table = table.table("OAuth")
    oauth = parse_mcp_oauth(oauth_table, base_dir)
    callers = [
        _parse_caller(entry, host, oauth, oauth_table is not None)
        for entry in table.tables("Callers")
    ]
    names = [c.name for c in callers if c is not None]
    if len(set(names)) != len(names):
        problems.add(table.at("Callers"), "every entry needs a Name of its own")
    if sum(1 for c in callers if c is not None and c.is_open) > 1:
        problems.add(table.at("Callers"), 'at most one entry may use Credential = "none"')
    subjects = [(c.oauth.issuer, c.oauth.subject) for c in callers if c and c.oauth]
    if len(set(subjects)) != len(subjects):
        problems.add(table.at("Callers"), "two entries admit the same token subject")
    if enabled and not table.tables("Callers"):
        problems.add(
            table.at("Callers"),
            "an enabled endpoint needs at least one entry stating how callers are admitted",
        )
    replicas = table.boolean("Replicas", False)
    state_secret = (
        parse_secret(table, "StateSecret", base_dir) if table.has("StateSecret") else None
    )
    if replicas and not table.has("StateSecret"):
        problems.add(
            table.at("Replicas"),
            "several replicas need a StateSecret every one of them reads: a cursor, a "
            "confirmation or a download link sealed by one replica is otherwise refused by "
            "the next",
        )
    if replicas and not on_postgresql:
        problems.add(
            table.at("Replicas"),
            "replicas share their sessions and questions through the store, so [Store] "
            "needs a DatabaseUrl naming PostgreSQL",
        )
    return McpEndpointConfig(
        enabled=enabled,
        host=host,
        port=port,
        published_categories=categories,
        callers=tuple(c for c in callers if c is not None),
        sessions_per_caller=_parse_sessions_per_caller(table),
        session_idle_seconds=_parse_idle_seconds(table),
        metrics_api_key_sha256=_parse_metrics_key(table),
        confirmation_timeout_seconds=_parse_confirmation_timeout(table),
        questions_waiting_per_caller=_parse_questions_waiting(table),
        oauth=oauth,
        replicas=replicas,
        state_secret=state_secret,
        processes=bounded_integer(table, "Processes", 1, 1, MAX_SERVE_PROCESSES),
        tool_threads=bounded_integer(
            table, "ToolThreads", DEFAULT_TOOL_THREADS, 1, MAX_TOOL_THREADS
        ),
    )


def _parse_confirmation_timeout(table: Table) -> float:
    value = table.number("ConfirmationTimeoutSeconds")
    if value is None:
        return DEFAULT_CONFIRMATION_TIMEOUT_SECONDS
    if not _MIN_CONFIRMATION_SECONDS <= value <= _MAX_CONFIRMATION_SECONDS:
        table.problems.add(
            table.at("ConfirmationTimeoutSeconds"),
            f"must be from {_MIN_CONFIRMATION_SECONDS:g} to {_MAX_CONFIRMATION_SECONDS:g} seconds",
        )
        return DEFAULT_CONFIRMATION_TIMEOUT_SECONDS
    return value


def _parse_sessions_per_caller(table: Table) -> int:
    return _parse_count(
        table, "SessionsPerCaller", DEFAULT_SESSIONS_PER_CALLER, _MAX_SESSIONS_PER_CALLER
    )


def _parse_questions_waiting(table: Table) -> int:
    return _parse_count(
        table,
        "QuestionsWaitingPerCaller",
        DEFAULT_QUESTIONS_WAITING_PER_CALLER,
        _MAX_QUESTIONS_WAITING,
    )


def _parse_count(table: Table, key: str, default: int, most: int) -> int:
    return bounded_integer(table, key, default, 1, most)


def _parse_idle_seconds(table: Table) -> float:
    value = table.number("SessionIdleSeconds")
    if value is None:
        return DEFAULT_SESSION_IDLE_SECONDS
    if not _MIN_IDLE_SECONDS <= value <= _MAX_IDLE_SECONDS:
        table.problems.add(
            table.at("SessionIdleSeconds"),
            f"must be from {_MIN_IDLE_SECONDS:g} to {_MAX_IDLE_SECONDS:g} seconds",
        )
        return DEFAULT_SESSION_IDLE_SECONDS
    return value


def _parse_metrics_key(table: Table) -> str | None:
    digest = table.string("MetricsApiKeySha256")
    if digest is not None and not _SHA256.fullmatch(digest):
        table.problems.add(
            table.at("MetricsApiKeySha256"), "must be 64 lower-case hexadecimal digits"
        )
        return None
    return digest


def _parse_names(
    table: Table, key: str, parse: Callable[[str], _T | None], what: str, accepted: str
) -> frozenset[_T] | None:
    """A list of names from a closed set; each unknown name is a problem listing the set."""
    names = table.strings(key)
    if names is None:
        return None
    chosen: set[_T] = set()
    for index, name in enumerate(names):
        value = parse(name)
        if value is None:
            table.problems.add(
                f"{table.at(key)}[{index}]", f"names no {what}; accepted: {accepted}"
            )
            continue
        chosen.add(value)
    return frozenset(chosen)


def _parse_categories(table: Table) -> frozenset[ToolCategory] | None:
    return _parse_names(
        table, "PublishedToolCategories", ToolCategory.parse, "tool category", _ACCEPTED_CATEGORIES
    )


def _parse_caller(
    entry: Table, host: str, oauth: McpOAuthConfig | None, oauth_written: bool
) -> CallerEntry | None:
    entry.refuse_unknown(_CALLER_KEYS, reference_hint="give ApiKeySha256, the key's SHA-256")
    problems = entry.problems
    before = len(problems.items)
    name = entry.string("Name", required=True)
    if name is not None and not _NAME.fullmatch(name):
        problems.add(entry.at("Name"), "must be 1 to 64 letters, digits, '.', '_' or '-'")
    credential = entry.string("Credential", required=True)
    digest = entry.string("ApiKeySha256")
    subject: OAuthSubject | None = None
    if credential == "apiKey":
        if digest is None:
            problems.add(entry.at("ApiKeySha256"), 'is required with Credential = "apiKey"')
        elif not _SHA256.fullmatch(digest):
            problems.add(entry.at("ApiKeySha256"), "must be 64 lower-case hexadecimal digits")
    elif credential == "none":
        if digest is not None:
            problems.add(entry.at("ApiKeySha256"), 'does not apply with Credential = "none"')
        if not is_loopback(host):
            problems.add(
                entry.at("Credential"),
                '"none" is allowed only when McpEndpoint.Listen is a loopback address',
            )
        if oauth is not None and not is_loopback(urlsplit(oauth.resource).hostname or ""):
            problems.add(
                entry.at("Credential"),
                '"none" is refused when McpEndpoint.OAuth.Resource is not a loopback address: '
                "behind a proxy every request comes from loopback, and would be admitted",
            )
    elif credential == "oauth":
        if digest is not None:
            problems.add(entry.at("ApiKeySha256"), 'does not apply with Credential = "oauth"')
        subject = parse_oauth_subject(entry, oauth, oauth_written)
    elif credential is not None:
        problems.add(entry.at("Credential"), 'must be "apiKey", "oauth" or "none"')
    if credential != "oauth":
        for key in _OAUTH_ONLY_KEYS:
            if entry.has(key):
                problems.add(entry.at(key), 'applies only with Credential = "oauth"')
    permissions = _parse_permissions(entry)
    confirmation = _parse_confirmation(entry)
    if len(problems.items) != before or name is None:
        return None
    return CallerEntry(
        name=name,
        api_key_sha256=digest if credential == "apiKey" else None,
        permissions=permissions,
        confirmation=confirmation,
        oauth=subject,
    )


def _parse_confirmation(entry: Table) -> ConfirmationMode:
    text = entry.string("Confirmation")
    if text is None:
        return ConfirmationMode.NONE
    mode = _CONFIRMATION_MODES.get(text)
    if mode is None:
        entry.problems.add(entry.at("Confirmation"), 'must be "none" or "ask"')
        return ConfirmationMode.NONE
    return mode


def _parse_permissions(entry: Table) -> frozenset[Permission] | None:
    return _parse_names(entry, "Permissions", Permission.parse, "permission", _ACCEPTED_PERMISSIONS)
