"""Judging a fleet run: what the mail servers hold (read by an IMAP client of its own), what
the store holds, what the capture SMTP server received and what the agents asked for.

Every figure named in `MUST_BE_ZERO` must be 0 for the run to pass:

- lost: a message delivered to a server that no stored row names;
- duplicated: an (account, folder, Message-ID) stored twice, or a delivered message stored in
  two folders (a move that left its source row behind);
- server_duplicated: a Message-ID twice in one folder on a server (a move or a drafts-folder
  copy carried twice);
- sent_twice / sent_never: a queued send's marker received twice, or never while its record
  does not say that its outcome is unknown (71003: a worker was killed between handing the
  message over and hearing the answer, and such a send is never offered again);
- sends_unfinished: a send still queued or being sent;
- flags_missing, moves_missing, drafts_kept_wrong: a flag not set on the server, a moved
  message not in Archive exactly once or still in INBOX, a kept draft without exactly one copy
  in Drafts;
- mutations_open, mutations_dead_lettered: owner changes not carried (or given up);
- folders_not_converged: a folder whose stored Message-IDs or \\Flagged marks differ from the
  server's."""

from __future__ import annotations

import imaplib
import re
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from fleet.agents import Intents
from fleet.deployment import FOLDERS, FleetAccount
from mailfathom.adapters.sql.schema import folders, messages, mutation_records, outgoing_emails
from sync.helpers import uid_fetch

MUST_BE_ZERO = (
    "lost",
    "duplicated",
    "server_duplicated",
    "sent_twice",
    "sent_never",
    "sends_unfinished",
    "flags_missing",
    "moves_missing",
    "drafts_kept_wrong",
    "mutations_open",
    "mutations_dead_lettered",
    "folders_not_converged",
)
OUTCOME_UNKNOWN = 71003
_MESSAGE_ID = re.compile(rb"^Message-ID:\s*(\S+)", re.IGNORECASE | re.MULTILINE)

# (account, folder) -> Message-ID -> whether flagged, one entry per message
Folders = dict[tuple[str, str], list[tuple[str, bool]]]


def normal(message_id: str) -> str:
    return message_id.strip().strip("<>").lower()


def read_server(accounts: Iterable[FleetAccount], threads: int = 8) -> Folders:
    """Every mapped folder of every account as the server holds it."""
    found: Folders = {}
    with ThreadPoolExecutor(threads) as pool:
        for account_id, folder_views in pool.map(_read_account, accounts):
            for folder, view in folder_views.items():
                found[(account_id, folder)] = view
    return found


def _read_account(account: FleetAccount) -> tuple[str, dict[str, list[tuple[str, bool]]]]:
    conn = imaplib.IMAP4(account.imap.host, account.imap.port, timeout=60)
    try:
        conn.login(account.imap.username, account.imap.password)
        views: dict[str, list[tuple[str, bool]]] = {}
        for folder in FOLDERS:
            typ, data = conn.select(folder, readonly=True)
            assert typ == "OK", data
            if int(data[0] or 0) == 0:
                views[folder] = []
                continue
            answers = uid_fetch(conn, "1:*", "UID FLAGS BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)]")
            views[folder] = [_entry(items) for items in answers.values()]
        return account.account_id, views
    finally:
        conn.logout()


def _entry(items: Mapping[bytes, Any]) -> tuple[str, bool]:
    header = next((v for k, v in items.items() if k.startswith(b"BODY")), b"")
    found = _MESSAGE_ID.search(header or b"")
    flags = {f.decode() if isinstance(f, bytes) else str(f) for f in items.get(b"FLAGS", ())}
    return normal(found.group(1).decode() if found else ""), "\\Flagged" in flags


def read_store(engine: sa.Engine) -> Folders:
    found: Folders = {}
    with engine.connect() as c:
        rows = c.execute(
            sa.select(
                messages.c.account_id,
                folders.c.remote_name,
                messages.c.message_id_header,
                messages.c.flagged,
            ).join(folders, folders.c.folder_id == messages.c.folder_id)
        )
        for row in rows:
            key = (str(row.account_id), str(row.remote_name))
            found.setdefault(key, []).append((normal(row.message_id_header or ""), row.flagged))
    return found


@dataclass
class Verdict:
    figures: dict[str, Any] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)

    @property
    def failed(self) -> list[str]:
        return [name for name in MUST_BE_ZERO if self.figures.get(name, 0) != 0]

    def note(self, name: str, found: list[str]) -> None:
        self.figures[name] = len(found)
        if found:
            self.examples[name] = sorted(found)[:5]


def judge(
    engine: sa.Engine,
    accounts: list[FleetAccount],
    delivered: Mapping[str, list[str]],
    intents: Intents,
    received: Iterable[bytes],
) -> Verdict:
    server = read_server(accounts)
    store = read_store(engine)
    verdict = Verdict()
    _mail(verdict, server, store, delivered)
    _mutations(verdict, engine, server, intents)
    _sends(verdict, engine, intents, received)
    return verdict


