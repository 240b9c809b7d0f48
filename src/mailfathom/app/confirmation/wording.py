"""The question's words in each language a caller may ask for: English, Czech, Slovak."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from mailfathom.app.confirmation.ports import Choice
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from mailfathom.domain.sensitive_content import SensitiveCategory


class Language(enum.Enum):
    EN = "en"
    CS = "cs"
    SK = "sk"


@dataclass(frozen=True, slots=True)
class Wording:
    question: str
    # Said below the question when the message holds characters that render as nothing.
    unseen: str
    sender: str
    to: str
    cc: str
    bcc: str
    subject: str
    attachments: str
    leaves_after: str
    body: str
    html: str
    choice_title: str
    choices: dict[Choice, str]
    decimal_point: str
    # Said below the question when the message carries sensitive content: `{found}` is the
    # categories, named in `categories`' words.
    sensitive: str = ""
    categories: dict[SensitiveCategory, str] | None = None


WORDINGS: dict[Language, Wording] = {
    Language.EN: Wording(
        question="Send this email?",
        unseen=(
            "This email holds characters that display as nothing or change how nearby text "
            "displays; each is written out below as \u27e6U+code NAME\u27e7, and the email "
            "is sent with the characters themselves."
        ),
        sender="From",
        to="To",
        cc="Cc",
        bcc="Bcc",
        subject="Subject",
        attachments="Attachments",
        leaves_after="Leaves after",
        body="Text of the email:",
        html="HTML version of the text (as written, not rendered):",
        choice_title="What should happen to this email?",
        choices={Choice.SEND: "Send", Choice.SAVE_DRAFT: "Save draft", Choice.CANCEL: "Cancel"},
        decimal_point=".",
        sensitive=(
            "Sensitive content was found in this email: {found}. Below it is hidden as "
            "[redacted:\u2026]; Send sends it as written."
        ),
        categories={
            SensitiveCategory.PAYMENT_CARD: "a payment card number",
            SensitiveCategory.IBAN: "a bank account number (IBAN)",
            SensitiveCategory.NATIONAL_IDENTIFIER: "a national identification number",
            SensitiveCategory.CREDENTIAL: "a password, key or access token",
            SensitiveCategory.ONE_TIME_CODE: "a one-time code",
        },
    ),
    Language.CS: Wording(
        question="Odeslat tento e-mail?",
        unseen=(
            "Tento e-mail obsahuje znaky, které se nezobrazují nebo mění zobrazení okolního "
            "textu; každý je níže vypsán jako \u27e6U+kód NÁZEV\u27e7 a e-mail se odešle "
            "s těmito znaky."
        ),
        sender="Od",
        to="Komu",
        cc="Kopie",
        bcc="Skrytá kopie",
        subject="Předmět",
        attachments="Přílohy",
        leaves_after="Odejde po",
        body="Text e-mailu:",
        html="HTML verze textu (tak, jak je napsaná, nevykreslená):",
        choice_title="Co se má s tímto e-mailem stát?",
        choices={
            Choice.SEND: "Odeslat",
            Choice.SAVE_DRAFT: "Uložit koncept",
            Choice.CANCEL: "Zrušit",
        },
        decimal_point=",",
        sensitive=(
            "V tomto e-mailu byl nalezen citlivý obsah: {found}. Níže je skrytý jako "
            "[redacted:\u2026]; volba Odeslat jej odešle tak, jak je napsán."
        ),
        categories={
            SensitiveCategory.PAYMENT_CARD: "číslo platební karty",
            SensitiveCategory.IBAN: "číslo bankovního účtu (IBAN)",
            SensitiveCategory.NATIONAL_IDENTIFIER: "rodné číslo nebo jiný státní identifikátor",
            SensitiveCategory.CREDENTIAL: "heslo, klíč nebo přístupový token",
            SensitiveCategory.ONE_TIME_CODE: "jednorázový kód",
        },
    ),
    Language.SK: Wording(
        question="Odoslať tento e-mail?",
        unseen=(
            "Tento e-mail obsahuje znaky, ktoré sa nezobrazujú alebo menia zobrazenie "
            "okolitého textu; každý je nižšie vypísaný ako \u27e6U+kód NÁZOV\u27e7 a e-mail "
            "sa odošle s týmito znakmi."
        ),
        sender="Od",
        to="Komu",
        cc="Kópia",
        bcc="Skrytá kópia",
        subject="Predmet",
        attachments="Prílohy",
        leaves_after="Odíde po",
        body="Text e-mailu:",
        html="HTML verzia textu (tak, ako je napísaná, nevykreslená):",
        choice_title="Čo sa má s týmto e-mailom stať?",
        choices={
            Choice.SEND: "Odoslať",
            Choice.SAVE_DRAFT: "Uložiť koncept",
            Choice.CANCEL: "Zrušiť",
        },
        decimal_point=",",
        sensitive=(
            "V tomto e-maile sa našiel citlivý obsah: {found}. Nižšie je skrytý ako "
            "[redacted:\u2026]; voľba Odoslať ho odošle tak, ako je napísaný."
        ),
        categories={
            SensitiveCategory.PAYMENT_CARD: "číslo platobnej karty",
            SensitiveCategory.IBAN: "číslo bankového účtu (IBAN)",
            SensitiveCategory.NATIONAL_IDENTIFIER: "rodné číslo alebo iný štátny identifikátor",
            SensitiveCategory.CREDENTIAL: "heslo, kľúč alebo prístupový token",
            SensitiveCategory.ONE_TIME_CODE: "jednorazový kód",
        },
    ),
}


def language(value: object) -> Language:
    """The language a caller named; English when it named none."""
    if value is None:
        return Language.EN
    for member in Language:
        if member.value == value:
            return member
    raise Refusal(
        Code.MESSAGE_FIELD_NOT_COMPOSABLE,
        "The language must be one of: " + ", ".join(m.value for m in Language) + ".",
    )


_UNITS = ("KiB", "MiB", "GiB", "TiB")


def size(octets: int, wording: Wording) -> str:
    """A size on the 1024 ladder, with one decimal above a kibibyte."""
    if octets < 1024:
        return f"{octets} B"
    value = octets / 1024
    step = 0
    while value >= 1024 and step < len(_UNITS) - 1:
        value /= 1024
        step += 1
    return f"{value:.1f}".replace(".", wording.decimal_point) + f" {_UNITS[step]}"
