"""A move recorded for a message of a folder the owner then deleted and created again (a new
UIDVALIDITY, RFC 3501 section 2.3.1.1) must not move whichever message now carries the old
UID: the record ends dead-lettered as a message gone, and the folder's new mail stays put."""

from __future__ import annotations

from pathlib import Path

import pytest

from mailfathom.domain.mutations import MutationFailure
from servers.dovecot import DovecotServer
from sync.helpers import imap_account_config, open_services, sample, stored_rows

from .test_moves_dovecot import FOLDERS, _ids, _mailbox, _organize, _states, _user


def _uidvalidity(remote_conn: object, folder: str) -> int:
    import imaplib

    assert isinstance(remote_conn, imaplib.IMAP4)
    typ, data = remote_conn.status(folder, "(UIDVALIDITY)")
    assert typ == "OK"
    return int(str(data[0].decode()).rsplit("UIDVALIDITY", 1)[1].strip(" )"))


@pytest.mark.parametrize("action", ["archive", "trash"])
def test_a_move_from_a_recreated_folder_touches_no_newcomer(
    tmp_path: Path, dovecot: DovecotServer, action: str
) -> None:
    user = _user(dovecot)
    for remote in _mailbox(user):
        first_uid = remote.append(sample("Filed before"), "Projects")
        account = imap_account_config(user, FOLDERS)
        with open_services(tmp_path, account) as services:
            sync = services.account_synchronizer()
            sync.run_once(account)
            ids = _ids(services, account)
            outcome = _organize(services, action, [ids["Filed before"]])
            before = _uidvalidity(remote.conn, "Projects")
            assert remote.conn.delete("Projects")[0] == "OK"
            assert remote.conn.create("Projects")[0] == "OK"
            assert remote.append(sample("Newcomer"), "Projects") == first_uid
            assert _uidvalidity(remote.conn, "Projects") != before
            sync.run_once(account)
            assert _states(services, outcome) == [
                ("dead-lettered", int(MutationFailure.MESSAGE_GONE))
            ]
            assert list(remote.subjects("Projects").values()) == ["Newcomer"]
            assert remote.subjects("Archive") == {}
            assert remote.subjects("Trash") == {}
            rows = stored_rows(services, account.account_id)
            assert [r.subject for r in rows] == ["Newcomer"]
