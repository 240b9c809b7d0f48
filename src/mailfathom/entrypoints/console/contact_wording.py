"""The words of the console's contact pages, in the languages of `wording.py`."""

from __future__ import annotations

from dataclasses import dataclass

from mailfathom.app.confirmation.wording import Language
from mailfathom.domain.contacts import ContactWriter


@dataclass(frozen=True, slots=True)
class ContactWording:
    intro: str
    empty: str
    person: str
    name: str
    unnamed: str
    addresses: str
    kind: str
    asserted: str
    collected: str
    origin: str
    # Who wrote a contact's addresses.
    writers: dict[ContactWriter, str]
    # `{account}`: the local account a peer record stands for.
    peer_of: str
    recorded: str
    action: str
    promote: str
    # `{n}`: the contact's position on the page, so each control names its own contact.
    promote_label: str
    erase: str
    erase_label: str
    next_page: str
    first_page: str
    promoted: str
    already_asserted: str
    unnamed_refused: str
    not_found: str
    # `{addresses}`: how many addresses went with the contact.
    erased: str
    cursor_refused: str
    erase_heading: str
    # `{n}`: how many addresses the contact holds.
    erase_removes: str
    erase_keeps: str
    erase_again: str
    erase_confirm: str
    erase_button: str
    keep: str
    unconfirmed: str


