"""Every state a draft and its drafts-folder copy can be in, on a real Dovecot, read back with
an independent IMAP client: held, filed, deleted, copyLeftBehind, pending, and an APPEND the
server refused finished by the account's next synchronization pass."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from drafting.helpers import AGENT, PEER, Drafting, drafting_deployment, open_drafting
from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.codes import Code
from mailfathom.domain.drafts import CopyState, DeleteOutcome
from mailfathom.domain.errors import Refusal
from servers.dovecot import ImapAccount
from sync.helpers import RemoteMailbox

from .helpers import drafting_config

SUBJECT = "Plans for the garden shed"
BODY = "Shall we paint the shed green this spring?"


def _request(body: str = BODY, to: tuple[str, ...] = (PEER,)) -> DraftRequest:
    register_all([SUBJECT, body])
    return DraftRequest(plain_text_body=body, account="work", subject=SUBJECT, to=list(to))


@pytest.fixture
def drafting(tmp_path: Path, imap_account: ImapAccount) -> Iterator[Drafting]:
    yield from open_drafting(tmp_path, imap_account)


def test_a_saved_draft_is_filed_with_the_draft_flag_and_its_own_bytes(
    drafting: Drafting,
) -> None:
    saved = drafting.services.drafting().save.save(AGENT, _request())
    assert saved.state is CopyState.FILED
    assert saved.revision == 1
    assert saved.recipient_count == 1
    remote = RemoteMailbox(drafting.account)
    try:
        flags = remote.flags("Drafts")
    finally:
        remote.close()
    assert len(flags) == 1
    assert "\\Draft" in next(iter(flags.values()))
    (copy,) = drafting.folder_messages("Drafts")
    assert BODY.encode() in copy


def test_an_account_without_a_drafts_folder_keeps_its_drafts_held(
    tmp_path: Path, imap_account: ImapAccount
) -> None:
    with drafting_deployment(tmp_path, imap_account, drafts_folder=None) as d:
        saved = d.services.drafting().save.save(AGENT, _request())
        assert saved.state is CopyState.HELD
        d.sync()
        assert d.folder_uids("Drafts") == []
        deleted = d.services.drafting().delete.delete(AGENT, str(saved.draft_id))
        assert deleted.outcome is DeleteOutcome.DELETED


def test_a_refused_append_stays_held_until_the_next_pass_files_it(
    tmp_path: Path, imap_account: ImapAccount
) -> None:
    # The drafts folder does not exist on the server: Dovecot refuses the APPEND.
    with drafting_deployment(tmp_path, imap_account, create=("Sent",)) as d:
        uses = d.services.drafting()
        saved = uses.save.save(AGENT, _request())
        assert saved.state is CopyState.HELD
        edited = uses.update.update(AGENT, str(saved.draft_id), _request(BODY + " Or blue."))
        assert edited.state is CopyState.HELD
        remote = RemoteMailbox(d.account)
        try:
            assert remote.conn.create("Drafts")[0] == "OK"
        finally:
            remote.close()
        d.sync()
        (copy,) = d.folder_messages("Drafts")
        assert b"Or blue." in copy
        # The pass stored the copy it appended, once.
        again = uses.update.update(AGENT, str(saved.draft_id), _request(BODY + " Or red."))
        assert again.state is CopyState.FILED
        (copy,) = d.folder_messages("Drafts")
        assert b"Or red." in copy


def test_three_edits_leave_one_copy_and_deleting_takes_it_out(drafting: Drafting) -> None:
    uses = drafting.services.drafting()
    saved = uses.save.save(AGENT, _request())
    for n in range(3):
        edited = uses.update.update(
            AGENT, str(saved.draft_id), _request(f"{BODY} Edit number {n}.")
        )
        assert edited.draft_id == saved.draft_id
        assert edited.revision == n + 2
        assert edited.state is CopyState.FILED
        (copy,) = drafting.folder_messages("Drafts")
        assert f"Edit number {n}.".encode() in copy
    deleted = uses.delete.delete(AGENT, str(saved.draft_id))
    assert deleted.outcome is DeleteOutcome.DELETED
    assert drafting.folder_uids("Drafts") == []
    with pytest.raises(Refusal) as again:
        uses.delete.delete(AGENT, str(saved.draft_id))
    assert again.value.code == Code.DRAFT_NOT_HELD


def test_a_drafts_folder_renamed_behind_our_back_leaves_the_copy_behind(
    drafting: Drafting,
) -> None:
    uses = drafting.services.drafting()
    saved = uses.save.save(AGENT, _request())
    assert saved.state is CopyState.FILED
    remote = RemoteMailbox(drafting.account)
    try:
        assert remote.conn.rename("Drafts", "Old drafts")[0] == "OK"
    finally:
        remote.close()
    deleted = uses.delete.delete(AGENT, str(saved.draft_id))
    assert deleted.outcome is DeleteOutcome.COPY_LEFT_BEHIND
    # The copy is where the owner can still see it, and nothing here touches it again.
    assert len(drafting.folder_uids("Old drafts")) == 1
    drafting.sync()
    assert len(drafting.folder_uids("Old drafts")) == 1


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_deletion_while_the_server_is_out_of_reach_is_pending_then_finished(
    drafting: Drafting,
) -> None:
    saved = drafting.services.drafting().save.save(AGENT, _request())
    assert saved.state is CopyState.FILED
    unreachable = load_config(drafting_config(drafting.root, drafting.account, port=_closed_port()))
    with Services.open(unreachable) as cut_off:
        deleted = cut_off.drafting().delete.delete(AGENT, str(saved.draft_id))
    assert deleted.outcome is DeleteOutcome.PENDING
    assert len(drafting.folder_uids("Drafts")) == 1
    drafting.sync()
    assert drafting.folder_uids("Drafts") == []


def test_passes_finishing_one_held_draft_at_once_file_one_copy(
    tmp_path: Path, imap_account: ImapAccount
) -> None:
    with drafting_deployment(tmp_path, imap_account, create=("Sent",)) as d:
        saved = d.services.drafting().save.save(AGENT, _request())
        assert saved.state is CopyState.HELD
        remote = RemoteMailbox(d.account)
        try:
            assert remote.conn.create("Drafts")[0] == "OK"
        finally:
            remote.close()
        barrier = threading.Barrier(8)

        def finish(_: int) -> None:
            copies = d.services.draft_copies()
            barrier.wait()
            copies.finish("work")

        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(finish, range(8)))
        assert len(d.folder_uids("Drafts")) == 1


def test_an_edit_out_of_reach_keeps_the_old_copy_until_the_pass_files_the_new(
    drafting: Drafting,
) -> None:
    saved = drafting.services.drafting().save.save(AGENT, _request())
    unreachable = load_config(drafting_config(drafting.root, drafting.account, port=_closed_port()))
    with Services.open(unreachable) as cut_off:
        edited = cut_off.drafting().update.update(
            AGENT, str(saved.draft_id), _request(BODY + " Or yellow.")
        )
    assert edited.state is CopyState.HELD
    assert edited.revision == 2
    # The folder still shows the draft: the old copy stays until the new one is in.
    (copy,) = drafting.folder_messages("Drafts")
    assert b"Or yellow." not in copy
    drafting.sync()
    (copy,) = drafting.folder_messages("Drafts")
    assert b"Or yellow." in copy
