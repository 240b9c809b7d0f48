"""Scoring the detectors on the labelled set; run as a module to print the table."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mailfathom.adapters.sensitive.scanner import DetectorScanner
from mailfathom.domain.sensitive_content import SensitiveCategory
from sensitive.labelled import SAMPLES, Sample

EVERY = frozenset(SensitiveCategory)


@dataclass
class Score:
    positives: int = 0
    near_misses: int = 0
    true_positives: int = 0
    false_positives: int = 0

    @property
    def precision(self) -> float:
        found = self.true_positives + self.false_positives
        return self.true_positives / found if found else 1.0

    @property
    def recall(self) -> float:
        return self.true_positives / self.positives if self.positives else 1.0


def scores(samples: Iterable[Sample]) -> dict[SensitiveCategory, Score]:
    scanner = DetectorScanner()
    table = {category: Score() for category in SensitiveCategory}
    for sample in samples:
        findings = scanner.findings(sample.text, EVERY)
        spans = []
        for value, category in sample.values:
            start = sample.text.index(value)
            spans.append((start, start + len(value), category))
            table[category].positives += 1
            if any(
                f.category is category and f.start <= start and f.end >= start + len(value)
                for f in findings
            ):
                table[category].true_positives += 1
        if sample.resembles is not None:
            table[sample.resembles].near_misses += 1
        for f in findings:
            if not any(f.category is c and f.start < e and s < f.end for s, e, c in spans):
                table[f.category].false_positives += 1
    return table


def main() -> None:
    print("| category | values | near misses | found | false positives | precision | recall |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for category, s in scores(SAMPLES).items():
        print(
            f"| {category.value} | {s.positives} | {s.near_misses} | {s.true_positives} | "
            f"{s.false_positives} | {s.precision:.2f} | {s.recall:.2f} |"
        )


if __name__ == "__main__":
    main()
