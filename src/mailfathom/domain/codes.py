"""The registry of stable five-digit failure codes a caller can be shown.

The first digit is the category (see `errors.Category`); every code here belongs to the
boundary category, so it is published to a caller as it stands. A code is never reused for a
different meaning, and a failure from any other category is shown as `UNDIAGNOSED`.
"""

from __future__ import annotations

import enum


class Code(enum.IntEnum):
    # 51xxx: the request itself carries something no call can be served with.
    PAGE_SIZE_OUT_OF_RANGE = 51001
    FILTER_NOT_ACCEPTED = 51002
    RESULT_LIMIT_OUT_OF_RANGE = 51003
    NOT_AN_EMAIL_IDENTIFIER = 51004
    EMAIL_COUNT_OUT_OF_RANGE = 51005
    EMAIL_NAMED_TWICE = 51006
    SELECTION_AMBIGUOUS = 51007
    NOT_A_THREAD_IDENTIFIER = 51008
    CONTACT_LISTING_NOT_ACCEPTED = 51009
    NOT_A_CONTACT_IDENTIFIER = 51010
    CONTACT_RULE_BROKEN = 51011
    FLAG_CHANGE_NOT_ACCEPTED = 51012
    MESSAGE_FIELD_NOT_COMPOSABLE = 51013
    MESSAGE_TOO_LARGE = 51014
    NOT_AN_OUTGOING_IDENTIFIER = 51016
    ARGUMENTS_NOT_MATCHING_SCHEMA = 51017
    FILE_REQUEST_NOT_ACCEPTED = 51018
    ORGANIZE_REQUEST_NOT_ACCEPTED = 51020
    # 52xxx: continuation cursors.
    CURSOR_NOT_ISSUED_HERE = 52001
    CURSOR_FOR_OTHER_FILTERS = 52002
    CONTACT_CURSOR_NOT_ISSUED_HERE = 52003
    # 53xxx: the request names something this deployment does not serve to this caller.
    ACCOUNT_NOT_SERVED = 53001
    EMAIL_NOT_HELD = 53002
    FOLDER_ROLE_NOT_MAPPED = 53003
    CONTACT_NOT_RESOLVED = 53004
    EMAIL_NOT_ANSWERABLE = 53005
    RECIPIENT_NOT_ADMITTED = 53006
    OUTGOING_NOT_KNOWN = 53007
    DRAFT_NOT_HELD = 53008
    RECIPIENT_NOT_VOUCHED = 53009
    DRAFT_WITHOUT_RECIPIENTS = 53010
    FILE_NOT_SERVED = 53011
    DESTINATION_NOT_SERVED = 53012
    # A message carrying sensitive content of a screened category is not queued.
    OUTGOING_SENSITIVE_CONTENT = 53013
    # 54001: anything the boundary deliberately does not describe.
    UNDIAGNOSED = 54001
    # 55xxx-58xxx: states of this deployment a caller may act on.
    CONTENT_UNAVAILABLE = 55001
    # The sensitive-content scanner could not answer: mail text is withheld (55002), or a
    # message leaving is not queued (55003), rather than passed on unscanned.
    SENSITIVE_SCAN_FAILED = 55002
    OUTGOING_SCAN_FAILED = 55003
    ANSWERING_UNAVAILABLE = 56001
    SENDING_NOT_CONFIGURED = 56002
    SENDING_NOT_ENABLED = 56003
    FILES_NOT_ENABLED = 56004
    ANSWERING_BUDGET_SPENT = 57001
    SEND_CEILING_REACHED = 57002
    STATE_ALREADY_PASSED = 58001
    FILE_ALREADY_EXISTS = 58002
    # 59xxx: a person asked before a message leaves did not say Send to what is sent.
    CONFIRMATION_DECLINED = 59001
    CONFIRMATION_EXPIRED = 59002
    CONFIRMATION_NOT_UNDERSTOOD = 59003
    CONFIRMATION_OUTDATED = 59004
    DRAFT_SAVED_OWNER_NOT_ALERTED = 59005
    # Nobody was asked: the caller already keeps as many questions waiting for a person as
    # McpEndpoint.QuestionsWaitingPerCaller allows.
    QUESTIONS_WAITING_BOUND_REACHED = 59006
    # A download link (the HTTP entrypoint's, not a tool's) grants nothing: it is not one this
    # deployment sealed (malformed or altered), it has expired, the key it was sealed with is
    # no longer in the ring, or the file it fetched is no longer served.
    DOWNLOAD_LINK_NOT_RECOGNIZED = 59007
    DOWNLOAD_LINK_EXPIRED = 59008
    DOWNLOAD_LINK_KEY_RETIRED = 59009
    DOWNLOAD_FILE_GONE = 59010


