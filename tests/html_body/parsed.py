"""A sanitized document read back by the standard library's HTML tokenizer, independently of
the sanitizer: its elements with their attributes, how deep they nest and the text it shows."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
     "track", "wbr"}
)  # fmt: skip


@dataclass
class Parsed:
    elements: list[tuple[str, dict[str, str | None]]] = field(default_factory=list)
    depth: int = 0
    text: str = ""
    comments: int = 0


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parsed = Parsed()
        self._open: list[str] = []
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.parsed.elements.append((tag, dict(attrs)))
        if tag not in _VOID:
            self._open.append(tag)
            self.parsed.depth = max(self.parsed.depth, len(self._open))
        self._text.append(" ")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.parsed.elements.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag in self._open:
            while self._open.pop() != tag:
                pass
        self._text.append(" ")

    def handle_data(self, data: str) -> None:
        self._text.append(data)

    def handle_comment(self, data: str) -> None:
        self.parsed.comments += 1


def parse(html: str) -> Parsed:
    reader = _Reader()
    reader.feed(html)
    reader.close()
    reader.parsed.text = " ".join("".join(reader._text).split())
    return reader.parsed
