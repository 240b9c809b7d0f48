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


# Every answer a person (or a client that cannot ask one) gives, by name: for a test that
# whatever the answer, a call ends the same way, or that nobody is asked at all.
ANSWERS: dict[str, Callable[[Question], Answer]] = {
    "send": lambda q: Answer(AnswerKind.CHOSEN, q.binding, Choice.SEND),
    "save-draft": lambda q: Answer(AnswerKind.CHOSEN, q.binding, Choice.SAVE_DRAFT),
    "cancel": lambda q: Answer(AnswerKind.CHOSEN, q.binding, Choice.CANCEL),
    "decline": lambda q: Answer(AnswerKind.DECLINED, q.binding),
    "nobody-to-ask": lambda q: Answer(AnswerKind.UNAVAILABLE),
}


def chooses(choice: Choice, meanwhile: Callable[[], object] = lambda: None) -> ScriptedPerson:
    """A person who chooses `choice` for the question they were shown."""
    return ScriptedPerson(lambda q: Answer(AnswerKind.CHOSEN, q.binding, choice), meanwhile)


_: Confirmation = chooses(Choice.CANCEL)
