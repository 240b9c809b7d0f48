"""The `[Store.ObjectStore]` table: the S3-compatible object store message content goes to
when `[Store] ContentStore = "s3"`."""

from __future__ import annotations

import re
from pathlib import Path

from mailfathom.adapters.config.toml_tables import Table
from mailfathom.adapters.config.values import (
    SECURE_ADDRESS_RULE,
    bounded_integer,
    bounded_number,
    config_path,
    parse_enum,
    parse_secret,
)
from mailfathom.domain import text_rules
from mailfathom.domain.content_storage import (
    DEFAULT_CONCURRENCY,
    DEFAULT_REGION,
    DEFAULT_TIMEOUT_SECONDS,
    AddressingStyle,
    ObjectStoreConfig,
)
from mailfathom.domain.web_addresses import is_secure_address

_KEYS = frozenset(
    {
        "Endpoint",
        "Bucket",
        "Region",
        "Prefix",
        "AccessKeySecret",
        "SecretKeySecret",
        "CaFile",
        "AddressingStyle",
        "TimeoutSeconds",
        "Concurrency",
    }
)
_REFERENCE_HINT = 'give the keys with AccessKeySecret = { Env = "VARIABLE" } and SecretKeySecret'
# S3's rule for bucket names that every addressing style can use.
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_REGION = re.compile(r"[a-z0-9-]{1,64}")
_PREFIX_LIMIT = 512
MAX_CONCURRENCY = 256


def parse_object_store(table: Table, base_dir: Path) -> ObjectStoreConfig | None:
    table.refuse_unknown(_KEYS, reference_hint=_REFERENCE_HINT)
    problems = table.problems
    endpoint = table.string("Endpoint")
    if endpoint is not None and not is_secure_address(endpoint):
        problems.add(table.at("Endpoint"), SECURE_ADDRESS_RULE)
        endpoint = None
    bucket = table.string("Bucket", required=True)
    if bucket is not None and not _BUCKET.fullmatch(bucket):
        problems.add(
            table.at("Bucket"),
            "must be an S3 bucket name: 3 to 63 lower-case letters, digits, dots and hyphens, "
            "beginning and ending with a letter or digit",
        )
        bucket = None
    region = table.string("Region") or DEFAULT_REGION
    if not _REGION.fullmatch(region):
        problems.add(table.at("Region"), "must be a region name such as us-east-1")
    prefix = table.string("Prefix") or ""
    if len(prefix) > _PREFIX_LIMIT or not text_rules.is_name(prefix) or prefix.startswith("/"):
        problems.add(
            table.at("Prefix"),
            f"must be at most {_PREFIX_LIMIT} characters, without control characters, "
            "not beginning with /",
        )
    access = (
        parse_secret(table, "AccessKeySecret", base_dir) if table.has("AccessKeySecret") else None
    )
    secret = (
        parse_secret(table, "SecretKeySecret", base_dir) if table.has("SecretKeySecret") else None
    )
    if table.has("AccessKeySecret") != table.has("SecretKeySecret"):
        problems.add(
            table.at("SecretKeySecret"),
            "AccessKeySecret and SecretKeySecret are given together or not at all",
        )
    ca_text = table.string("CaFile")
    ca_file = config_path(problems, table.at("CaFile"), ca_text, base_dir) if ca_text else None
    style = parse_enum(table, "AddressingStyle", AddressingStyle) or AddressingStyle.PATH
    timeout = bounded_number(table, "TimeoutSeconds", DEFAULT_TIMEOUT_SECONDS, 0.1, 600, unit=" s")
    concurrency = bounded_integer(table, "Concurrency", DEFAULT_CONCURRENCY, 1, MAX_CONCURRENCY)
    if bucket is None:
        return None
    return ObjectStoreConfig(
        bucket=bucket,
        endpoint=endpoint,
        region=region,
        prefix=prefix,
        access_key_secret=access,
        secret_key_secret=secret,
        ca_file=ca_file,
        addressing_style=style,
        timeout_seconds=timeout,
        concurrency=concurrency,
    )
