"""An IMAP mailbox session (imapclient for the conversation, lean parsers for bulk fetches).

Folders are opened with EXAMINE and bodies read with BODY.PEEK[], so nothing this session does
can set \\Seen (RFC 3501 sections 6.3.2 and 6.4.5). Where the server offers QRESYNC it is
enabled (RFC 7162 section 3.2.3), which makes every EXAMINE report HIGHESTMODSEQ and lets a
UID FETCH ask for expunges since a mod-sequence with the VANISHED modifier.
"""

from __future__ import annotations

import contextlib
import imaplib
import re
import socket
import ssl
from collections.abc import Iterator, Sequence
from typing import Any

import imapclient
from imapclient import exceptions as imap_errors

from mailfathom.adapters.imap.login import log_in
from mailfathom.adapters.imap.responses import (
    FetchItems,
    compress_uids,
    header_fields,
    message_id_from_header,
    parse_uid_set,
)
from mailfathom.adapters.imap.uid_listing import (
    MAX_UID,
    fits_whole,
    uids_in_set,
    window_span,
    windows,
)
from mailfathom.adapters.oauth.grant_health import GrantHealth
from mailfathom.adapters.oauth.sasl import OAuthLogin
from mailfathom.adapters.oauth.tokens import AccessTokens, process_tokens
from mailfathom.app.sync.types import (
    ChangeSet,
    EnvelopeItem,
    FetchedMessage,
    FlagChange,
    FolderStatus,
)
from mailfathom.domain.config import AccountConfig, TlsMode
from mailfathom.domain.content_state import RemoteFlags
from mailfathom.domain.errors import MailFathomError, SyncError
from mailfathom.domain.identifiers import parse_msg_ids
from mailfathom.domain.role_proposal import ServerFolder

_APPENDUID = re.compile(rb"\[APPENDUID (\d+) (\d+)\]", re.IGNORECASE)

FETCH_CHUNK = 250
# The longest response line imaplib accepts (its `_MAXLINE`); commands whose one-line answer
# grows with the folder are planned so that answer stays within half of it.
LINE_LIMIT: int = getattr(imaplib, "_MAXLINE", 1_000_000)
_ESEARCH_ALL = re.compile(rb"\bALL ([0-9:,]+)")
_NETWORK_ERRORS = (OSError, socket.timeout, imaplib.IMAP4.error, imap_errors.IMAPClientError)


_CHANGE_KEYS = ("EXISTS", "EXPUNGE", "FETCH", "VANISHED", "RECENT")


def _reports_change(response: object) -> bool:
    """Whether an IDLE response announces new, changed or expunged mail."""
    if not isinstance(response, tuple) or len(response) < 2:
        return False
    kinds = {b"EXISTS", b"EXPUNGE", b"FETCH", b"VANISHED", b"RECENT"}
    return response[1] in kinds or response[0] in kinds


class CommandRefused(SyncError):
    """The server answered a command with NO or BAD: the connection stands, and asking again
    the same way will not help."""


