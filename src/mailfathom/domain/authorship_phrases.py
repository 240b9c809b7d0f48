"""Stock openers, transitions and closers of generated mail, in English, Czech and Slovak.

Each entry is one phrase however it is spelled, written folded (lower case, no diacritics, no
apostrophes, punctuation as spaces; see `fold`) so "Doufám, že se Vám daří" and "doufam ze se
vam dari" are one phrase. `[a|b]` is a choice of words, `[a|]` an optional one, and `||`
separates word orders of one entry. A careful
writer uses any one of these; what generated mail does is stack them, which is why
`formulaicFraming` fires on two distinct entries and never on one.

Entries are expanded into word sequences once, indexed by their first two words (every entry
has at least two), so finding them costs one dictionary look-up per pair of adjacent words.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Mapping

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
_Entry = tuple[int, tuple[str, ...]]
_TOKEN = re.compile(r"\[([^\]]*)\]|(\S+)")
_APOSTROPHES = re.compile("['\u2019\u02bc]")
_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
_NOT_WORD = re.compile(r"[\W_]+")


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


def _index(phrases: tuple[str, ...]) -> Mapping[tuple[str, str], tuple[_Entry, ...]]:
    index: dict[tuple[str, str], list[_Entry]] = {}
    for number, phrase in enumerate(phrases):
        for words in expand(phrase):
            index.setdefault((words[0], words[1]), []).append((number, words))
    return {pair: tuple(entries) for pair, entries in index.items()}


_INDEX = _index(PHRASES)


def fold(text: str) -> str:
    """`text` lower case, without diacritics or apostrophes, every run of other characters
    that are not letters or digits one space."""
    lowered = text.lower()
    if not lowered.isascii():
        lowered = _COMBINING.sub("", unicodedata.normalize("NFKD", lowered))
    return _NOT_WORD.sub(" ", _APOSTROPHES.sub("", lowered)).strip()


def distinct_phrases(folded: str) -> int:
    """How many different entries of the tables stand in the folded text `folded`."""
    words = folded.split()
    pairs = list(itertools.pairwise(words))
    if _INDEX.keys().isdisjoint(pairs):
        return 0
    found: set[int] = set()
    for position, pair in enumerate(pairs):
        for number, phrase in _INDEX.get(pair, ()):
            if number not in found and tuple(words[position : position + len(phrase)]) == phrase:
                found.add(number)
    return len(found)
