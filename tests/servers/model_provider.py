"""Start, script and stop the test model provider (`model_provider_main.py`).

The provider is a process of its own on 127.0.0.1, stopped by its pid, speaking OpenAI's HTTP
API as the `openai` client and plain HTTP clients use it: `POST /v1/embeddings`,
`POST /v1/chat/completions` (with tools), `GET /v1/models`, behind a bearer key, answering in
OpenAI's shapes and error JSON. A test scripts it and reads what it received through the
methods of `ModelProvider`, which post to a control route guarded by a secret made here.

What it answers (details in `model_provider_text` and `model_provider_chat`):
- embeddings: unit vectors of the configured dimension from a hashed bag of words and
  character trigrams (texts sharing words are close), under the configured model name whatever
  model was asked for; `dimensions` shortens them unless `honour_dimensions` is off;
- chat: the scripted turns, then the chat mode (`echo`, `obedient`, `runaway`), whole or
  streamed (`stream`, with `stream_options.include_usage`); usage counts words and
  punctuation marks (`model_provider_text.prompt_tokens`);
- requests the API refuses (a `tool` message answering no call, a call left unanswered, an
  empty input, ...) are refused with 400 as the API does.

The `openai` client retries 408, 409, 429, 5xx answers and timeouts twice by default: a test
counting requests gives it `max_retries=0`.
"""

from __future__ import annotations

import json
import os
import secrets
import selectors
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx2

from ._common import ServerError, ServerStartError, scratch_dir, tail, terminate

STARTUP_TIMEOUT = 30.0
TESTS_DIR = Path(__file__).resolve().parents[1]
CONTROL_HEADER = "X-Control-Secret"
EMBEDDINGS = "embeddings"
CHAT = "chat/completions"
MODELS = "models"
DEFAULT_EMBEDDING_MODEL = "mf-test-embedding"
DEFAULT_DIMENSION = 256
DEFAULT_CHAT_MODEL = "mf-test-chat"


@dataclass(frozen=True)
class Exchange:
    """One request the provider received: its JSON body (None for a GET; `{"unparsed": text}`
    for a body that was not JSON), the status it was answered with (None while held), and the
    characters of tool-message content it carried (chat requests; 0 for others)."""

    body: Any
    status: int | None
    tool_result_chars: int


