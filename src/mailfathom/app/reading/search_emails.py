"""search_emails: one ranked window of matches with bounded extracts.

Matches are lexical (every word of the query text), or found by a regular expression
(`match_pattern`) among the candidates the other arguments leave, or both: the pattern then
filters the lexical matches in their ranked order. Without query text a pattern's candidates
are the selected mailbox, newest received first, all ranked 0.

Hybrid: when the deployment embeds its mail and the query can be placed in that space
(`QueryPlacement`), the lexical ranking and the ranking of the same eligible messages by
their nearest passage, each read deeper than the page (`lexical_depth`, `fusion_depth`),
are fused by reciprocal rank (`fusion`), and a message can match without carrying the
query's words.
The vector ranking is computed while the lexical one is read, so that a hybrid search
takes about as long as the slower of the two, not their sum.
Every filter applies to both rankings before either is read. The rank published is the
fused score; a message found by meaning alone carries no extract when none of the query's
words is in its body, as there is no matched run to show.

There is no cursor: a relevance order moves as mail is indexed, so a second window would not
continue the first. Neither the query text nor the pattern is rewritten, logged, or repeated
in a refusal."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mailfathom.app.reading import screening, snippets
from mailfathom.app.reading.fusion import fused_scores, fusion_depth, lexical_depth
from mailfathom.app.reading.pattern_scan import Candidate, ScanBounds, ScanOutcome, scan
from mailfathom.app.reading.ports import PatternCompiler, TextPattern
from mailfathom.app.reading.projection import freshness, summarize
from mailfathom.app.reading.views import PatternScan, SearchMatch, SearchResult
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.app.shared.content_screen import UNSCREENED, ContentScreen
from mailfathom.app.shared.mailbox_selection import SelectionInput, ServedAccount, resolve_selection
from mailfathom.app.shared.query_placement import Placement, QueryPlacement
from mailfathom.app.shared.stored_mail import SearchRow, SummaryFilter, SummaryRow
from mailfathom.app.shared.stored_mail_ports import MailboxReadStore, MailboxReadView
from mailfathom.domain import text_rules
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.embedding import RetrievalMode, SemanticState
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
        placement: QueryPlacement | None = None,
    ) -> None:
        """The pattern ceilings default to the module's published ones, read at each call.
        Without `placement` every search is lexical and says `inactive`."""
        self._store = store
        self._placement = placement
        self._trust = sender_trust
        self._served = tuple(served)
        self._names = {a.account_id: a.display_name for a in served}
        self._patterns = patterns
        self._pattern_candidates = pattern_candidates
        self._pattern_seconds = pattern_seconds
        self._clock = clock
        self._screen = screen

    def places_queries(self) -> bool:
        """Whether a search may ask the embedding provider to place its query (and so wait
        on that provider)."""
        return self._placement is not None and self._placement.placing

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
            placement = self._unplaced(words, pattern, store_filter)
            rows: list[SearchRow] = []
            outcome: ScanOutcome | None = None
            if placement is not None:
                rows, outcome = self._read(view, store_filter, words, pattern, limit, placement)
        if placement is None:
            # The provider is asked outside any read snapshot: a slow one holds no
            # connection of the readers.
            placement = self._place(request.query_text or "")
            with self._store.snapshot() as view:
                rows, outcome = self._read(view, store_filter, words, pattern, limit, placement)
        if outcome is not None:
            matches = self._pattern_matches(outcome)
            scanned = PatternScan(outcome.scanned, outcome.cut)
        else:
            matches = self._lexical_matches(rows, words or [])
            scanned = None
        return SearchResult(
            matches=matches,
            retrieval_mode=(
                RetrievalMode.LEXICAL if placement.vector is None else RetrievalMode.HYBRID
            ),
            semantic_search=placement.state,
            included_junk_mail=resolved.included_junk_mail,
            folder_freshness=freshness(resolved.covered),
            pattern_scan=scanned,
        )

    def _unplaced(
        self,
        words: list[str] | None,
        pattern: TextPattern | None,
        store_filter: SummaryFilter | None,
    ) -> Placement | None:
        """How the search is ranked when its query is not to be placed in the embedding
        space, or None when it is. Not placed, and so never sent to a provider: a search of
        no folder, one whose words hold nothing the index keeps (punctuation alone matches
        nothing lexically, and would otherwise match everything by meaning), and a search
        with a pattern, whose candidates are the word matches (docs/mcp.md)."""
        placement = self._placement
        if placement is None or not placement.placing:
            # No provider to ask: the search is read in the snapshot it resolved in.
            return _INACTIVE
        if (
            words is None
            or pattern is not None
            or store_filter is None
            or not snippets.query_terms(words)
        ):
            return Placement(None, None, placement.state())
        return None

    def _place(self, query_text: str) -> Placement:
        return _INACTIVE if self._placement is None else self._placement.place(query_text)

    def _read(
        self,
        view: MailboxReadView,
        store_filter: SummaryFilter | None,
        words: list[str] | None,
        pattern: TextPattern | None,
        limit: int,
        placement: Placement,
    ) -> tuple[list[SearchRow], ScanOutcome | None]:
        if pattern is not None:
            return [], self._scan(view, store_filter, words, pattern, limit)
        if store_filter is None or words is None:
            return [], None
        return _ranked(view, store_filter, words, limit, placement), None

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


_INACTIVE = Placement(None, None, SemanticState.INACTIVE)


def _ranked(
    view: MailboxReadView,
    selection: SummaryFilter,
    words: Sequence[str],
    limit: int,
    placement: Placement,
) -> list[SearchRow]:
    """Up to `limit` rows with their bodies, best first: the lexical ranking alone, or fused
    with the nearest messages when the query was placed. Each ranking is read deeper than
    the page as positions alone (`lexical_depth`, `fusion_depth`), the nearest one while
    the lexical one is read;
    only the page's rows and bodies are read. A message the vector ranking alone brings
    must be at least `placement.floor` similar to the query."""
    if placement.vector is None or placement.generation is None:
        return view.search(selection, words, limit)
    depth = fusion_depth(limit)
    pending = view.start_nearest(placement.generation, placement.vector, selection, depth)
    lexical = [seq for seq, _ in view.ranking(selection, words, lexical_depth(limit))]
    known = set(lexical)
    nearest = [n.seq for n in pending.result() if n.seq in known or n.score >= placement.floor]
    scores = fused_scores(lexical, nearest)
    summaries = _leading(view, scores, selection, limit)

    def order(seq: int) -> tuple[float, float, int]:
        received = summaries[seq].received_at
        return (-scores[seq], -received.timestamp() if received else float("inf"), -seq)

    page = sorted(summaries, key=order)[:limit]
    bodies = view.indexed_texts(page, selection.folder_ids)
    return [SearchRow(summaries[seq], scores[seq], bodies.get(seq, "")) for seq in page]


def _leading(
    view: MailboxReadView, scores: dict[int, float], selection: SummaryFilter, limit: int
) -> dict[int, SummaryRow]:
    """The rows of the best-scored messages still in the selection's folders: at least
    `limit` of them when as many are, and every message tied in score with the last, so
    that the page's order among ties (newest received first) is decided over all of them."""
    ranked = sorted(scores, key=lambda seq: -scores[seq])
    found: dict[int, SummaryRow] = {}
    read = 0
    while read < len(ranked) and len(found) < limit:
        end = min(len(ranked), read + limit - len(found))
        while end < len(ranked) and scores[ranked[end]] == scores[ranked[end - 1]]:
            end += 1
        found |= view.summaries_of(ranked[read:end], selection)
        read = end
    return found
