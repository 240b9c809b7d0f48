"""CPU cost of fetching message bodies: raw imaplib against our IMAP session.

    uv run python bench/imap_fetch_cost.py [--messages 5000]

Starts a private Dovecot, loads generated mail (as `initial_sync.py` does) and fetches every
body of INBOX three ways, each on a fresh connection, timing wall and process CPU:

  - imaplib alone, UID FETCH in chunks of 250 (what `initial_sync.py` calls the ceiling);
  - `ImapSession.fetch_bodies` as the product opens it;
  - the same session with imaplib's debug level set back to 0 after it was opened.

imapclient sets the debug level of the imaplib connection it wraps to 5 and points imaplib's
logging at a logger, so imaplib formats a repr() of every response line, and at level 5 of
every list of untagged responses with the literals inside, whether or not the logger is
enabled. The third case shows what that costs.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent / "tests")]

import initial_sync  # noqa: E402


def timed(label: str, action: Callable[[], int], baseline: float | None) -> float:
    wall0, cpu0 = time.perf_counter(), time.process_time()
    count = action()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    ratio = f"{cpu / baseline:5.1f}x" if baseline else ""
    print(
        f"  {label:52} {count:6d} msgs  wall {wall:6.2f} s  CPU {cpu:6.2f} s "
        f"({1000 * cpu / max(1, count):.3f} ms/msg) {ratio}",
        flush=True,
    )
    return cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=5000)
    args = parser.parse_args()

    from mailfathom.adapters.imap.session import ImapConnector
    from servers.dovecot import DovecotServer, ImapAccount
    from sync.helpers import imap_account_config

    with DovecotServer() as server:
        account = server.add_user(initial_sync.USER, initial_sync.PASSWORD)
        mailbox = initial_sync.load_maildir(server, args.messages, seed=7)
        initial_sync.imap_fetch_all(account, ["INBOX"], "(UID RFC822.SIZE FLAGS)")  # warm up
        print(f"INBOX: {mailbox['folders']['INBOX']} messages; client CPU per way of fetching:")
        config = imap_account_config(
            ImapAccount(account.host, account.port, account.username, account.password)
        )
        items = "(UID RFC822.SIZE FLAGS INTERNALDATE MODSEQ BODY.PEEK[])"

        def raw() -> int:
            return initial_sync.imap_fetch_all(account, ["INBOX"], items)[0]

        def session(debug: int | None) -> Callable[[], int]:
            def run() -> int:
                s = ImapConnector().open(config)
                try:
                    if debug is not None:
                        s._imap.debug = debug
                    s.select("INBOX")
                    return sum(1 for _ in s.fetch_bodies(s.search_uids()))
                finally:
                    s.close()

            return run

        base = timed("imaplib, UID FETCH BODY.PEEK[] by 250", raw, None)
        timed("ImapSession.fetch_bodies (as opened)", session(None), base)
        timed("ImapSession.fetch_bodies, imaplib debug = 0", session(0), base)


if __name__ == "__main__":
    main()