class DeliveryCode(enum.IntEnum):
    """Why a delivery attempt failed, as an outgoing record keeps it (category 7).

    These are read by whoever looks at a send afterwards (`get_outgoing_email`'s
    `failureCode`, `mfctl outbox`); the record keeps the code and never a server's text, which
    may repeat what a remote party wrote."""

    # The submission server refused every recipient, or the message itself, for good (5xx).
    REFUSED_BY_SERVER = 71001
    # Temporary failures (4xx, no connection) until the configured attempts were spent.
    ATTEMPTS_SPENT = 71002
    # The connection ended after the message was handed over and before the server answered:
    # it may have been accepted, so it is never offered again.
    OUTCOME_UNKNOWN = 71003
    # A recipient outside this deployment, and the account declares no submission server.
    NO_ROUTE = 71004
    # The submission server did not accept the account's credentials.
    NOT_AUTHENTICATED = 71005
    # A temporary failure; the send is queued again (on the record while it waits).
    TEMPORARY_FAILURE = 71006
    # A peer mailbox of this deployment could not take the message.
    PEER_DELIVERY_FAILED = 71007
    # The secret the account's submission server is logged in with could not be read (an
    # unset variable, a missing file): nothing was offered, and trying again cannot help
    # until an operator acts.
    SECRET_UNREADABLE = 71008
    # The account logs in with OAuth and the provider refused its grant: the send waits,
    # queued, until a person grants access again (`mfctl account consent`); such waiting
    # uses up none of its attempts.
    WAITING_FOR_CONSENT = 71009


class CommandCode(enum.IntEnum):
    """Why an operator's command refused its input (category 1: shown to whoever ran it)."""

    # The source `mailfathom import` was given does not exist or is not mail in any shape the
    # import reads (a Maildir, a folder of .eml files, one .eml file, an mbox file).
    IMPORT_SOURCE_NOT_MAIL = 11003
    # `mailfathom init` would write where a file already is; it never replaces one.
    CONFIGURATION_FILE_EXISTS = 11004
    # `mailfathom init` runs without prompting and a value it needs was not given as a flag,
    # or a value given cannot be used.
    INIT_ANSWER_MISSING = 11005
    INIT_ANSWER_NOT_USABLE = 11006
    # `--log-level` or MAILFATHOM_LOG_LEVEL names no level (debug, info, warning, error,
    # critical).
    LOG_LEVEL_NOT_KNOWN = 11007
    # The port to serve MCP on is not from 1 to 65535.
    LISTEN_PORT_OUT_OF_RANGE = 11008
    # The address to serve MCP on cannot be listened on: the port is in use, the address is
    # not one of this machine's, or listening there is not permitted.
    LISTEN_ADDRESS_UNAVAILABLE = 11009
    # The host to serve MCP on does not resolve to an address.
    LISTEN_HOST_NOT_RESOLVED = 11010
    # The file `mfctl contact import` reads cannot be read, or the one `mfctl contact export`
    # writes cannot be written.
    CARD_FILE_UNUSABLE = 11011
    # `mfctl contact update` was given no option to change.
    CONTACT_UPDATE_EMPTY = 11012
    # `mfctl mailbox reverify` found no sender verifier and no authorship assessor wired.
    NO_TRUST_PORTS = 11013
    # Granting a mail account access with OAuth (`init --provider`, `mfctl account consent`):
    # the person declined at the provider (`access_denied`).
    GRANT_DENIED = 11016
    # Nobody approved in time: the device code expired (`expired_token`), or no redirect came
    # back to the loopback listener before it stopped waiting.
    GRANT_EXPIRED = 11017
    # The loopback listener was reached with a `state` this flow did not issue, or with
    # neither a code nor an error: nothing was exchanged, as the answer may be forged.
    GRANT_REDIRECT_NOT_RECOGNIZED = 11018
    # The file the granted refresh token goes to cannot be created or written.
    REFRESH_TOKEN_NOT_WRITABLE = 11019
    # `mfctl account consent` named an account that does not log in with OAuth.
    ACCOUNT_NOT_OAUTH = 11020
    # The refresh token's file belongs to another user than the one running the command,
    # which could not give a replacement the same owner: left as it is, for that user (or
    # root) to run the command.
    REFRESH_TOKEN_FILE_OF_ANOTHER_USER = 11021
    # The active embedding profile's weights file is not the one the configuration names:
    # its SHA-256 differs from `WeightsSha256`.
    EMBEDDING_WEIGHTS_MISMATCH = 11024
    # The package the active embedding profile loads its model from is not installed, or a
    # file the model needs is missing from it.
    EMBEDDING_MODEL_NOT_INSTALLED = 11025
    # The model's files are there but the model cannot be loaded from them.
    EMBEDDING_MODEL_NOT_LOADED = 11026
    # `mfctl mailbox embed` found no embedding profile active: nothing to embed with.
    NO_EMBEDDING_PROFILE = 11027
    # `mfctl mailbox embed` stopped because the provider could not embed; what it recorded
    # is kept, and the next run resumes after it. The provider's own code (11033-11036) is named.
    EMBEDDING_STOPPED = 11028
    # `mfctl console set-password` read no password, or one the console cannot take (too
    # short, too long, a line break or NUL in it).
    CONSOLE_PASSWORD_NOT_USABLE = 11040
    # `mfctl console first-passkey` printed no code: the owner has a password or a passkey
    # already, so further passkeys are added signed in.
    CONSOLE_FIRST_PASSKEY_CLOSED = 11041
    # `serve` was asked for more than one process on SQLite, whose one writer the processes
    # would queue behind and whose file each would hold open: one process serves it.
    PROCESSES_NEED_POSTGRESQL = 11042
    # `serve --stdio` was asked for more than one process: a desktop client speaks to one.
    PROCESSES_OVER_STDIO = 11043
    # More than one serving process without McpEndpoint.Replicas: sessions and questions
    # waiting for a person would live in one process only.
    PROCESSES_NEED_REPLICAS = 11044
    # `mailfathom worker --id` names the worker in the lease rows, which hold up to 128
    # characters and no control character; a longer name or one with a control character
    # is refused before anything starts.
    WORKER_ID_NOT_USABLE = 11045
    # Not a refusal but a notice: `mfctl account consent` got a grant, could not tell from
    # the trial login whose it is (the server unreachable, Ctrl-C, the file not writable),
    # and left it unwithdrawn at the provider, since at some (Google) withdrawing it ends
    # the account's current access as well. Nothing of it is kept here.
    GRANT_NOT_WITHDRAWN = 11046


