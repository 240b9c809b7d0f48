"""The screen's rules: markers in place of findings, spans moved with them, the ceiling, and a
scanner that fails failing the call."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from mailfathom.app.shared.content_screen import ContentScreen
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from mailfathom.domain.sensitive_content import (
    Finding,
    OutgoingScreening,
    SensitiveCategory,
    SensitiveContentConfig,
    redacted,
    redacted_with_spans,
    settled,
)

CARD = SensitiveCategory.PAYMENT_CARD
CODE = SensitiveCategory.ONE_TIME_CODE
ON = SensitiveContentConfig(enabled=True, scan_ceiling_characters=1000)


class Broken:
    def findings(self, text: str, categories: frozenset[SensitiveCategory]) -> Sequence[Finding]:
        raise ValueError("broken")


class Digits:
    """Every run of four digits is a card (enough to drive the screen)."""

    def findings(self, text: str, categories: frozenset[SensitiveCategory]) -> Sequence[Finding]:
        import re

        return [Finding(m.start(), m.end(), CARD) for m in re.finditer(r"\d{4}", text)]


def test_overlapping_findings_become_one_marker_covering_both() -> None:
    kept = settled([Finding(5, 9, CODE), Finding(0, 7, CARD), Finding(3, 3, CODE)])
    assert kept == [Finding(0, 9, CARD)]
    assert redacted("0123456789x", kept) == "[redacted:paymentCard]9x"


def test_a_span_reaching_into_a_finding_is_widened_over_its_whole_marker() -> None:
    text = "pay 4111 now and 123456 ok"
    findings = [Finding(4, 8, CARD), Finding(17, 23, CODE)]
    out, spans = redacted_with_spans(text, findings, [(0, 3), (6, 12), (13, 16), (18, 26)])
    assert out == "pay [redacted:paymentCard] now and [redacted:oneTimeCode] ok"
    assert [out[s:e] for s, e in spans] == [
        "pay",
        "[redacted:paymentCard] now",
        "and",
        "[redacted:oneTimeCode] ok",
    ]


def test_a_body_is_scanned_up_to_the_ceiling_and_the_rest_withheld() -> None:
    screen = ContentScreen(Digits(), ON)
    body = screen.body("a" * 996 + "12345678")
    assert body.withheld is True
    assert body.text == "a" * 996 + "[redacted:paymentCard]"
    assert screen.body("card 1234").text == "card [redacted:paymentCard]"


def test_switched_off_nothing_is_scanned() -> None:
    screen = ContentScreen(Broken(), SensitiveContentConfig())
    assert screen.text("card 1234") == "card 1234"
    assert screen.categories_leaving(["card 1234"]) == frozenset()


def test_a_failing_scanner_fails_a_read_and_a_send_closed() -> None:
    screen = ContentScreen(Broken(), ON)
    with pytest.raises(Refusal) as read:
        screen.text("anything")
    assert read.value.code == Code.SENSITIVE_SCAN_FAILED
    with pytest.raises(Refusal) as sent:
        screen.categories_leaving(["anything"])
    assert sent.value.code == Code.OUTGOING_SCAN_FAILED


def test_outgoing_allow_screens_nothing_leaving() -> None:
    allowing = SensitiveContentConfig(enabled=True, outgoing=OutgoingScreening.ALLOW)
    assert ContentScreen(Digits(), allowing).categories_leaving(["1234"]) == frozenset()
    assert ContentScreen(Digits(), ON).categories_leaving(["x", None, "1234"]) == {CARD}


def test_a_marker_the_mail_itself_wrote_is_not_passed_off_as_a_redaction() -> None:
    screen = ContentScreen(Digits(), ON)
    assert screen.text("Paid [redacted:paymentCard] by 1234") == (
        "Paid (redacted:paymentCard) by [redacted:paymentCard]"
    )
    body, spans = screen.marked("[redacted:iban] and 1234", [(0, 15)])
    assert body == "(redacted:iban) and [redacted:paymentCard]"
    assert [body[s:e] for s, e in spans] == ["(redacted:iban)"]
