"""Synchronizing a real Dovecot mailbox into a deployment whose content is on an S3-compatible
object store: content lands there (none on local disk), and an object deleted behind the
store's back reads as missing, asks for repair, and is restored by the next pass."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest

from mailfathom.adapters.content.objects import ObjectContentStore
from mailfathom.app.maintenance.verify_content import StoredContentReader
from mailfathom.bootstrap import Services
from mailfathom.domain.content_storage import ContentStoreKind, ObjectStoreConfig
from mailfathom.domain.errors import ContentMissingError
from servers.dovecot import ImapAccount
from servers.s3 import S3Server

from .helpers import RemoteMailbox, deployment, imap_account_config, sample, stored_rows


def test_an_object_deleted_behind_the_store_is_repaired_by_the_next_pass(
    tmp_path: Path,
    imap_account: ImapAccount,
    remote: RemoteMailbox,
    body_fetches: list[int],
    s3_server: S3Server,
    object_store: ObjectStoreConfig,
    database_url: str | None,
) -> None:
    # Enough messages for the preparer's worker processes, which write to the store too.
    uids = [remote.append(sample(f"Stored far away {i}")) for i in range(30)]
    account = imap_account_config(imap_account)
    config = deployment(tmp_path, account, database_url)
    store = replace(config.store, content_store=ContentStoreKind.S3, object_store=object_store)
    with Services.open(replace(config, store=store)) as services:
        assert isinstance(services.content, ObjectContentStore)
        sync = services.account_synchronizer()
        sync.run_once(account)
        rows = stored_rows(services, account.account_id)
        assert sorted(r.uid for r in rows) == sorted(uids)
        assert not list((tmp_path / "data").rglob("*.pack"))
        victim = next(r for r in rows if r.uid == uids[7])
        name = services.content.object_name(victim.content_key)
        admin = s3_server.admin_client()
        admin.delete_object(Bucket=object_store.bucket, Key=name)

        reader = StoredContentReader(services.content_repair, services.content)
        with pytest.raises(ContentMissingError) as raised:
            reader.read(victim.stored_email_id)
        assert raised.value.code == 55001
        assert reader.read(rows[0].stored_email_id) is not None

        body_fetches.clear()
        sync.run_once(account)
        assert body_fetches == [uids[7]]
        restored = admin.get_object(Bucket=object_store.bucket, Key=name)["Body"].read()
        assert hashlib.sha256(restored).hexdigest() == victim.content_key
        raw = reader.read(victim.stored_email_id)
        assert raw is not None
        assert hashlib.sha256(raw).hexdigest() == victim.content_key
        assert reader.check_account(account.account_id).bad == 0
