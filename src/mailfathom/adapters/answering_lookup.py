"""The answering run's lookup, answered by search_emails' own use case.

A lookup is a search: the same use case instance the search_emails tool calls, so every
filter is checked, every bound applied and the scope resolved exactly as for a search a
caller makes, and search_emails' retrieval (lexical, or hybrid once the search is) is what an
answer is drawn from. Only the shape changes: a match becomes the `FoundEmail` the run shows
its model and cites.
"""

from __future__ import annotations

from collections.abc import Sequence

from mailfathom.app.answering.ports import FoundEmail, LookupRequest
from mailfathom.app.reading.search_emails import MailboxSearchReader, SearchRequest
from mailfathom.app.reading.views import SearchMatch
from mailfathom.domain.access import Caller


def _found(match: SearchMatch) -> FoundEmail:
    s = match.summary
    return FoundEmail(
        stored_email_id=s.stored_email_id,
        account_id=s.account_id,
        account_display_name=s.account_display_name,
        folder_alias=s.folder_alias,
        subject=s.subject,
        sender_address=s.sender_address,
        sender_display_name=s.sender_display_name,
        received_at=s.received_at,
        author_authentication=s.sender_verification.author_authentication,
        deployment_trust=s.sender_verification.deployment_trust,
        authorship_state=s.machine_authorship.state,
        authorship_likelihood=s.machine_authorship.likelihood,
        extracts=tuple(match.snippets),
    )


class SearchLookup:
    def __init__(self, search: MailboxSearchReader) -> None:
        self._search = search

    def find(self, caller: Caller, request: LookupRequest) -> Sequence[FoundEmail]:
        result = self._search.search(
            caller,
            SearchRequest(
                query_text=request.query_text,
                selection=request.selection,
                result_limit=request.result_limit,
            ),
        )
        return [_found(match) for match in result.matches]
