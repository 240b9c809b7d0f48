"""Characters per visible word of plain text converted from HTML, on every HTML-only corpus message.

    uv run python bench/html_text_density.py [--corpora ../shared/corpora] [--worst 10]

A message is HTML-only when its plain text is rendered from HTML: every message of
corpora/messages is normalized with `html_to_text` watched, and the HTML it was given is kept.
The HTML templates of corpora/html/email-html are measured as a second group. Each HTML body
is converted twice, by the earlier conversion (inscriptis with its default settings) and by the
current `html_to_text`.

"Visible words" are counted independently of both conversions: the stdlib's HTML tokenizer
walks the whole input (content after `</html>` included, as a browser shows it) and keeps the
text outside head, script, style, title, template, iframe, noscript, object, embed, applet,
noembed, noframes and elements hidden by a `hidden` attribute or an inline `display: none`;
of a drop-down list only the chosen option (else the first) counts.
Words are runs of word characters. For each conversion the script reports total characters
over total visible words, the median per message, and how many of the visible words the text
holds (as a multiset), which shows words lost as well as padding gained.
"""

from __future__ import annotations

import argparse
import codecs
import collections
import mailbox
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path

from inscriptis import get_text

from mailfathom.adapters.mime import normalize_message, structure
from mailfathom.adapters.mime.text import clean_body_text, decode_bytes, html_to_text

_WORD = re.compile(r"\w+")
_TAG = re.compile(r"<[^>]*>")
_NOT_SHOWN = frozenset(
    {
        "head",
        "script",
        "style",
        "title",
        "template",
        "iframe",
        "noscript",
        "object",
        "embed",
        "applet",
        "noembed",
        "noframes",
    }
)
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)
_DISPLAY_NONE = re.compile(r"display\s*:\s*none", re.IGNORECASE)


