"""Every `semanticSearch` state and transition of search_emails as the official MCP client sees
it over HTTP from `mailfathom serve`, with an `openai` embedding profile pointing at the test
model provider (tests/mcp_tests/semantic_deployment.py says what the mail and the provider's
vectors are).

Each answer's (`retrievalMode`, `semanticSearch`) pair is asserted whole, and what the
provider was asked is counted at the provider: a failed provider is left alone by searches for
`RecheckSeconds`, even once repaired, then one search asks it and is hybrid again without a
restart. `serve` runs without synchronization, so the only other caller of the provider is
its background re-check, which embeds a constant text of its own (`RECHECK_TEXT`) and is told
apart from a search by it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mailfathom.app.shared.query_placement import RECHECK_TEXT
from mcp_tests.semantic_deployment import (
    BY_MEANING,
    LEXICAL_MATCH,
    MAIL,
    QUERY,
    RECHECK_SECONDS,
    TIMEOUT_SECONDS,
    Profile,
    SemanticDeployment,
    modes,
    subjects,
)
from servers.model_provider import (
    DEFAULT_DIMENSION,
    DEFAULT_EMBEDDING_MODEL,
    EMBEDDINGS,
    ModelProvider,
)
from servers.postgres import PostgresServer
from waiting import wait_for

LEXICAL_INACTIVE = ("lexical", "inactive")
LEXICAL_DEGRADED = ("lexical", "degraded")
HYBRID_DEGRADED = ("hybrid", "degraded")
HYBRID_AVAILABLE = ("hybrid", "available")
LEXICAL_AVAILABLE = ("lexical", "available")
FILLED = Profile(version="1")


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def semantic(
    request: pytest.FixtureRequest,
    model_provider: ModelProvider,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[SemanticDeployment]:
    store = ""
    database: tuple[PostgresServer, str] | None = None
    if request.param == "postgresql":
        server: PostgresServer = request.getfixturevalue("postgres_server")
        template: str = request.getfixturevalue("migrated_postgres_template")
        name = f"t_states_{time.time_ns()}"
        store = f'DatabaseUrl = "{server.create_database(name, template=template)}"'
        database = (server, name)
    deployment = SemanticDeployment(tmp_path_factory.mktemp("states"), model_provider, store)
    try:
        deployment.fill()
        yield deployment
    finally:
        deployment.stop()
        if database is not None:
            database[0].drop_database(database[1])


def _asked(provider: ModelProvider) -> list[list[str]]:
    """The texts of every embeddings request the provider received since its last reset."""
    return [list(body["input"]) for body in provider.requests(EMBEDDINGS)]


def _searches(provider: ModelProvider) -> int:
    """How many requests placed the query (the background re-check embeds its own constant,
    `mfctl mailbox embed` the passages of stored mail)."""
    return sum(1 for texts in _asked(provider) if texts == [QUERY])


def _ready(semantic: SemanticDeployment, profile: Profile = FILLED) -> None:
    """Serve `profile` with its generation filled and the provider answering."""
    semantic.serve(profile)
    found = semantic.search()
    if modes(found) != HYBRID_AVAILABLE:
        semantic.embed()
    assert modes(semantic.search()) == HYBRID_AVAILABLE


def _wait_past_window(failed_by: float) -> None:
    """Sleep until the re-check window of a failure seen before `failed_by` has passed."""
    time.sleep(max(0.0, failed_by + RECHECK_SECONDS + 0.5 - time.monotonic()))


def test_without_a_profile_search_is_lexical_and_inactive(
    semantic: SemanticDeployment, provider: ModelProvider
) -> None:
    semantic.serve(None)
    found = semantic.search()
    assert modes(found) == LEXICAL_INACTIVE
    assert subjects(found) == [LEXICAL_MATCH]
    assert _asked(provider) == []


def test_filled_mail_is_searched_hybrid_and_available(
    semantic: SemanticDeployment, provider: ModelProvider
) -> None:
    semantic.serve(Profile(version="first-fill"))
    # Nothing embedded yet in this generation: the query is placed, and said to be narrow.
    found = semantic.search()
    assert modes(found) == HYBRID_DEGRADED
    assert subjects(found) == [LEXICAL_MATCH]
    semantic.embed()
    found = semantic.search()
    assert modes(found) == HYBRID_AVAILABLE
    names = subjects(found)
    # The message holding the word first, then those saying `drainpipes` (found by their
    # vectors alone), then the other messages the vector ranking holds at least as near as
    # the profile's floor (0 for an endpoint: none pointing away from the query).
    assert names[0] == LEXICAL_MATCH
    assert set(names[1:3]) == BY_MEANING
    assert set(names) <= set(MAIL)
    assert len(names) == len(set(names))
    ranks = [m["relevanceRank"] for m in found["matches"]]
    assert ranks == sorted(ranks, reverse=True)
    by_subject = {m["summary"]["subject"]: m for m in found["matches"]}
    assert any(f"**{QUERY}**" in s for s in by_subject[LEXICAL_MATCH]["snippets"])
    for name in BY_MEANING:
        assert by_subject[name]["snippets"] == []
    assert _searches(provider) == 2
    assert [RECHECK_TEXT] not in _asked(provider)


def _refuse(provider: ModelProvider) -> None:
    provider.fail(EMBEDDINGS, "401")


def _error(provider: ModelProvider) -> None:
    provider.fail(EMBEDDINGS, "500")


def _hold(provider: ModelProvider) -> None:
    provider.fail(EMBEDDINGS, "timeout", hold_seconds=10 * TIMEOUT_SECONDS)


def _another_dimension(provider: ModelProvider) -> None:
    provider.set_embedding_model(DEFAULT_EMBEDDING_MODEL, DEFAULT_DIMENSION // 2)


def _another_model(provider: ModelProvider) -> None:
    provider.set_embedding_model("another-embedding", DEFAULT_DIMENSION)


# How the provider fails, and whether the failing request reaches it. Each is repaired by
# `reset` (the provider answering as at start), a stopped one by starting it again.
FAILURES: dict[str, tuple[Callable[[ModelProvider], None], int]] = {
    "refused credential": (_refuse, 1),
    "server error": (_error, 1),
    "no answer in time": (_hold, 1),
    "endpoint stopped": (ModelProvider.stop, 0),
    "another dimension": (_another_dimension, 1),
    "another model": (_another_model, 1),
}


def _repair(provider: ModelProvider) -> None:
    if provider.running:
        provider.reset()
    else:
        provider.start()


@pytest.mark.parametrize("failure", list(FAILURES))
def test_a_failed_provider_is_left_alone_then_one_search_recovers_without_restart(
    semantic: SemanticDeployment, provider: ModelProvider, failure: str
) -> None:
    _ready(semantic)
    provider.reset()
    breaks, reaching = FAILURES[failure]
    breaks(provider)
    found = semantic.search()
    failed_by = time.monotonic()
    assert modes(found) == LEXICAL_DEGRADED
    assert subjects(found) == [LEXICAL_MATCH]
    if provider.running:
        assert len(_asked(provider)) == reaching
    # Still broken, then repaired: within the window no search asks the provider again.
    found = semantic.search()
    assert modes(found) == LEXICAL_DEGRADED
    if provider.running:
        assert len(_asked(provider)) == reaching
    _repair(provider)
    found = semantic.search()
    assert modes(found) == LEXICAL_DEGRADED
    assert subjects(found) == [LEXICAL_MATCH]
    assert _asked(provider) == []
    # Past it, a search asks (the background re-check may have asked first, with its own
    # constant and nothing else) and is hybrid again, in the same process. A search made
    # while that re-check is still waiting for its answer does not ask, and is degraded.
    _wait_past_window(failed_by)

    def recovered() -> dict[str, Any] | None:
        answered = semantic.search()
        return answered if modes(answered) == HYBRID_AVAILABLE else None

    found = wait_for(recovered, "a search past the window is hybrid", timeout=30, interval=0.5)
    assert set(subjects(found)[:3]) >= BY_MEANING
    assert _searches(provider) == 1
    assert all(texts in ([QUERY], [RECHECK_TEXT]) for texts in _asked(provider))
    assert QUERY not in semantic.server_log.read_text("utf-8", errors="replace")


@pytest.mark.parametrize(
    "changed", [Profile(version="2"), Profile(model="another-embedding")], ids=["version", "model"]
)
def test_a_changed_profile_is_degraded_until_its_generation_is_filled(
    semantic: SemanticDeployment, provider: ModelProvider, changed: Profile
) -> None:
    _ready(semantic)
    provider.set_embedding_model(changed.model, changed.dimension)
    semantic.serve(changed)
    found = semantic.search()
    # The query is placed in the new space, which holds nothing yet.
    assert modes(found) == HYBRID_DEGRADED
    assert subjects(found) == [LEXICAL_MATCH]
    semantic.embed()
    found = semantic.search()
    assert modes(found) == HYBRID_AVAILABLE
    assert set(subjects(found)[1:3]) == BY_MEANING


def test_filters_hold_under_hybrid_search(
    semantic: SemanticDeployment, provider: ModelProvider
) -> None:
    _ready(semantic)
    landlord = "landlord@example.org"
    found = semantic.search(senderAddress=landlord)
    assert modes(found) == HYBRID_AVAILABLE
    assert set(subjects(found)[:2]) == BY_MEANING
    assert {m["summary"]["senderAddress"] for m in found["matches"]} == {landlord}
    found = semantic.search(folders=["Archive"])
    assert modes(found) == HYBRID_AVAILABLE
    assert subjects(found) == ["Replaced last autumn"]
    found = semantic.search(folders=["INBOX"])
    assert modes(found) == HYBRID_AVAILABLE
    assert {m["summary"]["folderAlias"] for m in found["matches"]} == {"INBOX"}
    assert subjects(found)[:2] == [LEXICAL_MATCH, "North wall"]
    found = semantic.search(folders=["INBOX"], senderAddress=landlord)
    assert modes(found) == HYBRID_AVAILABLE
    assert subjects(found) == ["North wall", "Hedge cutting"]
    assert QUERY not in semantic.server_log.read_text("utf-8", errors="replace")


def test_serve_asks_a_failed_provider_again_while_nobody_searches(
    semantic: SemanticDeployment, provider: ModelProvider
) -> None:
    _ready(semantic)
    # A pattern alone is not placed: lexical, beside the state as the server knows it.
    found = semantic.search(None, matchPattern=QUERY)
    assert modes(found) == LEXICAL_AVAILABLE
    assert set(subjects(found)) == {LEXICAL_MATCH, *BY_MEANING}
    provider.reset()
    provider.fail(EMBEDDINGS, "401")
    assert modes(semantic.search()) == LEXICAL_DEGRADED
    provider.reset()
    assert modes(semantic.search(None, matchPattern=QUERY)) == LEXICAL_DEGRADED
    wait_for(
        lambda: _asked(provider),
        "serve asked the provider again",
        timeout=RECHECK_SECONDS + 30,
        interval=0.2,
    )
    # What it asked is its own constant, no mail and no query; the state is available again
    # before any search has asked.
    assert _asked(provider) == [[RECHECK_TEXT]]
    assert modes(semantic.search(None, matchPattern=QUERY)) == LEXICAL_AVAILABLE
    assert _asked(provider) == [[RECHECK_TEXT]]
    found = semantic.search()
    assert modes(found) == HYBRID_AVAILABLE
    assert _asked(provider) == [[RECHECK_TEXT], [QUERY]]
