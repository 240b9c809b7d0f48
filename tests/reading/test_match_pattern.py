"""search_emails' matchPattern on a real store: what a pattern is tried on, how it is
refused (with a code, never repeating the pattern), and the ceilings that bound a scan,
which a caller is told about when they cut it short. Refusals and the cut are also met by
the official MCP client over Streamable HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from log_audit import register
from mailfathom.app.reading import search_emails
from mailfathom.app.reading.search_emails import SearchRequest
from mailfathom.app.reading.views import SearchResult
from mailfathom.app.shared.mailbox_selection import SelectionInput
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.errors import Refusal
from mcp_tests.client import call, code, structured, text
from mcp_tests.deployment import message
from reading.local_mailbox import KEY, served_over_http, synchronized, write_mailbox

CALLER = Caller(ALL_PERMISSIONS, "patterns")
START = datetime(2026, 4, 1, 8, 0, tzinfo=UTC)
LONG = 150_000
# (subject, sender, body), oldest first.
MAILS = [
    ("Invoice 2041 for April", "Billing Desk <billing@example.com>", "Amount due: 310 EUR.\n"),
    ("Lunch on Friday?", "Dana Quill <dana@example.org>", "Shall we try the new place?\n"),
    ("Build failed", "ci-robot@builds.example.net", "Step 4 of 9 failed: exit code 137.\n"),
    ("Long A!", "Bulk Sender <bulk@example.com>", "a" * LONG + "!\n"),
    ("Long X!", "Bulk Sender <bulk@example.com>", "x" * LONG + "\n"),
    ("Re: Invoice 2041 for April", "Dana Quill <dana@example.org>", "Paid it today.\n"),
]
# Patterns the refusals use: distinctive enough for the log audit to look for.
BACKREFERENCE = r"(zephyrword)\1"
LOOKAHEAD = r"(?=zephyrword)zephyr"
INVALID = r"zephyrword[unclosed"
TOO_LONG = "zephyrword" + "q" * 503


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    register(BACKREFERENCE, LOOKAHEAD, INVALID, TOO_LONG)
    raws = [
        message(subject, sent=START + timedelta(hours=n), sender=sender, body=body)
        for n, (subject, sender, body) in enumerate(MAILS)
    ]
    config = write_mailbox(tmp_path_factory.mktemp("patterns"), raws)
    with synchronized(config) as opened:
        yield opened


def _search(services: Services, **arguments: object) -> SearchResult:
    request = SearchRequest(
        query_text=arguments.pop("query_text", None),  # type: ignore[arg-type]
        selection=SelectionInput(),
        match_pattern=arguments.pop("match_pattern", None),  # type: ignore[arg-type]
        result_limit=arguments.pop("result_limit", None),  # type: ignore[arg-type]
    )
    return services.reading().search.search(CALLER, request)


def _subjects(result: SearchResult) -> list[str | None]:
    return [m.summary.subject for m in result.matches]


def test_a_pattern_alone_scans_the_mailbox_newest_first(services: Services) -> None:
    result = _search(services, match_pattern=r"invoice \d{4}")
    assert _subjects(result) == ["Re: Invoice 2041 for April", "Invoice 2041 for April"]
    assert [m.relevance_rank for m in result.matches] == [0.0, 0.0]
    assert result.pattern_scan is not None
    assert result.pattern_scan.candidates_scanned == len(MAILS)
    assert not result.pattern_scan.cut


def test_the_pattern_is_tried_on_sender_name_address_subject_and_body(
    services: Services,
) -> None:
    assert _subjects(_search(services, match_pattern="^dana quill$")) == [
        "Re: Invoice 2041 for April",
        "Lunch on Friday?",
    ]
    assert _subjects(_search(services, match_pattern=r"@builds\.example")) == ["Build failed"]
    body = _search(services, match_pattern=r"exit code \d+")
    assert _subjects(body) == ["Build failed"]
    assert body.matches[0].snippets == ("Step 4 of 9 failed: **exit code 137**.",)


def test_case_is_ignored_unless_the_pattern_turns_it_back_on(services: Services) -> None:
    assert _subjects(_search(services, match_pattern="LUNCH")) == ["Lunch on Friday?"]
    assert _subjects(_search(services, match_pattern="(?-i)LUNCH")) == []
    assert _subjects(_search(services, match_pattern="(?-i)Lunch")) == ["Lunch on Friday?"]


def test_with_query_text_the_pattern_filters_the_word_matches(services: Services) -> None:
    result = _search(services, query_text="invoice", match_pattern="^re:")
    assert _subjects(result) == ["Re: Invoice 2041 for April"]
    assert result.pattern_scan is not None
    assert result.pattern_scan.candidates_scanned == 2
    assert result.matches[0].relevance_rank > 0


def test_catastrophic_patterns_are_linear_over_long_bodies(services: Services) -> None:
    """Patterns a backtracking engine needs exponential time for on these bodies: RE2
    examines every candidate, finds no match, and nothing is cut."""
    for pattern in ("(a+)+$", "(x+x+)+y", "(a|aa)+$", "(x+)*#"):
        result = _search(services, match_pattern=pattern)
        assert result.pattern_scan is not None
        assert result.pattern_scan.candidates_scanned == len(MAILS), pattern
        assert not result.pattern_scan.cut
        assert _subjects(result) == [], pattern


def test_a_full_window_ends_the_scan_without_a_cut(services: Services) -> None:
    result = _search(services, match_pattern="e", result_limit=2)
    assert len(result.matches) == 2
    assert result.pattern_scan is not None
    assert result.pattern_scan.candidates_scanned == 2
    assert not result.pattern_scan.cut


def test_the_candidate_ceiling_cuts_the_scan_and_says_so(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_emails, "MAX_PATTERN_CANDIDATES", 3)
    result = _search(services, match_pattern="invoice")
    assert _subjects(result) == ["Re: Invoice 2041 for April"]
    assert result.pattern_scan is not None
    assert result.pattern_scan.candidates_scanned == 3
    assert result.pattern_scan.cut


def test_the_time_ceiling_cuts_the_scan_and_says_so(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_emails, "PATTERN_SCAN_SECONDS", 0.0)
    result = _search(services, match_pattern="invoice")
    assert result.matches == ()
    assert result.pattern_scan is not None
    assert result.pattern_scan.candidates_scanned == 0
    assert result.pattern_scan.cut


@pytest.mark.parametrize(
    "arguments",
    [
        {"match_pattern": BACKREFERENCE},
        {"match_pattern": LOOKAHEAD},
        {"match_pattern": INVALID},
        {"match_pattern": TOO_LONG},
        {"match_pattern": ""},
        {"match_pattern": "zephyr\u0007word"},
        {},
    ],
)
def test_a_pattern_the_server_cannot_use_is_refused_51002(
    services: Services, arguments: dict[str, object]
) -> None:
    with pytest.raises(Refusal) as refused:
        _search(services, **arguments)
    assert refused.value.code == 51002
    assert "zephyr" not in str(refused.value)


def test_a_pattern_of_512_characters_is_accepted(services: Services) -> None:
    result = _search(services, match_pattern="b" * 512)
    assert result.pattern_scan is not None
    assert result.matches == ()


# -- over Streamable HTTP ------------------------------------------------------------------


@pytest.fixture(scope="module")
def url(services: Services) -> Iterator[str]:
    with served_over_http(services) as where:
        yield where


@pytest.mark.parametrize(
    "arguments",
    [
        {"matchPattern": BACKREFERENCE},
        {"matchPattern": LOOKAHEAD},
        {"matchPattern": INVALID},
        {"matchPattern": TOO_LONG},
        {"resultLimit": 5},
        {"queryText": "invoice", "matchPattern": BACKREFERENCE},
    ],
)
def test_over_http_a_refused_pattern_answers_51002_without_repeating_it(
    url: str, arguments: dict[str, object]
) -> None:
    result = call(url, KEY, "search_emails", arguments)
    assert result.is_error
    assert code(result) == 51002
    assert "zephyr" not in text(result)
    assert "matchPattern" in text(result) or "queryText" in text(result)


def test_over_http_the_cut_is_reported_in_pattern_scan(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_emails, "MAX_PATTERN_CANDIDATES", 2)
    answer = structured(call(url, KEY, "search_emails", {"matchPattern": "bulk"}))
    assert answer["patternScan"] == {"candidatesScanned": 2, "cut": True}
    assert [m["summary"]["subject"] for m in answer["matches"]] == ["Long X!"]
    monkeypatch.undo()
    whole = structured(call(url, KEY, "search_emails", {"matchPattern": "bulk"}))
    assert whole["patternScan"] == {"candidatesScanned": len(MAILS), "cut": False}
    assert [m["summary"]["subject"] for m in whole["matches"]] == ["Long X!", "Long A!"]


def test_over_http_a_search_without_pattern_reports_no_scan(url: str) -> None:
    answer = structured(call(url, KEY, "search_emails", {"queryText": "invoice"}))
    assert answer.get("patternScan") is None
    assert len(answer["matches"]) == 2
