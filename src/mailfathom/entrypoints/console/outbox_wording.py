"""The words of the console's outbox and mailbox-changes pages, in the languages of
`wording.py`."""

from __future__ import annotations

from dataclasses import dataclass

from mailfathom.app.confirmation.wording import Language


@dataclass(frozen=True, slots=True)
class OutboxWording:
    nothing_sent: str
    send: str
    account: str
    kind: str
    state: str
    recipients: str
    attempts: str
    queued_at: str
    send_after: str
    failure: str
    action: str
    outcome_unknown: str
    cancel: str
    # `{n}`: the send's position in the list, so each button names its own send.
    cancel_label: str
    cancelled_now: str
    already_ended: str
    in_transmission: str
    not_found: str
    no_changes: str
    change: str
    folder: str
    value: str
    reason: str
    retry: str
    # `{n}`: the record's position in the list.
    retry_label: str
    retried_now: str
    not_dead_lettered: str
    # A folder creation whose name a served folder or another request carries now.
    alias_claimed: str
    no_change: str
    folder_gone: str
    # `{n}`: how many keywords a keyword change names.
    keywords: str
    # `{folder}`: where a move takes the message.
    move_to: str
    # `{folder}`: the folder a new one is created under.
    under: str
    # A new folder with no parent.
    top_level: str
    converging: str
    on: str
    off: str


WORDINGS: dict[Language, OutboxWording] = {
    Language.EN: OutboxWording(
        nothing_sent="Nothing was queued to be sent.",
        send="Send",
        account="Account",
        kind="Kind",
        state="State",
        recipients="Recipients",
        attempts="Attempts",
        queued_at="Queued at",
        send_after="Held until",
        failure="Failure code",
        action="Action",
        outcome_unknown="Outcome unknown",
        cancel="Cancel",
        cancel_label="Cancel send {n}",
        cancelled_now="The send was cancelled; it will not be sent.",
        already_ended="The send had already ended; nothing changed.",
        in_transmission="The send is being handed over right now; nothing was withdrawn.",
        not_found="No send is held under that identifier.",
        no_changes="No mailbox change is pending or dead-lettered.",
        change="Change",
        folder="Folder",
        value="Value",
        reason="Reason",
        retry="Retry",
        retry_label="Retry change {n}",
        retried_now="The change is pending again; the account's next pass issues it.",
        not_dead_lettered="The change is not dead-lettered; nothing changed.",
        alias_claimed=(
            "The folder's name is now taken by another folder or folder request, so the "
            "change stays dead-lettered; ask for the folder again under another name."
        ),
        no_change="No mailbox change is held under that identifier.",
        folder_gone="(folder no longer held)",
        keywords="{n} keyword(s)",
        move_to="to {folder}",
        under="under {folder}",
        top_level="(top level)",
        converging="Being issued",
        on="on",
        off="off",
    ),
    Language.CS: OutboxWording(
        nothing_sent="Nic nečeká na odeslání.",
        send="Zpráva",
        account="Účet",
        kind="Druh",
        state="Stav",
        recipients="Příjemci",
        attempts="Pokusy",
        queued_at="Zařazeno",
        send_after="Odloženo do",
        failure="Kód chyby",
        action="Akce",
        outcome_unknown="Výsledek neznámý",
        cancel="Zrušit",
        cancel_label="Zrušit zprávu {n}",
        cancelled_now="Odeslání bylo zrušeno; zpráva nebude odeslána.",
        already_ended="Odeslání už skončilo; nic se nezměnilo.",
        in_transmission="Zpráva se právě předává; nic nebylo zrušeno.",
        not_found="Pod tímto identifikátorem není žádná zpráva.",
        no_changes="Žádná změna schránky nečeká ani neuvázla.",
        change="Změna",
        folder="Složka",
        value="Hodnota",
        reason="Důvod",
        retry="Zkusit znovu",
        retry_label="Zkusit znovu změnu {n}",
        retried_now="Změna znovu čeká; provede ji příští průchod účtu.",
        not_dead_lettered="Změna není neproveditelná; nic se nezměnilo.",
        alias_claimed=(
            "Název složky teď nese jiná složka nebo jiný požadavek na složku, proto změna "
            "zůstává neproveditelná; požádejte o složku znovu pod jiným názvem."
        ),
        no_change="Pod tímto identifikátorem není žádná změna schránky.",
        folder_gone="(složka už není k dispozici)",
        keywords="klíčová slova: {n}",
        move_to="do {folder}",
        under="pod {folder}",
        top_level="(nejvyšší úroveň)",
        converging="Provádí se",
        on="zapnout",
        off="vypnout",
    ),
    Language.SK: OutboxWording(
        nothing_sent="Nič nečaká na odoslanie.",
        send="Správa",
        account="Účet",
        kind="Druh",
        state="Stav",
        recipients="Príjemcovia",
        attempts="Pokusy",
        queued_at="Zaradené",
        send_after="Odložené do",
        failure="Kód chyby",
        action="Akcia",
        outcome_unknown="Výsledok neznámy",
        cancel="Zrušiť",
        cancel_label="Zrušiť správu {n}",
        cancelled_now="Odoslanie bolo zrušené; správa nebude odoslaná.",
        already_ended="Odoslanie už skončilo; nič sa nezmenilo.",
        in_transmission="Správa sa práve odovzdáva; nič nebolo zrušené.",
        not_found="Pod týmto identifikátorom nie je žiadna správa.",
        no_changes="Žiadna zmena schránky nečaká ani neuviazla.",
        change="Zmena",
        folder="Priečinok",
        value="Hodnota",
        reason="Dôvod",
        retry="Skúsiť znova",
        retry_label="Skúsiť znova zmenu {n}",
        retried_now="Zmena znova čaká; vykoná ju ďalší prechod účtu.",
        not_dead_lettered="Zmena nie je nevykonateľná; nič sa nezmenilo.",
        alias_claimed=(
            "Názov priečinka teraz nesie iný priečinok alebo iná požiadavka na priečinok, "
            "preto zmena zostáva nevykonateľná; požiadajte o priečinok znova pod iným názvom."
        ),
        no_change="Pod týmto identifikátorom nie je žiadna zmena schránky.",
        folder_gone="(priečinok už nie je k dispozícii)",
        keywords="kľúčové slová: {n}",
        move_to="do {folder}",
        under="pod {folder}",
        top_level="(najvyššia úroveň)",
        converging="Vykonáva sa",
        on="zapnúť",
        off="vypnúť",
    ),
}
