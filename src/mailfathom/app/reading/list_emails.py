"""list_emails: a bounded page of summaries from the local copy, newest received first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mailfathom.app.reading import cursors
from mailfathom.app.reading.projection import freshness, summarize
from mailfathom.app.reading.views import TimelinePage
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.app.shared.cursor_signing import CursorSigner
from mailfathom.app.shared.mailbox_selection import SelectionInput, ServedAccount, resolve_selection
from mailfathom.app.shared.stored_mail import TimelinePosition
from mailfathom.app.shared.stored_mail_ports import MailboxReadStore
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal

PERMISSIONS: Permissions = frozenset({Permission.MAIL_READ})

DEFAULT_PAGE_SIZE = 25
MAX_PAGE_SIZE = 100


@dataclass(frozen=True, slots=True)
class TimelineRequest:
    selection: SelectionInput
    newest_first: bool = True
    page_size: int | None = None
    cursor: str | None = None


class MailboxTimelineReader:
    def __init__(
        self,
        store: MailboxReadStore,
        served: Sequence[ServedAccount],
        signer: CursorSigner,
    ) -> None:
        self._store = store
        self._served = tuple(served)
        self._names = {a.account_id: a.display_name for a in served}
        self._signer = signer

    def read(self, caller: Caller, request: TimelineRequest) -> TimelinePage:
        require(caller, PERMISSIONS)
        size = DEFAULT_PAGE_SIZE if request.page_size is None else request.page_size
        if not 1 <= size <= MAX_PAGE_SIZE:
            raise Refusal(
                Code.PAGE_SIZE_OUT_OF_RANGE,
                f"The page size must be from 1 to {MAX_PAGE_SIZE}.",
            )
        with self._store.snapshot() as view:
            resolved = resolve_selection(view, self._served, request.selection)
            direction = "newestFirst" if request.newest_first else "oldestFirst"
            digest = cursors.selection_digest(resolved.fingerprint_parts, direction)
            after: TimelinePosition | None = None
            if request.cursor is not None:
                after = cursors.accept(self._signer, request.cursor, digest)
            rows = []
            if resolved.store_filter is not None:
                rows = view.summaries(
                    resolved.store_filter,
                    newest_first=request.newest_first,
                    after=after,
                    limit=size + 1,
                )
        page = rows[:size]
        next_cursor = None
        if len(rows) > size:
            last = page[-1]
            next_cursor = cursors.issue(
                self._signer, digest, TimelinePosition(last.received_at, last.seq)
            )
        return TimelinePage(
            emails=tuple(summarize(r, self._names) for r in page),
            next_cursor=next_cursor,
            included_junk_mail=resolved.included_junk_mail,
            folder_freshness=freshness(resolved.covered),
        )
