"""The words of the console's callers page, new-key page and recent-calls page, in the
languages of `wording.py`."""

from __future__ import annotations

from dataclasses import dataclass

from mailfathom.app.confirmation.wording import Language


@dataclass(frozen=True, slots=True)
class CallersWording:
    edited_in_file: str
    published: str
    no_callers: str
    admitted_by: str
    by_file_key: str
    # `{subject}`: the subject an access token must name.
    by_oauth: str
    open_loopback: str
    permissions: str
    all_permissions: str
    no_permissions: str
    confirmation: str
    confirmation_ask: str
    confirmation_none: str
    keys: str
    no_keys: str
    key_id: str
    created: str
    action: str
    revoke: str
    # `{key}`: the key's identifier, so each button names its own key.
    revoke_label: str
    file_key: str
    # `{ending}`: the last four hexadecimal digits of the configured key's SHA-256.
    file_key_ending: str
    file_key_not_revocable: str
    create: str
    # `{caller}`: the entry's name, so each button names its own entry.
    create_label: str
    orphaned: str
    orphaned_note: str
    caller: str
    revoked_now: str
    not_active: str
    form_used: str
    no_such_caller: str
    # `{most}`: how many active keys an entry may hold.
    too_many: str
    # Said in place of an entry's create form while it holds `{most}` active keys.
    full: str
    new_key: str
    # `{caller}`: the entry the key admits as.
    new_key_for: str
    shown_once: str
    key_label: str
    back: str
    calls_note: str
    no_calls: str
    tool: str
    outcome: str
    code: str
    duration: str
    when: str
    older: str
    newest: str
    filter: str
    any_caller: str
    any_outcome: str
    apply: str
    # `{ms}`: milliseconds, written by `took`.
    milliseconds: str
    # What separates a number's whole part from its fraction in this language.
    decimal_mark: str
    # Each outcome the endpoint records, by its recorded name.
    outcomes: dict[str, str]

    def took(self, microseconds: float) -> str:
        """A call's duration in milliseconds to a tenth, as this language writes numbers."""
        return self.milliseconds.format(
            ms=f"{microseconds / 1000:.1f}".replace(".", self.decimal_mark)
        )


