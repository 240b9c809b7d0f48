"""The console's words for its live pages, in English, Czech and Slovak: what a screen reader
is told when an open page brings itself up to date, and the notes on a waiting draft that
changed or went away under an open page."""

from __future__ import annotations

from dataclasses import dataclass

from mailfathom.app.confirmation.wording import Language


@dataclass(frozen=True, slots=True)
class LiveWording:
    updated: str
    # On a waiting draft changed since the page showed it; the page keeps what it showed.
    changed: str
    gone: str


LIVE_WORDINGS: dict[Language, LiveWording] = {
    Language.EN: LiveWording(
        updated="This page was brought up to date.",
        changed=(
            "This draft was changed after this page showed it. Load the page again to see "
            "it as it would be sent; Send refuses the version shown here."
        ),
        gone="This draft is no longer waiting (sent or deleted elsewhere).",
    ),
    Language.CS: LiveWording(
        updated="Stránka byla aktualizována.",
        changed=(
            "Tento koncept se změnil poté, co ho stránka zobrazila. Načtěte stránku znovu, "
            "abyste ho viděli tak, jak by byl odeslán; Odeslat zde zobrazenou verzi odmítne."
        ),
        gone="Tento koncept už nečeká (byl odeslán nebo smazán jinde).",
    ),
    Language.SK: LiveWording(
        updated="Stránka bola aktualizovaná.",
        changed=(
            "Tento koncept sa zmenil potom, čo ho stránka zobrazila. Načítajte stránku znova, "
            "aby ste ho videli tak, ako by bol odoslaný; Odoslať tu zobrazenú verziu odmietne."
        ),
        gone="Tento koncept už nečaká (bol odoslaný alebo zmazaný inde).",
    ),
}
