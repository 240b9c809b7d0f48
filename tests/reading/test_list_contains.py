"""list_emails' contains on a real store: a case-insensitive substring of the body text,
narrowed by the lexical index without losing a body that carries it, bounded per page with
the bound reported, and walked with cursors. Refusals and one page also over Streamable
HTTP with the official client."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from log_audit import register
from mailfathom.app.reading import body_filter
from mailfathom.app.reading.list_emails import TimelineRequest
from mailfathom.app.reading.views import TimelinePage
from mailfathom.app.shared.mailbox_selection import SelectionInput
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.errors import Refusal
from mcp_tests.client import call, code, structured, text
from mcp_tests.deployment import message
from reading.local_mailbox import KEY, served_over_http, synchronized, write_mailbox

CALLER = Caller(ALL_PERMISSIONS, "contains")
START = datetime(2026, 4, 1, 8, 0, tzinfo=UTC)
# (subject, body), oldest first.
MAILS = [
    ("Ferry", "The FERRY leaves at nine from pier four.\n"),
    ("Invoice", "Your invoice number 2041 is attached.\n"),
    ("Bus", "The bus leaves at nine from the depot.\n"),
    ("Ferry again", "Reminder: the ferry leaves at nine tomorrow.\n"),
    ("Unrelated note", "Unrelated words only.\n"),
    ("Ferry in the subject only", "Nothing here either.\n"),
    ("Strasse", "Treffpunkt: Hauptstraße 5.\n"),
]
SECRET = "quixoticfragment"


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    register(SECRET)
    raws = [
        message(subject, sent=START + timedelta(hours=n), body=body)
        for n, (subject, body) in enumerate(MAILS)
    ]
    config = write_mailbox(tmp_path_factory.mktemp("contains"), raws)
    with synchronized(config) as opened:
        yield opened


def _page(services: Services, contains: str | None, **more: object) -> TimelinePage:
    request = TimelineRequest(selection=SelectionInput(), contains=contains, **more)  # type: ignore[arg-type]
    return services.reading().timeline.read(CALLER, request)


def _walk(services: Services, contains: str, **more: object) -> list[str | None]:
    subjects: list[str | None] = []
    cursor = None
    for _ in range(50):
        page = _page(services, contains, cursor=cursor, **more)
        subjects.extend(e.subject for e in page.emails)
        cursor = page.next_cursor
        if cursor is None:
            return subjects
    raise AssertionError("the walk did not end")


def test_contains_is_a_case_insensitive_body_substring(services: Services) -> None:
    page = _page(services, "ferry leaves")
    assert [e.subject for e in page.emails] == ["Ferry again", "Ferry"]
    assert page.contains_scan is not None
    assert not page.contains_scan.cut
    assert [e.subject for e in _page(services, "VOICE NUMB").emails] == ["Invoice"]
    assert [e.subject for e in _page(services, "straße").emails] == ["Strasse"]
    assert [e.subject for e in _page(services, "STRASSE").emails] == ["Strasse"]


def test_inner_words_narrow_without_losing_a_body(services: Services) -> None:
    """ "leaves at" are whole words of every body carrying the fragment; the index reads
    only those, and the bodies then decide."""
    assert body_filter.inner_words("he ferry leaves at ni") == ("ferry", "leaves", "at")
    page = _page(services, "he ferry leaves at ni")
    assert [e.subject for e in page.emails] == ["Ferry again", "Ferry"]
    assert page.contains_scan is not None
    assert page.contains_scan.bodies_examined == 2
    assert [e.subject for e in _page(services, "leaves at nine").emails] == [
        "Ferry again",
        "Bus",
        "Ferry",
    ]


def test_the_subject_alone_does_not_count(services: Services) -> None:
    assert "Ferry in the subject only" not in _walk(services, "ferry")


def test_pages_walk_in_either_direction(services: Services) -> None:
    assert _walk(services, "leaves", page_size=1) == ["Ferry again", "Bus", "Ferry"]
    assert _walk(services, "leaves", page_size=2, newest_first=False) == [
        "Ferry",
        "Bus",
        "Ferry again",
    ]


def test_the_body_bound_cuts_a_page_and_the_cursor_goes_on(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(body_filter, "MAX_CONTAINS_BODIES", 2)
    first = _page(services, "e")
    assert first.contains_scan is not None
    assert first.contains_scan.bodies_examined == 2
    assert first.contains_scan.cut
    assert first.next_cursor is not None
    every = [s for s, _ in reversed(MAILS)]
    assert _walk(services, "e") == every


def test_a_cursor_is_bound_to_its_fragment(services: Services) -> None:
    first = _page(services, "leaves", page_size=1)
    assert first.next_cursor is not None
    with pytest.raises(Refusal) as refused:
        _page(services, "nine", cursor=first.next_cursor)
    assert refused.value.code == 52002


@pytest.mark.parametrize("fragment", ["", "   ", SECRET + "x" * 250, SECRET + "\u0007"])
def test_a_fragment_no_filter_can_use_is_refused_51002(services: Services, fragment: str) -> None:
    with pytest.raises(Refusal) as refused:
        _page(services, fragment)
    assert refused.value.code == 51002
    assert SECRET not in str(refused.value)


def test_a_fragment_of_256_characters_is_accepted(services: Services) -> None:
    assert _page(services, "y" * 256).emails == ()


def test_over_http_contains_filters_and_refuses_without_echo(services: Services) -> None:
    with served_over_http(services) as url:
        answer = structured(call(url, KEY, "list_emails", {"contains": "LEAVES AT"}))
        refused = call(url, KEY, "list_emails", {"contains": SECRET + "\u0007"})
    assert [e["subject"] for e in answer["emails"]] == ["Ferry again", "Bus", "Ferry"]
    # Two words, neither inner: nothing to narrow by, so every body is read.
    assert answer["containsScan"] == {"bodiesExamined": len(MAILS), "cut": False}
    assert code(refused) == 51002
    assert SECRET not in text(refused)
