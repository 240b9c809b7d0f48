"""What the drafting tools share: annotations, arguments, sentences and the published shape."""

from __future__ import annotations

from typing import Annotated

from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.app.drafting.results import DraftStanding
from mailfathom.app.files.references import attachment_reference
from mailfathom.entrypoints.mcp.draft_models import DraftResult

SAVES = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=True
)
EDITS = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=True
)
DELETES = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=True
)
SHAPES = (
    " A draft is one of two shapes, never both: a message of its own (account and subject) "
    "or an answer to a stored email (answeredEmailId and answering; the account, subject, "
    "threading, quotation and a forward's files are read from that email). No recipient is "
    "required. Nothing is sent: send_draft does that, and only for a caller allowed to send."
)

PlainText = Annotated[
    str,
    Field(
        description="Required. The body as plain text. On an answer it is placed above the "
        "quoted original, which is derived (do not paste it)."
    ),
]
Account = Annotated[
    str | None,
    Field(
        description="A message of its own: the account, by accountId or display name "
        "(list_accounts). Not with answeredEmailId."
    ),
]
Subject = Annotated[
    str | None,
    Field(
        description="A message of its own: the subject, on one line (empty text is allowed). "
        "Not with answeredEmailId."
    ),
]
To = Annotated[
    list[str] | None,
    Field(
        description="Addresses the draft is addressed to, each a plain address. On an answer "
        "they add to whoever the answer reaches. Omitted: nobody."
    ),
]
Cc = Annotated[list[str] | None, Field(description="Addresses to copy. Omitted: none.")]
Bcc = Annotated[
    list[str] | None,
    Field(description="Addresses to copy without naming them to anyone. Omitted: none."),
]
Html = Annotated[
    str | None,
    Field(description="An HTML alternative stored beside the plain text; never blank."),
]
AnsweredEmailId = Annotated[
    str | None,
    Field(
        description="An answer: the storedEmailId of the email answered, with answering. Not "
        "with account or subject."
    ),
]
# Published as the enumeration it is, and bound as any text: a value naming none of the three
# reaches the use case, which refuses it as the contract says (51013), not while binding.
_ANSWERING = WithJsonSchema({"type": "string", "enum": ["senderOnly", "everyone", "forward"]})
AnsweringMode = Annotated[
    Annotated[str, _ANSWERING] | None,
    Field(
        description="With answeredEmailId, no default. senderOnly: whoever asked for answers. "
        "everyone: also the original To and Cc less this account's own addresses. forward: "
        "the original and its files, to the addresses you give."
    ),
]
DraftId = Annotated[str, Field(description="Required. The draftId save_draft answered with.")]


class FileReference(BaseModel):
    """One file a draft carries, named by reference: never its octets."""

    model_config = ConfigDict(extra="forbid")

    storedEmailId: str | None = Field(
        default=None, description="A part of a stored email: the email, with partId."
    )
    partId: str | None = Field(
        default=None,
        description="With storedEmailId: the attachment's partId as get_email_content "
        "describes it.",
    )
    filePath: str | None = Field(
        default=None,
        description="Instead: the absolute path of a file inside a directory the operator "
        "allows (MailDelivery.AttachmentRoots).",
    )
    fileName: str | None = Field(
        default=None,
        description="The name the file travels under. Omitted: the part's own name, or the "
        "path's last component.",
    )
    mediaType: str | None = Field(
        default=None,
        description="type/subtype. Omitted: the part's own type, or one derived from the name.",
    )


Attachments = Annotated[
    list[FileReference] | None,
    Field(
        description="Files the draft carries, each a part of a stored email (storedEmailId "
        "with partId) or a file under an allowed directory (filePath). Read and frozen when "
        "the call is taken, held to the file count and size bounds; a forward's own files "
        "come first and count too. update_draft drops any file it does not name again. "
        "Omitted: none."
    ),
]


def draft_request(
    plain_text_body: str,
    account: str | None,
    subject: str | None,
    to: list[str] | None,
    cc: list[str] | None,
    bcc: list[str] | None,
    html_body: str | None,
    answered_email_id: str | None,
    answering: str | None,
    attachments: list[FileReference] | None,
) -> DraftRequest:
    """The request as written; a file reference that is not well formed is refused (51018),
    so call it inside the tool's run."""
    return DraftRequest(
        plain_text_body=plain_text_body,
        account=account,
        subject=subject,
        to=to,
        cc=cc,
        bcc=bcc,
        html_body=html_body,
        answered_email_id=answered_email_id,
        answering=answering,
        attachments=tuple(
            attachment_reference(
                stored_email_id=a.storedEmailId,
                part_id=a.partId,
                file_path=a.filePath,
                file_name=a.fileName,
                media_type=a.mediaType,
            )
            for a in attachments or ()
        ),
    )


def draft_result(standing: DraftStanding) -> DraftResult:
    return DraftResult(
        draftId=str(standing.draft_id),
        accountId=standing.account_id,
        state=standing.state.value,
        revision=standing.revision,
        recipientCount=standing.recipient_count,
        savedAt=standing.saved_at,
        attachmentCount=standing.attachment_count,
        alreadySent=standing.already_sent,
        outgoingEmailId=str(standing.outgoing_id) if standing.outgoing_id else None,
    )
