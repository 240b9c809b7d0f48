"""The `MessagePreparer` port: fetched octets become stored content and normalized values.

Hashing, writing the content file and normalizing are CPU and file work on octets already
fetched, so a batch can be handed to a pool of processes while the synchronizing thread goes on
fetching and committing: the steps overlap, and on a machine with several cores none of this
holds the interpreter lock of the thread that talks to the server and the database. Each part
of a batch is stored with one write and one flush of a pack, so the content is durable before
the synchronizer commits the rows that name it.
"""

from __future__ import annotations

import multiprocessing
import os
import select
import sys
import threading
import time
import types
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from pathlib import Path

from mailfathom.adapters.content.packs import PendingEntry
from mailfathom.adapters.content.places import ContentPlace, HeldContent, PackPlace
from mailfathom.adapters.content.texts import encode_text
from mailfathom.adapters.mime import normalize_headers, normalize_message
from mailfathom.app.sync.types import PreparedMessage
from mailfathom.domain.message import NormalizedMessage

# Below this many messages a batch is normalized in the calling thread: handing it to
# another process would cost more in transfer than it saves.
POOL_THRESHOLD = 24

# How much lower than the starting process the workers run (added to its nice value). The
# synchronizing thread is the pipeline's critical path: it commits each batch while the workers
# prepare the next ones, and when both cores are wanted at once a worker should wait rather
# than it. The same rule lets the reading tools, served at normal priority, come before
# background preparation. At 20,000 messages: 22.4 to 25.2 s against 25.3 to 26.9 s at equal
# priority, runs taken alternately.
WORKER_NICENESS = 10


_WORKER_STORES: dict[ContentPlace, HeldContent] = {}


def _worker_store(place: ContentPlace) -> HeldContent:
    store = _WORKER_STORES.get(place)
    if store is None:
        store = _WORKER_STORES[place] = place.open()
    return store


def _prepare_chunk(
    place: ContentPlace, items: Sequence[tuple[bytes, bool]]
) -> list[PreparedMessage]:
    """Normalize a chunk and store its whole messages with their text, durably, in one
    append."""
    whole, texts = _normalized(items)
    keys = _worker_store(place).write_many([raw for raw, _ in whole], [t for t, _ in texts])
    return _results(items, whole, texts, keys)


def _prepare_part(
    place: ContentPlace, items: Sequence[tuple[bytes, bool]]
) -> tuple[list[PreparedMessage], list[PendingEntry]]:
    """In a worker: what `_prepare_chunk` does, except that the append is neither flushed
    nor indexed here. The starting process does both once for every part of a batch (see
    `MimeMessagePreparer._make_durable`), so a worker never waits for the disk."""
    whole, texts = _normalized(items)
    keys, pending = _worker_store(place).append_pending(
        [raw for raw, _ in whole], [t for t, _ in texts]
    )
    return _results(items, whole, texts, keys), pending


def _normalized(
    items: Sequence[tuple[bytes, bool]],
) -> tuple[list[tuple[bytes, NormalizedMessage]], list[tuple[bytes, bytes]]]:
    """The whole messages of `items` normalized, and the encoded text record of each with
    its plain body in UTF-8."""
    whole = [(raw, normalize_message(raw)) for raw, headers in items if not headers]
    return whole, [encode_text(n.plain_text, n.html) for _, n in whole]


def _results(
    items: Sequence[tuple[bytes, bool]],
    whole: list[tuple[bytes, NormalizedMessage]],
    texts: list[tuple[bytes, bytes]],
    keys: list[str],
) -> list[PreparedMessage]:
    """One result per item, in order. Only the plain body goes back to the synchronizing
    process, for the lexical index, and as the UTF-8 octets just written: the HTML body is
    needed there no more than a second copy of the plain one."""
    prepared = iter(
        PreparedMessage(key, n.without_bodies(), plain)
        for key, (_, n), (_, plain) in zip(keys, whole, texts, strict=True)
    )
    return [
        PreparedMessage(None, normalize_headers(raw)) if headers else next(prepared)
        for raw, headers in items
    ]


