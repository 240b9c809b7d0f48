"""The `[SensitiveContent]` section: whether mail text is scanned for sensitive content, for
which categories, how much of a body one scan reads, and what happens to a message leaving
with a finding when nobody is asked about it."""

from __future__ import annotations

from mailfathom.adapters.config.toml_tables import Table
from mailfathom.domain.sensitive_content import (
    OutgoingScreening,
    SensitiveCategory,
    SensitiveContentConfig,
)

# The per-category switches, each on unless set to false.
CATEGORY_KEYS: dict[str, SensitiveCategory] = {
    "PaymentCards": SensitiveCategory.PAYMENT_CARD,
    "Ibans": SensitiveCategory.IBAN,
    "NationalIdentifiers": SensitiveCategory.NATIONAL_IDENTIFIER,
    "Credentials": SensitiveCategory.CREDENTIAL,
    "OneTimeCodes": SensitiveCategory.ONE_TIME_CODE,
}
_KEYS = frozenset({"Enabled", "ScanCeiling", "Outgoing", *CATEGORY_KEYS})
_CEILING_RANGE = (1_000, 1_000_000)
_OUTGOING = {mode.value: mode for mode in OutgoingScreening}


def parse_sensitive_content(table: Table | None) -> SensitiveContentConfig:
    defaults = SensitiveContentConfig()
    if table is None:
        return defaults
    table.refuse_unknown(_KEYS)
    enabled = table.boolean("Enabled", defaults.enabled)
    categories = frozenset(
        category for key, category in CATEGORY_KEYS.items() if table.boolean(key, True)
    )
    ceiling = table.integer("ScanCeiling")
    low, high = _CEILING_RANGE
    if ceiling is not None and not low <= ceiling <= high:
        table.problems.add(
            table.at("ScanCeiling"), f"must be an integer from {low} to {high} (characters)"
        )
        ceiling = None
    outgoing_name = table.string("Outgoing")
    outgoing = defaults.outgoing
    if outgoing_name is not None:
        if outgoing_name not in _OUTGOING:
            choices = ", ".join(f'"{name}"' for name in _OUTGOING)
            table.problems.add(table.at("Outgoing"), f"must be one of {choices}")
        else:
            outgoing = _OUTGOING[outgoing_name]
    return SensitiveContentConfig(
        enabled=enabled,
        categories=categories,
        scan_ceiling_characters=defaults.scan_ceiling_characters if ceiling is None else ceiling,
        outgoing=outgoing,
    )
