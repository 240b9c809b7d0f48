"""list_emails: a bounded page of summaries from the local copy, newest received first.

With `contains`, the page holds only mail whose body text carries the fragment; see
`body_filter` for how the bodies are found and what bounds one page."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mailfathom.app.reading import body_filter, cursors, screening
from mailfathom.app.reading.projection import freshness, summarize
from mailfathom.app.reading.views import BodyScanReport, TimelinePage
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.app.shared.content_screen import UNSCREENED, ContentScreen
from mailfathom.app.shared.cursor_signing import CursorSigner
from mailfathom.app.shared.mailbox_selection import SelectionInput, ServedAccount, resolve_selection
from mailfathom.app.shared.stored_mail import SummaryRow, TimelinePosition
from mailfathom.app.shared.stored_mail_ports import MailboxReadStore
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from mailfathom.domain.sender_trust import NO_TRUSTED_SENDERS, SenderTrustPolicy

PERMISSIONS: Permissions = frozenset({Permission.MAIL_READ})

DEFAULT_PAGE_SIZE = 25
MAX_PAGE_SIZE = 100


@dataclass(frozen=True, slots=True)
class TimelineRequest:
    selection: SelectionInput
    newest_first: bool = True
    page_size: int | None = None
    cursor: str | None = None
    contains: str | None = None


class MailboxTimelineReader:
    def __init__(
        self,
        store: MailboxReadStore,
        served: Sequence[ServedAccount],
        signer: CursorSigner,
        *,
        contains_bodies: int | None = None,
        sender_trust: SenderTrustPolicy = NO_TRUSTED_SENDERS,
        screen: ContentScreen = UNSCREENED,
    ) -> None:
        """`contains_bodies` lowers the bodies one page may read (a test's ceiling);
        `sender_trust` is which authenticated authors the deployment trusts."""
        self._store = store
        self._trust = sender_trust
        self._contains_bodies = contains_bodies
        self._served = tuple(served)
        self._names = {a.account_id: a.display_name for a in served}
        self._signer = signer
        self._screen = screen

    def read(self, caller: Caller, request: TimelineRequest) -> TimelinePage:
        require(caller, PERMISSIONS)
        size = DEFAULT_PAGE_SIZE if request.page_size is None else request.page_size
        if not 1 <= size <= MAX_PAGE_SIZE:
            raise Refusal(
                Code.PAGE_SIZE_OUT_OF_RANGE,
                f"The page size must be from 1 to {MAX_PAGE_SIZE}.",
            )
        if request.contains is not None:
            body_filter.check(request.contains)
        with self._store.snapshot() as view:
            resolved = resolve_selection(view, self._served, request.selection)
            direction = "newestFirst" if request.newest_first else "oldestFirst"
            parts = (*resolved.fingerprint_parts, *body_filter.fingerprint(request.contains))
            digest = cursors.selection_digest(parts, direction)
            after: TimelinePosition | None = None
            if request.cursor is not None:
                after = cursors.accept(self._signer, request.cursor, digest)
            rows: list[SummaryRow] = []
            scanned: body_filter.BodyScan | None = None
            if resolved.store_filter is not None and request.contains is not None:
                scanned = body_filter.scan(
                    view,
                    resolved.store_filter,
                    request.contains,
                    newest_first=request.newest_first,
                    after=after,
                    wanted=size + 1,
                    ceiling=self._contains_bodies or body_filter.MAX_CONTAINS_BODIES,
                )
                rows = list(scanned.rows)
            elif resolved.store_filter is not None:
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
        elif scanned is not None and scanned.resume is not None:
            next_cursor = cursors.issue(self._signer, digest, scanned.resume)
        report = None
        if request.contains is not None:
            report = BodyScanReport(
                bodies_examined=0 if scanned is None else scanned.examined,
                cut=scanned is not None and scanned.cut,
            )
        return TimelinePage(
            emails=tuple(
                screening.summary(self._screen, summarize(r, self._names, self._trust))
                for r in page
            ),
            next_cursor=next_cursor,
            included_junk_mail=resolved.included_junk_mail,
            folder_freshness=freshness(resolved.covered),
            contains_scan=report,
        )
