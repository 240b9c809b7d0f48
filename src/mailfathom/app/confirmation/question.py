"""What a person is asked: the message as it would be sent, and the binding of the answer.

The question shows the rows a person needs to judge a message (From, To, Cc, Bcc, Subject,
Attachments, and the instant it leaves after when one was asked; an empty row is left out) and
the whole text exactly as it is sent, as plain text, except that every character that renders
as nothing (a bidirectional control, a zero-width character, a tag, a variation selector, any
other format character or control but a line break and a tab) is written out as a marker
naming it: such a character could make the question read as something other than what is sent.
The answer is bound to a SHA-256 of the text with the characters themselves, together with the
envelope recipients and what is sent without being shown (threading fields, the files'
octets): a message that is no longer the one shown is not sent on that answer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from mailfathom.app.confirmation.ports import Choice, Question
from mailfathom.app.confirmation.wording import WORDINGS, Language, Wording, size
from mailfathom.domain import unseen
from mailfathom.domain.sensitive_content import SensitiveCategory


@dataclass(frozen=True, slots=True)
class ShownFile:
    name: str
    octets: int


@dataclass(frozen=True, slots=True)
class ShownMessage:
    """A message as a person is shown it. `sender` is `Name <address>` or the address;
    `envelope` every address the message is offered to; `unshown` digests or values of what
    is sent without being shown; `leaves_after` the instant it waits for, when one was asked."""

    account_id: str
    sender: str
    to: tuple[str, ...]
    cc: tuple[str, ...]
    bcc: tuple[str, ...]
    subject: str
    files: tuple[ShownFile, ...]
    body: str
    html: str | None
    envelope: tuple[str, ...]
    unshown: tuple[str, ...] = ()
    leaves_after: datetime | None = None


def question(
    shown: ShownMessage,
    language: Language,
    *,
    sensitive: frozenset[SensitiveCategory] = frozenset(),
    displayed: ShownMessage | None = None,
) -> Question:
    """The question about `shown`. Its text writes out every character that renders as
    nothing (`unseen.marked`), with a note saying so when there is one; its binding is of the
    text as written, the characters themselves, so two messages that read alike once written
    out are still told apart.

    When the message carries `sensitive` content, a note names the categories (never a
    value) and the text is `displayed`'s, the message with each finding replaced by its
    marker; the binding is still of `shown`, what is sent."""
    wording = WORDINGS[language]
    written = _text(shown, wording, lambda value: value)
    visible = displayed if displayed is not None else shown
    text = _text(visible, wording, unseen.marked)
    notes: list[str] = []
    if sensitive and wording.categories is not None:
        names = [wording.categories[c] for c in SensitiveCategory if c in sensitive]
        notes.append(wording.sensitive.format(found=", ".join(names)))
    if text != _text(visible, wording, lambda value: value):
        notes.append(wording.unseen)
    if notes:
        first, rest = text.split("\n", 1)
        text = "\n".join([first, *notes, rest])
    return Question(
        language=language.value,
        text=text,
        choice_title=wording.choice_title,
        choices=tuple((c, wording.choices[c]) for c in Choice),
        binding=binding(shown, written),
    )


def _text(shown: ShownMessage, wording: Wording, show: Callable[[str], str]) -> str:
    """The question's text, each value taken from the message passed through `show`."""
    rows = [(wording.sender, show(shown.sender))]
    for label, values in ((wording.to, shown.to), (wording.cc, shown.cc), (wording.bcc, shown.bcc)):
        if values:
            rows.append((label, ", ".join(map(show, values))))
    if shown.subject:
        rows.append((wording.subject, show(shown.subject)))
    if shown.files:
        files = ", ".join(f"{show(f.name)} ({size(f.octets, wording)})" for f in shown.files)
        rows.append((wording.attachments, files))
    if shown.leaves_after is not None:
        instant = shown.leaves_after.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        rows.append((wording.leaves_after, instant))
    lines = [wording.question, ""]
    lines.extend(f"{label}: {value}" for label, value in rows)
    lines.extend(["", wording.body, show(shown.body)])
    if shown.html is not None:
        lines.extend(["", wording.html, show(shown.html)])
    return "\n".join(lines)


def binding(shown: ShownMessage, text: str) -> str:
    """SHA-256 of the shown text, the envelope and what is sent unshown, each part
    length-prefixed so no two different messages run together into the same bytes."""
    digest = hashlib.sha256()
    parts = [shown.account_id, text, *shown.envelope, "", *shown.unshown]
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()
