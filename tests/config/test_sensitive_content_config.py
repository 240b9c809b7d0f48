"""The `[SensitiveContent]` section: off by default, each category switchable, the ceiling
and the outgoing choice checked."""

from __future__ import annotations

from config.test_config_loading import imap_account, parse, problems_of
from mailfathom.domain.sensitive_content import (
    OutgoingScreening,
    SensitiveCategory,
    SensitiveContentConfig,
)


def test_nothing_is_scanned_unless_switched_on() -> None:
    config = parse({"Accounts": [imap_account()]})
    assert config.sensitive_content == SensitiveContentConfig()
    assert config.sensitive_content.enabled is False


def test_categories_ceiling_and_outgoing_choice_are_read() -> None:
    config = parse(
        {
            "Accounts": [imap_account()],
            "SensitiveContent": {
                "Enabled": True,
                "OneTimeCodes": False,
                "Ibans": False,
                "ScanCeiling": 20000,
                "Outgoing": "keepDraft",
            },
        }
    )
    screen = config.sensitive_content
    assert screen.enabled is True
    assert screen.categories == frozenset(SensitiveCategory) - {
        SensitiveCategory.ONE_TIME_CODE,
        SensitiveCategory.IBAN,
    }
    assert screen.scan_ceiling_characters == 20000
    assert screen.outgoing is OutgoingScreening.KEEP_DRAFT


def test_broken_rules_are_each_reported() -> None:
    found = "\n".join(
        problems_of(
            {
                "Accounts": [imap_account()],
                "SensitiveContent": {
                    "Enabled": "yes",
                    "ScanCeiling": 10,
                    "Outgoing": "shrug",
                    "Cards": True,
                },
            }
        )
    )
    for key in ("Enabled", "ScanCeiling", "Outgoing", "Cards"):
        assert f"SensitiveContent.{key}" in found, key
