"""CPU time of sanitizing deeply nested HTML, before and after the nesting bound.

    uv run python bench/html_nesting.py [--kilobytes 500]

For each shape (nested `<div>`s open or closed, nested tables, and a wide document of the
same size that nests only a few levels) the body is about `--kilobytes` long. The baseline is
what sanitizing did before the bound: the body given to nh3 whole, with the same allow-list.
The current sanitizer reads it with libxml2, flattens nesting past `MAX_DEPTH` and only then
gives it to nh3. Both are timed in this run, in process CPU seconds, with the ratio.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import nh3

from mailfathom.adapters.html.document import MAX_DEPTH
from mailfathom.adapters.html.sanitize import NhHtmlSanitizer


def _shapes(size: int) -> dict[str, str]:
    return {
        "open divs": "<div>" * (size // 5),
        "closed divs": "<div>" * (size // 11) + "x" + "</div>" * (size // 11),
        "nested tables": "<table><tr><td>" * (size // 15),
        "wide, shallow": "<div><p>Some words here</p></div>" * (size // 32),
    }


def _baseline(html: str) -> str:
    """The sanitizer as it was: nh3 on the whole body."""
    return nh3.clean(html, tags={"div", "p", "table", "tbody", "tr", "td"}, strip_comments=True)


def _cpu(run: Callable[[str], str], html: str) -> float:
    start = time.process_time()
    run(html)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kilobytes", type=int, default=500)
    args = parser.parse_args()
    sanitizer = NhHtmlSanitizer()
    print(f"nesting bound {MAX_DEPTH}; bodies of about {args.kilobytes} KB")
    print(f"{'shape':<16}{'before (s)':>12}{'after (s)':>12}{'before/after':>14}")
    for name, html in _shapes(args.kilobytes * 1000).items():
        before = _cpu(_baseline, html)
        after = _cpu(sanitizer.sanitize, html)
        print(f"{name:<16}{before:>12.2f}{after:>12.2f}{before / max(after, 1e-6):>14.1f}")


if __name__ == "__main__":
    main()
