"""What the object-store adapter adds to the content store contract: objects named by the
hash, uploads carrying it, writers that may repeat each other, bounded concurrency, and a
store that refuses, cannot be reached or never answers reported by code, in bounded time,
never as missing content and never with a key or a secret in the text."""

from __future__ import annotations

import base64
import hashlib
import http.server
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, cast

import pytest

from mailfathom.adapters.content.objects import ObjectContentStore
from mailfathom.adapters.content.s3_client import make_client
from mailfathom.adapters.content.texts import encode_text
from mailfathom.domain.content_storage import ObjectStoreConfig
from mailfathom.domain.errors import ContentMissingError, StoreError
from servers._common import LOOPBACK, free_port
from servers.s3 import SECRET_KEY, S3Server

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client


def _names(server: S3Server, config: ObjectStoreConfig) -> list[str]:
    listing = server.admin_client().list_objects_v2(Bucket=config.bucket)
    return sorted(entry["Key"] for entry in listing.get("Contents", []))


def test_objects_are_named_by_the_hash_and_uploaded_with_it(
    s3_server: S3Server, object_store: ObjectStoreConfig
) -> None:
    store = ObjectContentStore(object_store)
    raw = b"Subject: named\r\n\r\nbody"
    (key,) = store.write_many([raw], [encode_text("body", None)[0]])
    assert _names(s3_server, object_store) == [f"mailfathom/mime/{key}", f"mailfathom/text/{key}"]
    head = s3_server.admin_client().head_object(
        Bucket=object_store.bucket, Key=f"mailfathom/mime/{key}", ChecksumMode="ENABLED"
    )
    assert head["ChecksumSHA256"] == base64.b64encode(hashlib.sha256(raw).digest()).decode()
    store.close()


