"""The content screen applied to what the reading use cases answer.

Only what an email's author wrote is screened: subjects, display names, bodies, extracts, and
the file names of attachments (a name is text the author chose as much as a subject is).
Addresses, identifiers, sizes, flags and the sender-authentication domains pass as they are.
On a content read the display names of the first `NAMED_PARTICIPANTS_SCANNED` named
participants are screened and every later one is published with no name at all."""

from __future__ import annotations

import dataclasses

from mailfathom.app.reading.views import (
    AttachmentView,
    EmailSummary,
    HeadersView,
    ParticipantView,
    ThreadBlock,
)
from mailfathom.app.shared.content_screen import ContentScreen

NAMED_PARTICIPANTS_SCANNED = 40


def summary(screen: ContentScreen, value: EmailSummary) -> EmailSummary:
    if not screen.active:
        return value
    return dataclasses.replace(
        value,
        subject=screen.text(value.subject),
        sender_display_name=screen.text(value.sender_display_name),
    )


def headers(screen: ContentScreen, value: HeadersView) -> HeadersView:
    if not screen.active:
        return value
    participants: list[ParticipantView] = []
    named = 0
    for person in value.participants:
        name = person.display_name
        if name:
            named += 1
            name = screen.text(name) if named <= NAMED_PARTICIPANTS_SCANNED else None
        participants.append(dataclasses.replace(person, display_name=name))
    return dataclasses.replace(
        value, subject=screen.text(value.subject), participants=tuple(participants)
    )


def attachments(
    screen: ContentScreen, values: tuple[AttachmentView, ...]
) -> tuple[AttachmentView, ...]:
    if not screen.active:
        return values
    return tuple(dataclasses.replace(a, file_name=screen.text(a.file_name)) for a in values)


def thread(screen: ContentScreen, value: ThreadBlock | None) -> ThreadBlock | None:
    if value is None or not screen.active:
        return value
    others = tuple(
        dataclasses.replace(m, subject=screen.text(m.subject)) for m in value.other_messages
    )
    return dataclasses.replace(value, other_messages=others)
