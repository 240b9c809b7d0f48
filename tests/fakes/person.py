"""The person a client puts a question in front of (`Confirmation`), answering as a test
scripts them and remembering what they were asked."""

from __future__ import annotations

from collections.abc import Callable

from mailfathom.app.confirmation.ports import Answer, AnswerKind, Choice, Confirmation, Question


class ScriptedPerson:
    def __init__(
        self,
        answer: Callable[[Question], Answer],
        meanwhile: Callable[[], object] = lambda: None,
    ) -> None:
        """`meanwhile` runs while the question waits for the answer (somebody else's edit,
        say)."""
        self._answer = answer
        self._meanwhile = meanwhile
        self.asked: list[Question] = []

    def ask(self, question: Question) -> Answer:
        self.asked.append(question)
        self._meanwhile()
        return self._answer(question)


def chooses(choice: Choice, meanwhile: Callable[[], object] = lambda: None) -> ScriptedPerson:
    """A person who chooses `choice` for the question they were shown."""
    return ScriptedPerson(lambda q: Answer(AnswerKind.CHOSEN, q.binding, choice), meanwhile)


_: Confirmation = chooses(Choice.CANCEL)
