"""The console's contact pages in process over an SQLite deployment: the book with each
person's origin, paging, a promotion and an erasure (confirmed on a second page) by form
POSTs, and a POST without the session's token, from another origin or (for an erasure)
without the box ticked refused with nothing done; in English, Czech and Slovak."""

from __future__ import annotations

import base64
import uuid
from urllib.parse import parse_qs, urlsplit

import httpx2
import lxml.html
import pytest

import log_audit
from mailfathom.adapters.sql.contacts import SqlContactBook
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.contact_collection import SeenPerson
from mailfathom.domain.contacts import ContactOrigin, ContactWriter

from .conftest import ORIGIN, Console

AGENT = Caller(ALL_PERMISSIONS, "agent")
HOSTILE = "<img src=x onerror=alert(1)> & <b>evil</b>"


def _agent_wrote(console: Console, name: str, *addresses: str) -> uuid.UUID:
    log_audit.register(name, *addresses)
    written = console.services.contacts().creation.create(
        AGENT, name, list(addresses), addresses[0]
    )
    assert written.contact is not None
    return written.contact.contact_id


def _collected(console: Console, name: str, address: str) -> uuid.UUID:
    log_audit.register(name, address)
    book = SqlContactBook(console.services.engine)
    assert book.collect([SeenPerson(address, name)], console.clock()) == 1
    found = book.find_by_address(address)
    assert found is not None
    return found.contact_id


def _tree(console: Console, path: str, status: int = 200) -> lxml.html.HtmlElement:
    page = console.client.get(path)
    assert page.status_code == status
    return lxml.html.fromstring(page.text)


def _post(
    console: Console, action: str, data: dict[str, str], origin: str = ORIGIN
) -> httpx2.Response:
    return console.client.post(
        action, data=data, headers={"Origin": origin}, follow_redirects=False
    )


def _csrf(console: Console) -> str:
    """The session's CSRF token, as the sign-out form of any page carries it."""
    tree = _tree(console, "/contacts")
    (token,) = tree.xpath('//form[@action="/logout"]/input[@name="csrf"]/@value')
    return str(token)


def test_the_book_shows_each_person_with_their_origin(signed_in: Console) -> None:
    agent = _agent_wrote(signed_in, HOSTILE, "hostile@example.net")
    collected = _collected(signed_in, "Carla Collected", "carla@example.org")
    tree = _tree(signed_in, "/contacts")
    row = tree.get_element_by_id(f"contact-{agent}")
    assert row.get("data-origin") == "asserted"
    # Shown as text: no element made.
    assert row.xpath(".//img") == []
    name = row.xpath('.//th[@class="name"]')[0].text_content()
    assert name == HOSTILE
    assert row.xpath(".//b") == []
    assert [o.text_content() for o in row.xpath(".//ul[contains(@class,'origins')]/li")] == [
        "written by an agent"
    ]
    assert row.xpath('.//button[@class="promote"]')
    other = tree.get_element_by_id(f"contact-{collected}")
    assert other.get("data-origin") == "collected"
    assert [a.text_content() for a in other.xpath('.//li[@class="address"]')] == [
        "carla@example.org"
    ]
    assert [o.text_content() for o in other.xpath(".//ul[contains(@class,'origins')]/li")] == [
        "collected from mail"
    ]


def test_promote_takes_a_collected_person_on(signed_in: Console) -> None:
    collected = _collected(signed_in, "Carla Collected", "carla@example.org")
    answer = _post(signed_in, f"/contacts/{collected}/promote", {"csrf": _csrf(signed_in)})
    assert answer.status_code == 303
    assert answer.headers["location"] == "/contacts?done=promoted"
    tree = _tree(signed_in, answer.headers["location"])
    assert tree.get_element_by_id("notice").text_content() == (
        "The contact is asserted now, and its addresses are vouched for."
    )
    row = tree.get_element_by_id(f"contact-{collected}")
    assert row.get("data-origin") == "asserted"
    assert row.xpath('.//button[@class="promote"]') == []
    book = SqlContactBook(signed_in.services.engine)
    assert book.writers([collected]) == {collected: frozenset({ContactWriter.OPERATOR})}
    again = _post(signed_in, f"/contacts/{collected}/promote", {"csrf": _csrf(signed_in)})
    assert again.headers["location"] == "/contacts?done=already-asserted"


def test_an_unnamed_collected_person_is_not_promoted(signed_in: Console) -> None:
    collected = _collected(signed_in, "", "nameless@example.org")
    answer = _post(signed_in, f"/contacts/{collected}/promote", {"csrf": _csrf(signed_in)})
    assert answer.headers["location"] == "/contacts?done=unnamed"
    found = SqlContactBook(signed_in.services.engine).find(collected)
    assert found is not None
    assert found.origin is ContactOrigin.COLLECTED


def test_a_decision_without_the_token_or_from_elsewhere_does_nothing(signed_in: Console) -> None:
    collected = _collected(signed_in, "Carla Collected", "carla@example.org")
    csrf = _csrf(signed_in)
    refused = [
        _post(signed_in, f"/contacts/{collected}/promote", {}),
        _post(signed_in, f"/contacts/{collected}/promote", {"csrf": "forged"}),
        _post(signed_in, f"/contacts/{collected}/promote", {"csrf": csrf}, "http://evil.example"),
        _post(signed_in, f"/contacts/{collected}/erase", {"confirm": "yes"}),
        _post(
            signed_in,
            f"/contacts/{collected}/erase",
            {"csrf": csrf, "confirm": "yes"},
            "http://evil.example",
        ),
    ]
    assert [r.status_code for r in refused] == [403] * 5
    found = SqlContactBook(signed_in.services.engine).find(collected)
    assert found is not None
    assert found.origin is ContactOrigin.COLLECTED


