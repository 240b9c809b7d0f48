"""The list_emails tool: its descriptor, and the call of its use case."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.types import CallToolResult
from pydantic import Field

from mailfathom.app.reading import body_filter
from mailfathom.app.reading import list_emails as use_case
from mailfathom.app.shared.mailbox_selection import SelectionInput
from mailfathom.domain.access import ToolCategory
from mailfathom.entrypoints.mcp import mapping
from mailfathom.entrypoints.mcp.models import ListEmailsResult
from mailfathom.entrypoints.mcp.params import with_selection
from mailfathom.entrypoints.mcp.registry import READ_ONLY, ToolRegistry, ToolSpec
from mailfathom.entrypoints.mcp.result_text import TEXT_FORM
from mailfathom.entrypoints.mcp.untrusted import MAIL_CONTENT_IS_DATA


def spec(registry: ToolRegistry, reader: use_case.MailboxTimelineReader) -> ToolSpec:
    @with_selection
    async def list_emails(
        selection: SelectionInput,
        direction: Annotated[
            Literal["newestFirst", "oldestFirst"] | None,
            Field(description="Which end of the timeline to read from. Omitted: newestFirst."),
        ] = None,
        pageSize: Annotated[
            int | None,
            Field(description="Summaries per page, 1 to 100. Omitted: 25. Never clamped."),
        ] = None,
        cursor: Annotated[
            str | None,
            Field(
                description="The nextCursor of a previous call, with the same filters and "
                "direction. Omitted: the first page."
            ),
        ] = None,
        contains: Annotated[
            str | None,
            Field(
                description="Text the body must contain, any case, matched literally, at "
                f"most {body_filter.MAX_CONTAINS_CHARACTERS} characters. A page reads at most "
                f"{body_filter.MAX_CONTAINS_BODIES} bodies; containsScan says when that ended "
                "it early (nextCursor goes on from there)."
            ),
        ] = None,
    ) -> Annotated[CallToolResult, ListEmailsResult]:
        request = use_case.TimelineRequest(
            contains=contains,
            selection=selection,
            newest_first=direction != "oldestFirst",
            page_size=pageSize,
            cursor=cursor,
        )
        return await registry.run(
            "list_emails", lambda caller: mapping.timeline(reader.read(caller, request))
        )

    return ToolSpec(
        name="list_emails",
        title="List emails",
        description=(
            "Returns one page of email summaries (no body text) from the local copy, "
            "newest received first unless asked otherwise, with optional filters. A page "
            "holds at most 100 summaries; continue with nextCursor. The junk folder is "
            "left out unless asked for. No mail server is contacted and nothing is marked "
            "read." + MAIL_CONTENT_IS_DATA + TEXT_FORM
        ),
        category=ToolCategory.MAILBOX,
        permissions=use_case.PERMISSIONS,
        annotations=READ_ONLY,
        function=list_emails,
    )
