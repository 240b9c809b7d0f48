"""Stock openers, transitions and closers of generated mail, in English, Czech and Slovak.

Each entry is one phrase however it is spelled, written folded (lower case, no diacritics, no
apostrophes, punctuation as spaces; see `words`) so "Doufám, že se Vám daří" and "doufam ze se
vam dari" are one phrase. `[a|b]` is a choice of words, `[a|]` an optional one, and `||`
separates word orders of one entry. A careful
writer uses any one of these; what generated mail does is stack them, which is why
`formulaicFraming` fires on two distinct entries and never on one.

Entries are expanded into word sequences once, each indexed by its longest word: a text
holding none of those words (most text) is answered by one set operation in C, and only
where one stands is the sequence around it compared.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence

ENGLISH = (
    "i [hope|trust] [this|that|my] [email|e mail|message|note|letter|] finds you "
    "[well|in good health]",
    "i hope [you are|youre|you have been] [doing|] [well|great|good]",
    "i hope [you are|youre] having a [great|good|wonderful|productive] [day|week]",
    "i am writing to [inform|follow up|let you know|request|inquire|share|reach out|express]",
    "[i wanted to|im|i am|just wanted to] [reach|reaching] out",
    "i wanted to take a moment to",
    "[im|i am] [excited|thrilled|delighted] to [share|announce|let you know|inform]",
    "thank you for reaching out",
    "[it is|its] [worth noting|important to note]",
    "delve [deeper|] into",
    "in todays [fast paced|rapidly evolving|ever changing|digital]",
    "[navigate|navigating] the complexities",
    "a testament to",
    "rest assured",
    "please [do not|dont] hesitate to [reach out|contact|get in touch|let me know]",
    "feel free to [reach out|contact me|get in touch]",
    "let me know if you have any [other|further|additional|more|] questions",
    "if you have any [further|other|additional|] questions or concerns",
    "should you [have|need] any [further|additional|] [questions|assistance|clarification]",
    "[i look|we look|looking] forward to [hearing from you|your response|your reply|your feedback]",
    "thank you for your [time and consideration|understanding|attention to this matter|"
    "patience and understanding]",
    "i hope this [helps|clarifies|information is helpful]",
    "[i would|id] be [happy|glad|more than happy] to [help|assist|discuss|answer]",
    "[i|we] appreciate your [time|understanding|attention|prompt|patience]",
)

CZECH = (
    "doufam ze se [vam|ti] [dari|vede] [dobre|]",
    "doufam ze se [mate|mas] dobre",
    "doufam ze [vas|te] [tento|tato] [e mail|email|zprava] zastihne",
    "[rad|rada] bych [vas|te] [informoval|informovala]",
    "v pripade [jakychkoli|jakychkoliv] [dalsich|] [dotazu|otazek|nejasnosti]",
    "pokud [budete mit|mate] [jakekoli|jakekoliv] [dotazy|otazky]",
    "nevahejte [me|nas] [kontaktovat|oslovit] || [me|nas] nevahejte kontaktovat",
    "nevahejte se na [me|nas] obratit",
    "[tesim|tesime] se na [vasi|tvou|vasi brzkou|] [odpoved|dalsi spolupraci]",
    "[dekuji|dekujeme] [vam|] za [vas cas|vasi trpelivost|pochopeni|vasi pozornost]",
    "je [dulezite|treba] [zminit|poznamenat|zduraznit]",
    "stoji za zminku",
    "v dnesni [rychle|uspechane|dynamicke|digitalni] dobe",
    "doufam ze [vam|ti] [to|tato informace] pomuze",
    "[rad|rada] [vam|ti] [pomohu|pomuzu|s cimkoli pomohu]",
)

SLOVAK = (
    "dufam ze sa [mate|mas] dobre",
    "dufam ze sa [vam|ti] dari",
    "dufam ze [vas|ta] [tento|tato] [e mail|email|sprava] zastihne",
    "[chcel|chcela] by som [vas|ta] informovat",
    "v pripade akychkolvek [dalsich|] [otazok|nejasnosti]",
    "ak [budete mat|mate] akekolvek [otazky|nejasnosti]",
    "nevahajte [ma|nas] kontaktovat || [ma|nas] nevahajte kontaktovat",
    "nevahajte sa na [mna|nas] obratit",
    "[tesim|tesime] sa na [vasu|tvoju|] [odpoved|dalsiu spolupracu]",
    "[dakujem|dakujeme] [vam|] za [vas cas|vasu trpezlivost|trpezlivost|pochopenie|vasu pozornost]",
    "je [dolezite|potrebne] [spomenut|poznamenat|zdoraznit]",
    "stoji za zmienku",
    "v dnesnej [rychlej|uponahlanej|dynamickej|digitalnej] dobe",
    "dufam ze [vam|ti] [to|tato informacia] pomoze",
    "[rad|rada] [vam|ti] pomozem",
)

PHRASES = (*ENGLISH, *CZECH, *SLOVAK)
# An entry's word sequence as bytes, and where in it the word it is indexed by stands.
_Entry = tuple[int, tuple[bytes, ...], int]
_TOKEN = re.compile(r"\[([^\]]*)\]|(\S+)")
_APOSTROPHES = ("'", "\u2019", "\u02bc")
_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
_NOT_WORD_OUTSIDE_ASCII = re.compile(r"[^\x00-\x7f\w]+")
_NOT_WORD_IN_ASCII = bytes(
    byte if chr(byte).isalnum() or byte >= 0x80 else ord(" ") for byte in range(256)
)


def expand(phrase: str) -> frozenset[tuple[str, ...]]:
    """Every word sequence the entry `phrase` stands for."""
    found: set[tuple[str, ...]] = set()
    for form in phrase.split("||"):
        choices = [
            [m.group(2)] if m.group(2) is not None else m.group(1).split("|")
            for m in _TOKEN.finditer(form)
        ]
        found.update(tuple(" ".join(parts).split()) for parts in itertools.product(*choices))
    return frozenset(found)


def _index(phrases: tuple[str, ...]) -> Mapping[bytes, tuple[_Entry, ...]]:
    """Every word sequence of every entry, indexed by its longest word (the first of equals),
    the one least likely to stand in ordinary text."""
    index: dict[bytes, list[_Entry]] = {}
    for number, phrase in enumerate(phrases):
        for sequence in expand(phrase):
            encoded = tuple(word.encode() for word in sequence)
            key = max(encoded, key=len)
            index.setdefault(key, []).append((number, encoded, encoded.index(key)))
    return {key: tuple(entries) for key, entries in index.items()}


_INDEX = _index(PHRASES)


def words(text: str) -> list[bytes]:
    """The words of `text` folded, UTF-8 encoded: lower case, without diacritics or
    apostrophes, split at every character that is not a letter or a digit.

    What is not a word character becomes a space before the text is encoded, except in ASCII,
    where one byte table does it after; so most text costs a few passes in C whatever the
    number of words, and none of them a regular expression that replaces every space."""
    lowered = text.lower()
    if not lowered.isascii():
        lowered = _COMBINING.sub("", unicodedata.normalize("NFKD", lowered))
    for apostrophe in _APOSTROPHES:
        lowered = lowered.replace(apostrophe, "")
    if not lowered.isascii():
        lowered = _NOT_WORD_OUTSIDE_ASCII.sub(" ", lowered)
    return lowered.encode().translate(_NOT_WORD_IN_ASCII).split()


def distinct_phrases(folded: Sequence[bytes], enough: int | None = None) -> int:
    """How many different entries of the tables stand in the folded words `folded` (see
    `words`); counting stops once `enough` are found."""
    if _INDEX.keys().isdisjoint(folded):
        return 0
    found: set[int] = set()
    for key in _INDEX.keys() & set(folded):
        for position in _positions(folded, key):
            for number, phrase, offset in _INDEX[key]:
                start = position - offset
                if (
                    number not in found
                    and start >= 0
                    and tuple(folded[start : start + len(phrase)]) == phrase
                ):
                    found.add(number)
                    if enough is not None and len(found) >= enough:
                        return len(found)
    return len(found)


def _positions(folded: Sequence[bytes], word: bytes) -> Iterator[int]:
    position = -1
    while True:
        try:
            position = folded.index(word, position + 1)
        except ValueError:
            return
        yield position
