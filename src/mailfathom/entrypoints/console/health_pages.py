"""The console's synchronization health page: per account and folder, freshness, the last
failure's code, the repairs that wait and the accounts that wait for access to be granted
again, with the commands that fix them written out, and the warnings of accounts that are not
held (a rotated refresh token not written to its file), with what to do.

Read only: every fix is a command run on the server (a grant of access needs the person at
a browser of the provider, and a check of stored copies runs for as long as the store is
large), so the page offers no decision."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from mailfathom.app.console.contact_book import ConsoleContacts
from mailfathom.app.console.sync_health import (
    AccountLine,
    FolderHealth,
    SyncHealth,
    reverify_command,
)
from mailfathom.domain import unseen
from mailfathom.domain.account_health import AccountWarning, HealthState, WarningState
from mailfathom.domain.sync_failures import SyncFailure
from mailfathom.entrypoints.console.contact_pages import ContactPages
from mailfathom.entrypoints.console.health_wording import HEALTH_WORDINGS, HealthWording, age_text
from mailfathom.entrypoints.console.outbox_pages import PageMaker
from mailfathom.entrypoints.console.wording import ConsoleWording, chosen_language

VERIFY_COMMAND = "mailfathom mailbox verify --account {account}"


@dataclass(frozen=True, slots=True)
class Failure:
    code: int
    meaning: str
    at: str
    iso: str


@dataclass(frozen=True, slots=True)
class ShownWarning:
    value: str
    code: int
    label: str
    since: str
    iso: str
    explain: str


@dataclass(frozen=True, slots=True)
class ShownFolder:
    alias: str
    role: str
    messages: int
    progress: str
    progress_iso: str | None
    failure: Failure | None
    repairs: str


@dataclass(frozen=True, slots=True)
class ShownAccount:
    account_id: str
    name: str
    state: str
    state_value: str
    warnings: tuple[ShownWarning, ...]
    failure: Failure | None
    folders: tuple[ShownFolder, ...]
    explain: str | None
    consent_command: str | None
    verify_command: str | None
    reverify_command: str | None


def shown_time(when: datetime) -> str:
    """A time as the page writes it: to the second, with its offset, broken at a space."""
    return when.isoformat(sep=" ", timespec="seconds")


def _words(request: Request) -> HealthWording:
    language = chosen_language(
        request.query_params.get("lang"), request.headers.get("accept-language")
    )
    return HEALTH_WORDINGS[language]


def _failure(failure: SyncFailure | None, h: HealthWording) -> Failure | None:
    if failure is None:
        return None
    at = shown_time(failure.at)
    meaning = h.codes.get(failure.code, "")
    return Failure(failure.code, meaning, h.failed_at.format(time=at), failure.at.isoformat())


def _warning(warning: AccountWarning, h: HealthWording) -> ShownWarning:
    words = {WarningState.REFRESH_TOKEN_UNSAVED: (h.unsaved, h.unsaved_explain)}
    label, explain = words[warning.state]
    return ShownWarning(
        value=warning.state.value,
        code=warning.code,
        label=label,
        since=h.warned_since.format(time=shown_time(warning.since)),
        iso=warning.since.isoformat(),
        explain=explain,
    )


def _folder(folder: FolderHealth, h: HealthWording) -> ShownFolder:
    when = folder.last_committed_at
    progress = h.never
    if when is not None and folder.age_seconds is not None:
        progress = f"{shown_time(when)} ({age_text(h, folder.age_seconds)})"
    return ShownFolder(
        alias=unseen.marked(folder.alias),
        role=folder.role or "",
        messages=folder.messages,
        progress=progress,
        progress_iso=None if when is None else when.isoformat(),
        failure=_failure(folder.failure, h),
        repairs=h.repairs_waiting.format(n=folder.repairs) if folder.repairs else h.no_repairs,
    )


def shown_account(line: AccountLine, w: ConsoleWording, h: HealthWording) -> ShownAccount:
    state = line.held.state if line.held is not None else None
    labels = {
        None: w.healthy,
        HealthState.CONSENT_REQUIRED: w.needs_consent,
        HealthState.CREDENTIALS_REFUSED: w.login_refused,
    }
    explains = {
        None: None,
        HealthState.CONSENT_REQUIRED: h.consent_explain,
        HealthState.CREDENTIALS_REFUSED: h.refused_explain,
    }
    return ShownAccount(
        account_id=line.account_id,
        name=unseen.marked(line.display_name),
        state=labels[state],
        state_value="healthy" if state is None else state.value,
        warnings=tuple(_warning(w, h) for w in line.warnings),
        failure=_failure(line.failure, h),
        folders=tuple(_folder(f, h) for f in line.folders),
        explain=explains[state],
        consent_command=line.consent_command,
        verify_command=VERIFY_COMMAND.format(account=line.account_id) if line.repairs else None,
        reverify_command=reverify_command(line.account_id) if line.reverify_unfinished else None,
    )


class HealthPages:
    def __init__(self, pages: PageMaker, health: Callable[[], SyncHealth]) -> None:
        self._pages = pages
        self._health = health

    def routes(self) -> list[Route]:
        return [Route("/health", self.health, methods=["GET"])]

    async def health(self, request: Request) -> Response:
        session = await self._pages.session(request)
        if session is None:
            return RedirectResponse("/login", status_code=303)
        report = await run_in_threadpool(self._health().report)
        w, h = self._pages.wording(request), _words(request)
        accounts = [shown_account(a, w, h) for a in report.accounts]
        return self._pages.page(
            request,
            "health.html",
            heading=w.health,
            csrf=session.csrf_secret,
            signed_in=True,
            h=h,
            accounts=accounts,
            needing_consent=[a for a in accounts if a.consent_command is not None],
        )


def health_and_contact_routes(
    pages: PageMaker,
    health: Callable[[], SyncHealth],
    contacts: Callable[[], ConsoleContacts],
) -> list[Route]:
    """The routes of the health page and the contact pages."""
    return [*HealthPages(pages, health).routes(), *ContactPages(pages, contacts).routes()]
