"""The console's sign-in, overview and sign-out in process, through its HTTP surface: who
gets in, what a refused request leaves unchanged, the cookie, and the headers of every
answer."""

from __future__ import annotations

from typing import Any

import lxml.html
import pytest
import sqlalchemy as sa
from starlette.testclient import TestClient

from mailfathom.adapters.sql.schema import console_sessions
from mailfathom.domain.console import SIGN_IN_FORMS_KEPT
from mailfathom.entrypoints.console.guards import CONTENT_SECURITY_POLICY
from mailfathom.entrypoints.console.pages import ConsoleUseCases, build_console_app

from .conftest import HOSTILE_NAME_SHOWN, ORIGIN, PASSWORD, Console


def _signed_in(console: Console) -> bool:
    answer = console.client.get("/", follow_redirects=False)
    if answer.status_code == 303:
        assert answer.headers["location"] == "/login"
        return False
    assert answer.status_code == 200
    return True


def _cookie(console: Console) -> str | None:
    return console.client.cookies.get("mf_console")


def _hold(console: Console, token: str) -> None:
    """Make the client hold `token` as its only cookie."""
    console.client.cookies.clear()
    console.client.cookies.set("mf_console", token)


def _set_cookie(answer: Any) -> str:
    (header,) = answer.headers.get_list("set-cookie")
    return str(header)


def test_before_a_password_is_set_the_form_says_how_and_signs_nobody_in(
    console: Console,
) -> None:
    page = console.client.get("/login")
    assert page.status_code == 200
    assert "mailfathom console set-password" in page.text
    assert not lxml.html.fromstring(page.text).xpath('//input[@name="password"]')
    visit = console.services.console_access().session(_cookie(console))
    assert visit is not None
    answer = console.client.post(
        "/login",
        data={"csrf": visit.csrf_secret, "password": PASSWORD},
        headers={"Origin": ORIGIN},
        follow_redirects=False,
    )
    assert answer.status_code == 403
    assert not _signed_in(console)


def test_the_right_password_signs_in_and_the_overview_follows(owned: Console) -> None:
    answer = owned.sign_in()
    assert answer.status_code == 303
    assert answer.headers["location"] == "/"
    page = owned.client.get("/")
    tree = lxml.html.fromstring(page.text)
    assert tree.xpath("/html/@lang") == ["en"]
    assert tree.xpath("//main/h1/text()") == ["Overview"]
    assert tree.xpath('//td[@id="alerts-waiting"]/text()') == ["0"]
    assert tree.xpath('//td[@id="mutations-dead-lettered"]/text()') == ["0"]


def test_a_wrong_password_is_refused_with_a_notice_and_signs_nobody_in(owned: Console) -> None:
    answer = owned.sign_in("not the owner password")
    assert answer.status_code == 403
    assert lxml.html.fromstring(answer.text).xpath('//*[@id="notice"]/text()') == [
        "That password is not the owner password."
    ]
    assert not _signed_in(owned)


def test_after_five_wrong_passwords_even_the_right_one_waits_then_gets_in(
    owned: Console,
) -> None:
    for _ in range(5):
        assert owned.sign_in("not the owner password").status_code == 403
    held = owned.sign_in()
    assert held.status_code == 429
    assert held.headers["retry-after"] == "30"
    assert not _signed_in(owned)
    owned.clock.advance(29)
    assert owned.sign_in().status_code == 429
    owned.clock.advance(1)
    assert owned.sign_in().status_code == 303
    assert _signed_in(owned)


def test_each_wrong_password_past_the_free_ones_doubles_the_wait(owned: Console) -> None:
    for _ in range(5):
        owned.sign_in("not the owner password")
    owned.clock.advance(30)
    assert owned.sign_in("still not the owner password").status_code == 403
    assert owned.sign_in().headers["retry-after"] == "60"


