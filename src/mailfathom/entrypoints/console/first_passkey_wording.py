"""What the sign-in form says about the owner's first passkey's one-time code, in the
console's languages."""

from __future__ import annotations

from dataclasses import dataclass

from mailfathom.app.confirmation.wording import Language


@dataclass(frozen=True, slots=True)
class FirstPasskeyWording:
    code_label: str
    code_hint: str
    # Shown on the sign-in form while nobody can sign in and no code is waiting.
    how: str


FIRST_PASSKEY_WORDINGS: dict[Language, FirstPasskeyWording] = {
    Language.EN: FirstPasskeyWording(
        code_label="One-time code",
        code_hint="The code mailfathom console first-passkey printed on the server.",
        how=(
            "To create the owner's passkey instead of setting a password, run "
            "mailfathom console first-passkey --config <your configuration file> on the "
            "server and open this page again within 15 minutes."
        ),
    ),
    Language.CS: FirstPasskeyWording(
        code_label="Jednorázový kód",
        code_hint="Kód, který na serveru vypsal příkaz mailfathom console first-passkey.",
        how=(
            "Chcete-li místo hesla vytvořit přístupový klíč vlastníka, spusťte na serveru "
            "mailfathom console first-passkey --config <váš konfigurační soubor> a do 15 "
            "minut otevřete tuto stránku znovu."
        ),
    ),
    Language.SK: FirstPasskeyWording(
        code_label="Jednorazový kód",
        code_hint="Kód, ktorý na serveri vypísal príkaz mailfathom console first-passkey.",
        how=(
            "Ak chcete namiesto hesla vytvoriť prístupový kľúč vlastníka, spustite na serveri "
            "mailfathom console first-passkey --config <váš konfiguračný súbor> a do 15 "
            "minút otvorte túto stránku znova."
        ),
    ),
}
