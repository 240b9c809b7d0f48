"""The search_emails tool: its descriptor, and the call of its use case."""

from __future__ import annotations

from typing import Annotated

from mcp.types import CallToolResult
from pydantic import Field

from mailfathom.app.reading import search_emails as use_case
from mailfathom.app.reading.snippets import SNIPPET_CHARACTERS
from mailfathom.app.shared.mailbox_selection import SelectionInput
from mailfathom.domain.access import ToolCategory
from mailfathom.entrypoints.mcp import mapping
from mailfathom.entrypoints.mcp.models import SearchEmailsResult
from mailfathom.entrypoints.mcp.params import with_selection
from mailfathom.entrypoints.mcp.registry import READ_ONLY, ToolRegistry, ToolSpec
from mailfathom.entrypoints.mcp.result_text import TEXT_FORM
from mailfathom.entrypoints.mcp.untrusted import MAIL_CONTENT_IS_DATA

# A marked extract can at most double in length (each matched run needs a character of its
# own and one separating it from the next), plus the one-character truncation marks.
SNIPPET_CEILING = 3 * SNIPPET_CHARACTERS + 2


def spec(registry: ToolRegistry, reader: use_case.MailboxSearchReader) -> ToolSpec:
    @with_selection
    async def search_emails(
        selection: SelectionInput,
        queryText: Annotated[
            str | None,
            Field(
                description="The words to find, all of them, matched as written (no "
                "stemming, no translation: search in the language the mail is in); at most "
                "512 characters. Required unless matchPattern is given. Unrelated to "
                "subjectFragment, which only narrows which emails are eligible."
            ),
        ] = None,
        matchPattern: Annotated[
            str | None,
            Field(
                description="A regular expression (RE2 syntax, at most "
                f"{use_case.MAX_PATTERN_CHARACTERS} characters; no backreferences or "
                "lookaround) tried on the sender address, sender name, subject and body "
                "text of the emails the other arguments leave. Case is ignored unless the "
                "pattern says (?-i). Without queryText the newest emails are scanned, with "
                f"it the word matches; at most {use_case.MAX_PATTERN_CANDIDATES} are "
                f"examined within {use_case.PATTERN_SCAN_SECONDS:g} s, and patternScan "
                "says whether that cut the scan short."
            ),
        ] = None,
        resultLimit: Annotated[
            int | None,
            Field(description="Matches to return, 1 to 50. Omitted: 20. Never clamped."),
        ] = None,
    ) -> Annotated[CallToolResult, SearchEmailsResult]:
        request = use_case.SearchRequest(
            query_text=queryText,
            selection=selection,
            result_limit=resultLimit,
            match_pattern=matchPattern,
        )
        return await registry.run(
            "search_emails",
            lambda caller: mapping.search(reader.search(caller, request), SNIPPET_CEILING),
        )

    return ToolSpec(
        name="search_emails",
        title="Search emails",
        description=(
            "Searches the local copy for emails containing all the given words in the "
            "subject, participants or body, or matching a regular expression, or both, "
            "and returns at most 50 matches ranked by relevance (newest first for a "
            "pattern alone), each with its summary and short extracts around what "
            "matched. No cursor. No mail server is contacted." + MAIL_CONTENT_IS_DATA + TEXT_FORM
        ),
        category=ToolCategory.MAILBOX,
        permissions=use_case.PERMISSIONS,
        annotations=READ_ONLY,
        function=search_emails,
        waits_on_provider=reader.places_queries,
    )