@pytest.mark.parametrize(
    ("data", "headers"),
    [
        ({"password": PASSWORD}, {"Origin": ORIGIN}),
        ({"password": PASSWORD, "csrf": "forged"}, {"Origin": ORIGIN}),
        ({"password": PASSWORD, "csrf": None}, {"Origin": "http://evil.example"}),
        ({"password": PASSWORD, "csrf": None}, {"Origin": "null"}),
        ({"password": PASSWORD, "csrf": None}, {}),
        ({"password": PASSWORD, "csrf": None}, {"Referer": "http://127.0.0.1:9999/"}),
    ],
    ids=["no-token", "wrong-token", "other-origin", "null-origin", "no-origin", "other-referer"],
)
def test_a_sign_in_without_the_token_or_from_elsewhere_is_forbidden_and_changes_nothing(
    owned: Console, data: dict[str, str | None], headers: dict[str, str]
) -> None:
    token = owned.form_token()
    sent = {k: (token if v is None else v) for k, v in data.items()}
    before = _cookie(owned)
    answer = owned.client.post("/login", data=sent, headers=headers, follow_redirects=False)
    assert answer.status_code == 403
    assert _cookie(owned) == before
    assert not _signed_in(owned)
    store_failures = owned.services.console_access()._store.failures("testclient")
    assert store_failures is None


def test_a_sign_in_with_a_referer_of_the_console_and_no_origin_is_admitted(
    owned: Console,
) -> None:
    token = owned.form_token()
    answer = owned.client.post(
        "/login",
        data={"csrf": token, "password": PASSWORD},
        headers={"Referer": ORIGIN + "/login"},
        follow_redirects=False,
    )
    assert answer.status_code == 303


def test_signing_in_replaces_the_session_so_a_planted_one_opens_nothing(owned: Console) -> None:
    owned.client.get("/login")
    planted = _cookie(owned)
    assert planted is not None
    assert owned.sign_in().status_code == 303
    after = _cookie(owned)
    assert after is not None
    assert after != planted
    _hold(owned, planted)
    assert not _signed_in(owned)
    _hold(owned, after)
    assert _signed_in(owned)


def test_the_cookie_is_http_only_strict_and_host_wide_and_not_secure_over_http(
    owned: Console,
) -> None:
    owned.client.get("/login")
    token = owned.form_token()
    answer = owned.client.post(
        "/login",
        data={"csrf": token, "password": PASSWORD},
        headers={"Origin": ORIGIN},
        follow_redirects=False,
    )
    attributes = [part.strip().lower() for part in _set_cookie(answer).split(";")]
    assert attributes[0].startswith("mf_console=")
    assert {"httponly", "samesite=strict", "path=/"} <= set(attributes)
    assert "secure" not in attributes
    assert not any(a.startswith("domain=") for a in attributes)


def test_over_https_the_cookie_is_host_prefixed_and_secure(owned: Console) -> None:
    app = build_console_app(
        ConsoleUseCases(owned.services.console_access, owned.services.console_overview),
        "127.0.0.1",
    )
    with TestClient(app, base_url="https://127.0.0.1:8626") as client:
        page = client.get("/login")
        (token,) = lxml.html.fromstring(page.text).xpath('//input[@name="csrf"]/@value')
        answer = client.post(
            "/login",
            data={"csrf": token, "password": PASSWORD},
            headers={"Origin": "https://127.0.0.1:8626"},
            follow_redirects=False,
        )
    assert answer.status_code == 303
    attributes = [part.strip().lower() for part in _set_cookie(answer).split(";")]
    assert attributes[0].startswith("__host-mf_console=")
    assert {"httponly", "samesite=strict", "path=/", "secure"} <= set(attributes)


def test_every_answer_carries_the_security_headers(owned: Console) -> None:
    answers = [
        owned.client.get("/login"),
        owned.client.get("/", follow_redirects=False),
        owned.client.post("/login", data={}, follow_redirects=False),
        owned.sign_in("not the owner password"),
        owned.sign_in(),
        owned.client.get("/"),
        owned.client.get("/static/console.css"),
        owned.client.get("/nowhere"),
    ]
    for answer in answers:
        assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "same-origin"
        assert answer.headers["x-frame-options"] == "DENY"
    for answer in answers[:-2]:
        assert answer.headers["cache-control"] == "no-store"
    assert answers[-2].headers["content-type"].startswith("text/css")


