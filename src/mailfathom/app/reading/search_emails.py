"""search_emails: one ranked window of matches with bounded extracts.

Matches are lexical (every word of the query text), or found by a regular expression
(`match_pattern`) among the candidates the other arguments leave, or both: the pattern then
filters the lexical matches in their ranked order. Without query text a pattern's candidates
are the selected mailbox, newest received first, all ranked 0.

There is no cursor: a relevance order moves as mail is indexed, so a second window would not
continue the first. Neither the query text nor the pattern is rewritten, logged, or repeated
in a refusal."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mailfathom.app.reading import screening, snippets
from mailfathom.app.reading.pattern_scan import Candidate, ScanBounds, ScanOutcome, scan
from mailfathom.app.reading.ports import PatternCompiler, TextPattern
from mailfathom.app.reading.projection import freshness, summarize
from mailfathom.app.reading.views import (
    PatternScan,
    RetrievalMode,
    SearchMatch,
    SearchResult,
    SemanticSearchState,
)
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.app.shared.content_screen import UNSCREENED, ContentScreen
from mailfathom.app.shared.mailbox_selection import SelectionInput, ServedAccount, resolve_selection
from mailfathom.app.shared.stored_mail import SearchRow, SummaryFilter
from mailfathom.app.shared.stored_mail_ports import MailboxReadStore, MailboxReadView
from mailfathom.domain import text_rules
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from mailfathom.domain.sender_trust import NO_TRUSTED_SENDERS, SenderTrustPolicy

PERMISSIONS: Permissions = frozenset({Permission.MAIL_READ})

DEFAULT_RESULT_LIMIT = 20
MAX_RESULT_LIMIT = 50
MAX_QUERY_CHARACTERS = 512
MAX_PATTERN_CHARACTERS = 512
# The ceilings of one pattern's scan: candidates examined, and seconds spent examining them.
MAX_PATTERN_CANDIDATES = 2000
PATTERN_SCAN_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query_text: str | None
    selection: SelectionInput
    result_limit: int | None = None
    match_pattern: str | None = None


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


def _compiled(compiler: PatternCompiler, pattern: str) -> TextPattern:
    if not pattern:
        raise Refusal(Code.FILTER_NOT_ACCEPTED, "matchPattern is empty.")
    if len(pattern) > MAX_PATTERN_CHARACTERS:
        raise Refusal(
            Code.FILTER_NOT_ACCEPTED,
            f"matchPattern is longer than {MAX_PATTERN_CHARACTERS} characters.",
        )
    if not text_rules.is_one_line(pattern):
        raise Refusal(Code.FILTER_NOT_ACCEPTED, "matchPattern carries a control character.")
    compiled = compiler.compile(pattern)
    if compiled is None:
        raise Refusal(
            Code.FILTER_NOT_ACCEPTED,
            "matchPattern is not a regular expression this server accepts (RE2 syntax; "
            "no backreferences or lookaround).",
        )
    return compiled


class MailboxSearchReader:
    def __init__(
        self,
        store: MailboxReadStore,
        served: Sequence[ServedAccount],
        patterns: PatternCompiler,
        *,
        pattern_candidates: int | None = None,
        pattern_seconds: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        sender_trust: SenderTrustPolicy = NO_TRUSTED_SENDERS,
        screen: ContentScreen = UNSCREENED,
    ) -> None:
        """The pattern ceilings default to the module's published ones, read at each call."""
        self._store = store
        self._trust = sender_trust
        self._served = tuple(served)
        self._names = {a.account_id: a.display_name for a in served}
        self._patterns = patterns
        self._pattern_candidates = pattern_candidates
        self._pattern_seconds = pattern_seconds
        self._clock = clock
        self._screen = screen

    def search(self, caller: Caller, request: SearchRequest) -> SearchResult:
        require(caller, PERMISSIONS)
        limit = DEFAULT_RESULT_LIMIT if request.result_limit is None else request.result_limit
        if not 1 <= limit <= MAX_RESULT_LIMIT:
            raise Refusal(
                Code.RESULT_LIMIT_OUT_OF_RANGE,
                f"The result limit must be from 1 to {MAX_RESULT_LIMIT}.",
            )
        if request.query_text is None and request.match_pattern is None:
            raise Refusal(
                Code.FILTER_NOT_ACCEPTED, "A search needs queryText, matchPattern, or both."
            )
        words = None if request.query_text is None else _query_words(request.query_text)
        pattern = (
            None
            if request.match_pattern is None
            else _compiled(self._patterns, request.match_pattern)
        )
        with self._store.snapshot() as view:
            resolved = resolve_selection(view, self._served, request.selection)
            store_filter = resolved.store_filter
            outcome: ScanOutcome | None = None
            rows: list[SearchRow] = []
            if pattern is not None:
                outcome = self._scan(view, store_filter, words, pattern, limit)
            elif store_filter is not None and words is not None:
                rows = view.search(store_filter, words, limit)
        if outcome is not None:
            matches = self._pattern_matches(outcome)
            scanned = PatternScan(outcome.scanned, outcome.cut)
        else:
            matches = self._lexical_matches(rows, words or [])
            scanned = None
        return SearchResult(
            matches=matches,
            retrieval_mode=RetrievalMode.LEXICAL,
            semantic_search=SemanticSearchState.INACTIVE,
            included_junk_mail=resolved.included_junk_mail,
            folder_freshness=freshness(resolved.covered),
            pattern_scan=scanned,
        )

    def _scan(
        self,
        view: MailboxReadView,
        store_filter: SummaryFilter | None,
        words: list[str] | None,
        pattern: TextPattern,
        limit: int,
    ) -> ScanOutcome:
        if store_filter is None:
            return ScanOutcome((), 0, False)
        ceiling = self._pattern_candidates
        ceiling = MAX_PATTERN_CANDIDATES if ceiling is None else ceiling
        seconds = self._pattern_seconds
        seconds = PATTERN_SCAN_SECONDS if seconds is None else seconds
        if words is None:
            found = [
                Candidate(s, 0.0)
                for s in view.summaries(
                    store_filter, newest_first=True, after=None, limit=ceiling + 1
                )
            ]
        else:
            found = [
                Candidate(r.summary, r.rank)
                for r in view.search(store_filter, words, ceiling + 1, with_bodies=False)
            ]
        return scan(
            view,
            store_filter.folder_ids,
            pattern,
            found[:ceiling],
            more_remain=len(found) > ceiling,
            limit=limit,
            bounds=ScanBounds(seconds, self._clock),
        )

    def _lexical_matches(self, rows: list[SearchRow], words: list[str]) -> tuple[SearchMatch, ...]:
        terms = snippets.query_terms(words)
        screen = self._screen
        return tuple(
            SearchMatch(
                summary=screening.summary(screen, summarize(r.summary, self._names, self._trust)),
                relevance_rank=r.rank,
                # Redacted first: a term can then match a marker's word but never a part
                # of what the marker replaced.
                snippets=snippets.extracts(screen.body(r.body).text, terms),
            )
            for r in rows[:MAX_RESULT_LIMIT]
        )

    def _pattern_matches(self, outcome: ScanOutcome) -> tuple[SearchMatch, ...]:
        screen = self._screen
        matches: list[SearchMatch] = []
        for hit in outcome.hits[:MAX_RESULT_LIMIT]:
            body, spans = screen.marked(hit.body, hit.spans)
            summary = screening.summary(
                screen, summarize(hit.candidate.summary, self._names, self._trust)
            )
            matches.append(
                SearchMatch(
                    summary=summary,
                    relevance_rank=hit.candidate.rank,
                    snippets=snippets.marked_extracts(body, spans),
                )
            )
        return tuple(matches)
