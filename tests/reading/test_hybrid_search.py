"""search_emails under hybrid retrieval, on a real SQLite store with an in-process embedder:
a paraphrase finds mail that shares no word with it, every filter narrows both rankings, and
`retrievalMode` / `semanticSearch` follow the provider (failing, left alone for the recheck
window, asked again by one search, recovered without a restart) and the generation's fill."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from cli.operator_cli import local_config
from fakes.embedder import FakeEmbedder
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.reading.search_emails import SearchRequest
from mailfathom.app.shared.embedding_ports import EmbeddingUnavailable
from mailfathom.app.shared.mailbox_selection import SelectionInput
from mailfathom.app.shared.query_placement import RECHECK_TEXT, QueryPlacement
from mailfathom.bootstrap import Services
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.embedding import EmbeddingFailure, RetrievalMode, SemanticState
from mailfathom.entrypoints.workers.background import recheck_provider
from store.account_scope import account_scope_checked
from waiting import wait_for

# Words the test embedder treats as one: what a model does for meanings, here by a table.
SAME_MEANING = {"leak": "water", "leaking": "water", "dripping": "water", "damage": "water"}
_WORD = re.compile(r"\w+")


@dataclass
class MeaningEmbedder(FakeEmbedder):
    def embed_passages(self, texts: list[str]) -> list[list[float]]:  # type: ignore[override]
        return super().embed_passages([_canonical(t) for t in texts])

    def embed_query(self, text: str) -> list[float]:
        return super().embed_query(_canonical(text))


def _canonical(text: str) -> str:
    return " ".join(SAME_MEANING.get(w, w) for w in _WORD.findall(text.lower()))


CALLER = Caller(frozenset({Permission.MAIL_READ}), "test")
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _mail(subject: str, body: str, sender: str, day: int) -> tuple[bytes, datetime]:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = "me@example.org"
    message["Subject"] = subject
    message["Message-ID"] = f"<{day}.{abs(hash(subject))}@example.org>"
    message.set_content(body)
    return bytes(message), START + timedelta(days=day)


MAIL = [
    _mail("Flat 3", "There is water damage in the bathroom ceiling.", "landlord@example.org", 1),
    _mail("Invoice", "Your invoice for March is attached.", "billing@example.org", 2),
    _mail("Garden", "The hedge will be cut on Friday.", "landlord@example.org", 3),
    _mail("Pipes", "The plumber says the pipes leak.", "plumber@example.org", 4),
    _mail("Lunch", "Shall we meet for lunch on Friday?", "friend@example.org", 5),
]


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def services(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Services]:
    store = ""
    if request.param == "postgresql":
        store = f'DatabaseUrl = "{request.getfixturevalue("migrated_postgres_url")}"'
    deployment = load_config(local_config(tmp_path, store=store))
    with Services.open(deployment) as opened:
        account = deployment.accounts[0]
        inbox = opened.connectors.local.folder(account.account_id, "INBOX")
        for raw, received in MAIL:
            inbox.deliver(raw, "", received)
        opened.account_synchronizer().run_once(account)
        yield opened


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _embed_with(
    services: Services, embedder: FakeEmbedder, clock: Clock, floor: float = 0.0
) -> None:
    """Make `embedder` the active one (its placement on `clock`, rechecking after 60 s)."""
    services.embedder = embedder
    services.placement = QueryPlacement(
        embedder, services.fill_states(), recheck_seconds=60.0, min_similarity=floor, clock=clock
    )


def _fill(services: Services) -> None:
    embedding = services.embedding()
    assert embedding is not None
    assert embedding.run().state.filled


def _search(services: Services, text: str, **selection: Any) -> tuple[list[str], Any]:
    result = services.reading().search.search(
        CALLER, SearchRequest(query_text=text, selection=SelectionInput(**selection))
    )
    return [m.summary.subject or "" for m in result.matches], result


def test_without_a_profile_search_is_lexical_and_inactive(services: Services) -> None:
    subjects, result = _search(services, "leak")
    assert subjects == ["Pipes"]
    assert result.retrieval_mode is RetrievalMode.LEXICAL
    assert result.semantic_search is SemanticState.INACTIVE


def test_without_a_profile_a_search_reads_in_one_snapshot(services: Services) -> None:
    # Nothing to ask a provider: no second snapshot after it (each begins with the folders'
    # counters).
    snapshots: list[str] = []

    def seen(*args: Any) -> None:
        if "FROM folder_versions" in str(args[2]):
            snapshots.append(str(args[2]))

    sa.event.listen(sa.Engine, "before_cursor_execute", seen)
    try:
        subjects, _ = _search(services, "leak")
    finally:
        sa.event.remove(sa.Engine, "before_cursor_execute", seen)
    assert subjects == ["Pipes"]
    assert len(snapshots) == 1


def test_a_paraphrase_finds_mail_sharing_no_word_with_it(services: Services) -> None:
    clock = Clock()
    _embed_with(services, MeaningEmbedder(dimension=256), clock)
    # Not yet filled: the query is placed, compared with nothing held, and says so.
    subjects, result = _search(services, "leak")
    assert result.semantic_search is SemanticState.DEGRADED
    _fill(services)
    subjects, result = _search(services, "leak")
    assert result.retrieval_mode is RetrievalMode.HYBRID
    assert result.semantic_search is SemanticState.AVAILABLE
    # Both: the lexical match and the one that says it in other words, agreed on first.
    assert subjects[:2] == ["Pipes", "Flat 3"]
    ranks = [m.relevance_rank for m in result.matches]
    assert ranks == sorted(ranks, reverse=True)
    # The one found by meaning alone has no word of the query to show.
    assert result.matches[1].snippets == ()
    assert "**leak**" in result.matches[0].snippets[0]


def test_every_filter_narrows_both_rankings(services: Services) -> None:
    _embed_with(services, MeaningEmbedder(dimension=256), Clock())
    _fill(services)
    subjects, result = _search(services, "leak", sender_address="landlord@example.org")
    assert result.retrieval_mode is RetrievalMode.HYBRID
    assert subjects[0] == "Flat 3"
    assert "Pipes" not in subjects
    subjects, _ = _search(services, "leak", received_before=START + timedelta(days=2))
    assert subjects[0] == "Flat 3"
    assert set(subjects) <= {"Flat 3"}


def test_a_hybrid_search_names_the_account_on_every_statement(services: Services) -> None:
    """Both rankings and the checks of what they found, under the store suites' check
    (store/account_scope.py)."""
    _embed_with(services, MeaningEmbedder(dimension=256), Clock())
    _fill(services)
    with account_scope_checked() as watch:
        subjects, result = _search(services, "leak")
        assert result.retrieval_mode is RetrievalMode.HYBRID
        assert subjects[:2] == ["Pipes", "Flat 3"]
        subjects, _ = _search(services, "leak", sender_address="landlord@example.org")
        assert subjects[0] == "Flat 3"
    assert watch.found == []


def test_a_failing_provider_is_left_alone_then_asked_by_one_search(services: Services) -> None:
    clock = Clock()
    embedder = MeaningEmbedder(dimension=256)
    _embed_with(services, embedder, clock)
    _fill(services)
    embedder.fail_always(EmbeddingFailure.REFUSED)
    asked = len(embedder.queries) + embedder.failures()
    subjects, result = _search(services, "leak")
    assert (result.retrieval_mode, result.semantic_search) == (
        RetrievalMode.LEXICAL,
        SemanticState.DEGRADED,
    )
    assert subjects == ["Pipes"]
    assert services.query_placement().state() is SemanticState.DEGRADED
    failures = embedder.failures()
    assert failures == asked - len(embedder.queries) + 1
    # Within the recheck window nobody asks the provider again, even once it is repaired.
    embedder.fail_always(None)
    clock.now += 59
    _, result = _search(services, "leak")
    assert result.retrieval_mode is RetrievalMode.LEXICAL
    assert result.semantic_search is SemanticState.DEGRADED
    assert embedder.failures() == failures
    queries = len(embedder.queries)
    # After it, the next search asks, and is hybrid again: no restart.
    clock.now += 2
    subjects, result = _search(services, "leak")
    assert len(embedder.queries) == queries + 1
    assert (result.retrieval_mode, result.semantic_search) == (
        RetrievalMode.HYBRID,
        SemanticState.AVAILABLE,
    )
    assert "Flat 3" in subjects


def test_the_worker_s_failures_and_recoveries_are_the_search_s(services: Services) -> None:
    clock = Clock()
    embedder = MeaningEmbedder(dimension=256)
    _embed_with(services, embedder, clock)
    _fill(services)
    placement = services.query_placement()
    assert placement.embedder is not None
    embedder.fail_next(EmbeddingFailure.UNREACHABLE)
    with pytest.raises(EmbeddingUnavailable):
        placement.embedder.embed_passages(["new mail"])
    assert placement.state() is SemanticState.DEGRADED
    # Within the window the worker does not ask either: it fails at once, as it last did.
    asked = len(embedder.batches) + embedder.failures()
    clock.now += 59
    with pytest.raises(EmbeddingUnavailable) as held:
        placement.embedder.embed_passages(["newer mail"])
    assert held.value.failure is EmbeddingFailure.UNREACHABLE
    assert len(embedder.batches) + embedder.failures() == asked
    clock.now += 2
    placement.embedder.embed_passages(["newer mail"])
    assert len(embedder.batches) + embedder.failures() == asked + 1
    assert placement.state() is SemanticState.AVAILABLE


def test_a_changed_profile_is_degraded_until_its_generation_is_filled(services: Services) -> None:
    _embed_with(services, MeaningEmbedder(dimension=256), Clock())
    _fill(services)
    _embed_with(services, MeaningEmbedder(dimension=256, version="2"), Clock())
    _, result = _search(services, "leak")
    assert result.semantic_search is SemanticState.DEGRADED
    _fill(services)
    _, result = _search(services, "leak")
    assert (result.retrieval_mode, result.semantic_search) == (
        RetrievalMode.HYBRID,
        SemanticState.AVAILABLE,
    )


def test_a_search_does_not_wait_for_the_writer(services: Services) -> None:
    """Whether the generation is filled is read as the rest of a search is, beside a
    synchronization's open transaction (SQLite: never behind its write lock)."""
    _embed_with(services, MeaningEmbedder(dimension=256), Clock())
    _fill(services)
    answered: list[Any] = []
    with services.engine.connect() as writer:
        writer.begin()
        searching = threading.Thread(target=lambda: answered.append(_search(services, "leak")))
        searching.start()
        searching.join(timeout=10)
        finished = not searching.is_alive()
        writer.rollback()
    searching.join()
    assert finished
    assert answered[0][1].semantic_search is SemanticState.AVAILABLE


