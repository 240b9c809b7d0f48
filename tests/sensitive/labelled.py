"""A labelled set of sensitive values and near misses, in English, Czech and Slovak.

Each sample is one line of mail text and the values in it a scanner must find, each with its
category; a sample with no values is a near miss (a bad checksum, an order number, a phone
number, a date, a word that only looks like a label). The values are test values: published
card-scheme test numbers, the IBAN registry's examples, identifiers built to pass their
checks, tokens made up in the shape their issuers use."""

from __future__ import annotations

from dataclasses import dataclass

from mailfathom.domain.sensitive_content import SensitiveCategory

CARD = SensitiveCategory.PAYMENT_CARD
IBAN = SensitiveCategory.IBAN
NATIONAL = SensitiveCategory.NATIONAL_IDENTIFIER
CREDENTIAL = SensitiveCategory.CREDENTIAL
CODE = SensitiveCategory.ONE_TIME_CODE


@dataclass(frozen=True, slots=True)
class Sample:
    text: str
    values: tuple[tuple[str, SensitiveCategory], ...] = ()
    # For a near miss: the category it resembles (how the table groups it).
    resembles: SensitiveCategory | None = None


def hit(text: str, value: str, category: SensitiveCategory) -> Sample:
    assert value in text
    return Sample(text, ((value, category),))


def miss(text: str, resembles: SensitiveCategory) -> Sample:
    return Sample(text, (), resembles)


_GITHUB = "ghp_" + "R8x2Lq9ZtY4mWv7nB3kJ6hF1dS5aP0cE" + "Xw2u"
_JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbiJ9"
    ".Hq3bW1f0yq5vM0cK3qv2iQx8cGm0b7m8eT6fC2aQk1s"
)
_KEY_BLOCK = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
    "QyNTUxOQAAACBmZXN0a2V5LWZvci10ZXN0cwAAAA==\n-----END OPENSSH PRIVATE KEY-----"
)

VALUES = {
    CARD: "4111 1111 1111 1111",
    IBAN: "CZ65 0800 0000 1920 0014 5399",
    NATIONAL: "850417/0004",
    CREDENTIAL: _GITHUB,
    CODE: "482913",
}

