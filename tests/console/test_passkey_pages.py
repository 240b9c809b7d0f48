"""The console's passkey pages in process, through its HTTP surface, with a software
authenticator: the sign-in form offers what the visitor may do and where, the whole
ceremony signs in, a request the ceremony must not trust changes nothing, and the passkeys
page lists labels as text and removes by a form POST."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx2
import lxml.html
import pytest
from starlette.testclient import TestClient

import log_audit
from mailfathom.adapters.sql.console_passkeys import SqlPasskeyStore
from mailfathom.app.console.passkey_ports import Passkey
from mailfathom.bootstrap import Services
from mailfathom.domain.console import FRESH_SIGN_IN_SECONDS
from mailfathom.domain.passkeys import MOST_PASSKEYS
from mailfathom.domain.unseen import marker
from mailfathom.entrypoints.console.pages import build_console_app
from mailfathom.entrypoints.console.serving import console_use_cases

from .conftest import PASSWORD, Clock, console_config
from .soft_authenticator import SoftAuthenticator

NAMED = "http://localhost:8626"
NUMBERED = "http://127.0.0.1:8626"
LOOPBACK = ("127.0.0.1", 50000)
HOSTILE_LABEL = "<script>alert(1)</script>\u200bPhone"


class Browser:
    """A client at one origin, with the software authenticator a browser would hold."""

    def __init__(self, services: Services, origin: str, peer: tuple[str, int]) -> None:
        app = build_console_app(console_use_cases(services), "127.0.0.1")
        self.client = TestClient(app, base_url=origin, client=peer)
        self.origin = origin
        self.key = SoftAuthenticator()
        self._services = services

    def session_csrf(self) -> str:
        """The CSRF token of the session the client's cookie names, for a page that shows
        no form carrying it."""
        self.client.get("/login")
        found = self._services.console_access().session(self.client.cookies.get("mf_console"))
        assert found is not None
        return found.csrf_secret

    def page(self, path: str) -> lxml.html.HtmlElement:
        answer = self.client.get(path)
        assert answer.status_code == 200, answer.status_code
        return lxml.html.fromstring(answer.text)

    def csrf(self, path: str = "/login") -> str:
        return self.passkey_form(path)[0]

    def passkey_form(self, path: str = "/login") -> tuple[str, str]:
        """The CSRF token and the action of the passkey form the page at `path` shows."""
        (form,) = self.page(path).xpath('//form[@id="passkey-form"]')
        (token,) = form.xpath('.//input[@name="csrf"]/@value')
        return str(token), str(form.get("action"))

    def post(self, path: str, origin: str | None = None, **fields: str) -> httpx2.Response:
        return self.client.post(
            path,
            data=fields,
            headers={"Origin": origin or self.origin},
            follow_redirects=False,
        )

    def ceremony(self, kind: str, path: str = "/login", **fields: str) -> httpx2.Response:
        csrf, action = self.passkey_form(path)
        options = self.post(f"/passkeys/options/{kind}", csrf=csrf)
        assert options.status_code == 200, options.text
        assert options.headers["content-type"] == "application/json"
        made = (
            self.key.create(options.text, self.origin)
            if kind == "register"
            else self.key.get(options.text, self.origin)
        )
        assert action.startswith(f"/passkeys/{kind}")
        return self.post(action, csrf=csrf, credential=made, **fields)

    def signed_in(self) -> bool:
        return self.client.get("/", follow_redirects=False).status_code == 200


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    log_audit.register(PASSWORD, HOSTILE_LABEL)
    with Services.open(console_config(tmp_path), clock=Clock()) as opened:
        yield opened


def _code(services: Services) -> str:
    code = services.console_passkeys().first_enrolment_code()
    assert code is not None
    return code


def _enrolled(services: Services) -> Browser:
    owner = Browser(services, NAMED, LOOPBACK)
    code = _code(services)
    answer = owner.ceremony("register", label=HOSTILE_LABEL, code=code)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/"
    assert owner.signed_in()
    return owner


def fill_passkeys(services: Services, count: int) -> None:
    """`count` more passkeys of the owner, as enrolments on other devices keep them."""
    store = SqlPasskeyStore(services.engine)
    held = store.passkeys()
    handle = held[0].user_handle
    for n in range(len(held), len(held) + count):
        made = Passkey(f"other-{n}", handle, b"\xa5\x01", 0, f"Device {n}", services.clock())
        assert store.add_passkey(made, only_if_first=False, most=MOST_PASSKEYS)


def test_the_first_passkey_is_offered_on_loopback_at_the_passkey_origin_only(
    services: Services,
) -> None:
    before = Browser(services, NAMED, LOOPBACK).page("/login")
    assert not before.xpath('//form[@id="passkey-form"]')
    assert "mailfathom console first-passkey" in before.xpath(
        'string(//*[@id="passkey-first-how"])'
    )
    _code(services)
    here = Browser(services, NAMED, LOOPBACK).page("/login")
    assert not here.xpath('//*[@id="passkey-first-how"]')
    assert here.xpath('//input[@id="passkey-code"]/@name') == ["code"]
    assert here.xpath('//label[@for="passkey-code"]/text()') == ["One-time code"]
    assert here.xpath('//button[@id="passkey-button"]/text()') == ["Create the owner's passkey"]
    assert here.xpath('//form[@id="passkey-form"]/@data-passkey') == ["register"]
    assert here.xpath("//script/@src") == ["/static/passkey.js"]
    assert "mailfathom console set-password" in here.xpath('string(//*[@id="notice"])')

    numbered = Browser(services, NUMBERED, LOOPBACK).page("/login")
    assert not numbered.xpath('//form[@id="passkey-form"]')
    assert numbered.xpath('string(//*[@id="passkey-elsewhere"])') == (
        f"Passkeys work only when the console is opened at {NAMED}."
    )

    remote = Browser(services, NAMED, ("192.0.2.7", 50000))
    assert not remote.page("/login").xpath('//form[@id="passkey-form"]')
    refused = remote.post("/passkeys/options/register", csrf=remote.session_csrf())
    assert refused.status_code == 403
    assert refused.json() == {"refused": "not_offered"}


def test_a_proxy_on_this_machine_makes_no_visitor_local(services: Services) -> None:
    proxied = Browser(services, NAMED, LOOPBACK)
    proxied.client.headers["X-Forwarded-For"] = "198.51.100.4"
    assert not proxied.page("/login").xpath('//form[@id="passkey-form"]')


def test_enrol_sign_out_and_sign_in_with_the_passkey(services: Services) -> None:
    owner = _enrolled(services)
    page = owner.page("/passkeys")
    csrf = str(page.xpath('//header//input[@name="csrf"]/@value')[0])
    assert owner.post("/logout", csrf=csrf).status_code == 303
    assert not owner.signed_in()

    form = owner.page("/login")
    assert form.xpath('//button[@id="passkey-button"]/text()') == ["Sign in with a passkey"]
    assert not form.xpath('//*[@id="notice"]')
    answer = owner.ceremony("sign-in")
    assert answer.status_code == 303
    assert "HttpOnly" in answer.headers["set-cookie"]
    assert "SameSite=strict" in answer.headers["set-cookie"]
    assert owner.signed_in()


def test_a_passkey_cannot_be_used_at_an_origin_not_configured(services: Services) -> None:
    _enrolled(services)
    numbered = Browser(services, NUMBERED, LOOPBACK)
    refused = numbered.post("/passkeys/options/sign-in", csrf=numbered.session_csrf())
    assert refused.status_code == 403


def test_the_ceremony_refuses_another_origin_a_missing_token_and_a_large_form(
    services: Services,
) -> None:
    _code(services)
    owner = Browser(services, NAMED, LOOPBACK)
    csrf = owner.csrf()
    assert (
        owner.post("/passkeys/options/register", "http://localhost:9999", csrf=csrf).status_code
        == 403
    )
    assert owner.post("/passkeys/options/register", csrf="guessed").status_code == 403
    assert owner.post("/passkeys/options/unknown", csrf=csrf).status_code == 404
    large = owner.post("/passkeys/register", csrf=csrf, credential="x" * 20000)
    assert large.status_code == 413
    assert services.console_passkeys().passkeys() == []


def test_an_answer_for_no_challenge_is_refused_with_a_notice(services: Services) -> None:
    owner = _enrolled(services)
    owner.client.cookies.clear()
    csrf = owner.csrf()
    options = json.dumps({"challenge": "AAAA", "rpId": "localhost"})
    answer = owner.post("/passkeys/sign-in", csrf=csrf, credential=owner.key.get(options, NAMED))
    assert answer.status_code == 403
    notice = lxml.html.fromstring(answer.text).xpath('string(//*[@id="notice"])')
    assert notice == "The passkey request expired or was used already. Try again."
    assert not owner.signed_in()


def test_the_passkeys_page_shows_labels_as_text_adds_and_removes(services: Services) -> None:
    owner = _enrolled(services)
    page = owner.page("/passkeys")
    (label,) = page.xpath('//tr[@id="passkey-1"]/th')
    assert label.text_content() == "<script>alert(1)</script>" + marker("\u200b") + "Phone"
    assert not page.xpath("//tr//script")
    added = owner.ceremony("register", "/passkeys", label="")
    assert added.status_code == 303
    assert added.headers["location"] == "/passkeys?done=added"
    page = owner.page("/passkeys?done=added")
    assert page.xpath('string(//*[@id="notice"])') == "The passkey was added."
    assert "Passkey" in page.xpath("//tbody/tr/th/text()")
    assert len(page.xpath("//tbody/tr")) == 2

    first = services.console_passkeys().passkeys()[0].credential_id
    csrf = str(page.xpath('//header//input[@name="csrf"]/@value')[0])
    assert (
        owner.post(f"/passkeys/{first}/remove", "http://127.0.0.1:1", csrf=csrf).status_code == 403
    )
    assert owner.post(f"/passkeys/{first}/remove", csrf="guessed").status_code == 403
    assert len(services.console_passkeys().passkeys()) == 2
    removed = owner.post(f"/passkeys/{first}/remove", csrf=csrf)
    assert removed.headers["location"] == "/passkeys?done=removed"
    assert [p.credential_id for p in services.console_passkeys().passkeys()] != [first]
    assert len(services.console_passkeys().passkeys()) == 1
    again = owner.post(f"/passkeys/{first}/remove", csrf=csrf)
    assert again.headers["location"] == "/passkeys?done=not-found"


@pytest.mark.parametrize(
    ("lang", "heading", "add"),
    [
        ("cs", "Přístupové klíče", "Přidat přístupový klíč"),
        ("sk", "Prístupové kľúče", "Pridať prístupový kľúč"),
    ],
)
def test_the_passkeys_page_speaks_czech_and_slovak(
    services: Services, lang: str, heading: str, add: str
) -> None:
    owner = _enrolled(services)
    page = owner.page(f"/passkeys?lang={lang}")
    assert page.xpath("/html/@lang") == [lang]
    assert page.xpath("//main/h1/text()") == [heading]
    assert page.xpath('//button[@id="passkey-button"]/text()') == [add]
    assert page.xpath('//form[@id="passkey-form"]/@action') == [f"/passkeys/register?lang={lang}"]


def test_the_passkeys_page_needs_a_signed_in_owner(services: Services) -> None:
    visitor = Browser(services, NAMED, LOOPBACK)
    answer = visitor.client.get("/passkeys", follow_redirects=False)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/login"


def test_a_host_header_cannot_choose_the_passkey_name(services: Services) -> None:
    stranger = Browser(services, "http://evil.localhost:8626", LOOPBACK)
    assert stranger.client.get("/login").status_code == 400


def test_adding_a_passkey_asks_for_a_sign_in_made_lately(services: Services) -> None:
    owner = _enrolled(services)
    csrf = owner.csrf("/passkeys")
    clock = services.clock
    assert isinstance(clock, Clock)
    clock.advance(FRESH_SIGN_IN_SECONDS + 1)
    page = owner.page("/passkeys")
    assert page.xpath('//form[@id="passkey-form"]') == []
    assert page.xpath('//p[@id="passkey-again"]/a/@href') == ["/login?again=passkeys"]
    assert owner.post("/passkeys/options/register", csrf=csrf).status_code == 403
    refused = owner.post("/passkeys/register", csrf=csrf, credential="{}")
    assert refused.headers["location"] == "/login?again=passkeys"

    assert owner.page("/login?again=passkeys").xpath('string(//*[@id="notice"])')
    signed_in = owner.ceremony("sign-in", "/login?again=passkeys")
    assert (signed_in.status_code, signed_in.headers["location"]) == (303, "/passkeys")
    assert owner.ceremony("register", "/passkeys", label="Phone").status_code == 303
    assert len(services.console_passkeys().passkeys()) == 2


def test_removing_a_passkey_asks_for_a_sign_in_made_lately(services: Services) -> None:
    owner = _enrolled(services)
    assert owner.ceremony("register", "/passkeys", label="Phone").status_code == 303
    page = owner.page("/passkeys?lang=cs")
    (remove,) = page.xpath('//tr[@id="passkey-1"]//form/@action')
    csrf = str(page.xpath('//header//input[@name="csrf"]/@value')[0])
    clock = services.clock
    assert isinstance(clock, Clock)
    clock.advance(FRESH_SIGN_IN_SECONDS + 1)
    refused = owner.post(remove, csrf=csrf)
    assert refused.headers["location"] == "/login?lang=cs&again=remove-passkey"
    assert len(services.console_passkeys().passkeys()) == 2

    notice = owner.page("/login?lang=cs&again=remove-passkey").xpath('string(//*[@id="notice"])')
    assert "odebrat" in notice
    signed_in = owner.ceremony("sign-in", "/login?lang=cs&again=remove-passkey")
    assert (signed_in.status_code, signed_in.headers["location"]) == (303, "/passkeys?lang=cs")
    csrf = str(owner.page("/passkeys").xpath('//header//input[@name="csrf"]/@value')[0])
    removed = owner.post(remove, csrf=csrf)
    assert removed.headers["location"] == "/passkeys?lang=cs&done=removed"
    assert len(services.console_passkeys().passkeys()) == 1


def test_removing_a_passkey_signs_out_every_other_browser(services: Services) -> None:
    owner = _enrolled(services)
    copied = Browser(services, NAMED, ("192.0.2.9", 40000))
    copied.key = owner.key
    assert copied.ceremony("sign-in").status_code == 303
    assert copied.signed_in()
    assert owner.ceremony("register", "/passkeys", label="Phone").status_code == 303
    page = owner.page("/passkeys")
    csrf = str(page.xpath('//header//input[@name="csrf"]/@value')[0])
    first = services.console_passkeys().passkeys()[0].credential_id
    assert owner.post(f"/passkeys/{first}/remove", csrf=csrf).status_code == 303
    assert not copied.signed_in()
    assert owner.signed_in()


def test_a_forged_local_visit_without_the_code_makes_no_passkey(services: Services) -> None:
    """A proxy on this machine passing no forwarding header, and a script naming the
    console's own origin: every check of a local visit holds, but the code does not."""
    _code(services)
    forged = Browser(services, NAMED, LOOPBACK)
    refused = forged.ceremony("register", label="Attacker")
    assert refused.status_code == 403
    guessed = forged.ceremony("register", label="Attacker", code="00-00-00-00")
    assert guessed.status_code == 403
    assert services.console_passkeys().passkeys() == []
    assert not forged.signed_in()


