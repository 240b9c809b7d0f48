"""Whether a console session is bound to the client address it signed in from: it is not
(the console is reached through an SSH tunnel or a proxy on its own machine, where every
visitor has the same loopback address, and a phone changes address as it moves); a copied
cookie is ended, for every holder, by signing out."""

from __future__ import annotations

from starlette.testclient import TestClient

from mailfathom.entrypoints.console.pages import ConsoleUseCases, build_console_app

from .conftest import ORIGIN, Console


def test_a_session_is_not_bound_to_an_address_and_sign_out_ends_every_copy(
    owned: Console,
) -> None:
    assert owned.sign_in().status_code == 303
    token = owned.client.cookies["mf_console"]
    app = build_console_app(
        ConsoleUseCases(owned.services.console_access, owned.services.console_overview),
        "127.0.0.1",
    )
    with TestClient(app, base_url=ORIGIN, client=("198.51.100.9", 40000)) as elsewhere:
        elsewhere.cookies.set("mf_console", token)
        assert elsewhere.get("/", follow_redirects=False).status_code == 200
        csrf = owned.form_token("/")
        signed_out = owned.client.post(
            "/logout", data={"csrf": csrf}, headers={"Origin": ORIGIN}, follow_redirects=False
        )
        assert signed_out.status_code == 303
        answer = elsewhere.get("/", follow_redirects=False)
        assert answer.status_code == 303
        assert answer.headers["location"] == "/login"
