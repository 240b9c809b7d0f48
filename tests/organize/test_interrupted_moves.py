"""A move interrupted between its COPY and its EXPUNGE, on a Dovecot without MOVE, is finished
by the next pass: the copy the first attempt made is found (by Message-ID, among the UIDs the
destination gave out since), no second copy is made, the original is taken out, and the email
keeps its identifier. The same holds when the interruption comes after the stored row was
re-pointed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from mailfathom.adapters.imap.move_store import ImapMoveWriter
from mailfathom.adapters.imap.session import ImapSession
from mailfathom.adapters.sql.moves import SqlMoveLedger
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.organize.moves import MoveConvergence
from mailfathom.domain.errors import SyncError
from servers.dovecot import DovecotServer
from sync.helpers import imap_account_config, open_services, stored_rows

from .test_moves_dovecot import FOLDERS, _fill, _ids, _mailbox, _organize, _states, _user


class Interrupted(ImapMoveWriter):
    """Loses the connection right after the step named."""

    def __init__(self, session: ImapSession, after: str) -> None:
        super().__init__(session)
        self._after = after

    def transfer(self, source: str, uids: Sequence[int], destination: str) -> dict[int, int]:
        mapping = super().transfer(source, uids, destination)
        if self._after == "copy":
            raise SyncError("connection lost")
        return mapping

    def remove_originals(self, source: str, uids: Sequence[int]) -> None:
        if self._after == "repoint":
            raise SyncError("connection lost")
        super().remove_originals(source, uids)


@pytest.mark.parametrize("after", ["copy", "repoint"])
def test_an_interrupted_move_is_finished_without_a_second_copy(
    tmp_path: Path, dovecot_without_move: DovecotServer, after: str
) -> None:
    user = _user(dovecot_without_move)
    for remote in _mailbox(user):
        _fill(remote, "Interrupted one", "Interrupted two", "Bystander")
        account = imap_account_config(user, FOLDERS)
        with open_services(tmp_path, account) as services:
            sync = services.account_synchronizer()
            sync.run_once(account)
            ids = _ids(services, account)
            outcome = _organize(
                services, "archive", [ids["Interrupted one"], ids["Interrupted two"]]
            )
            session = services.connectors.open(account)
            assert isinstance(session, ImapSession)
            try:
                moves = MoveConvergence(
                    SqlMoveLedger(services.engine, SqlSyncStore(services.engine))
                )
                moves.converge(account.account_id, Interrupted(session, after))
            finally:
                session.close()
            assert {s for s, _ in _states(services, outcome)} == {"converging"}
            # The copies exist; the originals are still in the inbox.
            assert sorted(remote.subjects("Archive").values()) == [
                "Interrupted one",
                "Interrupted two",
            ]
            assert len(remote.subjects("INBOX")) == 3
            sync.run_once(account)
            sync.run_once(account)
            assert _states(services, outcome) == [("completed", None)] * 2
            assert sorted(remote.subjects("Archive").values()) == [
                "Interrupted one",
                "Interrupted two",
            ]
            assert list(remote.subjects("INBOX").values()) == ["Bystander"]
            rows = stored_rows(services, account.account_id)
            assert {r.subject: str(r.stored_email_id) for r in rows} == ids
