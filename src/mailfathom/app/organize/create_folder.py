"""organize_email's createFolder: a folder asked for on the owner's own mail server.

The call writes one durable record and answers it; the account's synchronization run
creates the folder (CREATE and SUBSCRIBE) and publishes it under its alias, so emails can be
moved into it by later calls, or by calls made before it exists: their moves wait for the
same run, which creates folders first. The alias is the name at the top level, and the
parent's alias, a slash and the name under a parent. A name no folder served to the caller
carries, and that no earlier request claimed, is required; a folder already on the server is
never taken over, since it may be one withheld from tools, nor told of: the run creates the
new one under a numbered name instead (see folder_creations).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from mailfathom.app.organize import rules
from mailfathom.app.organize.ports import FolderCreation, FolderCreationRequested, FolderCreations
from mailfathom.app.shared.mailbox_selection import ServedAccount, resolve_accounts
from mailfathom.app.shared.stored_mail import FolderView
from mailfathom.app.shared.stored_mail_ports import FolderDirectory
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal


@dataclass(frozen=True, slots=True)
class CreatedFolder:
    account_id: str
    alias: str
    parent_alias: str | None
    record: FolderCreation


def create_folder(
    creations: FolderCreations,
    directory: FolderDirectory,
    served: Sequence[ServedAccount],
    requester: str,
    account: object,
    name: object,
    parent: object,
    request_id: str,
    now: datetime,
) -> CreatedFolder:
    if account is None:
        raise rules.refuse("createFolder names the account to create the folder in.")
    (chosen,) = resolve_accounts(served, [account])
    named = rules.folder_name(name)
    readable = directory.readable_folders([chosen.account_id])
    parent_folder: FolderView | None = None
    if parent is not None:
        wanted = rules.folder(parent).strip().casefold()
        parent_folder = next((f for f in readable if f.alias.casefold() == wanted), None)
        if parent_folder is None:
            raise Refusal(
                Code.DESTINATION_NOT_SERVED,
                "The parent folder is not one this deployment serves.",
            )
    alias = named if parent_folder is None else f"{parent_folder.alias}/{named}"
    if len(alias) > rules.MAX_FOLDER_CHARACTERS:
        raise rules.refuse(
            f"The new folder's alias (parent/name) is at most {rules.MAX_FOLDER_CHARACTERS} "
            "characters."
        )
    parent_id = parent_folder.folder_id if parent_folder else None
    parent_alias = parent_folder.alias if parent_folder else None
    held = creations.held(chosen.account_id, requester, request_id)
    if held is None:
        if any(f.alias.casefold() == alias.casefold() for f in readable) or (
            creations.alias_claimed(chosen.account_id, alias)
        ):
            raise rules.refuse(
                "A folder of this name is already served or asked for; choose another name."
            )
        try:
            held = creations.request(
                chosen.account_id, named, alias, parent_id, requester, request_id, now
            )
        except FolderCreationRequested:
            held = None
    if held is None or (held.name, held.parent_folder_id) != (named, parent_id):
        raise rules.refuse(
            "The requestId was already used on this account for a different folder; send a "
            "new requestId."
        )
    return CreatedFolder(chosen.account_id, held.alias, parent_alias, held)
