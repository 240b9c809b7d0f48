"""The embedding worker beside synchronization, against Dovecot on SQLite and PostgreSQL:
mail a pass stores is embedded by the deployment's own embedding thread, junk never, and a
provider that refuses pauses the embedding while synchronization goes on."""

from __future__ import annotations

import threading
from pathlib import Path

import sqlalchemy as sa

from fakes.embedder import FakeEmbedder
from mailfathom.adapters.sql.schema import messages
from mailfathom.domain.config import FolderMapping
from mailfathom.domain.embedding import EmbeddingFailure
from mailfathom.domain.folders import FolderRole
from mailfathom.entrypoints.workers.synchronization import start_sync_threads
from servers.dovecot import ImapAccount
from waiting import wait_for

from .helpers import RemoteMailbox, imap_account_config, open_services, sample

FOLDERS = (
    FolderMapping("INBOX", "INBOX", FolderRole.INBOX),
    FolderMapping("Junk", "Junk", FolderRole.JUNK),
)


def test_mail_stored_by_passes_is_embedded_by_the_worker_and_junk_never(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox, database_url: str | None
) -> None:
    remote.conn.create("Junk")
    for i in range(5):
        remote.append(sample(f"Lease {i}", body=f"about the flat {i}"))
    remote.append(sample("Win a prize", body="lottery"), folder="Junk")
    account = imap_account_config(imap_account, FOLDERS, poll_interval_seconds=1)
    with open_services(tmp_path, account, database_url) as services:
        embedder = FakeEmbedder()
        embedder.fail_always(EmbeddingFailure.REFUSED)
        services.embedder = embedder
        generation = embedder.identity.generation
        fill = services.fill_states()
        stop = threading.Event()
        workers = start_sync_threads(services, [account], stop)
        assert "embedding" in [w.name for w in workers]
        try:

            def stored() -> int:
                with services.engine.connect() as c:
                    count = c.execute(sa.select(sa.func.count()).select_from(messages))
                    return int(count.scalar_one())

            # A refusing provider holds nothing up: the pass stores the mail.
            wait_for(lambda: stored() == 6, "the pass stored the mail")
            wait_for(lambda: embedder.failures() >= 1, "the provider asked")
            assert fill.fill_state(generation).embedded == 0
            embedder.fail_always(None)
            wait_for(
                lambda: fill.fill_state(generation).embedded == 5,
                "the stored mail embedded",
                timeout=90,
            )
            wait_for(lambda: fill.is_filled(generation), "the generation filled", timeout=90)
            remote.append(sample("Leak", body="water came through the ceiling"))
            wait_for(
                lambda: fill.fill_state(generation).embedded == 6,
                "new mail embedded",
                timeout=90,
            )
        finally:
            stop.set()
            for worker in workers:
                worker.join(timeout=30)
        sent = [text for batch in embedder.batches for text in batch]
        assert not [t for t in sent if "lottery" in t]
        assert any("water came through the ceiling" in t for t in sent)