def test_writers_repeating_each_other_leave_one_intact_copy(
    s3_server: S3Server, object_store: ObjectStoreConfig
) -> None:
    raws = [f"Subject: {n}\r\n\r\nbody {n}".encode() for n in range(20)]
    texts = [encode_text(f"body {n}", None)[0] for n in range(20)]
    stores = [ObjectContentStore(object_store) for _ in range(3)]
    results: list[list[str]] = []
    threads = [
        threading.Thread(target=lambda s=s: results.append(s.write_many(raws, texts)))
        for s in stores
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 3
    assert results[0] == results[1] == results[2]
    assert len(_names(s3_server, object_store)) == 40
    reader = ObjectContentStore(object_store)
    assert [reader.get(k) for k in results[0]] == raws
    for store in [*stores, reader]:
        store.close()


class _CountingStore(ObjectContentStore):
    """Counts the uploads in flight at once."""

    def __init__(self, config: ObjectStoreConfig) -> None:
        super().__init__(config)
        self.in_flight = 0
        self.most = 0
        self._counting = threading.Lock()

    def _upload(self, item: tuple[str, bytes]) -> None:
        with self._counting:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
        try:
            super()._upload(item)
        finally:
            with self._counting:
                self.in_flight -= 1


def test_a_batch_is_uploaded_concurrently_within_the_bound(object_store: ObjectStoreConfig) -> None:
    store = _CountingStore(replace(object_store, concurrency=3))
    raws = [f"message {n}".encode() * 200 for n in range(60)]
    keys = store.write_many(raws)
    assert 1 < store.most <= 3
    assert [store.get(k) for k in keys] == raws
    store.close()


def _assert_told_by_code(error: StoreError, code: int, key: str) -> None:
    assert error.code == code
    text = str(error)
    assert key not in text
    assert SECRET_KEY not in text
    assert "mailfathom/" not in text


def test_a_store_that_refuses_connections_is_a_coded_error_not_missing_content(
    object_store: ObjectStoreConfig,
) -> None:
    closed = replace(object_store, endpoint=f"http://{LOOPBACK}:{free_port()}", timeout_seconds=1)
    store = ObjectContentStore(closed)
    key = hashlib.sha256(b"held elsewhere").hexdigest()
    with pytest.raises(StoreError) as reading:
        store.get(key)
    _assert_told_by_code(reading.value, 21004, key)
    with pytest.raises(StoreError) as writing:
        store.write_many([b"held elsewhere"])
    _assert_told_by_code(writing.value, 21004, key)
    store.close()


@pytest.fixture
def silent_endpoint() -> Iterator[str]:
    """An address that accepts connections and never answers."""
    listener = socket.create_server((LOOPBACK, 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://{LOOPBACK}:{listener.getsockname()[1]}"
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    listener.close()


def test_a_store_that_never_answers_times_out_with_a_coded_error(
    object_store: ObjectStoreConfig, silent_endpoint: str
) -> None:
    store = ObjectContentStore(replace(object_store, endpoint=silent_endpoint, timeout_seconds=0.3))
    key = hashlib.sha256(b"anything").hexdigest()
    with pytest.raises(StoreError) as reading:
        store.get(key)
    _assert_told_by_code(reading.value, 21004, key)
    with pytest.raises(StoreError) as writing:
        store.put(b"anything")
    _assert_told_by_code(writing.value, 21004, key)
    store.close()


def test_a_bucket_that_does_not_exist_is_refused_by_code(object_store: ObjectStoreConfig) -> None:
    store = ObjectContentStore(replace(object_store, bucket="mf-no-such-bucket"))
    key = hashlib.sha256(b"anything").hexdigest()
    with pytest.raises(StoreError) as writing:
        store.put(b"anything")
    _assert_told_by_code(writing.value, 21005, key)
    store.close()


def test_a_store_over_tls_is_trusted_through_the_configured_ca_file(
    object_store: ObjectStoreConfig,
) -> None:
    server = S3Server(tls=True).start()
    try:
        trusted = replace(
            object_store,
            endpoint=server.endpoint,
            bucket=server.new_bucket(),
            ca_file=server.ca_path,
            timeout_seconds=2,
        )
        store = ObjectContentStore(trusted)
        key = store.put(b"over tls")
        assert store.get(key) == b"over tls"
        store.close()
        untrusting = ObjectContentStore(replace(trusted, ca_file=None))
        with pytest.raises(StoreError) as refused:
            untrusting.get(key)
        _assert_told_by_code(refused.value, 21004, key)
        untrusting.close()
    finally:
        server.close()


def test_without_the_s3_client_installed_the_store_says_so(
    object_store: ObjectStoreConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)
    store = ObjectContentStore(object_store)
    with pytest.raises(StoreError) as missing:
        store.get(hashlib.sha256(b"x").hexdigest())
    assert missing.value.code == 21006
    with pytest.raises(ContentMissingError):
        store.get("not a key")  # refused before any client is needed


def test_a_deployment_on_packs_never_imports_the_s3_client(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from mailfathom.bootstrap import Services\n"
        "from mailfathom.domain.config import DeploymentConfig, StoreConfig\n"
        f"config = DeploymentConfig(StoreConfig(data_dir=Path({str(tmp_path)!r})), accounts=())\n"
        "with Services.open(config) as services:\n"
        "    services.content.put(b'one person')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('boto3', 'botocore')))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert ran.stdout.strip() == "[]"


def test_readiness_asks_the_bucket(object_store: ObjectStoreConfig) -> None:
    """A process is ready only while its bucket answers; one that does not exist is refused
    by code, which the readiness check counts as not ready."""
    assert ObjectContentStore(object_store).reachable() is True
    missing = ObjectContentStore(replace(object_store, bucket="no-such-bucket-here"))
    with pytest.raises(StoreError) as refused:
        missing.reachable()
    assert refused.value.code == 21005


class _SlowClient:
    """Stands in for the S3 client where a test needs an upload to stay in flight: each
    upload waits until `release` is set."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Event()
        self.stored: list[str] = []
        self.closed = False

    def put_object(self, **request: object) -> None:
        self.entered.set()
        self.release.wait(timeout=60)
        self.stored.append(str(request["Key"]))

    def close(self) -> None:
        self.closed = True


def test_closing_the_store_with_uploads_in_flight_waits_for_them_and_returns(
    object_store: ObjectStoreConfig,
) -> None:
    client = _SlowClient()
    store = ObjectContentStore(replace(object_store, concurrency=1), cast("S3Client", client))
    writing = threading.Thread(target=store.write_many, args=([b"one", b"two", b"three"],))
    writing.start()
    assert client.entered.wait(timeout=30)
    closing = threading.Thread(target=store.close)
    closing.start()
    client.release.set()
    closing.join(timeout=30)
    writing.join(timeout=30)
    assert not closing.is_alive()
    assert not writing.is_alive()
    assert len(client.stored) == 3
    assert client.closed


def test_a_text_record_stored_under_another_messages_name_reads_as_damaged(
    s3_server: S3Server, object_store: ObjectStoreConfig
) -> None:
    store = ObjectContentStore(object_store)
    first, second = store.write_many(
        [b"Subject: first\r\n\r\none", b"Subject: second\r\n\r\ntwo"],
        [encode_text("one", None)[0], encode_text("two", None)[0]],
    )
    admin = s3_server.admin_client()
    admin.copy_object(
        Bucket=object_store.bucket,
        Key=store.object_name(second, text=True),
        CopySource={"Bucket": object_store.bucket, "Key": store.object_name(first, text=True)},
    )
    assert store.get_text(first) == ("one", None)
    with pytest.raises(ContentMissingError):
        store.get_text(second)
    store.close()


class _CutShort(http.server.BaseHTTPRequestHandler):
    """Answers every GET with `content`, cutting the body short (and the connection) on the
    first `cut` of them, as a store or a network failing midway through a read does."""

    content: ClassVar[bytes] = b""
    cut: ClassVar[int] = 0
    served: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.served.append(self.path)
        whole = len(self.served) > self.cut
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(self.content)))
        self.end_headers()
        self.wfile.write(self.content if whole else self.content[: len(self.content) // 2])
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def _cutting_server(content: bytes, cut: int) -> Iterator[str]:
    _CutShort.content, _CutShort.cut, _CutShort.served = content, cut, []
    server = http.server.ThreadingHTTPServer((LOOPBACK, 0), _CutShort)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{LOOPBACK}:{server.server_address[1]}"
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


@pytest.mark.parametrize("cut", [1, 2])
def test_a_read_cut_short_is_tried_again(object_store: ObjectStoreConfig, cut: int) -> None:
    raw = b"Subject: cut\r\n\r\n" + b"body " * 4000
    key = hashlib.sha256(raw).hexdigest()
    with _cutting_server(raw, cut) as endpoint:
        store = ObjectContentStore(replace(object_store, endpoint=endpoint, timeout_seconds=2))
        assert store.get(key) == raw
        assert len(_CutShort.served) == cut + 1
        store.close()


def test_a_read_cut_short_every_time_is_unreachable_after_the_attempts_it_names(
    object_store: ObjectStoreConfig,
) -> None:
    raw = b"Subject: cut\r\n\r\n" + b"body " * 4000
    key = hashlib.sha256(raw).hexdigest()
    with _cutting_server(raw, 100) as endpoint:
        store = ObjectContentStore(replace(object_store, endpoint=endpoint, timeout_seconds=2))
        with pytest.raises(StoreError) as reading:
            store.get(key)
        _assert_told_by_code(reading.value, 21004, key)
        assert "after 3 attempts" in str(reading.value)
        assert len(_CutShort.served) == 3
        store.close()


class _InFlight:
    """Counts the requests in flight at once through any number of clients."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0
        self._lock = threading.Lock()

    def client(self, real: S3Client) -> S3Client:
        counter = self

        class Counting:
            def __getattr__(self, name: str) -> object:
                method = getattr(real, name)
                if name not in ("put_object", "get_object", "head_object", "delete_objects"):
                    return method

                def counted(**request: object) -> object:
                    with counter._lock:
                        counter.now += 1
                        counter.most = max(counter.most, counter.now)
                    try:
                        answer = method(**request)
                        time.sleep(0.01)
                        return answer
                    finally:
                        with counter._lock:
                            counter.now -= 1

                return counted

        return cast("S3Client", Counting())


def test_every_store_of_a_process_shares_one_bound_for_reads_and_writes(
    object_store: ObjectStoreConfig,
) -> None:
    config = replace(object_store, concurrency=2)
    seed = ObjectContentStore(config)
    keys = seed.write_many([f"stored {n}".encode() for n in range(12)])
    seed.close()
    counter = _InFlight()
    stores = [ObjectContentStore(config, counter.client(make_client(config))) for _ in range(3)]
    batches = [[f"batch {s} {n}".encode() for n in range(12)] for s in range(2)]
    work = [
        threading.Thread(target=stores[0].write_many, args=(batches[0],)),
        threading.Thread(target=stores[1].write_many, args=(batches[1],)),
        *(threading.Thread(target=lambda k=k: stores[2].get(k)) for k in keys),
    ]
    for thread in work:
        thread.start()
    for thread in work:
        thread.join()
    assert 1 < counter.most <= 2
    assert [stores[2].get(k) for k in keys] == [f"stored {n}".encode() for n in range(12)]
    for store in stores:
        store.close()
