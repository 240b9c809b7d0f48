"""A console form posted after its session ended leads back to the sign-in page, which says
why in the page's language; a form of another origin or without its token is refused with a
page in that language, not a bare English word. Nothing is done either way."""

from __future__ import annotations

import uuid

import lxml.html
import pytest

from console.conftest import ORIGIN, Console


# Identifiers nobody holds, the same in every process collecting the tests (parallel
# workers must collect the same test ids).
def _nobody(kind: str) -> uuid.UUID:
    return uuid.uuid5(uuid.NAMESPACE_URL, f"https://mailfathom.invalid/{kind}")


FORMS = [
    f"/drafts/{_nobody('drafts-send')}/send",
    f"/drafts/{_nobody('drafts-edit')}/edit",
    f"/drafts/{_nobody('drafts-delete')}/delete",
    f"/outbox/{_nobody('outbox-cancel')}/cancel",
    f"/mutations/{_nobody('mutations-retry')}/retry",
    "/callers/agent/keys",
    f"/keys/{_nobody('keys-revoke')}/revoke",
    f"/contacts/{_nobody('contacts-promote')}/promote",
    f"/contacts/{_nobody('contacts-erase')}/erase",
    "/logout",
]
EXPIRED = {
    "en": "Your session ended",
    "cs": "Vaše relace skončila",
    "sk": "Vaša relácia skončila",
}
REFUSED = {
    "en": "This form was not accepted",
    "cs": "Formulář nebyl přijat",
    "sk": "Formulár nebol prijatý",
}


# Each form in one of the languages, in turn.
IN_TURN = [(path, list(EXPIRED)[n % 3]) for n, path in enumerate(FORMS)]


@pytest.mark.parametrize(("path", "lang"), IN_TURN)
def test_a_form_posted_after_the_session_ended_leads_to_sign_in_saying_so(
    signed_in: Console, path: str, lang: str
) -> None:
    token = signed_in.form_token("/")
    signed_in.clock.advance(13 * 3600)
    answer = signed_in.client.post(
        f"{path}?lang={lang}",
        data={"csrf": token, "binding": "0" * 64},
        headers={"Origin": ORIGIN},
        follow_redirects=False,
    )
    assert answer.status_code == 303
    assert answer.headers["location"] == f"/login?lang={lang}&expired=1"
    page = lxml.html.fromstring(signed_in.client.get(answer.headers["location"]).text)
    (notice,) = page.xpath('//*[@id="notice"]')
    assert EXPIRED[lang] in notice.text_content()
    assert page.xpath('//input[@name="password"]')


@pytest.mark.parametrize("lang", list(EXPIRED))
def test_a_sign_in_form_posted_after_it_expired_leads_to_a_fresh_one(
    owned: Console, lang: str
) -> None:
    token = owned.form_token("/login")
    owned.clock.advance(16 * 60)
    answer = owned.client.post(
        f"/login?lang={lang}",
        data={"csrf": token, "password": "whatever it was"},
        headers={"Origin": ORIGIN},
        follow_redirects=False,
    )
    assert answer.status_code == 303
    assert answer.headers["location"] == f"/login?lang={lang}&expired=1"


@pytest.mark.parametrize(("path", "lang"), IN_TURN)
@pytest.mark.parametrize("why", ["other-origin", "wrong-token"])
def test_a_form_of_another_origin_or_token_is_refused_with_a_page_in_its_language(
    signed_in: Console, path: str, lang: str, why: str
) -> None:
    token = signed_in.form_token("/")
    origin = "http://evil.example" if why == "other-origin" else ORIGIN
    answer = signed_in.client.post(
        f"{path}?lang={lang}",
        data={"csrf": token if why == "other-origin" else "x" * 43, "binding": "0" * 64},
        headers={"Origin": origin},
        follow_redirects=False,
    )
    assert answer.status_code == 403
    assert answer.headers["content-type"].startswith("text/html")
    page = lxml.html.fromstring(answer.text)
    assert page.get("lang") == lang
    assert REFUSED[lang] in page.xpath("//h1")[0].text_content()
    assert signed_in.client.get("/").status_code == 200
