"""Raw MIME and the text read out of it as objects in an S3-compatible store, addressed by the
SHA-256 of the MIME octets: the content store every machine of a deployment can share.

Each message is two objects under the configured prefix: `mime/<key>` (the octets) and
`text/<key>` (the key's 32 octets, then the text record of `texts`, when there is one). The
bodies stay beside the MIME as they do in the packs, so the database holds no more than it
does with packs and a repaired message is fetched and checked the same way. A text record
checks itself only by a CRC-32 of its payload, which an intact record stored under another
message's name passes: the key it opens with is what ties it to its name.

- Writing is idempotent: a key names exactly one content, so storing it again puts the same
  octets under the same name, whoever does it, and replaces a damaged copy. Every upload
  carries its SHA-256, which the store checks before it keeps the object; an upload either
  lands whole or not at all, so a writer killed midway leaves nothing to sweep. A batch is
  uploaded by a bounded number of concurrent requests, and durable when `write_many`
  returns.
- Every read is checked (the MIME against its key, the text against the key it opens with
  and its CRC-32): an object that is absent or damaged is `ContentMissingError`, which the
  reader turns into a repair request, exactly as a missing record in a pack.
- A store that cannot be reached, or refuses, is a coded `StoreError` (21004, 21005) after a
  bounded number of timed attempts, never a hang and never a repair request: the content
  may be intact.
- Discarding deletes both objects at once, so there is nothing to reclaim or sweep later.

Nothing here logs; an error's text names the operation, never a key or any content.
"""

from __future__ import annotations

import base64
import hashlib
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from mailfathom.adapters.content.packs import CONTENT_KEY, PendingEntry, keyed_records
from mailfathom.adapters.content.s3_client import (
    ObjectAbsent,
    make_client,
    read_object,
    store_failures,
)
from mailfathom.adapters.content.texts import decode_text
from mailfathom.adapters.fair_gate import FairGate
from mailfathom.domain.codes import StoreCode
from mailfathom.domain.content_storage import ObjectStoreConfig
from mailfathom.domain.errors import ContentMissingError, StoreError

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import ObjectIdentifierTypeDef

_MIME = "mime/"
_TEXT = "text/"
_MISSING = "The stored content of this email is missing."
_DAMAGED = "The stored content of this email is damaged."
_TEXT_MISSING = "The stored text of this email is missing."
_TEXT_DAMAGED = "The stored text of this email is damaged."
# A text object opens with the SHA-256 it is stored under, as octets.
_KEY_OCTETS = 32


# One bound per store configuration in a process, whatever number of `ObjectContentStore`s
# it opens on it (the services' and the preparer's): `Concurrency` is a process's bound.
_GATES: dict[ObjectStoreConfig, FairGate] = {}
_GATES_LOCK = threading.Lock()


def _gate(config: ObjectStoreConfig) -> FairGate:
    with _GATES_LOCK:
        gate = _GATES.get(config)
        if gate is None:
            gate = _GATES[config] = FairGate(config.concurrency)
        return gate