def test_a_background_recheck_recovers_the_state_while_nobody_searches(
    services: Services,
) -> None:
    clock = Clock()
    embedder = MeaningEmbedder(dimension=256)
    _embed_with(services, embedder, clock)
    _fill(services)
    placement = services.query_placement()
    assert placement.recheck() is False  # nothing failed: nothing to ask
    embedder.fail_always(EmbeddingFailure.UNREACHABLE)
    _search(services, "leak")
    embedder.fail_always(None)
    queries = len(embedder.queries)
    clock.now += 30
    assert placement.recheck() is False
    assert placement.state() is SemanticState.DEGRADED
    clock.now += 31
    assert placement.recheck() is True
    # What was asked is a constant of the server's, no mail and no query.
    assert embedder.queries[queries:] == [RECHECK_TEXT]
    assert placement.state() is SemanticState.AVAILABLE


def test_serve_s_recheck_thread_asks_once_the_window_has_passed(services: Services) -> None:
    clock = Clock()
    embedder = MeaningEmbedder(dimension=256)
    _embed_with(services, embedder, clock)
    _fill(services)
    placement = services.query_placement()
    embedder.fail_always(EmbeddingFailure.REFUSED)
    _search(services, "leak")
    embedder.fail_always(None)
    clock.now += 61
    stop = threading.Event()
    worker = threading.Thread(target=recheck_provider, args=(placement, stop, 0.01))
    worker.start()
    try:
        wait_for(lambda: placement.state() is SemanticState.AVAILABLE, "recovered", timeout=10)
    finally:
        stop.set()
        worker.join(5)
    assert not worker.is_alive()


