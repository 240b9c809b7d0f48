"""IBANs: a country code, two check digits and the account, together or in groups of four,
confirmed by `stdnum.iban` (the country's length and format, and the ISO 7064 mod 97 check).
A candidate may run on into the next word: the longest prefix that validates is the finding."""

from __future__ import annotations

import re
from collections.abc import Iterator

from stdnum import iban

from mailfathom.domain.sensitive_content import Finding, SensitiveCategory

_CANDIDATE = re.compile(r"(?<![\w])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?!\w)")
_SHORTEST = 15


def find(text: str) -> Iterator[Finding]:
    for match in _CANDIDATE.finditer(text):
        written = match.group()
        # Ends to try, longest first: each position after an alphanumeric character.
        for end in range(len(written), _SHORTEST - 1, -1):
            if written[end - 1] == " " or (end < len(written) and written[end] != " "):
                continue
            if iban.is_valid(written[:end]):
                yield Finding(match.start(), match.start() + end, SensitiveCategory.IBAN)
                break
