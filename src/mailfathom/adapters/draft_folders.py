"""The owner's drafts folder: the folder each account maps to the drafts role, written into a
local account's Maildir folder or appended (with \\Draft) to an IMAP account's folder.

On IMAP a copy is known by the UIDVALIDITY and UID of the server's APPENDUID answer and taken
out by UID alone (UIDPLUS, RFC 4315); a server without UIDPLUS gets no copy. A refusal (NO or
BAD, a folder that is not there) is told from a server out of reach, which a later pass may
still finish. Before each APPEND the folder's UIDVALIDITY and UIDNEXT (STATUS) are handed to
the caller to write down: a server may store the copy and the answer still never arrive, and
the copy is then found by its Message-ID from that UID on rather than appended again. A local
folder needs no such note: a copy is written under a name of its own, once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from mailfathom.adapters.imap.session import CommandRefused, ImapConnector, ImapSession
from mailfathom.adapters.local.maildir import LocalConnector
from mailfathom.app.drafting.ports import CopyRefused, CopyUnreachable
from mailfathom.domain.config import AccountConfig, AccountKind, DeploymentConfig
from mailfathom.domain.drafts import AppendMark, CopyPlace
from mailfathom.domain.errors import MailFathomError
from mailfathom.domain.folders import FolderRole

_DRAFT_FLAG = b"\\Draft"
T = TypeVar("T")


class DraftFolderCopies:
    def __init__(
        self, config: DeploymentConfig, local: LocalConnector, imap: ImapConnector
    ) -> None:
        self._config = config
        self._local = local
        self._imap = imap

    def _account(self, account_id: str) -> AccountConfig:
        account = self._config.account(account_id)
        if account is None:
            raise CopyRefused("the account is not configured")
        return account

    def drafts_folder(self, account_id: str) -> str | None:
        account = self._config.account(account_id)
        if account is None:
            return None
        found = next((f for f in account.folders if f.role is FolderRole.DRAFTS), None)
        return None if found is None else found.remote_name

    def append(
        self,
        account_id: str,
        folder: str,
        mime: bytes,
        name: str,
        noting: Callable[[AppendMark], None],
    ) -> CopyPlace:
        account = self._account(account_id)
        if account.kind is AccountKind.LOCAL:
            return self._append_local(account_id, folder, mime, name)

        def appended(session: ImapSession) -> CopyPlace:
            if not session.supports_uidplus:
                raise CopyRefused("the server lacks UIDPLUS")
            uidvalidity, uid_next = session.folder_next(folder)
            noting(AppendMark(folder, uidvalidity, uid_next))
            uidvalidity, uid = session.append_with_uid(folder, mime, flags=(_DRAFT_FLAG,))
            return CopyPlace(folder, uidvalidity, uid)

        return self._on_server(account, appended)

    def find_copy(self, account_id: str, mark: AppendMark, message_id: str) -> CopyPlace | None:
        account = self._account(account_id)
        if account.kind is AccountKind.LOCAL:
            return None
        found = self._on_server(
            account,
            lambda session: session.appended_since(
                mark.folder, mark.uidvalidity, mark.since_uid, message_id
            ),
        )
        if not found:
            return None
        return CopyPlace(mark.folder, mark.uidvalidity, min(found))

    def remove(self, account_id: str, place: CopyPlace) -> None:
        account = self._account(account_id)
        if account.kind is AccountKind.LOCAL:
            self._remove_local(account_id, place)
            return
        self._on_server(
            account, lambda session: session.expunge_uid(place.folder, place.uidvalidity, place.uid)
        )

    def _on_server(self, account: AccountConfig, work: Callable[[ImapSession], T]) -> T:
        """`work` on a session of its own, a refusal told from a server out of reach."""
        session = self._open(account)
        try:
            return work(session)
        except CommandRefused as refused:
            raise CopyRefused("the server refused the command") from refused
        except MailFathomError as failure:
            raise CopyUnreachable("the server was lost") from failure
        finally:
            session.close()

    def _open(self, account: AccountConfig) -> ImapSession:
        try:
            return self._imap.open(account)
        except MailFathomError as failure:  # unreachable, refused credentials, no secret
            raise CopyUnreachable("the server could not be reached") from failure

    def _append_local(self, account_id: str, folder: str, mime: bytes, name: str) -> CopyPlace:
        try:
            maildir = self._local.folder(account_id, folder)
            maildir.deliver_once(mime, f"{name}.draft", flags="D")
            uidvalidity, paths = maildir.scan()
        except (OSError, MailFathomError) as failure:
            raise CopyUnreachable("the local folder could not be written") from failure
        uid = next(
            (u for u, path in paths.items() if path.name.split(":2,", 1)[0] == f"{name}.draft"),
            None,
        )
        if uid is None:
            raise CopyRefused("the copy is not in the folder")
        return CopyPlace(folder, uidvalidity, uid)

    def _remove_local(self, account_id: str, place: CopyPlace) -> None:
        try:
            maildir = self._local.folder(account_id, place.folder)
            uidvalidity, paths = maildir.scan()
        except (OSError, MailFathomError) as failure:
            raise CopyUnreachable("the local folder could not be read") from failure
        if uidvalidity != place.uidvalidity:
            raise CopyRefused("the folder no longer names that copy")
        path = paths.get(place.uid)
        if path is not None:
            path.unlink(missing_ok=True)
