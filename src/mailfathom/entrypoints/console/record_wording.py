"""The console's words for what a send or a mailbox change is and why it failed, in the
languages of `wording.py`.

The English failure sentences are the ones `mfctl` prints (`app.*.explanations`), so the
console and the command line never drift apart; Czech and Slovak say the same, fixed
sentences with nothing of the message, the change or a server's reply."""

from __future__ import annotations

from dataclasses import dataclass

from mailfathom.app.confirmation.wording import Language
from mailfathom.app.flags import explanations as change_explanations
from mailfathom.app.sending import explanations as send_explanations
from mailfathom.domain.codes import DeliveryCode
from mailfathom.domain.mutations import MutationFailure, MutationKind
from mailfathom.domain.outgoing import AddressField, OutgoingKind

_D = DeliveryCode
_M = MutationFailure


@dataclass(frozen=True, slots=True)
class RecordWording:
    send_kinds: dict[OutgoingKind, str]
    change_kinds: dict[MutationKind, str]
    address_fields: dict[AddressField, str]
    send_failures: dict[DeliveryCode, str]
    change_failures: dict[MutationFailure, str]
    # What a folder creation is called beside the kinds of `change_kinds`.
    folder_creation: str
    # A folder creation's own sentences for the codes whose message sentence would not fit;
    # the other codes a creation ends with (8, 9) speak of creating a folder already.
    creation_failures: dict[MutationFailure, str]
    # A code this version has no sentence for (a newer version wrote the record).
    undescribed: str

    def send_failure(self, code: int) -> str:
        try:
            return self.send_failures[DeliveryCode(code)]
        except ValueError:
            return self.undescribed

    def change_failure(self, code: int) -> str:
        try:
            return self.change_failures[MutationFailure(code)]
        except ValueError:
            return self.undescribed

    def creation_failure(self, code: int) -> str:
        """The sentence for a folder creation record's code, as `explain(code,
        creation=True)` says it."""
        try:
            failure = MutationFailure(code)
        except ValueError:
            return self.undescribed
        return self.creation_failures.get(failure, self.change_failures[failure])


