"""Published shape of organize_email: the records written, one per email, or the folder
createFolder asked for."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from mailfathom.entrypoints.mcp.flag_models import ChangeState
from mailfathom.entrypoints.mcp.models import Published
from mailfathom.entrypoints.mcp.untrusted import OwnText

OrganizeChange = Literal["move", "add-keywords", "remove-keywords"]


class OrganizedEmailModel(Published):
    storedEmailId: OwnText = Field(
        description="The email the record was written for; it keeps this identifier after a move."
    )
    folderAlias: OwnText = Field(
        description="The folder the email is in as the call answers (before a move has "
        "happened, the folder it leaves)."
    )
    change: OrganizeChange = Field(description="What the record changes.")
    changeRecordId: OwnText = Field(
        description="The durable record's identifier, the name log lines give the same change."
    )
    state: ChangeState = Field(
        description="pending: written, not yet carried to the mail server; converging: the "
        "synchronization run is carrying it; completed: the mailbox shows it; dead-lettered: "
        "given up on (the message is gone, the server can move nothing safely, the folder "
        "keeps no such keyword, or the attempts were spent)."
    )


class CreatedFolderModel(Published):
    alias: OwnText = Field(
        description="The alias the folder is published under once it exists: its name, or "
        "its parent's alias, a slash and its name. Emails can be moved into it by this alias."
    )
    parentAlias: OwnText | None = Field(default=None, description="The parent folder, if any.")
    changeRecordId: OwnText = Field(description="The durable record of the creation.")
    state: ChangeState = Field(
        description="pending: written, not yet created on the mail server; converging: the "
        "synchronization run is creating it; completed: the folder exists and is listed; "
        "dead-lettered: given up on (the name and its numbered names, name 2 to name 10, "
        "are all taken on the server, the server refused the name, the parent is gone, or "
        "the attempts were spent)."
    )


class OrganizeResult(Published):
    action: OwnText = Field(description="The action the records carry out.")
    accountId: OwnText = Field(description="The account whose next synchronization carries it.")
    destinationAlias: OwnText | None = Field(
        default=None, description="The folder the emails are filed in, for a moving action."
    )
    changed: list[OrganizedEmailModel] = Field(
        description="One entry per email, in the order named (none for createFolder). A "
        "retry with the same requestId answers the same records as they stand now."
    )
    folder: CreatedFolderModel | None = Field(
        default=None, description="createFolder only: the folder asked for."
    )
