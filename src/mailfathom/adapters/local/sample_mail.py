"""A generated mailbox of realistic messages, for the demo and for benchmarks.

Deterministic for a given seed: the same call yields the same octets. Messages form real reply
chains (Message-ID, In-Reply-To, References), some carry HTML alternatives, inline images or
attachments, and bodies vary in size so a mailbox resembles ordinary correspondence.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime

_PEOPLE = [
    ("Ada Lovelace", "ada@example.org"),
    ("Grace Hopper", "grace@example.net"),
    ("Alan Turing", "alan@example.com"),
    ("Katherine Johnson", "katherine@example.org"),
    ("Edsger Dijkstra", "edsger@example.net"),
    ("Barbara Liskov", "barbara@example.com"),
    ("Donald Knuth", "don@example.org"),
    ("Frances Allen", "frances@example.net"),
    ("John McCarthy", "john@example.com"),
    ("Margaret Hamilton", "margaret@example.org"),
    ("Ken Thompson", "ken@example.net"),
    ("Radia Perlman", "radia@example.com"),
]
_TOPICS = [
    "quarterly planning",
    "the release checklist",
    "budget for the offsite",
    "hiring loop",
    "database migration",
    "customer feedback",
    "security review",
    "conference talk",
    "on-call rotation",
    "design document",
    "invoice 2291",
    "team lunch",
    "roadmap draft",
    "incident follow-up",
    "vendor contract",
    "onboarding notes",
]
_WORDS = tuple(
    "we should review the numbers before friday and agree on the plan the team needs a clear "
    "owner for each item please send your comments when you can the draft is attached and "
    "open for edits I think the schedule works if we move the review by a day thanks for "
    "pulling this together let me know what you think about the second option our customers "
    "asked about the timeline so a short summary would help everyone stay aligned".split()
)


@dataclass(frozen=True, slots=True)
class SampleMessage:
    folder: str
    raw: bytes
    flags: str
    # When the message arrived: the moment its Date: header names.
    received_at: datetime


def _paragraphs(rng: random.Random, target_octets: int) -> str:
    out: list[str] = []
    size = 0
    while size < target_octets:
        sentence = " ".join(rng.choices(_WORDS, k=rng.randint(8, 20)))
        line = sentence.capitalize() + "."
        out.append(line)
        size += len(line) + 1
        if rng.random() < 0.2:
            out.append("")
    return "\n".join(out)


def generate_mailbox(
    count: int,
    *,
    seed: int = 7,
    min_octets: int = 2_000,
    max_octets: int = 50_000,
    me: tuple[str, str] = ("Demo Owner", "owner@example.org"),
    folders: tuple[str, ...] = ("INBOX", "INBOX", "INBOX", "Archive", "Sent"),
    junk_folder: str | None = "Junk",
) -> Iterator[SampleMessage]:
    rng = random.Random(seed)  # noqa: S311 - reproducible sample data, not secrets
    start = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    threads: list[tuple[str, list[str], str]] = []  # (subject, references chain, folder)
    for index in range(count):
        when = start + timedelta(minutes=37 * index + rng.randint(0, 30))
        message = EmailMessage()
        sender = rng.choice(_PEOPLE)
        message_id = f"<{index}.{seed}.{rng.getrandbits(40):x}@mail.example.org>"
        folder = rng.choice(folders)
        is_junk = junk_folder is not None and rng.random() < 0.04
        reply_to_thread = bool(threads) and not is_junk and rng.random() < 0.55
        if is_junk and junk_folder:
            folder = junk_folder
            subject = f"You have won {rng.randint(2, 900)} prizes"
            references: list[str] = []
        elif reply_to_thread:
            subject, chain, folder = rng.choice(threads[-40:])
            references = chain[-10:]
            subject = subject if subject.lower().startswith("re:") else f"Re: {subject}"
        else:
            subject = f"{rng.choice(_TOPICS).capitalize()} ({index})"
            references = []
        if folder == "Sent":
            message["From"] = f"{me[0]} <{me[1]}>"
            message["To"] = f"{sender[0]} <{sender[1]}>"
        else:
            message["From"] = f"{sender[0]} <{sender[1]}>"
            message["To"] = f"{me[0]} <{me[1]}>"
            if rng.random() < 0.3:
                other = rng.choice(_PEOPLE)
                message["Cc"] = f"{other[0]} <{other[1]}>"
        message["Subject"] = subject
        message["Date"] = format_datetime(when)
        message["Message-ID"] = message_id
        if references:
            message["In-Reply-To"] = references[-1]
            message["References"] = " ".join(references)
        body = _paragraphs(rng, rng.randint(min_octets // 2, max(min_octets, max_octets // 2)))
        message.set_content(f"Hello,\n\n{body}\n\n-- \n{sender[0]}\n")
        if rng.random() < 0.35:
            html_body = "".join(f"<p>{p}</p>" for p in body.split("\n") if p)
            message.add_alternative(
                f"<html><body><p>Hello,</p>{html_body}<p>{sender[0]}</p></body></html>",
                subtype="html",
            )
        if rng.random() < 0.15:
            payload = rng.randbytes(rng.randint(500, max(600, max_octets // 3)))
            name = rng.choice(["report.pdf", "notes.txt", "diagram.png", "budget.xlsx"])
            maintype, subtype = {
                "report.pdf": ("application", "pdf"),
                "notes.txt": ("text", "plain"),
                "diagram.png": ("image", "png"),
                "budget.xlsx": ("application", "octet-stream"),
            }[name]
            if maintype == "text":
                message.add_attachment(_paragraphs(rng, 800), filename=name)
            else:
                message.add_attachment(payload, maintype=maintype, subtype=subtype, filename=name)
        flags = ""
        if folder in ("Archive", "Sent") or rng.random() < 0.5:
            flags += "S"
        if rng.random() < 0.08:
            flags += "F"
        if folder != junk_folder and not reply_to_thread:
            threads.append((subject, [message_id], folder))
        elif reply_to_thread:
            threads.append((subject, [*references, message_id], folder))
        yield SampleMessage(folder=folder, raw=bytes(message), flags=flags, received_at=when)
