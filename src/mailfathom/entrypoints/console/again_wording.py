"""What the sign-in form says when a signed-in owner is sent to sign in again before adding
or removing a sign-in credential, in the console's languages."""

from __future__ import annotations

from mailfathom.app.confirmation.wording import Language
from mailfathom.entrypoints.console.again import Again

AGAIN_NOTICES: dict[Language, dict[Again, str]] = {
    Language.EN: {
        Again.ADD_PASSKEY: "To add a passkey, sign in again: it needs a sign-in from the last "
        "few minutes. You then return to Passkeys.",
        Again.REMOVE_PASSKEY: "To remove a passkey, sign in again: it needs a sign-in from the "
        "last few minutes. You then return to Passkeys.",
        Again.CREATE_KEY: "To create an API key, sign in again: it needs a sign-in from the last "
        "few minutes. You then return to Callers and keys.",
        Again.REVOKE_KEY: "To revoke an API key, sign in again: it needs a sign-in from the last "
        "few minutes. You then return to Callers and keys.",
    },
    Language.CS: {
        Again.ADD_PASSKEY: "Chcete-li přidat přístupový klíč, přihlaste se znovu: je k tomu "
        "potřeba přihlášení z posledních několika minut. Pak se vrátíte na Přístupové klíče.",
        Again.REMOVE_PASSKEY: "Chcete-li odebrat přístupový klíč, přihlaste se znovu: je k tomu "
        "potřeba přihlášení z posledních několika minut. Pak se vrátíte na Přístupové klíče.",
        Again.CREATE_KEY: "Chcete-li vytvořit klíč API, přihlaste se znovu: je k tomu potřeba "
        "přihlášení z posledních několika minut. Pak se vrátíte na Volající a klíče.",
        Again.REVOKE_KEY: "Chcete-li zneplatnit klíč API, přihlaste se znovu: je k tomu potřeba "
        "přihlášení z posledních několika minut. Pak se vrátíte na Volající a klíče.",
    },
    Language.SK: {
        Again.ADD_PASSKEY: "Ak chcete pridať prístupový kľúč, prihláste sa znova: je na to "
        "potrebné prihlásenie z posledných niekoľkých minút. Potom sa vrátite na Prístupové "
        "kľúče.",
        Again.REMOVE_PASSKEY: "Ak chcete odobrať prístupový kľúč, prihláste sa znova: je na to "
        "potrebné prihlásenie z posledných niekoľkých minút. Potom sa vrátite na Prístupové "
        "kľúče.",
        Again.CREATE_KEY: "Ak chcete vytvoriť kľúč API, prihláste sa znova: je na to potrebné "
        "prihlásenie z posledných niekoľkých minút. Potom sa vrátite na Volajúci a kľúče.",
        Again.REVOKE_KEY: "Ak chcete zneplatniť kľúč API, prihláste sa znova: je na to potrebné "
        "prihlásenie z posledných niekoľkých minút. Potom sa vrátite na Volajúci a kľúče.",
    },
}
"""By language, the sign-in form's notice for each reason (`?again=`)."""

AGAIN_LINKS: dict[Language, str] = {
    Language.EN: "Sign in again to add a passkey",
    Language.CS: "Přihlaste se znovu a přidejte přístupový klíč",
    Language.SK: "Prihláste sa znova a pridajte prístupový kľúč",
}
"""By language, the passkeys page's link to the sign-in form when adding needs it."""
