"""organize_email: file, archive, throw away or label emails; reach no mail server.

Each action on 1 to 100 emails of one account writes one durable record per email, all in one
commit; the account's own synchronization run carries them to the mailbox (a move with IMAP
MOVE, or COPY and an EXPUNGE of exactly those UIDs) and to completed or dead-lettered. Nothing
is ever deleted for good: trash is a move into the folder mapped with the Trash role. A retry
with the same requestId answers the records its first attempt wrote, as they stand now.

An action on emails is one entry of `EMAIL_ACTIONS`: what it needs beside the emails, and the
record it asks for. Adding an action is adding an entry. `createFolder` takes no emails: it
asks for a folder on the account's server (see `create_folder.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import structlog

from mailfathom.app.flags.ports import MutationTarget, RequestIdentityTaken
from mailfathom.app.organize import rules
from mailfathom.app.organize.create_folder import CreatedFolder, create_folder
from mailfathom.app.organize.ports import FolderCreations, OrganizeStore
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.app.shared.mailbox_selection import ServedAccount
from mailfathom.app.shared.stored_mail import FolderView
from mailfathom.app.shared.stored_mail_ports import FolderDirectory
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.mutations import (
    MutationKind,
    MutationRecord,
    RequestedMutation,
    keyword_value,
)

log = structlog.get_logger("mailfathom.organize")

PERMISSIONS: Permissions = frozenset({Permission.ORGANIZE})


@dataclass(frozen=True, slots=True)
class OrganizeRequest:
    action: object
    stored_email_ids: object = None
    folder: object = None
    keywords: object = None
    request_id: object = None
    # createFolder's own: the account, the new folder's name, and its parent's alias.
    account: object = None
    name: object = None
    parent: object = None


@dataclass(frozen=True, slots=True)
class Resolved:
    """What an action asks of each email, and the folder it files them in (if it moves)."""

    asked: RequestedMutation
    destination: FolderView | None = None


# An action's resolver: the request and the account's folders the caller may read, to what
# every named email is asked.
Resolver = Callable[[OrganizeRequest, Sequence[FolderView]], Resolved]


@dataclass(frozen=True, slots=True)
class EmailAction:
    resolve: Resolver
    # The arguments this action takes beside the emails; any other is refused.
    takes: frozenset[str] = frozenset({"storedEmailIds"})


def _moving_to(folder: FolderView) -> Resolved:
    return Resolved(RequestedMutation(MutationKind.MOVE, str(folder.folder_id)), folder)


def _move(request: OrganizeRequest, folders: Sequence[FolderView]) -> Resolved:
    wanted = rules.folder(request.folder).strip().casefold()
    for folder in folders:
        if folder.alias.casefold() == wanted:
            return _moving_to(folder)
    raise Refusal(
        Code.DESTINATION_NOT_SERVED, "The folder to move to is not one this deployment serves."
    )


def _to_role(role: FolderRole) -> Resolver:
    def resolve(request: OrganizeRequest, folders: Sequence[FolderView]) -> Resolved:
        for folder in folders:
            if folder.role is role:
                return _moving_to(folder)
        raise Refusal(
            Code.FOLDER_ROLE_NOT_MAPPED,
            f"The account maps no folder with the {role.value} role that tools may use.",
        )

    return resolve


def _keywords(kind: MutationKind) -> Resolver:
    def resolve(request: OrganizeRequest, folders: Sequence[FolderView]) -> Resolved:
        return Resolved(RequestedMutation(kind, keyword_value(rules.keywords(request.keywords))))

    return resolve


EMAIL_ACTIONS: dict[str, EmailAction] = {
    "move": EmailAction(_move, frozenset({"storedEmailIds", "folder"})),
    "archive": EmailAction(_to_role(FolderRole.ARCHIVE)),
    "trash": EmailAction(_to_role(FolderRole.TRASH)),
    "label": EmailAction(
        _keywords(MutationKind.ADD_KEYWORDS), frozenset({"storedEmailIds", "keywords"})
    ),
    "unlabel": EmailAction(
        _keywords(MutationKind.REMOVE_KEYWORDS), frozenset({"storedEmailIds", "keywords"})
    ),
}


# createFolder takes no emails: the account, the name and an optional parent.
CREATE_FOLDER = "createFolder"
CREATE_FOLDER_TAKES = frozenset({"account", "name", "parent"})
ACTIONS = (*EMAIL_ACTIONS, CREATE_FOLDER)


@dataclass(frozen=True, slots=True)
class OrganizedEmail:
    stored_email_id: str
    folder_alias: str
    record: MutationRecord


@dataclass(frozen=True, slots=True)
class OrganizedEmails:
    action: str
    account_id: str
    destination_alias: str | None
    changed: tuple[OrganizedEmail, ...]
    # createFolder's answer: the folder asked for, as its record stands.
    folder: CreatedFolder | None = None


class EmailOrganizer:
    def __init__(
        self,
        store: OrganizeStore,
        folders: FolderDirectory,
        served: Sequence[ServedAccount],
        creations: FolderCreations,
        wake: Callable[[str], None] = lambda account_id: None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._store = store
        self._folders = folders
        self._accounts = tuple(served)
        self._served = tuple(a.account_id for a in served)
        self._creations = creations
        # Tells the account's continuous synchronization run that records are waiting.
        self._wake = wake
        self._clock = clock

    def organize(self, caller: Caller, request: OrganizeRequest) -> OrganizedEmails:
        require(caller, PERMISSIONS)
        action = self._action(request)
        if action == CREATE_FOLDER:
            return self._create_folder(caller, request)
        ids = rules.emails(request.stored_email_ids)
        request_id = rules.request_id(request.request_id)
        readable = self._folders.readable_folders(list(self._served)) if self._served else []
        found = self._store.targets(ids, [f.folder_id for f in readable])
        if len(found) != len(ids):
            raise Refusal(Code.EMAIL_NOT_HELD, "No stored email answers to an identifier given.")
        targets = [found[i] for i in ids]
        account_id = targets[0].account_id
        if any(t.account_id != account_id for t in targets):
            raise rules.refuse("The emails of one call belong to one account.")
        resolved = EMAIL_ACTIONS[action].resolve(
            request, [f for f in readable if f.account_id == account_id]
        )
        records = self._record(caller, targets, request_id, resolved.asked)
        for record in records:
            log.info(
                "organize.change_recorded",
                account=account_id,
                change=record.kind.value,
                change_record_id=str(record.record_id),
                state=record.state.value,
            )
        self._wake(account_id)
        return OrganizedEmails(
            action=action,
            account_id=account_id,
            destination_alias=resolved.destination.alias if resolved.destination else None,
            changed=tuple(
                OrganizedEmail(str(t.stored_email_id), t.folder_alias, r)
                for t, r in zip(targets, records, strict=True)
            ),
        )

    def _create_folder(self, caller: Caller, request: OrganizeRequest) -> OrganizedEmails:
        created = create_folder(
            self._creations,
            self._folders,
            self._accounts,
            caller.label[:64],
            request.account,
            request.name,
            request.parent,
            rules.request_id(request.request_id),
            self._clock(),
        )
        log.info(
            "organize.folder_requested",
            account=created.account_id,
            creation_id=str(created.record.creation_id),
            state=created.record.state.value,
        )
        self._wake(created.account_id)
        return OrganizedEmails(CREATE_FOLDER, created.account_id, None, (), created)

    def _action(self, request: OrganizeRequest) -> str:
        action = request.action
        if not isinstance(action, str) or action not in ACTIONS:
            raise rules.refuse(f"action is one of {', '.join(ACTIONS)}.")
        takes = CREATE_FOLDER_TAKES if action == CREATE_FOLDER else EMAIL_ACTIONS[action].takes
        given = {
            name
            for name, value in (
                ("folder", request.folder),
                ("keywords", request.keywords),
                ("storedEmailIds", request.stored_email_ids),
                ("account", request.account),
                ("name", request.name),
                ("parent", request.parent),
            )
            if value is not None
        }
        if given - takes:
            raise rules.refuse(
                f"The {action} action takes no {' or '.join(sorted(given - takes))}."
            )
        return action

    def _record(
        self,
        caller: Caller,
        targets: list[MutationTarget],
        request_id: str,
        asked: RequestedMutation,
    ) -> list[MutationRecord]:
        try:
            return self._store.record_each(
                targets, caller.label[:64], request_id, asked, self._clock()
            )
        except RequestIdentityTaken:
            raise rules.refuse(
                "The requestId was already used on one of these emails for another request (a "
                "retry names the same emails and asks the same change); send a new requestId."
            ) from None