def test_a_query_nothing_is_near_matches_nothing(services: Services) -> None:
    embedder = MeaningEmbedder(dimension=256)
    _embed_with(services, embedder, Clock(), floor=0.2)
    _fill(services)
    subjects, result = _search(services, "xyzzy")
    assert subjects == []
    assert result.retrieval_mode is RetrievalMode.HYBRID
    # Punctuation alone is nothing the index keeps: not even sent to the provider.
    asked = len(embedder.queries)
    subjects, result = _search(services, "??? !!")
    assert subjects == []
    assert (result.retrieval_mode, result.semantic_search) == (
        RetrievalMode.LEXICAL,
        SemanticState.AVAILABLE,
    )
    assert len(embedder.queries) == asked
    # A paraphrase is still near enough.
    subjects, _ = _search(services, "leak")
    assert "Flat 3" in subjects


def test_a_pattern_filters_the_word_matches_only(services: Services) -> None:
    embedder = MeaningEmbedder(dimension=256)
    _embed_with(services, embedder, Clock())
    _fill(services)
    asked = len(embedder.queries)
    result = services.reading().search.search(
        CALLER, SearchRequest(query_text="leak", selection=SelectionInput(), match_pattern="Friday")
    )
    assert result.matches == ()
    assert result.pattern_scan is not None
    assert result.pattern_scan.cut is False
    assert result.retrieval_mode is RetrievalMode.LEXICAL
    result = services.reading().search.search(
        CALLER, SearchRequest(query_text="pipes", selection=SelectionInput(), match_pattern="plumb")
    )
    assert [m.summary.subject for m in result.matches] == ["Pipes"]
    assert len(embedder.queries) == asked