class ModelProvider:
    """A real OpenAI-compatible HTTP server for tests. `base_url` is what a client is given
    (it ends in `/v1`); `api_key` is the one bearer key it accepts."""

    def __init__(
        self,
        *,
        embedding_model: str = DEFAULT_EMBEDDING_MODEL,
        dimension: int = DEFAULT_DIMENSION,
        chat_models: Sequence[str] = (DEFAULT_CHAT_MODEL,),
    ) -> None:
        self.root = scratch_dir("mailfathom-model-provider-")
        self.api_key = "sk-test-" + secrets.token_urlsafe(24)
        self.start_settings = {
            "embedding_model": embedding_model,
            "dimension": dimension,
            "chat_models": list(chat_models),
        }
        self._control_secret = secrets.token_urlsafe(32)
        self._proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def origin(self) -> str:
        if not self.port:
            raise RuntimeError("the model provider has not been started")
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    # ------------------------------------------------------------- lifecycle

    def start(self) -> ModelProvider:
        """Start the process: on a port the system picks the first time, on the same port
        after a `stop()`."""
        if self._proc is not None:
            raise RuntimeError("the model provider is already running")
        config_path = self.root / "config.json"
        config_path.write_text(
            json.dumps(
                {
                    "control_secret": self._control_secret,
                    "api_key": self.api_key,
                    "port": self.port,
                    **self.start_settings,
                }
            )
        )
        config_path.chmod(0o600)
        log = self.root / "server.log"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(TESTS_DIR), env.get("PYTHONPATH", "")) if p
        )
        with open(log, "wb") as err:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "servers.model_provider_main", str(config_path)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
                env=env,
                start_new_session=True,
            )
        line = self._first_line()
        if not line.startswith("ready "):
            self.stop()
            raise ServerStartError(f"the model provider did not start: {tail(log)}")
        self.port = int(line.split()[1])
        return self

    def _first_line(self) -> str:
        assert self._proc is not None
        assert self._proc.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self._proc.stdout, selectors.EVENT_READ)
            if not selector.select(timeout=STARTUP_TIMEOUT):
                return ""
        return self._proc.stdout.readline().decode(errors="replace").strip()

    def stop(self) -> None:
        """Stop the process (SIGTERM, then SIGKILL to its group). Its address then refuses
        connections, as an endpoint that is down does; `start()` serves it again on the same
        port, with the same key, in the starting state."""
        proc, self._proc = self._proc, None
        if proc is not None:
            terminate(proc)
            if proc.stdout is not None:
                proc.stdout.close()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> ModelProvider:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ------------------------------------------------------------- control

    def _control(self, operation: str, **arguments: Any) -> Any:
        response = httpx2.post(
            f"{self.origin}/control/{operation}",
            json=arguments,
            headers={CONTROL_HEADER: self._control_secret},
            timeout=30.0,
        )
        if response.status_code != 200:
            raise ServerError(
                f"control operation {operation} answered {response.status_code}: "
                f"{response.text[:500]}"
            )
        return response.json()["result"]

    def reset(self) -> None:
        """Forget scripts, records and failures, set the models and the chat mode (`echo`)
        back as at start, and answer every held request with 503 at once."""
        self._control("reset")

    def set_embedding_model(
        self,
        model: str,
        dimension: int,
        *,
        honour_dimensions: bool = True,
        max_input_tokens: int = 8192,
    ) -> None:
        """Answer embeddings as `model` with vectors of `dimension`, whatever model a request
        names. With `honour_dimensions` off, a request's `dimensions` is ignored (as Ollama and
        llama.cpp servers do), so a client asking for another size gets a mismatch. An input
        of more than `max_input_tokens` tokens is refused with 400, as the API refuses one
        over the model's context length."""
        self._control(
            "set_embedding_model",
            model=model,
            dimension=dimension,
            honour_dimensions=honour_dimensions,
            max_input_tokens=max_input_tokens,
        )

    def set_chat_models(self, models: Sequence[str]) -> None:
        """The chat models `GET /v1/models` lists beside the embedding model."""
        self._control("set_chat_models", models=list(models))

    def script_chat(self, turns: Sequence[Mapping[str, Any]]) -> None:
        """The next chat answers, one per request, replacing any turns left. A turn is
        `{"content": "..."}`, `{"tool_calls": [{"name": ..., "arguments": {...} or "raw
        text", "id"?: ...}]}` or both, with optional `finish_reason` and `usage`
        (`prompt_tokens` / `completion_tokens` reported instead of the computed ones), or
        `{"fail": how}` (one of the `fail` kinds; `hold_seconds` for a timeout) to fail that
        request. Tool call ids default to `call_<n>_<i>`, unique for the process."""
        self._control("script_chat", turns=[dict(turn) for turn in turns])

    def set_chat_mode(self, mode: str, **options: Any) -> None:
        """How chat answers once the script is spent: `echo`, `obedient` or `runaway`
        (option `arguments`: the runaway calls' arguments, over `{"query": "more N"}`)."""
        self._control("set_chat_mode", mode=mode, options=options)

    def script_left(self) -> int:
        """How many scripted turns are still to be answered."""
        left: int = self._control("script_left")
        return left

    def fail(
        self,
        endpoint: str,
        how: str,
        times: int | None = None,
        *,
        hold_seconds: float = 30.0,
    ) -> None:
        """Fail the next `times` requests to `endpoint` (`embeddings`, `chat/completions` or
        `chat`, `models`), or every one until `reset` with None. `how`: "401" (OpenAI's
        invalid_api_key error), "403" (a key not allowed to use the model), "429", "500"
        (server_error JSON), "timeout" (hold the request `hold_seconds`, then answer it as
        usual), "malformed" (200 with a body that is not JSON), "notext" (a chat answer with
        neither content nor tool calls; an embeddings or models answer with an empty
        `data`). A failed request uses up no scripted turn."""
        self._control("fail", endpoint=endpoint, how=how, times=times, hold_seconds=hold_seconds)

    def exchanges(self, endpoint: str) -> list[Exchange]:
        """Every request received at `endpoint` since the last reset, in order."""
        found = self._control("exchanges", endpoint=endpoint)
        return [Exchange(e["body"], e["status"], e["tool_result_chars"]) for e in found]

    def requests(self, endpoint: str) -> list[dict[str, Any]]:
        """The JSON bodies received at `endpoint` since the last reset, in order."""
        return [e.body for e in self.exchanges(endpoint)]

    def tool_result_chars(self) -> list[int]:
        """Per chat request, in order, the characters of the tool messages it carried. A
        client sends the whole conversation each time, so the last figure of a run is the
        mail text the model was given in all."""
        return [e.tool_result_chars for e in self.exchanges(CHAT)]
