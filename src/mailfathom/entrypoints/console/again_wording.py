"""What the sign-in form says when a signed-in owner is sent to sign in again before adding
a sign-in credential, in the console's languages."""

from __future__ import annotations

from mailfathom.app.confirmation.wording import Language

AGAIN_NOTICES: dict[Language, dict[str, str]] = {
    Language.EN: {
        "passkeys": "To add a passkey, sign in again: it needs a sign-in from the last "
        "few minutes. Then open Passkeys again.",
        "keys": "To create an API key, sign in again: it needs a sign-in from the last "
        "few minutes. Then open Callers and keys again.",
    },
    Language.CS: {
        "passkeys": "Chcete-li přidat přístupový klíč, přihlaste se znovu: je k tomu potřeba "
        "přihlášení z posledních několika minut. Pak znovu otevřete Přístupové klíče.",
        "keys": "Chcete-li vytvořit klíč API, přihlaste se znovu: je k tomu potřeba "
        "přihlášení z posledních několika minut. Pak znovu otevřete Volající a klíče.",
    },
    Language.SK: {
        "passkeys": "Ak chcete pridať prístupový kľúč, prihláste sa znova: je na to potrebné "
        "prihlásenie z posledných niekoľkých minút. Potom znova otvorte Prístupové kľúče.",
        "keys": "Ak chcete vytvoriť kľúč API, prihláste sa znova: je na to potrebné "
        "prihlásenie z posledných niekoľkých minút. Potom znova otvorte Volajúci a kľúče.",
    },
}
"""By language, the sign-in form's notice for each reason (`?again=`)."""

AGAIN_LINKS: dict[Language, str] = {
    Language.EN: "Sign in again to add a passkey",
    Language.CS: "Přihlaste se znovu a přidejte přístupový klíč",
    Language.SK: "Prihláste sa znova a pridajte prístupový kľúč",
}
"""By language, the passkeys page's link to the sign-in form when adding needs it."""
