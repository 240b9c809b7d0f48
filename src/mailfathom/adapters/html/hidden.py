"""Text a person reading the mail never sees, found so that it can be removed.

Mail hides text from its reader for reasons of its own (a preheader meant for the inbox
list) and to address someone else: a program that reads the markup. Neither the plain text
nor the sanitized HTML may hold words a person never saw, so these go with their content:

- elements hidden whole: the `hidden` attribute, `display: none`, an opacity under 0.1, a
  box of zero height or width that hides what overflows it (the preheader trick);
- text hidden where it stands: `visibility: hidden` (or `collapse`), a font smaller than
  3 pixels (`font-size: 0`, `font: 0/0 a`), and text whose colour is transparent or the
  colour of what is behind it (white on white). These are inherited, and a descendant that
  sets a visible size, colour or visibility of its own shows again, as on screen; so the
  text of such an element is removed, and its child elements are judged one by one.

The page background is taken to be white; behind an element the background is the nearest
colour set on it or an ancestor (`background-color`, a `background` shorthand, `bgcolor`).
Where an image lies behind the text, what shows there is not known and no colour test is
made. Colours match when every channel lies within 10 of the other's (of 255).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from lxml.html import HtmlElement

from mailfathom.adapters.html.inline_style import (
    ROOT_FONT_PX,
    Colour,
    background_colour,
    colour,
    declarations,
    font_shorthand_size_px,
    font_size_px,
    is_zero_length,
)

TINY_FONT_PX = 3.0
_FAINT_OPACITY = 0.1
_NEAR = 10
_WHITE: Colour = (255, 255, 255, 1.0)
_BLACK: Colour = (0, 0, 0, 1.0)


@dataclass(frozen=True, slots=True)
class Appearance:
    """What an element's text inherits: its colour, what lies behind it (None: unknown),
    its size in pixels and whether it is visible."""

    colour: Colour = _BLACK
    background: Colour | None = _WHITE
    font_px: float = ROOT_FONT_PX
    visible: bool = True

    def hides_text(self) -> bool:
        if not self.visible or self.font_px < TINY_FONT_PX or self.colour[3] < _FAINT_OPACITY:
            return True
        back = self.background
        return back is not None and all(
            abs(a - b) <= _NEAR for a, b in zip(self.colour[:3], back[:3], strict=True)
        )


PAGE = Appearance()


def hidden_whole(attributes: Mapping[str, str | None]) -> bool:
    """Whether an element's own attributes hide it and everything in it."""
    if "hidden" in attributes:
        return True
    style = dict(declarations(attributes.get("style") or ""))
    if style.get("display") == "none":
        return True
    opacity = style.get("opacity", "").strip()
    if opacity:
        try:
            value = float(opacity[:-1]) / 100 if opacity.endswith("%") else float(opacity)
        except ValueError:
            value = 1.0
        if value < _FAINT_OPACITY:
            return True
    clipped = {style.get(k) for k in ("overflow", "overflow-y", "overflow-x")} & {"hidden", "clip"}
    if clipped:
        for box in ("height", "max-height", "width", "max-width"):
            if box in style and is_zero_length(style[box]):
                return True
    return False


def appearance(attributes: Mapping[str, str | None], parent: Appearance) -> Appearance:
    """The appearance of an element's text, from its parent's and its own attributes."""
    found = parent
    for value in (attributes.get("color"), attributes.get("text")):
        painted = colour(value) if value else None
        if painted is not None:
            found = replace(found, colour=painted)
    behind = attributes.get("bgcolor")
    if behind:
        found = _behind(found, colour(behind))
    # An image lies over the background colour, whichever is named first.
    image = bool(attributes.get("background"))
    for name, value in declarations(attributes.get("style") or ""):
        if name == "color":
            painted = colour(value)
            if painted is not None:
                found = replace(found, colour=painted)
        elif name == "background-color":
            found = _behind(found, colour(value))
        elif name == "background":
            found = _behind(found, background_colour(value))
            image = image or "url(" in value or "gradient(" in value
        elif name == "background-image":
            image = image or value != "none"
        elif name in ("font-size", "font"):
            read = (font_size_px if name == "font-size" else font_shorthand_size_px)(
                value, parent.font_px
            )
            if read is not None:
                found = replace(found, font_px=read)
        elif name == "visibility":
            found = replace(found, visible=value not in ("hidden", "collapse"))
    return replace(found, background=None) if image else found


def _behind(found: Appearance, painted: Colour | None) -> Appearance:
    if painted is None:
        return replace(found, background=None)
    if painted[3] == 0:  # transparent: what is behind shows through
        return found
    if painted[3] < 1:
        return replace(found, background=None)
    return replace(found, background=painted)


def remove_hidden(root: HtmlElement) -> None:
    """Remove from the tree under `root` every element hidden whole, and the text of those
    whose text is hidden (see the module's account)."""
    doomed: list[HtmlElement] = []
    stack: list[tuple[HtmlElement, Appearance]] = [(root, PAGE)]
    while stack:
        element, inherited = stack.pop()
        attributes = element.attrib
        if hidden_whole(attributes):
            doomed.append(element)
            continue
        seen = appearance(attributes, inherited)
        if seen.hides_text():
            element.text = None
            for child in element:
                child.tail = None
        for child in element:
            if not isinstance(child.tag, str):
                continue
            if child.tag == "img" and not seen.visible:
                doomed.append(child)
            else:
                stack.append((child, seen))
    for element in doomed:
        element.drop_tree()