def test_signing_out_ends_the_session_in_the_store(owned: Console) -> None:
    owned.sign_in()
    token = _cookie(owned)
    assert token is not None
    csrf = owned.form_token("/")
    answer = owned.client.post(
        "/logout", data={"csrf": csrf}, headers={"Origin": ORIGIN}, follow_redirects=False
    )
    assert answer.status_code == 303
    assert answer.headers["location"] == "/login"
    assert owned.services.console_access().session(token) is None
    _hold(owned, token)
    assert not _signed_in(owned)


@pytest.mark.parametrize(
    ("csrf", "origin"),
    [(None, ORIGIN), ("forged", ORIGIN), ("", "http://evil.example")],
    ids=["no-token", "wrong-token", "other-origin"],
)
def test_a_sign_out_without_the_token_or_from_elsewhere_is_forbidden_and_ends_nothing(
    owned: Console, csrf: str | None, origin: str
) -> None:
    owned.sign_in()
    real = owned.form_token("/")
    data = {} if csrf is None else {"csrf": csrf or real}
    answer = owned.client.post(
        "/logout", data=data, headers={"Origin": origin}, follow_redirects=False
    )
    assert answer.status_code == 403
    assert _signed_in(owned)


def test_an_account_name_with_markup_is_shown_as_text(owned: Console) -> None:
    owned.sign_in()
    page = owned.client.get("/")
    assert "<script>" not in page.text
    assert "&lt;script&gt;" in page.text
    tree = lxml.html.fromstring(page.text)
    assert not tree.xpath("//script")
    assert HOSTILE_NAME_SHOWN in tree.xpath("//td/text()")


def test_a_request_naming_another_host_is_refused(owned: Console) -> None:
    answer = owned.client.get("/login", headers={"Host": "rebound.example:8626"})
    assert answer.status_code == 400


@pytest.mark.parametrize(
    ("query", "accept", "lang", "heading"),
    [
        ("?lang=cs", None, "cs", "Přihlášení"),
        ("", "sk-SK,sk;q=0.9,en;q=0.5", "sk", "Prihlásenie"),
        ("", "de-DE, cs;q=0.4, en;q=0.8", "en", "Sign in"),
        ("?lang=xx", "cs", "cs", "Přihlášení"),
    ],
)
def test_the_language_comes_from_the_query_or_the_browser(
    owned: Console, query: str, accept: str | None, lang: str, heading: str
) -> None:
    headers = {} if accept is None else {"Accept-Language": accept}
    tree = lxml.html.fromstring(owned.client.get("/login" + query, headers=headers).text)
    assert tree.xpath("/html/@lang") == [lang]
    assert tree.xpath("//main/h1/text()") == [heading]


def test_a_form_larger_than_any_of_the_consoles_is_refused_unread(owned: Console) -> None:
    token = owned.form_token()
    answer = owned.client.post(
        "/login",
        data={"csrf": token, "password": "x" * 10_000},
        headers={"Origin": ORIGIN},
        follow_redirects=False,
    )
    assert answer.status_code == 413
    assert not _signed_in(owned)


def test_visits_to_the_sign_in_form_keep_a_bounded_number_of_sessions(console: Console) -> None:
    for _ in range(SIGN_IN_FORMS_KEPT + 25):
        console.client.cookies.clear()
        assert console.client.get("/login").status_code == 200
    with console.services.engine.connect() as c:
        kept = c.execute(sa.select(sa.func.count()).select_from(console_sessions)).scalar_one()
    assert kept == SIGN_IN_FORMS_KEPT
    # The newest form still signs in.
    console.services.console_access().set_password(PASSWORD)
    assert console.sign_in().status_code == 303
