"""The set_mail_flags tool: its descriptor, and the call of its use case."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from mailfathom.app.flags import set_mail_flags as use_case
from mailfathom.domain.access import ToolCategory
from mailfathom.entrypoints.mcp.flag_models import FlagChangeResult, RecordedChange
from mailfathom.entrypoints.mcp.registry import ToolRegistry, ToolSpec
from mailfathom.entrypoints.mcp.result_text import TEXT_FORM

MARKS = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=True
)


def _result(recorded: use_case.RecordedFlagChange) -> FlagChangeResult:
    return FlagChangeResult(
        storedEmailId=recorded.stored_email_id,
        accountId=recorded.account_id,
        folderAlias=recorded.folder_alias,
        recordedChanges=[
            RecordedChange(
                # A flag change's record is never a move: those are organize_email's.
                change=r.kind.value,  # type: ignore[arg-type]
                changeRecordId=str(r.record_id),
                state=r.state.value,
            )
            for r in recorded.records
        ],
    )


def spec(registry: ToolRegistry, recorder: use_case.MailFlagChangeRecorder) -> ToolSpec:
    async def set_mail_flags(
        storedEmailId: Annotated[
            str,
            Field(
                description="Required. The email to change, as a listing, a search or a read "
                "returned it."
            ),
        ],
        seen: Annotated[
            bool | None,
            Field(description="true marks the email read, false unread. Omitted: unchanged."),
        ] = None,
        flagged: Annotated[
            bool | None,
            Field(
                description="true stars (flags) the email, false unstars it. Omitted: unchanged."
            ),
        ] = None,
        keywordChange: Annotated[
            Literal["add", "remove", "replace"] | None,
            Field(
                description="add, remove, or replace the keywords (labels) named in keywords; "
                "sent together with keywords. replace states the whole set and removes every "
                "keyword not listed: working from a partial view, use add and remove. "
                "Omitted: keywords unchanged."
            ),
        ] = None,
        keywords: Annotated[
            list[str] | None,
            Field(
                description="The keywords keywordChange names: at most 64, each at most 64 "
                "characters and an IMAP atom; case is ignored. Empty only with replace, which "
                "then clears every keyword. Omitted: keywords unchanged."
            ),
        ] = None,
        requestId: Annotated[
            str | None,
            Field(
                description="Your own identity for this request, up to 128 characters. The "
                "same value on a retry asking exactly what the first call asked answers the "
                "records that call wrote, as they stand now; reused for anything else (another "
                "value, a change more or fewer) it is refused. Omitted: a new request."
            ),
        ] = None,
    ) -> Annotated[CallToolResult, FlagChangeResult]:
        request = use_case.FlagChangeRequest(
            stored_email_id=storedEmailId,
            seen=seen,
            flagged=flagged,
            keyword_change=keywordChange,
            keywords=keywords,
            request_id=requestId,
        )
        return await registry.run(
            "set_mail_flags", lambda caller: _result(recorder.record(caller, request))
        )

    return ToolSpec(
        name="set_mail_flags",
        title="Set mail flags",
        description=(
            "Marks one email read or unread, stars or unstars it, and adds, removes or "
            "replaces its keywords, on the owner's own mail server. The call itself reaches "
            "no mail server and never waits on one: it writes one durable record per value "
            "and answers them; the account's next synchronization issues the change, and the "
            "records say how far it got (call again with the same requestId to see). The "
            "local copy shows the values at once. One email per call, at most 64 keywords."
            + TEXT_FORM
        ),
        category=ToolCategory.FLAGS,
        permissions=use_case.PERMISSIONS,
        annotations=MARKS,
        function=set_mail_flags,
    )