class _VisibleText(HTMLParser):
    """The words of an HTML document outside what a browser does not render."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pieces: list[str] = []
        self._hidden: list[str] = []  # tag names of the open elements that hide their content
        self._depth = 0  # nesting of the innermost hiding element's own tag inside itself
        self._options: list[tuple[bool, list[str]]] | None = None  # inside a <select>

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body" and self._hidden == ["head"]:
            self._hidden.clear()  # a missing </head>
        if self._hidden:
            if tag == self._hidden[-1]:
                self._depth += 1
            return
        if tag == "select":
            self._options = []
        elif tag == "option" and self._options is not None:
            self._options.append((any(k == "selected" for k, _ in attrs), []))
        style = next((v for k, v in attrs if k == "style" and v), "")
        hides = any(k == "hidden" for k, _ in attrs) or _DISPLAY_NONE.search(style)
        if (tag in _NOT_SHOWN or hides) and tag not in _VOID:
            self._hidden.append(tag)
            self._depth = 0
        self.pieces.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "select" and self._options is not None and not self._hidden:
            chosen = [o for o in self._options if o[0]] or self._options[:1]
            for _, texts in chosen[:1]:
                self.pieces.append(" " + "".join(texts) + " ")
            self._options = None
        if self._hidden and tag == self._hidden[-1]:
            if self._depth:
                self._depth -= 1
            else:
                self._hidden.pop()
        self.pieces.append(" ")

    def handle_data(self, data: str) -> None:
        if self._hidden:
            return
        if self._options is not None:
            if self._options:
                self._options[-1][1].append(data)
            return
        self.pieces.append(data)


def visible_words(html: str) -> list[str]:
    parser = _VisibleText()
    parser.feed(html)
    parser.close()
    return _WORD.findall("".join(parser.pieces).lower())


def earlier_conversion(html: str) -> str:
    """How HTML became plain text before layout whitespace was collapsed."""
    try:
        text: str = get_text(html)
    except Exception:
        return " ".join(_TAG.sub(" ", html).split())
    return clean_body_text(text)


def _messages_in(path: Path) -> Iterator[bytes]:
    data = path.read_bytes()
    if not data.startswith(b"From "):
        yield data
        return
    box = mailbox.mbox(path, create=False)
    try:
        for key in box.iterkeys():
            yield box.get_bytes(key)
    finally:
        box.close()


def html_only_bodies(corpora: Path) -> list[tuple[str, str]]:
    """(source, HTML) of every corpus message whose plain text is rendered from HTML."""
    seen: list[str] = []

    def watched(html: str) -> str:
        seen.append(html)
        return html_to_text(html)

    found: list[tuple[str, str]] = []
    structure.html_to_text = watched  # type: ignore[attr-defined]
    try:
        for path in sorted((corpora / "messages").rglob("*")):
            if not path.is_file():
                continue
            for index, raw in enumerate(_messages_in(path)):
                seen.clear()
                normalize_message(raw)  # never raises: a failure is recorded as a defect
                relative = path.relative_to(corpora).as_posix()
                found.extend((f"{relative}#{index}", html) for html in seen if html.strip())
    finally:
        structure.html_to_text = html_to_text  # type: ignore[attr-defined]
    return found


_BYTE_ORDER_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def _read_html_file(path: Path) -> str:
    data = path.read_bytes()
    for mark, codec in _BYTE_ORDER_MARKS:
        if data.startswith(mark):
            return data.decode(codec, "replace")
    return decode_bytes(data, None)


def template_bodies(corpora: Path) -> list[tuple[str, str]]:
    root = corpora / "html" / "email-html"
    return [
        (p.relative_to(corpora).as_posix(), _read_html_file(p))
        for p in sorted(root.rglob("*"))
        if p.suffix in (".html", ".xhtml")
    ]


def _recall(words: list[str], text: str) -> tuple[int, int]:
    wanted = collections.Counter(words)
    held = collections.Counter(_WORD.findall(text.lower()))
    return sum((wanted & held).values()), sum(wanted.values())


def measure(
    name: str, bodies: list[tuple[str, str]], convert: Callable[[str], str], worst: int
) -> None:
    characters = words = found = wanted = 0
    ratios: list[tuple[float, str]] = []
    cpu = 0.0
    for source, html in bodies:
        reference = visible_words(html)
        started = time.thread_time()
        text = convert(html)
        cpu += time.thread_time() - started
        characters += len(text)
        words += len(reference)
        hit, total = _recall(reference, text)
        found += hit
        wanted += total
        if reference:
            ratios.append((len(text) / len(reference), source))
    per_word = characters / words if words else 0.0
    median = statistics.median(r for r, _ in ratios) if ratios else 0.0
    print(
        f"  {name:8} {characters:>10,} chars  {per_word:6.2f} chars/visible word "
        f"(median {median:5.2f}, worst {max(ratios)[0] if ratios else 0:8.1f})  "
        f"visible words held {found / wanted if wanted else 1:7.2%}  "
        f"CPU {cpu * 1000 / max(len(bodies), 1):6.2f} ms/body"
    )
    for ratio, source in sorted(ratios, reverse=True)[:worst]:
        print(f"           {ratio:8.1f}  {source}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", type=Path, default=Path("../shared/corpora"))
    parser.add_argument("--worst", type=int, default=0, help="list the N worst bodies")
    args = parser.parse_args()
    if not args.corpora.is_dir():
        sys.exit(f"no corpora at {args.corpora}")
    for title, bodies in (
        ("HTML-only messages (corpora/messages)", html_only_bodies(args.corpora)),
        ("email HTML templates (corpora/html/email-html)", template_bodies(args.corpora)),
    ):
        words = sum(len(visible_words(html)) for _, html in bodies)
        print(f"{title}: {len(bodies)} HTML bodies, {words:,} visible words")
        measure("earlier", bodies, earlier_conversion, args.worst)
        measure("current", bodies, html_to_text, args.worst)


if __name__ == "__main__":
    main()
