"""The organize_email tool: its descriptor, and the call of its use case."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from mailfathom.app.organize import organize_email as use_case
from mailfathom.domain.access import ToolCategory
from mailfathom.entrypoints.mcp.organize_models import (
    CreatedFolderModel,
    OrganizedEmailModel,
    OrganizeResult,
)
from mailfathom.entrypoints.mcp.registry import ToolRegistry, ToolSpec
from mailfathom.entrypoints.mcp.result_text import TEXT_FORM

# Mail changes place or loses a keyword on the owner's own server (not additive), nothing is
# deleted for good, and asking for the same place or keyword twice asks for the same.
ORGANIZES = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=True
)


def _result(outcome: use_case.OrganizedEmails) -> OrganizeResult:
    return OrganizeResult(
        action=outcome.action,
        accountId=outcome.account_id,
        destinationAlias=outcome.destination_alias,
        changed=[
            OrganizedEmailModel(
                storedEmailId=e.stored_email_id,
                folderAlias=e.folder_alias,
                change=e.record.kind.value,  # type: ignore[arg-type]
                changeRecordId=str(e.record.record_id),
                state=e.record.state.value,
            )
            for e in outcome.changed
        ],
        folder=(
            CreatedFolderModel(
                alias=outcome.folder.alias,
                parentAlias=outcome.folder.parent_alias,
                changeRecordId=str(outcome.folder.record.creation_id),
                state=outcome.folder.record.state.value,
            )
            if outcome.folder is not None
            else None
        ),
    )


def spec(registry: ToolRegistry, organizer: use_case.EmailOrganizer) -> ToolSpec:
    async def organize_email(
        action: Annotated[
            Literal["move", "archive", "trash", "label", "unlabel", "createFolder"],
            Field(
                description="move files the emails in folder; archive and trash file them in "
                "the folder mapped with the Archive or Trash role; label and unlabel add or "
                "remove the keywords named in keywords; createFolder asks for a new folder "
                "(account, name, optional parent) and takes no emails."
            ),
        ],
        storedEmailIds: Annotated[
            list[str] | None,
            Field(
                description="Every action but createFolder: 1 to 100 distinct emails of one "
                "account, as a listing, a search or a read returned them."
            ),
        ] = None,
        folder: Annotated[
            str | None,
            Field(description="move only: the alias of the folder to file the emails in."),
        ] = None,
        keywords: Annotated[
            list[str] | None,
            Field(
                description="label and unlabel only: 1 to 64 keywords, each at most 64 "
                "characters and an IMAP atom; case is ignored."
            ),
        ] = None,
        account: Annotated[
            str | None,
            Field(description="createFolder only: the account to create the folder in."),
        ] = None,
        name: Annotated[
            str | None,
            Field(
                description="createFolder only: the new folder's name, one line of at most "
                "256 characters without / \\ . * % or a quotation mark."
            ),
        ] = None,
        parent: Annotated[
            str | None,
            Field(
                description="createFolder only: the alias of the folder to create it under; "
                "omitted, it is created at the top level."
            ),
        ] = None,
        requestId: Annotated[
            str | None,
            Field(
                description="Your own identity for this request, up to 128 characters. The "
                "same value on a retry naming the same emails and change answers the records "
                "the first call wrote, as they stand now; reused for anything else (another "
                "change, an email more or fewer) it is refused. Omitted: a new request."
            ),
        ] = None,
    ) -> Annotated[CallToolResult, OrganizeResult]:
        request = use_case.OrganizeRequest(
            action=action,
            stored_email_ids=storedEmailIds,
            folder=folder,
            keywords=keywords,
            request_id=requestId,
            account=account,
            name=name,
            parent=parent,
        )
        return await registry.run(
            "organize_email", lambda caller: _result(organizer.organize(caller, request))
        )

    return ToolSpec(
        name="organize_email",
        title="Organize emails",
        description=(
            "Files up to 100 emails of one account in another folder (move, archive, trash), "
            "adds or removes keywords (label, unlabel), or creates a folder (createFolder), "
            "on the owner's own mail server. "
            "Nothing is deleted for good: trash moves mail into the Trash folder, where it "
            "stays until the owner empties it, and every action can be undone by another "
            "move or label. Folders withheld from tools cannot be filed into. The call "
            "reaches no mail server: it writes one durable record per email and answers "
            "them; the account's next synchronization carries them out, and an email keeps "
            "its identifier after a move (call again with the same requestId to see how far "
            "the records got). Labels are IMAP keywords. createFolder asks for a new folder "
            "on the same server (never taking over one already there); no action deletes or "
            "renames a folder." + TEXT_FORM
        ),
        category=ToolCategory.ORGANIZE,
        permissions=use_case.PERMISSIONS,
        annotations=ORGANIZES,
        function=organize_email,
    )
