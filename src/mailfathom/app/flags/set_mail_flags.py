"""set_mail_flags: write down a change of one email's flags; reach no mail server.

One durable record per value asked for is written in one commit and the local copy shows the
values at once; the account's own synchronization run issues the flag command later and
carries each record to completed or dead-lettered. A retry with the same requestId answers the
records its first attempt wrote, as they stand now.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import structlog

from mailfathom.app.flags import rules
from mailfathom.app.flags.ports import MutationStore, RequestIdentityTaken
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.app.shared.email_identifiers import parse_identifier
from mailfathom.app.shared.mailbox_selection import ServedAccount
from mailfathom.app.shared.stored_mail_ports import FolderDirectory
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from mailfathom.domain.mutations import MutationRecord

log = structlog.get_logger("mailfathom.flags")

PERMISSIONS: Permissions = frozenset({Permission.FLAGS_WRITE})


@dataclass(frozen=True, slots=True)
class FlagChangeRequest:
    stored_email_id: object
    seen: object = None
    flagged: object = None
    keyword_change: object = None
    keywords: Iterable[object] | None = None
    request_id: object = None


@dataclass(frozen=True, slots=True)
class RecordedFlagChange:
    stored_email_id: str
    account_id: str
    folder_alias: str
    records: tuple[MutationRecord, ...]


class MailFlagChangeRecorder:
    def __init__(
        self,
        store: MutationStore,
        folders: FolderDirectory,
        served: Sequence[ServedAccount],
        wake: Callable[[str], None] = lambda account_id: None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._store = store
        self._folders = folders
        self._served = tuple(a.account_id for a in served)
        # Tells the account's continuous synchronization run that records are waiting.
        self._wake = wake
        self._clock = clock

    def record(self, caller: Caller, request: FlagChangeRequest) -> RecordedFlagChange:
        require(caller, PERMISSIONS)
        email = parse_identifier(
            request.stored_email_id, Code.NOT_AN_EMAIL_IDENTIFIER, "stored email id"
        )
        request_id = rules.request_id(request.request_id)
        asked = rules.requested(
            request.seen, request.flagged, request.keyword_change, request.keywords
        )
        readable = self._folders.readable_folders(list(self._served)) if self._served else []
        target = self._store.target(email, [f.folder_id for f in readable])
        if target is None:
            raise Refusal(Code.EMAIL_NOT_HELD, "No stored email answers to this identifier.")
        try:
            records = self._store.record(
                target, caller.label[:64], request_id, asked, self._clock()
            )
        except RequestIdentityTaken:
            raise rules.refuse(
                "The requestId was already used on this email for another request (a retry "
                "asks exactly what the first call asked); send a new requestId."
            ) from None
        for record in records:
            log.info(
                "flags.change_recorded",
                account=target.account_id,
                change=record.kind.value,
                change_record_id=str(record.record_id),
                state=record.state.value,
            )
        self._wake(target.account_id)
        return RecordedFlagChange(
            stored_email_id=str(email),
            account_id=target.account_id,
            folder_alias=target.folder_alias,
            records=tuple(records),
        )
