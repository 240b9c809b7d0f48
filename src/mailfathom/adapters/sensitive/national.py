"""National identifiers, each confirmed by its python-stdnum validator:

- Czech and Slovak birth numbers (rodné číslo, `stdnum.cz.rc`, which `stdnum.sk.rc` is):
  YYMMDD/SSSC with its slash; without it (ten bare digits, as many order and invoice numbers
  are, and one in about thirty of those passes the check) only where a word naming a birth
  number stands just before;
- US Social Security numbers (`stdnum.us.ssn`), written with their dashes;
- German tax identification numbers (`stdnum.de.idnr`) and Polish PESEL (`stdnum.pl.pesel`),
  eleven digits with a weak check, so only where a word naming them stands just before.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from stdnum.cz import rc
from stdnum.de import idnr
from stdnum.pl import pesel
from stdnum.us import ssn

from mailfathom.domain.sensitive_content import Finding, SensitiveCategory

_BIRTH_NUMBER = re.compile(r"(?<![\w/.-])\d{6}/\d{3,4}(?![\w/]|[.,-]\d)")
_BARE_BIRTH_NUMBER = re.compile(r"(?<![\w/.-])\d{10}(?![\w/]|[.,-]\d)")
_BIRTH_NUMBER_WORDS = re.compile(
    r"rodn\w* čísl\w*|rodn\w* cisl\w*|r\.\s?č\.|\brč\b|birth\s+number", re.IGNORECASE
)
_SSN = re.compile(r"(?<![\w-])\d{3}-\d{2}-\d{4}(?![\w-])")
_ELEVEN = re.compile(r"(?<![\w/.-])\d{2} ?\d{3} ?\d{3} ?\d{3}(?![\w/]|[.,-]\d)")
_NAMED_BEFORE = 48
_IDNR_WORDS = re.compile(
    r"steuer[- ]?id|steueridentifikationsnummer|identifikationsnummer|idnr|tax\s+id",
    re.IGNORECASE,
)
_PESEL_WORDS = re.compile(r"pesel", re.IGNORECASE)

_CATEGORY = SensitiveCategory.NATIONAL_IDENTIFIER


def _named(text: str, start: int, words: re.Pattern[str]) -> bool:
    return words.search(text, max(0, start - _NAMED_BEFORE), start) is not None


def _gated(
    text: str,
    words: re.Pattern[str],
    valid: Callable[[str], bool],
    candidates: re.Pattern[str] = _ELEVEN,
) -> Iterator[Finding]:
    for match in candidates.finditer(text):
        if _named(text, match.start(), words) and valid(match.group().replace(" ", "")):
            yield Finding(match.start(), match.end(), _CATEGORY)


def find(text: str) -> Iterator[Finding]:
    for match in _BIRTH_NUMBER.finditer(text):
        if rc.is_valid(match.group()):
            yield Finding(match.start(), match.end(), _CATEGORY)
    yield from _gated(text, _BIRTH_NUMBER_WORDS, rc.is_valid, _BARE_BIRTH_NUMBER)
    for match in _SSN.finditer(text):
        if ssn.is_valid(match.group()):
            yield Finding(match.start(), match.end(), _CATEGORY)
    yield from _gated(text, _IDNR_WORDS, idnr.is_valid)
    yield from _gated(text, _PESEL_WORDS, pesel.is_valid)
