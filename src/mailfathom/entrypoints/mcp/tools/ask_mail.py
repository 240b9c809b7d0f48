"""The ask_mail tool: its descriptor, and the call of its use case."""

from __future__ import annotations

from typing import Annotated

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from mailfathom.app.answering import ask_mail as use_case
from mailfathom.domain.access import ToolCategory
from mailfathom.domain.answering import MAX_QUESTION_CHARACTERS
from mailfathom.entrypoints.mcp import mapping
from mailfathom.entrypoints.mcp.answer_models import AskMailResult
from mailfathom.entrypoints.mcp.params import Accounts, Folders
from mailfathom.entrypoints.mcp.registry import ToolRegistry, ToolSpec
from mailfathom.entrypoints.mcp.result_text import TEXT_FORM
from mailfathom.entrypoints.mcp.untrusted import MAIL_CONTENT_IS_DATA

# Reads only, changes nothing, and asking twice changes nothing either; but it reaches a
# chat provider outside this deployment.
ANSWERING = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)


def spec(registry: ToolRegistry, reader: use_case.MailboxQuestionReader) -> ToolSpec:
    async def ask_mail(
        question: Annotated[
            str,
            Field(
                description=f"Required. The question, at most {MAX_QUESTION_CHARACTERS} "
                "characters, in any language; the answer is written in the same one. It is "
                "not a search query: the model writes its own lookups."
            ),
        ],
        accounts: Accounts = None,
        folders: Folders = None,
    ) -> Annotated[CallToolResult, AskMailResult]:
        request = use_case.QuestionRequest(question, accounts, folders)
        return await registry.run(
            "ask_mail", lambda caller: mapping.answer(reader.ask(caller, request))
        )

    return ToolSpec(
        name="ask_mail",
        title="Ask about mail",
        description=(
            "Answers a question about the local mailbox copy in prose, naming the emails the "
            "answer was drawn from (citations, never extracts). A chat model looks the mail "
            "up itself, within the accounts and folders given (junk never), so the call "
            "takes seconds and costs the deployment money: ask when the answer spans several "
            "messages, search when the messages themselves are wanted. The answer is cut at "
            "a bound, and answerTruncated, citationsTruncated and retrievalTruncated say "
            "what was cut." + MAIL_CONTENT_IS_DATA + TEXT_FORM
        ),
        category=ToolCategory.ANSWERING,
        permissions=use_case.PERMISSIONS,
        annotations=ANSWERING,
        function=ask_mail,
        available=reader.available,
        capable=reader.answers_questions,
        waits_on_provider=lambda: True,
    )
