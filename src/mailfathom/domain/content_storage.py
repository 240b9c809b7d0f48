"""Where message content (raw MIME and the bodies read out of it) is kept: pack files under
the data directory, or an S3-compatible object store that every machine of a deployment
reaches (`[Store] ContentStore`, `[Store.ObjectStore]`)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path

from mailfathom.domain.connections import SecretRef


class ContentStoreKind(enum.Enum):
    # Pack files under `[Store] DataDir`: one machine.
    PACKS = "packs"
    # An S3-compatible object store: any number of machines.
    S3 = "s3"


class AddressingStyle(enum.Enum):
    """How a request names the bucket: in the path (`endpoint/bucket/key`, what most
    S3-compatible servers expect) or in the host name (`bucket.endpoint/key`)."""

    PATH = "path"
    VIRTUAL = "virtual"


DEFAULT_REGION = "us-east-1"
DEFAULT_TIMEOUT_SECONDS = 10.0
DEFAULT_CONCURRENCY = 16


@dataclass(frozen=True, slots=True)
class ObjectStoreConfig:
    """`[Store.ObjectStore]`. `endpoint` None is the provider's own (AWS S3 in `region`).
    Without the two key secrets the client's own credential chain is used (its environment
    variables, its shared files, an instance role). `prefix` goes before every object key, so
    that one bucket can hold several deployments. `concurrency` bounds the requests one
    process has in flight."""

    bucket: str
    endpoint: str | None = None
    region: str = DEFAULT_REGION
    prefix: str = ""
    access_key_secret: SecretRef | None = None
    secret_key_secret: SecretRef | None = None
    ca_file: Path | None = None
    addressing_style: AddressingStyle = AddressingStyle.PATH
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    concurrency: int = DEFAULT_CONCURRENCY
