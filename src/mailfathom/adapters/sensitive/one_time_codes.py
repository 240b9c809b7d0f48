"""One-time codes: four to eight digits (or two groups of three) standing near a word that
names a code of that kind, in English, Czech or Slovak ("verification code", "OTP",
"ověřovací kód", "overovací kód", "PIN"), before or after it. A number with no such word near it
(an order number, a date, an amount) is no finding, nor is a year beside the word "code"."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

from mailfathom.domain.sensitive_content import Finding, SensitiveCategory

_WORDS = re.compile(
    r"(?<!\w)(?:"
    r"codes?|passcode|otp|2fa|mfa|pin|one[- ]time|verification|security\s+code|"
    r"kód|kódu|kódem|kódy|kod|ověřovací|overovací|overovaci|jednorázov\w*|jednorazov\w*|"
    r"potvrzovací|potvrdzovací|autorizační|autorizačný|přihlašovací|prihlasovací"
    r")(?!\w)",
    re.IGNORECASE,
)
# A word naming a code that is no secret ("zip code 10001", "kód objednávky"): not counted.
_PLAIN_CODES = re.compile(
    r"(?:zip|postal|post|area|country|dialling|dialing|product|order|tracking|discount|promo|"
    r"voucher|error|status)\s+codes?$|^(?:kód|kod)\s+(?:objednávky|zásielky|zásilky|chyby)",
    re.IGNORECASE,
)
_CODE = re.compile(r"(?<![\w.,:/+-])(?<!\d[ -])(?:\d{4,8}|\d{3}[ -]\d{3})(?![\w]|[ .,:/-]\d)")
_YEAR = re.compile(r"(?:19|20)\d\d")
_BEFORE = 64
_AFTER = 48


def find(text: str) -> Iterator[Finding]:
    words = [
        (m.start(), m.end())
        for m in _WORDS.finditer(text)
        if not _PLAIN_CODES.search(text[max(0, m.start() - 16) : m.end()])
        and not _PLAIN_CODES.search(text[m.start() : m.end() + 16])
    ]
    if not words:
        return
    starts = [start for start, _ in words]
    for code in _CODE.finditer(text):
        if _YEAR.fullmatch(code.group()):
            continue
        # The nearest word ending before the code, and the nearest starting after it.
        index = bisect.bisect_left(starts, code.start())
        before = words[index - 1][1] if index > 0 else None
        after = starts[index] if index < len(starts) else None
        near_before = before is not None and 0 <= code.start() - before <= _BEFORE
        near_after = after is not None and 0 <= after - code.end() <= _AFTER
        if near_before or near_after:
            yield Finding(code.start(), code.end(), SensitiveCategory.ONE_TIME_CODE)
