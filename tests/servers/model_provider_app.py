"""The test model provider as a Flask application speaking OpenAI's HTTP API.

Routes: `POST /v1/embeddings`, `POST /v1/chat/completions`, `GET /v1/models` and
`GET /v1/models/<id>`, each behind the bearer key, answering in OpenAI's shapes and with its
error JSON; and `/control/<operation>`, guarded by the secret the parent wrote in the config
file, through which a test scripts answers, orders failures and reads what was received.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flask import Flask, Response, abort, request
from werkzeug.exceptions import HTTPException

from .model_provider_chat import MODES, ConversationError, answer_mode, check_request
from .model_provider_text import embed, encode_base64, input_tokens, shorten, tool_result_chars
from .model_provider_wire import Answer, check_turn, completion, scripted, stream_events

CONTROL_HEADER = "X-Control-Secret"
ENDPOINTS = ("embeddings", "chat/completions", "models")
FAILURES = ("401", "403", "429", "500", "timeout", "malformed", "notext")
MAX_INPUTS = 2048
DEFAULT_HOLD = 30.0
CREATED = 1_700_000_000
# A route's own answer: the request body, and whether a `notext` failure applies to it.
Handler = Callable[[Any, bool], Response]


@dataclass
class Failure:
    how: str
    remaining: int | None
    hold_seconds: float


@dataclass
class State:
    """Everything a test changes; `reset` puts it back as at start."""

    embedding_model: str
    dimension: int
    chat_models: list[str]
    honour_dimensions: bool = True
    max_input_tokens: int = 8192
    script: deque[dict[str, Any]] = field(default_factory=deque)
    mode: str = "echo"
    mode_options: dict[str, Any] = field(default_factory=dict)
    failures: dict[str, Failure] = field(default_factory=dict)
    exchanges: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    release: threading.Event = field(default_factory=threading.Event)


class Provider:
    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings
        self.lock = threading.Lock()
        self.state = self._fresh()
        self.ids = itertools.count(1)

    def _fresh(self) -> State:
        return State(
            embedding_model=self.settings["embedding_model"],
            dimension=int(self.settings["dimension"]),
            chat_models=list(self.settings["chat_models"]),
        )

    def reset(self) -> None:
        with self.lock:
            self.state.release.set()
            self.state = self._fresh()

    def next_id(self) -> int:
        with self.lock:
            return next(self.ids)

    def record(self, endpoint: str, body: Any) -> dict[str, Any]:
        exchange: dict[str, Any] = {"body": body, "status": None, "tool_result_chars": 0}
        if endpoint == "chat/completions" and isinstance(body, dict):
            exchange["tool_result_chars"] = tool_result_chars(body)
        with self.lock:
            self.state.exchanges.setdefault(endpoint, []).append(exchange)
        return exchange

    def take_failure(self, endpoint: str) -> Failure | None:
        with self.lock:
            failure = self.state.failures.get(endpoint)
            if failure is None:
                return None
            if failure.remaining is not None:
                failure.remaining -= 1
                if failure.remaining <= 0:
                    del self.state.failures[endpoint]
            return failure

    def take_turn(self) -> dict[str, Any] | None:
        with self.lock:
            return self.state.script.popleft() if self.state.script else None


def error(
    status: int, message: str, kind: str, code: str | None = None, param: Any = None
) -> Response:
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return Response(json.dumps(body), status=status, mimetype="application/json")


def invalid(message: str, param: str | None = None) -> Response:
    return error(400, message, "invalid_request_error", None, param)


def ok(body: dict[str, Any]) -> Response:
    return Response(json.dumps(body), status=200, mimetype="application/json")


def failed(how: str) -> Response:
    if how == "401":
        return error(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
    if how == "403":
        return error(
            403,
            "You are not allowed to sample from this model",
            "invalid_request_error",
            "model_not_allowed",
        )
    if how == "429":
        return error(429, "Rate limit reached for requests.", "requests", "rate_limit_exceeded")
    if how == "malformed":
        return Response('{"id": "broken", "object": ', status=200, mimetype="application/json")
    return error(
        500,
        "The server had an error while processing your request. Sorry about that!",
        "server_error",
    )


def create_app(settings: dict[str, Any]) -> Flask:
    app = Flask("mailfathom-test-model-provider")
    provider = Provider(settings)
    api_key: str = settings["api_key"]

    def serve(endpoint: str, handle: Handler) -> Response:
        body: Any = None
        if request.method == "POST":
            text = request.get_data(as_text=True)
            try:
                body = json.loads(text)
            except ValueError:
                body = {"unparsed": text}
        exchange = provider.record(endpoint, body)
        response = answer(endpoint, body, handle)
        exchange["status"] = response.status_code
        response.headers["x-request-id"] = f"req_{provider.next_id()}"
        return response

    def answer(endpoint: str, body: Any, handle: Handler) -> Response:
        header = request.headers.get("Authorization", "")
        key = header[7:].strip() if header.startswith("Bearer ") else ""
        if not key:
            return error(
                401,
                "You didn't provide an API key. You need to provide your API key in an "
                "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
                "invalid_request_error",
            )
        if key != api_key:
            return failed("401")
        failure = provider.take_failure(endpoint)
        if failure is not None and failure.how != "notext":
            refused = held_or_failed(failure)
            if refused is not None:
                return refused
        if request.method == "POST" and not isinstance(body, dict):
            return invalid("We could not parse the JSON body of your request.")
        return handle(body, failure is not None and failure.how == "notext")

    def held_or_failed(failure: Failure) -> Response | None:
        """The failure's answer; None when it held the request and time ran out (then the
        request is answered as usual, late)."""
        if failure.how != "timeout":
            return failed(failure.how)
        if provider.state.release.wait(failure.hold_seconds):
            return error(
                503, "The test provider was reset while holding this request.", "server_error"
            )
        return None

    def embeddings(body: dict[str, Any], notext: bool) -> Response:
        if not isinstance(body.get("model"), str) or not body["model"]:
            return invalid("you must provide a model parameter", "model")
        if body.get("input") is None:
            return invalid("Missing required parameter: 'input'.", "input")
        items = inputs_of(body["input"])
        if not items or len(items) > MAX_INPUTS:
            return invalid("'$.input' is invalid.", "input")
        encoding = body.get("encoding_format") or "float"
        if encoding not in ("float", "base64"):
            return invalid(f"Invalid value for 'encoding_format' = {encoding}.", "encoding_format")
        state = provider.state
        longest = max(input_tokens(item) for item in items)
        if longest > state.max_input_tokens:
            return invalid(
                f"This model's maximum context length is {state.max_input_tokens} tokens, "
                f"however you requested {longest} tokens ({longest} in your prompt; 0 for the "
                "completion). Please reduce your prompt; or completion length.",
                "input",
            )
        dimension = state.dimension
        wanted = body.get("dimensions")
        if wanted is not None and state.honour_dimensions:
            if not isinstance(wanted, int) or isinstance(wanted, bool) or wanted < 1:
                return invalid("Invalid value for 'dimensions'.", "dimensions")
            if wanted > state.dimension:
                return invalid(
                    f"Invalid value for 'dimensions' = {wanted}. Must be less than or equal "
                    f"to {state.dimension}.",
                    "dimensions",
                )
            dimension = wanted
        data: list[dict[str, Any]] = []
        for index, item in enumerate([] if notext else items):
            vector = shorten(embed(item, state.dimension), dimension)
            value: Any = encode_base64(vector) if encoding == "base64" else vector
            data.append({"object": "embedding", "index": index, "embedding": value})
        tokens = sum(input_tokens(item) for item in items)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return ok({"object": "list", "data": data, "model": state.embedding_model, "usage": usage})

    def chat(body: dict[str, Any], notext: bool) -> Response:
        try:
            check_request(body)
        except ConversationError as wrong:
            return invalid(str(wrong), wrong.param)
        turn = None if notext else provider.take_turn()
        if turn is not None and "fail" in turn:
            how = str(turn["fail"])
            if how == "notext":
                notext = True
            else:
                hold = float(turn.get("hold_seconds", DEFAULT_HOLD))
                refused = held_or_failed(Failure(how, 1, hold))
                if refused is not None:
                    return refused
            turn = None if notext else provider.take_turn()
        if notext:
            reply = Answer(None, [])
        elif turn is not None:
            reply = scripted(turn)
        else:
            with provider.lock:
                mode, options = provider.state.mode, dict(provider.state.mode_options)
            reply = answer_mode(mode, options, body)
        completed = completion(body, reply, provider.next_id())
        if body.get("stream"):
            options = body.get("stream_options") or {}
            events = stream_events(completed, bool(options.get("include_usage")))
            return Response(events, status=200, mimetype="text/event-stream")
        return ok(completed)

    def models(model_id: str | None) -> Response:
        state = provider.state
        listed = [
            {"id": name, "object": "model", "created": CREATED, "owned_by": "mailfathom-test"}
            for name in [state.embedding_model, *state.chat_models]
        ]
        if model_id is None:
            return ok({"object": "list", "data": listed})
        for entry in listed:
            if entry["id"] == model_id:
                return ok(entry)
        return error(
            404,
            f"The model '{model_id}' does not exist",
            "invalid_request_error",
            "model_not_found",
            "model",
        )

    @app.post("/v1/embeddings")
    def embeddings_route() -> Response:
        return serve("embeddings", embeddings)

    @app.post("/v1/chat/completions")
    def chat_route() -> Response:
        return serve("chat/completions", chat)

    @app.get("/v1/models")
    def models_route() -> Response:
        return serve("models", lambda _body, notext: models_listing(notext))

    @app.get("/v1/models/<path:model_id>")
    def model_route(model_id: str) -> Response:
        return serve("models", lambda _body, _notext: models(model_id))

    def models_listing(notext: bool) -> Response:
        return ok({"object": "list", "data": []}) if notext else models(None)

    @app.errorhandler(Exception)
    def broken(failure: Exception) -> Response:
        """A fault of the provider itself (its traceback is in its log, `server.log`): a
        500 whose message says so, never taken for a failure a test ordered."""
        if isinstance(failure, HTTPException):
            return failure.get_response()  # type: ignore[return-value]
        app.logger.exception("the test model provider failed")
        return error(500, f"test provider fault: {type(failure).__name__}", "provider_fault")

    @app.errorhandler(404)
    @app.errorhandler(405)
    def unknown(_: Exception) -> Response:
        return error(404, f"Invalid URL ({request.method} {request.path})", "invalid_request_error")

    @app.post("/control/<operation>")
    def control(operation: str) -> Response:
        if request.headers.get(CONTROL_HEADER) != settings["control_secret"]:
            abort(403)
        arguments = request.get_json(force=True) or {}
        try:
            result = operate(provider, operation, arguments)
        except (KeyError, TypeError, ValueError) as refused:
            body = json.dumps({"error": f"{type(refused).__name__}: {refused}"})
            return Response(body, 400, mimetype="application/json")
        return ok({"result": result})

    return app


def inputs_of(value: Any) -> list[str | list[int]] | None:
    """The texts (or token lists) of an embeddings `input`; None when it is not one."""
    if isinstance(value, str):
        return [value] if value else None
    if not isinstance(value, list) or not value:
        return None
    if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return [list(value)]
    items: list[str | list[int]] = []
    for item in value:
        if isinstance(item, str) and item:
            items.append(item)
        elif isinstance(item, list) and item and all(isinstance(v, int) for v in item):
            items.append(list(item))
        else:
            return None
    return items


def operate(provider: Provider, operation: str, arguments: dict[str, Any]) -> Any:
    """One control operation (the methods of `servers.model_provider.ModelProvider`)."""
    if operation == "reset":
        provider.reset()
        return None
    state = provider.state
    with provider.lock:
        if operation == "set_embedding_model":
            dimension = int(arguments["dimension"])
            if dimension < 1:
                raise ValueError("a dimension is at least 1")
            state.embedding_model = str(arguments["model"])
            state.dimension = dimension
            state.honour_dimensions = bool(arguments.get("honour_dimensions", True))
            state.max_input_tokens = int(arguments.get("max_input_tokens", 8192))
            return None
        if operation == "set_chat_models":
            state.chat_models = [str(name) for name in arguments["models"]]
            return None
        if operation == "script_chat":
            state.script = deque(check_turn(turn) for turn in arguments["turns"])
            return None
        if operation == "set_chat_mode":
            if arguments["mode"] not in MODES:
                raise ValueError(f"a mode is one of {MODES}")
            state.mode = arguments["mode"]
            state.mode_options = dict(arguments.get("options") or {})
            return None
        if operation == "fail":
            endpoint, how = endpoint_name(arguments["endpoint"]), str(arguments["how"])
            times = arguments.get("times")
            if how not in FAILURES:
                raise ValueError(f"a failure is one of {FAILURES}")
            if times is not None and int(times) < 1:
                raise ValueError("times is at least 1, or None for until reset")
            hold = float(arguments.get("hold_seconds") or DEFAULT_HOLD)
            state.failures[endpoint] = Failure(how, None if times is None else int(times), hold)
            return None
        if operation == "exchanges":
            return list(state.exchanges.get(endpoint_name(arguments["endpoint"]), []))
        if operation == "script_left":
            return len(state.script)
    raise KeyError(f"no control operation {operation}")


def endpoint_name(name: str) -> str:
    """`embeddings`, `chat/completions` or `models`, also written `/v1/...` or `chat`."""
    short = name.strip("/").removeprefix("v1/")
    short = "chat/completions" if short == "chat" else short
    if short not in ENDPOINTS:
        raise ValueError(f"an endpoint is one of {ENDPOINTS}")
    return short
