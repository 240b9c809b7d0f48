"""An APPEND the server stored but whose answer never came back, on a real Dovecot: a relay
between the deployment and the server passes the draft's APPEND on and cuts the connection
instead of passing the tagged OK back. Whatever comes next (the account's next pass, an edit,
a deletion) finds that copy by its Message-ID instead of appending a second one; the folder
is read with an independent IMAP client and counted by Message-ID."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from drafting.helpers import AGENT, PEER, drafting_config
from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.sql.drafts import SqlDraftStore
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.drafts import CopyState, DeleteOutcome, Draft
from servers.answer_cutting_proxy import AnswerCuttingProxy
from servers.dovecot import ImapAccount
from sync.helpers import RemoteMailbox

SUBJECT = "Bulbs for the autumn beds"
BODY = "Tulips along the fence, crocuses under the pear tree."


def _request(body: str = BODY) -> DraftRequest:
    register_all([SUBJECT, body])
    return DraftRequest(plain_text_body=body, account="work", subject=SUBJECT, to=[PEER])


@dataclass
class Relayed:
    services: Services
    proxy: AnswerCuttingProxy
    account: ImapAccount

    def draft(self, draft_id: uuid.UUID) -> Draft:
        found = SqlDraftStore(self.services.engine).find(draft_id)
        assert found is not None
        return found

    def copies(self, message_id: str) -> list[bytes]:
        """The messages in Drafts carrying `message_id`, as an independent client sees them."""
        remote = RemoteMailbox(self.account)
        try:
            typ, _ = remote.conn.select("Drafts", readonly=True)
            assert typ == "OK"
            typ, data = remote.conn.uid("SEARCH", "HEADER", "Message-ID", f'"{message_id}"')
            assert typ == "OK"
            uids = data[0].split() if data and data[0] else []
            found = []
            for uid in uids:
                typ, fetched = remote.conn.uid("FETCH", uid, "(BODY.PEEK[])")
                assert typ == "OK"
                found += [entry[1] for entry in fetched if isinstance(entry, tuple)]
            return found
        finally:
            remote.close()

    def next_pass(self) -> None:
        work = self.services.config.account("work")
        assert work is not None
        self.services.account_synchronizer().run_once(work)


@pytest.fixture
def relayed(tmp_path: Path, imap_account: ImapAccount) -> Iterator[Relayed]:
    remote = RemoteMailbox(imap_account)
    try:
        for folder in ("Drafts", "Sent"):
            assert remote.conn.create(folder)[0] == "OK"
    finally:
        remote.close()
    with AnswerCuttingProxy(imap_account.host, imap_account.port) as proxy:
        config = load_config(drafting_config(tmp_path, imap_account, port=proxy.port))
        with Services.open(config) as services:
            yield Relayed(services, proxy, imap_account)


def _saved_with_the_answer_lost(r: Relayed) -> Draft:
    r.proxy.armed.set()
    saved = r.services.drafting().save.save(AGENT, _request())
    r.proxy.armed.clear()
    assert r.proxy.cuts == 1
    assert saved.state is CopyState.HELD
    draft = r.draft(saved.draft_id)
    # The server stored it: one copy stands, which nothing here knows the UID of yet.
    assert len(r.copies(draft.message_id)) == 1
    return draft


def test_the_next_pass_finds_the_copy_instead_of_appending_another(relayed: Relayed) -> None:
    draft = _saved_with_the_answer_lost(relayed)
    relayed.next_pass()
    (copy,) = relayed.copies(draft.message_id)
    assert BODY.encode() in copy
    assert relayed.draft(draft.draft_id).copy_state is CopyState.FILED
    # The copy found is the one the draft knows: deleting the draft takes it out.
    deleted = relayed.services.drafting().delete.delete(AGENT, str(draft.draft_id))
    assert deleted.outcome is DeleteOutcome.DELETED
    assert relayed.copies(draft.message_id) == []


def test_an_edit_before_the_next_pass_takes_the_lost_copy_out(relayed: Relayed) -> None:
    draft = _saved_with_the_answer_lost(relayed)
    edited = relayed.services.drafting().update.update(
        AGENT, str(draft.draft_id), _request(BODY + " And snowdrops.")
    )
    assert edited.state is CopyState.FILED
    (copy,) = relayed.copies(draft.message_id)
    assert b"And snowdrops." in copy
    relayed.next_pass()
    assert len(relayed.copies(draft.message_id)) == 1


def test_an_edit_whose_answer_is_lost_leaves_one_copy_after_the_next_pass(
    relayed: Relayed,
) -> None:
    saved = relayed.services.drafting().save.save(AGENT, _request())
    assert saved.state is CopyState.FILED
    relayed.proxy.armed.set()
    edited = relayed.services.drafting().update.update(
        AGENT, str(saved.draft_id), _request(BODY + " Or daffodils.")
    )
    relayed.proxy.armed.clear()
    assert relayed.proxy.cuts == 1
    assert edited.state is CopyState.HELD
    message_id = relayed.draft(saved.draft_id).message_id
    assert len(relayed.copies(message_id)) == 2
    relayed.next_pass()
    (copy,) = relayed.copies(message_id)
    assert b"Or daffodils." in copy
    assert relayed.draft(saved.draft_id).copy_state is CopyState.FILED


def test_a_deletion_before_the_next_pass_leaves_no_copy_behind(relayed: Relayed) -> None:
    draft = _saved_with_the_answer_lost(relayed)
    relayed.services.drafting().delete.delete(AGENT, str(draft.draft_id))
    relayed.next_pass()
    assert relayed.copies(draft.message_id) == []