def test_the_owner_holding_the_bound_of_passkeys_is_refused_another(services: Services) -> None:
    owner = _enrolled(services)
    fill_passkeys(services, MOST_PASSKEYS - 2)
    # A ceremony begun with room for one more, answered once another device took it.
    csrf, action = owner.passkey_form("/passkeys")
    options = owner.post("/passkeys/options/register", csrf=csrf)
    assert options.status_code == 200
    made = owner.key.create(options.text, owner.origin)
    fill_passkeys(services, 1)
    refused = owner.post(action, csrf=csrf, credential=made, label="Tablet")
    assert refused.headers["location"] == "/passkeys?done=too_many"
    assert len(services.console_passkeys().passkeys()) == MOST_PASSKEYS

    page = owner.page("/passkeys?done=too_many")
    assert page.xpath('string(//*[@id="notice"])') == (
        f"No passkey was added: the owner may hold at most {MOST_PASSKEYS}. Remove one you "
        "no longer use first."
    )
    assert page.xpath('string(//*[@id="passkey-full"])') == (
        f"You hold {MOST_PASSKEYS} passkeys, the most the console keeps: remove one you no "
        "longer use to add another."
    )
    assert page.xpath('//form[@id="passkey-form"]') == []
    assert len(page.xpath("//tbody/tr")) == MOST_PASSKEYS
    again = owner.post("/passkeys/options/register", csrf=csrf)
    assert (again.status_code, again.json()) == (403, {"refused": "too_many"})

    (remove,) = page.xpath('//tr[@id="passkey-2"]//form/@action')
    assert owner.post(remove, csrf=csrf).headers["location"] == "/passkeys?done=removed"
    assert owner.page("/passkeys").xpath('//*[@id="passkey-full"]') == []
    assert owner.ceremony("register", "/passkeys", label="Tablet").status_code == 303
    assert len(services.console_passkeys().passkeys()) == MOST_PASSKEYS
