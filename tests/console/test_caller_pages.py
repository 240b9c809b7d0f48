"""The console's callers, new-key and recent-calls pages in process over an SQLite
deployment: each configured entry as the file says, a key created by a form POST shown once
and never again, revoked by its form, refused without the session's token or from another
origin; the calls page newest first and paged, in English, Czech and Slovak."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import httpx2
import lxml.html
import pytest
from starlette.testclient import TestClient

import log_audit
from mailfathom.adapters.sql.caller_keys import SqlApiKeys
from mailfathom.app.console.access_ports import IssuedKey
from mailfathom.bootstrap import Services
from mailfathom.domain import unseen
from mailfathom.domain.access import ConfirmationMode, Permission
from mailfathom.domain.api_keys import MOST_KEYS_PER_CALLER
from mailfathom.domain.config import CallerEntry, McpEndpointConfig
from mailfathom.domain.console import FRESH_SIGN_IN_SECONDS
from mailfathom.domain.mcp_oauth import OAuthSubject
from mailfathom.entrypoints.console.pages import build_console_app
from mailfathom.entrypoints.console.serving import console_use_cases

from .conftest import ORIGIN, PASSWORD, Clock, Console, console_config

FILE_DIGEST = "0123456789abcdef" * 4
HIDDEN_SUBJECT = "owner\u200b@<b>idp</b>"
ENTRIES = (
    CallerEntry(
        "reader",
        FILE_DIGEST,
        permissions=frozenset({Permission.MAIL_READ, Permission.CONTACTS_READ}),
    ),
    CallerEntry("agent", None, confirmation=ConfirmationMode.ASK),
    CallerEntry("person", None, oauth=OAuthSubject(HIDDEN_SUBJECT)),
)


@pytest.fixture
def owned(tmp_path: Path) -> Iterator[Console]:
    log_audit.register(PASSWORD)
    clock = Clock()
    config = dataclasses.replace(console_config(tmp_path), mcp=McpEndpointConfig(callers=ENTRIES))
    with Services.open(config, clock=clock) as services:
        services.console_access().set_password(PASSWORD)
        uses = console_use_cases(services)
        with TestClient(build_console_app(uses, "127.0.0.1"), base_url=ORIGIN) as client:
            console = Console(client, services, clock)
            assert console.sign_in().status_code == 303
            yield console


def _tree(console: Console, path: str) -> lxml.html.HtmlElement:
    page = console.client.get(path)
    assert page.status_code == 200
    return lxml.html.fromstring(page.text)


def _post(
    console: Console, action: str, data: dict[str, str], origin: str = ORIGIN
) -> httpx2.Response:
    return console.client.post(
        action, data=data, headers={"Origin": origin}, follow_redirects=False
    )


def fill_keys(console: Console, caller: str, count: int) -> None:
    """`count` active keys for the entry `caller`, as its forms would have made them."""
    keys = SqlApiKeys(console.services.engine)
    for n in range(count):
        made = IssuedKey(f"{n:012x}", caller, "f" * 64, f"{caller[0]}{n:031x}", console.clock())
        keys.add(made, MOST_KEYS_PER_CALLER)


def _create_form(tree: lxml.html.HtmlElement, caller: str) -> tuple[str, dict[str, str]]:
    (form,) = tree.xpath(f"//section[@id='caller-{caller}']//form[@class='create-key']")
    fields = {i.get("name"): i.get("value") for i in form.xpath(".//input")}
    return form.get("action"), fields


def test_the_pages_need_a_signed_in_owner(tmp_path: Path) -> None:
    config = dataclasses.replace(console_config(tmp_path), mcp=McpEndpointConfig(callers=ENTRIES))
    with Services.open(config) as services:
        app = build_console_app(console_use_cases(services), "127.0.0.1")
        with TestClient(app, base_url=ORIGIN) as client:
            for path in ("/callers", "/calls"):
                answer = client.get(path, follow_redirects=False)
                assert (answer.status_code, answer.headers["location"]) == (303, "/login")
            for action in ("/callers/agent/keys", "/keys/abcdef012345/revoke"):
                answer = client.post(action, headers={"Origin": ORIGIN}, follow_redirects=False)
                assert (answer.status_code, answer.headers["location"]) == (
                    303,
                    "/login?expired=1",
                )
        assert services.caller_access().keys.listing().callers[1].keys == ()


def test_each_entry_is_shown_as_configured(owned: Console) -> None:
    tree = _tree(owned, "/callers")
    assert "configuration file" in tree.get_element_by_id("edited-in-file").text_content()
    assert tree.xpath("//p[@id='published']/span/text()") == [
        "answering, contacts, drafts, flags, mailbox, organize, sending"
    ]
    reader = tree.get_element_by_id("caller-reader")
    assert reader.xpath(".//dd[@class='admission']/@data-admission") == ["apiKey"]
    assert reader.xpath(".//dd[@class='permissions']//li/text()") == [
        "mailfathom.mail.contacts.read",
        "mailfathom.mail.read",
    ]
    assert reader.xpath(".//dd[@class='confirmation']/@data-confirmation") == ["none"]
    file_key = reader.xpath(".//dd[@class='file-key']")[0].text_content()
    assert "…cdef" in file_key
    assert FILE_DIGEST not in tree.text_content()
    agent = tree.get_element_by_id("caller-agent")
    assert agent.xpath(".//dd[@class='admission']/@data-admission") == ["none"]
    assert agent.xpath(".//dd[@class='permissions']//li/text()") == ["All permissions"]
    assert agent.xpath(".//dd[@class='confirmation']/@data-confirmation") == ["ask"]
    # Nothing the file grants can be changed here: the only forms make or revoke keys.
    person = tree.get_element_by_id("caller-person")
    (admission,) = person.xpath(".//dd[@class='admission']")
    assert admission.get("data-admission") == "oauth"
    assert unseen.marked(HIDDEN_SUBJECT) in admission.text_content()
    assert "\u200b" not in admission.text_content()
    assert person.xpath(".//b") == []
    actions = tree.xpath("//main//form/@action")
    assert actions == ["/callers/reader/keys", "/callers/agent/keys", "/callers/person/keys"]


def test_a_key_is_shown_once_admits_as_its_entry_and_is_revoked_by_its_form(
    owned: Console,
) -> None:
    action, fields = _create_form(_tree(owned, "/callers"), "agent")
    assert _post(owned, action, {**fields, "csrf": "not-the-token"}).status_code == 403
    assert _post(owned, action, fields, "http://evil.example").status_code == 403
    keys = owned.services.caller_access().keys
    assert keys.listing().callers[1].keys == ()

    answer = _post(owned, action, fields)
    assert answer.status_code == 200
    assert answer.headers["cache-control"] == "no-store"
    shown = lxml.html.fromstring(answer.text)
    (key,) = shown.xpath("//input[@id='new-key']/@value")
    log_audit.register(key)
    assert keys.admit(key) == ENTRIES[1]
    # The same form sent again (a reload) makes no key and shows none.
    again = _post(owned, action, fields)
    assert (again.status_code, again.headers["location"]) == (303, "/callers?done=form-used")
    tree = _tree(owned, "/callers?done=form-used")
    assert key not in lxml.html.tostring(tree).decode()
    (row,) = tree.xpath("//section[@id='caller-agent']//tbody/tr")
    key_id = row.get("id").removeprefix("key-")
    assert key.startswith(f"mf-k{key_id}-")
    (revoke,) = row.xpath(".//form/@action")
    (csrf,) = row.xpath(".//input[@name='csrf']/@value")
    assert _post(owned, revoke, {"csrf": "wrong"}).status_code == 403
    assert keys.admit(key) == ENTRIES[1]

    revoked = _post(owned, revoke, {"csrf": csrf})
    assert revoked.headers["location"] == "/callers?done=revoked"
    assert keys.admit(key) is None
    tree = _tree(owned, "/callers?done=revoked")
    assert "next request made with it is refused" in tree.get_element_by_id("notice").text_content()
    assert tree.xpath("//section[@id='caller-agent']//tbody/tr") == []
    assert _post(owned, revoke, {"csrf": csrf}).headers["location"] == "/callers?done=not-active"


def test_a_key_for_an_entry_not_configured_is_refused(owned: Console) -> None:
    _, fields = _create_form(_tree(owned, "/callers"), "agent")
    answer = _post(owned, "/callers/stranger/keys", fields)
    assert answer.headers["location"] == "/callers?done=no-such-caller"
    assert owned.services.caller_access().keys.listing().orphaned == ()


def test_recent_calls_are_listed_newest_first_and_paged(owned: Console) -> None:
    calls = owned.services.caller_access().calls
    for _ in range(60):
        calls.record("list_accounts", "reader", "success", None, 0.0015)
    calls.record("search_emails", "agent", "refused", 51017, 0.25)
    tree = _tree(owned, "/calls")
    rows = tree.xpath("//table[@id='calls']/tbody/tr")
    assert len(rows) == 50
    first = rows[0]
    assert [
        first.xpath(f".//td[@class='{k}']")[0].text_content()
        for k in ("tool", "caller", "outcome", "code", "duration")
    ] == ["search_emails", "agent", "Refused", "51017", "250.0 ms"]
    (older,) = tree.xpath("//a[@id='older']/@href")
    rest = _tree(owned, older).xpath("//table[@id='calls']/tbody/tr")
    assert len(rest) == 11
    only = _tree(owned, "/calls?caller=agent&outcome=refused")
    assert len(only.xpath("//table[@id='calls']/tbody/tr")) == 1
    assert only.xpath("//select[@id='filter-caller']/option[@selected]/@value") == ["agent"]


def test_the_pages_speak_czech_and_slovak(owned: Console) -> None:
    cs = _tree(owned, "/callers?lang=cs")
    assert cs.xpath("/html/@lang") == ["cs"]
    assert cs.xpath("//main/h1/text()") == ["Volající a klíče"]
    assert cs.xpath("//form[@class='create-key']/button/text()") == ["Vytvořit klíč"] * 3
    assert cs.xpath("//form[@class='create-key']/@action")[0].endswith("?lang=cs")
    sk = _tree(owned, "/calls?lang=sk")
    assert sk.xpath("//main/h1/text()") == ["Nedávne volania nástrojov"]
    assert sk.xpath("//p[@id='empty']/text()") == ["Žiadne volanie nástroja nebolo zaznamenané."]
    owned.services.caller_access().calls.record("list_accounts", "agent", "unknownTool", None, 0)
    sk = _tree(owned, "/calls?lang=sk")
    assert sk.xpath("//td[@class='outcome']/text()") == ["Neznámy nástroj"]
    assert sk.xpath("//a[@id='older']") == []
    cs = _tree(owned, "/calls?lang=cs")
    assert cs.xpath("//select[@id='filter-outcome']/option[@value='success']/text()") == [
        "Zodpovězeno"
    ]


def test_durations_are_written_with_each_language_s_decimal_mark(owned: Console) -> None:
    owned.services.caller_access().calls.record("list_accounts", "agent", "success", None, 0.0125)
    shown = {
        lang: _tree(owned, f"/calls?lang={lang}").xpath("//td[@class='duration']/text()")
        for lang in ("en", "cs", "sk")
    }
    assert shown == {"en": ["12.5 ms"], "cs": ["12,5\u00a0ms"], "sk": ["12,5\u00a0ms"]}


def test_a_key_of_an_entry_no_longer_configured_is_listed_apart_and_revocable(
    owned: Console,
) -> None:
    SqlApiKeys(owned.services.engine).add(
        IssuedKey("0a1b2c3d4e5f", "gone", "f" * 64, "e" * 32, owned.clock()), MOST_KEYS_PER_CALLER
    )
    tree = _tree(owned, "/callers")
    (row,) = tree.xpath("//section[@id='orphaned']//tbody/tr")
    assert row.get("id") == "key-0a1b2c3d4e5f"
    assert row.xpath("./td[1]/text()") == ["gone"]
    assert tree.xpath("//section[@class='caller']//tbody/tr") == []
    (action,) = row.xpath(".//form/@action")
    (csrf,) = row.xpath(".//input[@name='csrf']/@value")
    assert _post(owned, action, {"csrf": csrf}).headers["location"] == "/callers?done=revoked"
    assert _tree(owned, "/callers").xpath("//section[@id='orphaned']") == []


def test_a_key_needs_a_sign_in_made_lately_and_signing_in_again_gives_one(
    owned: Console,
) -> None:
    action, fields = _create_form(_tree(owned, "/callers"), "agent")
    owned.clock.advance(FRESH_SIGN_IN_SECONDS + 1)
    keys = owned.services.caller_access().keys
    stale = _post(owned, action, fields)
    assert (stale.status_code, stale.headers["location"]) == (303, "/login?again=keys")
    assert keys.listing().callers[1].keys == ()

    form = _tree(owned, "/login?again=keys")
    (csrf,) = form.xpath('//form[@action="/login?again=keys"]//input[@name="csrf"]/@value')
    assert form.get_element_by_id("notice").text_content()
    again = owned.client.post(
        "/login?again=keys",
        data={"csrf": csrf, "password": PASSWORD},
        headers={"Origin": ORIGIN},
        follow_redirects=False,
    )
    assert (again.status_code, again.headers["location"]) == (303, "/callers")
    action, fields = _create_form(_tree(owned, "/callers"), "agent")
    assert _post(owned, action, fields).status_code == 200
    assert len(keys.listing().callers[1].keys) == 1


def test_revoking_a_key_needs_a_sign_in_made_lately_and_returns_to_the_callers_page(
    owned: Console,
) -> None:
    action, fields = _create_form(_tree(owned, "/callers"), "agent")
    shown = lxml.html.fromstring(_post(owned, action, fields).text)
    (key,) = shown.xpath("//input[@id='new-key']/@value")
    log_audit.register(key)
    tree = _tree(owned, "/callers?lang=sk")
    (revoke,) = tree.xpath("//section[@id='caller-agent']//tbody/tr//form/@action")
    (csrf,) = tree.xpath("//section[@id='caller-agent']//tbody/tr//input[@name='csrf']/@value")
    owned.clock.advance(FRESH_SIGN_IN_SECONDS + 1)
    keys = owned.services.caller_access().keys
    stale = _post(owned, revoke, {"csrf": csrf})
    assert (stale.status_code, stale.headers["location"]) == (
        303,
        "/login?lang=sk&again=revoke-key",
    )
    assert keys.admit(key) == ENTRIES[1]

    form = _tree(owned, "/login?lang=sk&again=revoke-key")
    assert "zneplatniť" in form.get_element_by_id("notice").text_content()
    (login,) = form.xpath("//form[@method='post'][.//input[@name='password']]/@action")
    (csrf,) = form.xpath("//form[.//input[@name='password']]//input[@name='csrf']/@value")
    again = owned.client.post(
        login,
        data={"csrf": csrf, "password": PASSWORD},
        headers={"Origin": ORIGIN},
        follow_redirects=False,
    )
    assert (again.status_code, again.headers["location"]) == (303, "/callers?lang=sk")
    (csrf,) = _tree(owned, "/callers").xpath(
        "//section[@id='caller-agent']//tbody/tr//input[@name='csrf']/@value"
    )
    revoked = _post(owned, revoke, {"csrf": csrf})
    assert revoked.headers["location"] == "/callers?lang=sk&done=revoked"
    assert keys.admit(key) is None


def test_signing_in_again_leads_back_to_no_page_a_request_names(owned: Console) -> None:
    (csrf,) = _tree(owned, "/login?again=keys").xpath(
        "//form[.//input[@name='password']]//input[@name='csrf']/@value"
    )
    answer = owned.client.post(
        "/login?again=//evil.example/callers",
        data={"csrf": csrf, "password": PASSWORD},
        headers={"Origin": ORIGIN},
        follow_redirects=False,
    )
    assert (answer.status_code, answer.headers["location"]) == (303, "/")


def test_an_entry_holding_its_bound_of_keys_is_refused_another(owned: Console) -> None:
    action, fields = _create_form(_tree(owned, "/callers"), "agent")
    fill_keys(owned, "agent", MOST_KEYS_PER_CALLER)
    keys = owned.services.caller_access().keys
    tree = _tree(owned, "/callers")
    agent = tree.get_element_by_id("caller-agent")
    assert len(agent.xpath(".//tbody/tr")) == MOST_KEYS_PER_CALLER
    assert agent.xpath(".//form[@class='create-key']") == []
    assert agent.xpath(".//p[@id='caller-agent-full']/text()") == [
        f"This entry holds {MOST_KEYS_PER_CALLER} active keys, the most it may: revoke one to "
        "create another."
    ]
    assert tree.xpath("//form[@class='create-key']/@action") == [
        "/callers/reader/keys",
        "/callers/person/keys",
    ]

    # A form shown before the entry was full makes no key and says why.
    refused = _post(owned, action, fields)
    assert (refused.status_code, refused.headers["location"]) == (303, "/callers?done=too-many")
    notice = _tree(owned, "/callers?done=too-many").get_element_by_id("notice")
    assert notice.text_content() == (
        f"No key was created: an entry may hold at most {MOST_KEYS_PER_CALLER} active keys. "
        "Revoke one it no longer needs first."
    )
    assert len(keys.listing().callers[1].keys) == MOST_KEYS_PER_CALLER

    (revoke,) = agent.xpath(".//tr[@id='key-000000000000']//form/@action")
    (csrf,) = agent.xpath(".//tr[@id='key-000000000000']//input[@name='csrf']/@value")
    assert _post(owned, revoke, {"csrf": csrf}).headers["location"] == "/callers?done=revoked"
    action, fields = _create_form(_tree(owned, "/callers"), "agent")
    assert _post(owned, action, fields).status_code == 200
    assert len(keys.listing().callers[1].keys) == MOST_KEYS_PER_CALLER
