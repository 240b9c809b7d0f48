"""Payment card numbers: 13 to 19 digits, written together or in groups parted by one kind of
separator, starting with a prefix a card scheme issues, and passing the Luhn check
(`stdnum.luhn`). The prefix table keeps the one number in ten that passes Luhn by chance (an
order or a tracking number) from being taken for a card."""

from __future__ import annotations

import re
from collections.abc import Iterator

from stdnum import luhn

from mailfathom.domain.sensitive_content import Finding, SensitiveCategory

_CANDIDATE = re.compile(r"(?<![\w.,/+-])\d(?:[ -]?\d){12,18}(?![\w/]|[.,-]\d)")
# Issuer prefixes (first digits) of the schemes in common use, with the lengths each issues.
_SCHEMES: tuple[tuple[tuple[str, ...], frozenset[int]], ...] = (
    (("4",), frozenset({13, 16, 19})),  # Visa
    (tuple(str(p) for p in range(51, 56)), frozenset({16})),  # Mastercard
    (tuple(str(p) for p in range(2221, 2721)), frozenset({16})),  # Mastercard 2-series
    (("34", "37"), frozenset({15})),  # American Express
    (("6011", "65", *(str(p) for p in range(644, 650))), frozenset({16, 19})),  # Discover
    (("36", "38", "39", *(str(p) for p in range(300, 306))), frozenset({14, 16})),  # Diners
    (tuple(str(p) for p in range(3528, 3590)), frozenset({16, 19})),  # JCB
    (("62",), frozenset({16, 17, 18, 19})),  # UnionPay
    (("50", *(str(p) for p in range(56, 70))), frozenset(range(12, 20))),  # Maestro
)


def _issued(digits: str) -> bool:
    return any(
        len(digits) in lengths and digits.startswith(prefixes) for prefixes, lengths in _SCHEMES
    )


def find(text: str) -> Iterator[Finding]:
    for match in _CANDIDATE.finditer(text):
        written = match.group()
        separators = {c for c in written if not c.isdigit()}
        if len(separators) > 1:
            continue
        digits = written.replace(" ", "").replace("-", "")
        if _issued(digits) and luhn.is_valid(digits):
            yield Finding(match.start(), match.end(), SensitiveCategory.PAYMENT_CARD)
