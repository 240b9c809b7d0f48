"""The get_email_content tool: its descriptor, and the call of its use case.

It is offered in two forms. The contract's read is read-only and takes no saving argument. A
caller whose grant also covers saving (the `saving` module's SAVE_PERMISSIONS) is offered
instead the form that can save one attachment to a file (`savePart`, `saveTo`, and
`savedFile` in the result), which is not read-only: a client that lets read-only tools run
unasked must not let a save through unasked.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from mailfathom.app.reading import get_email_content as use_case
from mailfathom.app.reading import saving
from mailfathom.domain.access import ToolCategory
from mailfathom.entrypoints.mcp import mapping
from mailfathom.entrypoints.mcp.content_models import (
    GetEmailContentResult,
    GetEmailContentSavingResult,
)
from mailfathom.entrypoints.mcp.registry import READ_ONLY, ToolRegistry, ToolSpec, ToolVariant
from mailfathom.entrypoints.mcp.result_text import TEXT_FORM
from mailfathom.entrypoints.mcp.untrusted import MAIL_CONTENT_IS_DATA

ToolFunction = Callable[..., Awaitable[CallToolResult]]
# A save never replaces anything (not destructive), and repeating one writes nothing more
# (idempotent); it writes a file, so it is not read-only.
SAVES_FILES = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

StoredEmailIds = Annotated[
    list[str] | None,
    Field(
        description="The storedEmailId values to read, 1 to 10, each once. Give this or "
        "threadId, not both."
    ),
]
ThreadId = Annotated[
    str | None,
    Field(
        description="A conversation to read instead of naming emails (its first 10 "
        "messages; the rest are named in unreadThreadMessages)."
    ),
]
IncludeSanitizedHtml = Annotated[
    bool | None,
    Field(description="Also return the sanitized HTML body. Omitted: plain text only."),
]
IncludeAttachmentDownloadLinks = Annotated[
    bool | None,
    Field(
        description="Ask for a link per attachment. Omitted: attachments are described "
        "(name, type, size) without links."
    ),
]
SavePart = Annotated[
    str | None,
    Field(
        description="Save one attachment to a file: its partId, as an earlier read "
        "described it. Given with saveTo and exactly one storedEmailIds entry."
    ),
]
SaveTo = Annotated[
    str | None,
    Field(
        description="The absolute path of a new file to save savePart into, inside a "
        "directory the operator allows. Never replaces an existing file; the directory "
        "must exist. Omitted: nothing is saved."
    ),
]

DESCRIPTION = (
    "Reads up to 10 emails from the local copy, named by storedEmailId or as one "
    "conversation by threadId: headers, plain-text body (optionally sanitized HTML), "
    "attachments described, and the conversation each belongs to. Bodies share a per-call "
    "character budget and say when they were cut. One email that cannot be served fails "
    "alone. No mail server is contacted and nothing is marked read."
)
SAVING_DESCRIPTION = (
    " With savePart and saveTo, one attachment of the one email named is also saved: its "
    "decoded bytes are written to a new file at saveTo, inside a directory the operator "
    "allows, never replacing anything; savedFile says what was written."
)


def spec(registry: ToolRegistry, reader: use_case.EmailContentReader) -> ToolSpec:
    return ToolSpec(
        name="get_email_content",
        title="Get email content",
        description=DESCRIPTION + MAIL_CONTENT_IS_DATA + TEXT_FORM,
        category=ToolCategory.MAILBOX,
        permissions=use_case.PERMISSIONS,
        annotations=READ_ONLY,
        function=_reading(registry, reader),
        variants=(
            ToolVariant(
                permissions=saving.SAVE_PERMISSIONS,
                description=DESCRIPTION + SAVING_DESCRIPTION + MAIL_CONTENT_IS_DATA + TEXT_FORM,
                annotations=SAVES_FILES,
                function=_saving(registry, reader),
            ),
        ),
    )


def _reading(registry: ToolRegistry, reader: use_case.EmailContentReader) -> ToolFunction:
    async def get_email_content(
        storedEmailIds: StoredEmailIds = None,
        threadId: ThreadId = None,
        includeSanitizedHtml: IncludeSanitizedHtml = None,
        includeAttachmentDownloadLinks: IncludeAttachmentDownloadLinks = None,
    ) -> Annotated[CallToolResult, GetEmailContentResult]:
        request = use_case.ContentRequest(
            stored_email_ids=storedEmailIds,
            thread_id=threadId,
            include_sanitized_html=bool(includeSanitizedHtml),
            include_attachment_download_links=bool(includeAttachmentDownloadLinks),
        )
        return await registry.run(
            "get_email_content", lambda caller: mapping.content(reader.read(caller, request))
        )

    return get_email_content


def _saving(registry: ToolRegistry, reader: use_case.EmailContentReader) -> ToolFunction:
    async def get_email_content(
        storedEmailIds: StoredEmailIds = None,
        threadId: ThreadId = None,
        includeSanitizedHtml: IncludeSanitizedHtml = None,
        includeAttachmentDownloadLinks: IncludeAttachmentDownloadLinks = None,
        savePart: SavePart = None,
        saveTo: SaveTo = None,
    ) -> Annotated[CallToolResult, GetEmailContentSavingResult]:
        request = use_case.ContentRequest(
            stored_email_ids=storedEmailIds,
            thread_id=threadId,
            include_sanitized_html=bool(includeSanitizedHtml),
            include_attachment_download_links=bool(includeAttachmentDownloadLinks),
            save_part=savePart,
            save_to=saveTo,
        )
        return await registry.run(
            "get_email_content",
            lambda caller: mapping.saved_content(reader.read(caller, request)),
        )

    return get_email_content