class ImapConnector:
    """Opens a session per call. `tokens` gives the access tokens of accounts that log in
    with OAuth (the process's own by default, so every connector shares them); `health`
    is where their logins report how the account's grant fared. `line_limit` is the longest
    answer line the sessions plan for (see `ImapSession`)."""

    line_limit: int = LINE_LIMIT

    def __init__(
        self, tokens: AccessTokens | None = None, health: GrantHealth | None = None
    ) -> None:
        self._tokens = tokens
        self._health = health

    def _oauth(self, account: AccountConfig) -> OAuthLogin | None:
        if account.oauth is None:
            return None
        tokens = self._tokens if self._tokens is not None else process_tokens()
        return OAuthLogin(account.account_id, account.oauth, tokens, self._health)

    def change_watch(self, account: AccountConfig) -> None:
        """An IMAP mailbox is watched through a session (IDLE), never from outside one."""
        return

    def open(self, account: AccountConfig) -> ImapSession:
        if account.imap is None:
            raise SyncError(f"Account '{account.account_id}' has no IMAP connection.")
        settings = account.imap
        try:
            context = ssl.create_default_context() if settings.tls is not TlsMode.NONE else None
            client = imapclient.IMAPClient(
                settings.host,
                port=settings.port,
                ssl=settings.tls is TlsMode.IMPLICIT,
                ssl_context=context,
                timeout=settings.timeout_seconds,
            )
            # imapclient raises imaplib's debug level, so imaplib formats every command and
            # response (the LOGIN line and message literals included) for a logger before
            # anything decides whether to log it. That is a secret and mail content on their
            # way into a log record, and on bulk fetches it costs more than the parsing.
            client._imap.debug = 0
            if settings.tls is TlsMode.STARTTLS:
                client.starttls(context)
        except _NETWORK_ERRORS as exc:
            raise SyncError(
                f"The mail server of account '{account.account_id}' could not be reached."
            ) from exc
        try:
            log_in(client, account, self._oauth(account), self._health)
        except MailFathomError:
            _quietly_close(client)
            raise
        except _NETWORK_ERRORS as exc:
            _quietly_close(client)
            raise SyncError(
                f"The mail server of account '{account.account_id}' failed during login."
            ) from exc
        except BaseException:  # the account's health could not be written, for one
            _quietly_close(client)
            raise
        return ImapSession(client, account.account_id, line_limit=self.line_limit)


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _quietly_close(client: Any) -> None:
    # The session is being abandoned either way; a failing LOGOUT changes nothing.
    with contextlib.suppress(Exception):
        client.logout()