WORDINGS: dict[Language, RecordWording] = {
    Language.EN: RecordWording(
        send_kinds={
            OutgoingKind.NEW: "new",
            OutgoingKind.REPLY: "reply",
            OutgoingKind.FORWARD: "forward",
        },
        change_kinds={
            MutationKind.SET_SEEN: "seen",
            MutationKind.SET_FLAGGED: "flagged",
            MutationKind.ADD_KEYWORDS: "add keywords",
            MutationKind.REMOVE_KEYWORDS: "remove keywords",
            MutationKind.SET_KEYWORDS: "set keywords",
            MutationKind.MOVE: "move",
        },
        address_fields={AddressField.TO: "to", AddressField.CC: "cc", AddressField.BCC: "bcc"},
        send_failures=send_explanations.FAILURE_EXPLANATIONS,
        change_failures=change_explanations.FAILURE_EXPLANATIONS,
        folder_creation="create folder",
        creation_failures=change_explanations.CREATION_EXPLANATIONS,
        undescribed=send_explanations.UNDESCRIBED,
    ),
    Language.CS: RecordWording(
        send_kinds={
            OutgoingKind.NEW: "nová",
            OutgoingKind.REPLY: "odpověď",
            OutgoingKind.FORWARD: "přeposlání",
        },
        change_kinds={
            MutationKind.SET_SEEN: "přečteno",
            MutationKind.SET_FLAGGED: "s příznakem",
            MutationKind.ADD_KEYWORDS: "přidat klíčová slova",
            MutationKind.REMOVE_KEYWORDS: "odebrat klíčová slova",
            MutationKind.SET_KEYWORDS: "nastavit klíčová slova",
            MutationKind.MOVE: "přesun",
        },
        address_fields={
            AddressField.TO: "komu",
            AddressField.CC: "kopie",
            AddressField.BCC: "skrytá kopie",
        },
        send_failures={
            _D.REFUSED_BY_SERVER: (
                "Odesílací server zprávu nebo všechny příjemce natrvalo odmítl."
            ),
            _D.ATTEMPTS_SPENT: (
                "Všechny nastavené pokusy selhaly z dočasného důvodu (žádné spojení, nebo "
                "server požádal o pozdější pokus), proto se od odeslání upustilo."
            ),
            _D.OUTCOME_UNKNOWN: (
                "Spojení skončilo po předání zprávy a před odpovědí serveru; zpráva mohla "
                "být přijata, proto se znovu nenabízí."
            ),
            _D.NO_ROUTE: (
                "Příjemce je mimo toto nasazení a účet neuvádí žádný odesílací server, který "
                "by tam poštu doručil."
            ),
            _D.NOT_AUTHENTICATED: (
                "Odesílací server nepřijal uživatelské jméno a tajný údaj účtu."
            ),
            _D.TEMPORARY_FAILURE: (
                "Poslední pokus selhal z dočasného důvodu; odeslání čeká na další pokus."
            ),
            _D.PEER_DELIVERY_FAILED: (
                "Schránka tohoto nasazení, které byla zpráva adresována, ji nemohla přijmout."
            ),
            _D.SECRET_UNREADABLE: (
                "Tajný údaj pro odesílací server účtu nešel přečíst (nenastavená proměnná "
                "nebo chybějící soubor); nic nebylo nabídnuto a nebude, dokud nepůjde přečíst."
            ),
            _D.WAITING_FOR_CONSENT: (
                "Účet se přihlašuje přes OAuth a jeho poskytovatel oprávnění odmítl; odeslání "
                "čeká ve frontě, dokud člověk znovu neudělí přístup (mfctl account consent)."
            ),
        },
        change_failures={
            _M.MESSAGE_GONE: (
                "Zpráva už na poštovním serveru nebyla ve své složce (smazaná, přesunutá, "
                "nebo byla složka přečíslována), takže nebylo co změnit."
            ),
            _M.KEYWORD_NOT_PERMANENT: (
                "Složka toto klíčové slovo natrvalo neuchovává (místní Maildir neuchovává "
                "žádné), takže změnu nešlo uložit."
            ),
            _M.CHANGED_ON_SERVER: (
                "Zpráva se na poštovním serveru změnila poté, co byla změna vyžádána, a "
                "předtím, než byla provedena; změna na serveru zůstala a místní kopie ji "
                "načte."
            ),
            _M.ATTEMPTS_SPENT: (
                "Všechny pokusy o provedení změny selhaly (žádné spojení, nebo server příkaz "
                "odmítl), proto se od ní upustilo."
            ),
            _M.FOLDER_GONE: (
                "Složka, ve které zpráva byla, nebo ta, do které se měla přesunout, už na "
                "poštovním serveru není nebo už není namapovaná."
            ),
            _M.MOVE_NOT_OFFERED: (
                "Poštovní server nenabízí MOVE ani UIDPLUS, takže zprávu by šlo přesunout jen "
                "vymazáním všeho, co je v její složce označeno ke smazání; nic se neudělalo."
            ),
            _M.MOVE_NOT_CONFIRMED: (
                "Kopii nešlo v cílové složce najít (server neuvedl nové UID a zpráva nemá "
                "Message-ID, podle kterého by ji šlo najít), takže originál zůstal na místě."
            ),
            _M.FOLDER_EXISTS: (
                "Složka toho jména i složky jeho číslovaných jmen (jméno 2 až jméno 10) už na "
                "poštovním serveru byly; žádná nebyla převzata, protože je nasazení nemusí "
                "obsluhovat. Správce může jednu namapovat v konfiguraci, nebo jméno uvolnit."
            ),
            _M.FOLDER_NAME_REFUSED: (
                "Poštovní server odmítl složku vytvořit, nebo název obsahuje znak, kterým "
                "server odděluje úrovně složek."
            ),
        },
        folder_creation="vytvořit složku",
        creation_failures={
            _M.ATTEMPTS_SPENT: (
                "Všechny pokusy o vytvoření složky selhaly (žádné spojení, nebo server příkaz "
                "nedokončil), proto se od něj upustilo."
            ),
            _M.FOLDER_GONE: (
                "Složka, pod kterou se měla nová vytvořit, už na poštovním serveru není nebo "
                "už není namapovaná."
            ),
        },
        undescribed="Selhání, které tato verze nepopisuje.",
    ),
    Language.SK: RecordWording(
        send_kinds={
            OutgoingKind.NEW: "nová",
            OutgoingKind.REPLY: "odpoveď",
            OutgoingKind.FORWARD: "preposlanie",
        },
        change_kinds={
            MutationKind.SET_SEEN: "prečítané",
            MutationKind.SET_FLAGGED: "s príznakom",
            MutationKind.ADD_KEYWORDS: "pridať kľúčové slová",
            MutationKind.REMOVE_KEYWORDS: "odobrať kľúčové slová",
            MutationKind.SET_KEYWORDS: "nastaviť kľúčové slová",
            MutationKind.MOVE: "presun",
        },
        address_fields={
            AddressField.TO: "komu",
            AddressField.CC: "kópia",
            AddressField.BCC: "skrytá kópia",
        },
        send_failures={
            _D.REFUSED_BY_SERVER: (
                "Odosielací server správu alebo všetkých príjemcov natrvalo odmietol."
            ),
            _D.ATTEMPTS_SPENT: (
                "Všetky nastavené pokusy zlyhali z dočasného dôvodu (žiadne spojenie, alebo "
                "server požiadal o neskorší pokus), preto sa od odoslania upustilo."
            ),
            _D.OUTCOME_UNKNOWN: (
                "Spojenie skončilo po odovzdaní správy a pred odpoveďou servera; správa mohla "
                "byť prijatá, preto sa znova neponúka."
            ),
            _D.NO_ROUTE: (
                "Príjemca je mimo tohto nasadenia a účet neuvádza žiadny odosielací server, "
                "ktorý by tam poštu doručil."
            ),
            _D.NOT_AUTHENTICATED: (
                "Odosielací server neprijal používateľské meno a tajný údaj účtu."
            ),
            _D.TEMPORARY_FAILURE: (
                "Posledný pokus zlyhal z dočasného dôvodu; odoslanie čaká na ďalší pokus."
            ),
            _D.PEER_DELIVERY_FAILED: (
                "Schránka tohto nasadenia, ktorej bola správa adresovaná, ju nemohla prijať."
            ),
            _D.SECRET_UNREADABLE: (
                "Tajný údaj pre odosielací server účtu sa nedal prečítať (nenastavená "
                "premenná alebo chýbajúci súbor); nič nebolo ponúknuté a nebude, kým sa "
                "nebude dať prečítať."
            ),
            _D.WAITING_FOR_CONSENT: (
                "Účet sa prihlasuje cez OAuth a jeho poskytovateľ oprávnenie odmietol; "
                "odoslanie čaká v rade, kým človek znova neudelí prístup (mfctl account "
                "consent)."
            ),
        },
        change_failures={
            _M.MESSAGE_GONE: (
                "Správa už na poštovom serveri nebola vo svojom priečinku (zmazaná, "
                "presunutá, alebo bol priečinok prečíslovaný), takže nebolo čo zmeniť."
            ),
            _M.KEYWORD_NOT_PERMANENT: (
                "Priečinok toto kľúčové slovo natrvalo neuchováva (miestny Maildir neuchováva "
                "žiadne), takže zmenu nebolo možné uložiť."
            ),
            _M.CHANGED_ON_SERVER: (
                "Správa sa na poštovom serveri zmenila potom, čo bola zmena vyžiadaná, a "
                "predtým, než bola vykonaná; zmena na serveri zostala a miestna kópia ju "
                "načíta."
            ),
            _M.ATTEMPTS_SPENT: (
                "Všetky pokusy o vykonanie zmeny zlyhali (žiadne spojenie, alebo server "
                "príkaz odmietol), preto sa od nej upustilo."
            ),
            _M.FOLDER_GONE: (
                "Priečinok, v ktorom správa bola, alebo ten, do ktorého sa mala presunúť, už "
                "na poštovom serveri nie je alebo už nie je namapovaný."
            ),
            _M.MOVE_NOT_OFFERED: (
                "Poštový server neponúka MOVE ani UIDPLUS, takže správu by bolo možné "
                "presunúť len vymazaním všetkého, čo je v jej priečinku označené na "
                "zmazanie; nič sa neurobilo."
            ),
            _M.MOVE_NOT_CONFIRMED: (
                "Kópiu sa nepodarilo v cieľovom priečinku nájsť (server neuviedol nové UID a "
                "správa nemá Message-ID, podľa ktorého by ju bolo možné nájsť), takže "
                "originál zostal na mieste."
            ),
            _M.FOLDER_EXISTS: (
                "Priečinok toho mena aj priečinky jeho číslovaných mien (meno 2 až meno 10) už "
                "na poštovom serveri boli; žiadny nebol prevzatý, pretože ich nasadenie nemusí "
                "obsluhovať. Správca môže jeden namapovať v konfigurácii, alebo meno uvoľniť."
            ),
            _M.FOLDER_NAME_REFUSED: (
                "Poštový server odmietol priečinok vytvoriť, alebo názov obsahuje znak, ktorým "
                "server oddeľuje úrovne priečinkov."
            ),
        },
        folder_creation="vytvoriť priečinok",
        creation_failures={
            _M.ATTEMPTS_SPENT: (
                "Všetky pokusy o vytvorenie priečinka zlyhali (žiadne spojenie, alebo server "
                "príkaz nedokončil), preto sa od neho upustilo."
            ),
            _M.FOLDER_GONE: (
                "Priečinok, pod ktorým sa mal nový vytvoriť, už na poštovom serveri nie je "
                "alebo už nie je namapovaný."
            ),
        },
        undescribed="Zlyhanie, ktoré táto verzia neopisuje.",
    ),
}