def _mail(
    verdict: Verdict, server: Folders, store: Folders, delivered: Mapping[str, list[str]]
) -> None:
    stored_in: dict[tuple[str, str], list[str]] = {}
    doubled = []
    for (account, folder), view in store.items():
        counts = Counter(mid for mid, _ in view)
        doubled += [f"{account}/{folder}/{mid}" for mid, n in counts.items() if n > 1]
        for mid in counts:
            stored_in.setdefault((account, mid), []).append(folder)
    lost, spread, total = [], [], 0
    for account, ids in delivered.items():
        for mid in map(normal, ids):
            total += 1
            places = stored_in.get((account, mid), [])
            if not places:
                lost.append(f"{account}/{mid}")
            elif len(places) > 1:
                spread.append(f"{account}/{mid} in {sorted(places)}")
    verdict.figures["delivered"] = total
    verdict.figures["stored_rows"] = sum(len(v) for v in store.values())
    verdict.note("lost", lost)
    verdict.note("duplicated", doubled + spread)
    verdict.note(
        "server_duplicated",
        [
            f"{account}/{folder}/{mid}"
            for (account, folder), view in server.items()
            for mid, n in Counter(m for m, _ in view).items()
            if n > 1
        ],
    )
    differing = [
        f"{account}/{folder}"
        for (account, folder) in sorted(set(server) | set(store))
        if Counter(server.get((account, folder), [])) != Counter(store.get((account, folder), []))
    ]
    verdict.note("folders_not_converged", differing)
    verdict.figures["accounts_not_converged"] = len({d.split("/")[0] for d in differing})


def _mutations(verdict: Verdict, engine: sa.Engine, server: Folders, intents: Intents) -> None:
    def where(account: str, folder: str, mid: str) -> list[bool]:
        return [flagged for m, flagged in server.get((account, folder), []) if m == mid]

    verdict.note(
        "flags_missing",
        [
            f"{account}/{mid}"
            for account, mid in intents.flagged
            if where(account, "INBOX", normal(mid)) != [True]
        ],
    )
    verdict.note(
        "moves_missing",
        [
            f"{account}/{mid}"
            for account, mid in intents.moved
            if len(where(account, "Archive", normal(mid))) != 1
            or where(account, "INBOX", normal(mid))
        ],
    )
    verdict.note(
        "drafts_kept_wrong",
        [
            marker
            for marker, (account, mid) in intents.kept.items()
            if len(where(account, "Drafts", normal(mid))) != 1
        ],
    )
    with engine.connect() as c:
        states: Counter[str] = Counter(
            dict(
                c.execute(
                    sa.select(mutation_records.c.state, sa.func.count()).group_by(
                        mutation_records.c.state
                    )
                ).all()
            )
        )
    verdict.figures["mutations_completed"] = states.get("completed", 0)
    verdict.figures["mutations_open"] = states.get("pending", 0) + states.get("converging", 0)
    verdict.figures["mutations_dead_lettered"] = states.get("dead-lettered", 0)


def _sends(
    verdict: Verdict, engine: sa.Engine, intents: Intents, received: Iterable[bytes]
) -> None:
    """The outbox is read before the capture server's spool: a send that ends between the
    two readings is then counted unfinished rather than sent and never heard."""
    ids = [uuid.UUID(outgoing) for _account, outgoing in intents.sent.values()]
    with engine.connect() as c:
        rows = c.execute(
            sa.select(
                outgoing_emails.c.outgoing_id,
                outgoing_emails.c.stage,
                outgoing_emails.c.failure_code,
            ).where(outgoing_emails.c.outgoing_id.in_(ids))
        ).all()
    records = {str(r.outgoing_id): (r.stage, r.failure_code) for r in rows}
    heard: Counter[str] = Counter()
    for content in received:
        found = re.search(rb"^Subject: (Fleet note number \d+ from \w+)\r?$", content, re.M)
        if found:
            heard[found.group(1).decode()] += 1
    twice: list[str] = []
    never: list[str] = []
    unknown: list[str] = []
    unfinished: list[str] = []
    for marker, (_account, outgoing) in intents.sent.items():
        stage, code = records.get(outgoing, ("missing", None))
        if heard[marker] > 1:
            twice.append(marker)
        if stage in ("queued", "sending"):
            unfinished.append(marker)
        elif heard[marker] == 0:
            (unknown if code == OUTCOME_UNKNOWN else never).append(f"{marker}: {stage} {code}")
    verdict.figures["sends_queued"] = len(intents.sent)
    verdict.figures["sends_received"] = sum(heard[m] > 0 for m in intents.sent)
    verdict.note("sent_twice", twice)
    verdict.note("sent_never", never)
    verdict.note("sends_outcome_unknown", unknown)
    verdict.note("sends_unfinished", unfinished)
    verdict.figures["received_unasked"] = sum(n for m, n in heard.items() if m not in intents.sent)
