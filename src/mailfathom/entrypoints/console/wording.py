"""The console's words in English, Czech and Slovak: the languages the confirmation question
is asked in (`app.confirmation.wording`), chosen by `?lang=` or the browser's
`Accept-Language`."""

from __future__ import annotations

from dataclasses import dataclass

from mailfathom.app.confirmation.wording import Language


@dataclass(frozen=True, slots=True)
class ConsoleWording:
    title: str
    sign_in: str
    field_label: str
    sign_in_button: str
    sign_out: str
    mismatch: str
    # `{seconds}`: how long the client waits before its next try.
    wait: str
    form_expired: str
    form_refused: str
    form_refused_text: str
    unset: str
    overview: str
    decisions: str
    alerts_waiting: str
    outbox: str
    queued: str
    held: str
    sending: str
    sent: str
    refused: str
    cancelled: str
    mutations: str
    mutations_pending: str
    mutations_dead_lettered: str
    accounts: str
    account: str
    state: str
    healthy: str
    needs_consent: str
    login_refused: str
    count: str
    health: str
    contacts: str
    callers: str
    calls: str
    passkeys: str


WORDINGS: dict[Language, ConsoleWording] = {
    Language.EN: ConsoleWording(
        title="MailFathom console",
        sign_in="Sign in",
        field_label="Owner password",
        sign_in_button="Sign in",
        sign_out="Sign out",
        mismatch="That password is not the owner password.",
        wait="Too many wrong passwords. Try again in {seconds} seconds.",
        form_expired=(
            "Your session ended before the form was sent, so nothing was done. Sign in and "
            "try again."
        ),
        form_refused="This form was not accepted",
        form_refused_text=(
            "It did not come from this console's own page, or that page is out of date, so "
            "nothing was done. Load the page again and try again."
        ),
        unset=(
            "No owner password is set, so nobody can sign in yet. On the server, run "
            "mailfathom console set-password --config <your configuration file> and type "
            "the password."
        ),
        overview="Overview",
        decisions="Waiting for you",
        alerts_waiting="Drafts waiting for a person",
        outbox="Outbox",
        queued="Queued",
        held="Held until their time",
        sending="Being sent",
        sent="Sent",
        refused="Refused",
        cancelled="Cancelled",
        mutations="Mailbox changes",
        mutations_pending="Pending",
        mutations_dead_lettered="Dead-lettered",
        accounts="Accounts",
        account="Account",
        state="State",
        healthy="Synchronizing",
        needs_consent="Needs access granted again",
        login_refused="Login refused by the server",
        count="Count",
        health="Sync health",
        contacts="Contacts",
        callers="Callers and keys",
        calls="Recent tool calls",
        passkeys="Passkeys",
    ),
    Language.CS: ConsoleWording(
        title="Konzole MailFathom",
        sign_in="Přihlášení",
        field_label="Heslo vlastníka",
        sign_in_button="Přihlásit",
        sign_out="Odhlásit",
        mismatch="Toto heslo není heslo vlastníka.",
        wait="Příliš mnoho chybných hesel. Zkuste to znovu za {seconds} s.",
        form_expired=(
            "Vaše relace skončila dříve, než byl formulář odeslán, takže se nic nestalo. "
            "Přihlaste se a zkuste to znovu."
        ),
        form_refused="Formulář nebyl přijat",
        form_refused_text=(
            "Nepřišel z vlastní stránky této konzole nebo je ta stránka zastaralá, takže se "
            "nic nestalo. Načtěte stránku znovu a zkuste to znovu."
        ),
        unset=(
            "Heslo vlastníka není nastavené, proto se zatím nikdo nemůže přihlásit. Na "
            "serveru spusťte mailfathom console set-password --config <váš konfigurační "
            "soubor> a zadejte heslo."
        ),
        overview="Přehled",
        decisions="Čeká na vás",
        alerts_waiting="Koncepty čekající na člověka",
        outbox="K odeslání",
        queued="Ve frontě",
        held="Odloženo na později",
        sending="Odesílá se",
        sent="Odesláno",
        refused="Odmítnuto",
        cancelled="Zrušeno",
        mutations="Změny schránky",
        mutations_pending="Čekající",
        mutations_dead_lettered="Neproveditelné",
        accounts="Účty",
        account="Účet",
        state="Stav",
        healthy="Synchronizuje se",
        needs_consent="Je třeba znovu udělit přístup",
        login_refused="Server odmítl přihlášení",
        count="Počet",
        health="Stav synchronizace",
        contacts="Kontakty",
        callers="Volající a klíče",
        calls="Nedávná volání nástrojů",
        passkeys="Přístupové klíče",
    ),
    Language.SK: ConsoleWording(
        title="Konzola MailFathom",
        sign_in="Prihlásenie",
        field_label="Heslo vlastníka",
        sign_in_button="Prihlásiť",
        sign_out="Odhlásiť",
        mismatch="Toto heslo nie je heslo vlastníka.",
        wait="Príliš veľa nesprávnych hesiel. Skúste to znova o {seconds} s.",
        form_expired=(
            "Vaša relácia skončila skôr, než bol formulár odoslaný, takže sa nič nestalo. "
            "Prihláste sa a skúste to znova."
        ),
        form_refused="Formulár nebol prijatý",
        form_refused_text=(
            "Neprišiel z vlastnej stránky tejto konzoly alebo je tá stránka zastaraná, takže "
            "sa nič nestalo. Načítajte stránku znova a skúste to znova."
        ),
        unset=(
            "Heslo vlastníka nie je nastavené, preto sa zatiaľ nikto nemôže prihlásiť. Na "
            "serveri spustite mailfathom console set-password --config <váš konfiguračný "
            "súbor> a zadajte heslo."
        ),
        overview="Prehľad",
        decisions="Čaká na vás",
        alerts_waiting="Koncepty čakajúce na človeka",
        outbox="Na odoslanie",
        queued="V poradí",
        held="Odložené na neskôr",
        sending="Odosiela sa",
        sent="Odoslané",
        refused="Odmietnuté",
        cancelled="Zrušené",
        mutations="Zmeny schránky",
        mutations_pending="Čakajúce",
        mutations_dead_lettered="Nevykonateľné",
        accounts="Účty",
        account="Účet",
        state="Stav",
        healthy="Synchronizuje sa",
        needs_consent="Treba znova udeliť prístup",
        login_refused="Server odmietol prihlásenie",
        count="Počet",
        health="Stav synchronizácie",
        contacts="Kontakty",
        callers="Volajúci a kľúče",
        calls="Nedávne volania nástrojov",
        passkeys="Prístupové kľúče",
    ),
}


def chosen_language(query: str | None, accept_language: str | None) -> Language:
    """`?lang=` when it names a language the console speaks; otherwise the first such
    language of `Accept-Language` by its weights; otherwise English."""
    known = {member.value: member for member in Language}
    if query in known:
        return known[query]
    ranked: list[tuple[float, int, Language]] = []
    for position, item in enumerate((accept_language or "").split(",")):
        tag, _, params = item.strip().partition(";")
        primary = tag.strip().lower().split("-")[0]
        if primary not in known:
            continue
        weight = 1.0
        name, _, value = params.strip().partition("=")
        if name.strip() == "q":
            try:
                weight = float(value)
            except ValueError:
                continue
        if weight > 0:
            ranked.append((-weight, position, known[primary]))
    return min(ranked)[2] if ranked else Language.EN