class ImapSession:
    """One logged-in connection. `line_limit` is the longest response line the connection
    accepts (imaplib's own limit by default): the commands whose one-line answer grows with
    the folder (UID SEARCH) ask about windows of UIDs small enough for each answer to stay
    within half of it."""

    def __init__(self, client: Any, account_id: str, line_limit: int = LINE_LIMIT) -> None:
        self._client = client
        self._budget = line_limit // 2
        self._imap: imaplib.IMAP4 = client._imap  # the underlying imaplib connection
        self._account_id = account_id
        client.normalise_times = False
        caps = {c.upper() for c in client.capabilities()}
        self._condstore = b"CONDSTORE" in caps or b"QRESYNC" in caps
        self._qresync = b"QRESYNC" in caps
        self._idle = b"IDLE" in caps
        self._uidplus = b"UIDPLUS" in caps
        self._move = b"MOVE" in caps
        self._esearch = b"ESEARCH" in caps
        if self._qresync:
            self._guard(lambda: client.enable("QRESYNC"))
        elif self._condstore:
            self._guard(lambda: client.enable("CONDSTORE"))
        self._selected: str | None = None
        self._exists = 0
        self._uid_next: int | None = None

    @property
    def supports_condstore(self) -> bool:
        return self._condstore

    @property
    def supports_qresync(self) -> bool:
        return self._qresync

    @property
    def supports_idle(self) -> bool:
        return self._idle

    @property
    def supports_move(self) -> bool:
        return self._move

    @property
    def supports_uidplus(self) -> bool:
        return self._uidplus

    def _guard(self, action: Any) -> Any:
        try:
            return action()
        except _NETWORK_ERRORS as exc:
            raise SyncError(
                f"The mail server of account '{self._account_id}' failed a command."
            ) from exc

    def list_folders(self) -> list[str]:
        return [str(name) for _flags, _delim, name in self._guard(self._client.list_folders)]

    def create_folder(self, remote_name: str) -> bool:
        """CREATE, then SUBSCRIBE (RFC 3501 sections 6.3.3, 6.3.6); False when the server
        answers NO to the CREATE. A dropped connection raises `SyncError`."""
        try:
            self._client.create_folder(remote_name)
        except (OSError, imaplib.IMAP4.abort) as exc:
            raise SyncError(
                f"The mail server of account '{self._account_id}' failed a command."
            ) from exc
        except (imaplib.IMAP4.error, imap_errors.IMAPClientError):
            return False
        # A folder left unsubscribed is still created; clients that list only subscribed
        # folders would not show it, so the subscription is asked for but not required.
        with contextlib.suppress(imaplib.IMAP4.error, imap_errors.IMAPClientError):
            self._client.subscribe_folder(remote_name)
        return True

    def server_folders(self) -> list[ServerFolder]:
        """Every folder with its LIST attributes, special-use ones included (RFC 6154
        section 2 has a server return them on a plain LIST)."""
        found = []
        for flags, delimiter, name in self._guard(self._client.list_folders):
            attributes = frozenset(_text(flag).lower() for flag in flags)
            found.append(ServerFolder(str(name), attributes, _text(delimiter) or None))
        return found

    def select(self, remote_name: str) -> FolderStatus:
        info = self._guard(lambda: self._client.select_folder(remote_name, readonly=True))
        # What the server announced until now is reflected in `info`; anything filed after
        # this point is news that `wait_for_change` must not miss.
        self._imap.untagged_responses.clear()
        self._selected = remote_name
        modseq = info.get(b"HIGHESTMODSEQ")
        status = FolderStatus(
            uidvalidity=int(info[b"UIDVALIDITY"]),
            uid_next=int(info[b"UIDNEXT"]) if b"UIDNEXT" in info else None,
            exists=int(info.get(b"EXISTS", 0)),
            highest_modseq=int(modseq) if modseq is not None and self._condstore else None,
        )
        self._exists, self._uid_next = status.exists, status.uid_next
        return status

    def _uid(self, command: str, *args: str) -> list[Any]:
        def run() -> list[Any]:
            typ, data = self._imap.uid(command, *args)
            if typ != "OK":
                raise SyncError(f"A {command} on account '{self._account_id}' was refused.")
            return list(data)

        result: list[Any] = self._guard(run)
        return result

    def search_uids(self) -> list[int]:
        """Every UID of the selected folder, ascending. A folder whose answer could outgrow
        the line budget is listed window by window (`uid_listing`). UIDs never change and
        never come back, so a message present from the first window to the last is in its
        window's answer whatever is expunged meanwhile (an EXPUNGE may come during a UID
        command, RFC 3501 section 7.4.1): the listing lacks only messages expunged while it
        ran, and holds every message that arrived before its last window."""
        if fits_whole(self._budget, self._exists):
            return self._search(1, MAX_UID, ("ALL",))
        low, high = self._uid_bounds()
        uids: list[int] = []
        for start, end in windows(low, high, self._budget):
            uids.extend(self._search(start, end, ("UID", f"{start}:{end}")))
        # What arrived since the bounds were read carries a higher UID than any before it.
        uids.extend(self._search(high + 1, MAX_UID, ("UID", f"{high + 1}:*")))
        return uids

    def _search(self, low: int, high: int, criteria: tuple[str, ...]) -> list[int]:
        """The UIDs from `low` to `high` a UID SEARCH finds, ascending: with ESEARCH the
        compact `RETURN (ALL)` answer (RFC 4731 section 3.1), otherwise the plain one. A
        server's `n:*` holds the highest UID even below `n` (RFC 3501 section 6.4.8), so
        answers are kept to the window asked about."""
        most = min(high - low + 1, window_span(self._budget, high))
        if not self._esearch:
            found: set[int] = set()
            for line in self._uid("SEARCH", *criteria):
                if isinstance(line, bytes):
                    found.update(int(x) for x in line.split() if x.isdigit())
            return sorted(u for u in found if low <= u <= high)
        self._imap.untagged_responses.pop("ESEARCH", None)
        self._uid("SEARCH", "RETURN", "(ALL)", *criteria)
        listed: list[int] = []
        for line in self._imap.untagged_responses.pop("ESEARCH", []):
            named = _ESEARCH_ALL.search(line if isinstance(line, bytes) else b"")
            if named is None:
                continue
            try:
                listed.extend(uids_in_set(named.group(1).decode(), low, high, most - len(listed)))
            except ValueError as exc:
                raise SyncError(
                    f"The mail server of account '{self._account_id}' answered a SEARCH "
                    "with more messages than it asked about."
                ) from exc
        return sorted(set(listed))

    def _uid_bounds(self) -> tuple[int, int]:
        """The lowest and highest UID of the selected folder: those of its first and last
        message, by a FETCH of message numbers, during which a server may not expunge
        (RFC 3501 section 7.4.1). Any other message's UID lies between them."""
        typ, data = self._guard(lambda: self._imap.fetch("1,*", "(UID)"))
        found = [
            uid
            for entry in (data if typ == "OK" else [])
            if isinstance(entry, bytes) and (uid := FetchItems(entry).uid) is not None
        ]
        if found:
            return min(found), max(found)
        if self._uid_next is None:
            raise SyncError(f"The mail server of account '{self._account_id}' named no UIDs.")
        return 1, self._uid_next - 1

    def _fetch(self, uids: Sequence[int], items: str) -> Iterator[tuple[bytes, bytes | None]]:
        """Yield (item text, literal or None) per FETCH response, in chunks of UIDs."""
        ordered = sorted(set(uids))
        for start in range(0, len(ordered), FETCH_CHUNK):
            chunk = ordered[start : start + FETCH_CHUNK]
            data = self._uid("FETCH", compress_uids(chunk), items)
            index = 0
            while index < len(data):
                entry = data[index]
                index += 1
                if isinstance(entry, tuple):
                    text, literal = entry[0], entry[1]
                    # Items the server wrote after the literal arrive as the next plain line.
                    if index < len(data) and isinstance(data[index], bytes):
                        text = text + b" " + data[index]
                        index += 1
                    yield text, literal
                elif entry:
                    yield entry, None

    def fetch_envelopes(self, uids: Sequence[int]) -> list[EnvelopeItem]:
        result = []
        for text, _ in self._fetch(uids, "(UID RFC822.SIZE)"):
            parsed = FetchItems(text)
            if parsed.uid is not None:
                result.append(EnvelopeItem(uid=parsed.uid, size_octets=parsed.size or 0))
        return result

    def _fetch_raw(
        self, uids: Sequence[int], section: str, headers_only: bool
    ) -> Iterator[FetchedMessage]:
        items = (
            f"(UID RFC822.SIZE FLAGS INTERNALDATE{' MODSEQ' if self._condstore else ''} {section})"
        )
        for text, literal in self._fetch(uids, items):
            parsed = FetchItems(text)
            if parsed.uid is None or literal is None:
                continue
            yield FetchedMessage(
                uid=parsed.uid,
                size_octets=parsed.size or len(literal),
                flags=parsed.flags or RemoteFlags(),
                modseq=parsed.modseq,
                received_at=parsed.internaldate,
                raw=literal,
                headers_only=headers_only,
            )

    def fetch_bodies(self, uids: Sequence[int]) -> Iterator[FetchedMessage]:
        return self._fetch_raw(uids, "BODY.PEEK[]", headers_only=False)

    def fetch_headers(self, uids: Sequence[int]) -> Iterator[FetchedMessage]:
        return self._fetch_raw(uids, "BODY.PEEK[HEADER]", headers_only=True)

    def fetch_identity(self, uids: Sequence[int]) -> dict[int, tuple[str | None, int]]:
        result: dict[int, tuple[str | None, int]] = {}
        for text, literal in self._fetch(
            uids, "(UID RFC822.SIZE BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])"
        ):
            parsed = FetchItems(text)
            block = header_fields(text, literal)
            # NIL (or no answer) is a message expunged meanwhile, never one without a
            # Message-ID; a FETCH the server sent unasked (flags set elsewhere) names no header.
            if parsed.uid is None or parsed.size is None or block is None:
                continue
            ids = parse_msg_ids(message_id_from_header(block))
            result[parsed.uid] = (ids[0] if ids else None, parsed.size)
        return result

    def changes_since(self, modseq: int) -> ChangeSet:
        vanished_key = "VANISHED"
        self._imap.untagged_responses.pop(vanished_key, None)
        data = self._uid("FETCH", "1:*", f"(UID FLAGS) (CHANGEDSINCE {modseq} VANISHED)")
        changed = []
        for entry in data:
            text = entry[0] if isinstance(entry, tuple) else entry
            if not text:
                continue
            parsed = FetchItems(text)
            if parsed.uid is not None and parsed.flags is not None:
                changed.append(FlagChange(uid=parsed.uid, flags=parsed.flags, modseq=parsed.modseq))
        vanished: list[int] = []
        for line in self._imap.untagged_responses.pop(vanished_key, []):
            text = line.decode("ascii", "replace") if isinstance(line, bytes) else str(line)
            text = text.replace("(EARLIER)", "").strip()
            if text:
                vanished.extend(parse_uid_set(text))
        return ChangeSet(changed=tuple(changed), vanished=tuple(sorted(set(vanished))))

    def all_flags(self) -> list[FlagChange]:
        return self.flags_of(self.search_uids())

    def flags_of(self, uids: Sequence[int]) -> list[FlagChange]:
        """The current flags of these UIDs in the selected folder; a vanished UID is absent."""
        if not uids:
            return []
        items = "(UID FLAGS" + (" MODSEQ)" if self._condstore else ")")
        result = []
        for text, _ in self._fetch(uids, items):
            parsed = FetchItems(text)
            if parsed.uid is not None and parsed.flags is not None:
                result.append(FlagChange(uid=parsed.uid, flags=parsed.flags, modseq=parsed.modseq))
        return result

    def wait_for_change(self, timeout_seconds: float) -> bool:
        """IDLE until the server reports a change to the selected folder (RFC 2177)."""
        if not self._idle:
            return False

        def idle() -> bool:
            # A change announced during the last pass's commands (after its EXAMINE) was
            # filed by imaplib and is news: report it rather than wait for another.
            pending = any(key in self._imap.untagged_responses for key in _CHANGE_KEYS)
            self._imap.untagged_responses.clear()
            if pending:
                return True
            # Changes the server reports while IDLE starts (RFC 2177 section 3) are filed by
            # imaplib as untagged responses before the continuation; they count too.
            self._client.idle()
            try:
                if any(key in self._imap.untagged_responses for key in _CHANGE_KEYS):
                    return True
                responses = self._client.idle_check(timeout=timeout_seconds)
            finally:
                self._client.idle_done()
            return any(_reports_change(r) for r in responses)

        changed: bool = self._guard(idle)
        return changed

    def append(self, remote_name: str, raw: bytes, flags: tuple[bytes, ...] = ()) -> None:
        """Add a message to a folder (RFC 3501 section 6.3.11)."""
        try:
            self._client.append(remote_name, raw, flags=flags)
        except _NETWORK_ERRORS as exc:
            raise SyncError(
                f"The mail server of account '{self._account_id}' did not take the message."
            ) from exc

    def _answered(self, action: Any) -> Any:
        """Run a command, telling a refusal (`CommandRefused`) from a lost connection."""
        try:
            return action()
        except (TimeoutError, imaplib.IMAP4.abort, OSError) as exc:
            raise SyncError(
                f"The mail server of account '{self._account_id}' failed a command."
            ) from exc
        except (imaplib.IMAP4.error, imap_errors.IMAPClientError) as exc:
            raise CommandRefused(
                f"The mail server of account '{self._account_id}' refused a command."
            ) from exc

    def append_with_uid(
        self, remote_name: str, raw: bytes, flags: tuple[bytes, ...] = ()
    ) -> tuple[int, int]:
        """Add a message to a folder and answer (UIDVALIDITY, UID) from the server's APPENDUID
        response code (RFC 4315 section 3). A server without UIDPLUS is refused before
        anything is appended: a copy whose UID is unknown could never be taken out again."""
        if not self._uidplus:
            raise CommandRefused(f"The mail server of account '{self._account_id}' lacks UIDPLUS.")
        answer = self._answered(lambda: self._client.append(remote_name, raw, flags=flags))
        found = _APPENDUID.search(answer if isinstance(answer, bytes) else b"")
        if found is None:
            raise CommandRefused(
                f"The mail server of account '{self._account_id}' named no APPENDUID."
            )
        return int(found.group(1)), int(found.group(2))

    def appended_since(
        self, remote_name: str, uidvalidity: int, since_uid: int, message_id: str
    ) -> list[int] | None:
        """The UIDs from `since_uid` on, in a folder opened read-only (EXAMINE), whose
        Message-ID header holds `message_id`: where an APPEND whose answer was lost put its
        copy. None when the folder's UIDVALIDITY is no longer `uidvalidity`, so those UIDs
        name nothing any more. A folder the server will not open is `CommandRefused`."""
        info = self._answered(lambda: self._client.select_folder(remote_name, readonly=True))
        self._selected = remote_name
        if int(info[b"UIDVALIDITY"]) != uidvalidity:
            return None
        return self.search_message_id(since_uid, message_id)

    def expunge_uid(self, remote_name: str, uidvalidity: int, uid: int) -> None:
        """Remove exactly one message: UID STORE +FLAGS.SILENT (\\Deleted), then UID EXPUNGE of
        that UID alone (RFC 4315 section 2.1), never a bare EXPUNGE, which would also remove
        whatever else somebody marked \\Deleted. A folder whose UIDVALIDITY changed no longer
        names that message, and is refused. A UID already gone is no error."""
        if not self._uidplus:
            raise CommandRefused(f"The mail server of account '{self._account_id}' lacks UIDPLUS.")
        info = self._answered(lambda: self._client.select_folder(remote_name, readonly=False))
        self._selected = remote_name
        if int(info[b"UIDVALIDITY"]) != uidvalidity:
            raise CommandRefused(
                f"A folder of account '{self._account_id}' changed its UIDVALIDITY."
            )
        self._answered(lambda: self._client.add_flags([uid], [imapclient.DELETED], silent=True))
        self._answered(lambda: self._client.uid_expunge([uid]))

    def select_for_writing(self, remote_name: str) -> dict[bytes, Any]:
        """Open a folder read-write (SELECT), for the flag commands that carry a change the
        owner asked for; answers what the server reported (PERMANENTFLAGS among it)."""
        info = self._answered(lambda: self._client.select_folder(remote_name, readonly=False))
        self._selected = remote_name
        return dict(info)

    def uid_store(self, uids: Sequence[int], item: str, flags: str) -> tuple[list[Any], list[Any]]:
        """UID STORE in the selected folder: (the FETCH data, the MODIFIED response codes)."""
        self._imap.untagged_responses.pop("MODIFIED", None)
        data = self._uid("STORE", compress_uids(list(uids)), item, flags)
        return data, list(self._imap.untagged_responses.pop("MODIFIED", []))

    def folder_next(self, remote_name: str) -> tuple[int, int]:
        """(UIDVALIDITY, UIDNEXT) of a folder, by STATUS (RFC 3501 section 6.3.10)."""
        found = self._answered(
            lambda: self._client.folder_status(remote_name, [b"UIDVALIDITY", b"UIDNEXT"])
        )
        return int(found[b"UIDVALIDITY"]), int(found[b"UIDNEXT"])

    def transfer(self, uids: Sequence[int], destination: str, command: str) -> list[str]:
        """UID MOVE (RFC 6851) or UID COPY of UIDs of the folder selected for writing; answers
        the COPYUID response codes' data the server gave (RFC 4315 section 3), untagged (a
        MOVE) or in the tagged answer (a COPY)."""
        self._imap.untagged_responses.pop("COPYUID", None)
        target = self._client._normalise_folder(destination)
        self._uid(command, compress_uids(list(uids)), target)
        return [_text(v) for v in self._imap.untagged_responses.pop("COPYUID", [])]

    def search_message_id(self, since_uid: int, message_id: str) -> list[int]:
        """UIDs from `since_uid` on, in the selected folder, whose Message-ID header holds
        `message_id`."""
        if any(ch in message_id for ch in '"\\\r\n'):
            return []
        data = self._uid("SEARCH", f"UID {since_uid}:*", "HEADER", "Message-ID", f'"{message_id}"')
        found: list[int] = []
        for line in data:
            if line:
                found.extend(int(x) for x in line.split())
        return [u for u in found if u >= since_uid]

    def expunge_selected(self, uids: Sequence[int]) -> None:
        """Mark these UIDs of the folder selected for writing \\Deleted and expunge exactly
        them with UID EXPUNGE (RFC 4315 section 2.1), never a bare EXPUNGE."""
        if not self._uidplus:
            raise CommandRefused(f"The mail server of account '{self._account_id}' lacks UIDPLUS.")
        if uids:
            self._uid("STORE", compress_uids(list(uids)), "+FLAGS.SILENT", "(\\Deleted)")
            self._uid("EXPUNGE", compress_uids(list(uids)))

    def close(self) -> None:
        _quietly_close(self._client)
