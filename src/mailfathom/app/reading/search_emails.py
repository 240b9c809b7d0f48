"""search_emails: one ranked window of lexical matches with bounded extracts.

There is no cursor: a relevance order moves as mail is indexed, so a second window would not
continue the first. The query text is matched, never rewritten, and never logged."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mailfathom.app.reading import snippets
from mailfathom.app.reading.projection import freshness, summarize
from mailfathom.app.reading.views import (
    RetrievalMode,
    SearchMatch,
    SearchResult,
    SemanticSearchState,
)
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.app.shared.mailbox_selection import SelectionInput, ServedAccount, resolve_selection
from mailfathom.app.shared.stored_mail_ports import MailboxReadStore
from mailfathom.domain import text_rules
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal

PERMISSIONS: Permissions = frozenset({Permission.MAIL_READ})

DEFAULT_RESULT_LIMIT = 20
MAX_RESULT_LIMIT = 50
MAX_QUERY_CHARACTERS = 512


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query_text: str
    selection: SelectionInput
    result_limit: int | None = None


def _query_words(text: str) -> list[str]:
    if not text.strip():
        raise Refusal(Code.FILTER_NOT_ACCEPTED, "The search query is blank.")
    if len(text) > MAX_QUERY_CHARACTERS:
        raise Refusal(
            Code.FILTER_NOT_ACCEPTED,
            f"The search query is longer than {MAX_QUERY_CHARACTERS} characters.",
        )
    if not text_rules.is_one_line(text):
        raise Refusal(Code.FILTER_NOT_ACCEPTED, "The search query carries a control character.")
    return text.split()


class MailboxSearchReader:
    def __init__(self, store: MailboxReadStore, served: Sequence[ServedAccount]) -> None:
        self._store = store
        self._served = tuple(served)
        self._names = {a.account_id: a.display_name for a in served}

    def search(self, caller: Caller, request: SearchRequest) -> SearchResult:
        require(caller, PERMISSIONS)
        limit = DEFAULT_RESULT_LIMIT if request.result_limit is None else request.result_limit
        if not 1 <= limit <= MAX_RESULT_LIMIT:
            raise Refusal(
                Code.RESULT_LIMIT_OUT_OF_RANGE,
                f"The result limit must be from 1 to {MAX_RESULT_LIMIT}.",
            )
        words = _query_words(request.query_text)
        with self._store.snapshot() as view:
            resolved = resolve_selection(view, self._served, request.selection)
            rows = (
                view.search(resolved.store_filter, words, limit)
                if resolved.store_filter is not None
                else []
            )
        terms = snippets.query_terms(words)
        matches = tuple(
            SearchMatch(
                summary=summarize(r.summary, self._names),
                relevance_rank=r.rank,
                snippets=snippets.extracts(r.body, terms),
            )
            for r in rows[:MAX_RESULT_LIMIT]
        )
        return SearchResult(
            matches=matches,
            retrieval_mode=RetrievalMode.LEXICAL,
            semantic_search=SemanticSearchState.INACTIVE,
            included_junk_mail=resolved.included_junk_mail,
            folder_freshness=freshness(resolved.covered),
        )
