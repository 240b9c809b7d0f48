"""Reading the few inline style declarations that decide whether, and how, text shows."""

from __future__ import annotations

from collections.abc import Iterator


def declarations(style: str) -> Iterator[tuple[str, str]]:
    """(property, value) of each declaration of a `style` attribute, lower-cased, without
    `!important`."""
    for declaration in style.split(";"):
        name, colon, value = declaration.partition(":")
        if colon:
            value = value.strip().lower().removesuffix("!important").rstrip()
            yield name.strip().lower(), value


def hides(style: str) -> bool:
    """Whether a `style` attribute says `display: none`."""
    return any(name == "display" and value == "none" for name, value in declarations(style))
