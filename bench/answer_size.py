"""What a caller pays to read our answers: characters of result text, before and after.

    uv run python bench/answer_size.py [--store-dir DIR] [--pages N]

Third-party mail from ../shared/corpora (SpamAssassin easy ham in INBOX, the linux-mips 2005
list archive in Archive, SpamAssassin spam in Junk) is written into the Maildir folders of a
local account, each file's time set from its Date header, and one synchronization stores
and indexes it. The tools are then called through the MCP server itself, with the official
client connected in-process:

  list_emails        N pages of 20 summaries, newest first (all readable folders)
  search_emails      each query of QUERIES, 20 results
  get_email_content  the first 100 listed emails, 10 per call

For every answer two renderings are measured in the same run: the text block as the server
returns it now, and the text block as it was returned before (the whole structured result
as compact JSON, with the 0.0 likelihood it used to carry beside notAssessed). Reported:
characters per summary (page text / summaries), the size of each 20-result search (and how
much of it is snippets, the mail text both renderings carry alike), and the ratio now /
before. Nothing here passes or fails; TARGETS is printed beside the figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from email.parser import BytesHeaderParser
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import anyio

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

import read_latency_support as support  # noqa: E402

CORPORA = REPO.parent / "shared" / "corpora" / "messages"
SOURCES = (
    ("INBOX", "spamassassin-easy-ham-1"),
    ("Archive", "linux-mips-2005"),
    ("Junk", "spamassassin-spam-1"),
)
QUERIES = (
    "kernel patch",
    "mips",
    "linux",
    "razor",
    "spamassassin",
    "perl",
    "debian",
    "compile error",
    "python",
    "exmh",
)
TARGETS = {"characters per summary": 400.0, "search text now / before": 0.40}
STORE_MARKER = "answer-size-store.json"


def log(message: str) -> None:
    print(f"[answer_size] {message}", file=sys.stderr, flush=True)


def _received(raw: bytes, fallback: float) -> float:
    try:
        date = BytesHeaderParser().parsebytes(raw).get("Date")
        return parsedate_to_datetime(str(date)).timestamp() if date else fallback
    except (TypeError, ValueError, IndexError):
        return fallback


def build_store(store_dir: Path) -> dict[str, Any]:
    """Write the corpora into a local account's Maildir and synchronize it once; a store a
    previous run completed is reused."""
    marker = store_dir / STORE_MARKER
    config = store_dir / "mailfathom.toml"
    if marker.exists():
        log(f"reusing the store in {store_dir}")
        return {**json.loads(marker.read_text()), "reused": True}
    data = store_dir / "data"
    maildir = data / "local" / support.ACCOUNT_ID
    digest = hashlib.sha256(os.urandom(16)).hexdigest()
    config.write_text(support.config_text(data, support.free_port(), digest), "utf-8")
    for folder in support.FOLDER_ROLES:
        for sub in ("cur", "new", "tmp"):
            (maildir / folder / sub).mkdir(parents=True, exist_ok=True)
    written: dict[str, int] = {}
    count = 0
    for folder, corpus in SOURCES:
        for path in sorted((CORPORA / corpus).iterdir()):
            raw = path.read_bytes()
            if raw.startswith(b"From "):  # a one-message mbox: drop the envelope line
                raw = raw.split(b"\n", 1)[1]
            count += 1
            when = _received(raw, 1_000_000_000 + count)
            target = maildir / folder / "cur" / f"{int(when)}.M{count:07d}.corpus:2,S"
            target.write_bytes(raw)
            os.utime(target, (when, when))
            written[folder] = written.get(folder, 0) + 1

    from mailfathom.adapters.config.toml_loader import load_config
    from mailfathom.bootstrap import Services

    loaded = load_config(config)
    start = time.perf_counter()
    with Services.open(loaded) as services:
        services.account_synchronizer().run_once(loaded.accounts[0])
    facts = {"messages": written, "sync_s": round(time.perf_counter() - start, 1)}
    marker.write_text(json.dumps(facts))
    log(f"stored {count} messages in {facts['sync_s']} s")
    return {**facts, "reused": False}


def _text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def _before(structured: dict[str, Any]) -> str:
    """The text block as the server wrote it before: the whole structured result as compact
    JSON, where an unassessed reading carried the likelihood 0.0."""

    def restore(value: Any) -> Any:
        if isinstance(value, dict):
            out = {k: restore(v) for k, v in value.items()}
            if out.get("state") == "notAssessed" and out.get("likelihood", 0) is None:
                out["likelihood"] = 0.0
            return out
        if isinstance(value, list):
            return [restore(v) for v in value]
        return value

    return json.dumps(restore(structured), ensure_ascii=False, separators=(",", ":"))


async def measure(services: Any, pages: int) -> dict[str, Any]:
    from mcp import Client

    from mailfathom.entrypoints.mcp.assemble import build_server

    found: dict[str, Any] = {"list_emails": [], "search_emails": [], "get_email_content": []}
    async with Client(build_server(services)) as client:

        async def call(tool: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], int, int]:
            result = await client.call_tool(tool, arguments)
            if result.is_error or not isinstance(result.structured_content, dict):
                raise RuntimeError(f"{tool} failed: {_text(result)[:80]}")
            structured = result.structured_content
            return structured, len(_text(result)), len(_before(structured))

        ids: list[str] = []
        arguments: dict[str, Any] = {"pageSize": 20}
        for _ in range(pages):
            page, now, before = await call("list_emails", arguments)
            found["list_emails"].append(
                {"summaries": len(page["emails"]), "now": now, "before": before}
            )
            ids.extend(e["storedEmailId"] for e in page["emails"])
            if not page["nextCursor"]:
                break
            arguments = {"pageSize": 20, "cursor": page["nextCursor"]}
        for query in QUERIES:
            answer, now, before = await call(
                "search_emails", {"queryText": query, "resultLimit": 20}
            )
            snippets = sum(
                len(json.dumps(m["snippets"], ensure_ascii=False, separators=(",", ":")))
                for m in answer["matches"]
            )
            found["search_emails"].append(
                {
                    "query": query,
                    "matches": len(answer["matches"]),
                    "now": now,
                    "before": before,
                    "snippets": snippets,
                }
            )
        for start in range(0, min(100, len(ids)), 10):
            _read, now, before = await call(
                "get_email_content", {"storedEmailIds": ids[start : start + 10]}
            )
            found["get_email_content"].append({"emails": 10, "now": now, "before": before})
    return found


def report(found: dict[str, Any]) -> dict[str, Any]:
    pages = found["list_emails"]
    summaries = sum(p["summaries"] for p in pages)
    per_now = sum(p["now"] for p in pages) / summaries
    per_before = sum(p["before"] for p in pages) / summaries
    print(f"\nlist_emails: {len(pages)} pages, {summaries} summaries (pageSize 20)")
    print(f"  characters per summary   before {per_before:8.0f}   now {per_now:8.0f}", end="")
    target = TARGETS["characters per summary"]
    print(f"   now/before {per_now / per_before:.2f}   target <= {target:.0f}")

    print("\nsearch_emails (resultLimit 20):")
    ratios = []
    for s in found["search_emails"]:
        ratio = s["now"] / s["before"]
        ratios.append(ratio)
        rest = (s["now"] - s["snippets"]) / (s["before"] - s["snippets"])
        print(
            f"  {s['query']:<14} {s['matches']:3d} matches   before {s['before']:7d}   "
            f"now {s['now']:7d}   now/before {ratio:.2f}   snippets {s['snippets']:6d}   "
            f"the rest now/before {rest:.2f}"
        )
    total_now = sum(s["now"] for s in found["search_emails"])
    total_before = sum(s["before"] for s in found["search_emails"])
    snippets = sum(s["snippets"] for s in found["search_emails"])
    rest = (total_now - snippets) / (total_before - snippets)
    print(
        f"  all queries: now/before {total_now / total_before:.2f} (mean of ratios "
        f"{sum(ratios) / len(ratios):.2f})   target <= {TARGETS['search text now / before']:.2f}"
    )
    print(f"  without the snippets (mail text, written alike both times): now/before {rest:.2f}")

    reads = found["get_email_content"]
    read_now = sum(r["now"] for r in reads)
    read_before = sum(r["before"] for r in reads)
    print(f"\nget_email_content: {len(reads)} calls of 10 emails")
    print(
        f"  characters per call      before {read_before / len(reads):8.0f}   now "
        f"{read_now / len(reads):8.0f}   now/before {read_now / read_before:.2f}"
    )
    return {
        "characters_per_summary": {"before": per_before, "now": per_now},
        "search_ratio_all_queries": total_now / total_before,
        "search_ratio_mean": sum(ratios) / len(ratios),
        "content_ratio": read_now / read_before,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store-dir", type=Path, help="keep the store here and reuse it")
    parser.add_argument("--pages", type=int, default=25, help="list_emails pages of 20")
    args = parser.parse_args()
    if not CORPORA.is_dir():
        raise SystemExit(f"the corpora are not at {CORPORA}")
    store_dir = args.store_dir or Path(tempfile.mkdtemp(prefix="mailfathom-answer-size-"))
    store_dir.mkdir(parents=True, exist_ok=True)
    log(f"code: {support.git('rev-parse', '--short', 'HEAD')} (work tree)")
    facts = build_store(store_dir.resolve())
    log(f"store: {facts}")

    from mailfathom.adapters.config.toml_loader import load_config
    from mailfathom.bootstrap import Services

    with Services.open(load_config(store_dir / "mailfathom.toml")) as services:
        found = anyio.run(measure, services, args.pages)
    report(found)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