def test_erase_says_what_goes_and_needs_the_box_ticked(signed_in: Console) -> None:
    agent = _agent_wrote(signed_in, "Ann Agent", "ann@example.net", "ann@example.org")
    tree = _tree(signed_in, f"/contacts/{agent}/erase")
    assert (
        tree.get_element_by_id("erase-removes")
        .text_content()
        .startswith("Erasing deletes this person and every address recorded with them (2)")
    )
    (box,) = tree.xpath('//input[@type="checkbox"][@name="confirm"]')
    assert tree.xpath(f'//label[@for="{box.get("id")}"]')
    unticked = _post(signed_in, f"/contacts/{agent}/erase", {"csrf": _csrf(signed_in)})
    assert unticked.status_code == 400
    assert "Tick the box to confirm; nothing was erased." in unticked.text
    assert SqlContactBook(signed_in.services.engine).find(agent) is not None

    erased = _post(
        signed_in, f"/contacts/{agent}/erase", {"csrf": _csrf(signed_in), "confirm": "yes"}
    )
    assert erased.status_code == 303
    assert erased.headers["location"] == "/contacts?done=erased&addresses=2"
    tree = _tree(signed_in, erased.headers["location"])
    assert tree.get_element_by_id("notice").text_content() == (
        "The contact was erased, with 2 address(es)."
    )
    assert tree.xpath(f'//*[@id="contact-{agent}"]') == []
    listed = signed_in.services.contacts().listing.list(AGENT)
    assert [c.contact_id for c in listed.contacts] == []
    again = _post(
        signed_in, f"/contacts/{agent}/erase", {"csrf": _csrf(signed_in), "confirm": "yes"}
    )
    assert again.headers["location"] == "/contacts?done=not-found"
    gone = signed_in.client.get(f"/contacts/{agent}/erase", follow_redirects=False)
    assert gone.headers["location"] == "/contacts?done=not-found"


def test_the_book_is_shown_a_page_at_a_time(signed_in: Console) -> None:
    ids = {_agent_wrote(signed_in, f"Person {n:03}", f"p{n}@example.net") for n in range(57)}
    first = _tree(signed_in, "/contacts")
    shown = {r.get("id") for r in first.xpath('//tr[@class="contact"]')}
    assert len(shown) == 50
    (link,) = first.xpath('//a[@id="next-page"]/@href')
    second = _tree(signed_in, str(link))
    shown |= {r.get("id") for r in second.xpath('//tr[@class="contact"]')}
    assert shown == {f"contact-{i}" for i in ids}
    assert second.xpath('//a[@id="next-page"]') == []
    assert second.xpath('//a[@id="first-page"]/@href') == ["/contacts"]
    forged = _tree(signed_in, "/contacts?cursor=forged")
    assert forged.get_element_by_id("notice").text_content() == (
        "That page link was not issued here; the first page is shown."
    )


@pytest.mark.parametrize(
    ("lang", "heading", "promote", "confirm"),
    [
        ("cs", "Kontakty", "Převzít", "Ano, smazat tento kontakt i jeho adresy"),
        ("sk", "Kontakty", "Prevziať", "Áno, zmazať tento kontakt aj jeho adresy"),
    ],
)
def test_the_contact_pages_speak_czech_and_slovak(
    signed_in: Console, lang: str, heading: str, promote: str, confirm: str
) -> None:
    collected = _collected(signed_in, "Carla Collected", "carla@example.org")
    tree = _tree(signed_in, f"/contacts?lang={lang}")
    assert tree.get("lang") == lang
    assert tree.xpath("//h1")[0].text_content() == heading
    assert tree.xpath('//button[@class="promote"]')[0].text_content() == promote
    (href,) = tree.xpath('//a[@class="erase"]/@href')
    assert href == f"/contacts/{collected}/erase?lang={lang}"
    erase = _tree(signed_in, href)
    assert erase.xpath('//label[@for="confirm"]')[0].text_content() == confirm
    answer = _post(
        signed_in, f"/contacts/{collected}/promote?lang={lang}", {"csrf": _csrf(signed_in)}
    )
    assert answer.headers["location"] == f"/contacts?lang={lang}&done=promoted"


def test_the_next_page_link_names_nobody(signed_in: Console) -> None:
    """The link goes to proxy logs and browser history: its cursor must not carry the name
    of the contact the page stopped at, in any form a reader could undo."""
    for n in range(51):
        _agent_wrote(signed_in, f"Zdenka Quixotic {n:03}", f"q{n}@example.net")
    first = _tree(signed_in, "/contacts")
    (link,) = first.xpath('//a[@id="next-page"]/@href')
    cursor = parse_qs(urlsplit(str(link)).query)["cursor"][0]
    raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    for shown in ("zdenka", "quixotic", "049", "Zdenka"):
        assert shown.encode() not in raw
        assert shown not in cursor
    second = _tree(signed_in, str(link))
    assert len(second.xpath('//tr[@class="contact"]')) == 1
    assert "Zdenka Quixotic 050" in second.xpath('//tr[@class="contact"]')[0].text_content()