CONTACT_WORDINGS: dict[Language, ContactWording] = {
    Language.EN: ContactWording(
        intro=(
            "Every person in the book, by name. Promote takes a person on: a collected "
            "record becomes asserted, and you vouch for every address of it. Erase deletes "
            "the person."
        ),
        empty="The book holds nobody.",
        person="Person",
        name="Name",
        unnamed="(no name)",
        addresses="Addresses",
        kind="Kind",
        asserted="asserted",
        collected="collected",
        origin="Origin",
        writers={
            ContactWriter.COLLECTION: "collected from mail",
            ContactWriter.CALLER: "written by an agent",
            ContactWriter.OPERATOR: "written or taken on by you (command, import or console)",
            ContactWriter.PEER: "a local account of this deployment",
        },
        peer_of="the local account {account}",
        recorded="Recorded",
        action="Action",
        promote="Promote",
        promote_label="Promote contact {n}",
        erase="Erase…",
        erase_label="Erase contact {n}…",
        next_page="Next page",
        first_page="First page",
        promoted="The contact is asserted now, and its addresses are vouched for.",
        already_asserted="The contact was already asserted and vouched for; nothing changed.",
        unnamed_refused=(
            "This collected contact holds no name, and an asserted contact needs one, so it "
            "was not promoted; erase it and create the person with a name instead."
        ),
        not_found="No contact is held under that identifier.",
        erased="The contact was erased, with {addresses} address(es).",
        cursor_refused="That page link was not issued here; the first page is shown.",
        erase_heading="Erase a contact",
        erase_removes=(
            "Erasing deletes this person and every address recorded with them ({n}) from the "
            "book. Nothing of them is kept: there is no undo."
        ),
        erase_keeps=(
            "Mail is not touched: messages from and to these addresses stay where they are."
        ),
        erase_again=(
            "If mail from one of these addresses arrives later and its account collects "
            "contacts, the address is collected again, as a new record."
        ),
        erase_confirm="Yes, erase this contact and its addresses",
        erase_button="Erase",
        keep="Keep the contact",
        unconfirmed="Tick the box to confirm; nothing was erased.",
    ),
    Language.CS: ContactWording(
        intro=(
            "Všichni lidé v adresáři podle jména. Převzít znamená přijmout osobu za svou: "
            "sebraný záznam se stane potvrzeným a každou jeho adresu zaručujete vy. "
            "Smazat osobu odstraní."
        ),
        empty="Adresář je prázdný.",
        person="Osoba",
        name="Jméno",
        unnamed="(bez jména)",
        addresses="Adresy",
        kind="Druh",
        asserted="potvrzený",
        collected="sebraný",
        origin="Původ",
        writers={
            ContactWriter.COLLECTION: "sebráno z pošty",
            ContactWriter.CALLER: "zapsal agent",
            ContactWriter.OPERATOR: "zapsali nebo převzali jste vy (příkaz, import nebo konzole)",
            ContactWriter.PEER: "místní účet tohoto nasazení",
        },
        peer_of="místní účet {account}",
        recorded="Zapsáno",
        action="Akce",
        promote="Převzít",
        promote_label="Převzít kontakt {n}",
        erase="Smazat…",
        erase_label="Smazat kontakt {n}…",
        next_page="Další stránka",
        first_page="První stránka",
        promoted="Kontakt je nyní potvrzený a jeho adresy zaručujete vy.",
        already_asserted="Kontakt už byl potvrzený a zaručený; nic se nezměnilo.",
        unnamed_refused=(
            "Tento sebraný kontakt nemá jméno a potvrzený kontakt ho mít musí, takže nebyl "
            "převzat; smažte ho a osobu vytvořte se jménem."
        ),
        not_found="Pod tímto identifikátorem není žádný kontakt.",
        erased="Kontakt byl smazán i s adresami (počet: {addresses}).",
        cursor_refused="Tento odkaz na stránku nevydala tato konzole; zobrazena je první stránka.",
        erase_heading="Smazat kontakt",
        erase_removes=(
            "Smazání odstraní z adresáře tuto osobu a všechny adresy u ní zapsané (počet: "
            "{n}). Nic z nich se neuchová: vrátit to nelze."
        ),
        erase_keeps="Pošty se to nedotkne: zprávy od těchto adres a pro ně zůstanou, kde jsou.",
        erase_again=(
            "Přijde-li později pošta z některé z těchto adres a její účet sbírá kontakty, "
            "adresa se sebere znovu jako nový záznam."
        ),
        erase_confirm="Ano, smazat tento kontakt i jeho adresy",
        erase_button="Smazat",
        keep="Kontakt ponechat",
        unconfirmed="Potvrďte zaškrtnutím; nic nebylo smazáno.",
    ),
    Language.SK: ContactWording(
        intro=(
            "Všetci ľudia v adresári podľa mena. Prevziať znamená prijať osobu za svoju: "
            "zozbieraný záznam sa stane potvrdeným a každú jeho adresu zaručujete vy. "
            "Zmazať osobu odstráni."
        ),
        empty="Adresár je prázdny.",
        person="Osoba",
        name="Meno",
        unnamed="(bez mena)",
        addresses="Adresy",
        kind="Druh",
        asserted="potvrdený",
        collected="zozbieraný",
        origin="Pôvod",
        writers={
            ContactWriter.COLLECTION: "zozbierané z pošty",
            ContactWriter.CALLER: "zapísal agent",
            ContactWriter.OPERATOR: "zapísali alebo prevzali ste vy (príkaz, import alebo konzola)",
            ContactWriter.PEER: "miestny účet tohto nasadenia",
        },
        peer_of="miestny účet {account}",
        recorded="Zapísané",
        action="Akcia",
        promote="Prevziať",
        promote_label="Prevziať kontakt {n}",
        erase="Zmazať…",
        erase_label="Zmazať kontakt {n}…",
        next_page="Ďalšia stránka",
        first_page="Prvá stránka",
        promoted="Kontakt je teraz potvrdený a jeho adresy zaručujete vy.",
        already_asserted="Kontakt už bol potvrdený a zaručený; nič sa nezmenilo.",
        unnamed_refused=(
            "Tento zozbieraný kontakt nemá meno a potvrdený kontakt ho mať musí, takže nebol "
            "prevzatý; zmažte ho a osobu vytvorte s menom."
        ),
        not_found="Pod týmto identifikátorom nie je žiadny kontakt.",
        erased="Kontakt bol zmazaný aj s adresami (počet: {addresses}).",
        cursor_refused="Tento odkaz na stránku nevydala táto konzola; zobrazená je prvá stránka.",
        erase_heading="Zmazať kontakt",
        erase_removes=(
            "Zmazanie odstráni z adresára túto osobu a všetky adresy pri nej zapísané (počet: "
            "{n}). Nič z nich sa neuchová: vrátiť to nemožno."
        ),
        erase_keeps="Pošty sa to nedotkne: správy od týchto adries a pre ne zostanú, kde sú.",
        erase_again=(
            "Ak neskôr príde pošta z niektorej z týchto adries a jej účet zbiera kontakty, "
            "adresa sa zozbiera znova ako nový záznam."
        ),
        erase_confirm="Áno, zmazať tento kontakt aj jeho adresy",
        erase_button="Zmazať",
        keep="Kontakt ponechať",
        unconfirmed="Potvrďte zaškrtnutím; nič nebolo zmazané.",
    ),
}
