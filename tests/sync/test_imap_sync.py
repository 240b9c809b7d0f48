"""Synchronizing a real Dovecot mailbox into the store."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from mailfathom.adapters.imap.session import ImapSession
from mailfathom.app.maintenance.verify_content import StoredContentReader
from mailfathom.app.reading.get_email_content import ContentRequest
from mailfathom.app.sync.types import FetchedMessage
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.config import FolderMapping, SyncMode
from mailfathom.domain.content_state import ContentState
from mailfathom.domain.errors import ContentMissingError
from mailfathom.domain.folders import FolderRole
from servers.dovecot import DovecotServer, ImapAccount
from waiting import wait_for

from .helpers import (
    RemoteMailbox,
    damage_content,
    deployment,
    imap_account_config,
    open_services,
    packs,
    sample,
    stored_rows,
)

_READER = Caller(permissions=ALL_PERMISSIONS, label="reader")


def test_initial_sync_stores_every_message_once_and_resync_fetches_no_body(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox, body_fetches: list[int]
) -> None:
    uids = [remote.append(sample(f"Message {i}")) for i in range(30)]
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        progress: list[tuple[str, int, int]] = []
        sync.run_once(account, progress=lambda *event: progress.append(event))
        assert progress[0] == ("INBOX", 0, 30)
        assert progress[-1] == ("INBOX", 30, 30)
        rows = stored_rows(services, account.account_id)
        assert sorted(r.uid for r in rows) == sorted(uids)
        assert len({r.stored_email_id for r in rows}) == 30
        assert sorted(body_fetches) == sorted(uids)

        body_fetches.clear()
        report = sync.run_once(account)
        assert body_fetches == []
        assert report.folders[0].fetched_bodies == 0
        assert len(stored_rows(services, account.account_id)) == 30


def test_synchronizing_never_sets_the_seen_flag(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    uid = remote.append(sample("Unread on the server"))
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        services.account_synchronizer().run_once(account)
        (row,) = stored_rows(services, account.account_id)
        assert row.seen is False
    assert "\\Seen" not in remote.flags()[uid]


def test_flag_changes_and_expunges_made_elsewhere_are_reflected(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox, body_fetches: list[int]
) -> None:
    uids = [remote.append(sample(f"M{i}")) for i in range(5)]
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        remote.store(uids[0], "+FLAGS", "\\Seen \\Flagged")
        remote.store(uids[1], "+FLAGS", "$Label1 Work")
        remote.expunge(uids[2])
        body_fetches.clear()
        report = sync.run_once(account).folders[0]
        assert body_fetches == []
        assert report.removed == 1
        rows = {r.uid: r for r in stored_rows(services, account.account_id)}
        assert set(rows) == {uids[0], uids[1], uids[3], uids[4]}
        assert rows[uids[0]].seen
        assert rows[uids[0]].flagged
        assert services.store.stored_flags(rows[uids[1]].folder_id, rows[uids[1]].uidvalidity)[
            uids[1]
        ].flags.keywords == {"$label1", "work"}
        remote.store(uids[0], "-FLAGS", "\\Seen")
        sync.run_once(account)
        rows = {r.uid: r for r in stored_rows(services, account.account_id)}
        assert not rows[uids[0]].seen
        assert rows[uids[0]].flagged


def test_new_mail_after_the_first_pass_is_fetched_alone(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox, body_fetches: list[int]
) -> None:
    for i in range(3):
        remote.append(sample(f"Old {i}"))
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        body_fetches.clear()
        new_uid = remote.append(sample("New"))
        sync.run_once(account)
        assert body_fetches == [new_uid]
        assert len(stored_rows(services, account.account_id)) == 4


def test_uidvalidity_reset_keeps_identities_without_duplicates(
    tmp_path: Path, dovecot: DovecotServer, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    for i in range(6):
        remote.append(sample(f"Kept {i}"))
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        before = {
            r.message_id_header: r.stored_email_id
            for r in stored_rows(services, account.account_id)
        }
        remote.close()
        new_validity = dovecot.reset_uidvalidity(imap_account.username)
        report = sync.run_once(account).folders[0]
        assert report.uidvalidity_reset
        rows = stored_rows(services, account.account_id)
        assert len(rows) == 6
        assert {r.uidvalidity for r in rows} == {new_validity}
        assert {r.message_id_header: r.stored_email_id for r in rows} == before
        assert sync.run_once(account).folders[0].fetched_bodies == 0


def test_uidvalidity_reset_with_changed_contents_replaces_only_what_changed(
    tmp_path: Path, dovecot: DovecotServer, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    uids = [remote.append(sample(f"Item {i}")) for i in range(4)]
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        remote.expunge(uids[0])
        remote.close()
        dovecot.reset_uidvalidity(imap_account.username)
        dovecot.save_message(imap_account.username, sample("Arrived during the reset"))
        sync.run_once(account)
        subjects = sorted(r.subject for r in stored_rows(services, account.account_id))
        assert subjects == ["Arrived during the reset", "Item 1", "Item 2", "Item 3"]


def test_messages_over_the_size_limit_are_stored_without_mime(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    remote.append(sample("Small"))
    remote.append(sample("Large", body="x" * 5000 + "\n"))
    account = imap_account_config(imap_account, max_message_octets=3000)
    with open_services(tmp_path, account) as services:
        services.account_synchronizer().run_once(account)
        rows = {r.subject: r for r in stored_rows(services, account.account_id)}
        assert rows["Large"].content_state == ContentState.EXCEEDED_SIZE_LIMIT.value
        assert rows["Large"].content_key is None
        assert rows["Large"].attachment_count is None
        assert rows["Small"].content_state == ContentState.STORED.value


def test_mail_arriving_at_the_storage_ceiling_is_fetched_once_there_is_room(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    first = sample("First", body="a" * 1500 + "\n")
    remote.append(first)
    remote.append(sample("Second of two halves", body="b" * 1500 + "\n"))
    account = imap_account_config(imap_account, storage_ceiling_octets=len(first) + 200)
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        rows = {r.subject: r for r in stored_rows(services, account.account_id)}
        assert rows["First"].content_state == ContentState.STORED.value
        assert rows["Second of two halves"].content_state == ContentState.AWAITING_HEADROOM.value
        raised = replace(account, storage_ceiling_octets=10 * len(first))
        sync.run_once(raised)
        rows = {r.subject: r for r in stored_rows(services, account.account_id)}
        assert rows["Second of two halves"].content_state == ContentState.STORED.value
        assert rows["Second of two halves"].content_key is not None


def test_several_folders_are_synchronized_and_absent_ones_reported(
    tmp_path: Path, dovecot: DovecotServer, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    dovecot.create_folder(imap_account.username, "Archive")
    remote.append(sample("In inbox"))
    remote.append(sample("In archive"), folder="Archive")
    account = imap_account_config(
        imap_account,
        folders=(
            FolderMapping("INBOX", "INBOX", FolderRole.INBOX),
            FolderMapping("Archive", "Archive", FolderRole.ARCHIVE),
            FolderMapping("Nowhere", "Nowhere"),
        ),
    )
    with open_services(tmp_path, account) as services:
        result = services.account_synchronizer().run_once(account)
        assert result.missing_folders == ("Nowhere",)
        assert sorted(r.subject for r in stored_rows(services, account.account_id)) == [
            "In archive",
            "In inbox",
        ]
        freshness = {
            f.alias: f.last_committed_at for f in services.overview.folders_of(account.account_id)
        }
        assert freshness["INBOX"] is not None
        assert freshness["Archive"] is not None
        assert freshness["Nowhere"] is None


def test_push_mode_sees_a_new_message_within_seconds(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    remote.append(sample("Waiting there before the push"))
    account = imap_account_config(imap_account, sync_mode=SyncMode.PUSH)
    with open_services(tmp_path, account) as services:
        stop = threading.Event()
        worker = threading.Thread(
            target=services.account_synchronizer().run_forever, args=(account, stop), daemon=True
        )
        worker.start()
        try:
            wait_for(
                lambda: len(stored_rows(services, account.account_id)) == 1,
                "the first message was not stored",
                timeout=20,
            )
            appended_at = time.monotonic()
            remote.append(sample("Pushed through IDLE"))
            wait_for(
                lambda: len(stored_rows(services, account.account_id)) == 2,
                "the second message was not stored",
                timeout=15,
            )
            elapsed = time.monotonic() - appended_at
        finally:
            stop.set()
            worker.join(timeout=60)
        assert not worker.is_alive()
        assert elapsed < 15


def test_missing_content_becomes_a_repair_request_that_the_next_pass_fulfils(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox, body_fetches: list[int]
) -> None:
    uids = [remote.append(sample(f"Kept {i}")) for i in range(3)]
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        victim = next(r for r in stored_rows(services, account.account_id) if r.uid == uids[1])
        damage_content(services.content, victim.content_key)
        reader = StoredContentReader(services.content_repair, services.content)
        with pytest.raises(ContentMissingError) as raised:
            reader.read(victim.stored_email_id)
        assert raised.value.code == 55001
        with pytest.raises(ContentMissingError):
            reader.read(victim.stored_email_id)
        body_fetches.clear()
        sync.run_once(account)
        assert body_fetches == [uids[1]]
        assert reader.read(victim.stored_email_id) is not None
        after = next(r for r in stored_rows(services, account.account_id) if r.uid == uids[1])
        assert after.stored_email_id == victim.stored_email_id


def test_a_damaged_body_text_is_refused_then_repaired_into_the_database(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox, body_fetches: list[int]
) -> None:
    # A pass keeps each body in the content store right after the message's MIME. When that
    # text is damaged, a read fails that message alone and asks for repair; the next pass
    # fetches the message again, and its body is then kept in the database.
    uids = [remote.append(sample(f"Kept {i}", body=f"Body number {i}\n")) for i in range(3)]
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        victim = next(r for r in stored_rows(services, account.account_id) if r.uid == uids[1])
        location = packs(services).locate(victim.content_key)
        assert location is not None
        with location.path.open("r+b") as pack:  # inside the text, after the MIME
            pack.seek(location.offset + location.length + 20)
            pack.write(b"#")
        reading = services.reading().content
        wanted = ContentRequest(stored_email_ids=[str(victim.stored_email_id)])
        (entry,) = reading.read(_READER, wanted).emails
        assert entry.content is None
        assert entry.failure is not None
        assert entry.failure.code == 55001
        assert services.content.get(victim.content_key)  # the MIME itself is intact
        body_fetches.clear()
        sync.run_once(account)
        assert body_fetches == [uids[1]]
        (entry,) = reading.read(_READER, wanted).emails
        assert entry.failure is None
        assert entry.content is not None
        assert "Body number 1" in entry.content.body.plain_text.text


def test_verification_files_repair_requests_for_every_unreadable_copy(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    for i in range(4):
        remote.append(sample(f"V{i}"))
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        services.account_synchronizer().run_once(account)
        rows = stored_rows(services, account.account_id)
        damage_content(services.content, rows[0].content_key)
        location = packs(services).locate(rows[1].content_key)
        assert location is not None
        with location.path.open("r+b") as pack:  # the bodies kept after the MIME
            pack.seek(location.offset + location.length + 20)
            pack.write(b"#")
        reader = StoredContentReader(services.content_repair, services.content)
        assert reader.verify_all(account.account_id) == 2
        services.account_synchronizer().run_once(account)
        assert reader.verify_all(account.account_id) == 0


def test_the_imap_session_keeps_no_protocol_trace_that_could_hold_secrets(
    tmp_path: Path, imap_account: ImapAccount
) -> None:
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        session = services.connectors.open(account)
        try:
            assert session._imap.debug == 0  # type: ignore[attr-defined]
        finally:
            session.close()


class _ConnectionLost(Exception):
    """Stands for the connection failing while a batch is fetched."""


def test_a_fetch_failing_mid_pass_leaves_no_helper_behind_and_the_next_pass_completes(
    tmp_path: Path,
    imap_account: ImapAccount,
    remote: RemoteMailbox,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    uids = [remote.append(sample(f"Message {i}")) for i in range(30)]
    account = imap_account_config(imap_account)
    config = deployment(tmp_path, account)
    config = replace(config, sync=replace(config.sync, batch_messages=5))
    original = ImapSession.fetch_bodies
    calls: list[list[int]] = []

    def failing_third(self: ImapSession, wanted: list[int]) -> Iterator[FetchedMessage]:
        calls.append(list(wanted))
        if len(calls) == 3:
            raise _ConnectionLost
        return original(self, wanted)

    monkeypatch.setattr(ImapSession, "fetch_bodies", failing_third)
    with Services.open(config) as services:
        # The third batch's fetch fails on the helper thread while the first batch commits.
        with pytest.raises(_ConnectionLost):
            services.account_synchronizer().run_once(account)
        helpers = [t for t in threading.enumerate() if t.name.startswith("imap-fetch")]
        assert helpers == []
        assert len(stored_rows(services, account.account_id)) < 30
        monkeypatch.setattr(ImapSession, "fetch_bodies", original)
        services.account_synchronizer().run_once(account)
        rows = stored_rows(services, account.account_id)
        assert sorted(r.uid for r in rows) == sorted(uids)
