"""The words of the console's synchronization health page, in the languages of
`wording.py`."""

from __future__ import annotations

from dataclasses import dataclass

from mailfathom.app.confirmation.wording import Language
from mailfathom.domain.errors import (
    ConsentRequired,
    MailServerAuthError,
    SecretUnavailable,
    SyncError,
    TokenEndpointUnreachable,
    TokenRefused,
)
from mailfathom.domain.sync_failures import FOLDER_NOT_ON_SERVER


@dataclass(frozen=True, slots=True)
class HealthWording:
    intro: str
    no_accounts: str
    folders_of: str
    folder: str
    role: str
    messages: str
    last_progress: str
    never: str
    # `{age}`: how long ago, already written with its unit.
    ago: str
    seconds: str
    minutes: str
    hours: str
    days: str
    last_failure: str
    no_failure: str
    # `{time}`: when the failure was recorded.
    failed_at: str
    account_run: str
    repairs: str
    # `{n}`: how many stored messages wait to be fetched again.
    repairs_waiting: str
    no_repairs: str
    repairs_note: str
    reverify_unfinished: str
    consent_heading: str
    consent_none: str
    consent_explain: str
    refused_explain: str
    # A rotated refresh token its file would not take: a warning, the account not held.
    unsaved: str
    # `{time}`: when the warning was first recorded.
    warned_since: str
    unsaved_explain: str
    # Each code a pass is recorded with, explained.
    codes: dict[int, str]


_SYNC_CODES = (
    SyncError.code,
    MailServerAuthError.code,
    ConsentRequired.code,
    TokenEndpointUnreachable.code,
    TokenRefused.code,
    FOLDER_NOT_ON_SERVER,
    SecretUnavailable.code,
)


def _codes(*texts: str) -> dict[int, str]:
    return dict(zip(_SYNC_CODES, texts, strict=True))


