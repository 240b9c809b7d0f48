"""Signing in again before a decision that needs a sign-in from the last few minutes
(adding or removing a passkey, creating or revoking an API key): why the sign-in form is
opened (`/login?again=`), and the page the owner is taken back to once signed in, with
either the password or a passkey. The way back is chosen among these reasons' pages only,
never from a path a request names."""

from __future__ import annotations

import enum

from starlette.requests import Request

QUERY = "again"


class Again(enum.Enum):
    ADD_PASSKEY = "passkeys"
    REMOVE_PASSKEY = "remove-passkey"
    CREATE_KEY = "keys"
    REVOKE_KEY = "revoke-key"


_PAGES = {
    Again.ADD_PASSKEY: "/passkeys",
    Again.REMOVE_PASSKEY: "/passkeys",
    Again.CREATE_KEY: "/callers",
    Again.REVOKE_KEY: "/callers",
}


def _joined(path: str, lang_query: str, extra: str) -> str:
    return f"{path}{lang_query}&{extra}" if lang_query else f"{path}?{extra}"


def again_href(lang_query: str, why: Again) -> str:
    """The sign-in form, for a signed-in owner to sign in again before `why`."""
    return _joined("/login", lang_query, f"{QUERY}={why.value}")


def reason(request: Request) -> Again | None:
    """Why the request's sign-in form was opened again, or None."""
    named = request.query_params.get(QUERY, "")
    return next((why for why in Again if why.value == named), None)


def form_query(request: Request, lang_query: str) -> str:
    """The query of the sign-in forms' actions: the page's language, and the reason the
    form was opened again, so that signing in leads back."""
    why = reason(request)
    return lang_query if why is None else _joined("", lang_query, f"{QUERY}={why.value}")


def returned_to(request: Request, lang_query: str) -> str:
    """Where a sign-in made at `request` leads: the page the reason was met on, in the
    page's language; or the overview."""
    why = reason(request)
    return "/" if why is None else _PAGES[why] + lang_query