class ObjectContentStore:
    """Content in `config.bucket` under `config.prefix`. The client is made on first use
    (see `s3_client`), or given (tests speak to the store through a second one). Every
    request (read, upload, look-up, delete, listing) waits for one of the process's
    `concurrency` places for this configuration."""

    def __init__(self, config: ObjectStoreConfig, client: S3Client | None = None) -> None:
        self._config = config
        self._gate = _gate(config)
        self._made: S3Client | None = client
        self._lock = threading.Lock()
        self._uploads: ThreadPoolExecutor | None = None

    @property
    def config(self) -> ObjectStoreConfig:
        return self._config

    def _client(self) -> S3Client:
        with self._lock:
            if self._made is None:
                self._made = make_client(self._config)
            return self._made

    def object_name(self, key: str, *, text: bool = False) -> str:
        """The name the object holding `key`'s MIME (or its text) has in the bucket."""
        return f"{self._config.prefix}{_TEXT if text else _MIME}{key}"

    # -- writing -------------------------------------------------------------------------

    def put(self, raw: bytes) -> str:
        """Store one message; a damaged copy held under its key is replaced."""
        return self.write_many([raw])[0]

    def put_many(self, raws: Sequence[bytes]) -> list[str]:
        return self.write_many(raws)

    def write_many(
        self, raws: Sequence[bytes], texts: Sequence[bytes | None] | None = None
    ) -> list[str]:
        """Upload every message (and its text record, where given) and return every key, in
        order; each object is stored when this returns."""
        keys, records = keyed_records(raws, texts)
        uploads: list[tuple[str, bytes]] = []
        for key, (raw, text) in records.items():
            uploads.append((self.object_name(key), raw))
            if text is not None:
                uploads.append((self.object_name(key, text=True), bytes.fromhex(key) + text))
        self._each(self._upload, uploads)
        return keys

    def append_pending(
        self, raws: Sequence[bytes], texts: Sequence[bytes | None] | None = None
    ) -> tuple[list[str], list[PendingEntry]]:
        """`write_many`: an upload is durable once it returns, so nothing is left pending."""
        return self.write_many(raws, texts), []

    def commit_pending(self, entries: Sequence[PendingEntry]) -> None:
        """Nothing to do (see `append_pending`)."""

    def _upload(self, item: tuple[str, bytes]) -> None:
        name, octets = item
        checksum = base64.b64encode(hashlib.sha256(octets).digest()).decode("ascii")
        with self._gate, store_failures("store a message's content"):
            self._client().put_object(
                Bucket=self._config.bucket,
                Key=name,
                Body=octets,
                ChecksumAlgorithm="SHA256",
                ChecksumSHA256=checksum,
                ContentType="application/octet-stream",
            )

    def _each(
        self, action: Callable[[tuple[str, bytes]], None], items: list[tuple[str, bytes]]
    ) -> None:
        """`action` on every item, at most `concurrency` at a time; the first failure is
        raised once every request has ended."""
        if len(items) <= 1:
            for item in items:
                action(item)
            return
        with self._lock:
            if self._uploads is None:
                self._uploads = ThreadPoolExecutor(
                    max_workers=self._config.concurrency, thread_name_prefix="content-upload"
                )
            pool = self._uploads
        futures = [pool.submit(action, item) for item in items]
        failures = [f.exception() for f in futures]
        for failure in failures:
            if failure is not None:
                raise failure

    # -- reading -------------------------------------------------------------------------

    def get(self, key: str) -> bytes:
        if not CONTENT_KEY.match(key):
            raise ContentMissingError(_MISSING)
        raw = self._download(self.object_name(key))
        if raw is None:
            raise ContentMissingError(_MISSING)
        if hashlib.sha256(raw).hexdigest() != key:
            raise ContentMissingError(_DAMAGED)
        return raw

    def get_text(self, key: str, *, with_html: bool = True) -> tuple[str, str | None]:
        if not CONTENT_KEY.match(key):
            raise ContentMissingError(_TEXT_MISSING)
        stored = self._download(self.object_name(key, text=True))
        if stored is None:
            raise ContentMissingError(_TEXT_MISSING)
        if stored[:_KEY_OCTETS] != bytes.fromhex(key):
            raise ContentMissingError(_TEXT_DAMAGED)
        return decode_text(stored[_KEY_OCTETS:], with_html=with_html)

    def _download(self, name: str) -> bytes | None:
        """The object's octets, or None when the store holds none under `name`."""
        try:
            with self._gate:
                return read_object(
                    self._client(), self._config.bucket, name, "read a message's content"
                )
        except ObjectAbsent:
            return None

    def exists(self, key: str) -> bool:
        if not CONTENT_KEY.match(key):
            return False
        try:
            with self._gate, store_failures("look a message's content up"):
                self._client().head_object(Bucket=self._config.bucket, Key=self.object_name(key))
        except ObjectAbsent:
            return False
        return True

    def reachable(self) -> bool:
        """Whether the bucket answers now (a readiness check): True, or the coded error of
        a store that cannot be reached or refuses."""
        try:
            with self._gate, store_failures("reach the object store"):
                self._client().head_bucket(Bucket=self._config.bucket)
        except ObjectAbsent:
            raise StoreError(
                "The object store has no bucket of the configured name.",
                code=StoreCode.OBJECT_STORE_REFUSED,
            ) from None
        return True

    # -- removing ------------------------------------------------------------------------

    def discard(self, key: str) -> None:
        """Delete the message's objects. Another writer storing the same content meanwhile
        may lose its copy; a row naming it then reads as missing and is repaired."""
        if not CONTENT_KEY.match(key):
            return
        names: list[ObjectIdentifierTypeDef] = [
            {"Key": self.object_name(key)},
            {"Key": self.object_name(key, text=True)},
        ]
        with self._gate, store_failures("delete a message's content"):
            answer = self._client().delete_objects(
                Bucket=self._config.bucket, Delete={"Objects": names, "Quiet": True}
            )
        if answer.get("Errors"):
            raise StoreError(
                "The object store refused to delete a message's content.",
                code=StoreCode.OBJECT_STORE_REFUSED,
            )

    def reclaim(self) -> int:
        """Nothing to give back: `discard` deleted the objects. Returns 0."""
        return 0

    def sweep_temporary(self) -> int:
        """Nothing is left behind: an upload lands whole or not at all. Returns 0."""
        return 0

    def used_octets(self) -> int:
        """The size of every MIME and text object (one listing request per thousand)."""
        total = 0
        with self._gate, store_failures("list the stored content"):
            pages = self._client().get_paginator("list_objects_v2")
            for kind in (_MIME, _TEXT):
                prefix = f"{self._config.prefix}{kind}"
                for page in pages.paginate(Bucket=self._config.bucket, Prefix=prefix):
                    total += sum(int(entry.get("Size", 0)) for entry in page.get("Contents", []))
        return total

    def close(self) -> None:
        """Wait for the uploads in flight, then close the client. Neither wait is made under
        `_lock`: an upload still queued takes it to reach the client."""
        with self._lock:
            uploads, self._uploads = self._uploads, None
        if uploads is not None:
            uploads.shutdown(wait=True)
        with self._lock:
            made, self._made = self._made, None
        if made is not None:
            made.close()