WORDINGS: dict[Language, CallersWording] = {
    Language.EN: CallersWording(
        edited_in_file=(
            "What each caller entry grants is written in the configuration file "
            "([[McpEndpoint.Callers]]) and edited there; this page shows it and manages the "
            "keys created here."
        ),
        published=(
            "Tool categories the endpoint publishes (a caller is offered those its "
            "permissions cover):"
        ),
        no_callers="The configuration names no caller entry.",
        admitted_by="Admitted by",
        by_file_key="An API key in the configuration file",
        by_oauth="An OAuth access token naming the subject {subject}",
        open_loopback="Nothing: any program on this machine (loopback only)",
        permissions="Permissions",
        all_permissions="All permissions",
        no_permissions="No permission",
        confirmation="Before mail leaves",
        confirmation_ask="A person is asked to send, save as draft or cancel",
        confirmation_none="Sent as the caller asks, without asking anyone",
        keys="API keys created here",
        no_keys="No key was created here for this entry.",
        key_id="Key",
        created="Created",
        action="Action",
        revoke="Revoke",
        revoke_label="Revoke key {key}",
        file_key="Key in the configuration file",
        file_key_ending="SHA-256 ending in …{ending}",
        file_key_not_revocable=(
            "Not revocable here: remove or replace ApiKeySha256 in the configuration file "
            "and restart."
        ),
        create="Create a key",
        create_label="Create a key for {caller}",
        orphaned="Keys of entries no longer configured",
        orphaned_note="These keys admit nothing: their entry is not in the configuration.",
        caller="Caller",
        revoked_now="The key was revoked; the next request made with it is refused.",
        not_active="No key under that identifier is active; nothing changed.",
        form_used=(
            "That form was already used, and its key shown once. Create another key if it "
            "was not copied."
        ),
        no_such_caller="The configuration names no caller entry of that name.",
        too_many=(
            "No key was created: an entry may hold at most {most} active keys. Revoke one it "
            "no longer needs first."
        ),
        full="This entry holds {most} active keys, the most it may: revoke one to create another.",
        new_key="New API key",
        new_key_for="A new key admitting as {caller}",
        shown_once=(
            "Copy the key now. It is shown this once: only its SHA-256 is kept, so it cannot "
            "be shown again."
        ),
        key_label="The new key",
        back="Back to the callers",
        calls_note=(
            "Each answered tool call, newest first: never its arguments or its result. The "
            "newest 10,000 are kept."
        ),
        no_calls="No tool call was recorded.",
        tool="Tool",
        outcome="Outcome",
        code="Code",
        duration="Duration",
        when="When",
        older="Older calls",
        newest="Newest calls",
        filter="Show only",
        any_caller="Any caller",
        any_outcome="Any outcome",
        apply="Show",
        milliseconds="{ms} ms",
        decimal_mark=".",
        outcomes={
            "success": "Answered",
            "refused": "Refused",
            "failed": "Failed",
            "unknownTool": "Unknown tool",
            "protocolError": "Protocol error",
            "cancelled": "Cancelled",
        },
    ),
    Language.CS: CallersWording(
        edited_in_file=(
            "Co která položka volajícího smí, je zapsáno v konfiguračním souboru "
            "([[McpEndpoint.Callers]]) a upravuje se tam; tato stránka to ukazuje a spravuje "
            "klíče vytvořené zde."
        ),
        published=(
            "Kategorie nástrojů, které koncový bod zveřejňuje (volající dostane ty, které "
            "pokrývají jeho oprávnění):"
        ),
        no_callers="Konfigurace neuvádí žádnou položku volajícího.",
        admitted_by="Přístup",
        by_file_key="API klíč v konfiguračním souboru",
        by_oauth="Přístupový token OAuth se subjektem {subject}",
        open_loopback="Bez pověření: kterýkoli program na tomto počítači (jen loopback)",
        permissions="Oprávnění",
        all_permissions="Všechna oprávnění",
        no_permissions="Žádné oprávnění",
        confirmation="Před odesláním pošty",
        confirmation_ask="Člověk je dotázán: odeslat, uložit jako koncept, nebo zrušit",
        confirmation_none="Odesláno, jak volající žádá, bez dotazu",
        keys="API klíče vytvořené zde",
        no_keys="Pro tuto položku zde nebyl vytvořen žádný klíč.",
        key_id="Klíč",
        created="Vytvořen",
        action="Akce",
        revoke="Zneplatnit",
        revoke_label="Zneplatnit klíč {key}",
        file_key="Klíč v konfiguračním souboru",
        file_key_ending="SHA-256 končí …{ending}",
        file_key_not_revocable=(
            "Zde jej zneplatnit nelze: odstraňte nebo nahraďte ApiKeySha256 v konfiguračním "
            "souboru a spusťte server znovu."
        ),
        create="Vytvořit klíč",
        create_label="Vytvořit klíč pro {caller}",
        orphaned="Klíče položek, které už konfigurace neuvádí",
        orphaned_note="Tyto klíče nikoho nepustí: jejich položka v konfiguraci není.",
        caller="Volající",
        revoked_now="Klíč byl zneplatněn; další požadavek s ním bude odmítnut.",
        not_active="Pod tímto identifikátorem není žádný platný klíč; nic se nezměnilo.",
        form_used=(
            "Tento formulář už byl použit a jeho klíč jednou zobrazen. Pokud jste jej "
            "nezkopírovali, vytvořte jiný klíč."
        ),
        no_such_caller="Konfigurace neuvádí položku volajícího s tímto názvem.",
        too_many=(
            "Klíč nebyl vytvořen: položka smí mít nejvýše {most} platných klíčů. Nejprve "
            "zneplatněte některý, který už nepotřebuje."
        ),
        full=(
            "Tato položka má {most} platných klíčů, nejvíc, kolik smí mít: chcete-li vytvořit "
            "další, jeden zneplatněte."
        ),
        new_key="Nový API klíč",
        new_key_for="Nový klíč s přístupem jako {caller}",
        shown_once=(
            "Zkopírujte klíč hned. Zobrazuje se jen tentokrát: uchovává se pouze jeho "
            "SHA-256, znovu jej zobrazit nelze."
        ),
        key_label="Nový klíč",
        back="Zpět na volající",
        calls_note=(
            "Každé zodpovězené volání nástroje, nejnovější první: nikdy jeho argumenty ani "
            "výsledek. Uchovává se nejnovějších 10 000."
        ),
        no_calls="Žádné volání nástroje nebylo zaznamenáno.",
        tool="Nástroj",
        outcome="Výsledek",
        code="Kód",
        duration="Trvání",
        when="Kdy",
        older="Starší volání",
        newest="Nejnovější volání",
        filter="Zobrazit jen",
        any_caller="Kterýkoli volající",
        any_outcome="Jakýkoli výsledek",
        apply="Zobrazit",
        milliseconds="{ms}\u00a0ms",
        decimal_mark=",",
        outcomes={
            "success": "Zodpovězeno",
            "refused": "Odmítnuto",
            "failed": "Selhalo",
            "unknownTool": "Neznámý nástroj",
            "protocolError": "Chyba protokolu",
            "cancelled": "Zrušeno",
        },
    ),
    Language.SK: CallersWording(
        edited_in_file=(
            "Čo ktorá položka volajúceho smie, je zapísané v konfiguračnom súbore "
            "([[McpEndpoint.Callers]]) a upravuje sa tam; táto stránka to ukazuje a spravuje "
            "kľúče vytvorené tu."
        ),
        published=(
            "Kategórie nástrojov, ktoré koncový bod zverejňuje (volajúci dostane tie, ktoré "
            "pokrývajú jeho oprávnenia):"
        ),
        no_callers="Konfigurácia neuvádza žiadnu položku volajúceho.",
        admitted_by="Prístup",
        by_file_key="API kľúč v konfiguračnom súbore",
        by_oauth="Prístupový token OAuth so subjektom {subject}",
        open_loopback="Bez poverenia: ktorýkoľvek program na tomto počítači (len loopback)",
        permissions="Oprávnenia",
        all_permissions="Všetky oprávnenia",
        no_permissions="Žiadne oprávnenie",
        confirmation="Pred odoslaním pošty",
        confirmation_ask="Človek je opýtaný: odoslať, uložiť ako koncept, alebo zrušiť",
        confirmation_none="Odoslané, ako volajúci žiada, bez otázky",
        keys="API kľúče vytvorené tu",
        no_keys="Pre túto položku tu nebol vytvorený žiadny kľúč.",
        key_id="Kľúč",
        created="Vytvorený",
        action="Akcia",
        revoke="Zneplatniť",
        revoke_label="Zneplatniť kľúč {key}",
        file_key="Kľúč v konfiguračnom súbore",
        file_key_ending="SHA-256 končí …{ending}",
        file_key_not_revocable=(
            "Tu ho zneplatniť nemožno: odstráňte alebo nahraďte ApiKeySha256 v konfiguračnom "
            "súbore a spustite server znova."
        ),
        create="Vytvoriť kľúč",
        create_label="Vytvoriť kľúč pre {caller}",
        orphaned="Kľúče položiek, ktoré už konfigurácia neuvádza",
        orphaned_note="Tieto kľúče nikoho nepustia: ich položka v konfigurácii nie je.",
        caller="Volajúci",
        revoked_now="Kľúč bol zneplatnený; ďalšia požiadavka s ním bude odmietnutá.",
        not_active="Pod týmto identifikátorom nie je žiadny platný kľúč; nič sa nezmenilo.",
        form_used=(
            "Tento formulár už bol použitý a jeho kľúč raz zobrazený. Ak ste ho "
            "neskopírovali, vytvorte iný kľúč."
        ),
        no_such_caller="Konfigurácia neuvádza položku volajúceho s týmto názvom.",
        too_many=(
            "Kľúč nebol vytvorený: položka smie mať najviac {most} platných kľúčov. Najprv "
            "zneplatnite niektorý, ktorý už nepotrebuje."
        ),
        full=(
            "Táto položka má {most} platných kľúčov, najviac, koľko smie mať: ak chcete "
            "vytvoriť ďalší, jeden zneplatnite."
        ),
        new_key="Nový API kľúč",
        new_key_for="Nový kľúč s prístupom ako {caller}",
        shown_once=(
            "Skopírujte kľúč hneď. Zobrazuje sa len teraz: uchováva sa iba jeho SHA-256, "
            "znova ho zobraziť nemožno."
        ),
        key_label="Nový kľúč",
        back="Späť na volajúcich",
        calls_note=(
            "Každé zodpovedané volanie nástroja, najnovšie prvé: nikdy jeho argumenty ani "
            "výsledok. Uchováva sa najnovších 10 000."
        ),
        no_calls="Žiadne volanie nástroja nebolo zaznamenané.",
        tool="Nástroj",
        outcome="Výsledok",
        code="Kód",
        duration="Trvanie",
        when="Kedy",
        older="Staršie volania",
        newest="Najnovšie volania",
        filter="Zobraziť len",
        any_caller="Ktorýkoľvek volajúci",
        any_outcome="Akýkoľvek výsledok",
        apply="Zobraziť",
        milliseconds="{ms}\u00a0ms",
        decimal_mark=",",
        outcomes={
            "success": "Zodpovedané",
            "refused": "Odmietnuté",
            "failed": "Zlyhalo",
            "unknownTool": "Neznámy nástroj",
            "protocolError": "Chyba protokolu",
            "cancelled": "Zrušené",
        },
    ),
}