SAMPLES: tuple[Sample, ...] = (
    # -- payment cards ---------------------------------------------------------------------
    hit("Please charge 4111 1111 1111 1111 for the room.", "4111 1111 1111 1111", CARD),
    hit("Card: 5555555555554444, exp 12/29", "5555555555554444", CARD),
    hit("Amex 3782-822463-10005 on file", "3782-822463-10005", CARD),
    hit("Platba kartou 4012 8888 8888 1881 proběhla.", "4012 8888 8888 1881", CARD),
    hit("Číslo karty: 5105105105105100", "5105105105105100", CARD),
    hit("Platobná karta 6011 1111 1111 1117 je zablokovaná.", "6011 1111 1111 1117", CARD),
    hit("JCB 3530 1113 3330 0000 expires soon", "3530 1113 3330 0000", CARD),
    hit("Mastercard 2223 0031 2200 3222 was declined.", "2223 0031 2200 3222", CARD),
    hit("Karta č. 4000-0566-5566-5556 (Visa debit)", "4000-0566-5566-5556", CARD),
    hit("Diners 3056 9309 0259 04 works.", "3056 9309 0259 04", CARD),
    hit("Použite kartu 371449635398431.", "371449635398431", CARD),
    hit("UnionPay 6200000000000005 accepted", "6200000000000005", CARD),
    miss("Please charge 4111 1111 1111 1112 for the room.", CARD),
    miss("Order number 1234567812345670 has shipped.", CARD),
    miss("Objednávka č. 2024000123456 bola odoslaná.", CARD),
    miss("Call us at +420 777 123 456 or +44 20 7946 0958.", CARD),
    miss("Faktura 5555 5555 5555 5555 splatná 31.12.2024.", CARD),
    miss("Sledovací číslo zásilky: 9400 1118 9922 3197 4284 90", CARD),
    miss("Tracking 1Z999AA10123456784 is on its way.", CARD),
    miss("Částka 1 234 567 Kč, variabilní symbol 2024001234.", CARD),
    miss("ISBN 978-80-7363-123-4, EAN 8594001234567", CARD),
    miss("Meeting on 2024-12-31 at 10:30, room 4111.", CARD),
    # -- IBANs -----------------------------------------------------------------------------
    hit("IBAN: CZ65 0800 0000 1920 0014 5399", "CZ65 0800 0000 1920 0014 5399", IBAN),
    hit("Pošlete to na CZ6508000000192000145399 prosím.", "CZ6508000000192000145399", IBAN),
    hit("Účet SK31 1200 0000 1987 4263 7541 je aktívny.", "SK31 1200 0000 1987 4263 7541", IBAN),
    hit("Wire to DE89 3704 0044 0532 0130 00 by Friday.", "DE89 3704 0044 0532 0130 00", IBAN),
    hit("Our account GB82WEST12345698765432.", "GB82WEST12345698765432", IBAN),
    hit("FR14 2004 1010 0505 0001 3M02 606 (Paris)", "FR14 2004 1010 0505 0001 3M02 606", IBAN),
    hit("AT611904300234573201 Wien", "AT611904300234573201", IBAN),
    hit("Konto PL61 1090 1014 0000 0712 1981 2874.", "PL61 1090 1014 0000 0712 1981 2874", IBAN),
    hit("NL91ABNA0417164300 is the new one", "NL91ABNA0417164300", IBAN),
    hit("Bankové spojenie: SK3112000000198742637541", "SK3112000000198742637541", IBAN),
    miss("IBAN: CZ65 0800 0000 1920 0014 5398", IBAN),
    miss("Pošlete to na SK3112000000198742637542 prosím.", IBAN),
    miss("Wire to DE89 3704 0044 0532 0130 01 by Friday.", IBAN),
    miss("Part AB12CDEF3456789012 is out of stock.", IBAN),
    miss("Reference XX12345678901234567 in the subject.", IBAN),
    miss("Číslo účtu 19-2000145399/0800, VS 2024001.", IBAN),
    miss("Model CZ65 0800 only.", IBAN),
    miss("Serial GB82 WEST 1234 5698 7654 33 returned.", IBAN),
    # -- national identifiers --------------------------------------------------------------
    hit("Rodné číslo: 850417/0004", "850417/0004", NATIONAL),
    hit("RČ 921103/0004, trvalý pobyt Brno", "921103/0004", NATIONAL),
    hit("rodné číslo 6357210002 (bez lomítka)", "6357210002", NATIONAL),
    hit("Rodné číslo dieťaťa: 014209/0003", "014209/0003", NATIONAL),
    hit("r. č. 781230/0001", "781230/0001", NATIONAL),
    hit("Birth number 996201/0003 as on the passport.", "996201/0003", NATIONAL),
    hit("SSN 536-90-4399 on the W-2.", "536-90-4399", NATIONAL),
    hit("Social security number: 219-09-9998", "219-09-9998", NATIONAL),
    hit("Steuer-ID: 86095742719", "86095742719", NATIONAL),
    hit("Steueridentifikationsnummer 47 036 892 816", "47 036 892 816", NATIONAL),
    hit("PESEL: 44051401359", "44051401359", NATIONAL),
    hit("Moje rodné číslo je 540101/0000.", "540101/0000", NATIONAL),
    miss("Rodné číslo: 850417/0005", NATIONAL),
    miss("Objednávka 2023111111 byla expedována.", NATIONAL),
    miss("SSN 078-05-1120 is the famous wallet number.", NATIONAL),
    miss("Ticket 666-12-3456 closed.", NATIONAL),
    miss("Steuer-ID: 86095742718", NATIONAL),
    miss("Telefon 777 123 456, fax 543 210 987.", NATIONAL),
    miss("Datum 17.04.1985, č. j. 850417/2024", NATIONAL),
    miss("Invoice 8001011236 is overdue.", NATIONAL),
    miss("PESEL: 44051401358", NATIONAL),
    miss("Call 555-12-3456 after five.", NATIONAL),
    # -- credentials -----------------------------------------------------------------------
    hit(f"token {_GITHUB} for the CI", _GITHUB, CREDENTIAL),
    hit("AWS key AKIAIOSFODNN7EXAMPLE in the script", "AKIAIOSFODNN7EXAMPLE", CREDENTIAL),
    hit(
        "Slack: xoxb-2048-1234567890-aBcDeFgHiJkLmNoPqRsTuVwX",
        "xoxb-2048-1234567890-aBcDeFgHiJkLmNoPqRsTuVwX",
        CREDENTIAL,
    ),
    hit(
        "Stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc rotates Monday",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        CREDENTIAL,
    ),
    hit(
        "Maps key AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY for the site",
        "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        CREDENTIAL,
    ),
    hit(f"Bearer {_JWT}", _JWT, CREDENTIAL),
    hit(f"The key is below.\n{_KEY_BLOCK}\nKeep it safe.", _KEY_BLOCK, CREDENTIAL),
    hit("Password: Tr0ub4dor&3", "Tr0ub4dor&3", CREDENTIAL),
    hit("Vaše heslo: Jahoda2024!", "Jahoda2024!", CREDENTIAL),
    hit("Nové heslo: kocka123 (zmeňte ho)", "kocka123", CREDENTIAL),
    hit("login: admin, pwd=s3cr3t-Ops", "s3cr3t-Ops", CREDENTIAL),
    hit("Passwort: Sommer2023", "Sommer2023", CREDENTIAL),
    miss("Forgot your password? Reset it from the sign-in page.", CREDENTIAL),
    miss("Heslo nikomu nesdělujte, ani nám.", CREDENTIAL),
    miss("The ghp_ prefix marks a GitHub token.", CREDENTIAL),
    miss("Lower case akiaiosfodnn7example is no key.", CREDENTIAL),
    miss("eyJhbGciOi.garbage is not a token", CREDENTIAL),
    miss(
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n"
        "-----END PUBLIC KEY-----",
        CREDENTIAL,
    ),
    miss("Zmena hesla prebehla úspešne.", CREDENTIAL),
    miss("sk_live_ is the prefix of live keys", CREDENTIAL),
    # -- one-time codes --------------------------------------------------------------------
    hit("Your verification code is 482913.", "482913", CODE),
    hit("Use code 739201 to sign in.", "739201", CODE),
    hit("OTP: 5521", "5521", CODE),
    hit("Váš ověřovací kód je 384756.", "384756", CODE),
    hit("Overovací kód: 918273", "918273", CODE),
    hit("123 456 is your verification code", "123 456", CODE),
    hit("PIN: 4821", "4821", CODE),
    hit("Jednorázový kód pro přihlášení: 552190", "552190", CODE),
    hit("Váš jednorazový kód: 104857", "104857", CODE),
    hit("Security code 90-17-33? No: 901733 is the code.", "901733", CODE),
    hit("Kód: 66412234", "66412234", CODE),
    hit("Your one-time passcode: 33910277", "33910277", CODE),
    miss("Order 482913 has shipped.", CODE),
    miss("Code review at 10:30 in room 4821.", CODE),
    miss("Kód 2024 pro rok 2024 platí.", CODE),
    miss("Objednávka 918273 je na cestě.", CODE),
    miss("Meeting ID 845 2291 0034, passcode on the invite.", CODE),
    miss("Zaplaťte 1 250 Kč do 15. 3.", CODE),
    miss("See section 4.2.1 of the code of conduct.", CODE),
    miss("Volajte 0800 123 456.", CODE),
)
