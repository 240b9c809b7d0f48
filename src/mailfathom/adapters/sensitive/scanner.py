"""The scanner a deployment runs: the detectors of the categories it switched on, over one
text at a time. Stateless, so one instance serves every thread."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from mailfathom.adapters.sensitive import cards, credentials, ibans, national, one_time_codes
from mailfathom.domain.sensitive_content import Finding, SensitiveCategory, settled

Detector = Callable[[str], Iterator[Finding]]

DETECTORS: dict[SensitiveCategory, Detector] = {
    SensitiveCategory.PAYMENT_CARD: cards.find,
    SensitiveCategory.IBAN: ibans.find,
    SensitiveCategory.NATIONAL_IDENTIFIER: national.find,
    SensitiveCategory.CREDENTIAL: credentials.find,
    SensitiveCategory.ONE_TIME_CODE: one_time_codes.find,
}


class DetectorScanner:
    """`SensitiveScanner` over this package's detectors. A detector that raises is not
    caught here: the screen using the scanner fails the call closed."""

    def __init__(self, detectors: dict[SensitiveCategory, Detector] | None = None) -> None:
        self._detectors = dict(DETECTORS if detectors is None else detectors)

    def findings(self, text: str, categories: frozenset[SensitiveCategory]) -> list[Finding]:
        found: list[Finding] = []
        for category, detect in self._detectors.items():
            if category in categories:
                found.extend(detect(text))
        return settled(found)
