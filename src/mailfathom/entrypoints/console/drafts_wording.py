"""The words of the console's "Waiting for you" page in English, Czech and Slovak."""

from __future__ import annotations

from dataclasses import dataclass

from mailfathom.app.confirmation.wording import Language


@dataclass(frozen=True, slots=True)
class DraftsWording:
    none_waiting: str
    intro: str
    unseen_note: str
    # The edit form keeps such characters as they are: written out, they would be saved so.
    edit_unseen_note: str
    sender: str
    to: str
    cc: str
    bcc: str
    subject: str
    attachments: str
    body: str
    html: str
    octets: str
    send: str
    edit: str
    delete: str
    save: str
    back: str
    # `{account}`: the account's name.
    kept_because: str
    reason_unavailable: str
    reason_sensitive: str
    sent_notice: str
    deleted_notice: str
    saved_notice: str
    changed_notice: str
    gone_notice: str
    # `{code}`: the refusal's five-digit code.
    refused_notice: str
    addresses_hint: str
    edit_heading: str
    files_not_editable: str


DRAFTS_WORDINGS: dict[Language, DraftsWording] = {
    Language.EN: DraftsWording(
        none_waiting="No draft is waiting for you.",
        intro=(
            "Each message below was kept for you instead of being sent. It is shown exactly "
            "as it will be sent, as plain text."
        ),
        unseen_note=(
            "This message holds characters that show as nothing; each is written out as ⟦U+…⟧."
        ),
        edit_unseen_note=(
            "This message holds characters that show as nothing. The fields below keep them "
            "as they are; the drafts page writes each out as ⟦U+…⟧."
        ),
        sender="From",
        to="To",
        cc="Cc",
        bcc="Bcc",
        subject="Subject",
        attachments="Attachments",
        body="Text",
        html="HTML part, shown as its source text",
        octets="bytes",
        send="Send",
        edit="Edit",
        delete="Delete",
        save="Save draft",
        back="Back to the drafts waiting",
        kept_because="Account {account}. Kept because:",
        reason_unavailable="nobody could be asked whether to send it",
        reason_sensitive="it carries sensitive content",
        sent_notice="The message was queued for sending.",
        deleted_notice="The draft was deleted.",
        saved_notice="The draft was saved.",
        changed_notice=(
            "The draft changed after it was shown to you, so nothing was done. Its new "
            "version is shown below."
        ),
        gone_notice="That draft is no longer waiting (sent or deleted elsewhere).",
        refused_notice="Refused ({code}): {reason} Nothing was sent.",
        addresses_hint="Addresses separated by commas.",
        edit_heading="Edit the draft",
        files_not_editable="This draft carries files, so it cannot be edited here.",
    ),
    Language.CS: DraftsWording(
        none_waiting="Žádný koncept na vás nečeká.",
        intro=(
            "Každá zpráva níže byla místo odeslání uschována pro vás. Je zobrazena přesně "
            "tak, jak bude odeslána, jako prostý text."
        ),
        unseen_note="Zpráva obsahuje neviditelné znaky; každý je vypsán jako ⟦U+…⟧.",
        edit_unseen_note=(
            "Zpráva obsahuje neviditelné znaky. Pole níže je ponechávají tak, jak jsou; "
            "stránka konceptů každý vypíše jako ⟦U+…⟧."
        ),
        sender="Od",
        to="Komu",
        cc="Kopie",
        bcc="Skrytá kopie",
        subject="Předmět",
        attachments="Přílohy",
        body="Text",
        html="Část HTML, zobrazená jako zdrojový text",
        octets="bajtů",
        send="Odeslat",
        edit="Upravit",
        delete="Smazat",
        save="Uložit koncept",
        back="Zpět na čekající koncepty",
        kept_because="Účet {account}. Uschováno, protože:",
        reason_unavailable="nebylo možné se nikoho zeptat, zda ji odeslat",
        reason_sensitive="obsahuje citlivé údaje",
        sent_notice="Zpráva byla zařazena k odeslání.",
        deleted_notice="Koncept byl smazán.",
        saved_notice="Koncept byl uložen.",
        changed_notice=(
            "Koncept se změnil poté, co vám byl zobrazen, proto se nic nestalo. Jeho nová "
            "verze je zobrazena níže."
        ),
        gone_notice="Tento koncept už nečeká (byl odeslán nebo smazán jinde).",
        refused_notice="Odmítnuto ({code}): {reason} Nic nebylo odesláno.",
        addresses_hint="Adresy oddělené čárkami.",
        edit_heading="Úprava konceptu",
        files_not_editable="Koncept nese soubory, proto jej zde nelze upravit.",
    ),
    Language.SK: DraftsWording(
        none_waiting="Žiadny koncept na vás nečaká.",
        intro=(
            "Každá správa nižšie bola namiesto odoslania odložená pre vás. Je zobrazená "
            "presne tak, ako bude odoslaná, ako obyčajný text."
        ),
        unseen_note="Správa obsahuje neviditeľné znaky; každý je vypísaný ako ⟦U+…⟧.",
        edit_unseen_note=(
            "Správa obsahuje neviditeľné znaky. Polia nižšie ich ponechávajú tak, ako sú; "
            "stránka konceptov každý vypíše ako ⟦U+…⟧."
        ),
        sender="Od",
        to="Komu",
        cc="Kópia",
        bcc="Skrytá kópia",
        subject="Predmet",
        attachments="Prílohy",
        body="Text",
        html="Časť HTML, zobrazená ako zdrojový text",
        octets="bajtov",
        send="Odoslať",
        edit="Upraviť",
        delete="Zmazať",
        save="Uložiť koncept",
        back="Späť na čakajúce koncepty",
        kept_because="Účet {account}. Odložené, pretože:",
        reason_unavailable="nebolo možné sa nikoho opýtať, či ju odoslať",
        reason_sensitive="obsahuje citlivé údaje",
        sent_notice="Správa bola zaradená na odoslanie.",
        deleted_notice="Koncept bol zmazaný.",
        saved_notice="Koncept bol uložený.",
        changed_notice=(
            "Koncept sa zmenil po tom, čo vám bol zobrazený, preto sa nič nestalo. Jeho nová "
            "verzia je zobrazená nižšie."
        ),
        gone_notice="Tento koncept už nečaká (bol odoslaný alebo zmazaný inde).",
        refused_notice="Odmietnuté ({code}): {reason} Nič nebolo odoslané.",
        addresses_hint="Adresy oddelené čiarkami.",
        edit_heading="Úprava konceptu",
        files_not_editable="Koncept nesie súbory, preto ho tu nemožno upraviť.",
    ),
}
