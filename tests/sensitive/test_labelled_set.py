"""Precision and recall of each detector on the labelled set (tests/sensitive/labelled.py).

A labelled value is found when a finding of its category covers it; a finding that covers
no labelled value of its category is a false positive. The bounds asserted are those
docs/redaction.md publishes with the measured table; `python -m sensitive.scores` (from
tests/) prints the table."""

from __future__ import annotations

import pytest

from mailfathom.domain.sensitive_content import SensitiveCategory
from sensitive.labelled import SAMPLES
from sensitive.scores import Score, scores

# The least precision and recall each category must keep on the labelled set.
BOUNDS: dict[SensitiveCategory, tuple[float, float]] = {
    SensitiveCategory.PAYMENT_CARD: (0.95, 0.95),
    SensitiveCategory.IBAN: (0.95, 0.95),
    SensitiveCategory.NATIONAL_IDENTIFIER: (0.9, 0.9),
    SensitiveCategory.CREDENTIAL: (0.9, 0.9),
    SensitiveCategory.ONE_TIME_CODE: (0.85, 0.85),
}


@pytest.fixture(scope="module")
def measured() -> dict[SensitiveCategory, Score]:
    return scores(SAMPLES)


@pytest.mark.parametrize("category", list(SensitiveCategory), ids=lambda c: c.value)
def test_each_category_keeps_its_precision_and_recall_on_the_labelled_set(
    measured: dict[SensitiveCategory, Score], category: SensitiveCategory
) -> None:
    score = measured[category]
    least_precision, least_recall = BOUNDS[category]
    assert score.positives >= 10
    assert score.near_misses >= 8
    assert score.precision >= least_precision, score
    assert score.recall >= least_recall, score