class MimeMessagePreparer:
    def __init__(self, content: Path | ContentPlace, workers: int = 0) -> None:
        """Content goes to `content` (a directory of packs, or a place); `workers` processes
        prepare large batches, and 0 keeps everything in process."""
        self._place = PackPlace(content) if isinstance(content, Path) else content
        self._workers = workers
        self._pool: ProcessPoolExecutor | None = None
        # In this process, for the batches the workers prepare: flushing and indexing.
        self._content: HeldContent | None = None
        self._flushing: ThreadPoolExecutor | None = None

    def message(self, raw: bytes) -> NormalizedMessage:
        return normalize_message(raw)

    def headers(self, raw_header: bytes) -> NormalizedMessage:
        return normalize_headers(raw_header)

    def expect(self, count: int) -> None:
        """Start the worker processes now if `count` messages will need them, so their
        start-up overlaps the fetch of the first batch instead of delaying its result."""
        if self._workers > 0 and count >= POOL_THRESHOLD:
            self._ensure_pool()

    def start_batch(self, items: Sequence[tuple[bytes, bool]]) -> Future[list[PreparedMessage]]:
        """Begin preparing (raw, headers_only) pairs; the future yields them in order."""
        if self._workers <= 0 or len(items) < POOL_THRESHOLD:
            done: Future[list[PreparedMessage]] = Future()
            done.set_result(_prepare_chunk(self._place, items))
            return done
        pool = self._ensure_pool()
        size = max(1, -(-len(items) // (self._workers * 2)))
        parts = [
            pool.submit(_prepare_part, self._place, items[i : i + size])
            for i in range(0, len(items), size)
        ]
        combined: Future[list[PreparedMessage]] = Future()
        remaining = [len(parts)]
        counting = threading.Lock()
        flushing = self._flushing
        assert flushing is not None

        def finished(_: Future[tuple[list[PreparedMessage], list[PendingEntry]]]) -> None:
            # Runs on the pool's result thread, or on this one for a part already done.
            with counting:
                remaining[0] -= 1
                last = remaining[0] == 0
            if last:
                flushing.submit(self._make_durable, parts, combined)

        for part in parts:
            part.add_done_callback(finished)
        return combined

    def _make_durable(
        self,
        parts: list[Future[tuple[list[PreparedMessage], list[PendingEntry]]]],
        combined: Future[list[PreparedMessage]],
    ) -> None:
        """Flush and index what the parts of a batch appended, then hand the batch over.

        One thread does this for every batch, in the order they complete: each pack a batch
        touched is flushed once, and its index rows committed in one transaction, instead of
        once per part in the workers."""
        try:
            done = [part.result() for part in parts]
            assert self._content is not None
            self._content.commit_pending([entry for _, pending in done for entry in pending])
        except Exception as error:
            combined.set_exception(error)
        else:
            combined.set_result([message for prepared, _ in done for message in prepared])

    def _ensure_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # spawn: worker processes never inherit the database connections or the threads
            # of the process that starts them, and no fork server stays around beside them.
            pool = ProcessPoolExecutor(
                max_workers=self._workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_worker,
                initargs=(os.getpid(),),
            )
            # Every worker is started here, at once: a pool starts a process when a task
            # finds no idle one, and only here is the starting program kept out of them.
            with _main_module_left_out():
                for _ in range(self._workers):
                    pool.submit(_started)
            self._pool = pool
            self._content = self._place.open()
            self._flushing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="content-flush")
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        # After the pool: its last parts may still hand a batch to the flushing thread.
        if self._flushing is not None:
            self._flushing.shutdown(wait=True)
            self._flushing = None
        if self._content is not None:
            self._content.close()
            self._content = None


@contextmanager
def _main_module_left_out() -> Iterator[None]:
    """Start processes without running the starting program's main module in them.

    A spawned process re-runs the parent's `__main__` so that functions defined there can be
    called; nothing a worker runs is defined there, and for the `mailfathom` command it would
    import the whole command line, its web stack and database layer into every worker, for
    nothing but start-up time and memory."""
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def _started() -> None:
    """A task that does nothing: submitting it makes the pool start a worker process."""


def _start_worker(parent_pid: int) -> None:
    _exit_with_parent(parent_pid)
    with suppress(OSError):
        os.nice(WORKER_NICENESS)


def _exit_with_parent(parent_pid: int) -> None:
    """Make a worker end when the process that started the pool ends, however it ends.

    After a SIGKILL of the synchronizing process nothing would ever close the queue the
    worker waits on, so a watcher thread waits on the starting process and exits with it."""

    def watch() -> None:
        try:
            pidfd = os.pidfd_open(parent_pid)
        except (AttributeError, OSError):
            pidfd = None
        if pidfd is not None:
            select.select([pidfd], [], [])
            os._exit(1)
        while True:
            try:
                os.kill(parent_pid, 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:
                pass
            time.sleep(1.0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def default_workers() -> int:
    return max(1, (os.cpu_count() or 1))
