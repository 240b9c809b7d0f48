"""The machine-authorship reading measured on the corpora: a confusion table and its cost.

    uv run python bench/authorship_confusion.py [--corpora ../shared/corpora]

Every message is read as synchronization reads it: its bytes through `normalize_message`
(an HTML template is first wrapped as a one-part text/html message, so its text is the one
the project renders from HTML), then the subject and plain text through the assessor. One row
per corpus: how many messages fell in each band, the share flagged (possible or likely) among
the assessed and among all, and how often each signal fired.

The cost is each message's assessment on the thread's CPU clock, against `normalize_message`
of the same message in the same run (the step every stored message already pays), so the
ratio holds on a busy machine.
"""

from __future__ import annotations

import argparse
import collections
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from mailfathom.adapters.mime import normalize_message
from mailfathom.domain.authorship import AuthorshipSignal, AuthorshipState
from mailfathom.domain.authorship_assessor import MachineAuthorshipAssessor

REPO = Path(__file__).resolve().parents[1]
GENERATED = REPO / "tests" / "authorship" / "generated"
_HTML_HEADER = (
    b"From: template@example.test\r\nSubject: template\r\nMIME-Version: 1.0\r\n"
    b"Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n"
)
_STATES = (
    AuthorshipState.NOT_ASSESSED,
    AuthorshipState.UNLIKELY,
    AuthorshipState.POSSIBLE,
    AuthorshipState.LIKELY,
)


@dataclass
class Row:
    kind: str
    name: str
    states: collections.Counter[AuthorshipState] = field(default_factory=collections.Counter)
    signals: collections.Counter[AuthorshipSignal] = field(default_factory=collections.Counter)

    @property
    def total(self) -> int:
        return sum(self.states.values())

    @property
    def flagged(self) -> int:
        return self.states[AuthorshipState.POSSIBLE] + self.states[AuthorshipState.LIKELY]


def corpora_rows(corpora: Path) -> Iterator[tuple[str, str, list[bytes]]]:
    messages = corpora / "messages"
    html = corpora / "html" / "email-html"
    yield "hand-written list mail", "linux-mips-2005", _files(messages / "linux-mips-2005")
    yield (
        "hand-written list mail",
        "spamassassin-easy-ham-1",
        _files(messages / "spamassassin-easy-ham-1"),
    )
    yield "hand-written HTML replies", "email-html/talon-html-replies", _html(html, "talon-*")
    marketing = [
        *_html(html, "mimekit/UnitTests/TestData/text"),
        *_html(html, "leemunroe"),
        *_html(html, "mailgun-transactional"),
    ]
    yield "marketing and transactional mail", "email-html (MimeKit, templates)", marketing
    yield "spam", "spamassassin-spam-1", _files(messages / "spamassassin-spam-1")
    generated = sorted(GENERATED.glob("*.eml"))
    yield (
        "generated (written for the test)",
        "style: en, cs, sk",
        [p.read_bytes() for p in generated if not p.name.startswith("chars-")],
    )
    yield (
        "generated (written for the test)",
        "hidden characters",
        [p.read_bytes() for p in generated if p.name.startswith("chars-")],
    )


def _files(folder: Path) -> list[bytes]:
    return [p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()]


def _html(root: Path, pattern: str) -> list[bytes]:
    folders = sorted(root.glob(pattern))
    return [
        _HTML_HEADER + p.read_bytes() for folder in folders for p in sorted(folder.rglob("*.html"))
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    args = parser.parse_args()
    assessor = MachineAuthorshipAssessor()
    assessor.assess(None, "warm up \u200b")
    clock = time.thread_time
    rows: list[Row] = []
    spent_assessing = spent_normalizing = 0.0
    count = 0
    for kind, name, raws in corpora_rows(args.corpora):
        row = Row(kind, name)
        for raw in raws:
            t0 = clock()
            message = normalize_message(raw)
            t1 = clock()
            reading = assessor.assess(message.subject, message.plain_text)
            t2 = clock()
            spent_normalizing += t1 - t0
            spent_assessing += t2 - t1
            count += 1
            row.states[reading.state] += 1
            row.signals.update(reading.signals)
        rows.append(row)
    print(f"profile {assessor.profile_revision}\n")
    print(_table(rows))
    print(f"\nsignals fired (messages):\n\n{_signal_table(rows)}")
    print(
        f"\ncost over {count} messages: assess {1e6 * spent_assessing / count:.0f} us/msg, "
        f"normalize_message {1e6 * spent_normalizing / count:.0f} us/msg "
        f"(assess = {100 * spent_assessing / spent_normalizing:.1f}% of normalize_message)"
    )


def _table(rows: list[Row]) -> str:
    lines = [
        "| kind | corpus | messages | notAssessed | unlikely | possible | likely "
        "| flagged / assessed | flagged / all |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        assessed = row.total - row.states[AuthorshipState.NOT_ASSESSED]
        counts = " | ".join(str(row.states[s]) for s in _STATES)
        lines.append(
            f"| {row.kind} | {row.name} | {row.total} | {counts} "
            f"| {_share(row.flagged, assessed)} | {_share(row.flagged, row.total)} |"
        )
    return "\n".join(lines)


def _signal_table(rows: list[Row]) -> str:
    lines = [
        "| corpus | " + " | ".join(s.value for s in AuthorshipSignal) + " |",
        "| --- |" + " ---: |" * len(AuthorshipSignal),
    ]
    lines.extend(
        f"| {row.name} | " + " | ".join(str(row.signals[s]) for s in AuthorshipSignal) + " |"
        for row in rows
    )
    return "\n".join(lines)


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


if __name__ == "__main__":
    main()