class EmbeddingCode(enum.IntEnum):
    """Why the embedding provider could not embed, as the operator's log keeps it (category
    1: the operator's; a tool caller is never shown one: a search answers lexically and says
    `degraded`, a question is answered 54001)."""

    # The endpoint refused the credential (401 or 403).
    PROVIDER_REFUSED = 11033
    # No answer in time, the connection refused or broken, or a server error (5xx).
    PROVIDER_UNREACHABLE = 11034
    # The answer is of another model than the profile names, or of another dimension.
    PROVIDER_MISMATCH = 11035
    # The answer is not a valid embeddings response (not JSON, vectors missing, not numbers).
    PROVIDER_MALFORMED = 11036


class AnsweringCode(enum.IntEnum):
    """Why the chat provider failed a question (category 1: the operator's, in the log and in
    the chat role's health record). A caller is told 54001 for each: none describes anything
    the caller configured or can reach."""

    # The chat endpoint refused the request: its credential (401, 403) or the request (any
    # other 4xx, such as a model it does not serve).
    CHAT_REFUSED = 11030
    # The chat endpoint gave no usable answer within the call's budget: a timeout, no
    # connection, a 429 or a 5xx.
    CHAT_UNREACHABLE = 11031
    # The chat endpoint answered with no text and no lookup, or with something that is not a
    # chat completion.
    CHAT_NO_TEXT = 11032


class CheckCode(enum.IntEnum):
    """Why a server given to `mailfathom init` could not be used (category 7): a submission
    server (nothing is sent by the check: it connects, protects the session and logs in), or
    the authorization server a grant of access is asked from."""

    SUBMISSION_UNREACHABLE = 72001
    SUBMISSION_CREDENTIALS_REFUSED = 72002
    # An authorization server asked for a grant of access to a mail account (RFC 8414, 8628,
    # 6749) published no usable metadata for the issuer given (none, malformed, breaking a
    # rule of RFC 8414, or naming another issuer) ...
    AUTHORIZATION_METADATA_UNUSABLE = 72006
    # ... could not be reached, or answered something that is not OAuth ...
    AUTHORIZATION_SERVER_UNREACHABLE = 72007
    # ... refused the request (its RFC 6749 error, such as `invalid_client` or
    # `invalid_scope`, is named), or granted access without a refresh token to keep it ...
    AUTHORIZATION_REQUEST_REFUSED = 72008
    # ... or offers no endpoint for the flow chosen (or, like Google for mail scopes, does not
    # grant them through it).
    AUTHORIZATION_FLOW_NOT_OFFERED = 72009


class StoreCode(enum.IntEnum):
    """Why the store could not be opened (category 2: shown to the operator)."""

    # Store.DataDir (or a directory or file under it) cannot be created or written.
    DATA_DIR_NOT_WRITABLE = 21002
    # The store's database cannot be opened: the server does not answer or refuses the
    # connection, or the embedded database file cannot be opened.
    DATABASE_NOT_OPENED = 21003
    # The object store message content is kept in (`[Store] ContentStore = "s3"`) gave no
    # answer in time, refused the connection, or answered with a server error: the content
    # is neither written nor reported missing, and the work is tried again later.
    OBJECT_STORE_UNREACHABLE = 21004
    # The object store refused the request: its credentials (403), a bucket that does not
    # exist, or a request it does not take.
    OBJECT_STORE_REFUSED = 21005
    # `ContentStore = "s3"` is configured and the S3 client is not installed (the `s3`
    # extra: `pip install "mailfathom[s3]"`).
    OBJECT_STORE_CLIENT_NOT_INSTALLED = 21006
    # Store.Partitions cannot be applied: SQLite, a number out of range, a database
    # partitioned in another number, or one already holding mail (docs/scaling.md).
    PARTITIONING_REFUSED = 21007