HEALTH_WORDINGS: dict[Language, HealthWording] = {
    Language.EN: HealthWording(
        intro=(
            "Per account and folder: when synchronization last committed progress, the code "
            "the last failed pass stopped on (kept until a pass succeeds), and the repairs "
            "that wait. This page only shows; what fixes a problem is a command run on the "
            "server, written out below."
        ),
        no_accounts="No account is configured.",
        folders_of="Folders of {account}",
        folder="Folder",
        role="Role",
        messages="Messages",
        last_progress="Last progress",
        never="never",
        ago="{age} ago",
        seconds="{n} s",
        minutes="{n} min",
        hours="{n} h",
        days="{n} d",
        last_failure="Last failure",
        no_failure="none",
        failed_at="at {time}",
        account_run="Account (login and session)",
        repairs="Repairs waiting",
        repairs_waiting="{n} message(s) to fetch again",
        no_repairs="none",
        repairs_note=(
            "A message whose stored copy was found missing or damaged is fetched again by its "
            "folder's next pass; check every stored copy with:"
        ),
        reverify_unfinished=(
            "Verifying the senders of stored mail stopped before its end; resume it with:"
        ),
        consent_heading="Accounts needing access granted again",
        consent_none="No account waits for access to be granted again.",
        consent_explain=(
            "The provider refused this account's grant: nothing is synchronized or sent for "
            "it until the person grants access again. Run on the server:"
        ),
        refused_explain=(
            "The mail server refused this account's login: replace the secret it logs in "
            "with (its password, or with OAuth a new grant); a running synchronization "
            "resumes by itself."
        ),
        unsaved="Refresh token not saved",
        warned_since="since {time}",
        unsaved_explain=(
            "The provider issued this account a new refresh token that its file would not "
            "take; the account still synchronizes and sends on the token kept in memory. Make "
            "the file and its directory writable again (free disk space, a file system "
            "mounted read-write, write permission for the service's user): the token is "
            "written a minute after the last try, at the account's next connection. Do not "
            "restart the process, or run a command that logs in to the account, before that: "
            "it would present the replaced token, which a provider that takes refresh tokens "
            "once refuses, and the person would have to grant access again."
        ),
        codes=_codes(
            "a synchronization step failed; it is tried again",
            "the server refused the login",
            "access must be granted again",
            "the token endpoint could not be reached",
            "the token endpoint refused the request",
            "the folder is not on the server",
            "a secret the account needs cannot be read",
        ),
    ),
    Language.CS: HealthWording(
        intro=(
            "Pro každý účet a složku: kdy synchronizace naposledy uložila postup, kód, na "
            "kterém se zastavil poslední neúspěšný průchod (platí, dokud průchod neuspěje), "
            "a opravy, které čekají. Stránka jen ukazuje; problém opraví příkaz spuštěný na "
            "serveru, vypsaný níže."
        ),
        no_accounts="Není nastaven žádný účet.",
        folders_of="Složky účtu {account}",
        folder="Složka",
        role="Role",
        messages="Zprávy",
        last_progress="Poslední postup",
        never="nikdy",
        ago="před {age}",
        seconds="{n} s",
        minutes="{n} min",
        hours="{n} h",
        days="{n} d",
        last_failure="Poslední chyba",
        no_failure="žádná",
        failed_at="v {time}",
        account_run="Účet (přihlášení a spojení)",
        repairs="Čekající opravy",
        repairs_waiting="zpráv k novému stažení: {n}",
        no_repairs="žádné",
        repairs_note=(
            "Zprávu, jejíž uložená kopie chybí nebo je poškozená, stáhne znovu příští "
            "průchod její složky; všechny uložené kopie zkontroluje:"
        ),
        reverify_unfinished=("Ověřování odesílatelů uložené pošty skončilo předčasně; dokončí ho:"),
        consent_heading="Účty, kterým je třeba znovu udělit přístup",
        consent_none="Žádný účet nečeká na nové udělení přístupu.",
        consent_explain=(
            "Poskytovatel odmítl oprávnění tohoto účtu: nic se pro něj nesynchronizuje ani "
            "neodesílá, dokud člověk znovu neudělí přístup. Na serveru spusťte:"
        ),
        refused_explain=(
            "Poštovní server odmítl přihlášení tohoto účtu: vyměňte tajný údaj, kterým se "
            "přihlašuje (heslo, nebo u OAuth nové oprávnění); běžící synchronizace pak "
            "pokračuje sama."
        ),
        unsaved="Obnovovací token není uložen",
        warned_since="od {time}",
        unsaved_explain=(
            "Poskytovatel vydal tomuto účtu nový obnovovací token, který jeho soubor "
            "nepřijal; účet se dál synchronizuje a odesílá s tokenem drženým v paměti. "
            "Umožněte znovu zápis do souboru a jeho adresáře (volné místo na disku, souborový "
            "systém připojený pro zápis, právo zápisu pro uživatele služby): token se zapíše "
            "minutu po posledním pokusu, při příštím spojení účtu. Do té doby nerestartujte "
            "proces ani nespouštějte příkaz, který se k účtu přihlašuje: předložil by "
            "nahrazený token, který poskytovatel přijímající obnovovací token jen jednou "
            "odmítne, a člověk by musel znovu udělit přístup."
        ),
        codes=_codes(
            "krok synchronizace selhal; zkusí se znovu",
            "server odmítl přihlášení",
            "přístup je třeba udělit znovu",
            "koncový bod tokenů není dostupný",
            "koncový bod tokenů požadavek odmítl",
            "složka na serveru není",
            "tajný údaj účtu nelze přečíst",
        ),
    ),
    Language.SK: HealthWording(
        intro=(
            "Pre každý účet a priečinok: kedy synchronizácia naposledy uložila postup, kód, "
            "na ktorom sa zastavil posledný neúspešný prechod (platí, kým prechod neuspeje), "
            "a opravy, ktoré čakajú. Stránka len ukazuje; problém opraví príkaz spustený na "
            "serveri, vypísaný nižšie."
        ),
        no_accounts="Nie je nastavený žiadny účet.",
        folders_of="Priečinky účtu {account}",
        folder="Priečinok",
        role="Rola",
        messages="Správy",
        last_progress="Posledný postup",
        never="nikdy",
        ago="pred {age}",
        seconds="{n} s",
        minutes="{n} min",
        hours="{n} h",
        days="{n} d",
        last_failure="Posledná chyba",
        no_failure="žiadna",
        failed_at="o {time}",
        account_run="Účet (prihlásenie a spojenie)",
        repairs="Čakajúce opravy",
        repairs_waiting="správ na nové stiahnutie: {n}",
        no_repairs="žiadne",
        repairs_note=(
            "Správu, ktorej uložená kópia chýba alebo je poškodená, stiahne znova ďalší "
            "prechod jej priečinka; všetky uložené kópie skontroluje:"
        ),
        reverify_unfinished=(
            "Overovanie odosielateľov uloženej pošty skončilo predčasne; dokončí ho:"
        ),
        consent_heading="Účty, ktorým treba znova udeliť prístup",
        consent_none="Žiadny účet nečaká na nové udelenie prístupu.",
        consent_explain=(
            "Poskytovateľ odmietol oprávnenie tohto účtu: nič sa preň nesynchronizuje ani "
            "neodosiela, kým človek znova neudelí prístup. Na serveri spustite:"
        ),
        refused_explain=(
            "Poštový server odmietol prihlásenie tohto účtu: vymeňte tajný údaj, ktorým sa "
            "prihlasuje (heslo, alebo pri OAuth nové oprávnenie); bežiaca synchronizácia "
            "potom pokračuje sama."
        ),
        unsaved="Obnovovací token nie je uložený",
        warned_since="od {time}",
        unsaved_explain=(
            "Poskytovateľ vydal tomuto účtu nový obnovovací token, ktorý jeho súbor "
            "neprijal; účet sa ďalej synchronizuje a odosiela s tokenom drženým v pamäti. "
            "Umožnite znova zápis do súboru a jeho adresára (voľné miesto na disku, súborový "
            "systém pripojený na zápis, právo zápisu pre používateľa služby): token sa zapíše "
            "minútu po poslednom pokuse, pri ďalšom spojení účtu. Dovtedy nereštartujte "
            "proces ani nespúšťajte príkaz, ktorý sa k účtu prihlasuje: predložil by "
            "nahradený token, ktorý poskytovateľ prijímajúci obnovovací token len raz "
            "odmietne, a človek by musel znova udeliť prístup."
        ),
        codes=_codes(
            "krok synchronizácie zlyhal; skúsi sa znova",
            "server odmietol prihlásenie",
            "prístup treba udeliť znova",
            "koncový bod tokenov nie je dostupný",
            "koncový bod tokenov požiadavku odmietol",
            "priečinok na serveri nie je",
            "tajný údaj účtu nemožno prečítať",
        ),
    ),
}


def age_text(w: HealthWording, seconds: int) -> str:
    """How long ago, in the largest unit that keeps it readable."""
    if seconds < 90:
        amount = w.seconds.format(n=seconds)
    elif seconds < 90 * 60:
        amount = w.minutes.format(n=round(seconds / 60))
    elif seconds < 36 * 3600:
        amount = w.hours.format(n=round(seconds / 3600))
    else:
        amount = w.days.format(n=round(seconds / 86400))
    return w.ago.format(age=amount)
