"""The words of the console's passkey controls and page, in the languages of `wording.py`."""

from __future__ import annotations

from dataclasses import dataclass

from mailfathom.app.confirmation.wording import Language


@dataclass(frozen=True, slots=True)
class PasskeyWording:
    heading: str
    sign_in: str
    create_first: str
    create_first_hint: str
    # `{origin}`: where the console must be opened for passkeys to work.
    elsewhere: str
    needs_script: str
    unsupported: str
    failed: str
    working: str
    label: str
    label_hint: str
    fallback_label: str
    add: str
    none: str
    name: str
    created: str
    last_used: str
    never: str
    action: str
    remove: str
    # `{n}`: the passkey's position in the list, so each button names its own passkey.
    remove_label: str
    added: str
    removed: str
    not_found: str
    not_accepted: str
    expired: str
    not_offered: str
    # `{most}`: how many passkeys the owner may hold.
    too_many: str
    # Said in place of the add form while the owner holds `{most}` passkeys.
    full: str


PASSKEY_WORDINGS: dict[Language, PasskeyWording] = {
    Language.EN: PasskeyWording(
        heading="Passkeys",
        sign_in="Sign in with a passkey",
        create_first="Create the owner's passkey",
        create_first_hint=(
            "Nobody can sign in yet. From this machine you may create the owner's passkey "
            "now; creating it signs you in."
        ),
        elsewhere="Passkeys work only when the console is opened at {origin}.",
        needs_script="Passkeys need JavaScript in this browser; the password works without it.",
        unsupported="This browser cannot use passkeys.",
        failed="No passkey was used. Try again.",
        working="Waiting for the passkey…",
        label="Name of the new passkey",
        label_hint="For example the device it lives on. Optional.",
        fallback_label="Passkey",
        add="Add a passkey",
        none="No passkey yet.",
        name="Name",
        created="Created",
        last_used="Last used",
        never="Never",
        action="Action",
        remove="Remove",
        remove_label="Remove passkey {n}",
        added="The passkey was added.",
        removed="The passkey was removed; it signs nobody in any more.",
        not_found="No passkey is kept under that identifier.",
        not_accepted="That passkey was not accepted.",
        expired="The passkey request expired or was used already. Try again.",
        not_offered="Passkeys cannot be used here.",
        too_many=(
            "No passkey was added: the owner may hold at most {most}. Remove one you no "
            "longer use first."
        ),
        full=(
            "You hold {most} passkeys, the most the console keeps: remove one you no longer "
            "use to add another."
        ),
    ),
    Language.CS: PasskeyWording(
        heading="Přístupové klíče",
        sign_in="Přihlásit přístupovým klíčem",
        create_first="Vytvořit přístupový klíč vlastníka",
        create_first_hint=(
            "Zatím se nikdo nemůže přihlásit. Z tohoto počítače teď můžete vytvořit "
            "přístupový klíč vlastníka; jeho vytvořením se přihlásíte."
        ),
        elsewhere="Přístupové klíče fungují, jen když konzoli otevřete na adrese {origin}.",
        needs_script=(
            "Přístupové klíče potřebují v tomto prohlížeči JavaScript; heslo funguje i bez něj."
        ),
        unsupported="Tento prohlížeč neumí přístupové klíče používat.",
        failed="Žádný přístupový klíč nebyl použit. Zkuste to znovu.",
        working="Čeká se na přístupový klíč…",
        label="Název nového přístupového klíče",
        label_hint="Například zařízení, na kterém je uložen. Nepovinné.",
        fallback_label="Přístupový klíč",
        add="Přidat přístupový klíč",
        none="Zatím žádný přístupový klíč.",
        name="Název",
        created="Vytvořen",
        last_used="Naposledy použit",
        never="Nikdy",
        action="Akce",
        remove="Odebrat",
        remove_label="Odebrat přístupový klíč {n}",
        added="Přístupový klíč byl přidán.",
        removed="Přístupový klíč byl odebrán; už nikoho nepřihlásí.",
        not_found="Pod tímto identifikátorem není žádný přístupový klíč.",
        not_accepted="Tento přístupový klíč nebyl přijat.",
        expired="Žádost o přístupový klíč vypršela nebo už byla použita. Zkuste to znovu.",
        not_offered="Přístupové klíče zde nelze použít.",
        too_many=(
            "Přístupový klíč nebyl přidán: vlastník jich smí mít nejvýše {most}. Nejprve "
            "odeberte některý, který už nepoužíváte."
        ),
        full=(
            "Máte {most} přístupových klíčů, nejvíc, kolik konzole uchová: chcete-li přidat "
            "další, odeberte některý, který už nepoužíváte."
        ),
    ),
    Language.SK: PasskeyWording(
        heading="Prístupové kľúče",
        sign_in="Prihlásiť prístupovým kľúčom",
        create_first="Vytvoriť prístupový kľúč vlastníka",
        create_first_hint=(
            "Zatiaľ sa nikto nemôže prihlásiť. Z tohto počítača teraz môžete vytvoriť "
            "prístupový kľúč vlastníka; jeho vytvorením sa prihlásite."
        ),
        elsewhere="Prístupové kľúče fungujú, len keď konzolu otvoríte na adrese {origin}.",
        needs_script=(
            "Prístupové kľúče potrebujú v tomto prehliadači JavaScript; heslo funguje aj bez neho."
        ),
        unsupported="Tento prehliadač nevie prístupové kľúče používať.",
        failed="Nebol použitý žiadny prístupový kľúč. Skúste to znova.",
        working="Čaká sa na prístupový kľúč…",
        label="Názov nového prístupového kľúča",
        label_hint="Napríklad zariadenie, na ktorom je uložený. Nepovinné.",
        fallback_label="Prístupový kľúč",
        add="Pridať prístupový kľúč",
        none="Zatiaľ žiadny prístupový kľúč.",
        name="Názov",
        created="Vytvorený",
        last_used="Naposledy použitý",
        never="Nikdy",
        action="Akcia",
        remove="Odobrať",
        remove_label="Odobrať prístupový kľúč {n}",
        added="Prístupový kľúč bol pridaný.",
        removed="Prístupový kľúč bol odobraný; už nikoho neprihlási.",
        not_found="Pod týmto identifikátorom nie je žiadny prístupový kľúč.",
        not_accepted="Tento prístupový kľúč nebol prijatý.",
        expired="Žiadosť o prístupový kľúč vypršala alebo už bola použitá. Skúste to znova.",
        not_offered="Prístupové kľúče tu nemožno použiť.",
        too_many=(
            "Prístupový kľúč nebol pridaný: vlastník ich smie mať najviac {most}. Najprv "
            "odoberte niektorý, ktorý už nepoužívate."
        ),
        full=(
            "Máte {most} prístupových kľúčov, najviac, koľko konzola uchová: ak chcete pridať "
            "ďalší, odoberte niektorý, ktorý už nepoužívate."
        ),
    ),
}
